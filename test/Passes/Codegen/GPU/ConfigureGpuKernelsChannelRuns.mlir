// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-convert-to-linalg{read-window-padding-in-place=true},func.func(kiln-fuse-elementwise-producers),func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{min-threads=1},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-convert-to-linalg{read-window-padding-in-place=true},func.func(kiln-fuse-elementwise-producers),func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{min-threads=1},kiln-tile-and-distribute{gpu=true}))' -o %t.mlir
// RUN: kiln-emulate-gpu %t.mlir --bufferize --target=cuda --memory-traffic | FileCheck %s --check-prefix=EMU
// RUN: kiln-emulate-gpu %t.mlir --bufferize --target=rocm | FileCheck %s --check-prefix=EMU-AMD

// The tiled kernels run under kiln-emulate-gpu as the GPU targets compile
// them compute what their own loops do; a thread's run of channels loads
// and stores whole 16-byte pieces (16 sectors a warp's store: 512 bytes).
// EMU: depthwise_nhwc: {{.*}}: OK
// EMU-NEXT: depthwise_nhwc: memory: {{.*}}100% of their bytes used; global stores 90 requests, 16.0 sectors each, 100% of their bytes used
// EMU: depthwise_nhwc_odd: {{.*}}: OK
// EMU: depthwise_nchw: {{.*}}: OK
// EMU: max_pool_nhwc_f16: {{.*}}: OK
// The pool's 72 threads (two warps and 8 lanes) load 16 bytes of each
// window position: 9 x 3 requests of 16, 16 and 4 sectors, and as many of
// the accumulator (which this pipeline keeps in the output; the compiler's
// keeps it in registers at float32).
// EMU-NEXT: max_pool_nhwc_f16: memory: global loads 54 requests, 12.0 sectors each, 100% of their bytes used
// EMU: max_pool_nchw: {{.*}}: OK
// EMU: average_pool_nhwc_f16: {{.*}}: OK
// EMU-AMD: depthwise_nhwc: {{.*}}: OK
// EMU-AMD: depthwise_nhwc_odd: {{.*}}: OK
// EMU-AMD: depthwise_nchw: {{.*}}: OK
// EMU-AMD: max_pool_nhwc_f16: {{.*}}: OK
// EMU-AMD: max_pool_nchw: {{.*}}: OK
// EMU-AMD: average_pool_nhwc_f16: {{.*}}: OK

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

// -----

// Max pooling on NHWC activations (its window padding read in place, its
// one operand only the window's shape) reads the input in its body along
// the channels: a run of 8 float16 channels a thread, 16-byte loads of
// each window position (one channel a thread made 101 SASS instructions
// an output, 9 two-byte loads, in ResNet-50's float16 MaxPool).
// CHECK-LABEL: func.func @max_pool_nhwc_f16
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0, 0) to (2, 3, 3, 32) step (1, 1, 1, 8)
// CHECK: tensor.extract %{{.+}} : tensor<2x6x6x32xf16>
func.func @max_pool_nhwc_f16(%arg0: memref<2x6x6x32xf16>, %arg1: memref<2x3x3x32xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x6x6x32xf16> to tensor<2x6x6x32xf16>
  %0 = kiln.max_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<2x6x6x32xf16> -> tensor<2x3x3x32xf16>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<2x3x3x32xf16>, memref<2x3x3x32xf16>) -> ()
  return
}

// -----

// On NCHW activations a pool's innermost loop is the row: one output a
// thread.
// CHECK-LABEL: func.func @max_pool_nchw
// CHECK: scf.forall ({{.*}}) in (2, 32, 3, 3)
func.func @max_pool_nchw(%arg0: memref<2x32x6x6xf32>, %arg1: memref<2x32x3x3xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x32x6x6xf32> to tensor<2x32x6x6xf32>
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<2x32x6x6xf32> -> tensor<2x32x3x3xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<2x32x3x3xf32>, memref<2x32x3x3xf32>) -> ()
  return
}

// -----

// AveragePool (padding not counted) takes the same runs of channels.
// CHECK-LABEL: func.func @average_pool_nhwc_f16
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0, 0) to (2, 3, 3, 32) step (1, 1, 1, 8)
func.func @average_pool_nhwc_f16(%arg0: memref<2x6x6x32xf16>, %arg1: memref<2x3x3x32xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x6x6x32xf16> to tensor<2x6x6x32xf16>
  %0 = kiln.average_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<2x6x6x32xf16> -> tensor<2x3x3x32xf16>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<2x3x3x32xf16>, memref<2x3x3x32xf16>) -> ()
  return
}
