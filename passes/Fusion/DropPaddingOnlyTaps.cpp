//===- DropPaddingOnlyTaps.cpp - window taps that only read padding -------===//
//
// A dilated convolution on a map smaller than its dilation has window taps
// that read the zero padding at every output pixel: DeepLabV3's ASPP at
// rates 12, 24 and 36 on a 3x3 map (a 96-pixel image at stride 32) is a
// 1x1 convolution with 72 pixels of padding on each side, and its padding
// kernel writes a 75x75 copy that the convolution reads in four GPU
// blocks. Those taps add zeros. The convolution keeps only the window's
// span of taps that read the image at some output pixel: its weight is
// sliced to them and its padding shrinks by the dropped taps' reach, so
// that every output pixel reads the same image pixels as before.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "FloatConstants.h"

#include "kiln/Dialect/OnnxValueNames.h"

namespace kiln {
#define GEN_PASS_DEF_DROPPADDINGONLYTAPS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The taps of one spatial dim that read the image, first and last, and
/// the padding that keeps the output pixels where they were.
struct LiveTaps {
  int64_t first, last, padBegin, padEnd;
};

/// Tap j of output pixel o reads input pixel o * stride + j * dilation -
/// padBegin; a tap is live when that lies in [0, size) for some o.
std::optional<LiveTaps> liveTaps(int64_t size, int64_t outputs, int64_t taps,
                                 int64_t stride, int64_t dilation,
                                 int64_t padBegin, int64_t padEnd) {
  int64_t first = taps, last = -1;
  for (int64_t j = 0; j < taps; ++j) {
    int64_t lowest = j * dilation - padBegin;
    int64_t highest = lowest + (outputs - 1) * stride;
    // Some o with lowest + o * stride in [0, size).
    bool reads = false;
    if (highest >= 0 && lowest < size) {
      int64_t o = lowest >= 0 ? 0 : llvm::divideCeil(-lowest, stride);
      reads = lowest + o * stride < size;
    }
    if (reads) {
      first = std::min(first, j);
      last = std::max(last, j);
    }
  }
  if (last < 0)
    return std::nullopt; // every tap reads padding: left to the lowering
  LiveTaps live{first, last, padBegin - first * dilation,
                padEnd - (taps - 1 - last) * dilation};
  if (live.padBegin < 0 || live.padEnd < 0)
    return std::nullopt; // a crop, not a padding: left as it is
  return live;
}

/// The weight's window cut to the live taps: a constant is stored cut, any
/// other weight is read through a kiln.slice.
Value cutWeight(OpBuilder &b, Location loc, Value weight,
                RankedTensorType cutType, ArrayRef<int64_t> starts) {
  auto type = cast<RankedTensorType>(weight.getType());
  if (auto constant = weight.getDefiningOp<ConstantOp>()) {
    SmallVector<int64_t> sourceStrides(type.getRank(), 1);
    for (int64_t d = type.getRank() - 2; d >= 0; --d)
      sourceStrides[d] = sourceStrides[d + 1] * type.getDimSize(d + 1);
    ArrayRef<int64_t> cutShape = cutType.getShape();
    FailureOr<ElementsAttr> cut = rearrangeFloatConstant(
        cast<ElementsAttr>(constant.getValue()), cutType,
        [&](int64_t i) {
          int64_t source = 0;
          for (int64_t d = cutType.getRank() - 1; d >= 0; --d) {
            source += (i % cutShape[d] + starts[d]) * sourceStrides[d];
            i /= cutShape[d];
          }
          return source;
        },
        ".taps");
    if (succeeded(cut))
      return ConstantOp::create(b, constant.getLoc(), *cut);
  }
  return SliceOp::create(
      b, loc, cutType, weight, b.getDenseI64ArrayAttr(starts),
      b.getDenseI64ArrayAttr(SmallVector<int64_t>(type.getRank(), 1)));
}

/// Rewrites `conv` when some of its window's taps only read padding.
void dropTaps(ConvOp conv) {
  auto inType = conv.getInput().getType();
  auto wType = conv.getWeight().getType();
  if (!inType.hasStaticShape() || !wType.hasStaticShape() ||
      !conv.getType().hasStaticShape())
    return;
  int64_t spatial = wType.getRank() - 2;
  int64_t firstSpatial = conv.getChannelsLast() ? 1 : 2;
  ArrayRef<int64_t> pads = conv.getPads();
  SmallVector<int64_t> starts(wType.getRank(), 0);
  SmallVector<int64_t> cutShape(wType.getShape());
  SmallVector<int64_t> newPads(pads);
  SmallVector<int64_t> dilations(conv.getDilations());
  bool dropsAny = false;
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<LiveTaps> live =
        liveTaps(inType.getDimSize(firstSpatial + d),
                 conv.getType().getDimSize(firstSpatial + d),
                 wType.getDimSize(2 + d), conv.getStrides()[d],
                 conv.getDilations()[d], pads[d], pads[spatial + d]);
    if (!live)
      return;
    starts[2 + d] = live->first;
    cutShape[2 + d] = live->last - live->first + 1;
    newPads[d] = live->padBegin;
    newPads[spatial + d] = live->padEnd;
    if (cutShape[2 + d] == 1)
      dilations[d] = 1; // one tap: no spacing
    dropsAny |= cutShape[2 + d] != wType.getDimSize(2 + d);
  }
  if (!dropsAny)
    return;
  OpBuilder b(conv);
  // The cut weight is part of the convolution's work, not one of its
  // ONNX values.
  Value weight = cutWeight(
      b, withoutOnnxValues(conv.getLoc()), conv.getWeight(),
      RankedTensorType::get(cutShape, wType.getElementType()), starts);
  conv.getWeightMutable().assign(weight);
  conv.setPads(newPads);
  conv.setDilations(dilations);
}

struct DropPaddingOnlyTapsPass
    : public kiln::impl::DropPaddingOnlyTapsBase<DropPaddingOnlyTapsPass> {
  void runOnOperation() override {
    getOperation().walk([](ConvOp conv) { dropTaps(conv); });
  }
};

} // namespace
