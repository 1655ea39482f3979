//===- WholeTensorRow.cpp - a whole-tensor reduction as one row -----------===//
//
// ReduceSum over every axis of a [512, 1024] tensor is a linalg.generic with
// two reduction loops and a 0-d result: nothing for tiling to give threads,
// so the GPU ran all 524288 additions in one thread. Merged into one loop
// over a 1-D view of the input, inside a forall of one iteration, it is one
// long row, which kiln-distribute-rows-to-lanes gives a block of threads.
//
//===----------------------------------------------------------------------===//
#include "WholeTensorRow.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// How an operand reads the op's long loops once they are merged.
enum class MergedShape {
  /// All of them, in loop order, one dim each, its other dims of size 1, in
  /// a buffer that collapses to 1-D: it becomes a 1-D view.
  Row,
  /// A single element: it becomes a 0-d view.
  Element,
};

std::optional<MergedShape> mergedShape(linalg::LinalgOp op, OpOperand &operand,
                                       ArrayRef<int64_t> longLoops) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  if (type.getNumElements() == 1)
    return memref::CollapseShapeOp::isGuaranteedCollapsible(type, {})
               ? std::optional(MergedShape::Element)
               : std::nullopt;
  SmallVector<int64_t> indexed;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  for (auto [d, expr] : llvm::enumerate(map.getResults())) {
    if (type.getDimSize(d) == 1)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    indexed.push_back(dim.getPosition());
  }
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  if (ArrayRef<int64_t>(indexed) != longLoops ||
      !memref::CollapseShapeOp::isGuaranteedCollapsible(type, {all}))
    return std::nullopt;
  return MergedShape::Row;
}

/// The loops of `op` longer than 1 when they can be merged into one (all
/// of one iterator type, every operand a Row or an Element, no
/// linalg.index in the body); failure otherwise.
FailureOr<SmallVector<int64_t>> mergeableLongLoops(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return failure();
  SmallVector<int64_t> longLoops;
  for (auto [i, extent] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(extent))
      return failure();
    if (extent > 1)
      longLoops.push_back(i);
  }
  if (longLoops.size() <= 1)
    return longLoops;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (llvm::any_of(longLoops, [&](int64_t loop) {
        return iterators[loop] != iterators[longLoops.front()];
      }))
    return failure();
  if (!op->getRegion(0).getOps<linalg::IndexOp>().empty())
    return failure();
  for (OpOperand &operand : op->getOpOperands())
    if (!mergedShape(op, operand, longLoops))
      return failure();
  return longLoops;
}

/// Replaces `op` by a generic with one loop over its long loops merged.
void mergeLongLoops(RewriterBase &rewriter, linalg::LinalgOp op,
                    ArrayRef<int64_t> longLoops) {
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    generic = *linalg::generalizeNamedOp(rewriter, op);
  Location loc = generic.getLoc();
  MLIRContext *context = rewriter.getContext();
  AffineMap rowMap =
      AffineMap::get(1, 0, {getAffineDimExpr(0, context)}, context);
  AffineMap elementMap = AffineMap::get(1, 0, {}, context);
  SmallVector<Value> views;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = cast<MemRefType>(operand.get().getType());
    bool row = *mergedShape(generic, operand, longLoops) == MergedShape::Row;
    SmallVector<ReassociationIndices> groups;
    if (row)
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
    views.push_back(type.getRank() == int64_t(groups.size())
                        ? operand.get()
                        : memref::CollapseShapeOp::create(rewriter, loc,
                                                          operand.get(), groups)
                              .getResult());
    maps.push_back(row ? rowMap : elementMap);
  }
  int64_t inputs = generic.getNumDpsInputs();
  auto merged = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ArrayRef(views).take_front(inputs),
      ArrayRef(views).drop_front(inputs), maps,
      {generic.getIteratorTypesArray()[longLoops.front()]});
  rewriter.inlineRegionBefore(generic.getRegion(), merged.getRegion(),
                              merged.getRegion().end());
  rewriter.eraseOp(generic);
}

/// Moves every op of `kernel` into a forall of one iteration.
scf::ForallOp wrapInOneIteration(func::FuncOp kernel, RewriterBase &rewriter) {
  Block &entry = kernel.getBody().front();
  rewriter.setInsertionPointToStart(&entry);
  auto forall =
      scf::ForallOp::create(rewriter, kernel.getLoc(),
                            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
                            ValueRange{}, std::nullopt);
  Operation *end = forall.getBody()->getTerminator();
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(std::next(forall->getIterator()),
                            entry.getTerminator()->getIterator())))
    rewriter.moveOpBefore(&op, end);
  return forall;
}

} // namespace

scf::ForallOp kiln::wrapWholeTensorReduction(func::FuncOp kernel,
                                             RewriterBase &rewriter,
                                             int64_t minRow) {
  if (!kernel.getBody().hasOneBlock())
    return nullptr;
  SmallVector<std::pair<linalg::LinalgOp, SmallVector<int64_t>>> merges;
  bool longReduction = false;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      FailureOr<SmallVector<int64_t>> longLoops = mergeableLongLoops(linalgOp);
      if (failed(longLoops))
        return nullptr;
      int64_t extent = 1;
      for (int64_t loop : *longLoops)
        extent *= linalgOp.getStaticLoopRanges()[loop];
      longReduction |= !longLoops->empty() && extent >= minRow &&
                       linalgOp.getIteratorTypesArray()[longLoops->front()] ==
                           utils::IteratorType::reduction;
      merges.push_back({linalgOp, *longLoops});
      continue;
    }
    // A forall (the kernel is tiled already) or other control flow, or
    // memory access that is not a linalg op: not ours.
    if (op.getNumRegions() > 0 ||
        (!isMemoryEffectFree(&op) &&
         !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              memref::GetGlobalOp>(op)))
      return nullptr;
  }
  if (!longReduction)
    return nullptr;
  for (auto &[op, longLoops] : merges)
    if (longLoops.size() > 1)
      mergeLongLoops(rewriter, op, longLoops);
  return wrapInOneIteration(kernel, rewriter);
}
