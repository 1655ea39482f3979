//===- TileAndDistribute.cpp - tile a kernel as its config says -----------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_TILEANDDISTRIBUTE
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Gives each use inside the kernel's forall of a tensor.empty made
/// outside it an empty tensor of its own, made at the use, when every use
/// is the output of a linalg op inside the loop whose result nothing reads:
/// a ScatterND whose splat updates folded into its body keeps their [4, 4]
/// only as such a dead output (the one operand that spans its update
/// loops). Made before the loop it would bufferize to one allocation
/// shared by every iteration, and a kernel with work before its loop runs
/// as one GPU thread; inside, it is scratch of each iteration. Only small
/// ones (up to kMaxPerIterationEmptyBytes: registers or a little stack): a
/// thread's larger temporary is a device malloc per thread, worse than the
/// serial kernel. Other uses are left alone: a row kernel's statistics
/// (kiln-distribute-rows-to-lanes) are one buffer on purpose.
constexpr int64_t kMaxPerIterationEmptyBytes = 1024;

bool isDeadOutputInLoop(OpOperand &use) {
  auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!op || !op->getParentOfType<scf::ForallOp>() || !op.isDpsInit(&use))
    return false;
  return op.getTiedOpResult(&use).use_empty() &&
         !op.payloadUsesValueFromOperand(&use);
}

void makeEmptyTensorsPerIteration(func::FuncOp func) {
  SmallVector<tensor::EmptyOp> empties;
  for (Operation &op : func.getBody().front())
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      empties.push_back(empty);
  for (tensor::EmptyOp empty : empties) {
    RankedTensorType type = empty.getType();
    if (empty->use_empty() || !type.hasStaticShape() ||
        !type.getElementType().isIntOrFloat() ||
        type.getNumElements() *
                llvm::divideCeil(type.getElementTypeBitWidth(), 8) >
            kMaxPerIterationEmptyBytes)
      continue;
    if (!llvm::all_of(empty->getUses(), isDeadOutputInLoop))
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(empty->getUses())) {
      OpBuilder b(use.getOwner());
      use.set(b.clone(*empty)->getResult(0));
    }
    empty->erase();
  }
}

/// Arithmetic operations of the kernel: for every linalg op, its iteration
/// points times the scalar ops of its body (an estimate for reports).
int64_t kernelFlops(func::FuncOp func) {
  int64_t flops = 0;
  func.walk([&](linalg::LinalgOp op) {
    int64_t points = 1;
    for (int64_t size : op.getStaticLoopRanges())
      points *= std::max<int64_t>(size, 1);
    int64_t scalarOps = 0;
    // Not index arithmetic, comparisons, selects or float casts (a window
    // read's position checks, its choice of the padding value, a 16-bit
    // operand's widening).
    for (Operation &inner : op->getRegion(0).front().without_terminator())
      scalarOps +=
          isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) &&
          !isa<arith::ConstantOp, arith::SelectOp, arith::ExtFOp,
               arith::TruncFOp>(inner) &&
          llvm::none_of(inner.getResultTypes(),
                        [](Type t) { return t.isIndex() || t.isInteger(1); });
    flops += points * scalarOps;
  });
  return flops;
}

/// The forall over the tiled loops (tile size not 0) of a domain whose
/// every tile has its full static size: along a loop that its tile size
/// does not divide (197 rows in blocks of 32), the last tile starts at
/// `extent - size` instead of past it, overlapping the tile before it,
/// whose outputs there it computes again and writes with the same values
/// (same operands, same order of operations). A tile that ended past the
/// loop would have dynamic sizes, which output blocks cannot take. Loops
/// that the tile sizes divide are tiled as ForallOp tiling does.
FailureOr<scf::SCFTilingOptions::CustomLoopHeaderInfo>
shiftedLastTileLoop(RewriterBase &rewriter, Location loc,
                    ArrayRef<Range> loopRanges,
                    ArrayRef<OpFoldResult> tileSizes, ValueRange destinations) {
  SmallVector<OpFoldResult> lowers, uppers, steps;
  for (auto [range, size] : llvm::zip_equal(loopRanges, tileSizes)) {
    if (isZeroInteger(size))
      continue;
    if (!isZeroInteger(range.offset) || !getConstantIntValue(range.size) ||
        !getConstantIntValue(size))
      return rewriter.notifyMatchFailure(loc, "tiles of dynamic loops");
    lowers.push_back(range.offset);
    uppers.push_back(range.size);
    steps.push_back(size);
  }
  auto forall = scf::ForallOp::create(rewriter, loc, lowers, uppers, steps,
                                      destinations, std::nullopt);
  rewriter.setInsertionPoint(forall.getTerminator());
  SmallVector<OpFoldResult> offsets, sizes;
  auto inductionVar = forall.getInductionVars().begin();
  for (auto [range, size] : llvm::zip_equal(loopRanges, tileSizes)) {
    if (isZeroInteger(size)) {
      offsets.push_back(range.offset);
      sizes.push_back(range.size);
      continue;
    }
    Value offset = *inductionVar++;
    int64_t extent = *getConstantIntValue(range.size);
    int64_t tile = *getConstantIntValue(size);
    if (extent % tile != 0)
      offset = arith::MinUIOp::create(
          rewriter, loc, offset,
          arith::ConstantIndexOp::create(rewriter, loc, extent - tile));
    offsets.push_back(offset);
    sizes.push_back(size);
  }
  return scf::SCFTilingOptions::CustomLoopHeaderInfo{
      {cast<LoopLikeOpInterface>(forall.getOperation())},
      offsets,
      sizes,
      SmallVector<Value>(forall.getRegionOutArgs().begin(),
                         forall.getRegionOutArgs().end())};
}

/// Inserts each tile's results into the forall's outputs.
LogicalResult insertTilesInParallel(RewriterBase &rewriter, Location loc,
                                    ArrayRef<LoopLikeOpInterface> loops,
                                    ValueRange results,
                                    ArrayRef<SmallVector<OpFoldResult>> offsets,
                                    ArrayRef<SmallVector<OpFoldResult>> sizes,
                                    ValueRange destinations) {
  LoopLikeOpInterface loop = loops.front();
  auto forall = cast<scf::ForallOp>(loop.getOperation());
  rewriter.setInsertionPointToEnd(forall.getTerminator().getBody());
  for (auto [result, destination, offset, size] :
       llvm::zip_equal(results, destinations, offsets, sizes))
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, result, destination, offset, size,
        SmallVector<OpFoldResult>(offset.size(), rewriter.getIndexAttr(1)));
  return success();
}

/// Tiles `root` into an scf.forall with `tileSizes` (0: untiled) and fuses
/// its producers into the loop. `shiftLastTiles`: tile sizes that do not
/// divide their loops shift the last tile back (shiftedLastTileLoop)
/// instead of shrinking it. `keepPadsWhole`: zero paddings stay outside
/// the loop, whole (see readsPaddingInPlace).
LogicalResult tileAndFuse(TilingInterface root,
                          ArrayRef<OpFoldResult> tileSizes,
                          bool shiftLastTiles = false,
                          bool keepPadsWhole = false) {
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(tileSizes);
  if (shiftLastTiles)
    options.tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::CustomOp)
        .setCustomLoopGenerationFns(shiftedLastTileLoop, insertTilesInParallel);
  else
    options.tilingOptions.setLoopType(
        scf::SCFTilingOptions::LoopType::ForallOp);
  // Producers whose results are written through constant indices (a
  // reduction with keepdims) cannot be tiled; they run before the loop.
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!hasTileableResults(producer.getOwner()) ||
            (keepPadsWhole && isa<tensor::PadOp>(producer.getOwner())))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  IRRewriter rewriter(root->getContext());
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(result))
    return failure();
  for (auto [original, replacement] : result->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  return success();
}

struct TileAndDistributePass
    : public kiln::impl::TileAndDistributeBase<TileAndDistributePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    int64_t workgroups = 1;
    func->setAttr(kiln::attrs::kFlops,
                  IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                   kernelFlops(func)));
    if (TilingInterface root = findKernelRoot(func)) {
      if (auto config =
              func->getAttrOfType<KernelConfigAttr>(kiln::attrs::kConfig)) {
        FailureOr<int64_t> tiles = tile(root, config);
        if (failed(tiles))
          return signalPassFailure();
        workgroups = *tiles;
      }
      // Tiling leaves the untiled ops and unused slices behind; the greedy
      // driver with no patterns erases dead ops.
      (void)applyPatternsGreedily(func, RewritePatternSet(&getContext()));
      if (gpu)
        makeEmptyTensorsPerIteration(func);
    }
    func->setAttr(
        kiln::attrs::kWorkgroups,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), workgroups));
  }

  /// Tiles `root` as `config` says and fuses its producers; returns the
  /// number of tiles (the grid size), 1 when tiling does not apply. Fails
  /// on a config that does not fit the root.
  FailureOr<int64_t> tile(TilingInterface root, KernelConfigAttr config) {
    OpBuilder builder(root);
    SmallVector<Range> domain = root.getIterationDomain(builder);
    ArrayRef<int64_t> sizes = config.getTileSizes();
    if (sizes.size() != domain.size())
      return root->emitError()
             << "kiln.config has " << sizes.size()
             << " tile sizes for a root of " << domain.size() << " loops";
    SmallVector<OpFoldResult> tileSizes;
    int64_t tiles = 1;
    bool shifted = false;
    for (auto [size, range] : llvm::zip(sizes, domain)) {
      tileSizes.push_back(builder.getIndexAttr(size));
      if (size == 0)
        continue;
      std::optional<int64_t> extent = getConstantIntValue(range.size);
      if (!extent || size < 0)
        return root->emitError()
               << "kiln.config tiles a dynamic loop or has a negative size";
      tiles *= llvm::divideCeil(*extent, size);
      shifted |= *extent % size != 0;
    }
    auto func = root->getParentOfType<func::FuncOp>();
    switch (config.getTiling()) {
    case Tiling::Workgroups:
      if (failed(tileAndFuse(root, tileSizes)))
        return 1;
      // For reports: which loop of the root was split, and by how much.
      for (auto [dim, size] : llvm::enumerate(sizes))
        if (size > 0) {
          func->setAttr(kiln::attrs::kTile,
                        builder.getDenseI64ArrayAttr({int64_t(dim), size}));
          break;
        }
      return tiles;
    case Tiling::Threads:
      if (failed(tileAndFuse(root, tileSizes)))
        return 1;
      if (llvm::any_of(sizes, [](int64_t size) { return size > 1; }))
        reductionLoopsFirst(func);
      return tiles;
    case Tiling::Blocks:
      if (failed(tileAndFuse(root, tileSizes, shifted,
                             /*keepPadsWhole=*/true)))
        return 1;
      func->setAttr(kiln::attrs::kMatrixTile,
                    builder.getDenseI64ArrayAttr(sizes));
      return tiles;
    }
    llvm_unreachable("a tiling kind without a case");
  }

  /// In each contraction of the thread's tile, moves the reduction loops
  /// outside the parallel ones: the loop over K (or channels and window)
  /// then encloses the whole register tile, whose accumulators LLVM keeps
  /// in registers once it unrolls the short parallel loops.
  static void reductionLoopsFirst(func::FuncOp func) {
    SmallVector<linalg::GenericOp> contractions;
    func.walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() > 0 && op->getParentOfType<scf::ForallOp>())
        contractions.push_back(op);
    });
    IRRewriter rewriter(func.getContext());
    for (linalg::GenericOp op : contractions) {
      SmallVector<unsigned> order;
      for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
        if (type == utils::IteratorType::reduction)
          order.push_back(i);
      for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
        if (type == utils::IteratorType::parallel)
          order.push_back(i);
      rewriter.setInsertionPoint(op);
      (void)linalg::interchangeGenericOp(rewriter, op, order);
    }
  }
};

} // namespace
