//===- FormDispatchRegions.cpp - group kiln ops into kernels --------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kiln-form-dispatch-regions"

namespace kiln {
#define GEN_PASS_DEF_FORMDISPATCHREGIONS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Ops that do not become kernels: weights are buffers and reshapes alias.
bool staysOnHost(Operation *op) {
  return isa<ConstantOp, ReshapeOp, DispatchRegionOp, func::ReturnOp>(op);
}

/// A constant small enough to clone into each kernel as an immediate.
bool isInlinableConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  return constant && isa<DenseElementsAttr>(constant.getValue()) &&
         constant.getType().getNumElements() <= 16;
}

struct FormDispatchRegionsPass
    : public kiln::impl::FormDispatchRegionsBase<FormDispatchRegionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<SmallVector<Operation *>> groups = formGroups();
    for (auto &group : groups)
      createRegion(group);
  }

  /// Chains of ops, in order, where every op but the last has exactly one
  /// use, by the next op of the chain.
  SmallVector<SmallVector<Operation *>> formGroups() {
    SmallVector<SmallVector<Operation *>> groups;
    DenseMap<Operation *, size_t> groupOf;
    for (Operation &op : getOperation().getBody().front()) {
      if (staysOnHost(&op))
        continue;
      std::optional<size_t> target;
      if (fuseElementwise && kiln::isElementwise(&op))
        target = findProducerGroup(&op, groupOf, groups);
      if (target) {
        groups[*target].push_back(&op);
        groupOf[&op] = *target;
        continue;
      }
      groupOf[&op] = groups.size();
      groups.push_back({&op});
    }
    return groups;
  }

  std::optional<size_t>
  findProducerGroup(Operation *op, DenseMap<Operation *, size_t> &groupOf,
                    ArrayRef<SmallVector<Operation *>> groups) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      auto it = producer ? groupOf.find(producer) : groupOf.end();
      if (it == groupOf.end())
        continue;
      // Only the last op of a group may feed outside it.
      if (groups[it->second].back() != producer)
        continue;
      if (!operand.hasOneUse()) {
        LLVM_DEBUG(llvm::dbgs() << "not fusing " << op->getName() << " at "
                                << op->getLoc() << ": its producer "
                                << producer->getName()
                                << " has other users (would recompute)\n");
        continue;
      }
      return it->second;
    }
    return std::nullopt;
  }

  /// Replaces a chain of ops by one kiln.dispatch_region at the last op.
  void createRegion(ArrayRef<Operation *> group) {
    Operation *last = group.back();
    llvm::SetVector<Value> inputs;
    llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
    for (Operation *op : group)
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if ((def && inGroup.contains(def)) || isInlinableConstant(operand))
          continue;
        inputs.insert(operand);
      }

    OpBuilder builder(last);
    auto region = DispatchRegionOp::create(builder, last->getLoc(),
                                           last->getResultTypes(),
                                           inputs.getArrayRef());
    Block &body = region.getBody().front();
    IRMapping mapping;
    for (auto [input, arg] : llvm::zip(inputs, body.getArguments()))
      mapping.map(input, arg);
    builder.setInsertionPointToStart(&body);
    for (Operation *op : group)
      for (Value operand : op->getOperands())
        if (isInlinableConstant(operand) && !mapping.contains(operand))
          mapping.map(operand,
                      builder.clone(*operand.getDefiningOp())->getResult(0));
    for (Operation *op : group)
      builder.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value result : last->getResults())
      yielded.push_back(mapping.lookup(result));
    YieldOp::create(builder, last->getLoc(), yielded);
    if (group.size() > 1) {
      SmallVector<Location> locs;
      for (Operation *op : group)
        locs.push_back(op->getLoc());
      region->setLoc(FusedLoc::get(&getContext(), locs));
    }

    last->replaceAllUsesWith(region.getResults());
    for (Operation *op : llvm::reverse(group))
      op->erase();
  }
};

} // namespace
