//===- FuseElementwiseProducers.cpp - one generic per elementwise chain ---===//
//
// A kernel's linalg ops come one per kiln op. Elementwise producers that
// stay separate generics are tiled and fused as producers, each writing a
// tile-sized temporary that its consumer reads back: on a GPU row kernel a
// whole row per thread in local memory, on the CPU a buffer per workgroup.
// Folded into their consumer's body, a chain such as LayerNorm's normalize,
// scale and bias computes each element in registers.
//
// Three kinds of producer are folded: a generic that only widens a 16-bit
// operand (`arith.extf`; --precision and float16 models put these at the
// start of kernels) or a narrowed integer weight (`arith.sitofp`;
// kiln-narrow-integer-weights) into every consumer, so that a contraction
// becomes `extf(a) * extf(b) + acc`, the form matrix-core code generation
// and the CPU's register tiles match;
// a transpose with one consumer (a weight stored in another layout:
// kiln-channels-last-conv-weights), which the consumer's indexing map
// then reads through; and any other all-parallel generic that has one
// use, into a consumer that reads it element for element (no broadcast,
// which would recompute it).
// A widening that a collapse_shape separates from its consumer (a batched
// MatMul computed as one 2-D matmul reads its activations collapsed) is
// moved below the collapse first: left outside, it stayed a full-size op of
// its own before the kernel's loop, which then ran as one GPU thread.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPRODUCERS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

bool kiln::isScalarWidening(Operation *op) {
  if (!isa<arith::ExtFOp, arith::SIToFPOp>(op) ||
      !getElementTypeOrSelf(op->getResult(0).getType()).isF32())
    return false;
  Type from = getElementTypeOrSelf(op->getOperand(0).getType());
  return isa<arith::ExtFOp>(op)
             ? from.isF16() || from.isBF16()
             : from.isSignlessInteger(8) || from.isSignlessInteger(16);
}

Value kiln::createScalarWidening(OpBuilder &b, Location loc, Value value,
                                 Type type) {
  if (isa<FloatType>(getElementTypeOrSelf(value.getType())))
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::SIToFPOp::create(b, loc, type, value);
}

namespace {

/// The body of an all-parallel linalg.generic of one input, if `op` is
/// one and the body holds `size` ops (its yield included).
Block *elementwiseBodyOfOneInput(Operation *op, size_t size) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumReductionLoops() != 0)
    return nullptr;
  Block &body = generic.getRegion().front();
  return body.getOperations().size() == size ? &body : nullptr;
}

/// arith.sitofp of an int8 to float64: kiln-pack-int8-conv-weights'
/// weights of a convolution whose exact integer sums pass 2^24, which
/// kiln-contract-int8-conv-quads reads as bytes.
bool isInt8ToFloat64(Operation *op) {
  return isa<arith::SIToFPOp>(op) &&
         getElementTypeOrSelf(op->getResult(0).getType()).isF64() &&
         getElementTypeOrSelf(op->getOperand(0).getType()).isSignlessInteger(8);
}

/// A linalg.generic whose body only widens its one input
/// (isScalarWidening, isInt8ToFloat64).
bool isWideningGeneric(Operation *op) {
  Block *body = elementwiseBodyOfOneInput(op, 2);
  if (!body)
    return false;
  Operation &widen = body->front();
  return (isScalarWidening(&widen) || isInt8ToFloat64(&widen)) &&
         widen.getOperand(0) == body->getArgument(0);
}

/// A linalg.generic whose body only widens its one uint8 input to float32
/// or float64 (the lowering's unrealized_conversion_cast to i8, then
/// arith.uitofp): the int8 packing passes' activations, which their
/// contractions read as `uitofp(a)` (kiln-contract-int8-quads,
/// kiln-contract-int8-conv-quads).
bool isUint8WideningGeneric(Operation *op) {
  Block *body = elementwiseBodyOfOneInput(op, 3);
  if (!body)
    return false;
  auto cast = dyn_cast<UnrealizedConversionCastOp>(body->front());
  auto widen = dyn_cast<arith::UIToFPOp>(*std::next(body->begin()));
  return cast && widen && cast->getNumOperands() == 1 &&
         cast.getOperand(0) == body->getArgument(0) &&
         body->getArgument(0).getType().isUnsignedInteger(8) &&
         widen.getIn() == cast.getResult(0) &&
         (widen.getType().isF32() || widen.getType().isF64());
}

/// A linalg.generic that only moves its one input (a transpose: the body
/// yields the input element).
bool isDataMovementGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  auto yield =
      cast<linalg::YieldOp>(generic.getRegion().front().getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getRegion().front().getArgument(0);
}

/// linalg.transpose as a generic, so that the fusion below can fold it
/// into its one consumer (a weight stored in another layout:
/// kiln-channels-last-conv-weights).
struct GeneralizeTransposeIntoConsumer : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    // Its consumer, or the expand_shape of a grouped convolution's weight
    // (which then moves ahead of it).
    Value result = transpose->getResult(0);
    if (!result.hasOneUse() || !isa<linalg::GenericOp, tensor::ExpandShapeOp>(
                                   *result.getUsers().begin()))
      return failure();
    return linalg::generalizeNamedOp(rewriter, transpose);
  }
};

/// `use` reads an all-parallel, single-use producer through a permutation
/// of the consumer's loops: each producer element is computed once.
bool isElementForElement(OpOperand *use) {
  auto producer = use->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!producer || !consumer || !use->get().hasOneUse() ||
      producer.getNumReductionLoops() != 0 || producer->getNumResults() != 1)
    return false;
  return consumer.getMatchingIndexingMap(use).isPermutation();
}

/// collapse_shape(widen(x)) -> widen(collapse_shape(x)), for a widening
/// generic whose maps are identities: the widening then reads and writes
/// the collapsed shape and folds into the consumer of the collapse.
struct CollapseBeforeWidening : OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::CollapseShapeOp collapse,
                                PatternRewriter &rewriter) const override {
    auto generic = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    if (!generic || !isWideningGeneric(generic) ||
        !llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return failure();
    Location loc = collapse.getLoc();
    RankedTensorType resultType = collapse.getResultType();
    Value input = tensor::CollapseShapeOp::create(
        rewriter, loc, generic.getDpsInputs()[0],
        collapse.getReassociationIndices());
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, collapse.getResult());
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         resultType.getElementType());
    int64_t rank = resultType.getRank();
    SmallVector<AffineMap> maps(2, rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto widened = linalg::GenericOp::create(
        rewriter, loc, resultType, input, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value wide =
              createScalarWidening(b, l, args[0], resultType.getElementType());
          linalg::YieldOp::create(b, l, wide);
        });
    rewriter.replaceOp(collapse, widened.getResult(0));
    return success();
  }
};

/// Whether the producer of `use` folds into its consumer (the three kinds
/// in the file comment).
bool shouldFuse(OpOperand *use) {
  Operation *producer = use->get().getDefiningOp();
  if (isWideningGeneric(producer) || isUint8WideningGeneric(producer))
    return isa<linalg::GenericOp>(use->getOwner());
  // A transpose's consumer reads the transposed input instead, whatever its
  // map: each element is still loaded once per use.
  if (isDataMovementGeneric(producer) && use->get().hasOneUse())
    return isa<linalg::GenericOp>(use->getOwner());
  return isElementForElement(use);
}

/// Fuses producers into consumers in rounds, each a matching (an op takes
/// part in at most one fusion per round): a chain of n generics becomes
/// one in log2(n) rounds that each copy every body once. Fusing along the
/// chain, as a pattern driver does, copies the growing body at every step,
/// quadratic in the chain (10,000 Adds took half a minute).
void fuseInRounds(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  while (true) {
    SmallVector<OpOperand *> fusions;
    DenseSet<Operation *> paired;
    func.walk([&](linalg::GenericOp consumer) {
      // A widening or a transpose folds into its own consumers first (the
      // pattern driver below): fused with its producer it would no longer
      // be one, and a matmul would not read `extf(a)` in its body.
      if (paired.contains(consumer) || isWideningGeneric(consumer) ||
          isUint8WideningGeneric(consumer) || isDataMovementGeneric(consumer))
        return;
      for (OpOperand *use : consumer.getDpsInputOperands()) {
        Operation *producer = use->get().getDefiningOp();
        if (!producer || paired.contains(producer) ||
            !linalg::areElementwiseOpsFusable(use) || !shouldFuse(use))
          continue;
        paired.insert(producer);
        paired.insert(consumer);
        fusions.push_back(use);
        return;
      }
    });
    int64_t fused = 0;
    for (OpOperand *use : fusions) {
      Operation *producer = use->get().getDefiningOp();
      Operation *consumer = use->getOwner();
      rewriter.setInsertionPoint(consumer);
      FailureOr<linalg::ElementwiseOpFusionResult> result =
          linalg::fuseElementwiseOps(rewriter, use);
      if (failed(result))
        continue;
      // The consumer's users read the fused op; the producer's other users
      // keep reading the producer, which may come before the fused op.
      for (auto [original, replacement] : result->replacements)
        if (original.getDefiningOp() == consumer)
          rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      if (isOpTriviallyDead(producer))
        rewriter.eraseOp(producer);
      ++fused;
    }
    if (fused == 0)
      return;
  }
}

struct FuseElementwiseProducersPass
    : public kiln::impl::FuseElementwiseProducersBase<
          FuseElementwiseProducersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    fuseInRounds(func);
    // What the rounds leave: widenings and transposes to move first, and
    // the fusions those open up.
    RewritePatternSet patterns(&getContext());
    patterns.add<CollapseBeforeWidening, GeneralizeTransposeIntoConsumer>(
        &getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    // A grouped convolution reads its weight expanded to [G, F/G, ...]
    // (tensor.expand_shape): a transpose ahead of it (a stored layout)
    // takes the expanded shape itself, so that the fusion above can fold
    // it into the convolution.
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *use) {
          return isa<tensor::ExpandShapeOp>(use->getOwner()) &&
                 isDataMovementGeneric(use->get().getDefiningOp()) &&
                 use->get().hasOneUse();
        });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
