// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia wgmma=true},kiln-contract-with-matrix-cores{arch=nvidia}),canonicalize)' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia wgmma=true wgmma-groups-in-flight=0},kiln-contract-with-matrix-cores{arch=nvidia}),canonicalize)' | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-emulate-gpu %s --target=cuda:sm_90a --memory-traffic | FileCheck %s --check-prefix=EMU

// sm_90a (wgmma=true): a 64x64 float16 block is one warpgroup (4 warps,
// 128 threads) running wgmma.mma_async m64n64k16 with both operands read
// from the stage buffers through matrix descriptors. The buffers hold
// 8x16-byte core matrices, 128 contiguous bytes each, as rows of 16
// bytes; each cp.async of 16 bytes lands in one such row. Core matrices
// adjacent along the operand's contiguous dim are spaced so that the 8
// copies of a wavefront take distinct banks: A ([row][k] in global
// memory, K-major; a wavefront copies 4 runs along K of 2 rows) 160
// bytes apart along K, its groups of 8 rows 640 apart (320 rows of 16
// bytes); B ([k][column], N-major; a wavefront copies 8 runs along N)
// 144 bytes apart along N, 8 k's 1152 apart (288 rows). Descriptors:
// the start address's bits 4-17 (the allocation's, plus the stage's and
// the core matrix's offsets in 16-byte units), the leading byte offset
// (between core matrices along K) and the stride byte offset (along M or
// N), both over 16, in bits 16-29 and 32-45: A's (10 << 16) | (40 <<
// 32), B's (72 << 16) | (9 << 32). After its copies land, each thread
// fences them for the async proxy wgmma reads through; each stage is one
// wgmma group (a fence, two instructions of 16 along K, a commit) that
// keeps running while the warpgroup goes on to the next stage's wait and
// barrier: the stage waits for the previous stage's group (wait_group 1),
// so the buffer a stage refills is that of two stages before (16 stages
// of 32 along K in five buffers, three of them in flight: cp.async
// wait_group 2), and the loop ends by waiting for the last group before
// the epilogue reads the accumulators. Warp w holds rows 16w..16w+15 at
// every column: the mma.sync layout per 8 columns, so the epilogue (the
// bias) and the stores are those of a 16x64 warp tile.
// (kiln-emulate-gpu --memory-traffic: the stage copies take the
// conflict-free 4 wavefronts a request; the emulator also fails a
// cp.async into rows that a wgmma not yet waited for reads, as refilling
// the buffer of the stage before would.) With wgmma-groups-in-flight=0
// each stage waits for its own group: four buffers, three stages of
// copies in flight.
// CHECK-LABEL: func.func @matmul_f16
// CHECK-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n64k16", block = [64, 64, 512], tile = [16, 64], stage_k = 32, stage_buffers = 5, groups_in_flight = 1>
// CHECK-SAME: kiln.lanes = 128 : i64
// CHECK-DAG: %[[A:.+]] = memref.alloc() {alignment = 16 : i64} : memref<5x320x8xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.+]] = memref.alloc() {alignment = 16 : i64} : memref<5x288x8xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8 {bypassL1} : memref<64x512xf16, strided<[512, 1], offset: ?>> to memref<320x8xf16, strided<[8, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK-NEXT: nvgpu.device_async_wait %{{.+}} {numGroups = 2 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.commit
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: arith.andi %{{.+}}, %c262143_i64
// CHECK: arith.shrui %{{.+}}, %c4_i64
// CHECK: arith.ori %{{.+}}, %c171799347200_i64
// CHECK: %[[DA:.+]] = arith.addi %{{.+}} : i64
// CHECK: arith.ori %{{.+}}, %c38659424256_i64
// CHECK: %[[DB:.+]] = arith.addi %{{.+}} : i64
// CHECK: nvvm.wgmma.mma_async %[[DA]], %[[DB]], %{{.+}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: nvvm.wgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: memref.store %{{.+}}, %{{.+}} : memref<64x64xf32, strided<[256, 1], offset: ?>>
// CHECK-NOT: memref.store
// SERIAL-LABEL: func.func @matmul_f16
// SERIAL-SAME: stage_buffers = 4, groups_in_flight = 0>
// SERIAL: memref.alloc() {alignment = 16 : i64} : memref<4x320x8xf16, #gpu.address_space<workgroup>>
// SERIAL: scf.for
// SERIAL-NEXT: nvgpu.device_async_wait %{{.+}} {numGroups = 2 : i32}
// SERIAL: nvvm.wgmma.commit.group.sync.aligned
// SERIAL-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// SERIAL: scf.yield
// SERIAL: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// SERIAL-NOT: nvvm.wgmma.wait
// SERIAL-LABEL: func.func @gemm_bf16_transposed
// EMU: matmul_f16: 8 blocks x 128 threads, wgmma m64n64k16, 2 workgroup buffers: max error {{.*}}: OK
// EMU-NEXT: matmul_f16: memory: {{.*}} workgroup stores 2048 requests, 4.00 wavefronts each, 1.00x the conflict-free count
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_f16(%x: memref<128x512xf16>, %w: memref<512x256xf16>, %b: memref<256xf32>, %y: memref<128x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 256) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 512] [1, 1] : memref<128x512xf16> to memref<64x512xf16, strided<[512, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [512, 64] [1, 1] : memref<512x256xf16> to memref<512x64xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x512xf16, strided<[512, 1], offset: ?>>, memref<512x64xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    %bs = memref.subview %b[%j] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs : memref<64x64xf32, strided<[256, 1], offset: ?>>, memref<64xf32, strided<[1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// A 128x128 bfloat16 block with B transposed in global memory ([column][k],
// K-major, as Gemm's transB=1 gives it) and A transposed ([k][row],
// M-major): two warpgroups (256 threads), each wgmma m64n128k16 at its 64
// rows of A's buffer. Over K = 128 in 48 KiB, four buffers of 16 along
// K: two stages and a wgmma group in flight, where two buffers of 32
// would hold one stage. A's
// descriptor strides are MN-major ones (its 16 runs of a k's row in
// matrices 144 bytes apart along M, the leading offset between 8 k's
// 2304: (144 << 16) | (9 << 32)) and its layout `col` (imm-trans-a 1);
// B's K-major ones (a wavefront's 2 runs along K of 4 columns, 192 bytes
// apart: (12 << 16) | (24 << 32)), layout `col` (imm-trans-b 0).
// CHECK-LABEL: func.func @gemm_bf16_transposed
// CHECK-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n128k16", block = [128, 128, 128], tile = [16, 128], stage_k = 16, stage_buffers = 4, groups_in_flight = 1>
// CHECK-SAME: kiln.lanes = 256 : i64
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK-NEXT: arith.divui %[[TID]], %c32
// CHECK: %[[TID2:.+]] = gpu.thread_id x
// CHECK-NEXT: %[[GROUP:.+]] = arith.divui %[[TID2]], %c128
// CHECK-NEXT: arith.muli %[[GROUP]], %c64
// CHECK-NEXT: memref.alloc() {alignment = 16 : i64} : memref<4x288x8xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: memref.alloc() {alignment = 16 : i64} : memref<4x384x8xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: arith.ori %{{.+}}, %c38664142848_i64
// CHECK: %[[DA:.+]] = arith.addi %{{.+}} : i64
// CHECK: arith.ori %{{.+}}, %c103080001536_i64
// CHECK: %[[DB:.+]] = arith.addi %{{.+}} : i64
// CHECK: nvvm.wgmma.mma_async %[[DA]], %[[DB]], %{{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// EMU: gemm_bf16_transposed: 4 blocks x 256 threads, wgmma m64n128k16, 2 workgroup buffers: max error {{.*}}: OK
// EMU-NEXT: gemm_bf16_transposed: memory: {{.*}} workgroup stores {{[0-9]+}} requests, 4.00 wavefronts each, 1.00x the conflict-free count
#at = affine_map<(d0, d1, d2) -> (d1, d0)>
#bt = affine_map<(d0, d1, d2) -> (d2, d1)>
#ct = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @gemm_bf16_transposed(%x: memref<128x256xbf16>, %w: memref<256x128xbf16>, %y: memref<256x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 256) step (128, 128) {
    %xs = memref.subview %x[0, %i] [128, 128] [1, 1] : memref<128x256xbf16> to memref<128x128xbf16, strided<[256, 1], offset: ?>>
    %ws = memref.subview %w[%j, 0] [128, 128] [1, 1] : memref<256x128xbf16> to memref<128x128xbf16, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [128, 128] [1, 1] : memref<256x256xf32> to memref<128x128xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#at, #bt, #ct], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<128x128xbf16, strided<[256, 1], offset: ?>>, memref<128x128xbf16, strided<[128, 1], offset: ?>>) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: bf16, %in_0: bf16, %out: f32):
      %0 = arith.extf %in_0 : bf16 to f32
      %1 = arith.extf %in : bf16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

// Blocks whose rows 64 does not divide stay on mma.sync.
// CHECK-LABEL: func.func @rows32
// CHECK-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16"
// CHECK-NOT: nvvm.wgmma
// EMU: rows32: {{.*}} mma.sync m16n8k16, {{.*}}: OK
#ar = affine_map<(d0, d1, d2) -> (d0, d1)>
#br = affine_map<(d0, d1, d2) -> (d1, d2)>
#cr = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @rows32(%x: memref<64x64xf16>, %w: memref<64x64xf16>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 64) {
    %xs = memref.subview %x[%i, 0] [32, 64] [1, 1] : memref<64x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [32, 64] [1, 1] : memref<64x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<32x64xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#ar, #br, #cr], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %w : memref<32x64xf16, strided<[64, 1], offset: ?>>, memref<64x64xf16>) outs(%ys : memref<32x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
