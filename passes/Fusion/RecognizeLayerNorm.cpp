//===- RecognizeLayerNorm.cpp - the decomposed LayerNorm as one op --------===//
//
// Exporters before opset 17 (and Kiln's own importer, for LayerNormalization
// and the normalizations) spell LayerNorm as
//
//   m = ReduceMean(x); d = x - m; v = ReduceMean(d * d or d ^ 2);
//   y = d / Sqrt(v + eps)
//
// where `d` has two consumers, so elementwise fusion alone leaves three
// kernels (and a full-size temporary) per LayerNorm. Folded into one
// kiln.layer_norm, the normalization is one kernel that reads each row and
// writes it once; the scale and bias that follow fuse into it as epilogues.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_RECOGNIZELAYERNORM
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A ReduceMean of `input` over its last dim only, keeping it, used once.
bool isLastDimMean(ReduceMeanOp mean, Value input) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  return mean && mean.getInput() == input && mean.getKeepdims() &&
         mean.getAxes() == ArrayRef<int64_t>{rank - 1} && mean->hasOneUse();
}

/// Every use of `v` is by one of `ops`.
bool onlyUsedBy(Value v, ArrayRef<Operation *> ops) {
  return llvm::all_of(v.getUsers(), [&](Operation *user) {
    return llvm::is_contained(ops, user);
  });
}

struct FoldDecomposedLayerNorm : public OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    if (!sqrt || !sqrt->hasOneUse())
      return failure();
    auto add = sqrt.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      return failure();
    std::optional<double> epsilon = floatSplatValue(add.getRhs());
    Value varianceValue = add.getLhs();
    if (!epsilon) {
      epsilon = floatSplatValue(add.getLhs());
      varianceValue = add.getRhs();
    }
    auto variance = varianceValue.getDefiningOp<ReduceMeanOp>();
    if (!epsilon || !variance)
      return failure();
    Value centered = div.getLhs();
    auto sub = centered.getDefiningOp<SubOp>();
    if (!sub || sub.getType() != div.getType())
      return failure();
    Value x = sub.getLhs();
    auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
    if (x.getType() != div.getType() || !isLastDimMean(mean, x))
      return failure();
    // The variance: mean of centered * centered or centered ^ 2.
    Operation *square = variance.getInput().getDefiningOp();
    if (!square || !square->hasOneUse() ||
        !isLastDimMean(variance, square->getResult(0)))
      return failure();
    if (auto mul = dyn_cast<MulOp>(square)) {
      if (mul.getLhs() != centered || mul.getRhs() != centered)
        return failure();
    } else if (auto pow = dyn_cast<PowOp>(square)) {
      if (pow.getLhs() != centered || floatSplatValue(pow.getRhs()) != 2.0)
        return failure();
    } else {
      return failure();
    }
    if (!onlyUsedBy(centered, {square, div.getOperation()}))
      return failure();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    // Reports name every ONNX node the op stands for.
    Location loc = rewriter.getFusedLoc(
        {mean.getLoc(), sub.getLoc(), square->getLoc(), variance.getLoc(),
         add.getLoc(), sqrt.getLoc(), div.getLoc()});
    rewriter.setInsertionPoint(div);
    auto layerNorm = LayerNormOp::create(
        rewriter, loc, x, rewriter.getI64IntegerAttr(rank - 1),
        rewriter.getF32FloatAttr(float(*epsilon)));
    rewriter.replaceOp(div, layerNorm.getResult());
    for (Operation *dead :
         {sqrt.getOperation(), add.getOperation(), variance.getOperation(),
          square, sub.getOperation(), mean.getOperation()})
      rewriter.eraseOp(dead);
    return success();
  }
};

struct RecognizeLayerNormPass
    : public kiln::impl::RecognizeLayerNormBase<RecognizeLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldDecomposedLayerNorm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
