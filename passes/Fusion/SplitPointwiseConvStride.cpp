//===- SplitPointwiseConvStride.cpp - subsample, then a 1x1 convolution ---===//
//
// A 1x1 convolution at stride s reads every s-th pixel of every s-th row:
// its image cannot be flattened into one row (see kFlattenImageRowsBelow),
// so on a 7x7 output (ResNet's downsample convolutions) the register tiles
// run 7 lanes wide. Taking the pixels first, with a kiln.slice that becomes
// its own small copy kernel, leaves a stride-1 pointwise convolution that
// computes over the flattened image. Long rows gain too: a stride-2 vector
// is a masked load and a shuffle per input channel, a stride-1 one a plain
// load (ResNet-50's layer2 downsample onto 28x28: 1.74 -> 1.48 ms with the
// copy).
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SPLITPOINTWISECONVSTRIDE
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A 1x1, unpadded, ungrouped convolution with a stride above 1 and static
/// shapes.
bool isStridedPointwise(ConvOp conv) {
  auto inType = conv.getInput().getType();
  auto wType = conv.getWeight().getType();
  auto resultType = conv.getType();
  if (conv.getGroup() != 1 || resultType.getRank() < 4 ||
      !inType.hasStaticShape() || !resultType.hasStaticShape())
    return false;
  if (llvm::any_of(conv.getPads(), [](int64_t p) { return p != 0; }) ||
      llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }))
    return false;
  for (int64_t i = 2; i < resultType.getRank(); ++i)
    if (wType.getDimSize(i) != 1)
      return false;
  return true;
}

struct SplitStride : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!isStridedPointwise(conv))
      return failure();
    auto inType = conv.getInput().getType();
    int64_t rank = inType.getRank();
    SmallVector<int64_t> shape(inType.getShape());
    SmallVector<int64_t> steps(rank, 1);
    for (int64_t i = 2; i < rank; ++i) {
      shape[i] = conv.getType().getDimSize(i);
      steps[i] = conv.getStrides()[i - 2];
    }
    // A 16-bit input widened for the convolution (--precision, float16
    // models) is subsampled as it is and widened after: the copy kernel
    // moves half the bytes and the widening stays the convolution's
    // prologue (its operand then stays 16-bit: tensor cores).
    Value source = conv.getInput();
    bool widened = isWidened(source);
    if (widened)
      source = source.getDefiningOp<CastOp>().getInput();
    // The subsampled input is part of the convolution's work, not its
    // output.
    Location partLoc = withoutOnnxValues(conv.getLoc());
    Value pixels = SliceOp::create(
        rewriter, partLoc,
        RankedTensorType::get(shape, getElementTypeOrSelf(source.getType())),
        source, rewriter.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 0)),
        rewriter.getDenseI64ArrayAttr(steps));
    if (widened)
      pixels = CastOp::create(
          rewriter, partLoc,
          RankedTensorType::get(shape, inType.getElementType()), pixels);
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(pixels);
      conv.setStrides(SmallVector<int64_t>(rank - 2, 1));
    });
    return success();
  }
};

struct SplitPointwiseConvStridePass
    : public kiln::impl::SplitPointwiseConvStrideBase<
          SplitPointwiseConvStridePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitStride>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
