//===- OutputBlock.cpp - one GPU block's share of a contraction ---------===//
//
// Matching a kernel's block, its padding, and reads of its operands from
// global memory. The stage pipelines are OutputBlockStaging.cpp; the
// epilogue at each thread's positions is OutputBlockEpilogue.cpp.
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

SmallVector<Value> kiln::indicesAt(OpBuilder &b, Location loc, AffineMap map,
                                   ArrayRef<std::pair<int64_t, Value>> at) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> loopValues(map.getNumDims(), zero);
  for (auto [loop, value] : at)
    loopValues[loop] = value;
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(
          arith::ConstantIndexOp::create(b, loc, constant.getValue()));
    else if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(loopValues[dim.getPosition()]);
    else // a convolution's input: o * stride + k * dilation
      indices.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, expr), loopValues));
  }
  return indices;
}

/// Whether `op` writes zero into every element of `buffer`: a linalg.fill
/// or a linalg.map without inputs (tensor.pad's bufferized padding).
static bool fillsWithZero(Operation *op, Value buffer) {
  Value value;
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (fill.getDpsInits()[0] != buffer)
      return false;
    value = fill.getInputs()[0];
  } else if (auto map = dyn_cast<linalg::MapOp>(op)) {
    if (!map.getInputs().empty() || map.getInit() != buffer)
      return false;
    value = map.getMapper().front().getTerminator()->getOperand(0);
  } else {
    return false;
  }
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// The source of the one copy whose destination is `view`, its only use.
static Value copiedInto(memref::SubViewOp view) {
  if (!view->hasOneUse())
    return Value();
  Operation *user = *view->getUsers().begin();
  if (auto copy = dyn_cast<linalg::CopyOp>(user);
      copy && copy.getDpsInits()[0] == view.getResult())
    return copy.getInputs()[0];
  if (auto copy = dyn_cast<memref::CopyOp>(user);
      copy && copy.getTarget() == view.getResult())
    return copy.getSource();
  return Value();
}

/// Operand A as a padded input (OutputBlock::PaddedInput): a subview of
/// (or, where one block takes the whole input, itself) an allocation that
/// one op fills with zeros and then one copy fills inside, with nothing
/// else writing it; its last dim unpadded (runs along it). None otherwise.
/// (Split-K's channel groups reshape the input before it is padded:
/// kiln-tile-and-distribute's ExpandShapeBeforePad.)
static std::optional<OutputBlock::PaddedInput> matchPaddedInput(Value a) {
  // The block's slice; none where one block takes the whole input.
  OutputBlock::PaddedInput in;
  in.buffer = a;
  if (auto slice = a.getDefiningOp<memref::SubViewOp>()) {
    if (slice.getSourceType().getRank() != slice.getType().getRank() ||
        !slice.hasUnitStride())
      return std::nullopt;
    in.buffer = slice.getSource();
  }
  if (!in.buffer.getDefiningOp<memref::AllocOp>() &&
      !in.buffer.getDefiningOp<memref::AllocaOp>())
    return std::nullopt;
  Operation *zeroFill = nullptr;
  memref::SubViewOp interior;
  for (Operation *user : in.buffer.getUsers()) {
    if (fillsWithZero(user, in.buffer) && !zeroFill) {
      zeroFill = user;
    } else if (auto view = dyn_cast<memref::SubViewOp>(user);
               view && !interior && copiedInto(view)) {
      interior = view;
    } else if (!isa<memref::DeallocOp, memref::SubViewOp, memref::ExpandShapeOp,
                    linalg::LinalgOp>(user)) {
      return std::nullopt;
    }
  }
  if (!zeroFill || !interior || !interior.hasUnitStride() ||
      interior.getType().getRank() != interior.getSourceType().getRank() ||
      !interior.getType().hasStaticShape())
    return std::nullopt;
  // The fill first, then the copy (bufferization's order for tensor.pad).
  Operation *copy = *interior->getUsers().begin();
  if (copy->getBlock() != zeroFill->getBlock() ||
      !zeroFill->isBeforeInBlock(copy))
    return std::nullopt;
  // Every other view of the buffer is only read: A's slices.
  SmallVector<Value> views = {in.buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (user == interior.getOperation() || fillsWithZero(user, in.buffer) ||
          isa<memref::DeallocOp>(user))
        continue;
      if (isa<memref::SubViewOp, memref::ExpandShapeOp>(user)) {
        views.push_back(user->getResult(0));
        continue;
      }
      auto reader = dyn_cast<linalg::LinalgOp>(user);
      if (!reader || !llvm::is_contained(reader.getDpsInputs(), view) ||
          llvm::is_contained(reader.getDpsInits(), view))
        return std::nullopt;
    }
  }
  in.copied = copiedInto(interior);
  // Read as one dim (makePaddedInputSource): static strides.
  SmallVector<int64_t> copiedStrides;
  int64_t copiedOffset;
  auto copiedType = cast<MemRefType>(in.copied.getType());
  if (!copiedType.hasStaticShape() ||
      failed(copiedType.getStridesAndOffset(copiedStrides, copiedOffset)) ||
      llvm::any_of(copiedStrides, ShapedType::isDynamic) ||
      ShapedType::isDynamic(copiedOffset))
    return std::nullopt;
  // The padding before each dim, and the unpadded extent.
  auto bufferType = cast<MemRefType>(in.buffer.getType());
  for (auto [d, offset] : llvm::enumerate(interior.getStaticOffsets())) {
    if (ShapedType::isDynamic(offset))
      return std::nullopt;
    in.low.push_back(offset);
    in.extent.push_back(interior.getType().getDimSize(d));
  }
  int64_t last = bufferType.getRank() - 1;
  if (in.low[last] != 0 || in.extent[last] != bufferType.getDimSize(last))
    return std::nullopt;
  return in;
}

std::optional<OutputBlock> OutputBlock::match(func::FuncOp func,
                                              bool allowFloat32) {
  SmallVector<scf::ForallOp> foralls(func.getBody().getOps<scf::ForallOp>());
  if (foralls.size() != 1)
    return std::nullopt;
  OutputBlock block;
  block.forall = foralls.front();
  std::optional<MatrixContractionLoops> loops;
  for (Operation &op : block.forall.getBody()->without_terminator()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (!linalgOp.hasPureBufferSemantics())
        return std::nullopt;
      if (auto match = matchMatrixContraction(linalgOp, allowFloat32)) {
        if (block.contraction)
          return std::nullopt;
        block.contraction = cast<linalg::GenericOp>(op);
        loops = match;
      } else if (!isTileElementwise(linalgOp)) {
        return std::nullopt;
      }
      block.ops.push_back(linalgOp);
      continue;
    }
    if (op.getNumRegions() > 0 ||
        !(isMemoryEffectFree(&op) ||
          isa<memref::AllocaOp, memref::AllocOp, memref::DeallocOp,
              memref::GetGlobalOp>(op)))
      return std::nullopt;
  }
  if (!block.contraction)
    return std::nullopt;
  // A block of one convolution row is M alone, as for any contraction.
  if (loops->mOuter >= 0 && loops->ranges[loops->mOuter] == 1)
    loops->mOuter = loops->outMOuter = -1;
  block.loops = *loops;
  for (auto [i, extent] : llvm::enumerate(loops->ranges))
    if (int64_t(i) != loops->m && int64_t(i) != loops->n &&
        int64_t(i) != loops->k && int64_t(i) != loops->mOuter &&
        !llvm::is_contained(loops->window, i) && extent != 1)
      return std::nullopt;
  block.rowWidth = loops->ranges[loops->m];
  block.tileM =
      block.rowWidth * (loops->mOuter >= 0 ? loops->ranges[loops->mOuter] : 1);
  block.tileN = loops->ranges[loops->n];
  block.validM = block.tileM;
  block.validN = block.tileN;
  block.tileK = block.validK = loops->ranges[loops->k];
  // Every other op writes a buffer shaped like the output tile, whose M
  // and N dims (and rows) are at the contraction's positions.
  block.outM = loops->outM;
  block.outN = loops->outN;
  block.outMOuter = loops->outMOuter;
  int64_t outRank =
      block.contraction
          .getMatchingIndexingMap(block.contraction.getDpsInitOperand(0))
          .getNumResults();
  for (linalg::LinalgOp op : block.ops)
    if (op.getOperation() != block.contraction.getOperation() &&
        !block.tileLoopsOf(op, outRank))
      return std::nullopt;
  block.paddedInput = matchPaddedInput(block.contraction.getDpsInputs()[0]);
  return block;
}

/// All loops parallel, one output, every operand indexed by plain loops or
/// constants (tileLoopsOf checks the loops against the tile).
bool OutputBlock::isTileElementwise(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1)
    return false;
  for (OpOperand &operand : op->getOpOperands())
    for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults())
      if (!isa<AffineConstantExpr, AffineDimExpr>(expr))
        return false;
  return true;
}

/// The loops of an elementwise tile op that walk the tile's rows (M, and
/// the output rows outside it) and columns (N): those its output indexes
/// at the contraction's positions, of the tile's extents, every other loop
/// of extent 1; none when its output is not shaped like the tile.
std::optional<OutputBlock::TileLoops>
OutputBlock::tileLoopsOf(linalg::LinalgOp op, int64_t outRank) const {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (int64_t(map.getNumResults()) != outRank)
    return std::nullopt;
  auto loopAt = [&](int64_t position) -> int64_t {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(position));
    return dim ? int64_t(dim.getPosition()) : -1;
  };
  TileLoops tile{-1, loopAt(outM), loopAt(outN)};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (tile.row < 0 || tile.col < 0 || tile.row == tile.col ||
      ranges[tile.row] != rowWidth || ranges[tile.col] != validN)
    return std::nullopt;
  if (outMOuter >= 0) {
    tile.rowOuter = loopAt(outMOuter);
    if (tile.rowOuter < 0 || tile.rowOuter == tile.row ||
        tile.rowOuter == tile.col || ranges[tile.rowOuter] != validM / rowWidth)
      return std::nullopt;
  }
  for (auto [i, extent] : llvm::enumerate(ranges))
    if (int64_t(i) != tile.row && int64_t(i) != tile.col &&
        int64_t(i) != tile.rowOuter && extent != 1)
      return std::nullopt;
  return tile;
}

void OutputBlock::padRows(int64_t rows) {
  assert(rows >= validM && "padding adds rows");
  tileM = rows;
}

void OutputBlock::padColumns(int64_t columns) {
  assert(columns >= validN && "padding adds columns");
  tileN = columns;
}

/// Whether `index` is under `extent`.
Value kiln::detail::isBelow(OpBuilder &b, Location loc, Value index,
                            int64_t extent) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                               arith::ConstantIndexOp::create(b, loc, extent));
}

/// `value` where `valid` holds, else zero (an operand read past a padded K).
Value kiln::detail::zeroUnless(OpBuilder &b, Location loc, Value valid,
                               Value value) {
  return arith::SelectOp::create(
      b, loc, valid, value,
      arith::ConstantOp::create(b, loc, b.getZeroAttr(value.getType())));
}

/// `a` and `b`, either of which may be null (always true).
Value kiln::detail::bothValid(OpBuilder &b, Location loc, Value first,
                              Value second) {
  if (!first || !second)
    return first ? first : second;
  return arith::AndIOp::create(b, loc, first, second);
}

OutputBlock::GlobalRead OutputBlock::readAt(OpBuilder &b, Location loc,
                                            unsigned input, Value view,
                                            SmallVector<Value> indices) {
  if (input != 0 || !paddedInput)
    return {view, indices, Value(), indices};
  PaddedInput &in = *paddedInput;
  if (!in.source)
    makePaddedInputSource(b, loc);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto add = [&](Value x, OpFoldResult y) -> Value {
    if (isConstantIntValue(y, 0))
      return x;
    return arith::AddIOp::create(b, loc, x,
                                 getValueOrCreateConstantIndexOp(b, loc, y));
  };
  // A stage's origin: its offsets are the stage's part of the indices,
  // the same for the block's threads; the rest (the thread's place in the
  // block and the block's) is the same through the reduction loop.
  SmallVector<OpFoldResult> stagePart(indices.size(), b.getIndexAttr(0));
  const SmallVector<int64_t> *largest = nullptr;
  if (auto it = originLargestOffsets.find(view);
      it != originLargestOffsets.end()) {
    largest = &it->second;
    auto origin = view.getDefiningOp<memref::SubViewOp>();
    stagePart = origin.getMixedOffsets();
    view = origin.getSource();
  }
  // The rest, less the padding: indices into the unpadded source but for
  // the stage's part (each view below adds its offsets: the block's
  // slice; unit strides, same rank).
  for (Value v = view; v != in.buffer;) {
    auto subview = v.getDefiningOp<memref::SubViewOp>();
    assert(subview && subview.getType().getRank() == int64_t(indices.size()) &&
           "a padded input is read through subviews");
    for (auto [index, offset] :
         llvm::zip_equal(indices, subview.getMixedOffsets()))
      index = add(index, offset);
    v = subview.getSource();
  }
  auto paddedType = cast<MemRefType>(in.buffer.getType());
  SmallVector<int64_t> paddedDims;
  for (auto [d, index] : llvm::enumerate(indices)) {
    if (in.low[d] != 0)
      index = arith::SubIOp::create(b, loc, index, c(in.low[d]));
    if (in.low[d] != 0 || in.extent[d] != paddedType.getDimSize(d))
      paddedDims.push_back(d);
  }
  // One linear index into the source's elements: the loop-invariant sum
  // (hoisted) plus the stage's (one add a load, as for an unpadded
  // input), kept apart so that the device does not compute the address
  // again from each dim per load.
  auto linearize = [&](auto &&values) -> Value {
    Value sum;
    for (auto [value, stride] : llvm::zip_equal(values, in.strides)) {
      if (isConstantIntValue(value, 0))
        continue;
      Value term = getValueOrCreateConstantIndexOp(b, loc, value);
      if (stride != 1)
        term = arith::MulIOp::create(b, loc, term, c(stride));
      sum = sum ? arith::AddIOp::create(b, loc, sum, term) : term;
    }
    return sum ? sum : c(0);
  };
  Value linear = linearize(indices);
  if (largest)
    linear = arith::AddIOp::create(b, loc, linear, linearize(stagePart));
  Value valid =
      largest ? windowMaskBit(b, loc, indices, stagePart, *largest, paddedDims)
              : Value();
  if (!valid) {
    // Inside the unpadded extent: one unsigned compare a dim (an index
    // before the padding is huge as unsigned).
    for (int64_t d : paddedDims)
      valid = bothValid(
          b, loc, valid,
          isBelow(b, loc, add(indices[d], stagePart[d]), in.extent[d]));
  }
  // Outside, the first element instead (a load there reads memory).
  Value unclamped = linear;
  if (valid)
    linear = arith::SelectOp::create(b, loc, valid, linear, c(0));
  return {in.source, {linear}, valid, {unclamped}};
}

Value OutputBlock::windowMaskBit(OpBuilder &b, Location loc,
                                 ArrayRef<Value> rest,
                                 ArrayRef<OpFoldResult> stagePart,
                                 ArrayRef<int64_t> largest,
                                 ArrayRef<int64_t> paddedDims) {
  PaddedInput &in = *paddedInput;
  int64_t bits = 1;
  for (int64_t d : paddedDims) {
    if (largest[d] < 0)
      return Value();
    bits *= largest[d] + 1;
  }
  if (bits > 32)
    return Value();
  auto i32 = b.getI32Type();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  // Bit s of the mask: whether the element is inside the source at the
  // stage offsets numbered s (the padded dims' offsets, row-major). It
  // depends on the loop-invariant part only: the device computes it once.
  Value mask = c32(0);
  for (int64_t s = 0; s < bits; ++s) {
    Value inside;
    int64_t rem = s;
    for (int64_t i = int64_t(paddedDims.size()) - 1; i >= 0; --i) {
      int64_t d = paddedDims[i], offset = rem % (largest[d] + 1);
      rem /= largest[d] + 1;
      Value at =
          offset == 0
              ? rest[d]
              : arith::AddIOp::create(b, loc, rest[d], c(offset)).getResult();
      inside = bothValid(b, loc, inside, isBelow(b, loc, at, in.extent[d]));
    }
    Value bit =
        arith::SelectOp::create(b, loc, inside, c32(int64_t(1) << s), c32(0));
    mask = arith::OrIOp::create(b, loc, mask, bit);
  }
  // The stage's number, the same for the block's threads.
  Value number = c(0);
  for (int64_t d : paddedDims) {
    number = arith::MulIOp::create(b, loc, number, c(largest[d] + 1));
    number = arith::AddIOp::create(
        b, loc, number, getValueOrCreateConstantIndexOp(b, loc, stagePart[d]));
  }
  Value shifted = arith::ShRUIOp::create(
      b, loc, mask, arith::IndexCastUIOp::create(b, loc, i32, number));
  return arith::TruncIOp::create(b, loc, b.getI1Type(), shifted);
}

void OutputBlock::makePaddedInputSource(OpBuilder &b, Location loc) {
  PaddedInput &in = *paddedInput;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall);
  // The copied input's elements as one dim, from the same first element.
  Value unpadded = in.copied;
  auto type = cast<MemRefType>(unpadded.getType());
  int64_t offset;
  in.strides.clear();
  (void)type.getStridesAndOffset(in.strides, offset);
  int64_t span = 1;
  for (auto [size, stride] : llvm::zip_equal(type.getShape(), in.strides))
    span += (size - 1) * stride;
  in.source = memref::ReinterpretCastOp::create(
      b, loc,
      MemRefType::get({span}, type.getElementType(),
                      StridedLayoutAttr::get(b.getContext(), offset, {1})),
      unpadded, offset, ArrayRef<int64_t>{span}, ArrayRef<int64_t>{1});
}

void OutputBlock::erasePaddedBuffer() {
  if (!paddedInput)
    return;
  Value buffer = paddedInput->buffer;
  // The views that read it are dead now: erase them, innermost first.
  std::function<bool(Value)> eraseDeadViews = [&](Value view) {
    for (Operation *user : llvm::make_early_inc_range(view.getUsers()))
      if (isa<memref::SubViewOp, memref::ExpandShapeOp>(user) &&
          user->getResult(0) != view && eraseDeadViews(user->getResult(0)))
        user->erase();
    return view.use_empty();
  };
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
    if (isa<memref::ExpandShapeOp>(user) ||
        (isa<memref::SubViewOp>(user) &&
         !copiedInto(cast<memref::SubViewOp>(user))))
      if (eraseDeadViews(user->getResult(0)))
        user->erase();
  // What is left writes it (the fill, the interior's copy) or frees it.
  for (Operation *user : buffer.getUsers()) {
    auto interior = dyn_cast<memref::SubViewOp>(user);
    if (!fillsWithZero(user, buffer) && !isa<memref::DeallocOp>(user) &&
        !(interior && copiedInto(interior)))
      return;
  }
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers())) {
    if (auto interior = dyn_cast<memref::SubViewOp>(user))
      (*interior->getUsers().begin())->erase();
    user->erase();
  }
  buffer.getDefiningOp()->erase();
}

/// `index` along a padded extent (`valid` of `padded`), clamped to the
/// last valid start of a run of `run` elements.
static Value clampToValid(OpBuilder &b, Location loc, Value index,
                          int64_t valid, int64_t padded, int64_t run) {
  if (valid == padded)
    return index;
  return arith::MinUIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, valid - run));
}

Value OutputBlock::clampColumn(OpBuilder &b, Location loc, Value column,
                               int64_t run) const {
  return clampToValid(b, loc, column, validN, tileN, run);
}

void OutputBlock::padK(int64_t k) {
  assert(k >= validK && "padding adds to K");
  tileK = k;
}

Value OutputBlock::kValid(OpBuilder &b, Location loc, Value k) const {
  if (validK == tileK)
    return Value();
  return isBelow(b, loc, k, validK);
}

Value OutputBlock::clampK(OpBuilder &b, Location loc, Value k,
                          int64_t run) const {
  return clampToValid(b, loc, k, validK, tileK, run);
}

std::pair<Value, Value> OutputBlock::runK(OpBuilder &b, Location loc,
                                          unsigned input, Value k,
                                          int64_t run) {
  int64_t alongK = operandContiguousAlongTile(input) ? 1 : run;
  return {clampK(b, loc, k, alongK), kValid(b, loc, k)};
}

Value OutputBlock::clampRow(OpBuilder &b, Location loc, Value row,
                            int64_t run) const {
  return clampToValid(b, loc, row, validM, tileM, run);
}

SmallVector<std::pair<int64_t, Value>>
OutputBlock::rowAt(OpBuilder &b, Location loc, int64_t rowOuter,
                   int64_t rowLoop, Value row) const {
  row = clampRow(b, loc, row);
  if (rowOuter < 0)
    return {{rowLoop, row}};
  Value width = arith::ConstantIndexOp::create(b, loc, rowWidth);
  return {{rowOuter, arith::DivUIOp::create(b, loc, row, width)},
          {rowLoop, arith::RemUIOp::create(b, loc, row, width)}};
}

SmallVector<std::pair<int64_t, Value>>
OutputBlock::tileAt(OpBuilder &b, Location loc, unsigned input,
                    Value tileIndex) const {
  if (input == 0)
    return rowAt(b, loc, loops.mOuter, loops.m, tileIndex);
  return {{loops.n, clampColumn(b, loc, tileIndex)}};
}

bool OutputBlock::operandContiguousAlongTile(unsigned input) {
  AffineMap map =
      contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(input));
  return map.getResult(map.getNumResults() - 1)
      .isFunctionOfDim(input == 0 ? loops.m : loops.n);
}

bool OutputBlock::uniformInitialAccumulators() {
  if (loops.scale)
    return true;
  Value accumulator = contraction.getDpsInits()[0];
  for (linalg::LinalgOp op : ops) {
    if (op.getOperation() == contraction.getOperation())
      return false;
    auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
    if (fill && fill.getDpsInits()[0] == accumulator &&
        !isa<ShapedType>(fill.getInputs()[0].getType()))
      return true;
  }
  return false;
}

bool OutputBlock::prologueWritesOnlyAccumulator() {
  Value accumulator = contraction.getDpsInits()[0];
  for (linalg::LinalgOp op : ops) {
    if (op.getOperation() == contraction.getOperation())
      return true;
    for (Value init : op.getDpsInits())
      if (init != accumulator)
        return false;
  }
  return false;
}

bool OutputBlock::storesSixteenBitRowsAlongN() {
  linalg::LinalgOp last = ops.back();
  if (last->getNumResults() != 0 || last.getNumDpsInits() != 1)
    return false;
  auto output = dyn_cast<MemRefType>(last.getDpsInits()[0].getType());
  AffineMap map = last.getMatchingIndexingMap(last.getDpsInitOperand(0));
  std::optional<TileLoops> tile = tileLoopsOf(last, map.getNumResults());
  if (!output || output.getRank() == 0 ||
      output.getElementTypeBitWidth() != 16 || !tile)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(output.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return false;
  return map.getResult(map.getNumResults() - 1) ==
         getAffineDimExpr(tile->col, contraction.getContext());
}

bool OutputBlock::outputContiguousAlongM() const {
  linalg::GenericOp op = contraction; // the accessors are not const
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  return int64_t(out.getNumResults()) - 1 == outM;
}
