//===- MapForallToWorkgroups.cpp - one forall iteration per workgroup -----===//
#include "kiln/Passes/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_MAPFORALLTOWORKGROUPS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The function argument a memref is a view of, if any.
BlockArgument baseArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    v = view.getViewSource();
  }
  return dyn_cast<BlockArgument>(v);
}

/// True when an op outside `forall` writes to a kernel argument. Every
/// workgroup runs the code outside the loop, so such a write would race.
bool writesArgumentsOutside(func::FuncOp func, scf::ForallOp forall) {
  bool writes = false;
  func.walk([&](Operation *op) {
    if (forall->isAncestor(op))
      return WalkResult::skip();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (auto &effect : instances) {
      Value target = effect.getValue();
      if (isa<MemoryEffects::Write>(effect.getEffect()) && target &&
          baseArgument(target)) {
        writes = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return writes;
}

struct MapForallToWorkgroupsPass
    : public kiln::impl::MapForallToWorkgroupsBase<MapForallToWorkgroupsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto grid = func->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroups);
    if (!grid || grid.getInt() <= 1)
      return;
    SmallVector<scf::ForallOp> loops(func.getBody().getOps<scf::ForallOp>());
    if (loops.size() != 1 || loops.front().getRank() != 1 ||
        writesArgumentsOutside(func, loops.front())) {
      // Not a clean partition: run the whole kernel as one workgroup.
      func->setAttr(kiln::attrs::kWorkgroups,
                    IntegerAttr::get(grid.getType(), 1));
      return;
    }
    mapToWorkgroupId(func, loops.front());
  }

  /// Workgroup `id` of `count` runs iterations id, id + count, ... of the
  /// loop: exactly its own one under the count the kernel was compiled
  /// for, and under any other count (an artifact's is data) still each
  /// iteration once and none past the loop's end.
  void mapToWorkgroupId(func::FuncOp func, scf::ForallOp forall) {
    Value workgroupId = func.getArgument(func.getNumArguments() - 2);
    Value workgroupCount = func.getArgument(func.getNumArguments() - 1);
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPoint(forall);
    Location loc = forall.getLoc();
    auto index = [&](OpFoldResult value) {
      return getValueOrCreateConstantIndexOp(rewriter, loc, value);
    };
    Value lower = index(forall.getMixedLowerBound().front());
    Value upper = index(forall.getMixedUpperBound().front());
    Value step = index(forall.getMixedStep().front());
    Value start = arith::AddIOp::create(
        rewriter, loc, lower,
        arith::MulIOp::create(rewriter, loc, workgroupId, step));
    // A count of 0 would never advance.
    Value count = arith::MaxSIOp::create(
        rewriter, loc, workgroupCount,
        arith::ConstantIndexOp::create(rewriter, loc, 1));
    Value stride = arith::MulIOp::create(rewriter, loc, count, step);
    auto loop = scf::ForOp::create(rewriter, loc, start, upper, stride);
    Block *body = forall.getBody();
    rewriter.eraseOp(body->getTerminator());
    rewriter.inlineBlockBefore(body, loop.getBody()->getTerminator(),
                               ValueRange{loop.getInductionVar()});
    rewriter.eraseOp(forall);
  }
};

} // namespace
