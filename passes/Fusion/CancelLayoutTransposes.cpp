//===- CancelLayoutTransposes.cpp - transpose pairs around elementwise ops
//-===//
//
// Models converted from channels-last frameworks (tf2onnx's TensorFlow and
// Keras exports) wrap each layer in layout transposes: a convolution's NCHW
// result goes to NHWC for its batch normalization and activation, and back
// for the next convolution,
//
//   t = transpose<0,2,3,1>(conv(x))
//   y = relu(t * scale + shift)          (constants of shape [1, 1, 1, C])
//   z = transpose<0,3,1,2>(y)
//
// and each transpose is a kernel of its own (about a hundred in a ResNet).
// This pass moves the second transpose up through the elementwise ops
// between the two, transposing their constant operands instead (the new
// transposes of constants fold), until it meets the transpose it undoes,
// and both go:
//
//   z = relu(conv(x) * scale' + shift')  (constants of shape [1, C, 1, 1])
//
// It moves only along a chain of single-use elementwise ops whose other
// operands are constants, and only when the chain ends in the inverse
// transpose: elsewhere every transpose stays where it is.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/OnnxValueNames.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_CANCELLAYOUTTRANSPOSES
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Whether transposing by `first`, then by `second`, leaves every dim where
/// it was.
bool undoes(ArrayRef<int64_t> first, ArrayRef<int64_t> second) {
  if (first.size() != second.size())
    return false;
  for (auto [d, p] : llvm::enumerate(second))
    if (first[p] != int64_t(d))
      return false;
  return true;
}

/// A constant that an elementwise op broadcasts against the value it
/// transforms (at most that value's rank).
bool isBroadcastConstant(Value v, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return v.getDefiningOp<ConstantOp>() && type && type.hasStaticShape() &&
         type.getRank() <= rank;
}

/// The one operand of elementwise `op` that is not a broadcast constant,
/// when it has the result's shape (nothing broadcasts it), else null.
Value transformedOperand(Operation *op) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType)
    return {};
  Value transformed;
  for (Value operand : op->getOperands()) {
    if (isBroadcastConstant(operand, resultType.getRank()))
      continue;
    if (transformed)
      return {};
    transformed = operand;
  }
  auto type = transformed ? dyn_cast<RankedTensorType>(transformed.getType())
                          : RankedTensorType();
  if (!type || type.getShape() != resultType.getShape())
    return {};
  return transformed;
}

/// transpose<q>(f(... transpose<p>(x) ...)) -> f'(x) where q undoes p and f
/// is a chain of single-use elementwise ops over broadcast constants.
struct CancelAroundElementwise : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp outer,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = outer.getPerm();
    // The chain from `outer` up to the transpose it undoes, nearest first.
    SmallVector<Operation *> chain;
    Value v = outer.getInput();
    TransposeOp inner;
    while (!inner) {
      Operation *def = v.getDefiningOp();
      if (!def || !v.hasOneUse())
        return failure();
      if (auto transpose = dyn_cast<TransposeOp>(def)) {
        if (!undoes(transpose.getPerm(), perm))
          return failure();
        inner = transpose;
        break;
      }
      if (!isElementwise(def) || isa<ExpandOp>(def) ||
          def->getNumResults() != 1)
        return failure();
      v = transformedOperand(def);
      if (!v)
        return failure();
      chain.push_back(def);
    }
    Value current = inner.getInput();
    for (Operation *op : llvm::reverse(chain))
      current = moveBelow(rewriter, op, current, perm);
    // The last op computes the outer transpose's value: it claims its name.
    if (Operation *last = current.getDefiningOp(); last && !chain.empty())
      last->setLoc(outer.getLoc());
    rewriter.replaceOp(outer, current);
    return success();
  }

  /// `op` computed on `input` (its transformed operand in the inner
  /// transpose's input layout), its constants transposed by `perm`.
  static Value moveBelow(PatternRewriter &rewriter, Operation *op, Value input,
                         ArrayRef<int64_t> perm) {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t rank = resultType.getRank();
    Location loc = withoutOnnxValues(op->getLoc());
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      if (!isBroadcastConstant(operand, rank)) {
        operands.push_back(input);
        continue;
      }
      auto type = cast<RankedTensorType>(operand.getType());
      if (type.getRank() == 0) {
        operands.push_back(operand);
        continue;
      }
      // Ones in front to the result's rank, as broadcasting reads it.
      SmallVector<int64_t> full(rank - type.getRank(), 1);
      llvm::append_range(full, type.getShape());
      SmallVector<int64_t> permuted;
      for (int64_t p : perm)
        permuted.push_back(full[p]);
      // A per-channel constant moves only dims of size 1: a reshape, which
      // folds into the constant.
      if (movesOnlyUnitDims(full, perm)) {
        operands.push_back(rewriter.createOrFold<ReshapeOp>(
            loc, type.clone(permuted), operand));
        continue;
      }
      Value padded = operand;
      if (type.getRank() != rank)
        padded =
            rewriter.createOrFold<ReshapeOp>(loc, type.clone(full), operand);
      operands.push_back(rewriter.createOrFold<TransposeOp>(
          loc, type.clone(permuted), padded,
          rewriter.getDenseI64ArrayAttr(perm)));
    }
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(resultType.getDimSize(p));
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(operands);
    moved->getResult(0).setType(resultType.clone(shape));
    moved->setLoc(loc);
    return moved->getResult(0);
  }
};

struct CancelLayoutTransposesPass
    : public kiln::impl::CancelLayoutTransposesBase<
          CancelLayoutTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<CancelAroundElementwise>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
