//===- SplitReductions.cpp - a long reduction with few outputs in two -----===//
//
// A reduction with few outputs over a long run of elements gives a GPU one
// thread (or one row's warp) per output walking the whole run: a
// channels-last GlobalAveragePool of a 40 x 80 map with 96 channels was 96
// threads, each adding 3200 elements one after another. Split into S parts
// along the run, the first kernel has S times as many outputs, each over an
// S times shorter part, and a second one combines the parts:
//
//   x [pre..., R..., post...] -> [pre..., S, R/S, post...]   (kiln.reshape)
//   parts  = reduce(x, axes = [p + 1])                       [pre..., S,
//   post...] result = reduce(parts, axes = [p])                       [pre...,
//   post...]
//
// (the reduced dims, adjacent, flattened to one run R). The same reduction
// twice: a sum of sums, a maximum of maxima, and a mean of means of equal
// parts are the reduction of the whole.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Shortest part of the run each output of the first kernel reduces.
constexpr int64_t kMinPart = 32;

template <typename ReduceOp>
struct SplitReduction : public OpRewritePattern<ReduceOp> {
  SplitReduction(MLIRContext *context, int64_t minOutputs, int64_t minRun,
                 int64_t minStridedRun, int64_t minElements)
      : OpRewritePattern<ReduceOp>(context), minOutputs(minOutputs),
        minRun(minRun), minStridedRun(minStridedRun), minElements(minElements) {
  }

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
    ArrayRef<int64_t> axes = op.getAxes();
    if (!type || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()) || axes.empty() ||
        type.getNumElements() < minElements)
      return failure();
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1)
        return failure();
    int64_t run = 1;
    for (int64_t axis : axes)
      run *= type.getDimSize(axis);
    if (run == 0)
      return failure();
    int64_t outputs = type.getNumElements() / run;
    // Reduced axes followed by others (a column sum of [rows, columns]):
    // each output is one GPU thread walking a strided run, not a warp.
    bool strided =
        type.getNumElements() / (run * outputsBefore(type, axes)) > 1;
    int64_t parts = partsOf(outputs, run, strided ? minStridedRun : minRun);
    if (parts == 1)
      return failure();

    // [pre..., S, R/S, post...]
    ArrayRef<int64_t> shape = type.getShape();
    int64_t first = axes.front();
    SmallVector<int64_t> split(shape.take_front(first));
    split.append({parts, run / parts});
    llvm::append_range(split, shape.drop_front(axes.back() + 1));
    Location partLoc = withoutOnnxValues(op.getLoc());
    Type element = type.getElementType();
    Value x =
        ReshapeOp::create(rewriter, partLoc,
                          RankedTensorType::get(split, element), op.getInput());
    SmallVector<int64_t> partShape(split);
    partShape.erase(partShape.begin() + first + 1);
    Value partResults = ReduceOp::create(
        rewriter, partLoc, RankedTensorType::get(partShape, element), x,
        rewriter.getDenseI64ArrayAttr({first + 1}),
        rewriter.getBoolAttr(false));
    SmallVector<int64_t> wholeShape(partShape);
    wholeShape.erase(wholeShape.begin() + first);
    auto resultType = cast<RankedTensorType>(op.getType());
    // keepdims: the reduced dims come back as 1s in a reshape, which then
    // holds the node's ONNX values.
    bool keptDims = resultType.getShape() != ArrayRef(wholeShape);
    Value whole = ReduceOp::create(
        rewriter, keptDims ? partLoc : op.getLoc(),
        RankedTensorType::get(wholeShape, element), partResults,
        rewriter.getDenseI64ArrayAttr({first}), rewriter.getBoolAttr(false));
    if (keptDims)
      whole = ReshapeOp::create(rewriter, op.getLoc(), resultType, whole);
    rewriter.replaceOp(op, whole);
    return success();
  }

  /// Elements of the dims before the reduced axes.
  static int64_t outputsBefore(RankedTensorType type, ArrayRef<int64_t> axes) {
    int64_t before = 1;
    for (int64_t d = 0; d < axes.front(); ++d)
      before *= type.getDimSize(d);
    return before;
  }

  /// Parts of the run: the fewest powers of two up to 256 that give
  /// minOutputs outputs, each part at least kMinPart long and the run
  /// divided evenly (else the most that do); 1 when the reduction has
  /// minOutputs outputs already or a run shorter than `shortest`.
  int64_t partsOf(int64_t outputs, int64_t run, int64_t shortest) const {
    if (outputs >= minOutputs || run < shortest)
      return 1;
    int64_t best = 1;
    for (int64_t parts = 2; parts <= 256; parts *= 2) {
      if (run % parts != 0 || run / parts < kMinPart)
        break;
      best = parts;
      if (outputs * parts >= minOutputs)
        break;
    }
    return best;
  }

  int64_t minOutputs, minRun, minStridedRun, minElements;
};

struct SplitReductionsPass
    : public kiln::impl::SplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitReduction<ReduceSumOp>, SplitReduction<ReduceMeanOp>,
                 SplitReduction<ReduceMaxOp>, SplitReduction<ReduceMinOp>>(
        &getContext(), minOutputs, minRun, minStridedRun, minElements);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
