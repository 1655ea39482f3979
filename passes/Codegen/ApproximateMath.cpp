//===- ApproximateMath.cpp - math without libdevice -----------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ApproximateMathPass
    : public kiln::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Hyperbolic, power and rounding functions in terms of exp, log, ...
    math::populateExpansionPatterns(patterns);
    auto every = [](StringRef) { return true; };
    // f16/bf16 math computes in f32, which the approximations cover.
    populateMathF32ExpansionPatterns(patterns, every);
    populateMathPolynomialApproximationPatterns(patterns, every);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
