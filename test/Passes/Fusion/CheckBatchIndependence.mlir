// RUN: kiln-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(kiln-check-batch-independence))' | FileCheck %s

// A convolution, a flattening reshape that keeps each image whole, and a
// Gemm against weights: every batch element flows on its own, and the
// result carries the batch in dim 0.
// CHECK-LABEL: func.func @classifier
// CHECK-SAME: -> (tensor<2x10xf32> {kiln.batched, kiln.name = "logits"})
func.func @classifier(%x: tensor<2x3x4x4xf32> {kiln.batched, kiln.name = "image"}) -> (tensor<2x10xf32> {kiln.name = "logits"}) {
  %w = kiln.constant dense<1.0> : tensor<8x3x3x3xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x4x4xf32>
  %r = kiln.relu %c : tensor<2x8x4x4xf32>
  %f = kiln.reshape %r : tensor<2x8x4x4xf32> -> tensor<2x128xf32>
  %fc = kiln.constant dense<0.5> : tensor<10x128xf32>
  %y = kiln.gemm %f, %fc {transB = true} : (tensor<2x128xf32>, tensor<10x128xf32>) -> tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// A reshape may merge the batch with the dims inside it ([B, S, H] to
// [B*S, H], the rows of a projection) and split it back out.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: {kiln.batched}
func.func @rows(%x: tensor<2x3x4xf32> {kiln.batched}) -> tensor<2x3x5xf32> {
  %w = kiln.constant dense<1.0> : tensor<4x5xf32>
  %m = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %p = kiln.matmul %m, %w : tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  %y = kiln.reshape %p : tensor<6x5xf32> -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Batch normalization in training mode reduces over the batch.
func.func @reduce_over_batch(%x: tensor<2x3xf32> {kiln.batched}) -> tensor<1x3xf32> {
  // expected-error @+1 {{--dynamic-batch: kiln.reduce_mean mixes elements of the batch: it reduces over the batch dim}}
  %m = kiln.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %m : tensor<1x3xf32>
}

// -----

// A reshape that moves the batch inside another dim.
func.func @batch_inside(%x: tensor<2x6xf32> {kiln.batched}) -> tensor<3x4xf32> {
  // expected-error @+1 {{--dynamic-batch: kiln.reshape mixes elements of the batch: it merges the batch dim with a dim outside it}}
  %y = kiln.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Adding a weight that differs per batch element.
func.func @per_element_weight(%x: tensor<2x3xf32> {kiln.batched}) -> tensor<2x3xf32> {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  // expected-error @+1 {{an operand that is the same for every run (a weight) varies along the batch dim}}
  %y = kiln.add %x, %w : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A softmax over the last dim keeps elements apart; one over the batch
// does not.
func.func @softmax_over_batch(%x: tensor<2x3xf32> {kiln.batched}) -> tensor<2x3xf32> {
  %a = kiln.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
  // expected-error @+1 {{it reduces over the batch dim}}
  %b = kiln.softmax %a {axis = 0 : i64} : tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// A result must carry the batch in dim 0.
func.func @batch_last(%x: tensor<2x3xf32> {kiln.batched}) -> tensor<3x2xf32> {
  %t = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  // expected-error @+1 {{--dynamic-batch: result 0 does not carry the batch as its leading dim}}
  return %t : tensor<3x2xf32>
}

// -----

// Without batched arguments the pass changes nothing.
// CHECK-LABEL: func.func @fixed
// CHECK-NOT: kiln.batched
func.func @fixed(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  %m = kiln.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %m : tensor<1x3xf32>
}
