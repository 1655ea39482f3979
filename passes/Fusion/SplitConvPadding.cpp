//===- SplitConvPadding.cpp - a convolution's padding as its own op -------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SPLITCONVPADDING
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// One input and one output channel per group (see split-depthwise).
bool isDepthwise(ConvOp conv) {
  int64_t groups = conv.getGroup();
  return groups > 1 && conv.getInput().getType().getDimSize(1) == groups &&
         conv.getType().getDimSize(1) == groups;
}

struct SplitPadding : public OpRewritePattern<ConvOp> {
  SplitPadding(MLIRContext *context, bool splitDepthwise)
      : OpRewritePattern(context), splitDepthwise(splitDepthwise) {}
  bool splitDepthwise;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> pads = conv.getPads();
    if (llvm::all_of(pads, [](int64_t p) { return p == 0; }) ||
        (!splitDepthwise && isDepthwise(conv)))
      return failure();
    auto inType = conv.getInput().getType();
    int64_t rank = inType.getRank(), spatial = rank - 2;
    // kiln.pad wants begin pads of every dim, then end pads.
    SmallVector<int64_t> padAll(2 * rank, 0);
    SmallVector<int64_t> shape(inType.getShape());
    for (int64_t i = 0; i < spatial; ++i) {
      padAll[i + 2] = pads[i];
      padAll[rank + i + 2] = pads[i + spatial];
      shape[i + 2] += pads[i] + pads[i + spatial];
    }
    // A 16-bit input widened for the convolution (--precision, float16
    // models) is padded as it is and widened after: the padding kernel
    // moves half the bytes and the widening stays the convolution's
    // prologue.
    Value source = conv.getInput();
    auto widen = source.getDefiningOp<CastOp>();
    if (widen &&
        !isa<FloatType>(getElementTypeOrSelf(widen.getInput().getType())))
      widen = nullptr;
    if (widen)
      source = widen.getInput();
    auto paddedType = RankedTensorType::get(
        shape, cast<RankedTensorType>(source.getType()).getElementType());
    // The padded copy is part of the convolution's work, not its output.
    Location partLoc = withoutOnnxValues(conv.getLoc());
    Value padded = PadOp::create(rewriter, partLoc, paddedType, source,
                                 rewriter.getDenseI64ArrayAttr(padAll),
                                 rewriter.getStringAttr("constant"),
                                 rewriter.getF64FloatAttr(0.0));
    if (widen)
      padded = CastOp::create(
          rewriter, partLoc,
          RankedTensorType::get(shape, inType.getElementType()), padded);
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(padded);
      conv.setPads(SmallVector<int64_t>(2 * spatial, 0));
    });
    return success();
  }
};

struct SplitConvPaddingPass
    : public kiln::impl::SplitConvPaddingBase<SplitConvPaddingPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitPadding>(&getContext(), splitDepthwise);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
