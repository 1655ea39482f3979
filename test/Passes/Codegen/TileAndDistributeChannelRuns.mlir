// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-convert-to-linalg{read-window-padding-in-place=true},func.func(kiln-fuse-elementwise-producers),func.func(kiln-tile-and-distribute{gpu=true min-threads=1}))' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-convert-to-linalg{read-window-padding-in-place=true},func.func(kiln-fuse-elementwise-producers),func.func(kiln-tile-and-distribute{gpu=true min-threads=1}))' -o %t.mlir
// RUN: kiln-emulate-gpu %t.mlir --bufferize --arch=nvidia --memory-traffic | FileCheck %s --check-prefix=EMU
// RUN: kiln-emulate-gpu %t.mlir --bufferize --arch=amd | FileCheck %s --check-prefix=EMU-AMD

// The tiled kernels run under kiln-emulate-gpu as the GPU targets compile
// them compute what their own loops do; a thread's run of channels loads
// and stores whole 16-byte pieces (16 sectors a warp's store: 512 bytes).
// EMU: depthwise_nhwc: {{.*}}: OK
// EMU-NEXT: depthwise_nhwc: memory: {{.*}}100% of their bytes used; global stores 90 requests, 16.0 sectors each, 100% of their bytes used
// EMU: depthwise_nhwc_odd: {{.*}}: OK
// EMU: depthwise_nchw: {{.*}}: OK
// EMU-AMD: depthwise_nhwc: {{.*}}: OK
// EMU-AMD: depthwise_nhwc_odd: {{.*}}: OK
// EMU-AMD: depthwise_nchw: {{.*}}: OK

// A depthwise convolution on NHWC activations, its weight stored
// [1][kh][kw][C] (kiln-channels-last-conv-weights) and transposed back in
// the kernel, takes 16 bytes of neighbouring channels per thread (4 at
// float32): the weight's and the output's slices are runs along C, and the
// window's index arithmetic serves all four.
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK: scf.forall (%[[N:.+]], %[[H:.+]], %[[W:.+]], %[[C:.+]]) = (0, 0, 0, 0) to (2, 6, 6, 16) step (1, 1, 1, 4)
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, %[[C]]] [1, 3, 3, 4]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction", "parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: outs(%{{.+}} : tensor<1x1x1x4xf32>)
func.func @depthwise_nhwc(%arg0: memref<2x6x6x16xf32>, %arg1: memref<1x3x3x16xf32>, %arg2: memref<2x6x6x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x6x6x16xf32> to tensor<2x6x6x16xf32>
  %stored = bufferization.to_tensor %arg1 restrict : memref<1x3x3x16xf32> to tensor<1x3x3x16xf32>
  %w = kiln.transpose %stored {perm = array<i64: 3, 0, 1, 2>} : tensor<1x3x3x16xf32> -> tensor<16x1x3x3xf32>
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 16 : i64} : (tensor<2x6x6x16xf32>, tensor<16x1x3x3xf32>) -> tensor<2x6x6x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<2x6x6x16xf32>, memref<2x6x6x16xf32>) -> ()
  return
}

// -----

// Channels that 4 does not divide keep one output per thread.
// CHECK-LABEL: func.func @depthwise_nhwc_odd
// CHECK: scf.forall ({{.*}}) in (2, 6, 6, 6)
func.func @depthwise_nhwc_odd(%arg0: memref<2x6x6x6xf32>, %arg1: memref<1x3x3x6xf32>, %arg2: memref<2x6x6x6xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x6x6x6xf32> to tensor<2x6x6x6xf32>
  %stored = bufferization.to_tensor %arg1 restrict : memref<1x3x3x6xf32> to tensor<1x3x3x6xf32>
  %w = kiln.transpose %stored {perm = array<i64: 3, 0, 1, 2>} : tensor<1x3x3x6xf32> -> tensor<6x1x3x3xf32>
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 6 : i64} : (tensor<2x6x6x6xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x6x6xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<2x6x6x6xf32>, memref<2x6x6x6xf32>) -> ()
  return
}

// -----

// On NCHW activations the innermost loop is the row, which the window
// reads at stride-spaced columns: one output per thread, as before.
// CHECK-LABEL: func.func @depthwise_nchw
// CHECK: scf.forall ({{.*}}) in (2, 16, 6, 6)
func.func @depthwise_nchw(%arg0: memref<2x16x6x6xf32>, %arg1: memref<16x1x3x3xf32>, %arg2: memref<2x16x6x6xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x16x6x6xf32> to tensor<2x16x6x6xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<16x1x3x3xf32> to tensor<16x1x3x3xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 16 : i64} : (tensor<2x16x6x6xf32>, tensor<16x1x3x3xf32>) -> tensor<2x16x6x6xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<2x16x6x6xf32>, memref<2x16x6x6xf32>) -> ()
  return
}
