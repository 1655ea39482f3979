//===- FuseElementwiseProducers.cpp - one generic per elementwise chain ---===//
//
// A kernel's linalg ops come one per kiln op. Elementwise producers that
// stay separate generics are tiled and fused as producers, each writing a
// tile-sized temporary that its consumer reads back: on a GPU row kernel a
// whole row per thread in local memory, on the CPU a buffer per workgroup.
// Folded into their consumer's body, a chain such as LayerNorm's normalize,
// scale and bias computes each element in registers.
//
// Two kinds of producer are folded: a generic that only widens a 16-bit
// operand (`arith.extf`; --precision and float16 models put these at the
// start of kernels) into every consumer, so that a contraction becomes
// `extf(a) * extf(b) + acc`, the form matrix-core code generation matches;
// and any other all-parallel generic that has one use, into a consumer that
// reads it element for element (no broadcast, which would recompute it).
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPRODUCERS
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

/// `use` reads an all-parallel, single-use producer through a permutation
/// of the consumer's loops: each producer element is computed once.
bool isElementForElement(OpOperand *use) {
  auto producer = use->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!producer || !consumer || !use->get().hasOneUse() ||
      producer.getNumReductionLoops() != 0 || producer->getNumResults() != 1)
    return false;
  return consumer.getMatchingIndexingMap(use).isPermutation();
}

struct FuseElementwiseProducersPass
    : public kiln::impl::FuseElementwiseProducersBase<
          FuseElementwiseProducersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("kiln.kernel"))
      return;
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *use) {
          if (isWideningGeneric(use->get().getDefiningOp()))
            return isa<linalg::GenericOp>(use->getOwner());
          return isElementForElement(use);
        });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
