//===- MoveReshapesAfterElementwise.cpp - reshapes out of fusion's way ----===//
//
// A reshape is an alias, not a kernel, so kiln-form-dispatch-regions keeps
// it outside every region, and an elementwise op that reads a reshape of a
// kernel's result does not join that kernel. GPT-2 as Hugging Face
// exports it computes each linear layer as Gemm on [B*S, E] between two
// reshapes, so its GELU and its residual adds were kernels of their own:
//
//   g = gemm(reshape(x))  [B*S, F]      y = gelu(reshape(g))  [B, S, F]
//
// Elementwise ops commute with reshapes: computed on the reshape's input
// (their other operands, of the same shape, reshaped too: aliases) and
// reshaped after, they read the producer's result directly and fuse into
// its kernel as its epilogue:
//
//   y = reshape(gelu(g))
//
// Casts stay where they are (a widening cast in front of a contraction is
// that contraction's prologue, kiln-form-dispatch-regions), as do
// broadcasting operands and Expand.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_MOVERESHAPESAFTERELEMENTWISE
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A value computed by an op that starts a kernel (a contraction, a
/// normalization, a reduction): not an elementwise op, which would fuse
/// into its own producer, nor a constant or a reshape.
bool isKernelRootResult(Value v) {
  Operation *def = v.getDefiningOp();
  return def && !isElementwise(def) && !isa<ConstantOp, ReshapeOp>(def);
}

/// A single-use reshape of a kernel root's result: what the op moves past.
/// Each move removes one and creates none (the other operands' new
/// reshapes read no kernel root's result, and the moved op is
/// elementwise), so the rewrite terminates.
bool isMovableReshape(Value operand) {
  auto reshape = operand.getDefiningOp<ReshapeOp>();
  return reshape && operand.hasOneUse() &&
         isKernelRootResult(reshape.getInput());
}

struct MoveReshapeAfter : public RewritePattern {
  MoveReshapeAfter(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || isa<CastOp, ExpandOp>(op) ||
        op->getNumResults() != 1)
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || !resultType.hasStaticShape())
      return failure();
    auto chosen = llvm::find_if(op->getOperands(), isMovableReshape);
    if (chosen == op->getOperands().end())
      return failure();
    Value reshaped = *chosen;
    Value source = reshaped.getDefiningOp<ReshapeOp>().getInput();
    ArrayRef<int64_t> sourceShape =
        cast<RankedTensorType>(source.getType()).getShape();
    // Every check before the first new op: a pattern that fails must
    // leave the IR as it was.
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || type.getShape() != resultType.getShape())
        return failure();
      if (operand != reshaped &&
          (isKernelRootResult(operand) || isMovableReshape(operand)))
        return failure();
    }
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(
          operand == reshaped
              ? source
              : ReshapeOp::create(rewriter, op->getLoc(),
                                  cast<RankedTensorType>(operand.getType())
                                      .clone(sourceShape),
                                  operand)
                    .getResult());
    // The op now computes its ONNX value in the reshape's input shape: it
    // claims no value (kiln-bisect compares shapes too).
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(operands);
    moved->getResult(0).setType(resultType.clone(sourceShape));
    moved->setLoc(withoutOnnxValues(op->getLoc()));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, resultType, moved->getResult(0));
    return success();
  }
};

struct MoveReshapesAfterElementwisePass
    : public kiln::impl::MoveReshapesAfterElementwiseBase<
          MoveReshapesAfterElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MoveReshapeAfter>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
