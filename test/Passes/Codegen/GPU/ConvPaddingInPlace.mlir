// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-convert-to-linalg{flatten-rows-below=0},canonicalize,cse,func.func(kiln-fold-expand-shapes-into-consumers),func.func(kiln-fuse-elementwise-producers),func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{thread-blocks=true matrix-tile=16},kiln-tile-and-distribute{gpu=true}),canonicalize,cse)' -o %t.mlir
// RUN: FileCheck %s --check-prefix=TILED < %t.mlir
// RUN: kiln-opt %t.mlir --pass-pipeline='builtin.module(eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize,canonicalize,func.func(kiln-expand-memref-copies),func.func(kiln-promote-temporaries-to-stack),buffer-deallocation-pipeline,func.func(kiln-configure-gpu-contractions{arch=nvidia},kiln-contract-with-matrix-cores{arch=nvidia},kiln-contract-with-thread-tiles))' | FileCheck %s
// RUN: kiln-emulate-gpu %t.mlir --bufferize --target=cuda | FileCheck %s --check-prefix=EMU
// RUN: kiln-emulate-gpu %t.mlir --bufferize --target=rocm | FileCheck %s --check-prefix=EMU

// A convolution whose zero padding is in its kernel (kiln-form-dispatch-
// regions' fuse-conv-padding) reads its input through the padding in
// place: the tensor.pad stays whole, outside the block loop, and the
// blocks' loads of A read the unpadded input, zero outside it, instead of
// every thread padding the whole image.
// TILED-LABEL: func.func @conv_f16
// TILED: tensor.pad %{{.+}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// TILED: scf.forall
// TILED-NOT: tensor.pad
// TILED-LABEL: func.func @conv_f16_async
// TILED: tensor.pad
// TILED: scf.forall
// TILED-NOT: tensor.pad
// One block takes the whole image: A is the padded buffer itself.
// TILED-LABEL: func.func @conv_f16_whole
// TILED: tensor.pad
// TILED: scf.forall (%{{.+}}) = (0) to (64) step (16)
// TILED-NOT: tensor.pad
// TILED-LABEL: func.func @conv_f32_staged
// TILED: tensor.pad
// TILED: scf.forall
// TILED-NOT: tensor.pad
// Split-K's channel groups: the input is grouped before it is padded (the
// pad then sits right behind the block's slice).
// TILED-LABEL: func.func @conv_split_k
// TILED: tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2], [3, 4]]
// TILED-NEXT: tensor.pad %{{.+}} low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0]
// TILED: scf.forall
// TILED-NOT: tensor.pad

// The padded buffer, its fill and its copy are gone; A's elements are
// loaded from the unpadded argument (as one dim) at one linear index less
// the padding, selected into it, and zero outside.
// CHECK-LABEL: func.func @conv_f16(
// CHECK-NOT: linalg.map
// CHECK-NOT: linalg.copy
// CHECK: %[[FLAT:.+]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [4096], strides: [1]
// CHECK: %[[INSIDE:.+]] = arith.andi
// CHECK: %[[AT:.+]] = arith.select %[[INSIDE]], %{{.+}}, %{{.+}} : index
// CHECK-NEXT: %[[X:.+]] = memref.load %[[FLAT]][%[[AT]]] : memref<4096xf16, strided<[1]>>
// CHECK: arith.select %[[INSIDE]], %[[X]], %{{.+}} : f16
// Staged through cp.async: whether a copy is inside is a bit of a mask of
// the window offsets (the stage's number shifts it); one in the padding
// copies no source bytes and zero-fills, from its own (unselected)
// address: a copy of no bytes reads nothing.
// CHECK-LABEL: func.func @conv_f16_async(
// CHECK-NOT: linalg.copy
// CHECK: %[[FLAT:.+]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [12544], strides: [1]
// CHECK: %[[MASKED:.+]] = arith.shrui %{{.+}}, %{{.+}} : i32
// CHECK-NEXT: %[[INSIDE:.+]] = arith.trunci %[[MASKED]] : i32 to i1
// CHECK-NEXT: %{{.+}} = arith.constant 0 : index
// CHECK-NEXT: %{{.+}} = arith.select %[[INSIDE]], %[[AT:.+]], %{{.+}} : index
// CHECK: %[[BYTES:.+]] = arith.select %[[INSIDE]], %c8{{.*}}, %c0
// CHECK: nvgpu.device_async_copy %[[FLAT]][%[[AT]]], {{.+}}, 8, %[[BYTES]] {bypassL1}
// CHECK-LABEL: func.func @conv_f16_whole(
// CHECK-NOT: memref.alloc() {{.*}} : memref<1x9x9x256xf16>
// CHECK-NOT: linalg.copy
// CHECK: %[[FLAT:.+]] = memref.reinterpret_cast %arg0
// CHECK: nvgpu.device_async_copy %[[FLAT]]
// Float32 thread tiles stage 128-bit runs of channels through registers.
// CHECK-LABEL: func.func @conv_f32_staged(
// CHECK-NOT: linalg.copy
// CHECK: %[[FLAT:.+]] = memref.reinterpret_cast %arg0
// CHECK: %[[INSIDE:.+]] = arith.trunci
// CHECK: %[[AT:.+]] = arith.select %[[INSIDE]]
// CHECK-NEXT: %[[VALUES:.+]] = vector.load %[[FLAT]][%[[AT]]] {alignment = 16 : i64} : memref<25088xf32, strided<[1]>>, vector<4xf32>
// CHECK: arith.select %[[INSIDE]], %[[VALUES]], %{{.+}} : vector<4xf32>
// CHECK-LABEL: func.func @conv_split_k(
// CHECK-NOT: linalg.copy
// CHECK: %[[GROUPS:.+]] = memref.expand_shape %arg0 {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 14, 14, 4, 16]
// CHECK: %[[FLAT:.+]] = memref.reinterpret_cast %[[GROUPS]]
// CHECK: memref.load %[[FLAT]]

// Every kernel computes what its tiled IR does (the reference pads).
// EMU: conv_f16: {{.*}}: OK
// EMU: conv_f16_async: {{.*}} 2 workgroup buffers: {{.*}}: OK
// EMU: conv_f16_whole: {{.*}} 2 workgroup buffers: {{.*}}: OK
// EMU: conv_f32_staged: {{.*}} 2 workgroup buffers: {{.*}}: OK
// EMU: conv_split_k: {{.*}}: OK

func.func @conv_f16(%arg0: memref<2x8x8x32xf16>, %arg1: memref<32x3x3x32xf16>, %arg2: memref<32xf16>, %arg3: memref<2x8x8x32xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x8x8x32xf16> to tensor<2x8x8x32xf16>
  %ws = bufferization.to_tensor %arg1 restrict : memref<32x3x3x32xf16> to tensor<32x3x3x32xf16>
  %bs = bufferization.to_tensor %arg2 restrict : memref<32xf16> to tensor<32xf16>
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f64} : tensor<2x8x8x32xf16> -> tensor<2x10x10x32xf16>
  %pw = kiln.cast %p : tensor<2x10x10x32xf16> -> tensor<2x10x10x32xf32>
  %wt = kiln.transpose %ws {perm = array<i64: 0, 3, 1, 2>} : tensor<32x3x3x32xf16> -> tensor<32x32x3x3xf16>
  %w = kiln.cast %wt : tensor<32x32x3x3xf16> -> tensor<32x32x3x3xf32>
  %b = kiln.cast %bs : tensor<32xf16> -> tensor<32xf32>
  %c = kiln.conv %pw, %w, %b {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x10x10x32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<2x8x8x32xf32>
  %r = kiln.relu %c : tensor<2x8x8x32xf32>
  %o = kiln.cast %r : tensor<2x8x8x32xf32> -> tensor<2x8x8x32xf16>
  bufferization.materialize_in_destination %o in restrict writable %arg3 : (tensor<2x8x8x32xf16>, memref<2x8x8x32xf16>) -> ()
  return
}

func.func @conv_f16_async(%arg0: memref<2x7x7x128xf16>, %arg1: memref<64x3x3x128xf16>, %arg2: memref<2x7x7x64xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x7x7x128xf16> to tensor<2x7x7x128xf16>
  %ws = bufferization.to_tensor %arg1 restrict : memref<64x3x3x128xf16> to tensor<64x3x3x128xf16>
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f64} : tensor<2x7x7x128xf16> -> tensor<2x9x9x128xf16>
  %pw = kiln.cast %p : tensor<2x9x9x128xf16> -> tensor<2x9x9x128xf32>
  %wt = kiln.transpose %ws {perm = array<i64: 0, 3, 1, 2>} : tensor<64x3x3x128xf16> -> tensor<64x128x3x3xf16>
  %w = kiln.cast %wt : tensor<64x128x3x3xf16> -> tensor<64x128x3x3xf32>
  %c = kiln.conv %pw, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x9x9x128xf32>, tensor<64x128x3x3xf32>) -> tensor<2x7x7x64xf32>
  %o = kiln.cast %c : tensor<2x7x7x64xf32> -> tensor<2x7x7x64xf16>
  bufferization.materialize_in_destination %o in restrict writable %arg2 : (tensor<2x7x7x64xf16>, memref<2x7x7x64xf16>) -> ()
  return
}

func.func @conv_f16_whole(%arg0: memref<1x7x7x256xf16>, %arg1: memref<64x3x3x256xf16>, %arg2: memref<1x7x7x64xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<1x7x7x256xf16> to tensor<1x7x7x256xf16>
  %ws = bufferization.to_tensor %arg1 restrict : memref<64x3x3x256xf16> to tensor<64x3x3x256xf16>
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f64} : tensor<1x7x7x256xf16> -> tensor<1x9x9x256xf16>
  %pw = kiln.cast %p : tensor<1x9x9x256xf16> -> tensor<1x9x9x256xf32>
  %wt = kiln.transpose %ws {perm = array<i64: 0, 3, 1, 2>} : tensor<64x3x3x256xf16> -> tensor<64x256x3x3xf16>
  %w = kiln.cast %wt : tensor<64x256x3x3xf16> -> tensor<64x256x3x3xf32>
  %c = kiln.conv %pw, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x9x9x256xf32>, tensor<64x256x3x3xf32>) -> tensor<1x7x7x64xf32>
  %o = kiln.cast %c : tensor<1x7x7x64xf32> -> tensor<1x7x7x64xf16>
  bufferization.materialize_in_destination %o in restrict writable %arg2 : (tensor<1x7x7x64xf16>, memref<1x7x7x64xf16>) -> ()
  return
}

func.func @conv_f32_staged(%arg0: memref<2x14x14x64xf32>, %arg1: memref<64x3x3x64xf32>, %arg2: memref<2x14x14x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<2x14x14x64xf32> to tensor<2x14x14x64xf32>
  %ws = bufferization.to_tensor %arg1 restrict : memref<64x3x3x64xf32> to tensor<64x3x3x64xf32>
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f64} : tensor<2x14x14x64xf32> -> tensor<2x16x16x64xf32>
  %w = kiln.transpose %ws {perm = array<i64: 0, 3, 1, 2>} : tensor<64x3x3x64xf32> -> tensor<64x64x3x3xf32>
  %c = kiln.conv %p, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x16x64xf32>, tensor<64x64x3x3xf32>) -> tensor<2x14x14x64xf32>
  bufferization.materialize_in_destination %c in restrict writable %arg2 : (tensor<2x14x14x64xf32>, memref<2x14x14x64xf32>) -> ()
  return
}

func.func @conv_split_k(%arg0: memref<1x14x14x64xf16>, %arg1: memref<256x3x3x16xf16>, %arg2: memref<1x14x14x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<1x14x14x64xf16> to tensor<1x14x14x64xf16>
  %ws = bufferization.to_tensor %arg1 restrict : memref<256x3x3x16xf16> to tensor<256x3x3x16xf16>
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f64} : tensor<1x14x14x64xf16> -> tensor<1x16x16x64xf16>
  %pw = kiln.cast %p : tensor<1x16x16x64xf16> -> tensor<1x16x16x64xf32>
  %wt = kiln.transpose %ws {perm = array<i64: 0, 3, 1, 2>} : tensor<256x3x3x16xf16> -> tensor<256x16x3x3xf16>
  %w = kiln.cast %wt : tensor<256x16x3x3xf16> -> tensor<256x16x3x3xf32>
  %c = kiln.conv %pw, %w {channels_last, dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x16x64xf32>, tensor<256x16x3x3xf32>) -> tensor<1x14x14x256xf32>
  bufferization.materialize_in_destination %c in restrict writable %arg2 : (tensor<1x14x14x256xf32>, memref<1x14x14x256xf32>) -> ()
  return
}
