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
// that contraction's prologue, kiln-form-dispatch-regions), as do Expand
// and broadcasting operands, except where the reshape only joins the last
// two dims (a matmul computed on weight panels, kiln-pack-matmul-weights:
// [M, N / P, P] -> [M, N]): a bias along N is then split the same way.

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

/// Whether `source` is `result` with its last dim split in two.
bool splitsLastDim(ArrayRef<int64_t> source, ArrayRef<int64_t> result) {
  return !result.empty() && source.size() == result.size() + 1 &&
         source.drop_back(2) == result.drop_back() &&
         source[source.size() - 2] * source.back() == result.back();
}

/// A value an elementwise op computes from a kernel root's result,
/// directly or through other elementwise ops: it joins that root's kernel.
bool isFedByKernelRoot(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || !isElementwise(def) || def->getNumResults() != 1 || depth > 16)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return isKernelRootResult(operand) || isFedByKernelRoot(operand, depth + 1);
  });
}

/// A single-use reshape of a kernel root's result: what the op moves past;
/// or, where the reshape joins the last two dims (a packed matmul's
/// result), of an elementwise op that epilogue already moved past it. Each
/// move removes one and creates none (the other operands' new reshapes
/// read no kernel root's result and split dims rather than join them, and
/// the moved op is elementwise), so the rewrite terminates.
bool isMovableReshape(Value operand) {
  auto reshape = operand.getDefiningOp<ReshapeOp>();
  if (!reshape || !operand.hasOneUse())
    return false;
  Value input = reshape.getInput();
  if (isKernelRootResult(input))
    return true;
  return splitsLastDim(cast<RankedTensorType>(input.getType()).getShape(),
                       reshape.getType().getShape()) &&
         isFedByKernelRoot(input);
}

/// The shape in which `operand` (of `shape`, broadcast to `result`)
/// broadcasts to `source` instead: itself for an operand of the result's
/// shape; with `splitsLastDim`, a broadcasting one with its last dim split
/// as the result's (or [1, 1] for a last dim of 1). Null when neither.
std::optional<SmallVector<int64_t>> shapeAlongSource(ArrayRef<int64_t> shape,
                                                     ArrayRef<int64_t> result,
                                                     ArrayRef<int64_t> source) {
  if (shape == result)
    return SmallVector<int64_t>(source);
  if (!splitsLastDim(source, result) || shape.size() > result.size())
    return std::nullopt;
  if (shape.empty())
    return SmallVector<int64_t>(); // a scalar broadcasts to either
  for (auto [dim, size] : llvm::enumerate(llvm::reverse(shape)))
    if (size != 1 && size != result[result.size() - 1 - dim])
      return std::nullopt;
  SmallVector<int64_t> split(shape.drop_back());
  if (shape.back() == 1)
    split.append({1, 1});
  else
    split.append({source[source.size() - 2], source.back()});
  return split;
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
    SmallVector<SmallVector<int64_t>> shapes;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type)
        return failure();
      std::optional<SmallVector<int64_t>> along =
          shapeAlongSource(type.getShape(), resultType.getShape(), sourceShape);
      if (!along || (operand != reshaped && (isKernelRootResult(operand) ||
                                             isMovableReshape(operand))))
        return failure();
      shapes.push_back(*along);
    }
    SmallVector<Value> operands;
    for (auto [operand, shape] : llvm::zip(op->getOperands(), shapes))
      operands.push_back(
          operand == reshaped ? source
          : cast<RankedTensorType>(operand.getType()).getShape() ==
                  ArrayRef<int64_t>(shape)
              ? operand
              : ReshapeOp::create(
                    rewriter, op->getLoc(),
                    cast<RankedTensorType>(operand.getType()).clone(shape),
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
