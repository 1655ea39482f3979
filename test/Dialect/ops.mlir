// RUN: kiln-opt %s --split-input-file | kiln-opt | FileCheck %s
// Every op prints in a form that parses back to the same op.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: kiln.relu %{{.*}} : tensor<2x3xf32>
  %0 = kiln.relu %x : tensor<2x3xf32>
  // CHECK: kiln.add %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %1 = kiln.add %0, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: kiln.clip %{{.*}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
  %2 = kiln.clip %1 {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x3xf32>
  // CHECK: kiln.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32}
  %3 = kiln.leaky_relu %2 {alpha = 0.1 : f32} : tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @linear
func.func @linear(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>, %w: tensor<16x8xf32>, %c: tensor<16xf32>) -> (tensor<2x4x16xf32>, tensor<4x16xf32>) {
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %0 = kiln.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %flat = kiln.reshape %a : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %half = kiln.reduce_mean %flat {axes = array<i64: 0>, keepdims = false} : tensor<8x8xf32> -> tensor<8xf32>
  %row = kiln.reshape %half : tensor<8xf32> -> tensor<1x8xf32>
  %rows = kiln.concat %row, %row, %row, %row {axis = 0 : i64} : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK: kiln.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, transB = true}
  %1 = kiln.gemm %rows, %w, %c {alpha = 0.5 : f32, transB = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> (tensor<1x6x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) {
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  // CHECK: kiln.max_pool
  %1 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK: kiln.average_pool {{.*}}count_include_pad = false
  %2 = kiln.average_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %0, %1, %2 : tensor<1x6x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>
}

// -----

// channels_last: [N, H, W, C] in, [N, H', W', F] out; the weight stays
// [F, C/group, kh, kw].
// CHECK-LABEL: func.func @windows_channels_last
func.func @windows_channels_last(%x: tensor<1x8x8x4xf32>, %w: tensor<6x2x3x3xf32>) -> (tensor<1x4x4x6xf32>, tensor<1x4x4x4xf32>) {
  // CHECK: kiln.conv %{{.*}}, %{{.*}} {channels_last, {{.*}}group = 2 : i64{{.*}}} : (tensor<1x8x8x4xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x4x6xf32>
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x4x6xf32>
  // CHECK: kiln.max_pool %{{.*}} {ceil_mode = false, channels_last, {{.*}}} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  %1 = kiln.max_pool %x {channels_last, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  return %0, %1 : tensor<1x4x4x6xf32>, tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @dispatch_region
func.func @dispatch_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: kiln.dispatch_region(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: kiln.yield %{{.*}} : tensor<4xf32>
  %0 = kiln.dispatch_region(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = kiln.relu %a : tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dtypes_and_selection
func.func @dtypes_and_selection(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  // CHECK: kiln.cast %{{.*}} : tensor<4xi64> -> tensor<4xf32>
  %0 = kiln.cast %i : tensor<4xi64> -> tensor<4xf32>
  // CHECK: kiln.less %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %1 = kiln.less %x, %0 : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %2 = kiln.not %1 : tensor<4xi1>
  %3 = kiln.and %1, %2 : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  // CHECK: kiln.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %4 = kiln.where %3, %x, %0 : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: kiln.mod %{{.*}}, %{{.*}} : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %5 = kiln.mod %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %6 = kiln.hard_sigmoid %4 {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<4xf32>
  return %6, %5 : tensor<4xf32>, tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>, %x: tensor<1x4xf32>) -> (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<3x4xf32>, tensor<2x8xf32>, tensor<3x6xf32>, tensor<2x3xf32>, tensor<4xi64>) {
  // CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %0 = kiln.gather %t, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  // CHECK: kiln.slice %{{.*}} {starts = array<i64: 9, 0>, steps = array<i64: -2, 1>} : tensor<10x4xf32> -> tensor<5x4xf32>
  %1 = kiln.slice %t {starts = array<i64: 9, 0>, steps = array<i64: -2, 1>} : tensor<10x4xf32> -> tensor<5x4xf32>
  // CHECK: kiln.expand %{{.*}} : tensor<1x4xf32> -> tensor<3x4xf32>
  %2 = kiln.expand %x : tensor<1x4xf32> -> tensor<3x4xf32>
  // CHECK: kiln.tile %{{.*}} : tensor<1x4xf32> -> tensor<2x8xf32>
  %3 = kiln.tile %x : tensor<1x4xf32> -> tensor<2x8xf32>
  // CHECK: kiln.pad %{{.*}} {mode = "reflect", pads = array<i64: 1, 1, 1, 1>, value = 0.000000e+00 : f64} : tensor<1x4xf32> -> tensor<3x6xf32>
  %4 = kiln.pad %x {pads = array<i64: 1, 1, 1, 1>, mode = "reflect", value = 0.0 : f64} : tensor<1x4xf32> -> tensor<3x6xf32>
  %c = kiln.slice %t {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<10x4xf32> -> tensor<2x4xf32>
  %d = kiln.slice %t {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<10x4xf32> -> tensor<4x3xf32>
  // CHECK: kiln.einsum %{{.*}}, %{{.*}} {equation = "ij,jk->ik"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %5 = kiln.einsum %c, %d {equation = "ij,jk->ik"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.arg_max %{{.*}} {axis = 0 : i64, keepdims = false, select_last_index = false} : tensor<10x4xf32> -> tensor<4xi64>
  %6 = kiln.arg_max %t {axis = 0 : i64, keepdims = false, select_last_index = false} : tensor<10x4xf32> -> tensor<4xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<3x4xf32>, tensor<2x8xf32>, tensor<3x6xf32>, tensor<2x3xf32>, tensor<4xi64>
}

// Every attribute KilnDialect.td declares, with its type, verifies.
// CHECK-LABEL: func.func @declared_attributes
// CHECK-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [128, 0, 256]>
// CHECK-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n128k16", block = [128, 128, 64], tile = [16, 128], stage_k = 32, stage_buffers = 4, groups_in_flight = 1>
func.func @declared_attributes(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"})
    attributes {kiln.kernel, kiln.nodes = ["n"], kiln.onnx_values = ["y"], kiln.abi = ["in"],
                kiln.flops = 8 : i64, kiln.workgroups = 2 : i64, kiln.threads = 64 : i64,
                kiln.config = #kiln.config<blocks, tile_sizes = [128, 0, 256]>,
                kiln.tile = array<i64: 0, 2>, kiln.matrix_tile = array<i64: 16, 16>,
                kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n128k16", block = [128, 128, 64],
                                                     tile = [16, 128], stage_k = 32, stage_buffers = 4,
                                                     groups_in_flight = 1>,
                kiln.register_tile = array<i64: 8, 16>,
                kiln.lanes = 32 : i64, kiln.cooperative, kiln.workgroup_memory = 1024 : i64,
                kiln.dynamic_workgroup_memory = 0 : i64, kiln.private_memory = 0 : i64,
                kiln.shape_guards = [{rule = "Equals", node = "n", op_type = "TopK", input = "x",
                                      data_shape = array<i64>, params = array<i64>,
                                      expected = array<i64: 3>}]} {
  return %x : tensor<4xf32>
}
