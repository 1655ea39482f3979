// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-quads{instructions=avx2 rows=1 panels=1},kiln-contract-int8-conv-quads{instructions=avx2 rows=1 panels=1}),canonicalize,cse)' | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-quads{instructions=avx-vnni rows=1 panels=1},kiln-contract-int8-conv-quads{instructions=avx-vnni rows=1 panels=1}),canonicalize,cse)' | FileCheck %s --check-prefix=VNNI
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-quads{instructions=sse}))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The dot products of kiln-contract-int8-quads by ISA, on one row by one
// panel of 16 outputs.
//
// With AVX2, A's quad is widened to 16 bits and broadcast as one i64, each 64
// bytes of B widened to 16 bits; four vpmaddwd of 16 lanes each add pairs
// of products into four accumulators of 8 int32 (lane 2o + i: pair i of
// output o); after the loop, the pairs are added (even + odd lanes).
// AVX2-LABEL: func.func @einsum
// AVX2: scf.for {{.*}} -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// AVX2: %[[W:.+]] = arith.extsi {{.*}} : vector<64xi8> to vector<64xi16>
// AVX2: %[[Q:.+]] = arith.extui {{.*}} : vector<4xi8> to vector<4xi16>
// AVX2: vector.bitcast %[[Q]] : vector<4xi16> to vector<1xi64>
// AVX2: vector.broadcast {{.*}} : i64 to vector<16xi64>
// AVX2: %[[ROW:.+]] = vector.bitcast {{.*}} : vector<16xi64> to vector<64xi16>
// AVX2: vector.extract_strided_slice %[[ROW]] {offsets = [0], sizes = [16], strides = [1]}
// AVX2: vector.extract_strided_slice %[[W]] {offsets = [0], sizes = [16], strides = [1]}
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"({{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// AVX2: arith.addi
// AVX2-COUNT-3: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// AVX2: scf.yield
// AVX2: %[[ALL:.+]] = vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// AVX2: %[[EVEN:.+]] = vector.shuffle %[[ALL]], %[[ALL]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// AVX2: %[[ODD:.+]] = vector.shuffle %[[ALL]], %[[ALL]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// AVX2: arith.addi %[[EVEN]], %[[ODD]] : vector<16xi32>
// AVX2-NOT: vpdpbusd
//
// With AVX-VNNI, two 256-bit vpdpbusd on the halves, two accumulators joined
// after the loop.
// VNNI-LABEL: func.func @einsum
// VNNI: scf.for {{.*}} -> (vector<8xi32>, vector<8xi32>)
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"({{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// VNNI: scf.yield
// VNNI: vector.shuffle {{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// VNNI-NOT: vpdpbusd.512
// UNKNOWN: error: kiln-contract-int8-quads: unknown instructions 'sse'
func.func @einsum(%a: memref<1x2x4xui8>, %b: memref<1x2x16x4xi8>, %out: memref<1x1x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [affine_map<(m, p, w, q, t) -> (m, q, t)>, affine_map<(m, p, w, q, t) -> (p, q, w, t)>, affine_map<(m, p, w, q, t) -> (m, p, w)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : memref<1x2x4xui8>, memref<1x2x16x4xi8>) outs(%out : memref<1x1x16xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A convolution's row of 7 outputs, less than a panel: with AVX2 or
// AVX-VNNI, the pass loads its 28 bytes of X as 7 masked int32 lanes through the memref's
// address (a masked load of bytes would be a scalar loop without
// AVX-512); X's bytes are the unsigned operand, W's broadcast quad the
// signed one.
// AVX2-LABEL: func.func @short_row
// AVX2: %[[LANES:.+]] = vector.constant_mask [7] : vector<16xi1>
// AVX2: memref.extract_aligned_pointer_as_index
// AVX2: llvm.inttoptr
// AVX2: %[[WORDS:.+]] = llvm.intr.masked.load %{{.+}}, %[[LANES]], %{{.+}} {alignment = 1 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xi32>) -> vector<16xi32>
// AVX2: %[[BYTES:.+]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<64xi8>
// AVX2: arith.extui %[[BYTES]] : vector<64xi8> to vector<64xi16>
// AVX2: arith.extsi {{.*}} : vector<4xi8> to vector<4xi16>
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// AVX2: vector.maskedstore %arg2{{.*}}, %[[LANES]]
// VNNI-LABEL: func.func @short_row
// VNNI: llvm.intr.masked.load {{.*}} -> vector<16xi32>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
func.func @short_row(%x: memref<1x1x1x28xui8>, %w: memref<2x1x1x4xi8>, %out: memref<1x2x1x7xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x1x1x28xui8>, memref<2x1x1x4xi8>) outs(%out : memref<1x2x1x7xf32>) {
  ^bb0(%a: ui8, %b: i8, %acc: f32):
    %wf = arith.sitofp %b : i8 to f32
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
