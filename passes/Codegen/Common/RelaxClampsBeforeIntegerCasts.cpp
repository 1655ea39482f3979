//===- RelaxClampsBeforeIntegerCasts.cpp - clamps that feed fptoi ---------===//
//
// QuantizeLinear saturates before it converts to an integer:
// fptoui(minimumf(maximumf(x, lo), hi)). `arith.maximumf` and
// `arith.minimumf` propagate NaN and order -0 below +0, which x86's
// vmaxps/vminps do not: LLVM adds a compare and a blend to each. Before a
// float-to-integer conversion neither matters: a NaN converts to poison
// whatever the clamp gives, and both zeros convert to 0. The clamps that
// only feed such a conversion get the `nnan` and `nsz` fast-math flags,
// and lower to the bare instructions.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace kiln {
#define GEN_PASS_DEF_RELAXCLAMPSBEFOREINTEGERCASTS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isClamp(Operation *op) {
  return isa_and_nonnull<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
                         arith::MinNumFOp>(op);
}

/// Adds nnan and nsz to the chain of clamps that computes `value`, each
/// read only by the next (the last by the conversion).
void relaxClampsOf(Value value) {
  Operation *op = value.getDefiningOp();
  while (isClamp(op) && op->getResult(0).hasOneUse()) {
    auto fastMath = cast<arith::ArithFastMathInterface>(op);
    arith::FastMathFlags flags = fastMath.getFastMathFlagsAttr().getValue() |
                                 arith::FastMathFlags::nnan |
                                 arith::FastMathFlags::nsz;
    op->setAttr(fastMath.getFastMathAttrName(),
                arith::FastMathFlagsAttr::get(op->getContext(), flags));
    Value next = op->getOperand(0);
    if (!isClamp(next.getDefiningOp()))
      next = op->getOperand(1);
    op = next.getDefiningOp();
  }
}

struct RelaxClampsBeforeIntegerCastsPass
    : public kiln::impl::RelaxClampsBeforeIntegerCastsBase<
          RelaxClampsBeforeIntegerCastsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (isa<arith::FPToUIOp, arith::FPToSIOp>(op))
        relaxClampsOf(op->getOperand(0));
    });
  }
};

} // namespace
