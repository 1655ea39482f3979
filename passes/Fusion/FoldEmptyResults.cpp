//===- FoldEmptyResults.cpp - ops that compute nothing as empty constants -===//
//
// A tensor with a zero-size dim (a batch of 0, an empty selection) holds no
// element, so the op that makes it computes nothing: it becomes an empty
// constant and its kernel never exists. Without this, every lowering and
// every target's tiler would meet loops of no iteration (a padding kernel
// of a batch-0 convolution made one-shot-bufferize fail on the GPUs). Ops
// whose result is not empty still run, whatever their inputs: a reduction
// over an empty axis gives its identity.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDEMPTYRESULTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isEmptyTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 0;
}

/// A kiln op without side effects or regions whose every result is empty.
bool computesNothing(Operation *op) {
  return isa<KilnDialect>(op->getDialect()) && !isa<ConstantOp>(op) &&
         op->getNumResults() > 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op) &&
         llvm::all_of(op->getResultTypes(), isEmptyTensor);
}

struct FoldEmptyResultsPass
    : public kiln::impl::FoldEmptyResultsBase<FoldEmptyResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> empty;
    getOperation().walk([&](Operation *op) {
      if (computesNothing(op))
        empty.push_back(op);
    });
    for (Operation *op : empty) {
      OpBuilder b(op);
      for (Value result : op->getResults()) {
        auto type = cast<RankedTensorType>(result.getType());
        auto nothing = DenseElementsAttr::getFromRawBuffer(type, {});
        result.replaceAllUsesWith(ConstantOp::create(b, op->getLoc(), nothing));
      }
      op->erase();
    }
  }
};

} // namespace
