// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-channels-last-activations{min-convs-per-transpose=0}))' | FileCheck %s

// A stem convolution and a residual block: padding, a 3x3 convolution,
// ReLU, a 1x1 convolution, the residual add and ReLU. Every convolution
// reads and writes NHWC, and so do the ops between them; the only
// transposes left are at the chain's ends: the input (moved ahead of the
// stem's padding) and the output.
// CHECK-LABEL: func.func @block
// CHECK: %[[X:.+]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x6x6xf32> -> tensor<1x6x6x3xf32>
// CHECK: %[[XP:.+]] = kiln.pad %[[X]] {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>{{.*}}} : tensor<1x6x6x3xf32> -> tensor<1x8x8x3xf32>
// CHECK: %[[C0:.+]] = kiln.conv %[[XP]], %arg1 {channels_last, {{.*}}} : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[R0:.+]] = kiln.relu %[[C0]] : tensor<1x6x6x8xf32>
// CHECK: %[[P:.+]] = kiln.pad %[[R0]] {{.*}} : tensor<1x6x6x8xf32> -> tensor<1x8x8x8xf32>
// CHECK: %[[C1:.+]] = kiln.conv %[[P]], %arg2 {channels_last, {{.*}}} : (tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x6x6x16xf32>
// CHECK: %[[R1:.+]] = kiln.relu %[[C1]] : tensor<1x6x6x16xf32>
// CHECK: %[[C2:.+]] = kiln.conv %[[R1]], %arg3, %arg4 {channels_last, {{.*}}} : (tensor<1x6x6x16xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[A:.+]] = kiln.add %[[C2]], %[[R0]] : tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32> -> tensor<1x6x6x8xf32>
// CHECK: %[[R2:.+]] = kiln.relu %[[A]]
// CHECK: %[[Y:.+]] = kiln.transpose %[[R2]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[Y]]
func.func @block(%x: tensor<1x3x6x6xf32>, %w0: tensor<8x3x3x3xf32>, %w3: tensor<16x8x3x3xf32>, %w1: tensor<8x16x1x1xf32>, %b1: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  %xp = kiln.pad %x {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f64} : tensor<1x3x6x6xf32> -> tensor<1x3x8x8xf32>
  %c0 = kiln.conv %xp, %w0 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  %r0 = kiln.relu %c0 : tensor<1x8x6x6xf32>
  %p = kiln.pad %r0 {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f64} : tensor<1x8x6x6xf32> -> tensor<1x8x8x8xf32>
  %c1 = kiln.conv %p, %w3 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x6x6xf32>
  %r1 = kiln.relu %c1 : tensor<1x16x6x6xf32>
  %c2 = kiln.conv %r1, %w1, %b1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x16x6x6xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %a = kiln.add %c2, %r0 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32> -> tensor<1x8x6x6xf32>
  %r2 = kiln.relu %a : tensor<1x8x6x6xf32>
  return %r2 : tensor<1x8x6x6xf32>
}

// -----

// --precision=f16: the 16-bit activation is transposed before its widening,
// which stays right ahead of the convolution (its kernel's prologue), and
// the transposes between two convolutions cancel across the casts. A
// weight read through a transpose of a constant (kiln-channels-last-conv-
// weights' [F][kh][kw][C], the same permutation) keeps its transpose.
// CHECK-LABEL: func.func @widened
// CHECK: %[[W:.+]] = kiln.constant
// CHECK: %[[X:.+]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x6x6xf16> -> tensor<1x6x6x8xf16>
// CHECK: %[[WT:.+]] = kiln.transpose %[[W]] {perm = array<i64: 0, 3, 1, 2>} : tensor<8x3x3x8xf16> -> tensor<8x8x3x3xf16>
// CHECK: %[[WW:.+]] = kiln.cast %[[WT]]
// CHECK: %[[XW:.+]] = kiln.cast %[[X]] : tensor<1x6x6x8xf16> -> tensor<1x6x6x8xf32>
// CHECK: %[[C1:.+]] = kiln.conv %[[XW]], %[[WW]] {channels_last, {{.*}}} : (tensor<1x6x6x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[N:.+]] = kiln.cast %[[C1]] : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf16>
// CHECK: %[[NW:.+]] = kiln.cast %[[N]] : tensor<1x4x4x8xf16> -> tensor<1x4x4x8xf32>
// CHECK: %[[C2:.+]] = kiln.conv %[[NW]], %arg1 {channels_last, {{.*}}} : (tensor<1x4x4x8xf32>, tensor<8x8x1x1xf32>) -> tensor<1x4x4x8xf32>
// CHECK: kiln.transpose %[[C2]] {perm = array<i64: 0, 3, 1, 2>}
func.func @widened(%x: tensor<1x8x6x6xf16>, %w1: tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %wc = kiln.constant dense<1.0> : tensor<8x3x3x8xf16>
  %wt = kiln.transpose %wc {perm = array<i64: 0, 3, 1, 2>} : tensor<8x3x3x8xf16> -> tensor<8x8x3x3xf16>
  %ww = kiln.cast %wt : tensor<8x8x3x3xf16> -> tensor<8x8x3x3xf32>
  %xw = kiln.cast %x : tensor<1x8x6x6xf16> -> tensor<1x8x6x6xf32>
  %c1 = kiln.conv %xw, %ww {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  %n = kiln.cast %c1 : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf16>
  %nw = kiln.cast %n : tensor<1x8x4x4xf16> -> tensor<1x8x4x4xf32>
  %c2 = kiln.conv %nw, %w1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  return %c2 : tensor<1x8x4x4xf32>
}

// -----

// MobileNet-like: a depthwise convolution with its padding, a strided
// subsample (kiln-split-pointwise-conv-stride's) ahead of a 1x1
// convolution, a per-channel bias [C, 1, 1] (now [1, 1, 1, C]), max
// pooling and a global average pool (reduce_mean over H and W, keepdims)
// feeding a flatten: all in NHWC, the pooled [N, 1, 1, C] reshaped, not
// transposed, to [N, C, 1, 1] (then folded into the flatten).
// CHECK-LABEL: func.func @pools
// CHECK: %[[X:.+]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// CHECK: %[[D:.+]] = kiln.conv %[[X]], %arg1 {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>{{.*}}} : (tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg2 : tensor<8x1x1xf32> -> tensor<1x1x1x8xf32>
// CHECK: %[[A:.+]] = kiln.add %[[D]], %[[B]] : tensor<1x8x8x8xf32>, tensor<1x1x1x8xf32> -> tensor<1x8x8x8xf32>
// CHECK: %[[S:.+]] = kiln.slice %[[A]] {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 2, 2, 1>} : tensor<1x8x8x8xf32> -> tensor<1x4x4x8xf32>
// CHECK: %[[P:.+]] = kiln.conv %[[S]], %arg3 {channels_last, {{.*}}} : (tensor<1x4x4x8xf32>, tensor<16x8x1x1xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[M:.+]] = kiln.max_pool %[[P]] {ceil_mode = false, channels_last, {{.*}}} : tensor<1x4x4x16xf32> -> tensor<1x2x2x16xf32>
// CHECK: %[[G:.+]] = kiln.reduce_mean %[[M]] {axes = array<i64: 1, 2>, keepdims = true} : tensor<1x2x2x16xf32> -> tensor<1x1x1x16xf32>
// CHECK-NOT: kiln.transpose
// CHECK: %[[R:.+]] = kiln.reshape %[[G]] : tensor<1x1x1x16xf32> -> tensor<1x16xf32>
// CHECK: return %[[R]]
func.func @pools(%x: tensor<1x8x8x8xf32>, %wd: tensor<8x1x3x3xf32>, %b: tensor<8x1x1xf32>, %w1: tensor<16x8x1x1xf32>) -> tensor<1x16xf32> {
  %d = kiln.conv %x, %wd {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
  %a = kiln.add %d, %b : tensor<1x8x8x8xf32>, tensor<8x1x1xf32> -> tensor<1x8x8x8xf32>
  %s = kiln.slice %a {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  %p = kiln.conv %s, %w1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
  %m = kiln.max_pool %p {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x16x4x4xf32> -> tensor<1x16x2x2xf32>
  %g = kiln.reduce_mean %m {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x16x2x2xf32> -> tensor<1x16x1x1xf32>
  %f = kiln.reshape %g : tensor<1x16x1x1xf32> -> tensor<1x16xf32>
  return %f : tensor<1x16xf32>
}

// -----

// kiln-space-to-depth-strided-convs' stem: the image's 2x2 blocks as
// channels, a reshape, a transpose [N, C, H, 2, W, 2] -> [N, C, 2, 2, H,
// W] and a reshape that merges (C, 2, 2). The transpose to NHWC permutes
// the merged groups ahead of that reshape and composes with the first:
// one transpose of the image, [N, H, W, C, 2, 2].
// CHECK-LABEL: func.func @space_to_depth_stem
// CHECK: %[[B:.+]] = kiln.reshape %arg0 : tensor<1x3x8x8xf32> -> tensor<1x3x4x2x4x2xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[B]] {perm = array<i64: 0, 2, 4, 1, 3, 5>} : tensor<1x3x4x2x4x2xf32> -> tensor<1x4x4x3x2x2xf32>
// CHECK: %[[X:.+]] = kiln.reshape %[[T]] : tensor<1x4x4x3x2x2xf32> -> tensor<1x4x4x12xf32>
// CHECK: kiln.conv %[[X]], %arg1 {channels_last
// CHECK-NOT: perm = array<i64: 0, 2, 3, 1>
func.func @space_to_depth_stem(%x: tensor<1x3x8x8xf32>, %w: tensor<8x12x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %b = kiln.reshape %x : tensor<1x3x8x8xf32> -> tensor<1x3x4x2x4x2xf32>
  %t = kiln.transpose %b {perm = array<i64: 0, 1, 3, 5, 2, 4>} : tensor<1x3x4x2x4x2xf32> -> tensor<1x3x2x2x4x4xf32>
  %s = kiln.reshape %t : tensor<1x3x2x2x4x4xf32> -> tensor<1x12x4x4xf32>
  %c = kiln.conv %s, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x12x4x4xf32>, tensor<8x12x1x1xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

// -----

// A flatten of [1, 4, 4, 4]: the same shape in both layouts, but the
// transpose back moves dims of size 4, so it stays a transpose (a reshape
// there would flatten the NHWC order).
// CHECK-LABEL: func.func @same_shape_flatten
// CHECK: %[[C:.+]] = kiln.conv {{.*}}channels_last
// CHECK: %[[T:.+]] = kiln.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
// CHECK: kiln.reshape %[[T]] : tensor<1x4x4x4xf32> -> tensor<1x64xf32>
func.func @same_shape_flatten(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x64xf32> {
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %f = kiln.reshape %c : tensor<1x4x4x4xf32> -> tensor<1x64xf32>
  return %f : tensor<1x64xf32>
}

// -----

// A broadcast operand [4, 4, 4] (C, H, W all 4) is not a per-channel one:
// the add stays NCHW, behind the transpose back.
// CHECK-LABEL: func.func @same_shape_broadcast
// CHECK: %[[C:.+]] = kiln.conv {{.*}}channels_last
// CHECK: %[[T:.+]] = kiln.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK: kiln.add %[[T]], %arg2 : tensor<1x4x4x4xf32>, tensor<4x4x4xf32> -> tensor<1x4x4x4xf32>
func.func @same_shape_broadcast(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>, %b: tensor<4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %a = kiln.add %c, %b : tensor<1x4x4x4xf32>, tensor<4x4x4xf32> -> tensor<1x4x4x4xf32>
  return %a : tensor<1x4x4x4xf32>
}

// -----

// A per-channel scale stored in 16 bits (--precision=f16) and widened for
// the Mul: the constant is reshaped to its channels-last shape before the
// widening (the reshape folds into it), so the widening reads the constant
// directly and its consumer's kernel can absorb it.
// CHECK-LABEL: func.func @widened_scale
// CHECK: %[[S:.+]] = kiln.constant dense<{{.+}}> : tensor<1x1x1x4xf16>
// CHECK: %[[W:.+]] = kiln.cast %[[S]] : tensor<1x1x1x4xf16> -> tensor<1x1x1x4xf32>
// CHECK: kiln.mul %{{.+}}, %[[W]] : tensor<1x4x4x4xf32>, tensor<1x1x1x4xf32>
func.func @widened_scale(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %s16 = kiln.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf16>
  %s = kiln.cast %s16 : tensor<4x1x1xf16> -> tensor<4x1x1xf32>
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %m = kiln.mul %c, %s : tensor<1x4x4x4xf32>, tensor<4x1x1xf32> -> tensor<1x4x4x4xf32>
  return %m : tensor<1x4x4x4xf32>
}
