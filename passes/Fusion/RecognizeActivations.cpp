//===- RecognizeActivations.cpp - decomposed activations as one op --------===//
//
// Exporters spell activations as arithmetic on their input x:
//
//   GELU (erf):  x * 0.5 * (1 + Erf(x / sqrt(2)))     (x * 1/sqrt(2) too)
//   GELU (tanh): 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//   SiLU:        x * Sigmoid(x)
//   HardSwish:   x * HardSigmoid(x; 1/6, 1/2)
//
// in any order of the multiplications. x has two consumers, so it cannot
// fuse into the op that produces it (a MatMul's bias add, a Conv): the
// activation would be a kernel of its own that reads and writes the whole
// tensor again. As one kiln op it is the producer's epilogue.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_RECOGNIZEACTIVATIONS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// `v` is a splat constant within float32 rounding of `expected`.
bool isSplat(Value v, double expected) {
  std::optional<double> value = floatSplatValue(v);
  return value && std::abs(*value - expected) <= 1e-5 * std::abs(expected);
}

/// The factors of the product `v`: the operands of `v`'s kiln.mul, and
/// recursively of every kiln.mul among them that has no other use.
SmallVector<Value> factorsOf(Value v) {
  SmallVector<Value> factors, pending = {v};
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    auto mul = next.getDefiningOp<MulOp>();
    if (mul && (next == v || mul->hasOneUse())) {
      pending.push_back(mul.getLhs());
      pending.push_back(mul.getRhs());
    } else {
      factors.push_back(next);
    }
  }
  return factors;
}

/// `factors` is, in some order, one splat of `scale` and the values
/// `values` (with repeats); anything else fails.
bool factorsAre(ArrayRef<Value> factors, std::optional<double> scale,
                ArrayRef<Value> values) {
  SmallVector<Value> rest(factors);
  if (scale) {
    auto it = llvm::find_if(rest, [&](Value f) { return isSplat(f, *scale); });
    if (it == rest.end())
      return false;
    rest.erase(it);
  }
  for (Value value : values) {
    auto it = llvm::find(rest, value);
    if (it == rest.end())
      return false;
    rest.erase(it);
  }
  return rest.empty();
}

/// `v` = `x * c`, `c * x` or `x / (1 / c)`.
bool isScaled(Value v, Value x, double c) {
  if (auto div = v.getDefiningOp<DivOp>())
    return div.getLhs() == x && isSplat(div.getRhs(), 1.0 / c);
  return v.getDefiningOp<MulOp>() && factorsAre(factorsOf(v), c, {x});
}

/// `v` = `1 + gate` (either order); returns gate.
Value onePlus(Value v) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  if (isSplat(add.getLhs(), 1.0))
    return add.getRhs();
  return isSplat(add.getRhs(), 1.0) ? add.getLhs() : nullptr;
}

/// `v` = x^3: Pow(x, 3) or x * x * x.
bool isCube(Value v, Value x) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getLhs() == x && isSplat(pow.getRhs(), 3.0);
  return factorsAre(factorsOf(v), std::nullopt, {x, x, x});
}

/// `v` = x + 0.044715 * x^3, the sum in either order, the cube's factors
/// in any.
bool isTanhGeluPolynomial(Value v, Value x) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return false;
  Value term = add.getLhs() == x   ? add.getRhs()
               : add.getRhs() == x ? add.getLhs()
                                   : Value();
  if (!term || !term.getDefiningOp<MulOp>())
    return false;
  SmallVector<Value> factors = factorsOf(term);
  if (factorsAre(factors, 0.044715, {x, x, x}))
    return true;
  return factors.size() == 2 &&
         ((isSplat(factors[0], 0.044715) && isCube(factors[1], x)) ||
          (isSplat(factors[1], 0.044715) && isCube(factors[0], x)));
}

/// The erf-GELU of x whose `1 + Erf(x / sqrt(2))` factor is `gate`.
bool isErfGelu(Value gate, Value x) {
  auto erf = onePlus(gate) ? onePlus(gate).getDefiningOp<ErfOp>() : ErfOp();
  return erf && isScaled(erf.getInput(), x, M_SQRT1_2);
}

/// The tanh-GELU of x whose `1 + Tanh(...)` factor is `gate`.
bool isTanhGelu(Value gate, Value x) {
  auto tanh = onePlus(gate) ? onePlus(gate).getDefiningOp<TanhOp>() : TanhOp();
  if (!tanh || !tanh.getInput().getDefiningOp<MulOp>())
    return false;
  SmallVector<Value> factors = factorsOf(tanh.getInput());
  double scale = std::sqrt(2.0 / M_PI);
  return factors.size() == 2 &&
         ((isSplat(factors[0], scale) && isTanhGeluPolynomial(factors[1], x)) ||
          (isSplat(factors[1], scale) && isTanhGeluPolynomial(factors[0], x)));
}

/// The locations of `root` and of every op between it and `x` (constants
/// aside): a matched activation's ops, so that reports and the per-kernel
/// table still name each of its ONNX nodes.
Location activationLoc(PatternRewriter &rewriter, Operation *root, Value x) {
  SmallVector<Location> locations;
  SmallVector<Operation *> pending = {root};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!pending.empty()) {
    Operation *op = pending.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    locations.push_back(op->getLoc());
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (operand != x && producer && !isa<ConstantOp>(producer))
        pending.push_back(producer);
    }
  }
  return rewriter.getFusedLoc(locations);
}

struct FoldDecomposedActivation : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    // Only the outermost multiplication of a product is rewritten (a
    // single-use inner one is part of its consumer's product).
    if (mul->hasOneUse() && isa<MulOp>(*mul->getUsers().begin()))
      return failure();
    SmallVector<Value> factors = factorsOf(mul.getResult());
    for (Value x : factors) {
      if (x.getType() != mul.getType())
        continue;
      if (Operation *op = matchActivation(rewriter, mul, factors, x)) {
        rewriter.replaceOp(mul, op->getResults());
        return success();
      }
    }
    return failure();
  }

  /// The single op computing the product `factors` as an activation of x.
  Operation *matchActivation(PatternRewriter &rewriter, MulOp mul,
                             ArrayRef<Value> factors, Value x) const {
    Location loc = activationLoc(rewriter, mul, x);
    for (Value gate : factors) {
      if (gate == x)
        continue;
      if (factors.size() == 2 && factorsAre(factors, std::nullopt, {x, gate})) {
        auto sigmoid = gate.getDefiningOp<SigmoidOp>();
        if (sigmoid && sigmoid.getInput() == x)
          return SiluOp::create(rewriter, loc, x);
        auto hard = gate.getDefiningOp<HardSigmoidOp>();
        if (hard && hard.getInput() == x &&
            std::abs(hard.getAlpha().convertToDouble() - 1.0 / 6.0) < 1e-6 &&
            std::abs(hard.getBeta().convertToDouble() - 0.5) < 1e-6)
          return HardSwishOp::create(rewriter, loc, x);
      }
      if (factors.size() == 3 && factorsAre(factors, 0.5, {x, gate})) {
        if (isErfGelu(gate, x))
          return GeluOp::create(rewriter, loc, x);
        if (isTanhGelu(gate, x))
          return GeluTanhOp::create(rewriter, loc, x);
      }
    }
    return nullptr;
  }
};

struct RecognizeActivationsPass
    : public kiln::impl::RecognizeActivationsBase<RecognizeActivationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldDecomposedActivation>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
