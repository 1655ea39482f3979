//===- ComputeHalfInSingle.cpp - float16 ops computed in float32 ----------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

namespace kiln {
#define GEN_PASS_DEF_COMPUTEHALFINSINGLE
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// `type` with float16 elements made float32; other types unchanged.
Type widen(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isF16())
    return type;
  return tensor.clone(Float32Type::get(type.getContext()));
}

bool touchesHalf(Operation *op) {
  auto isHalf = [](Type t) { return widen(t) != t; };
  return llvm::any_of(op->getOperandTypes(), isHalf) ||
         llvm::any_of(op->getResultTypes(), isHalf);
}

struct ComputeHalfInSinglePass
    : public kiln::impl::ComputeHalfInSingleBase<ComputeHalfInSinglePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      // Ops that only move elements are exact in float16 already.
      if (isa<KilnDialect>(op->getDialect()) && !isa<CastOp, ConstantOp>(op) &&
          !movesDataOnly(op) && op->getNumRegions() == 0 && touchesHalf(op))
        ops.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      // A widened operand is not the op's output (the rounding after it is).
      Location operandLoc = withoutOnnxValues(op->getLoc());
      for (OpOperand &operand : op->getOpOperands()) {
        Type wide = widen(operand.get().getType());
        if (wide != operand.get().getType())
          operand.set(CastOp::create(b, operandLoc, wide, operand.get()));
      }
      b.setInsertionPointAfter(op);
      for (OpResult result : op->getResults()) {
        Type half = result.getType();
        Type wide = widen(half);
        if (wide == half)
          continue;
        result.setType(wide);
        auto rounded = CastOp::create(b, op->getLoc(), half, result);
        result.replaceAllUsesExcept(rounded, rounded);
      }
    }
  }
};

} // namespace
