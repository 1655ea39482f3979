//===- FoldExpandShapesIntoConsumers.cpp - compute epilogues flattened ----===//
//
// A kernel root that computes in a flattened shape hands its result on
// through a tensor.expand_shape: a pointwise convolution computes
// [N, F, H*W] and the model's tensor is [N, F, H, W]. Tiling cannot fuse a
// producer through a reshape, and a register tile cannot keep an epilogue
// in registers when the epilogue indexes a differently shaped view. So the
// elementwise consumers of such an expand_shape are collapsed to the
// producer's shape (their other operands read through collapse_shape
// views), and a result written to the kernel's output buffer is written
// through a collapsed view of that buffer instead. The other way round, a
// root that computes in an expanded shape (a grouped convolution's
// [N, G, F/G, H, W]) hands its result on through a tensor.collapse_shape:
// its elementwise consumers are expanded to its shape, and the output
// buffer written through an expanded view. (Without this, the tiled root
// was the epilogue and the convolution, not fusable through the reshape,
// ran whole in every workgroup.) An elementwise producer of the
// contraction's operands behind an expand_shape (a widening to float32)
// is expanded likewise. Reshapes of contiguous data become views after
// bufferization: no copies.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDEXPANDSHAPESINTOCONSUMERS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// `v` is computed by a contraction (a generic with reduction loops: the
/// kernel's root) or by elementwise generics of its result (an epilogue
/// already reshaped to it). Only these are followed through reshapes, in
/// both directions: a reshape of anything else (an operand widened to
/// float32 before a pointwise convolution collapses it) would otherwise be
/// expanded by one rule and collapsed back by the other, forever.
/// `throughReshapes`: also behind reshapes (an epilogue that an earlier
/// rule collapsed reads a collapse of the contraction's expanded result).
bool descendsFromContraction(Value v, bool throughReshapes = false) {
  // A walk over the generics behind `v`, each visited once (epilogues fan
  // in: every op's inputs may share producers).
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    if (throughReshapes) {
      if (auto expand = next.getDefiningOp<tensor::ExpandShapeOp>()) {
        work.push_back(expand.getSrc());
        continue;
      }
      if (auto collapse = next.getDefiningOp<tensor::CollapseShapeOp>()) {
        work.push_back(collapse.getSrc());
        continue;
      }
    }
    auto generic = next.getDefiningOp<linalg::GenericOp>();
    if (!generic || !seen.insert(generic).second)
      continue;
    if (generic.getNumReductionLoops() > 0)
      return true;
    llvm::append_range(work, generic.getDpsInputs());
  }
  return false;
}

/// `use` reads an expand_shape of a contraction's result (see
/// descendsFromContraction), and its owner is an elementwise generic (no
/// reduction, so collapsing its loops keeps each element computed once).
bool readsExpandedGenericResult(OpOperand *use) {
  auto expand = use->get().getDefiningOp<tensor::ExpandShapeOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  return expand && consumer && consumer.getNumReductionLoops() == 0 &&
         descendsFromContraction(expand.getSrc());
}

/// `use` reads a collapse_shape of a linalg.generic's result (a grouped
/// convolution computes [N, G, F/G, H, W], the model's tensor is
/// [N, F, H, W]) and its owner is an elementwise generic, which is then
/// expanded to the producer's shape.
/// A row statistic (softmax's maximum, a norm's mean) is not such a
/// producer: its result has fewer dims than what it reduces, and a
/// consumer expanded to it would be collapsed back by the rule above
/// (a matmul, its bias and a softmax in one CPU kernel did so forever).
bool readsCollapsedGenericResult(OpOperand *use) {
  auto collapse = use->get().getDefiningOp<tensor::CollapseShapeOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!collapse || !consumer || consumer.getNumReductionLoops() != 0)
    return false;
  if (auto producer = collapse.getSrc().getDefiningOp<linalg::GenericOp>()) {
    int64_t resultRank = producer.getRank(producer.getDpsInitOperand(0));
    bool statistic =
        llvm::any_of(producer.getDpsInputOperands(), [&](OpOperand *input) {
          return producer.getRank(input) > resultRank;
        });
    if (producer.getNumReductionLoops() > 0 && statistic)
      return false;
  }
  return descendsFromContraction(collapse.getSrc());
}

/// `use` is the source of an expand_shape, computed by an elementwise
/// generic from the kernel's inputs alone (not from a contraction, whose
/// results the rules above reshape) and used only there: an operand
/// widened to float32 (--precision=f16) before a grouped convolution
/// expands it to [N, G, C/G, H, W]. The generic is expanded to the
/// reshape's shape instead, reading its inputs through expand_shape views,
/// so that tiling fuses it into the convolution's tiles; behind the
/// reshape it ran whole before the kernel's forall, which made the kernel
/// one GPU thread (ResNeXt-50's 16 grouped convolutions, RegNetY's).
bool expandsElementwiseInput(OpOperand *use) {
  auto expand = dyn_cast<tensor::ExpandShapeOp>(use->getOwner());
  auto producer = use->get().getDefiningOp<linalg::GenericOp>();
  return expand && producer && producer.getNumReductionLoops() == 0 &&
         producer->hasOneUse() &&
         !descendsFromContraction(use->get(), /*throughReshapes=*/true);
}

/// `expr` indexes a dim only at 0: the constant 0, or a loop of extent 1
/// (a batch of one: a Mul by a [1, 1, 1, 1] scalar lowers to
/// `(d0, d1, d2, d3) -> (d0, 0, 0, 0)`; kept, d0 would be tied to the
/// loops it is collapsed with).
bool readsOnlyZero(AffineExpr expr, ArrayRef<int64_t> loopExtents) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return constant.getValue() == 0;
  auto dim = dyn_cast<AffineDimExpr>(expr);
  return dim && loopExtents[dim.getPosition()] == 1;
}

/// `op` reads `inputs` through `maps` (one per input, then its outputs').
void readInputsAs(PatternRewriter &rewriter, linalg::GenericOp op,
                  ValueRange inputs, ArrayRef<AffineMap> maps) {
  rewriter.modifyOpInPlace(op, [&] {
    op.getInputsMutable().assign(inputs);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
}

/// `use` reads a contraction's result through a reshape that one of the
/// rules above folds.
bool readsReshapedContractionResult(OpOperand *use) {
  return readsExpandedGenericResult(use) || readsCollapsedGenericResult(use);
}

/// An elementwise consumer of an expanded (or collapsed) contraction result
/// whose other inputs index unit dims by the constant 0 (a Mul by a [1]
/// scalar lowers to `(d0, d1, d2, d3) -> (0)`; a quantized grouped
/// convolution's requantizing scale [1, 1, 1, C] to `(0, 0, 0, d3)`) or by
/// a loop of extent 1 reads them as tensors without those dims instead:
/// the upstream reshape-folding patterns take only projected
/// permutations, and without the fold the contraction could not be tiled
/// with its epilogue (it ran whole, outside the kernel's forall).
struct DropConstantIndexedUnitDims
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumReductionLoops() != 0 ||
        !llvm::any_of(op.getDpsInputOperands(), readsReshapedContractionResult))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs = op.getDpsInputs();
    SmallVector<int64_t> loopExtents = op.getStaticLoopRanges();
    bool changed = false;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto type = dyn_cast<RankedTensorType>(input.getType());
      AffineMap map = maps[i];
      if (!type || !type.hasStaticShape() ||
          readsReshapedContractionResult(op.getDpsInputOperand(i)))
        continue;
      // The dims to drop: size 1, read at index 0 only.
      SmallVector<int64_t> kept;
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (!(type.getDimSize(d) == 1 && readsOnlyZero(expr, loopExtents)))
          kept.push_back(d);
      if (kept.size() == map.getNumResults())
        continue;
      SmallVector<int64_t> shape;
      SmallVector<AffineExpr> results;
      for (int64_t d : kept) {
        shape.push_back(type.getDimSize(d));
        results.push_back(map.getResult(d));
      }
      auto collapsedType = RankedTensorType::get(shape, type.getElementType());
      std::optional<SmallVector<ReassociationIndices>> groups =
          getReassociationIndicesForReshape(type, collapsedType);
      if (!groups)
        continue;
      inputs[i] = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(), collapsedType, input, *groups);
      maps[i] = AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      changed = true;
    }
    if (!changed)
      return failure();
    readInputsAs(rewriter, op, inputs, maps);
    return success();
  }
};

/// An elementwise generic that reads an expand_shape of a contraction's
/// result broadcast over the dims the expand added (a squeeze-excitation
/// scale on an NHWC map: [N, C] expanded to [N, 1, 1, C], read by the Mul
/// at `(n, h, w, c) -> (n, 0, 0, c)`) reads the contraction's result
/// itself, at `(n, h, w, c) -> (n, c)`: each group of the reshape keeps the
/// one dim that is not a unit dim read at 0. Tiling the Mul then fuses the
/// contraction into each tile (each computes the channels it scales);
/// behind the reshape the contraction ran whole before the kernel's forall,
/// as one GPU thread (PP-LCNet's squeeze-excitation blocks).
struct ReadBroadcastExpandsDirectly
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumReductionLoops() != 0)
      return failure();
    SmallVector<int64_t> loopExtents = op.getStaticLoopRanges();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs = op.getDpsInputs();
    bool changed = false;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto expand = input.getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand || !expand.getResultType().hasStaticShape() ||
          !descendsFromContraction(expand.getSrc()))
        continue;
      std::optional<SmallVector<AffineExpr>> results = readBroadcastSource(
          expand, maps[i], loopExtents, rewriter.getContext());
      if (!results)
        continue;
      inputs[i] = expand.getSrc();
      maps[i] =
          AffineMap::get(maps[i].getNumDims(), 0, *results, op.getContext());
      changed = true;
    }
    if (!changed)
      return failure();
    readInputsAs(rewriter, op, inputs, maps);
    return success();
  }

  /// The map that reads `expand`'s source where `map` read its result, or
  /// none when a group of the reshape has two dims that are not unit dims
  /// read at 0, or when `map` reads every dim (then the collapsing
  /// patterns apply instead).
  static std::optional<SmallVector<AffineExpr>>
  readBroadcastSource(tensor::ExpandShapeOp expand, AffineMap map,
                      ArrayRef<int64_t> loopExtents, MLIRContext *context) {
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    SmallVector<AffineExpr> results;
    bool broadcast = false;
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      std::optional<AffineExpr> kept;
      for (int64_t d : group) {
        AffineExpr expr = map.getResult(d);
        if (shape[d] == 1 && readsOnlyZero(expr, loopExtents)) {
          broadcast |= isa<AffineConstantExpr>(expr);
          continue;
        }
        if (kept)
          return std::nullopt;
        kept = expr;
      }
      results.push_back(kept ? *kept : getAffineConstantExpr(0, context));
    }
    if (!broadcast)
      return std::nullopt;
    return results;
  }
};

/// Replaces `op`'s write with one of `source` into `view` (a reshaped view
/// of its destination), keeping its flags.
void writeThroughView(PatternRewriter &rewriter,
                      bufferization::MaterializeInDestinationOp op,
                      Value source, Value view) {
  auto replacement = bufferization::MaterializeInDestinationOp::create(
      rewriter, op.getLoc(), source, view);
  replacement.setRestrict(op.getRestrict());
  replacement.setWritable(op.getWritable());
  rewriter.eraseOp(op);
}

/// materialize_in_destination(collapse_shape(x), %out) →
/// materialize_in_destination(x, expand_shape(%out)).
struct MaterializeThroughExpandedView
    : public OpRewritePattern<bufferization::MaterializeInDestinationOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(bufferization::MaterializeInDestinationOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    auto dest = dyn_cast<TypedValue<MemRefType>>(op.getDest());
    if (!collapse || !dest || !descendsFromContraction(collapse.getSrc()) ||
        !collapse.getSrcType().hasStaticShape() ||
        !dest.getType().getLayout().isIdentity())
      return failure();
    auto viewType = MemRefType::get(collapse.getSrcType().getShape(),
                                    dest.getType().getElementType());
    Value view =
        memref::ExpandShapeOp::create(rewriter, op.getLoc(), viewType, dest,
                                      collapse.getReassociationIndices());
    writeThroughView(rewriter, op, collapse.getSrc(), view);
    return success();
  }
};

/// materialize_in_destination(expand_shape(x), %out) →
/// materialize_in_destination(x, collapse_shape(%out)).
struct MaterializeThroughCollapsedView
    : public OpRewritePattern<bufferization::MaterializeInDestinationOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(bufferization::MaterializeInDestinationOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    auto dest = dyn_cast<TypedValue<MemRefType>>(op.getDest());
    if (!expand || !dest ||
        !expand.getSrc().getDefiningOp<linalg::GenericOp>() ||
        !memref::CollapseShapeOp::isGuaranteedCollapsible(
            dest.getType(), expand.getReassociationIndices()))
      return failure();
    Value view = memref::CollapseShapeOp::create(
        rewriter, op.getLoc(), dest, expand.getReassociationIndices());
    writeThroughView(rewriter, op, expand.getSrc(), view);
    return success();
  }
};

struct FoldExpandShapesIntoConsumersPass
    : public kiln::impl::FoldExpandShapesIntoConsumersBase<
          FoldExpandShapesIntoConsumersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByCollapsingPatterns(
        patterns, readsExpandedGenericResult);
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *use) {
          return readsCollapsedGenericResult(use) ||
                 expandsElementwiseInput(use);
        });
    patterns
        .add<MaterializeThroughCollapsedView, MaterializeThroughExpandedView,
             DropConstantIndexedUnitDims, ReadBroadcastExpandsDirectly>(
            &getContext());
    // A collapse of an expand (an epilogue's unit dims dropped after the
    // contraction's were added back: MobileNetV3's squeeze-excitation
    // scale, [N, C, 1] -> [N, C, 1, 1] -> [N, C]) becomes one reshape of
    // the generic's result, which the rules above can fold; else the
    // contraction stays outside the kernel's forall and runs serially.
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    // A long epilogue (--precision=f16 rounds and widens between each of
    // its ops) moves over one op per round: more rounds than the default
    // 10. Short of a fixpoint the IR is still valid, so no failure.
    GreedyRewriteConfig config;
    config.setMaxIterations(100);
    (void)applyPatternsGreedily(func, std::move(patterns), config);
  }
};

} // namespace
