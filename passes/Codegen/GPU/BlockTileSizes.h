//===- BlockTileSizes.h - a GPU contraction's output blocks -----*- C++ -*-===//
//
// Private to passes/Codegen/GPU: the output block of one GPU block of a
// contraction kernel (kiln-configure-gpu-kernels' blocks config), for
// matrix instructions (kiln-contract-with-matrix-cores) or thread tiles
// (kiln-contract-with-thread-tiles).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CODEGEN_GPU_BLOCKTILESIZES_H
#define KILN_PASSES_CODEGEN_GPU_BLOCKTILESIZES_H

#include "mlir/Interfaces/TilingInterface.h"

#include <optional>

namespace kiln {

/// What the block choice depends on: the options of
/// kiln-configure-gpu-kernels of the same names (Passes.td).
struct BlockTileOptions {
  int64_t matrixTile = 0;
  int64_t matrixBlockRows = 0, matrixBlockCols = 0;
  bool threadBlocks = false;
  int64_t minBlockThreads = 32;
  bool matrixFloat32 = false;
  int64_t workgroupMemoryBytes = 0;
  bool wideMatrixBlocks = false;
};

/// Tile sizes of the root's `numLoops` loops when the kernel is a
/// contraction that output blocks take (see BlockTileSizes.cpp); none
/// otherwise.
std::optional<llvm::SmallVector<int64_t>>
blockTileSizes(mlir::TilingInterface root, size_t numLoops,
               const BlockTileOptions &options);

} // namespace kiln

#endif
