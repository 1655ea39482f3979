// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-move-reshapes-after-elementwise))' | FileCheck %s

// GPT-2's linear layers: Gemm on [B*S, E] between reshapes. The GELU and
// the residual add move before the reshapes (the residual reshaped to the
// Gemm's shape: an alias), so that they read the Gemm's result directly.
// CHECK-LABEL: func.func @gpt2_mlp
// CHECK: %[[G:.+]] = kiln.gemm
// CHECK: %[[ACT:.+]] = kiln.gelu_tanh %[[G]] : tensor<16x128xf32>
// CHECK: %[[G2:.+]] = kiln.gemm
// CHECK: %[[R:.+]] = kiln.reshape %arg3 : tensor<2x8x32xf32> -> tensor<16x32xf32>
// CHECK: %[[SUM:.+]] = kiln.add %[[R]], %[[G2]] : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK: kiln.reshape %[[SUM]] : tensor<16x32xf32> -> tensor<2x8x32xf32>
func.func @gpt2_mlp(%x: tensor<16x32xf32>, %w1: tensor<32x128xf32>, %w2: tensor<128x32xf32>, %residual: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %g = kiln.gemm %x, %w1 : (tensor<16x32xf32>, tensor<32x128xf32>) -> tensor<16x128xf32>
  %g3 = kiln.reshape %g : tensor<16x128xf32> -> tensor<2x8x128xf32>
  %act = kiln.gelu_tanh %g3 : tensor<2x8x128xf32>
  %act2 = kiln.reshape %act : tensor<2x8x128xf32> -> tensor<16x128xf32>
  %h = kiln.gemm %act2, %w2 : (tensor<16x128xf32>, tensor<128x32xf32>) -> tensor<16x32xf32>
  %h3 = kiln.reshape %h : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %sum = kiln.add %residual, %h3 : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return %sum : tensor<2x8x32xf32>
}

// -----

// Left alone: a reshape with another use, a broadcasting operand, a cast
// (a contraction's widened operand stays its prologue), a reshape of an
// elementwise result (that op fuses into its own producer), and an add of
// two reshaped kernel results (moving past one would make the other
// movable: the rewrite would never end). A broadcast operand after the
// reshaped one leaves no reshape behind (every check comes first).
// CHECK-LABEL: func.func @unmoved
// CHECK-COUNT-6: kiln.reshape
// CHECK-NOT: kiln.reshape
func.func @unmoved(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>, %c: tensor<2x8x32xi1>, %s: tensor<f32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf16>, tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %g = kiln.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %g3 = kiln.reshape %g : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %0 = kiln.relu %g3 : tensor<2x8x32xf32>
  %1 = kiln.add %g3, %b : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %h = kiln.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %h3 = kiln.reshape %h : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %2 = kiln.cast %h3 : tensor<2x8x32xf32> -> tensor<2x8x32xf16>
  %e = kiln.relu %x : tensor<16x32xf32>
  %e3 = kiln.reshape %e : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %3 = kiln.sigmoid %e3 : tensor<2x8x32xf32>
  %k = kiln.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %k3 = kiln.reshape %k : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %l = kiln.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %l3 = kiln.reshape %l : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %4 = kiln.add %k3, %l3 : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %m = kiln.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %m3 = kiln.reshape %m : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %5 = kiln.where %c, %m3, %s : tensor<2x8x32xi1>, tensor<2x8x32xf32>, tensor<f32> -> tensor<2x8x32xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf16>, tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// A packed matmul's result (kiln-pack-matmul-weights: [M, N / P, P]
// reshaped to [M, N]): the scale, the bias along N (split as [N / P, P])
// and the residual add move before the reshape one after another, each
// reading the one before, so that all of them join the einsum's kernel.
// CHECK-LABEL: func.func @packed_epilogue
// CHECK: %[[E:.+]] = kiln.einsum
// CHECK: %[[S:.+]] = kiln.mul %[[E]], %arg3 : tensor<4x2x8xf32>, tensor<f32> -> tensor<4x2x8xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg2 : tensor<16xf32> -> tensor<2x8xf32>
// CHECK: %[[SB:.+]] = kiln.add %[[S]], %[[B]] : tensor<4x2x8xf32>, tensor<2x8xf32> -> tensor<4x2x8xf32>
// CHECK: %[[R:.+]] = kiln.reshape %arg4 : tensor<4x16xf32> -> tensor<4x2x8xf32>
// CHECK: %[[SUM:.+]] = kiln.add %[[SB]], %[[R]]
// CHECK: kiln.reshape %[[SUM]] : tensor<4x2x8xf32> -> tensor<4x16xf32>
func.func @packed_epilogue(%x: tensor<4x32xf32>, %w: tensor<2x32x8xf32>, %bias: tensor<16xf32>, %scale: tensor<f32>, %residual: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = kiln.einsum %x, %w {equation = "mk,bkw->mbw"} : (tensor<4x32xf32>, tensor<2x32x8xf32>) -> tensor<4x2x8xf32>
  %y = kiln.reshape %e : tensor<4x2x8xf32> -> tensor<4x16xf32>
  %s = kiln.mul %y, %scale : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %b = kiln.add %s, %bias : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = kiln.add %b, %residual : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// An operand along M (its last dim 1) broadcasts over both halves of the
// split dim.
// CHECK-LABEL: func.func @bias_along_rows
// CHECK: %[[E:.+]] = kiln.einsum
// CHECK: %[[B:.+]] = kiln.reshape %arg2 : tensor<4x1xf32> -> tensor<4x1x1xf32>
// CHECK: %[[S:.+]] = kiln.add %[[E]], %[[B]] : tensor<4x2x8xf32>, tensor<4x1x1xf32>
// CHECK: kiln.reshape %[[S]] : tensor<4x2x8xf32> -> tensor<4x16xf32>
func.func @bias_along_rows(%x: tensor<4x32xf32>, %w: tensor<2x32x8xf32>, %bias: tensor<4x1xf32>) -> tensor<4x16xf32> {
  %e = kiln.einsum %x, %w {equation = "mk,bkw->mbw"} : (tensor<4x32xf32>, tensor<2x32x8xf32>) -> tensor<4x2x8xf32>
  %y = kiln.reshape %e : tensor<4x2x8xf32> -> tensor<4x16xf32>
  %b = kiln.add %y, %bias : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  return %b : tensor<4x16xf32>
}
