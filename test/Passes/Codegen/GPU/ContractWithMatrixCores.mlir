// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia},kiln-contract-with-matrix-cores{arch=nvidia}))' | FileCheck %s --check-prefix=NV
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=amd},kiln-contract-with-matrix-cores{arch=amd}))' | FileCheck %s --check-prefix=AMD
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia tf32=true},kiln-contract-with-matrix-cores{arch=nvidia}))' | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=amd tf32=true},kiln-contract-with-matrix-cores{arch=amd}))' | FileCheck %s --check-prefix=AMDTF32

// One 16x16 output tile of a float16 matmul with a bias + ReLU + rounding
// epilogue per forall iteration. NVIDIA: a warp; lane l = 4g + t holds
// rows g, g + 8 and columns 2t, 2t + 1, 8 + 2t, 9 + 2t; each step of 16
// along K is two mma.sync m16n8k16 over fragments loaded from the
// operands. The fill, bias and ReLU run on the lane's 8 elements only,
// forwarding values through the lane's private temporary.
// NV-LABEL: func.func @matmul_f16_bias_relu
// NV-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [16, 16, 64], tile = [16, 16], stage_k = 0
// NV-SAME: kiln.lanes = 32 : i64
// NV: scf.forall
// NV: %[[LANE:.+]] = gpu.lane_id
// NV: arith.divui %[[LANE]], %c4
// NV: arith.remui %[[LANE]], %c4
// NV: scf.for %[[K:.+]] = %c0{{.*}} to %c64{{.*}} step %c16{{.*}} iter_args(%[[ACC0:.+]] = %{{.+}}, %[[ACC1:.+]] = %{{.+}}) -> (vector<2x2xf32>, vector<2x2xf32>)
// NV: memref.load {{.*}} : memref<16x64xf16
// NV: memref.load {{.*}} : memref<64x16xf16
// NV: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %[[ACC0]]) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// NV: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %[[ACC1]]) {mmaShape = [16, 8, 16]}
// NV: scf.yield
// NV-NOT: linalg.
// NV: arith.maximumf
// NV-COUNT-8: memref.store %{{.+}}, %{{.+}} : memref<16x16xf16, strided<[32, 1], offset: ?>>
// NV-NOT: memref.load %{{.+}} : memref<16x16xf32>
// AMD-LABEL: func.func @matmul_f16_bias_relu
// AMD-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16"
// AMD-SAME: kiln.lanes = 64 : i64
// AMD: %[[LANE:.+]] = gpu.lane_id
// AMD: scf.for {{.*}} step %c16{{.*}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<4xf32>)
// AMD: amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %[[ACC]] blgp = none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// AMD-COUNT-4: memref.store %{{.+}}, %{{.+}} : memref<16x16xf16, strided<[32, 1], offset: ?>>
// AMD-NOT: linalg.
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_f16_bias_relu(%x: memref<32x64xf16>, %w: memref<64x32xf16>, %b: memref<32xf16>, %y: memref<32x32xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (32, 32) step (16, 16) {
    %xs = memref.subview %x[%i, 0] [16, 64] [1, 1] : memref<32x64xf16> to memref<16x64xf16, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 16] [1, 1] : memref<64x32xf16> to memref<64x16xf16, strided<[32, 1], offset: ?>>
    %acc = memref.alloca() : memref<16x16xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<16x16xf32>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<16x64xf16, strided<[64, 1], offset: ?>>, memref<64x16xf16, strided<[32, 1], offset: ?>>) outs(%acc : memref<16x16xf32>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    %bs = memref.subview %b[%j] [16] [1] : memref<32xf16> to memref<16xf16, strided<[1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [16, 16] [1, 1] : memref<32x32xf16> to memref<16x16xf16, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %bs : memref<16x16xf32>, memref<16xf16, strided<[1], offset: ?>>) outs(%ys : memref<16x16xf16, strided<[32, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f16, %out: f16):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.addf %in, %0 : f32
      %2 = arith.maximumf %1, %zero : f32
      %3 = arith.truncf %2 : f32 to f16
      linalg.yield %3 : f16
    }
  }
  return
}

// -----

// Gemm's alpha scales each product: the matrix instructions sum from zero
// and the sum is scaled once, then added to the output's initial value.
// NV-LABEL: func.func @gemm_alpha_bf16
// NV-SAME: kiln.lanes = 32
// NV: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// NV: scf.yield
// NV-COUNT-8: arith.mulf %{{.+}}, %[[ALPHA:cst.*]] : f32
// AMD-LABEL: func.func @gemm_alpha_bf16
// AMD: amdgpu.mfma 16x16x16 {{.*}} : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gemm_alpha_bf16(%x: memref<16x32xbf16>, %w: memref<16x32xbf16>, %y: memref<16x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %alpha = arith.constant 0.5 : f32
  scf.forall (%i) in (1) {
    linalg.fill ins(%zero : f32) outs(%y : memref<16x16xf32>)
    linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x32xbf16>, memref<16x32xbf16>) outs(%y : memref<16x16xf32>) {
    ^bb0(%in: bf16, %in_0: bf16, %out: f32):
      %0 = arith.extf %in : bf16 to f32
      %1 = arith.extf %in_0 : bf16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.mulf %2, %alpha : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
  }
  return
}

// -----

// Left alone: float32 operands (no matrix instruction without TF32), and a
// tile that is not 16x16. With tf32 (--allow-tf32, NVIDIA only) the float32
// tile takes mma.sync m16n8k8: steps of 8 along K, A [r] at (g + 8 (r % 2),
// k0 + t + 4 (r / 2)).
// TF32-LABEL: func.func @matmul_f32
// TF32-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k8 tf32"
// TF32: scf.for {{.*}} step %c8
// TF32: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// TF32-LABEL: func.func @matmul_f16_8x16
// TF32-NOT: kiln.lanes
// AMDTF32-LABEL: func.func @matmul_f32
// AMDTF32-NOT: kiln.lanes
// AMDTF32: linalg.generic
// NV-LABEL: func.func @matmul_f32
// NV-NOT: kiln.lanes
// NV: linalg.generic
// NV-LABEL: func.func @matmul_f16_8x16
// NV-NOT: kiln.lanes
// NV: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul_f32(%x: memref<16x32xf32>, %w: memref<32x16xf32>, %y: memref<16x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) in (1) {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x32xf32>, memref<32x16xf32>) outs(%y : memref<16x16xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %4 = arith.addf %out, %2 : f32
      linalg.yield %4 : f32
    }
  }
  return
}
func.func @matmul_f16_8x16(%x: memref<8x32xf16>, %w: memref<32x16xf16>, %y: memref<8x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) in (1) {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x32xf16>, memref<32x16xf16>) outs(%y : memref<8x16xf32>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %4 = arith.addf %out, %2 : f32
      linalg.yield %4 : f32
    }
  }
  return
}

// -----

// A 64x64 block tile of a float16 matmul with a bias epilogue: four warps
// (NVIDIA, 128 threads; AMD, 256), each computing a 32x32 part as 2x2
// subtiles. K goes in 8 stages of 32 through workgroup buffers (rows
// padded by 16 bytes). On NVIDIA each operand's buffer keeps its order in
// global memory (A [row][k], B [k][column]) and the copies are cp.async of
// 16 bytes (2 of A's and 2 of B's per thread and stage, one commit group)
// into four buffers per operand (9.5 KiB a stage: four fit the 48 KiB of
// static workgroup memory), three stages in flight: the first three
// stages' groups before the loop; each iteration waits until only the two
// newest groups may fly (its own stage has landed), meets the others at
// one barrier, issues the copies of the stage three ahead into the buffer
// of the stage computed last (an empty group past the last stage) and
// runs two steps of 16 along K while they fly (per step, one ldmatrix.x4
// per 16x16 piece, B's with .trans, feeding 8 mma.sync). AMD copies
// through two buffers via registers (the loads of the stage after next,
// carried into the next iteration, before the math; the stores of the
// next stage, loaded in the previous iteration, into the other buffers
// after it; one barrier), buffers [row][k] and [column][k] (B transposed element
// by element), fragments loaded element by element, 4 mfma per step. Each
// lane adds the bias to its 4 subtiles' fragment elements (32 on NVIDIA,
// 16 on AMD) at its warp's offset and stores each once: the fill's and the
// contraction's own stores are overwritten before anything reads them, so
// they are dropped. A's rows of 32 halves (64 bytes) are not padded but
// swizzled: a copy's and an ldmatrix row's 16-byte chunk is XOR-permuted
// by the row's place in its 128-byte line of banks.
// NV-LABEL: func.func @matmul_f16_staged
// NV-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [64, 64, 256], tile = [32, 32], stage_k = 32, stage_buffers = 4, groups_in_flight = 0>
// NV-SAME: kiln.cooperative
// NV-SAME: kiln.lanes = 128 : i64
// NV: scf.forall
// NV: %[[TID:.+]] = gpu.thread_id x
// NV: %[[WARP:.+]] = arith.divui %[[TID]], %c32
// NV-DAG: %[[A:.+]] = memref.alloc() {alignment = 16 : i64} : memref<4x64x32xf16, #gpu.address_space<workgroup>>
// NV-DAG: %[[B:.+]] = memref.alloc() {alignment = 16 : i64} : memref<4x32x72xf16, #gpu.address_space<workgroup>>
// NV: memref.subview %[[A]][%c0
// NV: %[[CHUNK:.+]] = arith.xori
// NV: nvgpu.device_async_copy {{.*}}, %{{.+}}[%{{.+}}, %[[CHUNK]]], 8 {bypassL1} : memref<64x256xf16, strided<[256, 1], offset: ?>> to memref<64x32xf16, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
// NV: nvgpu.device_async_copy {{.*}}, 8 {bypassL1} : memref<64x256xf16, strided<[256, 1], offset: ?>> to memref<64x32xf16, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
// NV: memref.subview %[[B]][%c0
// NV-COUNT-2: nvgpu.device_async_copy {{.*}}, 8 {bypassL1} : memref<256x64xf16, strided<[256, 1], offset: ?>> to memref<32x72xf16, strided<[72, 1], offset: ?>, #gpu.address_space<workgroup>>
// NV: nvgpu.device_async_create_group
// NV: memref.subview %[[A]][%c1
// NV: nvgpu.device_async_create_group
// NV: memref.subview %[[A]][%c2
// NV-COUNT-4: nvgpu.device_async_copy
// NV: %[[FIRST:.+]] = nvgpu.device_async_create_group
// NV-NOT: gpu.barrier
// NV: scf.for %{{.+}} = %c0{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args({{.*}}, %[[GROUP:.+]] = %[[FIRST]]) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, !nvgpu.device.async.token)
// NV-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 2 : i32}
// NV-NEXT: gpu.barrier
// NV: %[[WHICH:.+]] = arith.remui %{{.+}}, %c4
// NV: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c3
// NV: %[[INTO:.+]] = arith.remui %[[AHEAD]], %c4
// NV: %[[LIVE:.+]] = arith.cmpi ult, %[[AHEAD]], %c8
// NV: %[[NEXT:.+]] = scf.if %[[LIVE]] -> (!nvgpu.device.async.token) {
// NV: memref.subview %[[A]][%[[INTO]]
// NV-COUNT-4: nvgpu.device_async_copy
// NV: %[[COPIES:.+]] = nvgpu.device_async_create_group
// NV-NEXT: scf.yield %[[COPIES]]
// NV-NEXT: } else {
// NV-NEXT: %[[EMPTY:.+]] = nvgpu.device_async_create_group{{ *$}}
// NV-NEXT: scf.yield %[[EMPTY]]
// NV-NOT: gpu.barrier
// NV-NOT: memref.store
// NV-COUNT-2: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = false} : memref<64x32xf16, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// NV-COUNT-2: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = true} : memref<32x72xf16, strided<[72, 1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// NV-NOT: memref.load
// NV-COUNT-8: nvgpu.mma.sync
// NV-NOT: gpu.barrier
// NV-COUNT-8: nvgpu.mma.sync
// NV-NOT: memref.store
// NV: scf.yield {{.*}}, %[[NEXT]] :
// NV: nvgpu.device_async_wait %{{.+}}#8 {numGroups = 0 : i32}
// NV-NOT: linalg.
// NV-COUNT-32: memref.store %{{.+}}, %{{.+}} : memref<64x64xf32, strided<[256, 1], offset: ?>>
// NV-NOT: memref.store
// AMD-LABEL: func.func @matmul_f16_staged
// AMD-SAME: kiln.cooperative
// AMD-SAME: kiln.lanes = 256 : i64
// AMD: gpu.barrier
// AMD: scf.for {{.*}} step %c1{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<8xf16>, vector<8xf16>)
// AMD: vector.load {{.*}} : memref<64x256xf16, strided<[256, 1], offset: ?>>, vector<8xf16>
// AMD-NOT: gpu.barrier
// AMD-COUNT-8: amdgpu.mfma
// AMD: memref.subview
// AMD: vector.store
// AMD: memref.subview
// AMD-COUNT-8: memref.store
// AMD-NEXT: gpu.barrier
// AMD-NEXT: scf.yield
// AMD-COUNT-16: memref.store %{{.+}}, %{{.+}} : memref<64x64xf32, strided<[256, 1], offset: ?>>
// AMD-NOT: memref.store
// TF32-LABEL: func.func @matmul_f16_staged
// TF32-SAME: kiln.lanes = 128 : i64
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_f16_staged(%x: memref<128x256xf16>, %w: memref<256x256xf16>, %b: memref<256xf32>, %y: memref<128x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 256) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 256] [1, 1] : memref<128x256xf16> to memref<64x256xf16, strided<[256, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [256, 64] [1, 1] : memref<256x256xf16> to memref<256x64xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x256xf16, strided<[256, 1], offset: ?>>, memref<256x64xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
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

// The same block over K = 64: two stages of 32, one buffer each (a third
// buffer, as the pipeline kept before, would never be written). Both
// stages are copied before the loop; nothing is refilled, so the
// iterations commit empty groups (the wait counts stay) and compute from
// the buffer of their stage.
// NV-LABEL: func.func @matmul_f16_short_k
// NV-DAG: %[[A:.+]] = memref.alloc() {alignment = 16 : i64} : memref<2x64x32xf16, #gpu.address_space<workgroup>>
// NV-DAG: %[[B:.+]] = memref.alloc() {alignment = 16 : i64} : memref<2x32x72xf16, #gpu.address_space<workgroup>>
// NV: memref.subview %[[A]][%c0
// NV: nvgpu.device_async_create_group %{{.+}}
// NV: memref.subview %[[A]][%c1
// NV: %[[SECOND:.+]] = nvgpu.device_async_create_group %{{.+}}
// NV-NOT: nvgpu.device_async_copy
// NV: scf.for %[[STAGE:.+]] = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args({{.*}}, %[[GROUP:.+]] = %[[SECOND]])
// NV-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 1 : i32}
// NV-NEXT: gpu.barrier
// NV-NEXT: %[[EMPTY:.+]] = nvgpu.device_async_create_group{{ *$}}
// NV-NEXT: memref.subview %[[A]][%[[STAGE]], 0, 0]
// NV-NEXT: memref.subview %[[B]][%[[STAGE]], 0, 0]
// NV-NOT: scf.if
// NV-NOT: nvgpu.device_async_copy
// NV-COUNT-16: nvgpu.mma.sync
// NV: scf.yield {{.*}}, %[[EMPTY]] :
// NV: nvgpu.device_async_wait %{{.+}}#8 {numGroups = 0 : i32}
// AMD-LABEL: func.func @matmul_f16_short_k
// AMD: amdgpu.mfma
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f16_short_k(%x: memref<128x64xf16>, %w: memref<64x256xf16>, %y: memref<128x256xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 256) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 64] [1, 1] : memref<128x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 64] [1, 1] : memref<64x256xf16> to memref<64x64xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x64xf16, strided<[64, 1], offset: ?>>, memref<64x64xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
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

// -----

// A block of 14 rows (a 14-pixel output row, a matmul of 28 rows in two
// blocks) is computed as one 16-row matrix tile (paddedMatrixRows): rows
// 14 and 15 load operands at row 13 (in bounds) and store nothing; each
// lane's stores are guarded by its row being under 14.
// NV-LABEL: func.func @padded_rows
// NV-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [16, 16, 32]
// NV-SAME: kiln.lanes = 32
// NV: %[[ROW:.+]] = arith.divui %{{.+}}, %c4
// NV: arith.cmpi ult, %{{.+}}, %c14
// NV-NOT: scf.if
// NV: scf.for
// NV: arith.minui %{{.+}}, %c13
// NV: nvgpu.mma.sync
// NV: scf.yield
// NV-COUNT-8: scf.if
// NV-NOT: scf.if
// NV-NOT: linalg.
// AMD-LABEL: func.func @padded_rows
// AMD-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16"
// AMD: arith.minui %{{.+}}, %c13
// AMD: amdgpu.mfma
// AMD-COUNT-4: scf.if
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @padded_rows(%x: memref<28x32xf16>, %w: memref<32x16xf16>, %y: memref<28x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) = (0) to (28) step (14) {
    %xs = memref.subview %x[%i, 0] [14, 32] [1, 1] : memref<28x32xf16> to memref<14x32xf16, strided<[32, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [14, 16] [1, 1] : memref<28x16xf32> to memref<14x16xf32, strided<[16, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<14x16xf32, strided<[16, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %w : memref<14x32xf16, strided<[32, 1], offset: ?>>, memref<32x16xf16>) outs(%ys : memref<14x16xf32, strided<[16, 1], offset: ?>>) {
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

// -----

// A 3x3 convolution over NCHW float16, two output rows of 24 per block:
// 48 rows that 32 does not divide, so three warps of 16x32. K (32
// channels) goes in one stage of 32 per window position (9 stages, 8
// mma.sync per warp and stage), the stage buffers [k][rows] (A) and
// [columns][k] (B), padded by 8, both gathered element by element (A's
// runs start at odd columns, B's channels are 9 apart). Each stage's loads index views at the stage's origin
// (its channels' first, its window position).
// NV-LABEL: func.func @conv3x3_rows48
// NV-SAME: kiln.lanes = 96 : i64
// NV: memref.alloc() {alignment = 16 : i64} : memref<2x32x56xf16, #gpu.address_space<workgroup>>
// NV: memref.alloc() {alignment = 16 : i64} : memref<2x32x40xf16, #gpu.address_space<workgroup>>
// NV: %[[XO:.+]] = memref.subview %{{.+}}[0, %{{.+}}, %{{.+}}, %{{.+}}] [1, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : memref<1x32x4x26xf16, {{.+}}> to memref<1x?x?x?xf16
// NV: memref.load %[[XO]]
// NV: %[[WO:.+]] = memref.subview %{{.+}}[0, %{{.+}}, %{{.+}}, %{{.+}}] [32, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : memref<32x32x3x3xf16> to memref<32x?x?x?xf16
// NV: memref.load %[[WO]]
// The loop carries the position of the stage it loads next (its channel
// offset and window column and row, the last three iter_args) and moves
// it by selects instead of dividing the stage's number by the window's 3
// (OutputBlock::carriesStagePosition: a loop ptxas unrolls whole).
// NV: scf.for %{{.+}} = %{{.+}} to %c9{{.*}} step %c1{{.*}} iter_args({{.*}}) -> ({{.*}}, f16, index, index, index) {
// NV-NOT: arith.divui %{{[^,]+}}, %c3{{(_[0-9]+)? }}
// NV-COUNT-8: nvgpu.mma.sync
// NV-NOT: nvgpu.mma.sync
// NV: arith.select
// NV: scf.yield
#cx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#cw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#co = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv3x3_rows48(%x: memref<1x32x6x26xf16>, %w: memref<32x32x3x3xf16>, %y: memref<1x32x4x24xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) = (0) to (4) step (2) {
    %xs = memref.subview %x[0, 0, %i, 0] [1, 32, 4, 26] [1, 1, 1, 1] : memref<1x32x6x26xf16> to memref<1x32x4x26xf16, strided<[4992, 156, 26, 1], offset: ?>>
    %ys = memref.subview %y[0, 0, %i, 0] [1, 32, 2, 24] [1, 1, 1, 1] : memref<1x32x4x24xf32> to memref<1x32x2x24xf32, strided<[3072, 96, 24, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<1x32x2x24xf32, strided<[3072, 96, 24, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xs, %w : memref<1x32x4x26xf16, strided<[4992, 156, 26, 1], offset: ?>>, memref<32x32x3x3xf16>) outs(%ys : memref<1x32x2x24xf32, strided<[3072, 96, 24, 1], offset: ?>>) {
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
