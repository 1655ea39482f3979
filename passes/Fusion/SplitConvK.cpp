//===- SplitConvK.cpp - split a small, deep convolution's channels --------===//
//
// The convolution sibling of kiln-split-matmul-k. ResNet-50 at batch 1 ends
// in 14x14 and 7x7 maps with 256 to 2048 channels: a 3x3 convolution there
// is 231 MFLOP over 50176 or 25088 outputs, 112 GPU blocks of 56 threads
// that each walk all 2304 or 4608 products of an output one stage after
// another, while most SMs idle. Split into S parts along the input
// channels, the parts are S times as many blocks with S times shorter
// loops, and one more small kernel adds them up (and runs the bias and
// whatever elementwise epilogue follows). Two forms, both without copies
// of activations:
//
//   1x1, stride 1, no padding (over the flattened image, as the lowering
//   computes it anyway):
//     X [N, C, H, W] -> [N, S, C/S, H*W]                (kiln.reshape)
//     W [F, C, 1, 1] -> [F, S, C/S]                     (kiln.reshape)
//     partial = einsum("nskp,fsk->snfp")                [S, N, F, H*W]
//     Y = reduce_sum(reshape(partial) [S, N, F, H, W], axes = [0]) + bias
//
//   any other (a constant W, rearranged once at compile time):
//     W' [S*F, C/S, kh, kw], W'[s*F + f, c] = W[f, s*C/S + c]
//     partial = conv(X, W', group = S)                  [N, S*F, H', W']
//     Y = reduce_sum(reshape(partial) [N, S, F, H', W'], axes = [1]) + bias
//
// A grouped convolution's group s reads input channels s*C/S.. and writes
// the filters of group s: exactly part s of the sum. Float32 operands, or
// 16-bit ones widened to float32 (--precision=f16|bf16): those are split
// before their widening (the reshapes and the weight's rearrangement act
// on the 16-bit values), so the parts still take tensor cores (a part's
// channels are a multiple of 16: K of mma.sync) and their partial sums
// are float32. Groups of 1 only.
//
// A channels_last convolution (kiln-channels-last-activations, which runs
// first) splits the same way in its own layout: X [N, H, W, C] -> [N, H*W,
// S, C/S] and einsum("npsk,fsk->snpf") for the 1x1 form; a grouped
// channels_last partial [N, H', W', S*F] summed over dim 3 of [N, H', W',
// S, F] for the other; the bias broadcast along the last dim.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"
#include "Widening.h"

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SPLITCONVK
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isStaticF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

/// A 1x1 convolution at stride 1 without padding: a matmul per image.
bool isPointwise(ConvOp conv) {
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  return llvm::all_of(weight.getShape().drop_front(2),
                      [](int64_t k) { return k == 1; }) &&
         llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; });
}

struct SplitK : public OpRewritePattern<ConvOp> {
  SplitK(MLIRContext *context, int64_t minK, int64_t maxBlocks)
      : OpRewritePattern(context), minK(minK), maxBlocks(maxBlocks) {}

  /// Parts along the input channels: the most of 8, 4, 2 that leave each
  /// part a multiple of 16 channels and at least kSplitKMinPart products per
  /// output (channels x window), and at most 4 x maxBlocks blocks; 1 when
  /// the convolution has maxBlocks blocks already or K (channels x window)
  /// is shorter than minK.
  int64_t parts(int64_t outputs, int64_t channels, int64_t window) const {
    int64_t blocks =
        std::max<int64_t>(1, outputs / kSmallContractionBlockOutputs);
    if (channels * window < minK || blocks >= maxBlocks)
      return 1;
    for (int64_t s : {8, 4, 2})
      if (channels % (16 * s) == 0 && channels / s * window >= kSplitKMinPart &&
          blocks * s <= 4 * maxBlocks)
        return s;
    return 1;
  }

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    // Both operands float32 or both widened from 16 bits (one of each
    // would be a float32 contraction either way).
    if (conv.getGroup() != 1 || !isStaticF32(conv.getInput().getType()) ||
        !isStaticF32(conv.getWeight().getType()) ||
        !isStaticF32(conv.getType()) ||
        (conv.getBias() && !isStaticF32(conv.getBias().getType())) ||
        isWidened(conv.getInput()) != isWidened(conv.getWeight()))
      return failure();
    auto weight = cast<RankedTensorType>(conv.getWeight().getType());
    int64_t window = 1;
    for (int64_t k : weight.getShape().drop_front(2))
      window *= k;
    int64_t s =
        parts(conv.getType().getNumElements(), weight.getDimSize(1), window);
    if (s == 1)
      return failure();
    Value sum = isPointwise(conv) ? splitPointwise(rewriter, conv, s)
                                  : splitGrouped(rewriter, conv, s);
    if (!sum)
      return failure();
    Value result = sum;
    if (Value bias = conv.getBias()) {
      // The bias runs along the filters: [F] as [F, 1, ...] broadcasts over
      // the image (channels last, [F] broadcasts as it is).
      auto out = conv.getType();
      Value column = bias;
      if (!conv.getChannelsLast()) {
        SmallVector<int64_t> biasShape(out.getRank() - 1, 1);
        biasShape[0] = out.getDimSize(1);
        column = ReshapeOp::create(
            rewriter, withoutOnnxValues(conv.getLoc()),
            RankedTensorType::get(biasShape, out.getElementType()), bias);
      }
      result = AddOp::create(rewriter, conv.getLoc(), out, sum, column);
    }
    rewriter.replaceOp(conv, result);
    return success();
  }

  /// The einsum form; the sum over parts, [N, F, H, W] (no bias).
  Value splitPointwise(PatternRewriter &rewriter, ConvOp conv,
                       int64_t s) const {
    auto x = cast<RankedTensorType>(conv.getInput().getType());
    auto out = conv.getType();
    bool channelsLast = conv.getChannelsLast();
    int64_t n = x.getDimSize(0), c = x.getDimSize(conv.getChannelDim());
    int64_t f = out.getDimSize(conv.getChannelDim());
    int64_t pixels = out.getNumElements() / (n * f);
    Type f32 = rewriter.getF32Type();
    Location partLoc = withoutOnnxValues(conv.getLoc());
    Value xParts = reshapeBeforeWidening(
        rewriter, partLoc, conv.getInput(),
        channelsLast ? SmallVector<int64_t>{n, pixels, s, c / s}
                     : SmallVector<int64_t>{n, s, c / s, pixels});
    Value wParts = reshapeBeforeWidening(rewriter, partLoc, conv.getWeight(),
                                         {f, s, c / s});
    Value partial = EinsumOp::create(
        rewriter, partLoc,
        RankedTensorType::get(channelsLast
                                  ? SmallVector<int64_t>{s, n, pixels, f}
                                  : SmallVector<int64_t>{s, n, f, pixels},
                              f32),
        ValueRange{xParts, wParts},
        rewriter.getStringAttr(channelsLast ? "npsk,fsk->snpf"
                                            : "nskp,fsk->snfp"));
    // The parts as images, so that the sum's result is the convolution's
    // shape and its elementwise consumers (bias, residual, activation) join
    // its kernel: a reshape after the sum would end the kernel.
    SmallVector<int64_t> imageParts = {s};
    llvm::append_range(imageParts, out.getShape());
    Value partImages = ReshapeOp::create(
        rewriter, partLoc, RankedTensorType::get(imageParts, f32), partial);
    return ReduceSumOp::create(
        rewriter, conv.getBias() ? partLoc : conv.getLoc(), out, partImages,
        rewriter.getDenseI64ArrayAttr({0}), rewriter.getBoolAttr(false));
  }

  /// The grouped form over a rearranged constant weight; the sum over
  /// parts, [N, F, H', W'] (no bias). Null when the weight is not a
  /// readable constant.
  Value splitGrouped(PatternRewriter &rewriter, ConvOp conv, int64_t s) const {
    auto constant = storedValue(conv.getWeight()).getDefiningOp<ConstantOp>();
    if (!constant)
      return {};
    auto weight = cast<RankedTensorType>(constant.getType());
    int64_t f = weight.getDimSize(0), c = weight.getDimSize(1);
    int64_t window = weight.getNumElements() / (f * c);
    SmallVector<int64_t> groupedShape(weight.getShape());
    groupedShape[0] = s * f;
    groupedShape[1] = c / s;
    auto groupedType =
        RankedTensorType::get(groupedShape, weight.getElementType());
    // Element (s*F + f, c', w) of the result is element (f, s*C/S + c', w)
    // of the source.
    int64_t part = c / s;
    FailureOr<ElementsAttr> grouped = rearrangeFloatConstant(
        cast<ElementsAttr>(constant.getValue()), groupedType,
        [&](int64_t i) {
          int64_t w = i % window, rest = i / window;
          int64_t channel = rest % part, filter = rest / part;
          int64_t group = filter / f;
          return ((filter % f) * c + group * part + channel) * window + w;
        },
        ".split" + std::to_string(s));
    if (failed(grouped))
      return {};
    Location partLoc = withoutOnnxValues(conv.getLoc());
    Value groupedWeight =
        ConstantOp::create(rewriter, constant.getLoc(), *grouped);
    if (isWidened(conv.getWeight()))
      groupedWeight = CastOp::create(
          rewriter, partLoc,
          RankedTensorType::get(groupedShape, rewriter.getF32Type()),
          groupedWeight);
    auto out = conv.getType();
    int64_t channelDim = conv.getChannelDim();
    SmallVector<int64_t> partialShape(out.getShape());
    partialShape[channelDim] = s * f;
    Type f32 = rewriter.getF32Type();
    Value partial = ConvOp::create(
        rewriter, partLoc, RankedTensorType::get(partialShape, f32),
        conv.getInput(), groupedWeight, Value(), conv.getPadsAttr(),
        conv.getStridesAttr(), conv.getDilationsAttr(),
        rewriter.getI64IntegerAttr(s), conv.getChannelsLastAttr());
    // [.., S*F, ..] -> [.., S, F, ..]: the parts' dim just ahead of F.
    SmallVector<int64_t> partsShape(out.getShape());
    partsShape.insert(partsShape.begin() + channelDim, s);
    Value parts = ReshapeOp::create(
        rewriter, partLoc, RankedTensorType::get(partsShape, f32), partial);
    return ReduceSumOp::create(
        rewriter, conv.getBias() ? partLoc : conv.getLoc(), out, parts,
        rewriter.getDenseI64ArrayAttr({channelDim}),
        rewriter.getBoolAttr(false));
  }

  int64_t minK, maxBlocks;
};

struct SplitConvKPass : public kiln::impl::SplitConvKBase<SplitConvKPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitK>(&getContext(), minK, maxBlocks);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
