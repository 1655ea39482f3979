// RUN: kiln-opt %s --split-input-file --mlir-print-debuginfo --pass-pipeline='builtin.module(func.func(kiln-split-conv-padding))' | FileCheck %s --check-prefix=PAD
// RUN: kiln-opt %s --split-input-file --mlir-print-debuginfo --pass-pipeline='builtin.module(func.func(kiln-split-pointwise-conv-stride))' | FileCheck %s --check-prefix=STRIDE
// RUN: kiln-opt %s --split-input-file --mlir-print-debuginfo --pass-pipeline='builtin.module(func.func(kiln-compute-f16-in-f32))' | FileCheck %s --check-prefix=HALF

// Ops a pass adds to compute part of a node's work keep the node's name (so
// reports still name it) but not the ONNX value of its output, which only
// the op that computes that value may claim (kiln/Dialect/OnnxValueNames.h).

// PAD-LABEL: func.func @padded
// PAD: kiln.pad {{.*}} loc(#[[PART:loc[0-9]*]])
// PAD: kiln.conv {{.*}} loc(#[[OUT:loc[0-9]*]])
// PAD-DAG: #[[PART]] = loc("conv")
// PAD-DAG: #[[OUT]] = loc(fused<{kiln.onnx_node = 3 : i64, kiln.onnx_values = ["y"]}>[#[[PART]]])
func.func @padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> loc(fused<{kiln.onnx_node = 3 : i64, kiln.onnx_values = ["y"]}>["conv"])
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// STRIDE-LABEL: func.func @downsample
// STRIDE: kiln.slice {{.*}} loc(#[[PART:loc[0-9]*]])
// STRIDE: kiln.conv {{.*}} loc(#[[OUT:loc[0-9]*]])
// STRIDE-DAG: #[[PART]] = loc("down")
// STRIDE-DAG: #[[OUT]] = loc(fused<{kiln.onnx_node = 7 : i64, kiln.onnx_values = ["d"]}>[#[[PART]]])
func.func @downsample(%x: tensor<1x8x14x14xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x7x7xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x14x14xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x7x7xf32> loc(fused<{kiln.onnx_node = 7 : i64, kiln.onnx_values = ["d"]}>["down"])
  return %0 : tensor<1x16x7x7xf32>
}

// -----

// The widening casts of the operands are parts; the rounding cast after the
// op holds the node's value (in float16), as does the op itself (in float32).
// HALF-LABEL: func.func @half
// HALF: kiln.cast %arg0 {{.*}} loc(#[[PART:loc[0-9]*]])
// HALF: kiln.cast %arg1 {{.*}} loc(#[[PART]])
// HALF: kiln.add {{.*}} loc(#[[OUT:loc[0-9]*]])
// HALF: kiln.cast {{.*}} -> tensor<4xf16> loc(#[[OUT]])
// HALF-DAG: #[[PART]] = loc("sum")
// HALF-DAG: #[[OUT]] = loc(fused<{kiln.onnx_node = 1 : i64, kiln.onnx_values = ["s"]}>[#[[PART]]])
func.func @half(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kiln.add %a, %b : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16> loc(fused<{kiln.onnx_node = 1 : i64, kiln.onnx_values = ["s"]}>["sum"])
  return %0 : tensor<4xf16>
}
