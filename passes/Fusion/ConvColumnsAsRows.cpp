//===- ConvColumnsAsRows.cpp - a one-column convolution as a one-row one
//---===//
//
// A 1-D convolution exported as a 2-D one over a [N, C, H, 1] image with a
// [kh, 1] window (tf2onnx writes Keras's Conv1D so: Magika's byte
// classifier) has output rows of one pixel. Every convolution kernel
// vectorizes or tiles along the output row (the CPU's register tiles, the
// GPU's implicit-GEMM rows), so such a row ran a lane wide: 28 GFLOP/s on
// a CPU core that does 80. The image and window are reshaped (free: a unit
// dim moves) to [N, C, 1, H] and [1, kh], the convolution computes one row
// of H pixels, and its result is reshaped back.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_CONVCOLUMNSASROWS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// [.., H, 1] -> [.., 1, H] (and back): the last two dims swapped, one of
/// them 1, so the data does not move.
RankedTensorType swapLastTwo(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  return type.clone(shape);
}

/// A 2-D NCHW convolution, static shapes, whose image, window and result
/// are one column wide, unpadded along it, and at least two rows high.
bool isColumnConv(ConvOp conv) {
  RankedTensorType in = conv.getInput().getType();
  RankedTensorType weight = conv.getWeight().getType();
  RankedTensorType out = conv.getType();
  if (conv.getChannelsLast() || in.getRank() != 4 || !in.hasStaticShape() ||
      !weight.hasStaticShape() || !out.hasStaticShape())
    return false;
  ArrayRef<int64_t> pads = conv.getPads();
  return in.getDimSize(3) == 1 && weight.getDimSize(3) == 1 &&
         out.getDimSize(3) == 1 && pads[1] == 0 && pads[3] == 0 &&
         out.getDimSize(2) > 1;
}

struct ColumnAsRow : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!isColumnConv(conv))
      return failure();
    Location partLoc = withoutOnnxValues(conv.getLoc());
    auto reshape = [&](Value v) -> Value {
      return ReshapeOp::create(rewriter, partLoc,
                               swapLastTwo(cast<RankedTensorType>(v.getType())),
                               v);
    };
    ArrayRef<int64_t> pads = conv.getPads();
    ArrayRef<int64_t> strides = conv.getStrides();
    ArrayRef<int64_t> dilations = conv.getDilations();
    Value row = ConvOp::create(
        rewriter, partLoc, swapLastTwo(conv.getType()),
        reshape(conv.getInput()), reshape(conv.getWeight()), conv.getBias(),
        rewriter.getDenseI64ArrayAttr({0, pads[0], 0, pads[2]}),
        rewriter.getDenseI64ArrayAttr({1, strides[0]}),
        rewriter.getDenseI64ArrayAttr({1, dilations[0]}), conv.getGroupAttr(),
        conv.getChannelsLastAttr());
    rewriter.replaceOpWithNewOp<ReshapeOp>(conv, conv.getType(), row);
    return success();
  }
};

struct ConvColumnsAsRowsPass
    : public kiln::impl::ConvColumnsAsRowsBase<ConvColumnsAsRowsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ColumnAsRow>(&getContext());
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
