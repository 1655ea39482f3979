// RUN: kiln-opt %s --kiln-convert-to-linalg=read-window-padding-in-place=true | FileCheck %s
// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s --check-prefix=PADDED

// The GPU targets' depthwise convolutions and pooling read each window
// element at its unpadded position in the generic's body: the position
// o * stride + k - pad is clamped into the input for the load and the
// padding value selected outside it. No tensor.pad (tiled to threads, it
// would be a padded copy of every thread's tile), and the input is no
// operand: the weight is the generic's only input.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%arg1 : tensor<8x1x3x3xf32>)
// CHECK: %[[OH:.+]] = linalg.index 2 : index
// CHECK: %[[KH:.+]] = linalg.index 3 : index
// CHECK: %[[H:.+]] = arith.addi %[[OH]], %[[KH]] : index
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[HP:.+]] = arith.subi %[[H]], %[[C1]] : index
// CHECK: %[[LAST:.+]] = arith.constant 5 : index
// CHECK: arith.cmpi sge, %[[HP]]
// CHECK: arith.cmpi sle, %[[HP]], %[[LAST]]
// CHECK: %[[X:.+]] = tensor.extract %arg0[
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[V:.+]] = arith.select %{{.+}}, %[[X]], %[[ZERO]] : f32
// CHECK: arith.mulf %[[V]]
// PADDED-LABEL: func.func @depthwise
// PADDED: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
func.func @depthwise(%x: tensor<1x8x6x6xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// A 16-bit input widened for the convolution (--precision=f16) is read
// narrow and widened in the body: the cast's generic is then dead (the
// canonicalize after the lowering erases it), not a conversion of the
// whole input in every thread. Stride 2: o * 2 + k - 1.
// CHECK-LABEL: func.func @depthwise_widened
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<8x1x3x3xf32>)
// CHECK: %[[OW:.+]] = linalg.index 5 : index
// CHECK: arith.muli %[[OW]], %{{.+}} : index
// CHECK: %[[X:.+]] = tensor.extract %arg0[{{.*}}] : tensor<1x8x6x6xf16>
// CHECK: arith.extf %[[X]] : f16 to f32
func.func @depthwise_widened(%x: tensor<1x8x6x6xf16>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x3x3xf32> attributes {kiln.kernel} {
  %xw = kiln.cast %x : tensor<1x8x6x6xf16> -> tensor<1x8x6x6xf32>
  %0 = kiln.conv %xw, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %0 : tensor<1x8x3x3xf32>
}

// Max pooling whose ceil_mode windows run past the input: -inf there,
// with the window's extent the generic's only input.
// CHECK-LABEL: func.func @max_pool
// CHECK-NOT: tensor.pad
// CHECK: %[[WINDOW:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[WINDOW]] : tensor<2x2xf32>)
// CHECK: %[[X:.+]] = tensor.extract %arg0[
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[V:.+]] = arith.select %{{.+}}, %[[X]], %[[NEG_INF]] : f32
// CHECK: arith.maximumf %[[V]]
func.func @max_pool(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> attributes {kiln.kernel} {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x2x7x7xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// Other convolutions keep the padded copy (their kernels' blocks stage
// a padded input, split into its own kernel before).
// CHECK-LABEL: func.func @full_conv
// CHECK: tensor.pad
func.func @full_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}
