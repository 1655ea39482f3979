// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-drop-repeated-quantization,canonicalize))' | FileCheck %s

// A quantize-dequantize pair on a reshape of values of the same grid
// gives them back: the second pair goes, the reshape reads the first.
// CHECK-LABEL: func.func @after_reshape
// CHECK-COUNT-1: kiln.round
// CHECK-NOT: kiln.round
// CHECK: %[[R:.+]] = kiln.reshape
// CHECK-NEXT: return %[[R]]
func.func @after_reshape(%x: tensor<2x8xf32>) -> tensor<16xf32> {
  %s1 = kiln.constant dense<0.5> : tensor<f32>
  %z1 = kiln.constant dense<3.0> : tensor<f32>
  %d1 = kiln.div %x, %s1 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %r1 = kiln.round %d1 : tensor<2x8xf32>
  %a1 = kiln.add %r1, %z1 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %c1 = kiln.clip %a1 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<2x8xf32>
  %q1 = kiln.cast %c1 : tensor<2x8xf32> -> tensor<2x8xui8>
  %w1 = kiln.cast %q1 : tensor<2x8xui8> -> tensor<2x8xf32>
  %u1 = kiln.sub %w1, %z1 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %y1 = kiln.mul %u1, %s1 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %m = kiln.reshape %y1 : tensor<2x8xf32> -> tensor<16xf32>
  %s2 = kiln.constant dense<0.5> : tensor<f32>
  %z2 = kiln.constant dense<3.0> : tensor<f32>
  %d2 = kiln.div %m, %s2 : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %r2 = kiln.round %d2 : tensor<16xf32>
  %a2 = kiln.add %r2, %z2 : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %c2 = kiln.clip %a2 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<16xf32>
  %q2 = kiln.cast %c2 : tensor<16xf32> -> tensor<16xui8>
  %w2 = kiln.cast %q2 : tensor<16xui8> -> tensor<16xf32>
  %u2 = kiln.sub %w2, %z2 : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %y2 = kiln.mul %u2, %s2 : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  return %y2 : tensor<16xf32>
}

// Through a transpose and a max pool whose windows all hold elements,
// and a concat of two such values.
// CHECK-LABEL: func.func @after_pool_and_concat
// CHECK-COUNT-1: kiln.round
// CHECK-NOT: kiln.round
// CHECK: return
func.func @after_pool_and_concat(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %s1 = kiln.constant dense<0.5> : tensor<f32>
  %z1 = kiln.constant dense<3.0> : tensor<f32>
  %d1 = kiln.div %x, %s1 : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %r1 = kiln.round %d1 : tensor<1x2x4x4xf32>
  %a1 = kiln.add %r1, %z1 : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %c1 = kiln.clip %a1 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x2x4x4xf32>
  %q1 = kiln.cast %c1 : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  %w1 = kiln.cast %q1 : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %u1 = kiln.sub %w1, %z1 : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %y1 = kiln.mul %u1, %s1 : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = kiln.max_pool %y1 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %t = kiln.transpose %p {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %cat = kiln.concat %p, %t {axis = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x4x2x2xf32>
  %s2 = kiln.constant dense<0.5> : tensor<f32>
  %z2 = kiln.constant dense<3.0> : tensor<f32>
  %d2 = kiln.div %cat, %s2 : tensor<1x4x2x2xf32>, tensor<f32> -> tensor<1x4x2x2xf32>
  %r2 = kiln.round %d2 : tensor<1x4x2x2xf32>
  %a2 = kiln.add %r2, %z2 : tensor<1x4x2x2xf32>, tensor<f32> -> tensor<1x4x2x2xf32>
  %c2 = kiln.clip %a2 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x4x2x2xf32>
  %q2 = kiln.cast %c2 : tensor<1x4x2x2xf32> -> tensor<1x4x2x2xui8>
  %w2 = kiln.cast %q2 : tensor<1x4x2x2xui8> -> tensor<1x4x2x2xf32>
  %u2 = kiln.sub %w2, %z2 : tensor<1x4x2x2xf32>, tensor<f32> -> tensor<1x4x2x2xf32>
  %y2 = kiln.mul %u2, %s2 : tensor<1x4x2x2xf32>, tensor<f32> -> tensor<1x4x2x2xf32>
  return %y2 : tensor<1x4x2x2xf32>
}

// Kept: another scale, another zero point, a narrower clip range than
// the values hold, a pool window of padding only, and a relu (not
// data movement).
// CHECK-LABEL: func.func @other_grids
// CHECK-COUNT-6: kiln.round
func.func @other_grids(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x6x6xf32>, tensor<1x1x4x4xf32>) {
  %s1 = kiln.constant dense<0.5> : tensor<f32>
  %z1 = kiln.constant dense<3.0> : tensor<f32>
  %d1 = kiln.div %x, %s1 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %r1 = kiln.round %d1 : tensor<1x1x4x4xf32>
  %a1 = kiln.add %r1, %z1 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %c1 = kiln.clip %a1 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x1x4x4xf32>
  %q1 = kiln.cast %c1 : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>
  %w1 = kiln.cast %q1 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xf32>
  %u1 = kiln.sub %w1, %z1 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %y1 = kiln.mul %u1, %s1 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %s2 = kiln.constant dense<0.25> : tensor<f32>
  %z2 = kiln.constant dense<3.0> : tensor<f32>
  %d2 = kiln.div %y1, %s2 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %r2 = kiln.round %d2 : tensor<1x1x4x4xf32>
  %a2 = kiln.add %r2, %z2 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %c2 = kiln.clip %a2 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x1x4x4xf32>
  %q2 = kiln.cast %c2 : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>
  %w2 = kiln.cast %q2 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xf32>
  %u2 = kiln.sub %w2, %z2 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %y2 = kiln.mul %u2, %s2 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %s3 = kiln.constant dense<0.5> : tensor<f32>
  %z3 = kiln.constant dense<4.0> : tensor<f32>
  %d3 = kiln.div %y1, %s3 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %r3 = kiln.round %d3 : tensor<1x1x4x4xf32>
  %a3 = kiln.add %r3, %z3 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %c3 = kiln.clip %a3 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x1x4x4xf32>
  %q3 = kiln.cast %c3 : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>
  %w3 = kiln.cast %q3 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xf32>
  %u3 = kiln.sub %w3, %z3 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %y3 = kiln.mul %u3, %s3 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %s4 = kiln.constant dense<0.5> : tensor<f32>
  %z4 = kiln.constant dense<3.0> : tensor<f32>
  %d4 = kiln.div %y1, %s4 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %r4 = kiln.round %d4 : tensor<1x1x4x4xf32>
  %a4 = kiln.add %r4, %z4 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %c4 = kiln.clip %a4 {max = 2.550000e+02 : f32, min = 1.0 : f32} : tensor<1x1x4x4xf32>
  %q4 = kiln.cast %c4 : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>
  %w4 = kiln.cast %q4 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xf32>
  %u4 = kiln.sub %w4, %z4 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %y4 = kiln.mul %u4, %s4 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %p = kiln.max_pool %y1 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x6x6xf32>
  %s5 = kiln.constant dense<0.5> : tensor<f32>
  %z5 = kiln.constant dense<3.0> : tensor<f32>
  %d5 = kiln.div %p, %s5 : tensor<1x1x6x6xf32>, tensor<f32> -> tensor<1x1x6x6xf32>
  %r5 = kiln.round %d5 : tensor<1x1x6x6xf32>
  %a5 = kiln.add %r5, %z5 : tensor<1x1x6x6xf32>, tensor<f32> -> tensor<1x1x6x6xf32>
  %c5 = kiln.clip %a5 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x1x6x6xf32>
  %q5 = kiln.cast %c5 : tensor<1x1x6x6xf32> -> tensor<1x1x6x6xui8>
  %w5 = kiln.cast %q5 : tensor<1x1x6x6xui8> -> tensor<1x1x6x6xf32>
  %u5 = kiln.sub %w5, %z5 : tensor<1x1x6x6xf32>, tensor<f32> -> tensor<1x1x6x6xf32>
  %y5 = kiln.mul %u5, %s5 : tensor<1x1x6x6xf32>, tensor<f32> -> tensor<1x1x6x6xf32>
  %relu = kiln.relu %y1 : tensor<1x1x4x4xf32>
  %s6 = kiln.constant dense<0.5> : tensor<f32>
  %z6 = kiln.constant dense<3.0> : tensor<f32>
  %d6 = kiln.div %relu, %s6 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %r6 = kiln.round %d6 : tensor<1x1x4x4xf32>
  %a6 = kiln.add %r6, %z6 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %c6 = kiln.clip %a6 {max = 2.550000e+02 : f32, min = 0.0 : f32} : tensor<1x1x4x4xf32>
  %q6 = kiln.cast %c6 : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>
  %w6 = kiln.cast %q6 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xf32>
  %u6 = kiln.sub %w6, %z6 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %y6 = kiln.mul %u6, %s6 : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  return %y2, %y3, %y4, %y5, %y6 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x6x6xf32>, tensor<1x1x4x4xf32>
}
