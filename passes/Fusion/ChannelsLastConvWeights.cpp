//===- ChannelsLastConvWeights.cpp - store KxK conv weights [F][kh][kw][C]
//-===//
//
// ONNX stores a convolution's weight [F][C][kh][kw]. The GPU kernels walk
// K as input channels inside the window loops (kh, kw outside): a stage
// reads W[f][c][r][s] for a range of c at one (r, s), elements kh*kw apart
// along c and C*kh*kw apart along f. Nothing is contiguous, so every stage
// copy moves one element per thread, and a warp's 32 two-byte loads touch
// 18 sectors (ResNet-50's 3x3 convolutions at float16: 11% of the bytes
// fetched used, kiln-emulate-gpu --memory-traffic). 1x1 convolutions do
// not have this problem: their weight is [F][C], contiguous along K.
//
// A constant weight of a convolution whose window is more than one
// element is stored [F][kh][kw][C] instead (rearranged once at compile
// time) and read through a kiln.transpose back to [F][C][kh][kw]:
// kiln-form-dispatch-regions puts that transpose in the convolution's
// kernel and kiln-fuse-elementwise-producers folds it into the
// convolution's indexing map, so the kernel reads the stored weight
// directly, contiguous along c like a 1x1 convolution's. GPU targets only
// (the CPU kernels' loop order reads the ONNX layout well). Grouped
// convolutions too (split-K's: the lowering's expand_shape of the weight
// to [G, F/G, ...] moves ahead of the transpose). Runs after
// kiln-demote-precision: the constant may be float16 behind its widening.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"

#include "kiln/Dialect/OnnxValueNames.h"
#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_CHANNELSLASTCONVWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ChannelsLastConvWeightsPass
    : public kiln::impl::ChannelsLastConvWeightsBase<
          ChannelsLastConvWeightsPass> {
  void runOnOperation() override {
    getOperation().walk([&](ConvOp conv) { rewrite(conv); });
  }

  /// The weight operand's constant: the conv's operand itself, or the
  /// operand of the widening cast that the conv reads (--precision).
  static OpOperand *constantOperand(ConvOp conv) {
    OpOperand *operand = &conv.getWeightMutable();
    if (auto cast = operand->get().getDefiningOp<CastOp>();
        cast && cast.isWidening() && cast->hasOneUse())
      operand = &cast->getOpOperand(0);
    return operand->get().getDefiningOp<ConstantOp>() ? operand : nullptr;
  }

  /// A depthwise convolution on NHWC activations
  /// (kiln-channels-last-activations): neighbouring GPU threads take
  /// neighbouring channels, so its weight [C][1][k...] is read C-major,
  /// kh*kw elements apart.
  static bool isChannelsLastDepthwise(ConvOp conv, RankedTensorType weight) {
    return conv.getChannelsLast() && weight.getDimSize(1) == 1 &&
           conv.getGroup() == weight.getDimSize(0) && conv.getGroup() > 1;
  }

  void rewrite(ConvOp conv) {
    auto type = dyn_cast<RankedTensorType>(conv.getWeight().getType());
    if (!type || !type.hasStaticShape() || type.getRank() < 3)
      return;
    int64_t rank = type.getRank();
    SmallVector<int64_t> toStored, toOnnx;
    if (isChannelsLastDepthwise(conv, type)) {
      // [C][1][k...] stored as [1][k...][C]: a window position's channels
      // contiguous.
      for (int64_t d = 1; d < rank; ++d)
        toStored.push_back(d);
      toStored.push_back(0);
      toOnnx.push_back(rank - 1);
      for (int64_t d = 0; d + 1 < rank; ++d)
        toOnnx.push_back(d);
    } else {
      // Not for another depthwise convolution's [F][1][k...] (nothing to
      // gather along C) nor a 1x1's [F][C][1...] (contiguous along C
      // already).
      if (type.getDimSize(1) == 1 ||
          type.getNumElements() == type.getDimSize(0) * type.getDimSize(1))
        return;
      // [F][C][k...] stored as [F][k...][C], read back through the inverse
      // permutation.
      toStored = {0};
      toOnnx = {0, rank - 1};
      for (int64_t d = 2; d < rank; ++d)
        toStored.push_back(d);
      toStored.push_back(1);
      for (int64_t d = 1; d + 1 < rank; ++d)
        toOnnx.push_back(d);
    }
    OpOperand *operand = constantOperand(conv);
    if (!operand)
      return;
    auto constant = operand->get().getDefiningOp<ConstantOp>();
    FailureOr<ElementsAttr> stored = permuteFloatConstant(
        cast<ElementsAttr>(constant.getValue()), toStored, ".fkc");
    if (failed(stored))
      return;
    OpBuilder b(operand->getOwner());
    Value channelsLastWeight =
        ConstantOp::create(b, constant.getLoc(), *stored);
    // Part of the convolution's work, named by its node (the kernel's
    // name) but holding none of its ONNX values.
    Location loc = withoutOnnxValues(conv.getLoc());
    Value asOnnx = TransposeOp::create(
        b, loc, cast<RankedTensorType>(operand->get().getType()),
        channelsLastWeight, b.getDenseI64ArrayAttr(toOnnx));
    operand->set(asOnnx);
    if (constant->use_empty())
      constant->erase();
  }
};

} // namespace
