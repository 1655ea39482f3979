//===- TileAndDistribute.cpp - tile a kernel into workgroups --------------===//
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

/// The tileable op whose result the kernel writes, looking through reshapes.
TilingInterface findRoot(func::FuncOp func) {
  TilingInterface root;
  func.walk([&](bufferization::MaterializeInDestinationOp write) {
    Value v = write.getSource();
    while (Operation *def = v.getDefiningOp()) {
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
        v = collapse.getSrc();
      else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
        v = expand.getSrc();
      else
        break;
    }
    if (!root)
      root = v.getDefiningOp<TilingInterface>();
  });
  return root;
}

/// Linalg ops can be tiled only when every result is written through a
/// projected permutation (no constant indices, as keepdims reductions use).
bool hasTileableResults(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return true;
  return llvm::all_of(linalgOp.getDpsInitsMutable(), [&](OpOperand &init) {
    return linalgOp.getMatchingIndexingMap(&init).isProjectedPermutation();
  });
}

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

/// Iteration-space points of every tileable op of the kernel: the work that
/// the producers fused into the root's tiles add to it.
int64_t kernelWork(func::FuncOp func) {
  int64_t total = 0;
  func.walk([&](TilingInterface op) {
    OpBuilder builder(op);
    int64_t points = 1;
    for (Range range : op.getIterationDomain(builder))
      points *=
          std::max<int64_t>(getConstantIntValue(range.size).value_or(1), 1);
    total += points;
  });
  return total;
}

/// A contraction that accumulates into a kernel input (Gemm's C when it
/// has the output's shape, so that its broadcast folded away) would have
/// that input copied whole into the output buffer before the tiled loop:
/// work no iteration owns, which on the GPU kept the whole kernel in one
/// thread. A linalg.copy as its accumulator's producer is fused by tiling
/// instead: each iteration copies its own part.
void copyInputAccumulators(func::FuncOp func) {
  func.walk([](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || isa<linalg::CopyOp>(op))
      return;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      auto type = dyn_cast<RankedTensorType>(init.get().getType());
      if (!type || !init.get().getDefiningOp<bufferization::ToTensorOp>() ||
          !op.payloadUsesValueFromOperand(&init))
        continue;
      OpBuilder b(op);
      Value empty = tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                            type.getElementType());
      init.set(linalg::CopyOp::create(b, op.getLoc(), init.get(), empty)
                   .getResult(0));
    }
  });
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

/// expand_shape(pad(x)) as pad(expand_shape(x)) where no padded dim is
/// split: a convolution's padding in its kernel (kiln-form-dispatch-
/// regions' fuse-conv-padding) under split-K's channel groups. Tiling then
/// meets the pad right behind the slices it takes, and either fuses it
/// into the tiles or keeps it whole for the blocks to read in place
/// (tileAndFuse's keepPadsWhole); behind the reshape it could do neither,
/// and the whole padded image would be each thread's.
struct ExpandShapeBeforePad : public OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto pad = expand.getSrc().getDefiningOp<tensor::PadOp>();
    Value padValue = pad ? pad.getConstantPaddingValue() : Value();
    if (!padValue || !pad.getSourceType().hasStaticShape() ||
        !expand.getResultType().hasStaticShape())
      return failure();
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    if (llvm::any_of(low, ShapedType::isDynamic) ||
        llvm::any_of(high, ShapedType::isDynamic))
      return failure();
    SmallVector<int64_t> shape(expand.getResultType().getShape());
    SmallVector<OpFoldResult> newLow(shape.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> newHigh(newLow);
    for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
      if (low[d] == 0 && high[d] == 0)
        continue;
      if (group.size() != 1)
        return failure();
      shape[group[0]] = pad.getSourceType().getDimSize(d);
      newLow[group[0]] = rewriter.getIndexAttr(low[d]);
      newHigh[group[0]] = rewriter.getIndexAttr(high[d]);
    }
    auto expanded = tensor::ExpandShapeOp::create(
        rewriter, expand.getLoc(),
        RankedTensorType::get(shape, expand.getResultType().getElementType()),
        pad.getSource(), expand.getReassociationIndices());
    rewriter.replaceOpWithNewOp<tensor::PadOp>(
        expand, expand.getResultType(), expanded, newLow, newHigh, padValue);
    return success();
  }
};

/// pad(extf(x)) as extf(pad(x)) where the padding value is the same at the
/// narrower type: a pooling window's padding (-inf or 0) around an input
/// widened from 16 bits, whose padding is not read in place
/// (--window-padding-in-place=off). Tiling moves a pad behind its tile's
/// slice; behind the widening, that slice of a computed tensor would be a
/// buffer of dynamic shape per thread (a device malloc), where a pad of
/// the 16-bit argument's slice is a static tile.
struct PadBeforeWidening : public OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    auto widen = pad.getSource().getDefiningOp<linalg::GenericOp>();
    Value padValue = pad.getConstantPaddingValue();
    FloatAttr value;
    if (!widen || !padValue || !matchPattern(padValue, m_Constant(&value)) ||
        widen.getNumDpsInputs() != 1 || widen.getNumDpsInits() != 1 ||
        widen.getNumReductionLoops() != 0 || !widen->hasOneUse() ||
        !llvm::all_of(widen.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return failure();
    Block &body = widen.getRegion().front();
    auto extf = dyn_cast<arith::ExtFOp>(body.front());
    if (!extf || body.getOperations().size() != 2 ||
        extf.getIn() != body.getArgument(0) ||
        body.getTerminator()->getOperand(0) != extf.getResult())
      return failure();
    // The padding value at the narrower type, exactly.
    auto narrow = cast<FloatType>(extf.getIn().getType());
    APFloat narrowed = value.getValue();
    bool lost = false;
    narrowed.convert(narrow.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                     &lost);
    if (lost)
      return failure();
    Location loc = pad.getLoc();
    Value source = widen.getDpsInputs()[0];
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto paddedType = RankedTensorType::get(pad.getResultType().getShape(),
                                            sourceType.getElementType());
    Value narrowPad = tensor::PadOp::create(
        rewriter, loc, paddedType, source, pad.getMixedLowPad(),
        pad.getMixedHighPad(),
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getFloatAttr(narrow, narrowed))
            .getResult(),
        /*nofold=*/false);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, pad.getResultType().getShape(),
                                pad.getResultType().getElementType());
    auto widened = linalg::GenericOp::create(
        rewriter, loc, pad.getResultType(), ValueRange{narrowPad},
        ValueRange{init}, widen.getIndexingMapsArray(),
        widen.getIteratorTypesArray(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(
              b, loc,
              arith::ExtFOp::create(b, loc, args[1].getType(), args[0])
                  .getResult());
        });
    rewriter.replaceOp(pad, widened.getResults());
    return success();
  }
};

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
    copyInputAccumulators(func);
    if (gpu) {
      RewritePatternSet patterns(&getContext());
      patterns.add<ExpandShapeBeforePad, PadBeforeWidening>(&getContext());
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    if (TilingInterface root = findRoot(func)) {
      workgroups = tile(root);
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

  /// Tiles `root` along one parallel loop and fuses its producers; returns
  /// the number of tiles (the grid size).
  int64_t tile(TilingInterface root) {
    OpBuilder builder(root);
    SmallVector<Range> domain = root.getIterationDomain(builder);
    SmallVector<utils::IteratorType> iterators = root.getLoopIteratorTypes();
    int64_t innermost = -1;
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type == utils::IteratorType::parallel)
        innermost = i;
    // CPU workgroups split one loop, not one that a producing reduction
    // reduces (a Softmax over axis 1): each would recompute the reduction.
    llvm::SmallDenseSet<int64_t> reducedAxes;
    if (!gpu)
      reducedAxes = outerReducedAxes(root, innermost);
    int64_t dim = -1, extent = 0;
    for (auto [i, range] : llvm::enumerate(domain)) {
      std::optional<int64_t> size = getConstantIntValue(range.size);
      if (!size)
        return 1;
      if (dim < 0 && iterators[i] == utils::IteratorType::parallel &&
          *size > 1 && !reducedAxes.contains(i)) {
        dim = i;
        extent = *size;
      }
    }
    int64_t total = kernelWork(root->getParentOfType<func::FuncOp>());
    if (dim < 0 || !hasTileableResults(root))
      return 1;
    if (gpu)
      return tileForThreads(root, domain, iterators);
    auto tileSizeFor = [&](int64_t extent, int64_t granularity, bool even) {
      int64_t wanted = std::min<int64_t>(
          {maxWorkgroups, extent,
           std::max<int64_t>(
               1, total / std::max<int64_t>(1, minWorkPerWorkgroup))});
      int64_t size = (extent + wanted - 1) / wanted;
      return even ? evenTileSize(extent, size, granularity)
                  : std::min<int64_t>(extent, size);
    };
    int64_t tileSize = 0;
    SmallVector<std::pair<int64_t, int64_t>> splits =
        splitsAroundRegisterTiles(root, domain, iterators);
    // The first split, in order of preference, whose even tiles make more
    // than one workgroup: a prime extent has no even tiles (SqueezeNet's
    // 109 output rows ran as one workgroup; its 96 filters split in 12).
    for (auto [splitDim, granularity] : splits) {
      int64_t splitExtent = *getConstantIntValue(domain[splitDim].size);
      int64_t size = tileSizeFor(splitExtent, granularity, /*even=*/true);
      if (size < splitExtent) {
        dim = splitDim;
        extent = splitExtent;
        tileSize = size;
        break;
      }
    }
    if (!tileSize) {
      // Without register tiles, any tiles; with them, none fit evenly.
      if (!splits.empty())
        return 1;
      tileSize = tileSizeFor(extent, 1, /*even=*/false);
    }
    int64_t tiles = (extent + tileSize - 1) / tileSize;
    if (tiles <= 1)
      return 1;

    SmallVector<OpFoldResult> tileSizes(domain.size(), builder.getIndexAttr(0));
    tileSizes[dim] = builder.getIndexAttr(tileSize);
    if (failed(tileAndFuse(root, tileSizes)))
      return 1;
    // For reports: which loop of the root was split, and by how much.
    root->getParentOfType<func::FuncOp>()->setAttr(
        kiln::attrs::kTile, builder.getDenseI64ArrayAttr({dim, tileSize}));
    return tiles;
  }

  /// CPU: the root loop to split into workgroups, and the multiple of
  /// which its tiles must be, when the kernel computes a contraction that
  /// kiln-contract-with-vector-registers turns into register tiles
  /// (rows x vector). A loop outside those tiles (a convolution's output
  /// rows, a batch) is split first; otherwise the row loop, in multiples of
  /// `registerRows` so that every workgroup gets whole register tiles
  /// (also when the outer loop is shorter than kMinWorkgroups and the row
  /// loop has at least as many register tiles)
  /// (split one row per workgroup, each would run one-row tiles). The
  /// vector loop is split only when nothing else is, in whole tiles of two
  /// vectors. None when the kernel has no such
  /// contraction. `all` gets every candidate split (outer, row, vector).
  static constexpr int64_t kMinWorkgroups = 16;

  /// A tile size of at least `least` that divides `extent`: a tile that
  /// does not divide its loop gives every tile dynamic sizes, and register
  /// tiles need static ones (MobileNetV2's 1280 filters in tiles of 24 ran
  /// scalar loops; in tiles of 32, 8.7x faster). The smallest multiple of
  /// `granularity` that divides, unless it is over twice `least` and over
  /// one granule (too few workgroups): then the smallest divisor.
  static int64_t evenTileSize(int64_t extent, int64_t least,
                              int64_t granularity) {
    auto smallestDivisor = [&](int64_t step) {
      for (int64_t size = llvm::alignTo(least, step); size <= extent;
           size += step)
        if (extent % size == 0)
          return size;
      return extent;
    };
    int64_t aligned = smallestDivisor(granularity);
    if (aligned <= std::max(2 * least, granularity))
      return aligned;
    // Else a multiple of 8 (a half AVX-512 vector; a whole AVX one): 1000
    // classes in tiles of 40 (32 + 8 wide), not 20 (16 + 4).
    if (granularity % 8 == 0) {
      aligned = smallestDivisor(8);
      if (aligned <= 3 * least)
        return aligned;
    }
    return smallestDivisor(1);
  }

  /// The loops to split, most preferred first (see splitAroundRegisterTiles),
  /// each with the multiple its tiles must be; the others follow as
  /// fallbacks, for a preferred loop that has no even tiles.
  SmallVector<std::pair<int64_t, int64_t>>
  splitsAroundRegisterTiles(TilingInterface root, ArrayRef<Range> domain,
                            ArrayRef<utils::IteratorType> iterators) {
    SmallVector<std::pair<int64_t, int64_t>> splits;
    std::optional<std::pair<int64_t, int64_t>> preferred =
        splitAroundRegisterTiles(root, domain, iterators, splits);
    if (!preferred)
      return {};
    llvm::erase(splits, *preferred);
    splits.insert(splits.begin(), *preferred);
    return splits;
  }

  std::optional<std::pair<int64_t, int64_t>>
  splitAroundRegisterTiles(TilingInterface root, ArrayRef<Range> domain,
                           ArrayRef<utils::IteratorType> iterators,
                           SmallVectorImpl<std::pair<int64_t, int64_t>> &all) {
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    if (!rootOp || rootOp.getNumDpsInits() != 1)
      return std::nullopt;
    auto rootType = dyn_cast<ShapedType>(rootOp.getDpsInits()[0].getType());
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (!rootType || !rootOut.isProjectedPermutation())
      return std::nullopt;
    linalg::LinalgOp contraction;
    std::optional<VectorContractionLoops> loops;
    int found = 0;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      auto type = dyn_cast<ShapedType>(
          op.getDpsInits().empty() ? Type() : op.getDpsInits()[0].getType());
      if (!type || type.getShape() != rootType.getShape())
        return;
      if (auto match = matchVectorContraction(op)) {
        contraction = op;
        loops = match;
        ++found;
      }
    });
    if (found != 1)
      return std::nullopt;
    AffineMap out =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
    std::optional<std::pair<int64_t, int64_t>> outerSplit, rowSplit,
        vectorSplit;
    int64_t outerExtent = 0, rowTiles = 0;
    for (auto [r, expr] : llvm::enumerate(rootOut.getResults())) {
      int64_t rootLoop = cast<AffineDimExpr>(expr).getPosition();
      int64_t loop = cast<AffineDimExpr>(out.getResult(r)).getPosition();
      int64_t extent = *getConstantIntValue(domain[rootLoop].size);
      if (iterators[rootLoop] != utils::IteratorType::parallel || extent <= 1)
        continue;
      if (loop == loops->vector) {
        vectorSplit = {rootLoop, 2 * vectorWidth};
      } else if (loop == loops->rows) {
        rowSplit = {rootLoop, registerRows};
        rowTiles = extent / registerRows;
      } else if (!outerSplit) {
        // Two of the block loop (a convolution's output rows) per
        // workgroup, so that short vectors still make register tiles of
        // two rows (see blocksPerTile in ContractWithVectorRegisters).
        outerSplit = {rootLoop, loop == loops->block ? 2 : 1};
        outerExtent = extent;
      }
    }
    for (auto candidate : {outerSplit, rowSplit, vectorSplit})
      if (candidate)
        all.push_back(*candidate);
    // A short outer loop (a 7x7 feature map's 7 rows) would leave threads
    // idle: 7 workgroups on 2 threads run as 4 + 3. Many row tiles (2048
    // filters) split more evenly.
    if (outerSplit && rowSplit && outerExtent < kMinWorkgroups &&
        rowTiles >= kMinWorkgroups)
      return rowSplit;
    if (outerSplit)
      return outerSplit;
    // Each workgroup of a row split reads all of the vector input (a
    // matmul's B), each of a vector split all of the other: split so that
    // the larger one is read once (BERT's 768 x 3072 weights against 128
    // rows of activations: 4.2 -> 3.0 ms per matmul).
    if (rowSplit && vectorSplit &&
        operandBytes(contraction, loops->vectorInput) >
            operandBytes(contraction, 1 - loops->vectorInput) &&
        vectorTiles(domain, *vectorSplit) >= kMinWorkgroups)
      return vectorSplit;
    return rowSplit ? rowSplit : vectorSplit;
  }

  static int64_t operandBytes(linalg::LinalgOp op, unsigned input) {
    auto type = dyn_cast<ShapedType>(op.getDpsInputs()[input].getType());
    if (!type || !type.hasStaticShape())
      return 0;
    return type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }

  static int64_t vectorTiles(ArrayRef<Range> domain,
                             std::pair<int64_t, int64_t> split) {
    return *getConstantIntValue(domain[split.first].size) / split.second;
  }

  /// The root's loops that a reduction producing one of its operands
  /// reduced (the loops that operand's indexing map leaves out), when the
  /// innermost parallel loop is not one of them; empty otherwise.
  static llvm::SmallDenseSet<int64_t> outerReducedAxes(TilingInterface root,
                                                       int64_t innermost) {
    llvm::SmallDenseSet<int64_t> axes;
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    if (!rootOp || innermost < 0)
      return axes;
    for (OpOperand *operand : rootOp.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
      if (!producer || producer.getNumReductionLoops() == 0)
        continue;
      AffineMap map = rootOp.getMatchingIndexingMap(operand);
      for (unsigned loop = 0; loop < map.getNumDims(); ++loop)
        if (!map.isFunctionOfDim(loop) &&
            rootOp.getIteratorTypesArray()[loop] ==
                utils::IteratorType::parallel)
          axes.insert(loop);
    }
    if (axes.contains(innermost))
      axes.clear();
    return axes;
  }

  /// GPU tiling: one forall iteration per thread. Every parallel loop of the
  /// root gets tile size 1, so that neighbouring threads write neighbouring
  /// elements (coalesced stores). When a producer fused into the kernel
  /// reduces (softmax, normalizations), the innermost parallel loop stays
  /// whole: a thread then computes a whole row and each row's reduction runs
  /// once instead of once per element; when it reduces outer loops
  /// instead (outerReducedAxes), those stay whole.
  int64_t tileForThreads(TilingInterface root, ArrayRef<Range> domain,
                         ArrayRef<utils::IteratorType> iterators) {
    OpBuilder builder(root);
    // A reduction whose result is smaller than the root's (a row statistic
    // broadcast back over the row); a contraction producing the root's
    // whole input, like a conv under its ReLU, does not count.
    int64_t rootElements = 1;
    for (Range range : domain)
      rootElements *= *getConstantIntValue(range.size);
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type != utils::IteratorType::parallel)
        rootElements /=
            std::max<int64_t>(1, *getConstantIntValue(domain[i].size));
    // A contraction under a broadcast (a squeeze-excitation scale: a 1x1
    // convolution of the pooled map scaling every pixel) does not count
    // either: each thread computes the few outputs it scales.
    bool producerReduces = false;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      if (op.getOperation() == root.getOperation() ||
          op.getNumReductionLoops() == 0 ||
          linalg::isaContractionOpInterface(op))
        return;
      for (Value init : op.getDpsInits())
        if (auto type = dyn_cast<ShapedType>(init.getType()))
          if (type.hasStaticShape() && type.getNumElements() < rootElements)
            producerReduces = true;
    });
    if (std::optional<SmallVector<int64_t>> tile =
            blockTileSizes(root, domain.size()))
      return tileMatrix(root, domain, *tile);
    int64_t innermost = -1;
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type == utils::IteratorType::parallel)
        innermost = i;
    SmallVector<int64_t> registerTile =
        producerReduces ? SmallVector<int64_t>(domain.size(), 1)
                        : registerTileSizes(root, rootElements, domain.size());
    keepEnoughThreads(registerTile, rootElements);
    // Runs of a memory-bound kernel come after the thread floor, which is
    // for register tiles: what fills the memory system is the bytes in
    // flight, the same for a run of 8 halves in one 16-byte access as for
    // 8 threads of 2 bytes, and the run takes an eighth of the
    // instructions (MobileNetV2's float16 residual adds at batch 32, 250K
    // elements, would otherwise be one element a thread).
    if (!producerReduces && innermost >= 0)
      vectorTile(root, registerTile, domain, innermost);
    if (auto pad = dyn_cast<tensor::PadOp>(root.getOperation()))
      vectorTilePad(pad, registerTile);
    // A row kernel leaves its innermost loop, the reduced row, to the
    // iteration (kiln-distribute-rows-to-lanes gives it a warp). A
    // reduction over an outer axis (a detection head's Softmax over the 16
    // bins of [1, 16, 4, anchors]) leaves that axis instead: each thread
    // walks it in a loop for one position of the innermost loop, so that
    // neighbouring threads read neighbouring elements and no thread keeps
    // a row of statistics on its stack.
    llvm::SmallDenseSet<int64_t> reducedAxes =
        outerReducedAxes(root, innermost);
    auto leftWhole = [&](int64_t i) {
      if (!producerReduces)
        return false;
      return reducedAxes.empty() ? i == innermost : reducedAxes.contains(i);
    };
    SmallVector<OpFoldResult> tileSizes(domain.size(), builder.getIndexAttr(0));
    int64_t threads = 1;
    for (auto [i, range] : llvm::enumerate(domain)) {
      if (iterators[i] != utils::IteratorType::parallel || leftWhole(i))
        continue;
      tileSizes[i] = builder.getIndexAttr(registerTile[i]);
      threads *= *getConstantIntValue(range.size) / registerTile[i];
    }
    if (threads <= 1)
      return 1;
    if (failed(tileAndFuse(root, tileSizes)))
      return 1;
    if (llvm::any_of(registerTile, [](int64_t t) { return t > 1; }))
      reductionLoopsFirst(root->getParentOfType<func::FuncOp>());
    return threads;
  }

  /// Tile sizes of the root's loops when the kernel is a contraction
  /// (matchMatrixContraction: a matmul, or a convolution as implicit GEMM
  /// with M its output width and N its filters), the root or its only
  /// reducing producer under an elementwise epilogue: one output block per
  /// forall iteration (matrixBlock when matrix instructions take it,
  /// threadBlock otherwise), unit tiles over the other parallel loops.
  /// None when neither applies.
  std::optional<SmallVector<int64_t>> blockTileSizes(TilingInterface root,
                                                     size_t numLoops) {
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    if ((matrixTile <= 0 && !threadBlocks) || !rootOp ||
        rootOp.getNumDpsInits() != 1)
      return std::nullopt;
    SmallVector<linalg::LinalgOp> reducing;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() > 0)
        reducing.push_back(op);
    });
    if (reducing.size() != 1)
      return std::nullopt;
    linalg::LinalgOp contraction = reducing.front();
    std::optional<MatrixContractionLoops> loops =
        matchMatrixContraction(contraction, /*allowFloat32=*/true);
    if (!loops)
      return std::nullopt;
    auto contractionType =
        dyn_cast<ShapedType>(contraction.getDpsInits()[0].getType());
    auto rootType = dyn_cast<ShapedType>(rootOp.getDpsInits()[0].getType());
    if (!contractionType || !rootType ||
        contractionType.getShape() != rootType.getShape())
      return std::nullopt;
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (!rootOut.isProjectedPermutation() ||
        rootOut.getNumResults() != contractionType.getRank())
      return std::nullopt;
    SmallVector<int64_t> sizes(numLoops, 0);
    SmallVector<int64_t> rootRanges = rootOp.getStaticLoopRanges();
    int64_t otherIterations = 1;
    for (auto [i, type] : llvm::enumerate(rootOp.getIteratorTypesArray()))
      if (type == utils::IteratorType::parallel) {
        sizes[i] = 1;
        otherIterations *= rootRanges[i];
      }
    int64_t width = loops->ranges[loops->m], n = loops->ranges[loops->n];
    auto rootLoop = [&](int64_t outPosition) {
      return cast<AffineDimExpr>(rootOut.getResult(outPosition)).getPosition();
    };
    // Blocks of whole output rows where a convolution's rows are short
    // (ResNet's 56, 28, 14 and 7 pixels): M is then rows x width, whose
    // 112 outputs of two rows of 56 make seven 16-row matrix tiles or 8
    // outputs per thread where one row made neither. Taken when they get
    // matrix instructions that one row does not (or only padded), or as
    // many blocks as one row gets (up to kMinMatrixBlocks): a row can be
    // split further; or when --matrix-block asks for them.
    std::optional<Block> row =
        chooseBlock(*loops, width, n, otherIterations / (width * n), 1);
    if (loops->mOuter >= 0 && width < kShortRow) {
      int64_t m = width * loops->ranges[loops->mOuter];
      std::optional<Block> rows =
          chooseBlock(*loops, m, n, otherIterations / (m * n), width);
      bool asked = rows && rows->rows == matrixBlockRows &&
                   rows->cols == matrixBlockCols; // --matrix-block
      // Matrix tiles without padding beat padded ones (a 28-pixel row as
      // 32 rows) as they beat none.
      auto padded = [&](const Block &block) {
        return block.matrix && block.rows % matrixTile != 0;
      };
      if (rows && (!row || asked ||
                   (rows->matrix &&
                    (!row->matrix || (padded(*row) && !padded(*rows)))) ||
                   (rows->matrix == row->matrix &&
                    rows->blocks >= std::min(kMinMatrixBlocks, row->blocks)))) {
        sizes[rootLoop(loops->outMOuter)] = rows->rows / width;
        sizes[rootLoop(loops->outM)] = width;
        sizes[rootLoop(loops->outN)] = rows->cols;
        return sizes;
      }
    }
    if (!row)
      return std::nullopt;
    // The root's loops that write the output dims where the contraction
    // has M and N.
    sizes[rootLoop(loops->outM)] = row->rows;
    sizes[rootLoop(loops->outN)] = row->cols;
    return sizes;
  }

  /// Output rows shorter than this (a thread tile's 8 outputs along M need
  /// 96) make blocks of several rows.
  static constexpr int64_t kShortRow = 96;

  /// An output block: rows along M x columns along N, whether matrix
  /// instructions take it, and how many blocks the kernel has.
  struct Block {
    int64_t rows = 0, cols = 0;
    bool matrix = false;
    int64_t blocks = 0;
  };

  /// The output block of a contraction with `m` x `n` outputs times
  /// `otherIterations`: matrix instructions' when they take it, else
  /// thread tiles'; rows a multiple of `rowQuantum` (whole convolution
  /// rows). None when neither gives more than one block: a single block
  /// would be a forall of one iteration, which canonicalization folds
  /// away, and the kernel would run as one thread; such a kernel keeps
  /// per-thread tiles instead.
  std::optional<Block> chooseBlock(const MatrixContractionLoops &loops,
                                   int64_t m, int64_t n,
                                   int64_t otherIterations,
                                   int64_t rowQuantum) const {
    auto counted = [&](std::optional<std::pair<int64_t, int64_t>> size,
                       bool matrix) -> std::optional<Block> {
      if (!size || size->first <= 0 || size->second <= 0)
        return std::nullopt;
      int64_t blocks =
          blockCount(otherIterations, m, n, size->first, size->second);
      if (blocks <= 1)
        return std::nullopt;
      return Block{size->first, size->second, matrix, blocks};
    };
    std::optional<Block> block;
    if (takesMatrixInstructions(loops))
      block = counted(matrixBlock(m, n, otherIterations, rowQuantum,
                                  widestMatrixColumns(loops)),
                      true);
    if (!block && threadBlocks)
      block = counted(threadBlock(m, n, otherIterations, rowQuantum), false);
    return block;
  }

  /// 16-bit operands (float32 ones too with matrixFloat32) whose N
  /// `matrixTile` divides or has blocks of columns it pads
  /// (paddedColumns: 24 filters as 32), and whose K it divides or pads
  /// (paddedMatrixK: 24 channels as 32; M's blocks are matrixBlock's to
  /// find).
  bool takesMatrixInstructions(const MatrixContractionLoops &loops) const {
    if (matrixTile <= 0 || (loops.operandType.isF32() && !matrixFloat32))
      return false;
    int64_t n = loops.ranges[loops.n];
    return (n % matrixTile == 0 || paddedColumns(n, 128) > 0) &&
           paddedMatrixK(loops.ranges[loops.k]) > 0;
  }

  /// The largest block of columns up to `most` that divides `n` and that
  /// matrix tiles compute padded as they pad rows (paddedMatrixRows: 24
  /// as 32; 1000 classes in blocks of 125 as 128), or 0.
  static int64_t paddedColumns(int64_t n, int64_t most) {
    for (int64_t size = std::min<int64_t>(most, 128); size > 0; --size)
      if (n % size == 0 && paddedMatrixRows(size) > 0)
        return size;
    return 0;
  }

  /// The output block (rows x columns) of one forall iteration that
  /// kiln-contract-with-thread-tiles gives to a block of threads, each
  /// computing threadTileExtent(rows) x threadTileExtent(columns) outputs.
  /// Per side its largest divisor from 16 to 128 that is a multiple of 4
  /// (whole runs of 4 per thread: 128 of 4096, 112 of a 56x56 image's
  /// 3136 pixels, 28 of 196), else the whole side when at most 64 (a
  /// 14-pixel row), else its largest divisor from 8 to 64; halved, the
  /// larger side first, while the kernel would have fewer than
  /// kMinMatrixBlocks blocks and the block keeps minBlockThreads threads
  /// (a warp; a wavefront on AMD). None when no such block has that many
  /// (a matrix-vector product: per-thread tiles then). Larger blocks read
  /// each operand element from global memory fewer times, and their 8x8
  /// thread tiles do 64 FMAs per four 16-byte workgroup loads (a 4x4
  /// tile: 16 per two). Rows stay multiples of `rowQuantum`. A side that
  /// nothing divides (197 tokens) takes shiftedSide's blocks.
  std::optional<std::pair<int64_t, int64_t>>
  threadBlock(int64_t m, int64_t n, int64_t otherIterations,
              int64_t rowQuantum) const {
    auto largestOf = [](int64_t extent, int64_t quantum) -> int64_t {
      for (int64_t size = 128; size >= 16; size -= 4)
        if (extent % size == 0 && size % quantum == 0)
          return size;
      if (extent <= 64)
        return extent;
      for (int64_t size = 64; size >= 8; --size)
        if (extent % size == 0 && size % quantum == 0)
          return size;
      return 0;
    };
    auto largest = [&](int64_t extent) { return largestOf(extent, 1); };
    // Threads are counted as kiln-contract-with-thread-tiles lays the
    // block out (threadBlockThreads: 49 rows padded to 64 unless that
    // leaves fewer than a warp). --matrix-block, when it divides M and N
    // into blocks of 32 to 1024 threads.
    if (matrixBlockRows > 0 && matrixBlockCols > 0 &&
        m % matrixBlockRows == 0 && matrixBlockRows % rowQuantum == 0 &&
        n % matrixBlockCols == 0 &&
        threadBlockThreads(matrixBlockRows, matrixBlockCols) >=
            minBlockThreads &&
        threadBlockThreads(matrixBlockRows, matrixBlockCols) <= 1024)
      return std::pair<int64_t, int64_t>(matrixBlockRows, matrixBlockCols);
    int64_t rows = largestOf(m, rowQuantum), cols = largest(n);
    // Sides that nothing divides (197 tokens): shifted blocks.
    if (rows == 0 && rowQuantum == 1)
      rows = shiftedSide(m, 16);
    if (cols == 0)
      cols = shiftedSide(n, 16);
    if (rows == 0 || cols == 0 ||
        threadBlockThreads(rows, cols) < minBlockThreads)
      return std::nullopt;
    auto blocks = [&] { return blockCount(otherIterations, m, n, rows, cols); };
    auto halvable = [&](int64_t side, int64_t other, bool isRows) {
      if (side % 2 != 0 || side / 2 < 8 ||
          (isRows && (side / 2) % rowQuantum != 0))
        return false;
      return isRows ? threadBlockThreads(side / 2, other) >= minBlockThreads
                    : threadBlockThreads(other, side / 2) >= minBlockThreads;
    };
    while (blocks() < kMinMatrixBlocks) {
      if (rows >= cols && halvable(rows, cols, true))
        rows /= 2;
      else if (halvable(cols, rows, false))
        cols /= 2;
      else if (halvable(rows, cols, true))
        rows /= 2;
      else
        break;
    }
    return std::pair(rows, cols);
  }

  /// The widest block of columns a matrix kernel may take: 256 for 16-bit
  /// operands on warpgroup matrix instructions (wide-matrix-blocks) reduced
  /// over at least kWideBlockReduction products per output (K times a
  /// convolution's window), 128 otherwise. A 128x256 block (two warpgroups
  /// of m64n256) reads 384 operand elements per step along K for 32768
  /// products where two 128x128 blocks read 512: a quarter less of the L2
  /// traffic that bounds a large f16 matmul's blocks (cuBLAS's and
  /// CUTLASS's largest f16 tiles are 128x256 and 256x128 for that reason),
  /// given a deep pipeline (four stage buffers of 32 along K: 96 KiB of
  /// dynamic shared memory; not in the 48 KiB a block declares statically).
  /// mma.sync blocks stay 128 wide: eight warps of 64x64 take about 210
  /// registers a thread, so one block fills an SM's registers where 128x128
  /// blocks keep two, and on an H200 the 4096^3 f16 matmul ran 0.414 ms in
  /// 128x256 blocks against 0.322 ms in 128x128 ones (the 2026-12-04 GPU
  /// check; wgmma's 128x256 blocks ran 0.758 ms against 1.005).
  int64_t widestMatrixColumns(const MatrixContractionLoops &loops) const {
    if (!wideMatrixBlocks || !loops.operandType || loops.operandType.isF32())
      return 128;
    int64_t reduction = loops.ranges[loops.k];
    for (int64_t dim : loops.window)
      reduction *= loops.ranges[dim];
    int64_t elementBytes = loops.operandType.getIntOrFloatBitWidth() / 8;
    int64_t deepPipelineBytes =
        kWideBlockBuffers * (128 + 256) * kWideBlockStageK * elementBytes;
    return reduction >= kWideBlockReduction &&
                   workgroupMemoryBytes >= deepPipelineBytes
               ? 256
               : 128;
  }

  /// The pipeline 128x256 blocks need (widestMatrixColumns): buffers per
  /// operand and their depth along K.
  static constexpr int64_t kWideBlockBuffers = 4, kWideBlockStageK = 32;

  /// Products per output from which 16-bit blocks may be 256 columns wide
  /// (widestMatrixColumns): 16 stages of 32 along K, of which a pipeline's
  /// first (up to four buffers) are at most a quarter.
  static constexpr int64_t kWideBlockReduction = 512;

  /// Fewest GPU blocks a matrix kernel keeps when its output blocks grow:
  /// two per SM of an H200 (132 SMs), so that no SM idles while another
  /// runs two.
  static constexpr int64_t kMinMatrixBlocks = 264;

  /// GPU blocks of `rows` x `cols` over `m` x `n` outputs, times
  /// `otherIterations`; a side that its block does not divide gets one
  /// more, shifted back (shiftedSide).
  static int64_t blockCount(int64_t otherIterations, int64_t m, int64_t n,
                            int64_t rows, int64_t cols) {
    return otherIterations * llvm::divideCeil(m, rows) *
           llvm::divideCeil(n, cols);
  }

  /// A block side for an extent that no candidate divides or pads (ViT's
  /// 197 tokens, a prime): the largest power of two from 128 down to
  /// `least` whose blocks, the last shifted back to end with the extent
  /// (tileMatrix; it recomputes part of the one before it), compute at
  /// most a quarter more than the extent (197 in blocks of 128: 256). 0
  /// when none does (an extent under `least`, or 17: 32 for 17).
  static int64_t shiftedSide(int64_t extent, int64_t least) {
    for (int64_t size = 128; size >= least && size > 0; size /= 2) {
      int64_t computed = llvm::alignTo(extent, size);
      if (size <= extent && 4 * (computed - extent) <= computed)
        return size;
    }
    return 0;
  }

  /// Rows of a block of whole convolution rows (`width` outputs each) on a
  /// map of `height` rows that no such block divides or pads (Inception's
  /// 35x35 and 17x17 maps: 35 and 17 have no divisor whose rows make a
  /// multiple of 16 or pad to one within a quarter): r whole rows (r x
  /// width at most 128 outputs, paddedMatrixRows pads them), the last
  /// block shifted back to end with the map (tileMatrix), for the r that
  /// computes the fewest outputs in all (ceil(height / r) blocks of
  /// padded rows; the more rows on a tie: fewer blocks), if that is at
  /// most half as many again as the map has (35: 3 rows of 105 as 112,
  /// 12 blocks, 10% more; 17: 6 rows of 102 as 112, 3 blocks, 16% more).
  /// At most `mostRows` rows (smaller blocks while the kernel needs more).
  /// 0 when none is.
  static int64_t shiftedWholeRowsBlock(int64_t height, int64_t width,
                                       int64_t mostRows = 128) {
    int64_t best = 0, bestComputed = 0;
    for (int64_t r = 1; r < height && r <= mostRows && r * width <= 128; ++r) {
      int64_t padded = paddedMatrixRows(r * width);
      if (padded == 0)
        continue;
      int64_t computed = llvm::divideCeil(height, r) * padded;
      if (best == 0 || computed <= bestComputed) {
        best = r;
        bestComputed = computed;
      }
    }
    if (best == 0 || 2 * bestComputed > 3 * height * width)
      return 0;
    return best * width;
  }

  /// The output block (rows x columns) of one forall iteration, which
  /// kiln-contract-with-matrix-cores gives to one GPU block of warps that
  /// stage their operands through shared memory. The options' sizes when
  /// they divide M and N; else per side the largest of 128, 64, 32 and 16
  /// (matrixTile) that divides it (256 columns beside 128 rows up to
  /// `widestColumns`), halved, the larger side first, while the
  /// kernel would have fewer than kMinMatrixBlocks blocks. Larger blocks
  /// read each operand element from global memory fewer times (M / rows
  /// times for B, N / columns for A); too few leave SMs idle. Rows stay
  /// multiples of `rowQuantum` (whole convolution rows: 112 for rows of
  /// 56, 28 or 14, the multiples of 16 up to 128 then being candidates).
  /// Where no multiple of 16 divides M into such rows (14x14 and 7x7 maps,
  /// as rows or flattened), the largest that paddedMatrixRows pads (98 of
  /// 196 as 112, 49 as 64), halved to the next such while the block count
  /// needs it and the columns cannot halve. Where neither exists (ViT's 197
  /// tokens: a prime), blocks of shiftedSide, the last shifted back; of
  /// whole convolution rows, shiftedWholeRowsBlock's. None when no block
  /// exists.
  std::optional<std::pair<int64_t, int64_t>>
  matrixBlock(int64_t m, int64_t n, int64_t otherIterations, int64_t rowQuantum,
              int64_t widestColumns) const {
    auto fits = [&](int64_t size, int64_t extent, int64_t quantum) {
      return size >= matrixTile && size % matrixTile == 0 &&
             extent % size == 0 && size % quantum == 0;
    };
    // Rows that matrix tiles compute padded (paddedMatrixRows).
    auto fitsPadded = [&](int64_t size) {
      return size > 0 && m % size == 0 && size % rowQuantum == 0 &&
             paddedMatrixRows(size) > 0;
    };
    // --matrix-block; its rows may be padded ones (98: 112 on 14-pixel rows).
    if ((fits(matrixBlockRows, m, rowQuantum) || fitsPadded(matrixBlockRows)) &&
        fits(matrixBlockCols, n, 1))
      return std::pair(matrixBlockRows.getValue(), matrixBlockCols.getValue());
    // Powers of two first; other multiples of 16 (warps of 16 rows) for
    // whole convolution rows, or when `anyMultiple`.
    auto largest = [&](int64_t extent, int64_t quantum,
                       bool anyMultiple) -> int64_t {
      for (int64_t size : {128, 64, 32})
        if (fits(size, extent, quantum))
          return size;
      if (quantum > 1 || anyMultiple)
        for (int64_t size = 128; size > matrixTile; size -= matrixTile)
          if (fits(size, extent, quantum))
            return size;
      return fits(matrixTile, extent, quantum) ? matrixTile.getValue() : 0;
    };
    // Padded rows: the largest candidate up to `most`, or 0.
    auto largestPadded = [&](int64_t most) -> int64_t {
      for (int64_t size = std::min<int64_t>(most, 128); size > 0; --size)
        if (fitsPadded(size))
          return size;
      return 0;
    };
    int64_t rows = largest(m, rowQuantum, /*anyMultiple=*/false),
            cols = largest(n, 1, /*anyMultiple=*/false);
    // Rows that no power of two above 16 divides (a 112-pixel row) in one
    // block of their largest multiple of 16, not seven of 16 rows that each
    // stage all the block's weights (a batch-32 stem: 25088 one-warp
    // blocks loading 4 KiB of weights for 1 KiB of image each), where that
    // keeps kMinMatrixBlocks blocks.
    if (rows == matrixTile) {
      int64_t wider = largest(m, rowQuantum, /*anyMultiple=*/true);
      if (cols > 0 &&
          blockCount(otherIterations, m, n, wider, cols) >= kMinMatrixBlocks)
        rows = wider;
    }
    // 256 columns only beside 128 rows (widestMatrixColumns); the halving
    // below takes the wider side first, back to 128x128 when 256 columns
    // leave too few blocks.
    if (widestColumns >= 256 && rows == 128 && cols == 128 && fits(256, n, 1))
      cols = 256;
    bool padded = rows == 0;
    if (padded)
      rows = largestPadded(128);
    // Columns that no multiple of 16 divides into (24 filters) are padded
    // likewise.
    bool paddedCols = cols == 0;
    if (paddedCols)
      cols = paddedColumns(n, 128);
    // Sides that neither divides nor pads: shifted blocks; of whole
    // convolution rows when the block takes rows (shiftedWholeRows).
    bool shiftedRows = rows == 0 && rowQuantum == 1;
    if (shiftedRows) {
      rows = shiftedSide(m, matrixTile);
      padded = false;
    }
    bool shiftedWholeRows = rows == 0 && rowQuantum > 1;
    if (shiftedWholeRows) {
      rows = shiftedWholeRowsBlock(m / rowQuantum, rowQuantum);
      padded = false;
    }
    bool shiftedCols = cols == 0;
    if (shiftedCols) {
      cols = shiftedSide(n, matrixTile);
      paddedCols = false;
    }
    if (rows == 0 || cols == 0)
      return std::nullopt;
    // Rows that 32 does not divide (112) take warps of 16 rows: seven per
    // 64 columns, and a 112 x 128 block's 448 threads would leave each
    // 128 registers, under what its pipelined stage loads need (ptxas
    // spilled).
    if (paddedMatrixRows(rows) % 32 != 0 && paddedMatrixRows(cols) > 64)
      cols = paddedCols ? paddedColumns(n, 64) : 64;
    if (cols == 0)
      return std::nullopt;
    auto blocks = [&] { return blockCount(otherIterations, m, n, rows, cols); };
    while (blocks() < kMinMatrixBlocks) {
      // Halving padded rows (or shifted whole rows) may waste more of the
      // matrix tiles: columns first.
      int64_t halfRows = padded ? largestPadded(rows / 2)
                         : shiftedWholeRows
                             ? shiftedWholeRowsBlock(m / rowQuantum, rowQuantum,
                                                     rows / rowQuantum / 2)
                             : rows / 2;
      bool rowsHalve = padded || shiftedWholeRows
                           ? halfRows > 0
                           : rows > matrixTile &&
                                 (shiftedRows || fits(halfRows, m, rowQuantum));
      int64_t halfCols = paddedCols ? paddedColumns(n, cols / 2) : cols / 2;
      bool colsHalve = paddedCols ? halfCols > 0
                                  : cols > matrixTile &&
                                        (shiftedCols || fits(halfCols, n, 1));
      if (rowsHalve &&
          (!colsHalve || (!padded && !shiftedWholeRows && rows >= cols)))
        rows = halfRows;
      else if (colsHalve)
        cols = halfCols;
      else
        break;
    }
    return std::pair(rows, cols);
  }

  /// Tiles the root into one forall iteration per output tile of `tile`;
  /// a loop that its tile does not divide (a shifted block side) gets one
  /// more, shifted back to end with the loop.
  int64_t tileMatrix(TilingInterface root, ArrayRef<Range> domain,
                     ArrayRef<int64_t> tile) {
    OpBuilder builder(root);
    SmallVector<OpFoldResult> tileSizes;
    int64_t tiles = 1;
    bool shifted = false;
    for (auto [size, range] : llvm::zip(tile, domain)) {
      tileSizes.push_back(builder.getIndexAttr(size));
      if (size <= 0)
        continue;
      int64_t extent = *getConstantIntValue(range.size);
      tiles *= llvm::divideCeil(extent, size);
      shifted |= extent % size != 0;
    }
    if (failed(tileAndFuse(root, tileSizes, shifted,
                           /*keepPadsWhole=*/true)))
      return 1;
    root->getParentOfType<func::FuncOp>()->setAttr(
        kiln::attrs::kMatrixTile, builder.getDenseI64ArrayAttr(tile));
    return tiles;
  }

  /// Outputs per thread when the kernel computes a contraction (matmul,
  /// conv), as the root or under an elementwise epilogue: a kRegisterTile x
  /// kRegisterTile block over the contraction's innermost parallel loop
  /// that only its first input uses (matmul M, conv output width) and the
  /// one that only its second input uses (matmul N, conv filters). Each
  /// element the thread loads then serves kRegisterTile multiply-adds
  /// instead of one. Loops whose extent kRegisterTile does not divide stay
  /// at 1. The sizes are returned for the root's loops.
  static SmallVector<int64_t> registerTileSizes(TilingInterface root,
                                                int64_t rootElements,
                                                size_t numLoops) {
    constexpr int64_t kRegisterTile = 4;
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    SmallVector<int64_t> sizes(numLoops, 1);
    if (!rootOp || rootOp.getNumDpsInits() != 1)
      return sizes;
    // The contraction: the root itself, or the one producer that reduces
    // into a tensor as large as the root's result.
    linalg::LinalgOp contraction;
    if (rootOp.getNumReductionLoops() > 0) {
      contraction = rootOp;
    } else {
      int found = 0;
      root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
        if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1)
          return;
        auto type = dyn_cast<ShapedType>(op.getDpsInits()[0].getType());
        if (type && type.hasStaticShape() &&
            type.getNumElements() == rootElements) {
          contraction = op;
          ++found;
        }
      });
      if (found != 1)
        return sizes;
    }
    // A window generic that reads its input in its body (a depthwise
    // convolution or pooling reading its padding in place: one input
    // operand) keeps one output per thread: with 4 along the row, a warp's
    // lanes read 4 * stride elements apart, one 2- or 4-byte load each
    // (the clamped indices hide the neighbours from the vectorizer):
    // MobileNetV2's stride-2 depthwise convolutions used 18% of the
    // sectors they fetched (kiln-emulate-gpu --memory-traffic), where
    // consecutive lanes on consecutive outputs read one run. Channels-last
    // depthwise convolutions take a run of channels instead
    // (channelRunTile).
    if (contraction.getNumDpsInputs() < 2) {
      channelRunTile(contraction, rootOp, sizes);
      return sizes;
    }
    SmallVector<int64_t> ranges = contraction.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators =
        contraction.getIteratorTypesArray();
    AffineMap contractionOut =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
    AffineMap first =
        contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(0));
    AffineMap second =
        contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(1));
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (contractionOut.getNumResults() != rootOut.getNumResults())
      return sizes;
    auto pick = [&](AffineMap uses, AffineMap excludes) {
      for (int64_t i = int64_t(ranges.size()) - 1; i >= 0; --i)
        if (iterators[i] == utils::IteratorType::parallel &&
            uses.isFunctionOfDim(i) && !excludes.isFunctionOfDim(i) &&
            ranges[i] % kRegisterTile == 0)
          return i;
      return int64_t(-1);
    };
    for (int64_t loop : {pick(first, second), pick(second, first)}) {
      if (loop < 0)
        continue;
      // The result dim the contraction's loop writes, and the root loop
      // that writes the same dim.
      std::optional<unsigned> dim = contractionOut.getResultPosition(
          getAffineDimExpr(loop, contraction.getContext()));
      if (!dim)
        continue;
      if (auto rootLoop = dyn_cast<AffineDimExpr>(rootOut.getResult(*dim)))
        sizes[rootLoop.getPosition()] = kRegisterTile;
    }
    return sizes;
  }

  /// A depthwise convolution on channels-last activations (a window
  /// generic whose one operand is its weight, read along the channels like
  /// the output: [1][kh][kw][C], kiln-channels-last-conv-weights): 16 bytes
  /// of neighbouring channels per thread, 8 at 16 bits and 4 at 32, when
  /// they divide the channels. The input, the weight and the output are
  /// all contiguous along them, so a thread's loads and store of them merge
  /// into 128-bit accesses, and one window's index arithmetic and padding
  /// checks serve all of them (with one channel a thread, MobileNetV2's
  /// float16 depthwise kernels spent about 150 instructions an output).
  /// `sizes` are the root's loops; the root writes the contraction's
  /// output dims through its own output map.
  static void channelRunTile(linalg::LinalgOp contraction,
                             linalg::LinalgOp rootOp,
                             SmallVector<int64_t> &sizes) {
    constexpr int64_t kRunBits = 128;
    if (contraction.getNumDpsInputs() != 1)
      return;
    AffineMap out =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
    AffineMap weight =
        contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(0));
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (out.getNumResults() == 0 || weight.getNumResults() == 0 ||
        out.getNumResults() != rootOut.getNumResults())
      return;
    auto channel = dyn_cast<AffineDimExpr>(out.getResults().back());
    auto rootChannel = dyn_cast<AffineDimExpr>(rootOut.getResults().back());
    if (!channel || !rootChannel ||
        contraction.getIteratorTypesArray()[channel.getPosition()] !=
            utils::IteratorType::parallel)
      return;
    Type element;
    if (weight.getResults().back() == channel)
      element = getElementTypeOrSelf(
          contraction.getDpsInputOperand(0)->get().getType());
    else if (!weight.isFunctionOfDim(channel.getPosition()))
      element = channelReadElement(contraction, channel.getPosition());
    if (!element || !element.isIntOrFloat() ||
        element.getIntOrFloatBitWidth() < 8)
      return;
    int64_t run = kRunBits / element.getIntOrFloatBitWidth();
    if (contraction.getStaticLoopRanges()[channel.getPosition()] % run != 0)
      return;
    sizes[rootChannel.getPosition()] = run;
  }

  /// A pooling window (its one operand only the window's shape): the
  /// element type of the input its body reads (tensor.extract) when every
  /// such read takes the channel loop's index as its last, so that a run
  /// of channels is a run of memory; null otherwise. MaxPool's float16
  /// kernel read 2 bytes in each of 9 loads an output (101 instructions).
  static Type channelReadElement(linalg::LinalgOp window, unsigned channel) {
    Type element;
    WalkResult walk = window->walk([&](tensor::ExtractOp read) {
      auto index =
          read.getIndices().empty()
              ? nullptr
              : read.getIndices().back().getDefiningOp<linalg::IndexOp>();
      Type type = read.getTensor().getType().getElementType();
      if (!index || index.getDim() != channel || (element && element != type))
        return WalkResult::interrupt();
      element = type;
      return WalkResult::advance();
    });
    return walk.wasInterrupted() ? Type() : element;
  }

  /// Elementwise kernels: neighbouring elements of the innermost loop per
  /// thread, so that a thread's loads and stores of contiguous operands
  /// merge into 128-bit accesses (the kernel pointers are 64-byte aligned):
  /// 16 bytes of the kernel's widest element, at least kMinVectorWidth
  /// elements (4 floats; 8 halves, where 4 made 64-bit accesses and twice
  /// the instructions a byte). Only for roots whose loops are all parallel
  /// and whose innermost extent the width divides.
  static void vectorTile(TilingInterface root, SmallVector<int64_t> &tile,
                         ArrayRef<Range> domain, int64_t innermost) {
    constexpr int64_t kMinVectorWidth = 4;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    int64_t extent = *getConstantIntValue(domain[innermost].size);
    if (!linalgOp || linalgOp.getNumReductionLoops() > 0 ||
        llvm::any_of(tile, [](int64_t t) { return t > 1; }) ||
        extent % kMinVectorWidth != 0)
      return;
    bool kernelReduces = false;
    int64_t widestBytes = 1;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      kernelReduces |= op.getNumReductionLoops() > 0;
      for (Value operand : op->getOperands())
        if (auto type = dyn_cast<ShapedType>(operand.getType()))
          widestBytes = std::max<int64_t>(
              widestBytes, llvm::divideCeil(type.getElementTypeBitWidth(), 8));
    });
    if (!kernelReduces)
      tile[innermost] = runDividing(extent, widestBytes, kMinVectorWidth);
  }

  /// Elements of `elementBytes` bytes in a 16-byte run, at least `least`,
  /// halved until the run divides `extent`.
  static int64_t runDividing(int64_t extent, int64_t elementBytes,
                             int64_t least = 1) {
    constexpr int64_t kRunBytes = 16;
    int64_t run = std::max(least, kRunBytes / elementBytes);
    while (run > 1 && extent % run != 0)
      run /= 2;
    return run;
  }

  /// A padding kernel (a convolution's input with its border of zeros,
  /// channels last): one thread per element made 100 SASS instructions for
  /// each 16-bit element, index arithmetic around a 2-byte load and store.
  /// A thread instead copies a 16-byte run of the innermost dim when that
  /// dim is not padded and the run divides it (8 channels of float16).
  /// Each tile is then wholly padding or wholly input (the padded dims'
  /// tiles stay 1), which kiln-decompose-pads turns into a fill or a plain
  /// copy.
  static void vectorTilePad(tensor::PadOp pad, SmallVector<int64_t> &tile) {
    RankedTensorType type = pad.getResultType();
    int64_t innermost = type.getRank() - 1;
    int64_t elementBits = type.getElementTypeBitWidth();
    if (innermost < 0 || elementBits % 8 != 0 || type.isDynamicDim(innermost) ||
        llvm::any_of(tile, [](int64_t t) { return t > 1; }))
      return;
    std::optional<int64_t> low =
        getConstantIntValue(pad.getMixedLowPad()[innermost]);
    std::optional<int64_t> high =
        getConstantIntValue(pad.getMixedHighPad()[innermost]);
    if (low != 0 || high != 0)
      return;
    tile[innermost] = runDividing(type.getDimSize(innermost), elementBits / 8);
  }

  /// Register tiles divide the number of threads; a kernel with too few
  /// threads leaves most of the GPU idle (measured on an H200: ResNet-50 at
  /// batch 1 got slower with 4x4 tiles, batch 32 three times faster). The
  /// tile shrinks, one dim at a time, until at least `minThreads` threads
  /// remain or it is 1x1.
  void keepEnoughThreads(SmallVector<int64_t> &tile, int64_t outputs) {
    auto threads = [&] {
      int64_t perThread = 1;
      for (int64_t t : tile)
        perThread *= t;
      return outputs / perThread;
    };
    for (int64_t i = int64_t(tile.size()) - 1; i >= 0 && threads() < minThreads;
         --i)
      tile[i] = 1;
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
