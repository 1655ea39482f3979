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
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Hyperbolic, power and rounding functions in terms of exp, log, ...
    if (functions.empty())
      math::populateExpansionPatterns(patterns);
    // Names as the math dialect's patterns pass them: "math.exp", ...
    auto chosen = [&](StringRef name) {
      return functions.empty() || llvm::is_contained(functions, name);
    };
    // f16/bf16 math computes in f32, which the approximations cover.
    populateMathF32ExpansionPatterns(patterns, chosen);
    populateMathPolynomialApproximationPatterns(patterns, chosen);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
