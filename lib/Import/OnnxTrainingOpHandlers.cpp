//===- OnnxTrainingOpHandlers.cpp - Adagrad, Momentum, Adam ---------------===//
//
// The optimizer update rules of the ai.onnx.preview.training domain are
// elementwise formulas over each (X, G, state) group; they become kiln ops.
// Inputs: R (learning rate) and T (step count) scalars, then every X, every
// G and every state tensor; outputs: every new X, then every new state.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Builds elementwise kiln ops, remembering the first failure.
class Math : public ChainedOps {
public:
  explicit Math(NodeContext &ctx) : ctx(ctx) {}
  Value c(Value like, double v) { return ctx.scalar(like, v); }
  Value add(Value a, Value b) {
    return check(ctx.create<AddOp>(ValueRange{a, b}));
  }
  Value sub(Value a, Value b) {
    return check(ctx.create<SubOp>(ValueRange{a, b}));
  }
  Value mul(Value a, Value b) {
    return check(ctx.create<MulOp>(ValueRange{a, b}));
  }
  Value div(Value a, Value b) {
    return check(ctx.create<DivOp>(ValueRange{a, b}));
  }
  Value pow(Value a, Value b) {
    return check(ctx.create<PowOp>(ValueRange{a, b}));
  }
  Value sqrt(Value a) {
    return check(a ? ctx.create<SqrtOp>(a) : FailureOr<Value>(failure()));
  }
  Value select(Value cond, Value a, Value b) {
    return check(ctx.create<WhereOp>(ValueRange{cond, a, b}));
  }
  Value greater(Value a, Value b) {
    return check(ctx.create<GreaterOp>(ValueRange{a, b}));
  }

private:
  NodeContext &ctx;
};

struct Optimizer {
  Value rate; // R, a float scalar
  Value step; // T, as a float scalar of R's type
  size_t groups;
};

/// Checks the input layout (R, T, then `stateCount` + 2 tensors per group).
FailureOr<Optimizer> readOptimizer(NodeContext &ctx, size_t stateCount) {
  size_t perGroup = 2 + stateCount;
  if (ctx.numInputs() < 2 + perGroup || (ctx.numInputs() - 2) % perGroup != 0)
    return ctx.fail("expected R, T and " + Twine(perGroup) +
                    " tensors per optimized tensor"),
           failure();
  Value r = ctx.input(0), t = ctx.input(1);
  if (!r || !t || failed(ctx.requireFloat(r)))
    return failure();
  Value rate = reshapeTo(ctx, r, {});
  Value step = reshapeTo(ctx, t, {});
  if (getElementTypeOrSelf(step.getType()) !=
      getElementTypeOrSelf(rate.getType()))
    step = CastOp::create(
        ctx.b(), ctx.getLoc(),
        RankedTensorType::get({}, getElementTypeOrSelf(rate.getType())), step);
  return Optimizer{rate, step, (ctx.numInputs() - 2) / perGroup};
}

} // namespace

static LogicalResult importAdagrad(NodeContext &ctx) {
  auto opt = readOptimizer(ctx, 1);
  if (failed(opt))
    return failure();
  double decay = ctx.floatAttr("decay_factor", 0.0f);
  double epsilon = ctx.floatAttr("epsilon", 0.0f);
  double norm = ctx.floatAttr("norm_coefficient", 0.0f);
  Math m(ctx);
  // r = R / (1 + T * decay)
  Value r = m.div(opt->rate, m.add(m.c(opt->rate, 1),
                                   m.mul(opt->step, m.c(opt->rate, decay))));
  for (size_t i = 0; i < opt->groups; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + opt->groups + i);
    Value h = ctx.input(2 + 2 * opt->groups + i);
    if (!x || !g || !h)
      return failure();
    Value gReg = m.add(m.mul(m.c(x, norm), x), g);
    Value hNew = m.add(h, m.mul(gReg, gReg));
    Value adaptive = m.add(m.sqrt(hNew), m.c(x, epsilon));
    Value xNew = m.sub(x, m.div(m.mul(r, gReg), adaptive));
    ctx.setOutput(i, xNew);
    ctx.setOutput(opt->groups + i, hNew);
  }
  return m.failed() ? ctx.fail("could not build the Adagrad update")
                    : success();
}

static LogicalResult importMomentum(NodeContext &ctx) {
  auto opt = readOptimizer(ctx, 1);
  if (failed(opt))
    return failure();
  double alpha = ctx.floatAttr("alpha", 0.0f),
         beta = ctx.floatAttr("beta", 0.0f);
  double norm = ctx.floatAttr("norm_coefficient", 0.0f);
  std::string mode = ctx.stringAttr("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return ctx.fail("mode '" + mode + "' is not valid");
  Math m(ctx);
  // The first step (T == 0) does not scale the gradient by beta.
  Value betaAdjusted = m.select(m.greater(opt->step, m.c(opt->step, 0)),
                                m.c(opt->rate, beta), m.c(opt->rate, 1));
  for (size_t i = 0; i < opt->groups; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + opt->groups + i);
    Value v = ctx.input(2 + 2 * opt->groups + i);
    if (!x || !g || !v)
      return failure();
    Value gReg = m.add(m.mul(m.c(x, norm), x), g);
    Value vNew = m.add(m.mul(m.c(v, alpha), v), m.mul(betaAdjusted, gReg));
    Value direction =
        mode == "standard" ? vNew : m.add(gReg, m.mul(m.c(v, alpha), vNew));
    ctx.setOutput(i, m.sub(x, m.mul(opt->rate, direction)));
    ctx.setOutput(opt->groups + i, vNew);
  }
  return m.failed() ? ctx.fail("could not build the Momentum update")
                    : success();
}

static LogicalResult importAdam(NodeContext &ctx) {
  auto opt = readOptimizer(ctx, 2);
  if (failed(opt))
    return failure();
  double alpha = ctx.floatAttr("alpha", 0.9f),
         beta = ctx.floatAttr("beta", 0.999f);
  double epsilon = ctx.floatAttr("epsilon", 0.0f);
  double norm = ctx.floatAttr("norm_coefficient", 0.0f);
  double normPost = ctx.floatAttr("norm_coefficient_post", 0.0f);
  Math m(ctx);
  Value one = m.c(opt->rate, 1);
  // R * sqrt(1 - beta^T) / (1 - alpha^T) once T > 0, else R.
  Value corrected =
      m.div(m.mul(opt->rate,
                  m.sqrt(m.sub(one, m.pow(m.c(opt->rate, beta), opt->step)))),
            m.sub(one, m.pow(m.c(opt->rate, alpha), opt->step)));
  Value rate =
      m.select(m.greater(opt->step, m.c(opt->step, 0)), corrected, opt->rate);
  size_t n = opt->groups;
  for (size_t i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i);
    Value v = ctx.input(2 + 2 * n + i), h = ctx.input(2 + 3 * n + i);
    if (!x || !g || !v || !h)
      return failure();
    Value gReg = m.add(m.mul(m.c(x, norm), x), g);
    Value vNew = m.add(m.mul(m.c(v, alpha), v), m.mul(m.c(v, 1 - alpha), gReg));
    Value hNew = m.add(m.mul(m.c(h, beta), h),
                       m.mul(m.c(h, 1 - beta), m.mul(gReg, gReg)));
    Value denominator = m.add(m.sqrt(hNew), m.c(h, epsilon));
    Value xNew = m.sub(x, m.div(m.mul(rate, vNew), denominator));
    if (normPost != 0)
      xNew = m.mul(m.c(x, 1 - normPost), xNew);
    ctx.setOutput(i, xNew);
    ctx.setOutput(n + i, vNew);
    ctx.setOutput(2 * n + i, hNew);
  }
  return m.failed() ? ctx.fail("could not build the Adam update") : success();
}

/// The optimizers of the training preview domain.
void onnx_import::registerTrainingOps(OpRegistry &registry) {
  registry.addInDomain("ai.onnx.preview.training", "Adagrad", 1, 1,
                       "domain ai.onnx.preview.training (opset 1)",
                       importAdagrad);
  registry.addInDomain("ai.onnx.preview.training", "Momentum", 1, 1,
                       "domain ai.onnx.preview.training (opset 1)",
                       importMomentum);
  registry.addInDomain("ai.onnx.preview.training", "Adam", 1, 1,
                       "domain ai.onnx.preview.training (opset 1)", importAdam);
}
