//===- DistributeRowsToLanes.cpp - threads per row for row reductions -----===//
//
// GPU tiling gives a kernel whose fused producers reduce rows (softmax,
// normalizations) one forall iteration per row. One thread per row reads the
// row alone and at a stride from its neighbours; a warp per row (a block for
// long rows) reads it coalesced and combines partial results with shuffles
// (and workgroup memory across the warps of a block). When the row fits in
// the threads' registers its ops become straight-line code that reuses what
// it loaded, so softmax and LayerNorm read their input from memory once
// instead of once per op.
//
//===----------------------------------------------------------------------===//
#include "WholeTensorRow.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
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
        hasLongReduction |= linalgOp.getStaticLoopRanges()[*row] >= lanes;
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

/// How the threads of a row share it.
struct RowPlan {
  /// Threads per row: a warp, or a block of several warps.
  int64_t threads;
  /// Thread t takes runs of `vector` neighbouring elements: positions
  /// t * vector + k * threads * vector + i, i < vector.
  int64_t vector;
  /// Elements per thread when they fit in registers (straight-line code);
  /// 0 when each op loops over the row.
  int64_t positions;
};

/// A warp per row while each thread keeps at most `registers` elements,
/// else the fewest warps (up to `maxThreads` threads) that let it; runs of 4
/// when they tile the row exactly. Ops over rows of different lengths keep a
/// warp and loops: a thread would read elements another thread wrote.
RowPlan planRows(ArrayRef<int64_t> extents, int64_t lanes, int64_t maxThreads,
                 int64_t registers) {
  if (llvm::any_of(extents, [&](int64_t e) { return e != extents.front(); }))
    return {lanes, 1, 0};
  int64_t extent = extents.front();
  int64_t threads = lanes;
  while (llvm::divideCeilSigned(extent, threads) > registers &&
         threads * 2 <= maxThreads)
    threads *= 2;
  int64_t perThread = llvm::divideCeilSigned(extent, threads);
  if (perThread > registers)
    return {threads, 1, 0};
  int64_t vector = extent % (4 * threads) == 0 ? 4 : 1;
  return {threads, vector, perThread};
}

/// The buffer a view looks into.
Value rootBuffer(Value view) {
  return memref::skipViewLikeOps(cast<MemrefValue>(view));
}

/// Indices of an operand at row position `j` (other loops have extent 1).
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
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

/// Rewrites the linalg ops of one row iteration for the row's threads.
class RowDistributor {
public:
  RowDistributor(IRRewriter &rewriter, const RowPlan &plan, int64_t lanes,
                 Value thread)
      : rewriter(rewriter), plan(plan), lanes(lanes), thread(thread) {}

  /// Rewrites `op`, whose loop `row` runs over the row, and erases it.
  void distribute(linalg::LinalgOp op, int64_t row) {
    rewriter.setInsertionPoint(op);
    if (plan.positions > 0)
      distributeInRegisters(op, row);
    else
      distributeAsLoop(op, row);
    rewriter.eraseOp(op);
  }

  /// `op` is left for every thread to run on its own (a unit op: a fill or
  /// copy of a row's scalar); what it writes is no longer known.
  void noteWrites(linalg::LinalgOp op) {
    for (Value init : op.getDpsInits())
      forget(init, AffineMap(), -1);
  }

private:
  /// A value at a position of a view: (view, indexing map, position), the
  /// position -1 when the map does not index the row.
  using Place = std::tuple<Value, AffineMap, int64_t>;

  Value constant(Location loc, int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  }

  static bool indexesRow(AffineMap map, int64_t row) {
    return map.isFunctionOfDim(row);
  }

  /// Drops what is known about the buffer under `view`, except the other
  /// positions of the same view and map (distinct elements).
  void forget(Value view, AffineMap map, int64_t position) {
    Value root = rootBuffer(view);
    for (auto it = known.begin(); it != known.end();) {
      auto [v, m, p] = it->first;
      bool distinct = v == view && m == map && p != position;
      auto next = std::next(it);
      if (!distinct && rootBuffer(v) == root)
        known.erase(it);
      it = next;
    }
  }

  /// Loads operand `operand` of `op` at row position `j`, the thread's
  /// `position`-th element (-1 in a loop), reusing a value loaded or stored
  /// there before. Only values at the iteration's top level (`topLevel`:
  /// not inside a guard or loop) are remembered: they dominate what follows.
  Value load(linalg::LinalgOp op, OpOperand &operand, int64_t row, Value j,
             int64_t position, bool topLevel) {
    Location loc = op.getLoc();
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Value view = operand.get();
    int64_t at = indexesRow(map, row) ? position : -1;
    if (plan.positions > 0 && (topLevel || at == -1)) {
      auto found = known.find(Place{view, map, at});
      if (found != known.end())
        return found->second;
    }
    Value value = memref::LoadOp::create(rewriter, loc, view,
                                         indicesAt(rewriter, loc, map, row, j));
    if (plan.positions > 0 && topLevel)
      known[Place{view, map, at}] = value;
    return value;
  }

  /// Stores `value` to init `init` of `op` at row position `j`.
  void store(linalg::LinalgOp op, OpOperand &init, int64_t row, Value j,
             int64_t position, bool topLevel, Value value) {
    Location loc = op.getLoc();
    AffineMap map = op.getMatchingIndexingMap(&init);
    int64_t at = indexesRow(map, row) ? position : -1;
    memref::StoreOp::create(rewriter, loc, value, init.get(),
                            indicesAt(rewriter, loc, map, row, j));
    forget(init.get(), map, at);
    if (plan.positions > 0 && topLevel)
      known[Place{init.get(), map, at}] = value;
  }

  /// True when argument `operand` of `op`'s body is the same at every
  /// position: a scalar, or an input read without the row from a buffer
  /// the op does not write.
  static bool isRowInvariant(linalg::LinalgOp op, OpOperand &operand,
                             int64_t row) {
    if (op.isDpsInit(&operand))
      return false;
    if (!isa<MemRefType>(operand.get().getType()))
      return true;
    if (indexesRow(op.getMatchingIndexingMap(&operand), row))
      return false;
    Value root = rootBuffer(operand.get());
    return llvm::none_of(op.getDpsInits(),
                         [&](Value init) { return rootBuffer(init) == root; });
  }

  /// Clones the body of `op` at row position `j`: inputs are loaded, index
  /// ops resolved; `acc` (when set) stands for the accumulator argument.
  /// Pure ops of row-invariant values (LayerNorm's 1/sqrt(var + eps)) are
  /// cloned once, at the first top-level position, and reused after.
  /// Returns the yielded values.
  SmallVector<Value> cloneBodyAt(linalg::LinalgOp op, int64_t row, Value j,
                                 int64_t position, bool topLevel, Value acc) {
    Location loc = op.getLoc();
    Block &body = op->getRegion(0).front();
    IRMapping mapping;
    llvm::SmallPtrSet<Value, 8> invariant;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body.getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      if (acc && op.isDpsInit(&operand))
        mapping.map(arg, acc);
      else if (isa<MemRefType>(operand.get().getType()))
        mapping.map(arg, load(op, operand, row, j, position, topLevel));
      else
        mapping.map(arg, operand.get());
      if (isRowInvariant(op, operand, row))
        invariant.insert(arg);
    }
    auto isInvariant = [&](Value v) {
      return invariant.contains(v) || v.getParentRegion() != &op->getRegion(0);
    };
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        bool rowIndex = int64_t(index.getDim()) == row;
        mapping.map(index.getResult(), rowIndex ? j : constant(loc, 0));
        if (!rowIndex)
          invariant.insert(index.getResult());
        continue;
      }
      bool once = plan.positions > 0 && isPure(&inner) &&
                  inner.getNumRegions() == 0 &&
                  llvm::all_of(inner.getOperands(), isInvariant);
      if (once) {
        for (Value result : inner.getResults())
          invariant.insert(result);
        auto found = hoisted.find(&inner);
        if (found != hoisted.end()) {
          mapping.map(inner.getResults(), found->second->getResults());
          continue;
        }
      }
      if (auto divide = dyn_cast<arith::DivFOp>(inner);
          divide && plan.positions > 0 && !once &&
          isInvariant(divide.getRhs())) {
        mapping.map(divide.getResult(),
                    multiplyByReciprocal(divide, mapping, topLevel));
        continue;
      }
      Operation *clone = rewriter.clone(inner, mapping);
      if (once && topLevel)
        hoisted[&inner] = clone;
    }
    SmallVector<Value> yielded;
    for (Value v : body.getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(v));
    return yielded;
  }

  /// `divide`'s dividend times the reciprocal of its row-invariant divisor
  /// (softmax's sum), the reciprocal computed once per thread, at the first
  /// top-level position: one multiply per element instead of a
  /// correctly-rounded division (a dozen instructions on NVIDIA), at most
  /// an ulp or so from the quotient.
  Value multiplyByReciprocal(arith::DivFOp divide, IRMapping &mapping,
                             bool topLevel) {
    Location loc = divide.getLoc();
    auto found = reciprocals.find(divide);
    Value reciprocal;
    if (found != reciprocals.end()) {
      reciprocal = found->second;
    } else {
      Type type = divide.getType();
      Value one = arith::ConstantOp::create(rewriter, loc, type,
                                            rewriter.getFloatAttr(type, 1.0));
      reciprocal = arith::DivFOp::create(
          rewriter, loc, one, mapping.lookupOrDefault(divide.getRhs()),
          divide.getFastmathAttr());
      if (topLevel)
        reciprocals[divide] = reciprocal;
    }
    return arith::MulFOp::create(rewriter, loc,
                                 mapping.lookupOrDefault(divide.getLhs()),
                                 reciprocal, divide.getFastmathAttr());
  }

  /// The thread's elements as straight-line code, one copy of the body per
  /// position; positions past the row's end (the last ones of some
  /// threads, when the threads do not divide the row) are guarded.
  void distributeInRegisters(linalg::LinalgOp op, int64_t row) {
    Location loc = op.getLoc();
    int64_t extent = op.getStaticLoopRanges()[row];
    int64_t vector = plan.vector, threads = plan.threads;
    bool reduces =
        op.getIteratorTypesArray()[row] == utils::IteratorType::reduction;
    Operation *combine = reduces ? reductionCombiner(op) : nullptr;
    Value acc;
    if (reduces)
      acc = identityOf(
          rewriter, loc, combine,
          op.getMatchingBlockArgument(&op.getDpsInitsMutable()[0]).getType());
    Value first = thread;
    if (vector > 1)
      first =
          arith::MulIOp::create(rewriter, loc, thread, constant(loc, vector));
    for (int64_t i = 0; i < plan.positions; ++i) {
      int64_t offset = (i / vector) * vector * threads + i % vector;
      if (offset >= extent)
        break;
      Value j =
          arith::AddIOp::create(rewriter, loc, first, constant(loc, offset));
      bool guarded = offset + (threads - 1) * vector >= extent;
      if (!guarded) {
        SmallVector<Value> values =
            cloneBodyAt(op, row, j, i, /*topLevel=*/true, acc);
        if (reduces)
          acc = values.front();
        else
          for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), values))
            store(op, init, row, j, i, /*topLevel=*/true, value);
        continue;
      }
      Value inRow = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, j, constant(loc, extent));
      OpBuilder::InsertionGuard insertion(rewriter);
      if (reduces) {
        auto inside = scf::IfOp::create(rewriter, loc, TypeRange{acc.getType()},
                                        inRow, /*withElseRegion=*/true);
        rewriter.setInsertionPointToStart(inside.thenBlock());
        SmallVector<Value> values =
            cloneBodyAt(op, row, j, i, /*topLevel=*/false, acc);
        scf::YieldOp::create(rewriter, loc, values.front());
        rewriter.setInsertionPointToStart(inside.elseBlock());
        scf::YieldOp::create(rewriter, loc, acc);
        acc = inside.getResult(0);
      } else {
        auto inside = scf::IfOp::create(rewriter, loc, inRow,
                                        /*withElseRegion=*/false);
        rewriter.setInsertionPoint(inside.thenBlock()->getTerminator());
        SmallVector<Value> values =
            cloneBodyAt(op, row, j, i, /*topLevel=*/false, nullptr);
        for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), values))
          store(op, init, row, j, i, /*topLevel=*/false, value);
      }
    }
    if (reduces)
      finishReduction(op, row, combine, acc);
  }

  /// Thread t handles elements t, t + threads, ... in a loop.
  void distributeAsLoop(linalg::LinalgOp op, int64_t row) {
    Location loc = op.getLoc();
    Value extent = constant(loc, op.getStaticLoopRanges()[row]);
    Value step = constant(loc, plan.threads);
    bool reduces =
        op.getIteratorTypesArray()[row] == utils::IteratorType::reduction;
    if (!reduces) {
      auto loop = scf::ForOp::create(rewriter, loc, thread, extent, step);
      OpBuilder::InsertionGuard insertion(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      SmallVector<Value> values =
          cloneBodyAt(op, row, j, -1, /*topLevel=*/false, nullptr);
      for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), values))
        store(op, init, row, j, -1, /*topLevel=*/false, value);
      return;
    }
    Operation *combine = reductionCombiner(op);
    Type type =
        op.getMatchingBlockArgument(&op.getDpsInitsMutable()[0]).getType();
    Value identity = identityOf(rewriter, loc, combine, type);
    auto loop = scf::ForOp::create(rewriter, loc, thread, extent, step,
                                   ValueRange{identity});
    {
      OpBuilder::InsertionGuard insertion(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> values =
          cloneBodyAt(op, row, loop.getInductionVar(), -1, /*topLevel=*/false,
                      loop.getRegionIterArg(0));
      scf::YieldOp::create(rewriter, loc, values.front());
    }
    finishReduction(op, row, combine, loop.getResult(0));
  }

  /// Combines every thread's `partial` and folds the total into the
  /// accumulator's old value, which is read before the threads meet (a
  /// thread that stores first cannot change what another reads).
  void finishReduction(linalg::LinalgOp op, int64_t row, Operation *combine,
                       Value partial) {
    Location loc = op.getLoc();
    OpOperand &init = op.getDpsInitsMutable()[0];
    Value c0 = constant(loc, 0);
    Value old = load(op, init, row, c0, -1, /*topLevel=*/true);
    Value total = combineAcrossThreads(loc, combine, partial);
    store(op, init, row, c0, -1, /*topLevel=*/true,
          applyCombiner(rewriter, combine, total, old));
  }

  /// Every thread's `partial` combined, in every thread: xor shuffles
  /// within a warp; in a block, each warp's first lane writes its total to
  /// workgroup memory and, after a barrier, every thread combines them.
  Value combineAcrossThreads(Location loc, Operation *combine, Value partial) {
    Value total = partial;
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
      Value other = gpu::ShuffleOp::create(rewriter, loc, total, offset, lanes,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      total = applyCombiner(rewriter, combine, total, other);
    }
    int64_t warps = plan.threads / lanes;
    if (warps == 1)
      return total;
    auto space = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                            gpu::AddressSpace::Workgroup);
    Value totals = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({warps}, total.getType(), MemRefLayoutAttrInterface(),
                        space));
    Value lane =
        arith::RemUIOp::create(rewriter, loc, thread, constant(loc, lanes));
    Value warp =
        arith::DivUIOp::create(rewriter, loc, thread, constant(loc, lanes));
    Value leader = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, lane, constant(loc, 0));
    auto write = scf::IfOp::create(rewriter, loc, leader,
                                   /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard insertion(rewriter);
      rewriter.setInsertionPoint(write.thenBlock()->getTerminator());
      memref::StoreOp::create(rewriter, loc, total, totals, ValueRange{warp});
    }
    gpu::BarrierOp::create(rewriter, loc);
    total = memref::LoadOp::create(rewriter, loc, totals,
                                   ValueRange{constant(loc, 0)});
    for (int64_t w = 1; w < warps; ++w)
      total =
          applyCombiner(rewriter, combine, total,
                        memref::LoadOp::create(rewriter, loc, totals,
                                               ValueRange{constant(loc, w)}));
    return total;
  }

  IRRewriter &rewriter;
  RowPlan plan;
  int64_t lanes;
  Value thread;
  DenseMap<Place, Value> known;
  /// Body ops of row-invariant values and their one clone (per kernel:
  /// body ops are distinct across linalg ops).
  DenseMap<Operation *, Operation *> hoisted;
  /// Divisions by a row-invariant value and the reciprocal computed for
  /// them (multiplyByReciprocal).
  DenseMap<Operation *, Value> reciprocals;
};

struct DistributeRowsToLanesPass
    : public kiln::impl::DistributeRowsToLanesBase<DistributeRowsToLanesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForallOp> loops(func.getBody().getOps<scf::ForallOp>());
    // A kernel reducing whole tensors: one row (else it stays serial).
    if (loops.empty())
      if (scf::ForallOp row = wrapWholeTensorReduction(func, rewriter, lanes))
        loops.push_back(row);
    if (loops.size() != 1 || !isRowKernel(loops.front(), lanes))
      return;
    scf::ForallOp forall = loops.front();
    SmallVector<linalg::LinalgOp> ops;
    SmallVector<int64_t> extents;
    forall.getBody()->walk([&](linalg::LinalgOp op) {
      ops.push_back(op);
      int64_t row = *rowLoop(op);
      if (row >= 0)
        extents.push_back(op.getStaticLoopRanges()[row]);
    });
    RowPlan plan = planRows(
        extents, lanes, std::max<int64_t>(lanes, maxRowThreads), rowRegisters);
    rewriter.setInsertionPointToStart(forall.getBody());
    Location loc = forall.getLoc();
    bool block = plan.threads > lanes;
    Value thread =
        block ? Value(gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x))
              : Value(gpu::LaneIdOp::create(rewriter, loc,
                                            /*upper_bound=*/IntegerAttr()));
    RowDistributor distributor(rewriter, plan, lanes, thread);
    for (linalg::LinalgOp op : ops) {
      int64_t row = *rowLoop(op);
      if (row < 0)
        distributor.noteWrites(op); // every thread runs it on its own copy
      else
        distributor.distribute(op, row);
    }
    func->setAttr(kiln::attrs::kLanes,
                  rewriter.getI64IntegerAttr(plan.threads));
    if (block)
      func->setAttr(kiln::attrs::kCooperative, rewriter.getUnitAttr());
  }
};

} // namespace
