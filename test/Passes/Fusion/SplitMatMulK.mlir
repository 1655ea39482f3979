// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-split-matmul-k))' | FileCheck %s

// BERT's FFN2 at batch 1: 128 x 768 outputs (96 blocks of 32x32, fewer
// than 264) and K = 3072: eight parts of 384 along K, an einsum over
// reshaped operands (no copies) into [8, 1, 128, 768], summed over the
// parts by a reduce_sum, which the bias add follows.
// CHECK-LABEL: func.func @ffn2
// CHECK: %[[A:.+]] = kiln.reshape %arg0 : tensor<1x128x3072xf32> -> tensor<1x128x8x384xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg1 : tensor<3072x768xf32> -> tensor<8x384x768xf32>
// CHECK: %[[P:.+]] = kiln.einsum %[[A]], %[[B]] {equation = "amsk,skn->samn"} : (tensor<1x128x8x384xf32>, tensor<8x384x768xf32>) -> tensor<8x1x128x768xf32>
// CHECK: %[[C:.+]] = kiln.reduce_sum %[[P]] {axes = array<i64: 0>, keepdims = false} : tensor<8x1x128x768xf32> -> tensor<1x128x768xf32>
// CHECK: kiln.add %[[C]], %arg2
func.func @ffn2(%x: tensor<1x128x3072xf32>, %w: tensor<3072x768xf32>, %b: tensor<768xf32>) -> tensor<1x128x768xf32> {
  %0 = kiln.matmul %x, %w : tensor<1x128x3072xf32>, tensor<3072x768xf32> -> tensor<1x128x768xf32>
  %1 = kiln.add %0, %b : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  return %1 : tensor<1x128x768xf32>
}

// -----

// K = 768 splits in four parts of 192 (eight would be 96, under 128);
// a 2-D A has no batch letters.
// CHECK-LABEL: func.func @qkv
// CHECK: kiln.reshape %arg0 : tensor<128x768xf32> -> tensor<128x4x192xf32>
// CHECK: kiln.einsum {{.*}} {equation = "msk,skn->smn"} : (tensor<128x4x192xf32>, tensor<4x192x768xf32>) -> tensor<4x128x768xf32>
func.func @qkv(%x: tensor<128x768xf32>, %w: tensor<768x768xf32>) -> tensor<128x768xf32> {
  %0 = kiln.matmul %x, %w : tensor<128x768xf32>, tensor<768x768xf32> -> tensor<128x768xf32>
  return %0 : tensor<128x768xf32>
}

// -----

// Left alone: many outputs (4096 x 768: 3072 blocks), a short K (256),
// float16 operands (tensor cores), a batched B.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.einsum
// CHECK-COUNT-4: kiln.matmul
// CHECK-NOT: kiln.einsum
func.func @left_alone(%big: tensor<4096x3072xf32>, %w: tensor<3072x768xf32>, %short: tensor<128x256xf32>, %ws: tensor<256x768xf32>, %h: tensor<128x3072xf16>, %wh: tensor<3072x768xf16>, %bx: tensor<2x128x1024xf32>, %bw: tensor<2x1024x64xf32>) -> (tensor<4096x768xf32>, tensor<128x768xf32>, tensor<128x768xf16>, tensor<2x128x64xf32>) {
  %0 = kiln.matmul %big, %w : tensor<4096x3072xf32>, tensor<3072x768xf32> -> tensor<4096x768xf32>
  %1 = kiln.matmul %short, %ws : tensor<128x256xf32>, tensor<256x768xf32> -> tensor<128x768xf32>
  %2 = kiln.matmul %h, %wh : tensor<128x3072xf16>, tensor<3072x768xf16> -> tensor<128x768xf16>
  %3 = kiln.matmul %bx, %bw : tensor<2x128x1024xf32>, tensor<2x1024x64xf32> -> tensor<2x128x64xf32>
  return %0, %1, %2, %3 : tensor<4096x768xf32>, tensor<128x768xf32>, tensor<128x768xf16>, tensor<2x128x64xf32>
}

// -----

// Left alone: float32 operands widened from 16-bit values (what
// --precision=f16 makes of a float32 model): the matmul takes tensor cores.
// CHECK-LABEL: func.func @widened
// CHECK-NOT: kiln.einsum
// CHECK: kiln.matmul
func.func @widened(%x: tensor<128x3072xf16>, %w: tensor<3072x768xf16>) -> tensor<128x768xf32> {
  %0 = kiln.cast %x : tensor<128x3072xf16> -> tensor<128x3072xf32>
  %1 = kiln.cast %w : tensor<3072x768xf16> -> tensor<3072x768xf32>
  %2 = kiln.matmul %0, %1 : tensor<128x3072xf32>, tensor<3072x768xf32> -> tensor<128x768xf32>
  return %2 : tensor<128x768xf32>
}

// -----

// A batch-32 classifier's Gemm (32 x 1000 outputs, 31 blocks; K = 1280,
// its B stored K x N): eight parts of 160, C added to their sum. A Gemm
// that transposes or scales an operand is left alone.
// CHECK-LABEL: func.func @classifier
// CHECK: %[[A:.+]] = kiln.reshape %arg0 : tensor<32x1280xf32> -> tensor<32x8x160xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg1 : tensor<1280x1000xf32> -> tensor<8x160x1000xf32>
// CHECK: %[[P:.+]] = kiln.einsum %[[A]], %[[B]] {equation = "msk,skn->smn"} : (tensor<32x8x160xf32>, tensor<8x160x1000xf32>) -> tensor<8x32x1000xf32>
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[P]] {axes = array<i64: 0>, keepdims = false} : tensor<8x32x1000xf32> -> tensor<32x1000xf32>
// CHECK: %[[Y:.+]] = kiln.add %[[S]], %arg2 : tensor<32x1000xf32>, tensor<1000xf32> -> tensor<32x1000xf32>
// CHECK: %[[T:.+]] = kiln.gemm %arg0, %arg3, %arg2 {transB = true}
// CHECK: %[[H:.+]] = kiln.gemm %arg0, %arg1, %arg2 {alpha = 5.000000e-01 : f32}
// CHECK: return %[[Y]], %[[T]], %[[H]]
func.func @classifier(%x: tensor<32x1280xf32>, %w: tensor<1280x1000xf32>, %b: tensor<1000xf32>, %wt: tensor<1000x1280xf32>) -> (tensor<32x1000xf32>, tensor<32x1000xf32>, tensor<32x1000xf32>) {
  %0 = kiln.gemm %x, %w, %b : (tensor<32x1280xf32>, tensor<1280x1000xf32>, tensor<1000xf32>) -> tensor<32x1000xf32>
  %1 = kiln.gemm %x, %wt, %b {transB = true} : (tensor<32x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<32x1000xf32>
  %2 = kiln.gemm %x, %w, %b {alpha = 0.5 : f32} : (tensor<32x1280xf32>, tensor<1280x1000xf32>, tensor<1000xf32>) -> tensor<32x1000xf32>
  return %0, %1, %2 : tensor<32x1000xf32>, tensor<32x1000xf32>, tensor<32x1000xf32>
}
