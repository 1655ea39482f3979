// RUN: kiln-opt %s --split-input-file --kiln-outline-dispatches | FileCheck %s

// Each region becomes a kernel in `module @kernels`: one memref per input and
// per result, then the workgroup id and count. Constants and reshapes stay on
// the host side.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[W:.+]] = kiln.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK: %[[D:.+]] = kiln.dispatch @kernels::@dispatch_0_fc(%[[X]], %[[W]]) {kiln.onnx_values = [""]} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[D]] : tensor<4x8xf32> -> tensor<32xf32>
// CHECK: return %[[R]]
// CHECK: module @kernels attributes {kiln.target = "cpu"}
// CHECK: func.func @dispatch_0_fc(%[[A0:.+]]: memref<4x8xf32>, %[[A1:.+]]: memref<8xf32>, %[[OUT:.+]]: memref<4x8xf32>, %{{.+}}: index, %{{.+}}: index)
// CHECK-SAME: kiln.abi = [memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>], kiln.kernel, kiln.nodes = ["fc", "act"]
// CHECK: %[[T0:.+]] = bufferization.to_tensor %[[A0]] restrict
// CHECK: %[[T1:.+]] = bufferization.to_tensor %[[A1]] restrict
// CHECK: %[[S:.+]] = kiln.add %[[T0]], %[[T1]]
// CHECK: %[[Y:.+]] = kiln.relu %[[S]]
// CHECK: bufferization.materialize_in_destination %[[Y]] in restrict writable %[[OUT]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %w = kiln.constant dense<2.0> : tensor<8xf32>
  %0 = kiln.dispatch_region(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %s = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32> loc("fc")
    %r = kiln.relu %s : tensor<4x8xf32> loc("act")
    kiln.yield %r : tensor<4x8xf32>
  } loc(fused["fc", "act"])
  %1 = kiln.reshape %0 : tensor<4x8xf32> -> tensor<32xf32>
  return %1 : tensor<32xf32>
}

// -----

// Each dispatch records the ONNX value each of its results holds, read from
// the location of the op that computes it (kiln/Dialect/OnnxValueNames.h):
// an op that absorbed a later node (here the add of node 4 folded into the
// op of node 2) holds the later node's value; a result whose op names no
// value (part of a node's work) gets "".
// CHECK-LABEL: func.func @named
// CHECK: kiln.dispatch @kernels::@dispatch_0_conv({{.*}}) {kiln.onnx_values = ["bn_out", ""]}
func.func @named(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = kiln.dispatch_region(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %s = kiln.relu %a : tensor<4x8xf32> loc(fused[fused<{kiln.onnx_node = 2 : i64, kiln.onnx_values = ["conv_out"]}>["conv"], fused<{kiln.onnx_node = 4 : i64, kiln.onnx_values = ["bn_out"]}>["bn"]])
    %p = kiln.sigmoid %a : tensor<4x8xf32> loc("conv")
    kiln.yield %s, %p : tensor<4x8xf32>, tensor<4x8xf32>
  } loc(fused["conv", "bn"])
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
