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
