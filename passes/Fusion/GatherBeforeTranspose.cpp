//===- GatherBeforeTranspose.cpp - select a slice before transposing -----===//
//
// PyTorch exports nn.MultiheadAttention's packed projection as
//   qkv [N, L, 3, E] -> unsqueeze / transpose -> [3, L, N, 1, E]
//   q, k, v = Gather(qkv', 0), Gather(qkv', 1), Gather(qkv', 2)
// a transpose of the whole projection (a copy kernel) only to take three
// slices of it. A Gather of one index (a rank-0 index: the axis goes away)
// of a transpose is the transpose of the same Gather on the input's axis
// the transpose moved there (a squeeze between them goes first); the big
// transpose is then dead, and each
// remaining transpose moves only the unit dims (ViT's [1, 197, 1, 768] ->
// [197, 1, 1, 768]), which keeps every element in place: a reshape, an
// alias instead of a kernel.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/OnnxValueNames.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_GATHERBEFORETRANSPOSE
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// gather(transpose(x, perm), i, axis a), i of rank 0 ->
/// transpose(gather(x, i, perm[a]), perm without a).
struct GatherOfTranspose : public OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherOp gather,
                                PatternRewriter &rewriter) const override {
    auto transpose = gather.getInput().getDefiningOp<TransposeOp>();
    auto indexType = dyn_cast<RankedTensorType>(gather.getIndices().getType());
    if (!transpose || !indexType || indexType.getRank() != 0)
      return failure();
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t axis = gather.getAxis();
    int64_t inputAxis = perm[axis];
    Location loc = withoutOnnxValues(gather.getLoc());
    Value selected = GatherOp::create(rewriter, loc, transpose.getInput(),
                                      gather.getIndices(),
                                      rewriter.getI64IntegerAttr(inputAxis));
    SmallVector<int64_t> remaining;
    for (auto [position, dim] : llvm::enumerate(perm))
      if (int64_t(position) != axis)
        remaining.push_back(dim > inputAxis ? dim - 1 : dim);
    rewriter.replaceOpWithNewOp<TransposeOp>(
        gather, gather.getType(), selected,
        rewriter.getDenseI64ArrayAttr(remaining));
    return success();
  }
};

/// Positions of `from`'s dims that `to` drops, when `to` is `from` without
/// some of its unit dims (a squeeze); nothing otherwise.
std::optional<SmallVector<int64_t>> squeezedDims(ArrayRef<int64_t> from,
                                                 ArrayRef<int64_t> to) {
  SmallVector<int64_t> dropped;
  size_t next = 0;
  for (auto [position, size] : llvm::enumerate(from)) {
    if (next < to.size() && to[next] == size) {
      ++next;
      continue;
    }
    if (size != 1)
      return std::nullopt;
    dropped.push_back(position);
  }
  if (next != to.size())
    return std::nullopt;
  return dropped;
}

/// reshape(transpose(x, perm)) that only drops unit dims ->
/// transpose(reshape(x) without those dims): the squeeze goes first, so
/// that a gather of the squeezed result meets the transpose
/// (MultiheadAttention's squeeze(-2) between the two).
struct SqueezeOfTranspose : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto transpose = reshape.getInput().getDefiningOp<TransposeOp>();
    if (!transpose)
      return failure();
    auto transposedType = cast<RankedTensorType>(transpose.getType());
    auto inType = cast<RankedTensorType>(transpose.getInput().getType());
    std::optional<SmallVector<int64_t>> dropped =
        squeezedDims(transposedType.getShape(), reshape.getType().getShape());
    if (!dropped || dropped->empty())
      return failure();
    ArrayRef<int64_t> perm = transpose.getPerm();
    // The input's dims that the dropped positions hold.
    llvm::SmallDenseSet<int64_t> droppedInput;
    for (int64_t position : *dropped)
      droppedInput.insert(perm[position]);
    SmallVector<int64_t> squeezedShape, renumbered(inType.getRank(), -1);
    for (int64_t dim = 0; dim < inType.getRank(); ++dim)
      if (!droppedInput.contains(dim)) {
        renumbered[dim] = squeezedShape.size();
        squeezedShape.push_back(inType.getDimSize(dim));
      }
    SmallVector<int64_t> squeezedPerm;
    for (auto [position, dim] : llvm::enumerate(perm))
      if (!llvm::is_contained(*dropped, int64_t(position)))
        squeezedPerm.push_back(renumbered[dim]);
    Location loc = withoutOnnxValues(reshape.getLoc());
    Value squeezed = ReshapeOp::create(
        rewriter, loc,
        RankedTensorType::get(squeezedShape, inType.getElementType()),
        transpose.getInput());
    rewriter.replaceOpWithNewOp<TransposeOp>(
        reshape, reshape.getType(), squeezed,
        rewriter.getDenseI64ArrayAttr(squeezedPerm));
    return success();
  }
};

/// A transpose that keeps the order of the dims longer than 1 moves no
/// element: a reshape.
struct TransposeOfUnitDims : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto inType = dyn_cast<RankedTensorType>(transpose.getInput().getType());
    if (!inType || !inType.hasStaticShape())
      return failure();
    int64_t last = -1;
    for (int64_t dim : transpose.getPerm()) {
      if (inType.getDimSize(dim) == 1)
        continue;
      if (dim < last)
        return failure();
      last = dim;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(transpose, transpose.getType(),
                                           transpose.getInput());
    return success();
  }
};

struct GatherBeforeTransposePass
    : public kiln::impl::GatherBeforeTransposeBase<GatherBeforeTransposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<GatherOfTranspose, SqueezeOfTranspose, TransposeOfUnitDims>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
