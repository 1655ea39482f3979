//===- SpaceToDepthStridedConvs.cpp - strided first convs on few channels
//--===//
//
// A network's first convolution reads the image's 3 channels with
// overlapping windows at stride 2 (ResNet's 7x7, the 3x3 of MobileNet,
// EfficientNet and Inception) or 4 (AlexNet's 11x11). As implicit GEMM its
// K is those 3 channels, which matrix instructions (16 along K) cannot
// take, so on GPUs it ran as float32 thread tiles; patch embeddings, whose
// windows do not overlap, are einsums instead (kiln-patchify-convs-as-
// einsums).
//
// At stride s, output (y, x) reads input rows s*y + r - p0 (r the kernel
// row, p0 the begin pad). Cut the padded input into s x s blocks and stack
// each block's pixels as channels (space to depth: [N, C, H, W] ->
// [N, C*s*s, H/s, W/s], a pad, a transpose and two reshapes), and cut the
// kernel the same way: the convolution becomes a stride-1 one over C*s*s
// channels (12 for an RGB image at stride 2, 48 at stride 4) with a
// ceil(k/s)-wide kernel, which matrix instructions take (paddedMatrixK: 12
// as 16). So that the blocks start where the windows do, the begin pad is
// rounded up to a multiple of s and the kernel shifted by as many zero
// rows and columns; the kernel is padded with zeros to a multiple of s.
// ResNet's 7x7 stride 2 (pad 3) becomes a 4x4 convolution over 12
// channels: 16 window positions of 12 channels (as 16) instead of 49 of 3
// (as 16), 1.7x the useful products instead of 5.3x.
//
// Where the K that matrix instructions walk is a whole number of blocks
// of channels (16 = 4 x 2 x 2), the image gets zero channels up to it in
// the same pad (3 -> 4; the weight's extra channels are zero): the same
// products, but each pixel's channels are whole 16-byte runs at 16 bits,
// which the stage copies take with cp.async (12 channels are 24 bytes:
// ResNet-50's stem read 55% of the bytes of its sectors).
//
// The weights are rearranged at compile time (float32 constants only, so
// the pass runs before kiln-demote-precision).
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"

#include "kiln/Dialect/OnnxValueNames.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SPACETODEPTHSTRIDEDCONVS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// How one spatial dim of the convolution maps onto the blocked input.
struct BlockedDim {
  /// Zero rows (columns) put before the kernel so that the begin pad is a
  /// multiple of the stride.
  int64_t shift = 0;
  /// Pads of the input before it is cut into blocks.
  int64_t padBegin = 0, padEnd = 0;
  /// The kernel's extent in blocks, and the input's.
  int64_t kernelBlocks = 0, inputBlocks = 0;
};

/// The blocked form of a dim of input extent `input`, kernel `kernel`,
/// begin pad `begin`, stride `s` and output extent `output`; failure when
/// the input reaches past the last block the outputs read (it would need a
/// crop as well). Every product of a real weight reads what the
/// convolution reads: an input element or its zero padding.
FailureOr<BlockedDim> blockDim(int64_t input, int64_t kernel, int64_t begin,
                               int64_t s, int64_t output) {
  BlockedDim dim;
  dim.shift = (s - begin % s) % s;
  dim.padBegin = begin + dim.shift;
  dim.kernelBlocks = llvm::divideCeil(kernel + dim.shift, s);
  // Output y reads blocks y .. y + kernelBlocks - 1.
  dim.inputBlocks = output + dim.kernelBlocks - 1;
  dim.padEnd = s * dim.inputBlocks - dim.padBegin - input;
  if (dim.padEnd < 0)
    return failure();
  return dim;
}

/// A 2-D convolution with static shapes, one group, no dilation, equal
/// strides s >= 2, windows that overlap, whose input channels matrix
/// instructions cannot take as K but whose blocks' channels (C*s*s) they can,
/// and a float32 constant weight.
bool isCandidate(ConvOp conv) {
  auto inType = conv.getInput().getType();
  auto wType = conv.getWeight().getType();
  auto outType = conv.getType();
  if (conv.getGroup() != 1 || inType.getRank() != 4 ||
      !inType.hasStaticShape() || !wType.hasStaticShape() ||
      !outType.hasStaticShape() || !wType.getElementType().isF32())
    return false;
  if (llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
    return false;
  int64_t s = conv.getStrides()[0];
  if (s < 2 || conv.getStrides()[1] != s)
    return false;
  // Windows that do not overlap (patch embeddings: kiln-patchify-convs-
  // as-einsums; strided 1x1 kernels: kiln-split-pointwise-conv-stride)
  // are left to those passes.
  if (wType.getDimSize(2) <= s && wType.getDimSize(3) <= s)
    return false;
  int64_t channels = inType.getDimSize(1);
  if (paddedMatrixK(channels) > 0 || paddedMatrixK(channels * s * s) == 0)
    return false;
  return conv.getWeight().getDefiningOp<ConstantOp>() != nullptr;
}

/// The weight [O, C, kh, kw] as [O, paddedC*s*s, kbh, kbw]: channel
/// c*s*s + a*s + b, kernel position (i, j) holds the original's (i*s + a -
/// shiftH, j*s + b - shiftW), zero outside it and for c >= C.
FailureOr<ElementsAttr> blockWeight(ElementsAttr weight, int64_t s,
                                    const BlockedDim &h, const BlockedDim &w,
                                    int64_t paddedC) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t filters = type.getDimSize(0), channels = type.getDimSize(1);
  int64_t kh = type.getDimSize(2), kw = type.getDimSize(3);
  int64_t blockChannels = paddedC * s * s;
  auto blockedType = RankedTensorType::get(
      {filters, blockChannels, h.kernelBlocks, w.kernelBlocks},
      type.getElementType());
  return rearrangeFloatConstant(
      weight, blockedType,
      [&](int64_t index) -> int64_t {
        int64_t j = index % w.kernelBlocks;
        index /= w.kernelBlocks;
        int64_t i = index % h.kernelBlocks;
        index /= h.kernelBlocks;
        int64_t blockChannel = index % blockChannels;
        int64_t o = index / blockChannels;
        int64_t c = blockChannel / (s * s);
        int64_t a = blockChannel / s % s, b = blockChannel % s;
        int64_t r = i * s + a - h.shift, q = j * s + b - w.shift;
        if (c >= channels || r < 0 || r >= kh || q < 0 || q >= kw)
          return -1;
        return ((o * channels + c) * kh + r) * kw + q;
      },
      ".s2d");
}

struct SpaceToDepthConv : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!isCandidate(conv))
      return failure();
    auto inType = conv.getInput().getType();
    auto outType = conv.getType();
    auto wType = conv.getWeight().getType();
    int64_t s = conv.getStrides()[0];
    ArrayRef<int64_t> pads = conv.getPads();
    FailureOr<BlockedDim> h =
        blockDim(inType.getDimSize(2), wType.getDimSize(2), pads[0], s,
                 outType.getDimSize(2));
    FailureOr<BlockedDim> w =
        blockDim(inType.getDimSize(3), wType.getDimSize(3), pads[1], s,
                 outType.getDimSize(3));
    if (failed(h) || failed(w))
      return failure();
    auto weights = conv.getWeight().getDefiningOp<ConstantOp>();
    int64_t c = inType.getDimSize(1);
    int64_t walkedK = paddedMatrixK(c * s * s);
    int64_t paddedC = walkedK % (s * s) == 0 ? walkedK / (s * s) : c;
    FailureOr<ElementsAttr> blockedWeight =
        blockWeight(cast<ElementsAttr>(weights.getValue()), s, *h, *w, paddedC);
    if (failed(blockedWeight))
      return failure();

    Location loc = withoutOnnxValues(conv.getLoc());
    Type element = inType.getElementType();
    int64_t n = inType.getDimSize(0);
    int64_t rows = s * h->inputBlocks, cols = s * w->inputBlocks;
    Value input = conv.getInput();
    if (h->padBegin || h->padEnd || w->padBegin || w->padEnd || paddedC > c)
      input = PadOp::create(
          rewriter, loc,
          RankedTensorType::get({n, paddedC, rows, cols}, element), input,
          rewriter.getDenseI64ArrayAttr({0, 0, h->padBegin, w->padBegin, 0,
                                         paddedC - c, h->padEnd, w->padEnd}),
          rewriter.getStringAttr("constant"), rewriter.getF64FloatAttr(0.0));
    // [N, C, Hb, s, Wb, s] -> [N, C, s, s, Hb, Wb] -> [N, C*s*s, Hb, Wb].
    Value blocks = ReshapeOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {n, paddedC, h->inputBlocks, s, w->inputBlocks, s}, element),
        input);
    Value stacked = TransposeOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {n, paddedC, s, s, h->inputBlocks, w->inputBlocks}, element),
        blocks, rewriter.getDenseI64ArrayAttr({0, 1, 3, 5, 2, 4}));
    Value blockInput = ReshapeOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {n, paddedC * s * s, h->inputBlocks, w->inputBlocks}, element),
        stacked);
    Value weight =
        ConstantOp::create(rewriter, weights.getLoc(), *blockedWeight);
    // The result is the convolution's own (its ONNX value, for kiln-bisect).
    rewriter.replaceOpWithNewOp<ConvOp>(
        conv, outType, blockInput, weight, conv.getBias(),
        rewriter.getDenseI64ArrayAttr({0, 0, 0, 0}),
        rewriter.getDenseI64ArrayAttr({1, 1}),
        rewriter.getDenseI64ArrayAttr({1, 1}), rewriter.getI64IntegerAttr(1));
    return success();
  }
};

struct SpaceToDepthStridedConvsPass
    : public kiln::impl::SpaceToDepthStridedConvsBase<
          SpaceToDepthStridedConvsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SpaceToDepthConv>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
