//===- CollapseReductionLoops.cpp - one reduction loop per row ------------===//
//
// A reduction over several adjacent dims (GlobalAveragePool's H and W, a
// ReduceMean over axes 2 and 3) lowers to a generic with as many reduction
// loops. The GPU's row kernels (kiln-distribute-rows-to-lanes) spread one
// row over a warp or a block, but a row is one loop: with two, each thread
// reduced a whole H x W map alone (a 40 x 80 pooling over 96 channels ran
// as 3 blocks of 32 threads, each reading 3200 elements in turn). Where a
// reduction of one input (not a contraction, a convolution or a pooling
// window: each operand is indexed by loops alone) reads the adjacent
// reduction loops as adjacent dims in the same order, and its input is a
// kernel input (a view of it can be collapsed without a copy; a producer
// computed in the kernel would be cut off from tiling's fusion by the
// reshape), the loops are collapsed into one.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace kiln {
#define GEN_PASS_DEF_COLLAPSEREDUCTIONLOOPS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The generic's loops grouped for collapsing: each run of two or more
/// adjacent reduction loops one group, every other loop alone. Empty when
/// there is no such run.
SmallVector<ReassociationIndices> adjacentReductionRuns(linalg::GenericOp op) {
  SmallVector<ReassociationIndices> groups;
  bool anyRun = false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (int64_t loop = 0; loop < int64_t(iterators.size()); ++loop) {
    bool reduction = iterators[loop] == utils::IteratorType::reduction;
    if (reduction && !groups.empty() &&
        iterators[groups.back().back()] == utils::IteratorType::reduction) {
      groups.back().push_back(loop);
      anyRun = true;
      continue;
    }
    groups.push_back({loop});
  }
  if (!anyRun)
    return {};
  return groups;
}

/// Whether `v` is a kernel input (an argument, or its tensor view).
bool isKernelInput(Value v) {
  if (isa<BlockArgument>(v))
    return true;
  return v.getDefiningOp<bufferization::ToTensorOp>() != nullptr;
}

struct CollapseReductionLoopsPass
    : public kiln::impl::CollapseReductionLoopsBase<
          CollapseReductionLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    SmallVector<linalg::GenericOp> candidates;
    // Reductions of one input, each operand indexed by loops alone:
    // contractions and windows (convolutions, pooling) are the matrix and
    // window passes' to tile.
    func.walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() >= 2 &&
          op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1 &&
          isKernelInput(op.getDpsInputs().front()) &&
          llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
            return map.isProjectedPermutation(/*allowZeroInResults=*/false);
          }))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      SmallVector<ReassociationIndices> groups = adjacentReductionRuns(op);
      if (groups.empty() ||
          !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), groups))
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, groups, rewriter);
      if (failed(collapsed))
        continue;
      rewriter.replaceOp(op, collapsed->results);
    }
  }
};

} // namespace
