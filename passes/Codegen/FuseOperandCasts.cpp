//===- FuseOperandCasts.cpp - contractions read 16-bit operands ------------===//
//
// With --precision=f16|bf16 kernels start with casts that widen their 16-bit
// operands (kiln-form-dispatch-regions puts them there). As separate linalg
// ops they would be tiled and fused as producers, each tile widening a whole
// operand slice into a float32 temporary. Folded into their consumers'
// bodies instead, the kernel loads 16-bit values and widens them in
// registers; a contraction becomes `extf(a) * extf(b) + acc`, the form
// matrix-core code generation matches.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEOPERANDCASTS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A linalg.generic whose body only widens its one input (`arith.extf`).
bool isWideningGeneric(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto extf = dyn_cast<arith::ExtFOp>(body.front());
  return extf && extf.getIn() == body.getArgument(0);
}

struct FuseOperandCastsPass
    : public kiln::impl::FuseOperandCastsBase<FuseOperandCastsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("kiln.kernel"))
      return;
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *use) {
          return isWideningGeneric(use->get().getDefiningOp()) &&
                 isa<linalg::GenericOp>(use->getOwner());
        });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
