//===- Widening.cpp - graph rewrites around widened 16-bit values ---------===//
#include "Widening.h"

#include "kiln/Passes/Passes.h"

using namespace mlir;

Value kiln::storedValue(Value value) {
  return isWidened(value) ? value.getDefiningOp<CastOp>().getInput() : value;
}

Value kiln::reshapeBeforeWidening(PatternRewriter &rewriter, Location loc,
                                  Value value, ArrayRef<int64_t> shape) {
  Value stored = storedValue(value);
  Value reshaped = ReshapeOp::create(
      rewriter, loc,
      RankedTensorType::get(shape, getElementTypeOrSelf(stored.getType())),
      stored);
  if (stored == value)
    return reshaped;
  return CastOp::create(
      rewriter, loc,
      RankedTensorType::get(shape, getElementTypeOrSelf(value.getType())),
      reshaped);
}
