//===- PrepareKernelTiling.cpp - producers tiling can fuse ----------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_PREPAREKERNELTILING
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

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

/// A linalg op with an empty loop (a zero-size dim: a matmul over K = 0,
/// a reduction of no rows) runs no iteration, so its results are its
/// inits: the matmul's zero fill, which the bias is added to. Replacing it
/// leaves the kernel its non-empty ops to tile (tiling cannot fuse a
/// producer into an empty loop).
void foldEmptyLoops(func::FuncOp func) {
  func.walk([](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() &&
        llvm::is_contained(op.getStaticLoopRanges(), 0)) {
      op->replaceAllUsesWith(op.getDpsInits());
      op->erase();
    }
  });
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

struct PrepareKernelTilingPass
    : public kiln::impl::PrepareKernelTilingBase<PrepareKernelTilingPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    foldEmptyLoops(func);
    copyInputAccumulators(func);
    if (reorderPads) {
      RewritePatternSet patterns(&getContext());
      patterns.add<ExpandShapeBeforePad, PadBeforeWidening>(&getContext());
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
  }
};

} // namespace
