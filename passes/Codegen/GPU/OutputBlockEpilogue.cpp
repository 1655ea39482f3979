//===- OutputBlockEpilogue.cpp - a block's ops at each thread's outputs ---===//
//
// The ops around a block's contraction at the positions each thread owns
// (its fragments): loads and stores of tile elements with their known
// alignment, the elementwise epilogue, and the stores of the results.
//
//===----------------------------------------------------------------------===//
#include "OutputBlock.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

using namespace mlir;
using namespace kiln;
using namespace kiln::detail;

/// True when `map` indexes a buffer shaped like the output tile, loop
/// `row` at the M position and `col` at the N position, every other
/// result a unit loop or a constant: each position then names the same
/// element of every such buffer.
bool OutputBlock::indexesTileElement(linalg::LinalgOp op, AffineMap map,
                                     TileLoops tile) const {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (int64_t(map.getNumResults()) <= std::max({outM, outN, outMOuter}))
    return false;
  for (auto [r, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    int64_t want = int64_t(r) == outM                          ? tile.row
                   : int64_t(r) == outN                        ? tile.col
                   : outMOuter >= 0 && int64_t(r) == outMOuter ? tile.rowOuter
                                                               : -1;
    if (want >= 0 ? (!dim || int64_t(dim.getPosition()) != want)
                  : (dim && ranges[dim.getPosition()] != 1))
      return false;
  }
  return true;
}

static int64_t knownAccessAlignment(Value buffer, ArrayRef<Value> indices);

/// `access` (a memref.load or memref.store of `buffer` at `indices`) told
/// the alignment its address is known to have where that is more than its
/// element's: LLVM joins a lane's neighbouring 16-bit accesses into one
/// wider access only when it can see the first one aligned to the width
/// (ResNet-50 b32 f16's residual epilogues read 2 bytes at a time).
static void annotateAlignment(Operation *access, Value buffer,
                              ArrayRef<Value> indices) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t alignment = knownAccessAlignment(buffer, indices);
  if (alignment * 8 > int64_t(type.getElementTypeBitWidth()))
    access->setAttr("alignment",
                    IntegerAttr::get(IntegerType::get(access->getContext(), 64),
                                     alignment));
}

/// Loads element `e` of the thread's positions from `buffer`, or reuses
/// the value this thread stored there (temporaries private to the thread
/// then need no memory round trip: stores that are never loaded are dead).
Value OutputBlock::loadElement(OpBuilder &b, Location loc, Value buffer,
                               ArrayRef<Value> indices, int64_t e,
                               bool tileElement) {
  if (tileElement)
    if (Value known = stored.lookup({buffer, e}))
      return known;
  forgetUnreadStores(buffer);
  auto load = memref::LoadOp::create(b, loc, buffer, indices);
  annotateAlignment(load, buffer, indices);
  return load;
}

void OutputBlock::forgetUnreadStores(Value buffer) {
  for (auto it = unreadStores.begin(); it != unreadStores.end();) {
    auto current = it++;
    if (current->first.first == buffer)
      unreadStores.erase(current);
  }
}

void OutputBlock::storeElement(OpBuilder &b, Location loc, Value value,
                               Value buffer, ArrayRef<Value> indices, int64_t e,
                               bool tileElement) {
  // The op that stores (erased whole when overwritten).
  Operation *store;
  if (positionValid.empty()) {
    store = memref::StoreOp::create(b, loc, value, buffer, indices);
    annotateAlignment(store, buffer, indices);
  } else {
    // A padded row's or column's element: its indices are the last valid
    // one's, whose owner stores the real value.
    auto guard =
        scf::IfOp::create(b, loc, positionValid[e], /*withElseRegion=*/false);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    annotateAlignment(memref::StoreOp::create(b, loc, value, buffer, indices),
                      buffer, indices);
    store = guard;
  }
  if (!tileElement) {
    forgetUnreadStores(buffer);
    return;
  }
  stored[{buffer, e}] = value;
  // Global memory stores are not removed by LLVM across the barriers of a
  // staged contraction: an overwritten store is erased here.
  if (Operation *overwritten = unreadStores.lookup({buffer, e}))
    overwritten->erase();
  unreadStores[{buffer, e}] = store;
}

/// Runs the elementwise `op` at each of `positions` only.
void OutputBlock::emitAtPositions(OpBuilder &b, linalg::LinalgOp op,
                                  ArrayRef<Position> positions) {
  Location loc = op.getLoc();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  TileLoops tile = *tileLoopsOf(op, outMap.getNumResults());
  Block &body = op->getRegion(0).front();
  for (auto [e, position] : llvm::enumerate(positions)) {
    auto [row, col] = position;
    SmallVector<std::pair<int64_t, Value>> at =
        rowAt(b, loc, tile.rowOuter, tile.row, row);
    at.push_back({tile.col, clampColumn(b, loc, col)});
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (arg.use_empty())
        continue;
      Value v = operand.get();
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (isa<MemRefType>(v.getType()))
        v = loadElement(b, loc, v, indicesAt(b, loc, map, at), e,
                        indexesTileElement(op, map, tile));
      mapping.map(arg, v);
    }
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        auto loop = llvm::find_if(at, [&](auto &loopValue) {
          return loopValue.first == int64_t(index.getDim());
        });
        mapping.map(index.getResult(),
                    loop != at.end()
                        ? loop->second
                        : Value(arith::ConstantIndexOp::create(b, loc, 0)));
        continue;
      }
      b.clone(inner, mapping);
    }
    for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(),
                                        body.getTerminator()->getOperands())) {
      AffineMap map = op.getMatchingIndexingMap(&init);
      storeElement(b, loc, mapping.lookupOrDefault(value), init.get(),
                   indicesAt(b, loc, map, at), e,
                   indexesTileElement(op, map, tile));
    }
  }
}

SmallVector<Value> OutputBlock::validities(OpBuilder &b,
                                           ArrayRef<Position> positions) {
  SmallVector<Value> valid;
  if (validM == tileM && validN == tileN)
    return valid;
  Location loc = forall.getLoc();
  for (const Position &position : positions) {
    Value inside;
    if (validM < tileM)
      inside = isBelow(b, loc, position.first, validM);
    if (validN < tileN) {
      Value column = isBelow(b, loc, position.second, validN);
      inside = inside ? arith::AndIOp::create(b, loc, inside, column) : column;
    }
    valid.push_back(inside);
  }
  return valid;
}

void OutputBlock::rewrite(OpBuilder &b, ArrayRef<Position> positions,
                          function_ref<void(OpBuilder &)> emitContraction,
                          ArrayRef<Position> prologuePositions) {
  stored.clear();
  unreadStores.clear();
  if (prologuePositions.empty())
    prologuePositions = positions;
  assert(prologuePositions.size() == positions.size() &&
         "as many prologue positions as positions");
  b.setInsertionPoint(ops.front());
  SmallVector<Value> epilogueValid = validities(b, positions);
  positionValid = prologuePositions == positions
                      ? epilogueValid
                      : validities(b, prologuePositions);
  bool beforeContraction = true;
  for (linalg::LinalgOp op : ops) {
    b.setInsertionPoint(op);
    if (op.getOperation() == contraction.getOperation()) {
      // The contraction reads its initial accumulators (no validity) and
      // stores its results at `positions`.
      beforeContraction = false;
      positionValid = epilogueValid;
      emitContraction(b);
    } else {
      emitAtPositions(b, op, beforeContraction ? prologuePositions : positions);
    }
    op->erase();
  }
  erasePaddedBuffer();
}

SmallVector<Value> OutputBlock::outputIndices(OpBuilder &b, Location loc,
                                              Position position) {
  AffineMap outMap =
      contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
  SmallVector<std::pair<int64_t, Value>> at =
      tileAt(b, loc, /*input=*/0, position.first);
  at.push_back({loops.n, clampColumn(b, loc, position.second)});
  return indicesAt(b, loc, outMap, at);
}

SmallVector<Value>
OutputBlock::initialAccumulators(OpBuilder &b, Location loc,
                                 ArrayRef<Position> positions) {
  Value output = contraction.getDpsInits()[0];
  AffineMap outMap =
      contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
  bool tileElement =
      indexesTileElement(contraction, outMap, contractionTileLoops());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> initial;
  for (auto [e, position] : llvm::enumerate(positions))
    initial.push_back(loops.scale ? zero
                                  : loadElement(b, loc, output,
                                                outputIndices(b, loc, position),
                                                e, tileElement));
  return initial;
}

void OutputBlock::storeResults(OpBuilder &b, Location loc,
                               ArrayRef<Position> positions, ValueRange sums) {
  Value output = contraction.getDpsInits()[0];
  AffineMap outMap =
      contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
  bool tileElement =
      indexesTileElement(contraction, outMap, contractionTileLoops());
  for (auto [e, position, sum] : llvm::enumerate(positions, sums)) {
    SmallVector<Value> at = outputIndices(b, loc, position);
    Value element = sum;
    if (loops.scale)
      element = arith::AddFOp::create(
          b, loc, loadElement(b, loc, output, at, e, tileElement),
          arith::MulFOp::create(b, loc, element, loops.scale));
    storeElement(b, loc, element, output, at, e, tileElement);
  }
}

/// A number that `index` is known to be a multiple of: a constant itself,
/// a forall's induction variable from 0 its step, the smaller of two such
/// (a shifted last block's offset, min(iv, extent - size): tileMatrix)
/// their gcd. None when unknown.
static std::optional<int64_t> knownIndexMultiple(OpFoldResult index) {
  if (std::optional<int64_t> constant = getConstantIntValue(index))
    return constant;
  auto value = cast<Value>(index);
  if (auto min = value.getDefiningOp<arith::MinUIOp>()) {
    std::optional<int64_t> lhs = knownIndexMultiple(min.getLhs());
    std::optional<int64_t> rhs = knownIndexMultiple(min.getRhs());
    if (!lhs || !rhs)
      return std::nullopt;
    return std::gcd(*lhs, *rhs);
  }
  scf::ForallOp forall = scf::getForallOpThreadIndexOwner(value);
  if (!forall)
    return std::nullopt;
  unsigned i = cast<BlockArgument>(value).getArgNumber();
  std::optional<int64_t> lower =
      getConstantIntValue(forall.getMixedLowerBound()[i]);
  if (!lower || *lower != 0)
    return std::nullopt;
  return getConstantIntValue(forall.getMixedStep()[i]);
}

/// A multiple (in elements, up to 64 bytes' worth) that the offset of
/// `view` from the start of its kernel argument is known to be: the
/// arguments themselves are 64-byte aligned (the runtime's arena slots,
/// `llvm.align` on the GPU function), reshapes keep the offset, subviews
/// add theirs, and an offset that is a forall's induction variable is a
/// multiple of its step (knownIndexMultiple). 1 when unknown.
int64_t kiln::detail::knownOffsetMultiple(Value view, int64_t elementBytes,
                                          Value alignedRoot) {
  int64_t multiple = 64 / elementBytes;
  while (view != alignedRoot) {
    if (auto reshape = view.getDefiningOp<memref::CollapseShapeOp>()) {
      view = reshape.getSrc();
    } else if (auto reshape = view.getDefiningOp<memref::ExpandShapeOp>()) {
      view = reshape.getSrc();
    } else if (auto subview = view.getDefiningOp<memref::SubViewOp>()) {
      auto [strides, offset] = subview.getSourceType().getStridesAndOffset();
      for (auto [d, mixed] : llvm::enumerate(subview.getMixedOffsets())) {
        if (ShapedType::isDynamic(strides[d]))
          return 1;
        // An offset of unknown multiple (a strided convolution's 2 * oh)
        // still moves by whole strides.
        int64_t step = knownIndexMultiple(mixed).value_or(1);
        if (step * strides[d] != 0)
          multiple = std::gcd(multiple, step * strides[d]);
      }
      view = subview.getSource();
    } else {
      break;
    }
  }
  if (view == alignedRoot)
    return multiple;
  auto argument = dyn_cast<BlockArgument>(view);
  if (!argument || !isa<func::FuncOp>(argument.getOwner()->getParentOp()))
    return 1;
  return multiple;
}

/// Largest multiple knownValueMultiple reports (and what 0 counts as).
static constexpr int64_t kAnyMultiple = 1 << 20;

/// A number that the index `value` is known to be a multiple of, from the
/// arithmetic that computes it (constants, a forall's induction variable,
/// sums, products, shifts, clamps); 1 when unknown. Only its power-of-two
/// part up to kAnyMultiple is kept (a divisor of it: still a multiple),
/// which is all an alignment needs.
static int64_t knownValueMultiple(Value value, int depth = 0) {
  auto capped = [](int64_t m) { return std::gcd(m, kAnyMultiple); };
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return *constant == 0 ? kAnyMultiple : capped(std::abs(*constant));
  if (std::optional<int64_t> known = knownIndexMultiple(value))
    return *known == 0 ? kAnyMultiple : capped(std::abs(*known));
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return 1;
  auto of = [&](Value operand) {
    return knownValueMultiple(operand, depth + 1);
  };
  if (isa<arith::AddIOp, arith::SubIOp, arith::MinUIOp, arith::MinSIOp,
          arith::MaxUIOp, arith::MaxSIOp>(op))
    return std::gcd(of(op->getOperand(0)), of(op->getOperand(1)));
  if (isa<arith::MulIOp>(op))
    return capped(of(op->getOperand(0)) * of(op->getOperand(1)));
  if (auto shift = dyn_cast<arith::ShLIOp>(op))
    if (std::optional<int64_t> bits = getConstantIntValue(shift.getRhs());
        bits && *bits >= 0 && *bits < 20)
      return capped(of(shift.getLhs()) << *bits);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return of(op->getOperand(0));
  return 1;
}

/// Bytes (at most 16) that the address of `buffer[indices]` is known to be
/// aligned to: the buffer's offset from its 64-byte aligned kernel
/// argument (knownOffsetMultiple) and each index's known multiple times
/// its static stride. The element's own size when nothing more is known.
static int64_t knownAccessAlignment(Value buffer, ArrayRef<Value> indices) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return 0;
  int64_t bytes = bits / 8;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return bytes;
  int64_t multiple = knownOffsetMultiple(buffer, bytes);
  for (auto [stride, index] : llvm::zip(strides, indices)) {
    if (ShapedType::isDynamic(stride))
      return bytes;
    int64_t moved = stride * knownValueMultiple(index);
    if (moved != 0)
      multiple = std::gcd(multiple, moved);
  }
  return std::min<int64_t>(16, multiple * bytes);
}
