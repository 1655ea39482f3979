//===- GroupThreadAccesses.cpp - a thread's loads first, stores last ------===//
//
// An elementwise kernel gives each GPU thread a run of neighbouring elements
// (TileAndDistribute's vectorTile: 16 bytes of its widest element), so that
// the thread's loads and stores of each contiguous operand can merge into
// 128-bit accesses. The merging is LLVM's LoadStoreVectorizer's, which only
// combines accesses that are close together: in a loop of 4 elements whose
// body is bias + GELU (an erf of about 40 instructions), the unrolled loads
// of neighbouring elements are too far apart, and every store sits between
// them; the kernel read and wrote 4 bytes per instruction.
//
// This pass unrolls such a loop (an scf.for of a few iterations, no
// iter_args, straight-line, with a store) and orders what it unrolled as
// the loads with the index arithmetic they need, then the computation, then
// the stores: the vectorizer then sees each operand's loads, and the
// output's stores, side by side. Reordering moves a load above a store, or
// a store below a load, only of distinct buffers (kernel arguments are
// noalias); a loop that loads from a buffer it also stores to, or holds
// any other operation with memory effects, is left alone.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_GROUPTHREADACCESSES
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Most iterations unrolled: a run of 16 bytes of 1-byte elements.
constexpr int64_t kMaxIterations = 16;

/// The buffer a view of memory starts from (through subviews and casts).
Value rootBuffer(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      memref = view.getViewSource();
    else
      break;
  }
  return memref;
}

/// A loop worth unrolling: constant bounds, few iterations, no values
/// carried, a body of plain operations (no regions) that stores.
bool isThreadRunLoop(scf::ForOp loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->getSExtValue() < 1 ||
      trips->getSExtValue() > kMaxIterations ||
      loop.getNumRegionIterArgs() != 0)
    return false;
  bool stores = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return false;
    stores |= isa<memref::StoreOp>(op);
  }
  return stores;
}

/// Whether the operations [first, last] may be reordered as loads first,
/// stores last: their only memory effects are memref.load and memref.store,
/// and no buffer is both loaded and stored.
bool mayGroup(Operation *first, Operation *last) {
  llvm::SmallPtrSet<Value, 4> loaded, stored;
  for (Operation *op = first;; op = op->getNextNode()) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      loaded.insert(rootBuffer(load.getMemRef()));
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      stored.insert(rootBuffer(store.getMemRef()));
    else if (!isMemoryEffectFree(op) || op->getNumRegions() != 0)
      return false;
    if (op == last)
      break;
  }
  return llvm::none_of(loaded, [&](Value b) { return stored.contains(b); });
}

/// Reorders [first, last] (one block, checked by mayGroup): each load with
/// the operations it needs from the range, in their order; then the rest;
/// then the stores.
void groupAccesses(Operation *first, Operation *last) {
  SmallVector<Operation *> range;
  for (Operation *op = first;; op = op->getNextNode()) {
    range.push_back(op);
    if (op == last)
      break;
  }
  llvm::SmallPtrSet<Operation *, 32> inRange(range.begin(), range.end());
  // The loads' backward slices within the range.
  llvm::SetVector<Operation *> early;
  std::function<void(Operation *)> need = [&](Operation *op) {
    if (!inRange.contains(op) || early.contains(op))
      return;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        need(def);
    early.insert(op);
  };
  for (Operation *op : range)
    if (isa<memref::LoadOp>(op))
      need(op);
  Operation *anchor = last->getNextNode();
  Block *block = first->getBlock();
  auto place = [&](Operation *op) {
    if (anchor)
      op->moveBefore(anchor);
    else
      op->moveBefore(block, block->end());
  };
  // In range order, so that every group keeps its operands before it.
  for (Operation *op : range)
    if (early.contains(op))
      place(op);
  for (Operation *op : range)
    if (!early.contains(op) && !isa<memref::StoreOp>(op))
      place(op);
  for (Operation *op : range)
    if (isa<memref::StoreOp>(op))
      place(op);
}

struct GroupThreadAccessesPass
    : public kiln::impl::GroupThreadAccessesBase<GroupThreadAccessesPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUFuncOp kernel = getOperation();
    SmallVector<scf::ForOp> loops;
    // Innermost first: an outer loop of one iteration around an unrolled
    // run becomes a run itself.
    kernel.walk<WalkOrder::PostOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      Block *body = loop.getBody();
      if (!isThreadRunLoop(loop) ||
          !mayGroup(&body->front(), body->getTerminator()->getPrevNode()))
        continue;
      Operation *before = loop->getPrevNode(), *after = loop->getNextNode();
      Block *block = loop->getBlock();
      if (failed(loopUnrollFull(loop)))
        continue;
      Operation *first = before ? before->getNextNode() : &block->front();
      Operation *last = after ? after->getPrevNode() : &block->back();
      groupAccesses(first, last);
    }
  }
};

} // namespace
