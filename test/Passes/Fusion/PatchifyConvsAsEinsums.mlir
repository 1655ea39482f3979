// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-patchify-convs-as-einsums))' | FileCheck %s

// A convolution whose 16x16 windows tile the image (stride 16, no
// padding) in the convolution's own layout: the image reshaped into
// patches, an einsum whose first summed subscript (a: the patch width,
// contiguous) is K, the bias added after. A widened float16 input is
// reshaped before its widening.
// CHECK-LABEL: func.func @patch_map
// CHECK: %[[P:.+]] = kiln.reshape %arg0 : tensor<2x3x32x48xf16> -> tensor<2x3x2x16x3x16xf16>
// CHECK: %[[PW:.+]] = kiln.cast %[[P]] : tensor<2x3x2x16x3x16xf16> -> tensor<2x3x2x16x3x16xf32>
// CHECK: %[[E:.+]] = kiln.einsum %[[PW]], %arg1 {equation = "ncubva,ocba->nouv"} : (tensor<2x3x2x16x3x16xf32>, tensor<8x3x16x16xf32>) -> tensor<2x8x2x3xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg2 : tensor<8xf32> -> tensor<1x8x1x1xf32>
// CHECK: %[[R:.+]] = kiln.add %[[E]], %[[B]]
// CHECK-NOT: kiln.conv
// CHECK: kiln.relu %[[R]]
func.func @patch_map(%x: tensor<2x3x32x48xf16>, %w: tensor<8x3x16x16xf32>, %b: tensor<8xf32>) -> tensor<2x8x2x3xf32> {
  %xw = kiln.cast %x : tensor<2x3x32x48xf16> -> tensor<2x3x32x48xf32>
  %0 = kiln.conv %xw, %w, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 16, 16>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x32x48xf32>, tensor<8x3x16x16xf32>, tensor<8xf32>) -> tensor<2x8x2x3xf32>
  %1 = kiln.relu %0 : tensor<2x8x2x3xf32>
  return %1 : tensor<2x8x2x3xf32>
}

// -----

// Made tokens by a reshape and a transpose (ViT), after the result's
// rounding to float16: the einsum writes [N, H', W', O], rounded, and a
// reshape to the tokens replaces the transpose.
// CHECK-LABEL: func.func @patch_tokens
// CHECK: %[[E:.+]] = kiln.einsum %{{.+}}, %arg1 {equation = "ncubva,ocba->nuvo"} : (tensor<1x3x2x16x3x16xf32>, tensor<8x3x16x16xf32>) -> tensor<1x2x3x8xf32>
// CHECK: %[[H:.+]] = kiln.cast %[[E]] : tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf16>
// CHECK: %[[T:.+]] = kiln.reshape %[[H]] : tensor<1x2x3x8xf16> -> tensor<1x6x8xf16>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]]
func.func @patch_tokens(%x: tensor<1x3x32x48xf32>, %w: tensor<8x3x16x16xf32>) -> tensor<1x6x8xf16> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 16, 16>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x48xf32>, tensor<8x3x16x16xf32>) -> tensor<1x8x2x3xf32>
  %1 = kiln.cast %0 : tensor<1x8x2x3xf32> -> tensor<1x8x2x3xf16>
  %2 = kiln.reshape %1 : tensor<1x8x2x3xf16> -> tensor<1x8x6xf16>
  %3 = kiln.transpose %2 {perm = array<i64: 0, 2, 1>} : tensor<1x8x6xf16> -> tensor<1x6x8xf16>
  return %3 : tensor<1x6x8xf16>
}

// -----

// Left alone: 4x4 windows (Swin's, ConvNeXt's stem: narrower than matrix
// instructions' K), padding, overlapping windows.
// CHECK-LABEL: func.func @not_patches
// CHECK-COUNT-3: kiln.conv
// CHECK-NOT: kiln.einsum
func.func @not_patches(%x: tensor<1x3x32x32xf32>, %w4: tensor<8x3x4x4xf32>, %w16: tensor<8x3x16x16xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) {
  %0 = kiln.conv %x, %w4 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 4, 4>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x4x4xf32>) -> tensor<1x8x8x8xf32>
  %1 = kiln.conv %x, %w16 {pads = array<i64: 8, 8, 8, 8>, strides = array<i64: 16, 16>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x16x16xf32>) -> tensor<1x8x3x3xf32>
  %2 = kiln.conv %x, %w16 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 8, 8>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x16x16xf32>) -> tensor<1x8x3x3xf32>
  return %0, %1, %2 : tensor<1x8x8x8xf32>, tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>
}

// -----

// Windows that stop short of the image's end (an audio model's frames of
// 256 samples over 44100, as [N, C, 1, T]; here 40 pixels in windows of
// 16): the rows and columns past the last whole window, which the
// convolution never reads, are sliced off before the patches.
// CHECK-LABEL: func.func @patch_remainder
// CHECK: %[[S:.+]] = kiln.slice %arg0 {{.+}} : tensor<1x3x40x40xf32> -> tensor<1x3x32x32xf32>
// CHECK: %[[P:.+]] = kiln.reshape %[[S]] : tensor<1x3x32x32xf32> -> tensor<1x3x2x16x2x16xf32>
// CHECK: kiln.einsum %[[P]], %arg1 {equation = "ncubva,ocba->nouv"}
// CHECK-NOT: kiln.conv
func.func @patch_remainder(%x: tensor<1x3x40x40xf32>, %w: tensor<8x3x16x16xf32>) -> tensor<1x8x2x2xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 16, 16>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x40x40xf32>, tensor<8x3x16x16xf32>) -> tensor<1x8x2x2xf32>
  return %0 : tensor<1x8x2x2xf32>
}
