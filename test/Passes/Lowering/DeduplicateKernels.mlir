// RUN: kiln-opt %s --split-input-file --kiln-deduplicate-kernels | FileCheck %s

// Two layers' kernels that differ only in their names, nodes and locations
// are one kernel: both dispatches name the first, each keeps its own
// nodes. A kernel with another constant, and one with other attributes
// (another grid), stay kernels of their own.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.+]] = kiln.dispatch @kernels::@layer0_relu(%{{.+}}) {kiln.nodes = ["layer0/Add", "layer0/Relu"], kiln.onnx_values = ["a"]}
// CHECK: %[[B:.+]] = kiln.dispatch @kernels::@layer0_relu(%[[A]]) {kiln.nodes = ["layer1/Add", "layer1/Relu"], kiln.onnx_values = ["b"]}
// CHECK: %[[C:.+]] = kiln.dispatch @kernels::@layer2_relu(%[[B]]) {kiln.nodes = ["layer2/Add", "layer2/Relu"], kiln.onnx_values = ["c"]}
// CHECK: kiln.dispatch @kernels::@layer3_relu(%[[C]]) {kiln.nodes = ["layer3/Add", "layer3/Relu"], kiln.onnx_values = ["d"]}
// CHECK: module @kernels
// CHECK: func.func @layer0_relu(
// CHECK-NOT: func.func @layer1_relu
// CHECK: func.func @layer2_relu(
// CHECK: arith.constant 2.000000e+00
// CHECK: func.func @layer3_relu(
// CHECK-SAME: kiln.workgroups = 2
module {
  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %a = kiln.dispatch @kernels::@layer0_relu(%x) {kiln.onnx_values = ["a"]} : (tensor<8xf32>) -> tensor<8xf32>
    %b = kiln.dispatch @kernels::@layer1_relu(%a) {kiln.onnx_values = ["b"]} : (tensor<8xf32>) -> tensor<8xf32>
    %c = kiln.dispatch @kernels::@layer2_relu(%b) {kiln.onnx_values = ["c"]} : (tensor<8xf32>) -> tensor<8xf32>
    %d = kiln.dispatch @kernels::@layer3_relu(%c) {kiln.onnx_values = ["d"]} : (tensor<8xf32>) -> tensor<8xf32>
    return %d : tensor<8xf32>
  }
  module @kernels attributes {kiln.target = "cpu"} {
    func.func @layer0_relu(%in: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.nodes = ["layer0/Add", "layer0/Relu"], kiln.workgroups = 1 : i64} {
      %one = arith.constant 1.0 : f32
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<8xf32> loc("layer0/Add")
      %s = arith.addf %v, %one : f32 loc("layer0/Add")
      memref.store %s, %out[%c0] : memref<8xf32> loc("layer0/Relu")
      return
    }
    func.func @layer1_relu(%in: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.nodes = ["layer1/Add", "layer1/Relu"], kiln.workgroups = 1 : i64} {
      %one = arith.constant 1.0 : f32
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<8xf32> loc("layer1/Add")
      %s = arith.addf %v, %one : f32 loc("layer1/Add")
      memref.store %s, %out[%c0] : memref<8xf32> loc("layer1/Relu")
      return
    }
    func.func @layer2_relu(%in: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.nodes = ["layer2/Add", "layer2/Relu"], kiln.workgroups = 1 : i64} {
      %two = arith.constant 2.0 : f32
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<8xf32>
      %s = arith.addf %v, %two : f32
      memref.store %s, %out[%c0] : memref<8xf32>
      return
    }
    func.func @layer3_relu(%in: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.nodes = ["layer3/Add", "layer3/Relu"], kiln.workgroups = 2 : i64} {
      %one = arith.constant 1.0 : f32
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<8xf32>
      %s = arith.addf %v, %one : f32
      memref.store %s, %out[%c0] : memref<8xf32>
      return
    }
  }
}

// -----

// Operands of the same types that a body uses in another order are another
// kernel: a - b is not b - a.
// CHECK-LABEL: func.func @main
// CHECK: kiln.dispatch @kernels::@sub_ab(
// CHECK: kiln.dispatch @kernels::@sub_ba(
// CHECK: func.func @sub_ab(
// CHECK: func.func @sub_ba(
module {
  func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %a = kiln.dispatch @kernels::@sub_ab(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %b = kiln.dispatch @kernels::@sub_ba(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %a, %b : tensor<8xf32>, tensor<8xf32>
  }
  module @kernels attributes {kiln.target = "cpu"} {
    func.func @sub_ab(%p: memref<8xf32>, %q: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.nodes = ["ab"]} {
      %c0 = arith.constant 0 : index
      %u = memref.load %p[%c0] : memref<8xf32>
      %v = memref.load %q[%c0] : memref<8xf32>
      %s = arith.subf %u, %v : f32
      memref.store %s, %out[%c0] : memref<8xf32>
      return
    }
    func.func @sub_ba(%p: memref<8xf32>, %q: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.nodes = ["ba"]} {
      %c0 = arith.constant 0 : index
      %u = memref.load %p[%c0] : memref<8xf32>
      %v = memref.load %q[%c0] : memref<8xf32>
      %s = arith.subf %v, %u : f32
      memref.store %s, %out[%c0] : memref<8xf32>
      return
    }
  }
}
