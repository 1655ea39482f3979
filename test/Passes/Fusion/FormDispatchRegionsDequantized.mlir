// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions{absorb-dequantized-operands=true}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions))' | FileCheck %s --check-prefix=APART

// A QDQ model's residual add: the shortcut's bytes dequantized (cast,
// minus the zero point, times the scale) for the add in the convolution's
// epilogue. The dequantizing chain joins the convolution's region, which
// reads the bytes; apart, a kernel of its own stores their float32 values.
// CHECK-LABEL: func.func @residual
// CHECK: kiln.dispatch_region(%arg0, %arg1, %arg2) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xui8>
// CHECK: kiln.conv
// CHECK: kiln.cast %{{.+}} : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xf32>
// CHECK: kiln.sub
// CHECK: kiln.mul
// CHECK: kiln.add
// CHECK-NOT: kiln.dispatch_region
// APART-LABEL: func.func @residual
// APART: kiln.dispatch_region(%arg2) : (tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xf32>
// APART: kiln.dispatch_region(%arg0, %arg1, %{{.+}}) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<1x8x4x4xf32>)
func.func @residual(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %r: tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xui8> {
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %z = kiln.constant dense<128.0> : tensor<f32>
  %s = kiln.constant dense<0.05> : tensor<f32>
  %rf = kiln.cast %r : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xf32>
  %rc = kiln.sub %rf, %z : tensor<1x8x4x4xf32>, tensor<f32> -> tensor<1x8x4x4xf32>
  %rd = kiln.mul %rc, %s : tensor<1x8x4x4xf32>, tensor<f32> -> tensor<1x8x4x4xf32>
  %sum = kiln.add %c, %rd : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  %q = kiln.cast %sum : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xui8>
  return %q : tensor<1x8x4x4xui8>
}

// -----

// A convolution quantized and dequantized again (QuantizeLinear, then
// DequantizeLinear) for an add in another kernel: the convolution's kernel
// stores the bytes and the dequantization moves into the add's kernel;
// apart, it stores the dequantized float32 values.
// CHECK-LABEL: func.func @trailing
// CHECK: %[[Q:.+]] = kiln.dispatch_region(%arg0, %arg1) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xui8>
// CHECK: kiln.dispatch_region(%arg2, %[[Q]]) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xf32>
// CHECK: kiln.exp
// CHECK: kiln.cast %{{.+}} : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xf32>
// CHECK: kiln.add
// APART-LABEL: func.func @trailing
// APART: kiln.dispatch_region(%arg0, %arg1) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>

func.func @trailing(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %r: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %q = kiln.cast %c : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xui8>
  %z = kiln.constant dense<128.0> : tensor<f32>
  %s = kiln.constant dense<0.05> : tensor<f32>
  %qf = kiln.cast %q : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xf32>
  %qc = kiln.sub %qf, %z : tensor<1x8x4x4xf32>, tensor<f32> -> tensor<1x8x4x4xf32>
  %qd = kiln.mul %qc, %s : tensor<1x8x4x4xf32>, tensor<f32> -> tensor<1x8x4x4xf32>
  %e = kiln.exp %r : tensor<1x8x4x4xf32>
  %sum = kiln.add %e, %qd : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  return %sum : tensor<1x8x4x4xf32>
}

// -----

// 4-bit weights two to a byte (kiln-packed-weights' einsum): the chain
// that unpacks them from the constant bytes (a shift per half, a modulus,
// a cast, the block's scale and offset) joins the einsum's region, which
// reads the bytes; apart, a kernel of its own stores their float32 values.
// CHECK-LABEL: func.func @packed_nibbles
// (The constants are small enough to be the kernel's immediates.)
// CHECK: kiln.dispatch_region(%arg0) : (tensor<3x2x2x2xf32>) -> tensor<3x2xf32>
// CHECK: kiln.shift_right
// CHECK: kiln.mod
// CHECK: kiln.cast
// CHECK: kiln.einsum
// CHECK-NOT: kiln.dispatch_region
// APART-LABEL: func.func @packed_nibbles
// APART: %[[W:.+]] = kiln.dispatch_region() : () -> tensor<2x2x2x2xf32>
// APART: kiln.dispatch_region(%arg0, %[[W]])
func.func @packed_nibbles(%a: tensor<3x2x2x2xf32>) -> tensor<3x2xf32> {
  %bytes = kiln.constant dense<[[[[33, -16], [5, 7]]], [[[1, 2], [3, 4]]]]> : tensor<2x1x2x2xi8>
  %shifts = kiln.constant dense<[[[[0]], [[4]]]]> : tensor<1x2x1x1xi8>
  %sixteen = kiln.constant dense<16> : tensor<i8>
  %scale = kiln.constant dense<[[[[0.5, 0.25]]], [[[1.0, 2.0]]]]> : tensor<2x1x1x2xf32>
  %offset = kiln.constant dense<[[[[-4.0, -2.0]]], [[[-8.0, -16.0]]]]> : tensor<2x1x1x2xf32>
  %s = kiln.shift_right %bytes, %shifts : tensor<2x1x2x2xi8>, tensor<1x2x1x1xi8> -> tensor<2x2x2x2xi8>
  %q = kiln.mod %s, %sixteen : tensor<2x2x2x2xi8>, tensor<i8> -> tensor<2x2x2x2xi8>
  %f = kiln.cast %q : tensor<2x2x2x2xi8> -> tensor<2x2x2x2xf32>
  %m = kiln.mul %f, %scale : tensor<2x2x2x2xf32>, tensor<2x1x1x2xf32> -> tensor<2x2x2x2xf32>
  %w = kiln.add %m, %offset : tensor<2x2x2x2xf32>, tensor<2x1x1x2xf32> -> tensor<2x2x2x2xf32>
  %y = kiln.einsum %a, %w {equation = "abjr,bjrn->an"} : (tensor<3x2x2x2xf32>, tensor<2x2x2x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
