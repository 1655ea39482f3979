//===- MatrixInstructions.h - a warp's matrix instructions -----*- C++ -*-===//
//
// Private to passes/Codegen: the matrix instructions one warp (NVIDIA, 32
// lanes) or wavefront (AMD, 64 lanes) runs on a 16x16 output subtile, as
// kiln-contract-with-matrix-cores uses them: which output elements a lane's
// accumulators hold, how they are packed, and one step along K over a
// warp's subtiles. mma.sync (NVVM/MmaSyncInstructions.cpp) and MFMA
// (ROCDL/MfmaInstructions.cpp) implement it; wgmma, a warpgroup's
// instruction reading its operands from workgroup memory, keeps mma.sync's
// accumulator layout and is the pass's own path.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CODEGEN_GPU_MATRIXINSTRUCTIONS_H
#define KILN_PASSES_CODEGEN_GPU_MATRIXINSTRUCTIONS_H

#include "OutputBlock.h"

#include <array>
#include <functional>
#include <memory>

namespace kiln {

/// Rows, columns and K (16-bit operands) of the subtile one warp's matrix
/// instructions compute.
constexpr int64_t kSubtile = 16;

/// Loads an operand element by its place in the block's tile: input 0 (A)
/// at (row, k), input 1 (B) at (column, k).
using ElementLoader = llvm::function_ref<mlir::Value(
    unsigned input, mlir::Value tileIndex, mlir::Value k)>;

/// Loads the fragments of a 16x16 piece of operand `input` whose rows (A)
/// or columns (B) start at `base`, at `k0`..+15 along K, in the order the
/// instructions take them. Empty where fragments are loaded element by
/// element (ElementLoader).
using FragmentLoader = std::function<llvm::SmallVector<mlir::Value>(
    unsigned input, mlir::Value base, mlir::Value k0)>;

/// The matrix instructions of one warp on 16x16 output subtiles.
class WarpMatrixInstructions {
public:
  virtual ~WarpMatrixInstructions() = default;

  /// Lanes of the warp (or wavefront).
  virtual int64_t lanes() const = 0;
  /// Whether float32 operands can run as TF32 (--allow-tf32).
  virtual bool takesTf32() const = 0;
  /// Whether warpgroup instructions (wgmma) may replace these: their
  /// accumulators are these instructions' per 8 columns.
  virtual bool sharesWarpgroupLayout() const = 0;
  /// K of one instruction on operands of `operandType`.
  virtual int64_t stepK(mlir::Type operandType) const = 0;
  /// The instruction, as kiln.contraction names it.
  virtual std::string name(mlir::Type operandType) const = 0;

  /// The output element of a subtile that a lane's first accumulator
  /// element holds, (row, column) from the subtile's corner; and every
  /// element's offset from it, in accumulator order.
  virtual std::pair<mlir::Value, mlir::Value>
  laneOrigin(mlir::OpBuilder &b, mlir::Location loc,
             mlir::Value lane) const = 0;
  virtual llvm::SmallVector<std::pair<int64_t, int64_t>>
  elementOffsets() const = 0;
  /// One accumulator from 4 consecutive elements' initial values (float32),
  /// and its element `i` (< 4) back.
  virtual mlir::Value
  packAccumulator(mlir::OpBuilder &b, mlir::Location loc,
                  llvm::ArrayRef<mlir::Value> four) const = 0;
  virtual mlir::Value accumulatorElement(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::Value acc, int64_t i) const = 0;

  /// The instructions of one step along K (stepK) at `k0` for every
  /// subtile of the warp, whose rows start at `rowBases` and columns at
  /// `colBases` (subtiles row-major); `accs` as packAccumulator makes them,
  /// subtile by subtile. Each subtile row's A fragment and each subtile
  /// column's B fragments are loaded once and serve every instruction that
  /// needs them, through `fragments` where given, else `load`.
  virtual llvm::SmallVector<mlir::Value>
  emitStep(mlir::OpBuilder &b, mlir::Location loc, ElementLoader load,
           mlir::Type operandType, mlir::Value lane,
           llvm::ArrayRef<mlir::Value> rowBases,
           llvm::ArrayRef<mlir::Value> colBases, mlir::Value k0,
           mlir::ValueRange accs, const FragmentLoader &fragments) const = 0;

  /// Whether fragments of `operandType` load from stage buffers in either
  /// order ([k][tile] or [tile][k]) with one warp-wide instruction
  /// (stageFragmentLoader); otherwise element by element from [tile][k].
  virtual bool loadsStageFragments(mlir::Type operandType) const {
    return false;
  }
  /// A FragmentLoader over the stage buffers `sharedA`, `sharedB`
  /// ([k][tile] where `kMajor`, else [tile][k]; `swizzled` as
  /// OutputBlock::stageSwizzles says).
  virtual FragmentLoader
  stageFragmentLoader(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value sharedA, mlir::Value sharedB,
                      std::array<bool, 2> kMajor, std::array<bool, 2> swizzled,
                      mlir::Value lane, mlir::Type operandType) const {
    return {};
  }

  /// Whether lanes can trade accumulator elements after the reduction so
  /// that each stores a longer run (exchangedPositions,
  /// exchangeAccumulators).
  virtual bool exchangesLanePairs() const { return false; }
  /// Where a lane's elements are after exchangeAccumulators, for a warp
  /// of `subtileRows` x `subtileCols` subtiles from (warpRow, warpCol).
  virtual llvm::SmallVector<OutputBlock::Position>
  exchangedPositions(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lane,
                     mlir::Value warpRow, mlir::Value warpCol,
                     int64_t subtileRows, int64_t subtileCols) const {
    return {};
  }
  /// The accumulator elements (elementOffsets' order, subtile by subtile)
  /// rearranged into exchangedPositions' order.
  virtual llvm::SmallVector<mlir::Value>
  exchangeAccumulators(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lane,
                       llvm::ArrayRef<mlir::Value> elements) const {
    return {};
  }
};

/// The instructions of kiln-contract-with-matrix-cores' `arch`: "nvidia"
/// (mma.sync), "amd" (MFMA); null for any other.
std::unique_ptr<WarpMatrixInstructions>
warpMatrixInstructions(llvm::StringRef arch);
std::unique_ptr<WarpMatrixInstructions> createMmaSyncInstructions();
std::unique_ptr<WarpMatrixInstructions> createMfmaInstructions();

/// Whether each operand's stage buffer is [k][tile index] (else
/// [tile index][k]): the operand's global order, so that stage copies
/// store whole runs, where fragments are loaded from it either way round
/// by `instructions` (ldmatrix) or by wgmma's descriptors (`warpgroups`).
std::array<bool, 2> stageKMajor(const WarpMatrixInstructions &instructions,
                                OutputBlock &block, bool warpgroups);

/// One stage of warpgroup matrix instructions (sm_90a,
/// NVVM/WarpgroupInstructions.cpp) over the stage buffers `sharedA` and
/// `sharedB` of `stageK` along K: the accumulators (two
/// vector<2x2xf32> per 16 columns, ownedPositions' order, which is
/// wgmma's register order d[4 (column / 8) + 2 i + j]) go into one
/// m64nNk16 (N = `tileN`) per 16 along K of the stage, issued as one group
/// after a wgmma.fence; the stage ends when all but the newest `inFlight`
/// groups are done (its own, or the previous stage's: the pipeline refills a
/// buffer only after a barrier that follows the wait for its group).
llvm::SmallVector<mlir::Value>
emitWarpgroupStage(mlir::OpBuilder &b, mlir::Location loc, OutputBlock &block,
                   int64_t stageK, int64_t tileN, std::array<bool, 2> kMajor,
                   mlir::Value sharedA, mlir::Value sharedB,
                   mlir::Value warpgroupRow, mlir::ValueRange accs,
                   int64_t inFlight);

/// The elements of operand `input` at `elements` (tile index, k) as a
/// vector of `shape` (row-major): a fragment loaded element by element.
mlir::Value
loadFragment(mlir::OpBuilder &b, mlir::Location loc, ElementLoader load,
             unsigned input, mlir::Type operandType,
             llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> elements,
             llvm::ArrayRef<int64_t> shape);

/// `x + v` as an index (x itself for 0).
mlir::Value addIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     int64_t v);

} // namespace kiln

#endif
