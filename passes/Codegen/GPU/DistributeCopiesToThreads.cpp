//===- DistributeCopiesToThreads.cpp - copy-only GPU kernels in parallel --===//
//
// A kernel that only moves data (Split's slices, Concat's inputs into their
// places, a slice of a buffer) has no linalg op for tiling to distribute:
// after bufferization it is a few linalg.copy ops at the top level, and the
// GPU would run all of them in ONE thread. This pass gives such a kernel one
// forall over the largest copy's elements: iteration i copies element i of
// every copy (of those that have one), so kiln-map-kernels-to-gpu runs it
// with a thread per element.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_DISTRIBUTECOPIESTOTHREADS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The buffer a view looks into.
Value rootBuffer(Value view) {
  return memref::skipViewLikeOps(cast<MemrefValue>(view));
}

/// The box [offset, offset + size * stride) per dim that a static subview
/// of a buffer covers; nullopt for any other view.
std::optional<SmallVector<std::pair<int64_t, int64_t>>> coveredBox(Value view) {
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview || !isa<BlockArgument>(subview.getSource()) ||
      subview.getSourceType().getRank() != subview.getType().getRank())
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> box;
  for (auto [offset, size, stride] :
       llvm::zip(subview.getStaticOffsets(), subview.getStaticSizes(),
                 subview.getStaticStrides())) {
    if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(size) ||
        ShapedType::isDynamic(stride))
      return std::nullopt;
    box.push_back({offset, offset + (size - 1) * stride + 1});
  }
  return box;
}

/// True when the copies can run in any order, element by element: no copy
/// reads a buffer any copy writes, and copies into the same buffer write
/// static subviews whose boxes do not meet.
bool independent(ArrayRef<linalg::CopyOp> copies) {
  for (linalg::CopyOp a : copies) {
    Value written = rootBuffer(a.getOutputs()[0]);
    for (linalg::CopyOp b : copies) {
      if (rootBuffer(b.getInputs()[0]) == written)
        return false;
      if (a == b || rootBuffer(b.getOutputs()[0]) != written)
        continue;
      auto boxA = coveredBox(a.getOutputs()[0]);
      auto boxB = coveredBox(b.getOutputs()[0]);
      if (!boxA || !boxB)
        return false;
      bool apart = false;
      for (auto [x, y] : llvm::zip(*boxA, *boxB))
        apart |= x.second <= y.first || y.second <= x.first;
      if (!apart)
        return false;
    }
  }
  return true;
}

struct DistributeCopiesToThreadsPass
    : public kiln::impl::DistributeCopiesToThreadsBase<
          DistributeCopiesToThreadsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    SmallVector<linalg::CopyOp> copies;
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
        if (!copy.hasPureBufferSemantics() ||
            !cast<MemRefType>(copy.getInputs()[0].getType()).hasStaticShape())
          return;
        copies.push_back(copy);
      } else if (!isMemoryEffectFree(&op) && !isa<memref::GetGlobalOp>(op)) {
        return; // other work: tiling's business
      }
    }
    if (copies.empty() || !independent(copies))
      return;
    distribute(func, copies);
  }

  /// One forall at the end of the kernel (every view is defined above it);
  /// iteration i copies element i (row-major) of each copy that has one.
  void distribute(func::FuncOp func, ArrayRef<linalg::CopyOp> copies) {
    int64_t total = 0;
    for (linalg::CopyOp copy : copies)
      total = std::max(
          total,
          cast<MemRefType>(copy.getInputs()[0].getType()).getNumElements());
    if (total == 0)
      return;
    IRRewriter rewriter(&getContext());
    Location loc = func.getLoc();
    rewriter.setInsertionPoint(func.getBody().front().getTerminator());
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(total)},
        ValueRange{}, std::nullopt);
    Value i = forall.getInductionVar(0);
    rewriter.setInsertionPoint(forall.getBody()->getTerminator());
    for (linalg::CopyOp copy : copies) {
      auto type = cast<MemRefType>(copy.getInputs()[0].getType());
      OpBuilder::InsertionGuard guard(rewriter);
      if (type.getNumElements() < total) {
        Value inside =
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, i,
                                  arith::ConstantIndexOp::create(
                                      rewriter, loc, type.getNumElements()));
        auto ifOp = scf::IfOp::create(rewriter, loc, inside,
                                      /*withElseRegion=*/false);
        rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      }
      SmallVector<Value> indices =
          delinearize(rewriter, loc, i, type.getShape());
      Value element =
          memref::LoadOp::create(rewriter, loc, copy.getInputs()[0], indices);
      memref::StoreOp::create(rewriter, loc, element, copy.getOutputs()[0],
                              indices);
    }
    for (linalg::CopyOp copy : copies)
      rewriter.eraseOp(copy);
  }

  /// The row-major indices of linear position `i` in `shape`.
  static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value i,
                                        ArrayRef<int64_t> shape) {
    SmallVector<Value> indices(shape.size());
    Value rest = i;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] == 1) {
        indices[d] = arith::ConstantIndexOp::create(b, loc, 0);
        continue;
      }
      Value extent = arith::ConstantIndexOp::create(b, loc, shape[d]);
      indices[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, extent);
      if (d > 0)
        rest = arith::DivUIOp::create(b, loc, rest, extent);
    }
    return indices;
  }
};

} // namespace
