//===- Int8QuadBody.h - contractions of uint8 by int8 values ----*- C++ -*-===//
//
// What kiln-contract-int8-quads and kiln-contract-int8-conv-quads both
// recognize in a bufferized kernel before they compute it with vpdpbusd,
// and how both walk it in tiles.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CODEGEN_CPU_INT8QUADBODY_H
#define KILN_PASSES_CODEGEN_CPU_INT8QUADBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln {

/// Whether the body is `out + uitofp(a) * sitofp(b)` of its first input
/// (uint8) and its second (int8), into float32 (or float64).
bool isUint8ByInt8Body(mlir::linalg::GenericOp op);

/// Whether the innermost `count` dims of `memref` are contiguous.
bool hasContiguousInnerDims(mlir::Value memref, int64_t count);

/// Calls `body` for tiles of `size` over [0, extent): at each multiple of
/// `size` below the last one, then at each index of the rest with size 1
/// (loops, as the extent may be known only at run time).
void forEachTile(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value extent, int64_t size,
    llvm::function_ref<void(mlir::OpBuilder &, mlir::Value, int64_t)> body);

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_CPU_INT8QUADBODY_H
