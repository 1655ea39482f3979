//===- KernelRoot.cpp - the op a kernel's tiling starts from --------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;

TilingInterface kiln::findKernelRoot(func::FuncOp func) {
  TilingInterface root;
  func.walk([&](bufferization::MaterializeInDestinationOp write) {
    Value v = write.getSource();
    while (Operation *def = v.getDefiningOp()) {
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
        v = collapse.getSrc();
      else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
        v = expand.getSrc();
      else
        break;
    }
    if (!root)
      root = v.getDefiningOp<TilingInterface>();
  });
  return root;
}

bool kiln::hasTileableResults(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return true;
  return llvm::all_of(linalgOp.getDpsInitsMutable(), [&](OpOperand &init) {
    return linalgOp.getMatchingIndexingMap(&init).isProjectedPermutation();
  });
}

llvm::SmallDenseSet<int64_t> kiln::outerReducedAxes(TilingInterface root,
                                                    int64_t innermost) {
  llvm::SmallDenseSet<int64_t> axes;
  auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
  if (!rootOp || innermost < 0)
    return axes;
  for (OpOperand *operand : rootOp.getDpsInputOperands()) {
    auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
    if (!producer || producer.getNumReductionLoops() == 0)
      continue;
    AffineMap map = rootOp.getMatchingIndexingMap(operand);
    for (unsigned loop = 0; loop < map.getNumDims(); ++loop)
      if (!map.isFunctionOfDim(loop) &&
          rootOp.getIteratorTypesArray()[loop] == utils::IteratorType::parallel)
        axes.insert(loop);
  }
  if (axes.contains(innermost))
    axes.clear();
  return axes;
}

void kiln::setKernelConfig(
    func::FuncOp kernel,
    function_ref<KernelConfigAttr(TilingInterface root)> choose) {
  if (!kernel->hasAttr(attrs::kKernel))
    return;
  // A kernel with an empty loop left (an output with a zero-size dim;
  // kiln-prepare-kernel-tiling folds the other empty loops) has nothing to
  // distribute, and tiling would divide by the empty extent.
  bool emptyLoop = false;
  kernel.walk([&](linalg::LinalgOp op) {
    emptyLoop |= llvm::is_contained(op.getStaticLoopRanges(), 0);
  });
  if (emptyLoop)
    return;
  if (TilingInterface root = findKernelRoot(kernel))
    if (KernelConfigAttr config = choose(root))
      kernel->setAttr(attrs::kConfig, config);
}
