// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-split-reductions))' | FileCheck %s

// A channels-last GlobalAveragePool of a 40 x 80 map with 96 channels: 96
// outputs, each the mean of 3200 elements. The run splits into 64 parts of
// 50 (96 x 64 = 6144 outputs; 128 parts would be shorter than 32): a mean
// over each part, then over the parts, and the kept dims back in a reshape.
// CHECK-LABEL: func.func @pool_channels_last
// CHECK: %[[X:.+]] = kiln.reshape %arg0 : tensor<1x40x80x96xf32> -> tensor<1x64x50x96xf32>
// CHECK: %[[P:.+]] = kiln.reduce_mean %[[X]] {axes = array<i64: 2>, keepdims = false} : tensor<1x64x50x96xf32> -> tensor<1x64x96xf32>
// CHECK: %[[M:.+]] = kiln.reduce_mean %[[P]] {axes = array<i64: 1>, keepdims = false} : tensor<1x64x96xf32> -> tensor<1x96xf32>
// CHECK: %[[Y:.+]] = kiln.reshape %[[M]] : tensor<1x96xf32> -> tensor<1x1x1x96xf32>
// CHECK: return %[[Y]]
func.func @pool_channels_last(%x: tensor<1x40x80x96xf32>) -> tensor<1x1x1x96xf32> {
  %0 = kiln.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<1x40x80x96xf32> -> tensor<1x1x1x96xf32>
  return %0 : tensor<1x1x1x96xf32>
}

// -----

// A maximum over the last axis without keepdims: the maximum of the parts'
// maxima, no reshape at the end.
// CHECK-LABEL: func.func @max_rows
// CHECK: kiln.reshape %arg0 : tensor<4x65536xf32> -> tensor<4x256x256xf32>
// CHECK: kiln.reduce_max %{{.+}} {axes = array<i64: 2>, keepdims = false} : tensor<4x256x256xf32> -> tensor<4x256xf32>
// CHECK: %[[M:.+]] = kiln.reduce_max %{{.+}} {axes = array<i64: 1>, keepdims = false} : tensor<4x256xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[M]]
func.func @max_rows(%x: tensor<4x65536xf32>) -> tensor<4xf32> {
  %0 = kiln.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<4x65536xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Left alone: enough outputs already (8192 rows), a short run (512 of
// 262144 elements), axes that are not adjacent, and a whole tensor of
// 131072 elements (under 1 MiB: one block reads it).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.reshape
// CHECK-COUNT-4: kiln.reduce_sum %arg
// CHECK-NOT: kiln.reduce_sum
func.func @left_alone(%a: tensor<8192x2048xf32>, %b: tensor<512x512xf32>, %c: tensor<2x256x3x256xf32>, %d: tensor<512x256xf32>) -> (tensor<8192xf32>, tensor<512xf32>, tensor<3xf32>, tensor<f32>) {
  %0 = kiln.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : tensor<8192x2048xf32> -> tensor<8192xf32>
  %1 = kiln.reduce_sum %b {axes = array<i64: 1>, keepdims = false} : tensor<512x512xf32> -> tensor<512xf32>
  %2 = kiln.reduce_sum %c {axes = array<i64: 0, 1, 3>, keepdims = false} : tensor<2x256x3x256xf32> -> tensor<3xf32>
  %3 = kiln.reduce_sum %d {axes = array<i64: 0, 1>, keepdims = false} : tensor<512x256xf32> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<8192xf32>, tensor<512xf32>, tensor<3xf32>, tensor<f32>
}

// -----

// The same 512-element runs reduced over an outer axis (Magika's LayerNorm
// sum over [2, 512, 256] at axis 1): each of the 512 outputs would be one
// GPU thread walking a strided column, 512 threads in all, so it splits
// from 64 elements on (min-strided-run): 16 parts of 32, 8192 outputs.
// CHECK-LABEL: func.func @strided_columns
// CHECK: %[[X:.+]] = kiln.reshape %arg0 : tensor<2x512x256xf32> -> tensor<2x16x32x256xf32>
// CHECK: %[[P:.+]] = kiln.reduce_sum %[[X]] {axes = array<i64: 2>, keepdims = false} : tensor<2x16x32x256xf32> -> tensor<2x16x256xf32>
// CHECK: kiln.reduce_sum %[[P]] {axes = array<i64: 1>, keepdims = false} : tensor<2x16x256xf32> -> tensor<2x256xf32>
func.func @strided_columns(%x: tensor<2x512x256xf32>) -> tensor<2x1x256xf32> {
  %0 = kiln.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<2x512x256xf32> -> tensor<2x1x256xf32>
  return %0 : tensor<2x1x256xf32>
}
