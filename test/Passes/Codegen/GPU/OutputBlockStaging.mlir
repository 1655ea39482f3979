// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia},kiln-contract-with-matrix-cores{arch=nvidia}),canonicalize)' | FileCheck %s

// What passes/Codegen/GPU/OutputBlockStaging.cpp does for a block's
// reduction loop: a 32x32 block of a float16 matmul whose K of 256 is 8
// stages of 32. Each operand's stages go through a ring of 4 workgroup
// buffers (32x32 float16, rows of 64 bytes, unpadded): 3 stages are copied
// with cp.async before the loop, one group each (4 copies of 16 bytes per
// lane, operand and stage: 2 KiB in 16-byte pieces over 32 lanes); each
// iteration waits until at most 2 groups are pending, synchronizes the
// block, refills the buffer the next-but-two stage uses (an empty group
// past the last stage keeps the count), and computes on its own buffer
// with ldmatrix (B transposed). The copies' columns are swizzled by an xor
// with the row (in 16-byte chunks), so that ldmatrix's rows fall in
// different banks. After the loop, every group is waited for.
// CHECK-LABEL: func.func @deep_k
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<4x32x32xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<4x32x32xf16, #gpu.address_space<workgroup>>
// CHECK: arith.xori
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}} : memref<32x256xf16, strided<[256, 1], offset: ?>> to memref<32x32xf16
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: %[[PROLOGUE:.+]] = nvgpu.device_async_create_group
// CHECK: scf.for %{{.+}} = %c0 to %c8 step %c1 iter_args({{.*}}, %[[PENDING:.+]] = %[[PROLOGUE]])
// CHECK-NEXT: nvgpu.device_async_wait %[[PENDING]] {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: } else {
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @deep_k(%x: memref<64x256xf16>, %w: memref<256x64xf16>, %bias: memref<64xf32>, %res: memref<64x64xf32>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 256] [1, 1] : memref<64x256xf16> to memref<32x256xf16, strided<[256, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [256, 32] [1, 1] : memref<256x64xf16> to memref<256x32xf16, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    %rs = memref.subview %res[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    %bs = memref.subview %bias[%j] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x256xf16, strided<[256, 1], offset: ?>>, memref<256x32xf16, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#id, #bias, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs, %rs : memref<32x32xf32, strided<[64, 1], offset: ?>>, memref<32xf32, strided<[1], offset: ?>>, memref<32x32xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %b: f32, %r: f32, %out: f32):
      %0 = arith.addf %in, %b : f32
      %1 = arith.addf %0, %r : f32
      %2 = arith.maximumf %1, %zero : f32
      linalg.yield %2 : f32
    }
  }
  return
}
