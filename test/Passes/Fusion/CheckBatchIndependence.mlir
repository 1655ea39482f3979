// RUN: kiln-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(kiln-check-batch-independence))' | FileCheck %s

// A convolution, a flattening reshape that keeps each image whole, and a
// Gemm against weights: every batch element flows on its own, and the
// result carries the batch in dim 0.
// CHECK-LABEL: func.func @classifier
// CHECK-SAME: -> (tensor<2x10xf32> {kiln.batched = 0 : i64, kiln.name = "logits"})
func.func @classifier(%x: tensor<2x3x4x4xf32> {kiln.batched = 0 : i64, kiln.name = "image"}) -> (tensor<2x10xf32> {kiln.name = "logits"}) {
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
// CHECK-SAME: {kiln.batched = 0 : i64}
func.func @rows(%x: tensor<2x3x4xf32> {kiln.batched = 0 : i64}) -> tensor<2x3x5xf32> {
  %w = kiln.constant dense<1.0> : tensor<4x5xf32>
  %m = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %p = kiln.matmul %m, %w : tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  %y = kiln.reshape %p : tensor<6x5xf32> -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Batch normalization in training mode reduces over the batch.
func.func @reduce_over_batch(%x: tensor<2x3xf32> {kiln.batched = 0 : i64}) -> tensor<1x3xf32> {
  // expected-error @+1 {{--dynamic-batch: kiln.reduce_mean mixes elements of the batch: it reduces over the batch dim}}
  %m = kiln.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %m : tensor<1x3xf32>
}

// -----

// A reshape that moves the batch inside another dim.
func.func @batch_inside(%x: tensor<2x6xf32> {kiln.batched = 0 : i64}) -> tensor<3x4xf32> {
  // expected-error @+1 {{--dynamic-batch: kiln.reshape mixes elements of the batch: it merges the batch dim with a dim outside it}}
  %y = kiln.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Adding a weight that differs per batch element.
func.func @per_element_weight(%x: tensor<2x3xf32> {kiln.batched = 0 : i64}) -> tensor<2x3xf32> {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  // expected-error @+1 {{an operand that is the same for every run (a weight) varies along the batch dim}}
  %y = kiln.add %x, %w : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A softmax over the last dim keeps elements apart; one over the batch
// does not.
func.func @softmax_over_batch(%x: tensor<2x3xf32> {kiln.batched = 0 : i64}) -> tensor<2x3xf32> {
  %a = kiln.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
  // expected-error @+1 {{it reduces over the batch dim}}
  %b = kiln.softmax %a {axis = 0 : i64} : tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// A result may carry the batch in any dim of its own (a time-major
// [T, B, C]); an argument too (a recurrent state's [layers, B, H]).
// CHECK-LABEL: func.func @batch_not_leading
// CHECK-SAME: -> (tensor<3x2xf32> {kiln.batched = 1 : i64}, tensor<4x2x5xf32> {kiln.batched = 1 : i64})
func.func @batch_not_leading(%x: tensor<2x3xf32> {kiln.batched = 0 : i64}, %h: tensor<4x2x5xf32> {kiln.batched = 1 : i64}) -> (tensor<3x2xf32>, tensor<4x2x5xf32>) {
  %t = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %n = kiln.tanh %h : tensor<4x2x5xf32>
  return %t, %n : tensor<3x2xf32>, tensor<4x2x5xf32>
}

// -----

// A result must carry the batch whole, in one dim.
func.func @batch_merged_in_result(%x: tensor<2x3xf32> {kiln.batched = 0 : i64}) -> tensor<6xf32> {
  %r = kiln.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  // expected-error @+1 {{--dynamic-batch: result 0 does not carry the batch as a dim of its own}}
  return %r : tensor<6xf32>
}

// -----

// Without batched arguments the pass changes nothing.
// CHECK-LABEL: func.func @fixed
// CHECK-NOT: kiln.batched
func.func @fixed(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  %m = kiln.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %m : tensor<1x3xf32>
}

// -----

// At a batch of 1 a reshape cannot tell where the batch goes; the import
// at a larger batch records it (kiln.batch_dim = [dim, inner, outer,
// step]): [T, B, H] as [T*B, H] (the batch in T runs), rows of a
// projection, back to [T, B, H'], then the last time step.
// CHECK-LABEL: func.func @recorded_time_major
// CHECK-SAME: -> (tensor<1x5xf32> {kiln.batched = 0 : i64})
func.func @recorded_time_major(%x: tensor<1x3x4xf32> {kiln.batched = 0 : i64}) -> tensor<1x5xf32> {
  %t = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<1x3x4xf32> -> tensor<3x1x4xf32>
  %m = kiln.reshape %t {kiln.batch_dim = array<i64: 0, 1, 3, 0>} : tensor<3x1x4xf32> -> tensor<3x4xf32>
  %w = kiln.constant dense<1.0> : tensor<4x5xf32>
  %p = kiln.matmul %m, %w : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %r = kiln.reshape %p {kiln.batch_dim = array<i64: 1, 1, 1, 0>} : tensor<3x5xf32> -> tensor<3x1x5xf32>
  %s = kiln.slice %r {starts = array<i64: 2, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<3x1x5xf32> -> tensor<1x1x5xf32>
  %y = kiln.reshape %s {kiln.batch_dim = array<i64: 0, 1, 1, 0>} : tensor<1x1x5xf32> -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// The same graph without the records: the first dim that can hold the
// batch of 1 is taken, and the slice of time steps reads as one of the
// batch.
func.func @unrecorded_time_major(%x: tensor<1x3x4xf32> {kiln.batched = 0 : i64}) -> tensor<1x1x5xf32> {
  %t = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<1x3x4xf32> -> tensor<3x1x4xf32>
  %m = kiln.reshape %t : tensor<3x1x4xf32> -> tensor<3x4xf32>
  %w = kiln.constant dense<1.0> : tensor<4x5xf32>
  %p = kiln.matmul %m, %w : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %r = kiln.reshape %p : tensor<3x5xf32> -> tensor<3x1x5xf32>
  // expected-error @+1 {{it slices the batch dim}}
  %s = kiln.slice %r {starts = array<i64: 2, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<3x1x5xf32> -> tensor<1x1x5xf32>
  return %s : tensor<1x1x5xf32>
}

// -----

// An attention mask flattened to [B*S] and gathered by indices that count
// batch elements (b*S + s: a constant recorded with step S): each element
// reads its own rows.
// CHECK-LABEL: func.func @flat_index_gather
// CHECK-SAME: -> (tensor<2x1x4xf32> {kiln.batched = 0 : i64})
func.func @flat_index_gather(%m: tensor<2x4xf32> {kiln.batched = 0 : i64}) -> tensor<2x1x4xf32> {
  %f = kiln.reshape %m : tensor<2x4xf32> -> tensor<8xf32>
  %i = kiln.constant {kiln.batch_dim = array<i64: 0, 1, 1, 4>} dense<[[[0, 1, 2, 3]], [[4, 5, 6, 7]]]> : tensor<2x1x4xi64>
  %g = kiln.gather %f, %i {axis = 0 : i64} : (tensor<8xf32>, tensor<2x1x4xi64>) -> tensor<2x1x4xf32>
  return %g : tensor<2x1x4xf32>
}

// -----

// Indices that step by the element's rows but start past them.
func.func @flat_index_past_rows(%m: tensor<2x4xf32> {kiln.batched = 0 : i64}) -> tensor<2x4xf32> {
  %f = kiln.reshape %m : tensor<2x4xf32> -> tensor<8xf32>
  %i = kiln.constant {kiln.batch_dim = array<i64: 0, 1, 1, 4>} dense<[[1, 2, 3, 4], [5, 6, 7, 8]]> : tensor<2x4xi64>
  // expected-error @+1 {{its indices reach the rows of another batch element}}
  %g = kiln.gather %f, %i {axis = 0 : i64} : (tensor<8xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

// Indices that count batch elements, computed with as values.
func.func @counting_constant_as_value(%x: tensor<2x4xi64> {kiln.batched = 0 : i64}) -> tensor<2x4xi64> {
  %i = kiln.constant {kiln.batch_dim = array<i64: 0, 1, 1, 4>} dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>
  // expected-error @+1 {{it computes with a constant that counts batch elements}}
  %y = kiln.add %x, %i : tensor<2x4xi64>, tensor<2x4xi64> -> tensor<2x4xi64>
  return %y : tensor<2x4xi64>
}

// -----

// An attention mask of ones made for the batch (recorded with step 0: the
// same slice for every element) broadcasts like a batched value.
// CHECK-LABEL: func.func @per_batch_ones
// CHECK-SAME: -> (tensor<2x3xf32> {kiln.batched = 0 : i64})
func.func @per_batch_ones(%x: tensor<2x3xf32> {kiln.batched = 0 : i64}) -> tensor<2x3xf32> {
  %ones = kiln.constant {kiln.batch_dim = array<i64: 0, 1, 1, 0>} dense<1.0> : tensor<2x3xf32>
  %y = kiln.mul %x, %ones : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
