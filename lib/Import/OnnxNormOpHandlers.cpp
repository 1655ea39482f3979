//===- OnnxNormOpHandlers.cpp - batch, layer and instance normalization ---===//
//
// Normalizations become elementwise and reduction kiln ops, which fusion then
// groups. Batch normalization with constant statistics folds into one
// multiply-add per channel, computed here at import time.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

/// A [C] tensor reshaped to [C, 1, ..., 1] to broadcast against [N, C, ...].
static Value perChannel(NodeContext &ctx, Value v, int64_t rank) {
  SmallVector<int64_t> shape = {shapeOf(v).front()};
  shape.append(rank - 2, 1);
  return reshapeTo(ctx, v, shape);
}

/// Checks that inputs `first`..`last` hold one value per channel of `x`
/// ([C] for x [N, C, ...], rank 2 or more).
static LogicalResult requirePerChannel(NodeContext &ctx, Value x, int first,
                                       int last) {
  int64_t channels = shapeOf(x)[1];
  for (int i = first; i <= last; ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    if (shapeOf(v) != ArrayRef<int64_t>{channels})
      return ctx.fail("input " + std::to_string(i) + " must have shape [" +
                      std::to_string(channels) + "] (one value per channel)");
  }
  return success();
}

/// Chains binary kiln ops, stopping at the first failure.
template <typename OpTy>
static FailureOr<Value> apply(NodeContext &ctx, FailureOr<Value> lhs,
                              Value rhs) {
  if (failed(lhs))
    return failure();
  return ctx.create<OpTy>(ValueRange{*lhs, rhs});
}

static std::optional<std::vector<float>> floatValues(const ConstTensor *t) {
  if (!t || t->onnxType != onnx::TensorProto::FLOAT)
    return std::nullopt;
  std::vector<float> values(t->bytes.size() / 4);
  memcpy(values.data(), t->bytes.data(), values.size() * 4);
  return values;
}

/// (x - mean) / sqrt(var + eps) over `axes`, keeping the reduced dims; also
/// gives the mean and (population) variance, and 1 / sqrt(var + eps) for
/// LayerNormalization's outputs.
struct Normalized {
  Value value, mean, variance, invStdDev;
};

static FailureOr<Normalized> normalize(NodeContext &ctx, Value x,
                                       ArrayRef<int64_t> axes, float epsilon) {
  auto &b = ctx.b();
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes)),
      b.getNamedAttr("keepdims", b.getBoolAttr(true))};
  auto mean = ctx.create<ReduceMeanOp>(x, attrs);
  if (failed(mean))
    return failure();
  auto centered = ctx.create<SubOp>(ValueRange{x, *mean});
  if (failed(centered))
    return failure();
  auto squared = ctx.create<MulOp>(ValueRange{*centered, *centered});
  if (failed(squared))
    return failure();
  auto variance = ctx.create<ReduceMeanOp>(*squared, attrs);
  if (failed(variance))
    return failure();
  auto shifted = apply<AddOp>(ctx, *variance, ctx.scalar(x, epsilon));
  if (failed(shifted))
    return failure();
  auto root = ctx.create<SqrtOp>(*shifted);
  if (failed(root))
    return failure();
  auto value = ctx.create<DivOp>(ValueRange{*centered, *root});
  if (failed(value))
    return failure();
  Normalized result{*value, *mean, *variance, nullptr};
  if (auto inverse = ctx.create<ReciprocalOp>(*root); succeeded(inverse))
    result.invStdDev = *inverse;
  return result;
}

/// BatchNormalization-14+ with training_mode=1: normalized by the batch's
/// own mean and (population) variance per channel, and the running
/// statistics updated with `momentum` as outputs 1 and 2.
static LogicalResult importBatchNormTraining(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  if (rank < 2)
    return ctx.fail("input must have rank >= 2");
  if (failed(requirePerChannel(ctx, x, 1, 4)))
    return failure();
  Value s = ctx.input(1), bi = ctx.input(2), m = ctx.input(3), v = ctx.input(4);
  if (failed(ctx.requireSameDtype({x, s, bi, m, v})))
    return failure();
  float momentum = ctx.floatAttr("momentum", 0.9f);
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  auto normalized = normalize(ctx, x, axes, ctx.floatAttr("epsilon", 1e-5f));
  if (failed(normalized))
    return failure();
  auto scaled = apply<MulOp>(ctx, normalized->value, perChannel(ctx, s, rank));
  auto y = apply<AddOp>(ctx, scaled, perChannel(ctx, bi, rank));
  // running = input * momentum + current * (1 - momentum)
  int64_t channels = shapeOf(x)[1];
  auto running = [&](Value input, Value current) -> FailureOr<Value> {
    auto kept = apply<MulOp>(ctx, input, ctx.scalar(x, momentum));
    auto added = apply<MulOp>(ctx, reshapeTo(ctx, current, {channels}),
                              ctx.scalar(x, 1.0 - double(momentum)));
    if (failed(added))
      return failure();
    return apply<AddOp>(ctx, kept, *added);
  };
  auto runningMean = running(m, normalized->mean),
       runningVar = running(v, normalized->variance);
  if (failed(y) || failed(runningMean) || failed(runningVar))
    return failure();
  ctx.setOutput(0, *y);
  if (ctx.proto().output_size() > 1)
    ctx.setOutput(1, *runningMean);
  if (ctx.proto().output_size() > 2)
    ctx.setOutput(2, *runningVar);
  return success();
}

static LogicalResult importBatchNormalization(NodeContext &ctx) {
  if (ctx.intAttr("training_mode", 0) != 0 && ctx.opset() >= 14)
    return importBatchNormTraining(ctx);
  for (int i = 1; i < ctx.proto().output_size(); ++i)
    if (!ctx.proto().output(i).empty())
      return ctx.fail("training-mode outputs before opset 14 are not "
                      "supported");
  if (ctx.intAttr("training_mode", 0) != 0)
    return ctx.fail("training_mode=1 is not supported");
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  if (rank < 2)
    return ctx.fail("input must have rank >= 2");
  // scale, B, input_mean and input_var.
  if (failed(requirePerChannel(ctx, x, 1, 4)))
    return failure();
  int64_t channels = shapeOf(x)[1];
  float epsilon = ctx.floatAttr("epsilon", 1e-5f);
  auto scale = floatValues(ctx.constInput(1)),
       bias = floatValues(ctx.constInput(2));
  auto mean = floatValues(ctx.constInput(3)),
       var = floatValues(ctx.constInput(4));
  Type elementType = getElementTypeOrSelf(x.getType());
  if (scale && bias && mean && var && elementType.isF32()) {
    // y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a.
    std::vector<double> a(channels), b(channels);
    for (int64_t c = 0; c < channels; ++c) {
      a[c] = (*scale)[c] / std::sqrt(double((*var)[c]) + epsilon);
      b[c] = (*bias)[c] - (*mean)[c] * a[c];
    }
    SmallVector<int64_t> shape = {channels};
    shape.append(rank - 2, 1);
    auto type = RankedTensorType::get(shape, elementType);
    return setResult(
        ctx, apply<AddOp>(ctx, apply<MulOp>(ctx, x, ctx.constant(type, a)),
                          ctx.constant(type, b)));
  }
  Value s = ctx.input(1), bi = ctx.input(2), m = ctx.input(3), v = ctx.input(4);
  if (!s || !bi || !m || !v || failed(ctx.requireSameDtype({x, s, bi, m, v})))
    return failure();
  auto centered = apply<SubOp>(ctx, x, perChannel(ctx, m, rank));
  auto denominator =
      apply<AddOp>(ctx, perChannel(ctx, v, rank), ctx.scalar(x, epsilon));
  if (failed(denominator))
    return failure();
  auto root = ctx.create<SqrtOp>(*denominator);
  if (failed(root))
    return failure();
  auto normalized = apply<DivOp>(ctx, centered, *root);
  auto scaled = apply<MulOp>(ctx, normalized, perChannel(ctx, s, rank));
  return setResult(ctx, apply<AddOp>(ctx, scaled, perChannel(ctx, bi, rank)));
}

/// `v` plus the node's input `input` where the node has it.
static FailureOr<Value> plusOptionalInput(NodeContext &ctx, FailureOr<Value> v,
                                          size_t input) {
  if (failed(v) || !ctx.hasInput(input))
    return v;
  Value addend = ctx.input(input);
  if (!addend)
    return failure();
  return apply<AddOp>(ctx, v, addend);
}

/// LayerNormalization's outputs: the normalized value times `scale` (plus
/// the input `biasInput` where given), the mean and 1 / stddev.
static LogicalResult setLayerNormOutputs(NodeContext &ctx,
                                         const Normalized &normalized,
                                         Value scale, size_t biasInput) {
  auto scaled = plusOptionalInput(
      ctx, ctx.create<MulOp>(ValueRange{normalized.value, scale}), biasInput);
  if (failed(scaled))
    return failure();
  ctx.setOutput(0, *scaled);
  ctx.setOutput(1, normalized.mean);
  ctx.setOutput(2, normalized.invStdDev);
  return success();
}

static LogicalResult importLayerNormalization(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale || failed(ctx.requireFloat({x, scale})))
    return failure();
  int64_t rank = rankOf(x);
  int64_t axis = ctx.intAttr("axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis out of range");
  auto axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  auto normalized = normalize(ctx, x, axes, ctx.floatAttr("epsilon", 1e-5f));
  if (failed(normalized))
    return failure();
  return setLayerNormOutputs(ctx, *normalized, scale, /*biasInput=*/2);
}

/// com.microsoft SkipLayerNormalization (onnxruntime's fusion of a residual
/// add and LayerNorm): LayerNorm over the last axis of input + skip
/// (+ bias), times gamma (+ beta); outputs 1 and 2 are the mean and
/// 1 / stddev as LayerNormalization gives them, output 3 the sum.
static LogicalResult importSkipLayerNormalization(NodeContext &ctx) {
  Value x = ctx.input(0), skip = ctx.input(1), gamma = ctx.input(2);
  if (!x || !skip || !gamma || failed(ctx.requireFloat({x, skip, gamma})) ||
      failed(ctx.requireSameDtype({x, skip, gamma})))
    return failure();
  auto sum = plusOptionalInput(ctx, ctx.create<AddOp>(ValueRange{x, skip}),
                               /*input=*/4);
  if (failed(sum))
    return failure();
  auto normalized =
      normalize(ctx, *sum, {rankOf(x) - 1}, ctx.floatAttr("epsilon", 1e-12f));
  if (failed(normalized))
    return failure();
  ctx.setOutput(3, *sum);
  return setLayerNormOutputs(ctx, *normalized, gamma, /*biasInput=*/3);
}

static LogicalResult importInstanceNormalization(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (!x || !scale || !bias || failed(ctx.requireFloat({x, scale, bias})))
    return failure();
  int64_t rank = rankOf(x);
  if (rank < 3)
    return ctx.fail("input must have rank >= 3");
  if (failed(requirePerChannel(ctx, x, 1, 2)))
    return failure();
  auto axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  auto normalized = normalize(ctx, x, axes, ctx.floatAttr("epsilon", 1e-5f));
  if (failed(normalized))
    return failure();
  auto scaled =
      apply<MulOp>(ctx, normalized->value, perChannel(ctx, scale, rank));
  return setResult(ctx, apply<AddOp>(ctx, scaled, perChannel(ctx, bias, rank)));
}

void onnx_import::registerNormOps(OpRegistry &registry) {
  // clang-format off
  registry.add("BatchNormalization", 6, kMaxOpset, "inference mode; training mode (batch statistics, running statistics as outputs) from opset 14", importBatchNormalization);
  registry.add("InstanceNormalization", 6, kMaxOpset, "", importInstanceNormalization);
  registry.add("LayerNormalization", 17, kMaxOpset, "Y, Mean and InvStdDev", importLayerNormalization);
  registry.addInDomain("com.microsoft", "SkipLayerNormalization", 1, 1, "domain com.microsoft; the normalized output, mean, 1 / stddev and the input + skip + bias sum", importSkipLayerNormalization);
  // clang-format on
}
