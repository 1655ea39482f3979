// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-convert-to-linalg{flatten-rows-below=0},canonicalize,cse,func.func(kiln-fold-expand-shapes-into-consumers),func.func(kiln-fuse-elementwise-producers),func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{thread-blocks=true matrix-tile=16},kiln-tile-and-distribute{gpu=true}),canonicalize,cse)' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: kiln-emulate-gpu %t.mlir --bufferize --target=cuda | FileCheck %s --check-prefix=EMU

// A pooling window's padding around an input widened from float16, not
// read in place (--window-padding-in-place=off): the 16-bit input is
// padded (with -inf, exact at float16) and widened after, so that each
// thread pads a static tile of the argument's slice instead of a widened
// slice of dynamic shape, which would be a device malloc per thread.
// CHECK-LABEL: func.func @max_pool_widened
// CHECK: scf.forall
// CHECK: tensor.pad %{{.+}} low
// CHECK: } : tensor<1x?x?x1xf16> to tensor<1x3x3x1xf16>
// CHECK: arith.extf %{{.+}} : f16 to f32
// EMU: max_pool_widened: {{.*}}: OK
func.func @max_pool_widened(%arg0: memref<1x8x8x16xf16>, %arg1: memref<1x4x4x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<1x8x8x16xf16> to tensor<1x8x8x16xf16>
  %w = kiln.cast %x : tensor<1x8x8x16xf16> -> tensor<1x8x8x16xf32>
  %0 = kiln.max_pool %w {channels_last, ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x8x16xf32> -> tensor<1x4x4x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<1x4x4x16xf32>, memref<1x4x4x16xf32>) -> ()
  return
}

// A matmul over K = 0 runs no iteration: its result is its zero fill, and
// the kernel is the bias added to it, tiled over the threads like any
// elementwise kernel (the empty buffers are passed as one element each).
// CHECK-LABEL: func.func @matmul_no_k
// CHECK-SAME: kiln.config = #kiln.config<threads
// CHECK-NOT: ins({{.*}} : tensor<4x0xf32>
// CHECK: scf.forall
// CHECK: linalg.fill
// CHECK: arith.addf
// EMU: matmul_no_k: {{.*}}: OK
func.func @matmul_no_k(%arg0: memref<4x0xf32>, %arg1: memref<0x16xf32>, %arg2: memref<16xf32>, %arg3: memref<4x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %a = bufferization.to_tensor %arg0 restrict : memref<4x0xf32> to tensor<4x0xf32>
  %b = bufferization.to_tensor %arg1 restrict : memref<0x16xf32> to tensor<0x16xf32>
  %bias = bufferization.to_tensor %arg2 restrict : memref<16xf32> to tensor<16xf32>
  %0 = kiln.matmul %a, %b : tensor<4x0xf32>, tensor<0x16xf32> -> tensor<4x16xf32>
  %1 = kiln.add %0, %bias : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg3 : (tensor<4x16xf32>, memref<4x16xf32>) -> ()
  return
}
