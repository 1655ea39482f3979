//===- DecomposePads.cpp - padding written straight into its destination --===//
//
// A tiled tensor.pad bufferizes to a temporary of the padded tile (malloc'd
// per workgroup on the CPU), filled, the source copied into it, and the
// temporary copied again into the kernel's output: three passes over the
// bytes. As tensor.empty + linalg.fill + tensor.insert_slice, the empty
// tensor is the output's tile (eliminate-empty-tensors), so the fill and
// the copy of the source write the output directly. A convolution's
// padding kernel on 96x112x112 floats (MobileNetV2): 0.36 ms -> see
// bench/RESULTS.md.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSEPADS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The sizes `guard` (an scf.if condition) tests against zero: the leaves
/// `x == 0` of its tree of ors.
void collectZeroChecks(Value guard, SmallPtrSetImpl<Value> &checked) {
  if (auto either = guard.getDefiningOp<arith::OrIOp>()) {
    collectZeroChecks(either.getLhs(), checked);
    collectZeroChecks(either.getRhs(), checked);
    return;
  }
  auto compare = guard.getDefiningOp<arith::CmpIOp>();
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
    return;
  if (isConstantIntValue(compare.getRhs(), 0))
    checked.insert(compare.getLhs());
  else if (isConstantIntValue(compare.getLhs(), 0))
    checked.insert(compare.getRhs());
}

/// A padding tile of one element along each padded dim, as tiling a pad
/// makes it (the slice of its source clamped to the tile, padded back):
///
///   scf.if (size_h == 0 || size_w == 0) { all padding }
///   else { tensor.pad (extract_slice %src [..] [1, size_h, size_w, 8]) }
///
/// In the else branch each size is at least 1 and at most the tile's 1,
/// so the tile is exactly the source slice: no padding, no dynamic shape.
/// Decomposed as a pad instead, it is a fill of the tile and a copy of a
/// dynamically shaped slice into it, loops and a temporary per thread.
struct PadOfNonEmptyUnitSlice : public OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    auto slice = pad.getSource().getDefiningOp<tensor::ExtractSliceOp>();
    auto guard = dyn_cast<scf::IfOp>(pad->getParentOp());
    // The tile's shape: the pad's, or that of the one cast to a static
    // shape that follows it until canonicalization folds the two.
    RankedTensorType tileType = pad.getResultType();
    Operation *tile = pad;
    if (!tileType.hasStaticShape() && pad->hasOneUse())
      if (auto staticTile = dyn_cast<tensor::CastOp>(*pad->user_begin())) {
        tileType = dyn_cast<RankedTensorType>(staticTile.getType());
        tile = staticTile;
      }
    if (!slice || !guard || !tileType || !tileType.hasStaticShape() ||
        !slice.hasUnitStride() ||
        pad->getParentRegion() != &guard.getElseRegion())
      return rewriter.notifyMatchFailure(pad, "not a guarded tile's pad");
    SmallPtrSet<Value, 4> nonZero;
    collectZeroChecks(guard.getCondition(), nonZero);
    for (auto [d, size] : llvm::enumerate(slice.getMixedSizes())) {
      int64_t extent = tileType.getDimSize(d);
      std::optional<int64_t> known = getConstantIntValue(size);
      // A static size equal to the tile's: its padding is zero.
      if (known ? *known != extent
                : extent != 1 || !nonZero.contains(cast<Value>(size)))
        return rewriter.notifyMatchFailure(pad, "a dim may be padded");
    }
    SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
        tileType.getShape(), [&](int64_t size) -> OpFoldResult {
          return rewriter.getIndexAttr(size);
        });
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        tile, tileType, slice.getSource(), slice.getMixedOffsets(), sizes,
        slice.getMixedStrides());
    if (tile != pad)
      rewriter.eraseOp(pad);
    return success();
  }
};

struct DecomposePadsPass
    : public kiln::impl::DecomposePadsBase<DecomposePadsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<PadOfNonEmptyUnitSlice>(&getContext(), /*benefit=*/2);
    linalg::populateDecomposePadPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
