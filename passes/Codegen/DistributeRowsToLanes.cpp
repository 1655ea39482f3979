//===- DistributeRowsToLanes.cpp - one warp per row for row reductions ----===//
//
// GPU tiling gives a kernel whose fused producers reduce rows (softmax,
// normalizations) one forall iteration per row. One thread per row reads the
// row alone and at a stride from its neighbours; a warp per row reads it
// coalesced, a warp's 32 lanes (a wavefront's 64 on AMD) at a time, and
// combines partial results with shuffles.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_DISTRIBUTEROWSTOLANES
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The loop of `op` with extent > 1 (its row); -1 when every loop has extent
/// 1; failure when several loops are longer or a size is dynamic.
FailureOr<int64_t> rowLoop(linalg::LinalgOp op) {
  int64_t row = -1;
  for (auto [i, extent] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(extent))
      return failure();
    if (extent > 1) {
      if (row >= 0)
        return failure();
      row = i;
    }
  }
  return row;
}

/// Each operand indexes the row, if at all, by its last dim, so that lanes
/// striding over the row touch neighbouring addresses.
bool rowIsLastDim(linalg::LinalgOp op, int64_t row) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      if (isa<AffineConstantExpr>(expr))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        return false;
      if (int64_t(dim.getPosition()) == row &&
          int64_t(i) != map.getNumResults() - 1)
        return false;
    }
  }
  return true;
}

/// The op that folds each element into a reduction's accumulator, when the
/// body is `yield combine(f(inputs), acc)` with an associative, commutative
/// combine on a type lanes can shuffle; null otherwise.
Operation *reductionCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return nullptr;
  Block &body = op->getRegion(0).front();
  Value acc = body.getArgument(op.getNumDpsInputs());
  Operation *combine = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combine ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp>(combine) ||
      !acc.hasOneUse() || *acc.getUsers().begin() != combine)
    return nullptr;
  Type type = acc.getType();
  if (!type.isF32() && !type.isInteger(32))
    return nullptr;
  return combine;
}

/// The value `combine` leaves unchanged.
Value identityOf(OpBuilder &b, Location loc, Operation *combine, Type type) {
  double value = 0;
  if (isa<arith::MulFOp>(combine))
    value = 1;
  else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    value = -INFINITY;
  else if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    value = INFINITY;
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
}

/// `combine` applied to `lhs` and `rhs` (a copy with new operands).
Value applyCombiner(OpBuilder &b, Operation *combine, Value lhs, Value rhs) {
  Operation *copy = b.clone(*combine);
  copy->setOperands({lhs, rhs});
  return copy->getResult(0);
}

/// True when every op in the forall body is a linalg op this pass can
/// distribute, or an op that does not touch memory or only allocates it,
/// and at least one op reduces a row of `lanes` elements or more.
bool isRowKernel(scf::ForallOp forall, int64_t lanes) {
  bool hasLongReduction = false;
  WalkResult walk = forall.getBody()->walk([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      FailureOr<int64_t> row = rowLoop(linalgOp);
      if (failed(row) || !linalgOp.hasPureBufferSemantics())
        return WalkResult::interrupt();
      if (*row < 0)
        return WalkResult::skip();
      if (!rowIsLastDim(linalgOp, *row))
        return WalkResult::interrupt();
      if (linalgOp.getIteratorTypesArray()[*row] ==
          utils::IteratorType::reduction) {
        if (!reductionCombiner(linalgOp))
          return WalkResult::interrupt();
        hasLongReduction |=
            linalgOp.getStaticLoopRanges()[*row] >= lanes;
      }
      return WalkResult::skip();
    }
    if (isa<scf::InParallelOp>(op))
      return WalkResult::skip();
    if (op->getNumRegions() > 0)
      return WalkResult::interrupt();
    if (isMemoryEffectFree(op) ||
        isa<memref::AllocaOp, memref::AllocOp, memref::DeallocOp,
            memref::GetGlobalOp>(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted() && hasLongReduction;
}

struct DistributeRowsToLanesPass
    : public kiln::impl::DistributeRowsToLanesBase<DistributeRowsToLanesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("kiln.kernel"))
      return;
    SmallVector<scf::ForallOp> loops(func.getBody().getOps<scf::ForallOp>());
    if (loops.size() != 1 || !isRowKernel(loops.front(), lanes))
      return;
    scf::ForallOp forall = loops.front();
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPointToStart(forall.getBody());
    Value lane = gpu::LaneIdOp::create(rewriter, forall.getLoc(),
                                       /*upper_bound=*/IntegerAttr());
    SmallVector<linalg::LinalgOp> ops;
    forall.getBody()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      int64_t row = *rowLoop(op);
      if (row < 0)
        continue; // a unit op: every lane does it, on its own copy
      distribute(rewriter, op, row, lane);
    }
    func->setAttr("kiln.lanes",
                  rewriter.getI64IntegerAttr(lanes));
  }

  /// Indices of an operand at row position `j` (other loops have extent 1).
  static SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                                      int64_t row, Value j) {
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults()) {
      if (auto c = dyn_cast<AffineConstantExpr>(expr))
        indices.push_back(arith::ConstantIndexOp::create(b, loc, c.getValue()));
      else if (int64_t(cast<AffineDimExpr>(expr).getPosition()) == row)
        indices.push_back(j);
      else
        indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    }
    return indices;
  }

  /// Clones the body of `op` at row position `j`: inputs are loaded, index
  /// ops resolved; `acc` (when set) stands for the accumulator argument.
  /// Returns the yielded values.
  static SmallVector<Value> cloneBodyAt(OpBuilder &b, linalg::LinalgOp op,
                                        int64_t row, Value j, Value acc) {
    Location loc = op.getLoc();
    Block &body = op->getRegion(0).front();
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body.getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      Value v = operand.get();
      if (acc && op.isDpsInit(&operand)) {
        mapping.map(arg, acc);
      } else if (isa<MemRefType>(v.getType())) {
        mapping.map(arg, memref::LoadOp::create(
                             b, loc, v,
                             indicesAt(b, loc, op.getMatchingIndexingMap(&operand),
                                       row, j)));
      } else {
        mapping.map(arg, v);
      }
    }
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(),
                    int64_t(index.getDim()) == row
                        ? j
                        : Value(arith::ConstantIndexOp::create(b, loc, 0)));
        continue;
      }
      b.clone(inner, mapping);
    }
    SmallVector<Value> yielded;
    for (Value v : body.getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(v));
    return yielded;
  }

  void distribute(IRRewriter &rewriter, linalg::LinalgOp op, int64_t row,
                  Value lane) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value extent = arith::ConstantIndexOp::create(
        rewriter, loc, op.getStaticLoopRanges()[row]);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, lanes);
    bool reduces =
        op.getIteratorTypesArray()[row] == utils::IteratorType::reduction;
    if (!reduces) {
      // Lane l handles elements l, l + 32, ...
      auto loop = scf::ForOp::create(rewriter, loc, lane, extent, step);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      SmallVector<Value> values = cloneBodyAt(rewriter, op, row, j, nullptr);
      for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), values))
        memref::StoreOp::create(
            rewriter, loc, value, init.get(),
            indicesAt(rewriter, loc, op.getMatchingIndexingMap(&init), row, j));
      rewriter.eraseOp(op);
      return;
    }
    // Each lane folds its elements into a partial result; shuffles combine
    // the 32 partials so that every lane holds the row's total.
    Operation *combine = reductionCombiner(op);
    OpOperand &init = op.getDpsInitsMutable()[0];
    Type type = op.getMatchingBlockArgument(&init).getType();
    Value identity = identityOf(rewriter, loc, combine, type);
    auto loop = scf::ForOp::create(rewriter, loc, lane, extent, step,
                                   ValueRange{identity});
    rewriter.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> values = cloneBodyAt(
        rewriter, op, row, loop.getInductionVar(), loop.getRegionIterArg(0));
    scf::YieldOp::create(rewriter, loc, values.front());
    rewriter.setInsertionPointAfter(loop);
    Value total = loop.getResult(0);
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
      Value other = gpu::ShuffleOp::create(rewriter, loc, total, offset,
                                           lanes, gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      total = applyCombiner(rewriter, combine, total, other);
    }
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> at =
        indicesAt(rewriter, loc, op.getMatchingIndexingMap(&init), row, c0);
    Value old = memref::LoadOp::create(rewriter, loc, init.get(), at);
    memref::StoreOp::create(rewriter, loc,
                            applyCombiner(rewriter, combine, total, old),
                            init.get(), at);
    rewriter.eraseOp(op);
  }
};

} // namespace
