// RUN: kiln-opt %s --split-input-file --verify-diagnostics
// Each verifier error, one per case.

func.func @broadcast_mismatch(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+2 {{shapes do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.add %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @wrong_result_type(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.add %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x4xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+2 {{contraction sizes differ: 4 vs 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : tensor<2x4xf32>, tensor<5x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @gemm_contraction(%a: tensor<2x4xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{contraction sizes differ: 4 vs 5}}
  %0 = kiln.gemm %a, %b : (tensor<2x4xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gemm_bias(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{C does not broadcast to the result shape}}
  %0 = kiln.gemm %a, %b, %c : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{weight has 4 input channels per group, input has 4 channels in 2 groups}}
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_channels_last_groups(%x: tensor<1x8x8x4xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{weight has 4 input channels per group, input has 4 channels in 2 groups}}
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{expects 2 strides and dilations and 4 pads}}
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel dims must be positive}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 0, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x4x8x8xf32> -> tensor<1x4x9x7xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{changes the element count from 6 to 8}}
  %0 = kiln.reshape %x : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm is not a permutation of 0..1}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{inputs differ in dim 0 off the axis}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range}}
  %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = kiln.reduce_sum %x {axes = array<i64: 1, 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @clip_bounds(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{min 6.000000e+00 is greater than max 0.000000e+00}}
  %0 = kiln.clip %x {min = 6.0 : f32, max = 0.0 : f32} : tensor<2x3xf32>
  return
}

// -----

func.func @float_only(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = kiln.relu %x : tensor<2x3xi32>
  return
}

// -----

func.func @region_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{yielded types differ from the results}}
  %0 = kiln.dispatch_region(%x) : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return
}

// -----

module {
  func.func @missing_kernel(%x: tensor<4xf32>) {
    // expected-error @+1 {{kernel @kernels::@nope is not a function}}
    %0 = kiln.dispatch @kernels::@nope(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
  module @kernels {}
}

// -----

func.func @slice_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 0 reads outside the input}}
  %0 = kiln.slice %x {starts = array<i64: 2>, steps = array<i64: 2>} : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @expand_shape(%x: tensor<3xf32>) {
  // expected-error @+1 {{input does not broadcast to the result shape}}
  %0 = kiln.expand %x : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @pad_mode(%x: tensor<3xf32>) {
  // expected-error @+1 {{mode must be constant, edge or reflect}}
  %0 = kiln.pad %x {pads = array<i64: 1, 1>, mode = "wrap", value = 0.0 : f64} : tensor<3xf32> -> tensor<5xf32>
  return
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{subscript 'j' has sizes 3 and 4}}
  %0 = kiln.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @cast_shape(%x: tensor<3xf32>) {
  // expected-error @+1 {{changes the shape}}
  %0 = kiln.cast %x : tensor<3xf32> -> tensor<4xi64>
  return
}

// -----

func.func @gather_axis(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 out of range}}
  %0 = kiln.gather %x, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @scatter_reduction(%x: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{reduction must be none, add, mul, max or min}}
  %0 = kiln.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "avg"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @tile_multiple(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{dim 1 is not a multiple of the input's}}
  %0 = kiln.tile %x : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_elements_dims(%x: tensor<2x3xf32>, %i: tensor<4x1xi64>) {
  // expected-error @+1 {{indices dim 0 exceeds the input's}}
  %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>
  return
}

// -----

func.func @region_arguments(%x: tensor<4xf32>) {
  // expected-error @+1 {{region has 0 arguments for 1 inputs}}
  %0 = "kiln.dispatch_region"(%x) ({
    %c = kiln.constant dense<1.0> : tensor<4xf32>
    kiln.yield %c : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// kiln. attributes are declared in KilnDialect.td, each with its type.
// expected-error @+1 {{'kiln.tile_sizes' is not an attribute the kiln dialect declares}}
func.func @undeclared_attribute() attributes {kiln.tile_sizes = array<i64: 4>} {
  return
}

// -----

// expected-error @+1 {{'kiln.workgroups' = "4" is not of the type KilnDialect.td declares}}
func.func @declared_attribute_of_another_type() attributes {kiln.kernel, kiln.workgroups = "4"} {
  return
}

// -----

// expected-error @+1 {{'kiln.shape_guards' = "x" is not of the type KilnDialect.td declares}}
func.func @shape_guards_of_another_type() attributes {kiln.shape_guards = "x"} {
  return
}

// -----

// A kernel config is a #kiln.config, not its tile sizes alone.
// expected-error @+1 {{'kiln.config' = array<i64: 16, 16> is not of the type KilnDialect.td declares}}
func.func @config_of_another_type() attributes {kiln.kernel, kiln.config = array<i64: 16, 16>} {
  return
}

// -----

// expected-error @+2 {{expected ::kiln::Tiling to be one of: workgroups, threads, blocks}}
// expected-error @+1 {{failed to parse Kiln_KernelConfigAttr parameter 'tiling'}}
func.func @config_of_unknown_tiling() attributes {kiln.config = #kiln.config<warps, tile_sizes = [1]>} {
  return
}

// -----

// expected-error @+1 {{'kiln.name' of an argument must be a string}}
func.func @value_name_not_a_string(%x: tensor<4xf32> {kiln.name = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{'kiln.nodes' on a result is not an attribute the kiln dialect declares (only 'kiln.name', 'kiln.batched' and 'kiln.check')}}
func.func @result_attribute(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.nodes = ["a"]}) {
  return %x : tensor<4xf32>
}

// -----

// A run-time check's error is a result's attribute only.
// expected-error @+1 {{'kiln.check' on an argument is not an attribute the kiln dialect declares (only 'kiln.name' and 'kiln.batched')}}
func.func @check_on_argument(%x: tensor<4xi1> {kiln.check = "bad"}) {
  return
}

// -----

// expected-error @+1 {{'kiln.check' of a result must be a string}}
func.func @check_not_a_string(%x: tensor<4xi1>) -> (tensor<4xi1> {kiln.check = 1 : i64}) {
  return %x : tensor<4xi1>
}

// -----

// expected-error @+2 {{expected ::kiln::ContractionUnit to be one of: threads, warps, warpgroups}}
// expected-error @+1 {{failed to parse Kiln_ContractionConfigAttr parameter 'unit'}}
func.func @contraction_of_unknown_unit() attributes {kiln.contraction = #kiln.contraction<lanes, "fma", block = [16, 16, 16], tile = [1, 1], stage_k = 16, stage_buffers = 0, groups_in_flight = 0>} {
  return
}

// -----

// The instruction a kernel uses is part of its kiln.contraction.
// expected-error @+1 {{'kiln.matrix_cores' is not an attribute the kiln dialect declares}}
func.func @matrix_cores_alone() attributes {kiln.matrix_cores = "mma.sync m16n8k16"} {
  return
}
