//===- ContractWithThreadTiles.cpp - output blocks on a block of threads ===//
//
// The SIMT sibling of kiln-contract-with-matrix-cores, for the contractions
// matrix instructions do not take: float32 ones (the default precision,
// without --allow-tf32; all of them on AMD) and 16-bit ones whose block is
// not made of 16x16 tiles. kiln-tile-and-distribute{thread-blocks} gives
// such a contraction one output block (rows x columns, up to 128 x 128) per
// forall iteration; this pass makes the block the work of one GPU block of
// threads, each computing a register tile of up to 8 x 8 outputs with FMAs
// (8 along a block side of 96 or more: two runs of 4, half the side apart,
// so that the threads of a warp read neighbouring 16-byte vectors of a
// stage row, as CUTLASS's SIMT kernels do; 8 contiguous would leave every
// other bank idle).
//
// Per stage of up to 16 along K, all threads copy the block's slices of
// both operands into workgroup memory (coalesced global loads), meet at a
// barrier, and each thread runs the stage's outer products from there:
// every operand element is read from global memory once per block instead
// of once per thread that uses it. The stages are k-major ([k][row],
// [k][column]): each run of a thread's rows (or columns) at one k is
// contiguous, one vector load, and threads next to each other read
// neighbouring vectors or the same one (no bank conflicts).
//
// Threads are numbered along whichever of M and N the output is
// contiguous in, so that neighbouring threads store neighbouring outputs.
//
// A block whose rows 4 does not divide (whole 7x7 images: 49) computes
// more (threadTileRows: 64, as matrix tiles pad, else the next multiple of
// 4; OutputBlock::padRows): the padded rows read the last valid row's
// operands and store nothing.
//
//===----------------------------------------------------------------------===//
#include "OutputBlock.h"

namespace kiln {
#define GEN_PASS_DEF_CONTRACTWITHTHREADTILES
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

int64_t kiln::threadTileExtent(int64_t blockExtent) {
  if (blockExtent >= 96 && blockExtent % 8 == 0)
    return 8;
  for (int64_t size : {4, 2})
    if (blockExtent % size == 0)
      return size;
  return 1;
}

int64_t kiln::threadTileRows(int64_t rows) {
  if (rows <= 4 || rows % 4 == 0)
    return rows;
  // As matrix tiles pad (49 as 64) where that wastes at most a quarter:
  // threads then divide the stage slices (52 rows gave blocks of 208
  // threads whose uneven, guarded stage shares spilled in ptxas).
  if (int64_t padded = paddedMatrixRows(rows))
    return padded;
  return llvm::alignTo(rows, 4);
}

/// Threads of a block computing `rows` x `cols` outputs, threadTileExtent
/// per thread along each side.
static int64_t threadsFor(int64_t rows, int64_t cols) {
  return rows / threadTileExtent(rows) * (cols / threadTileExtent(cols));
}

int64_t kiln::threadBlockRows(int64_t rows, int64_t cols) {
  // Fewer threads than a warp would leave lanes idle in every warp.
  constexpr int64_t kWarp = 32;
  int64_t padded = threadTileRows(rows);
  return threadsFor(padded, cols) >= kWarp ? padded : rows;
}

int64_t kiln::threadBlockThreads(int64_t rows, int64_t cols) {
  return threadsFor(threadBlockRows(rows, cols), cols);
}

int64_t kiln::threadTileRun(int64_t blockExtent) {
  return std::min<int64_t>(4, threadTileExtent(blockExtent));
}

int64_t kiln::stageDepth(int64_t k) {
  for (int64_t size : {16, 8, 4})
    if (k % size == 0)
      return size;
  // A K that 4 does not divide (an image's 3 channels, 6, 10, 18): its
  // largest divisor up to 16, rather than stages of 1 or 2 whose barrier
  // and loop overhead would outweigh their few FMAs (ResNet's 7x7 stem over
  // 3 channels at float32: 147 stages of 33 FFMA in 112 instructions).
  for (int64_t size = 16; size > 1; --size)
    if (k % size == 0)
      return size;
  return 1;
}

namespace {

struct ContractWithThreadTilesPass
    : public kiln::impl::ContractWithThreadTilesBase<
          ContractWithThreadTilesPass> {
  using Base::Base;

  /// The block's rows and columns per thread, each side's runs of
  /// consecutive ones (rowRun, colRun: one vector load each), threads
  /// along M and N, and the K of one stage.
  int64_t rowsPerThread = 0, colsPerThread = 0, rowRun = 0, colRun = 0,
          threadsM = 0, threadsN = 0, stageK = 0;
  /// Distance between a thread's runs along M and along N: the block's
  /// side divided by the runs, so that the threads' first runs tile the
  /// first part of the side, their second runs the next, ...
  int64_t rowRunStride = 0, colRunStride = 0;
  int64_t threads() const { return threadsM * threadsN; }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto config =
        func->getAttrOfType<ContractionConfigAttr>(kiln::attrs::kContraction);
    if (!func->hasAttr(kiln::attrs::kKernel) || !config ||
        config.getUnit() != ContractionUnit::Threads)
      return;
    std::optional<OutputBlock> block =
        OutputBlock::match(func, /*allowFloat32=*/true);
    if (!block || failed(applyConfig(func, config, *block)))
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    Location loc = block->forall.getLoc();
    rewriter.setInsertionPointToStart(block->forall.getBody());
    Value thread = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    auto [threadRow, threadCol] =
        threadPlace(rewriter, loc, thread, block->outputContiguousAlongM());
    SmallVector<OutputBlock::Position> positions;
    for (int64_t i = 0; i < rowsPerThread; ++i)
      for (int64_t j = 0; j < colsPerThread; ++j)
        positions.push_back({offset(rewriter, loc, threadRow,
                                    tileOffset(i, rowRun, rowRunStride)),
                             offset(rewriter, loc, threadCol,
                                    tileOffset(j, colRun, colRunStride))});
    block->rewrite(rewriter, positions, [&](OpBuilder &b) {
      emitContraction(b, *block, thread, threadRow, threadCol, positions);
    });
    func->setAttr(kiln::attrs::kLanes, rewriter.getI64IntegerAttr(threads()));
    func->setAttr(kiln::attrs::kCooperative, rewriter.getUnitAttr());
  }

  /// A thread's outputs along a side: 1, 2, 4, or 8 as two runs of 4.
  static bool validThreadTile(int64_t extent) {
    return extent > 0 && extent <= 8 && llvm::isPowerOf2_64(extent);
  }

  /// Takes the threads' tiles and the stage depth from `config`
  /// (kiln-configure-gpu-contractions), padding the block's rows to its
  /// extent; fails, naming the kernel, where the config does not fit the
  /// block.
  LogicalResult applyConfig(func::FuncOp func, ContractionConfigAttr config,
                            OutputBlock &block) {
    ArrayRef<int64_t> extents = config.getBlock();
    ArrayRef<int64_t> tile = config.getTile();
    if (extents.size() != 3 || tile.size() != 2 || extents[0] < block.validM ||
        extents[1] != block.tileN || extents[2] != block.tileK ||
        !validThreadTile(tile[0]) || !validThreadTile(tile[1]) ||
        extents[0] % tile[0] != 0 || extents[1] % tile[1] != 0 ||
        config.getStageK() <= 0 ||
        block.loops.ranges[block.loops.k] % config.getStageK() != 0)
      return func.emitError()
             << "kiln.contraction " << config << " does not fit the kernel's "
             << block.validM << "x" << block.validN << "x" << block.validK
             << " output block";
    block.padRows(extents[0]);
    rowsPerThread = tile[0];
    colsPerThread = tile[1];
    rowRun = threadTileRun(rowsPerThread);
    colRun = threadTileRun(colsPerThread);
    rowRunStride = block.tileM / (rowsPerThread / rowRun);
    colRunStride = block.tileN / (colsPerThread / colRun);
    threadsM = block.tileM / rowsPerThread;
    threadsN = block.tileN / colsPerThread;
    stageK = config.getStageK();
    return success();
  }

  /// Where a thread's `i`th output along a side lies from its first: runs
  /// of `run`, `stride` apart.
  static int64_t tileOffset(int64_t i, int64_t run, int64_t stride) {
    return i / run * stride + i % run;
  }

  static Value offset(OpBuilder &b, Location loc, Value base, int64_t by) {
    if (by == 0)
      return base;
    return arith::AddIOp::create(b, loc, base,
                                 arith::ConstantIndexOp::create(b, loc, by));
  }

  /// The first row and column of this thread's register tile (of its
  /// first runs): threads numbered along M first when `alongM`, else
  /// along N.
  std::pair<Value, Value> threadPlace(OpBuilder &b, Location loc, Value thread,
                                      bool alongM) const {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t fastest = alongM ? threadsM : threadsN;
    Value inner = arith::RemUIOp::create(b, loc, thread, c(fastest));
    Value outer = arith::DivUIOp::create(b, loc, thread, c(fastest));
    Value m = alongM ? inner : outer, n = alongM ? outer : inner;
    return {arith::MulIOp::create(b, loc, m, c(rowRun)),
            arith::MulIOp::create(b, loc, n, c(colRun))};
  }

  /// `count` consecutive elements of stage `shared` at [k][first...], as
  /// float32 values: one aligned vector load (the stage's rows and `first`
  /// are multiples of `count` elements).
  static SmallVector<Value> loadRun(OpBuilder &b, Location loc, Value shared,
                                    Value k, Value first, int64_t count) {
    auto type = cast<MemRefType>(shared.getType());
    Type element = type.getElementType();
    auto vectorType = VectorType::get({count}, element);
    Value run = vector::LoadOp::create(
        b, loc, vectorType, shared, ValueRange{k, first},
        /*nontemporal=*/false,
        llvm::MaybeAlign(count * element.getIntOrFloatBitWidth() / 8));
    SmallVector<Value> values;
    for (int64_t i = 0; i < count; ++i) {
      Value value =
          vector::ExtractOp::create(b, loc, run, ArrayRef<int64_t>{i});
      if (!element.isF32())
        value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      values.push_back(value);
    }
    return values;
  }

  /// A thread's `count` elements of stage `shared` at [k][...]: runs of
  /// `run` from `first`, `stride` apart, one vector load each.
  static SmallVector<Value> loadRuns(OpBuilder &b, Location loc, Value shared,
                                     Value k, Value first, int64_t count,
                                     int64_t run, int64_t stride) {
    SmallVector<Value> values;
    for (int64_t i = 0; i < count; i += run)
      llvm::append_range(
          values,
          loadRun(b, loc, shared, k,
                  offset(b, loc, first, tileOffset(i, run, stride)), run));
    return values;
  }

  void emitContraction(OpBuilder &b, OutputBlock &block, Value thread,
                       Value threadRow, Value threadCol,
                       ArrayRef<OutputBlock::Position> positions) {
    Location loc = block.contraction.getLoc();
    SmallVector<Value> initial = block.initialAccumulators(b, loc, positions);
    auto contract = arith::FastMathFlagsAttr::get(
        b.getContext(), arith::FastMathFlags::contract);
    ValueRange sums = block.emitStagedReductionLoop(
        b, loc, stageK, initial, thread, threads(), /*kMajor=*/{true, true},
        [&](OpBuilder &b, Value sharedA, Value sharedB, ValueRange accs) {
          SmallVector<Value> next(accs);
          for (int64_t kk = 0; kk < stageK; ++kk) {
            Value k = arith::ConstantIndexOp::create(b, loc, kk);
            SmallVector<Value> a =
                loadRuns(b, loc, sharedA, k, threadRow, rowsPerThread, rowRun,
                         rowRunStride);
            SmallVector<Value> bs =
                loadRuns(b, loc, sharedB, k, threadCol, colsPerThread, colRun,
                         colRunStride);
            for (int64_t i = 0; i < rowsPerThread; ++i)
              for (int64_t j = 0; j < colsPerThread; ++j) {
                Value &acc = next[i * colsPerThread + j];
                acc = arith::AddFOp::create(
                    b, loc, acc,
                    arith::MulFOp::create(b, loc, a[i], bs[j], contract),
                    contract);
              }
          }
          return next;
        });
    block.storeResults(b, loc, positions, sums);
  }
};

} // namespace
