//===- VectorizeReductionRows.cpp - CPU reductions, a vector of outputs ---===//
//
// linalg.generic's loops run in the order of its iteration space, where the
// reduction loops come last: a pooling window, a depthwise filter, a sum
// over a middle axis. Lowered to loops as they are, each output element is
// a chain of dependent scalar operations (a max waits for the max before
// it), and LLVM does not vectorize across outputs: their loop is outside
// the chain, and it cannot prove the output's loads and stores apart. For
// the ops that kiln-contract-with-vector-registers did not take, this pass
// computes the output's innermost loop a vector at a time, outside the
// reductions, the vector of outputs kept in a register through them:
//
//   for h:                              (the other parallel loops)
//     for w in steps of 16:             (masked for the row's remainder)
//       acc = out[h, w..]
//       for kh, kw:                     (the reduction loops, in order)
//         acc = max(acc, in[h + kh, w + kw..])
//       out[h, w..] = acc
//
// when every operand the body reads either runs along that loop in its
// contiguous innermost dim or does not depend on it (one broadcast value:
// a depthwise filter's weight), and the body is scalar arith and math
// (and the lowering's casts between unsigned and signless integers: a
// pooling of bytes widened in its loop).
// An operand read s elements apart along the row (a stride-s pooling
// window) is loaded s vectors wide and its every s-th lane kept.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_VECTORIZEREDUCTIONROWS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The largest stride along the row read as whole vectors: s vectors are
/// loaded for one.
constexpr int64_t kMaxRowStride = 4;

/// The elements between the values of `map`'s innermost dim at
/// consecutive iterations of loop `dim`.
std::optional<int64_t> rowStep(AffineMap map, unsigned dim) {
  return stepOf(map.getResults().back(), dim, map.getNumDims());
}

/// Whether an operand indexed by `map` can be read a vector at a time along
/// loop `dim`: it does not depend on `dim`, or only its contiguous
/// innermost dim does, 1 to kMaxRowStride elements per iteration.
bool readsAlong(Value memref, AffineMap map, unsigned dim) {
  if (!map.isFunctionOfDim(dim))
    return true;
  ArrayRef<AffineExpr> results = map.getResults();
  std::optional<int64_t> step = rowStep(map, dim);
  return llvm::none_of(results.drop_back(),
                       [&](AffineExpr e) { return e.isFunctionOfDim(dim); }) &&
         step && *step >= 1 && *step <= kMaxRowStride &&
         hasUnitInnerStride(memref);
}

/// The lowering's cast of an unsigned integer to the signless one arith
/// takes (or back): the same bits, on scalars and on vectors.
bool isSignednessCast(Operation *op) {
  auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
  if (!cast || cast->getNumOperands() != 1 || cast->getNumResults() != 1)
    return false;
  auto from = dyn_cast<IntegerType>(cast->getOperand(0).getType());
  auto to = dyn_cast<IntegerType>(cast->getResult(0).getType());
  return from && to && from.getWidth() == to.getWidth();
}

/// A body of scalar arith and math ops on ints and floats: each has the
/// same meaning on vectors. Speculatable ones only, since the lanes of a
/// masked step past the row compute on zeros (no integer division).
bool hasScalarElementwiseBody(linalg::GenericOp op) {
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (isSignednessCast(&inner))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        inner.getNumRegions() != 0 || isa<arith::ConstantOp>(inner) ||
        !isSpeculatable(&inner))
      return false;
    for (Type type :
         llvm::concat<Type>(inner.getOperandTypes(), inner.getResultTypes()))
      if (!type.isIntOrFloat())
        return false;
  }
  return true;
}

/// The loop of `op` to vectorize: its output's innermost loop, when
/// reduction loops follow it and every operand the body reads can be read
/// along it.
std::optional<unsigned> rowLoop(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || !hasScalarElementwiseBody(op) ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap out = op.getMatchingIndexingMap(init);
  if (!out.isProjectedPermutation() || out.getNumResults() == 0 ||
      !hasUnitInnerStride(init->get()))
    return std::nullopt;
  unsigned row = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  if (row + 1 == op.getNumLoops())
    return std::nullopt;
  bool someInputAlong = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!op.payloadUsesValueFromOperand(input))
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!readsAlong(input->get(), map, row))
      return std::nullopt;
    someInputAlong |= map.isFunctionOfDim(row);
  }
  if (!someInputAlong)
    return std::nullopt;
  return row;
}

/// Emits `op` as loops: the parallel loops but `row`, the row in vectors,
/// and inside each vector of outputs the reduction loops, the outputs
/// carried in a register through them. The innermost other parallel loop
/// (an image's output rows) is taken kRowsInFlight values at a time, so
/// that as many independent chains of operations overlap.
class RowVectorizer {
public:
  RowVectorizer(linalg::GenericOp op, unsigned row, int64_t width)
      : op(op), row(row), width(width), loc(op.getLoc()),
        ranges(op.getStaticLoopRanges()), ivs(ranges.size()) {
    for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray()))
      (type == utils::IteratorType::parallel ? parallel : reductions)
          .push_back(loop);
    llvm::erase(parallel, row);
    if (!parallel.empty())
      inFlight = parallel.pop_back_val();
  }

  void emit(OpBuilder &b) { emitParallel(b, 0); }

private:
  /// Rows of outputs computed together (see the class comment): enough to
  /// hide a vector max's or add's latency, few enough for the registers.
  static constexpr int64_t kRowsInFlight = 4;

  /// A loop from 0 to `extent` by `step` carrying `carried`; `body` makes
  /// what the next iteration gets.
  scf::ForOp emitLoop(
      OpBuilder &b, int64_t extent, int64_t step, ValueRange carried,
      function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> body) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value end = arith::ConstantIndexOp::create(b, loc, extent);
    Value stepValue = arith::ConstantIndexOp::create(b, loc, step);
    return scf::ForOp::create(
        b, loc, zero, end, stepValue, carried,
        [&](OpBuilder &inner, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(inner, loc, body(inner, iv, args));
        });
  }

  void emitParallel(OpBuilder &b, size_t i) {
    if (i == parallel.size())
      return emitGroups(b);
    emitLoop(b, ranges[parallel[i]], 1, {},
             [&](OpBuilder &inner, Value iv, ValueRange) {
               ivs[parallel[i]] = iv;
               emitParallel(inner, i + 1);
               return SmallVector<Value>();
             });
  }

  /// The in-flight loop in groups of kRowsInFlight, then its remainder.
  void emitGroups(OpBuilder &b) {
    if (!inFlight)
      return emitRow(b, nullptr, 1);
    int64_t extent = ranges[*inFlight];
    int64_t group = std::min(kRowsInFlight, extent);
    int64_t whole = extent / group * group;
    emitLoop(b, whole, group, {}, [&](OpBuilder &inner, Value iv, ValueRange) {
      emitRow(inner, iv, group);
      return SmallVector<Value>();
    });
    if (whole < extent)
      emitRow(b, arith::ConstantIndexOp::create(b, loc, whole), extent - whole);
  }

  /// Whole vectors along the row, then one masked vector for its remainder,
  /// for `count` values of the in-flight loop from `first`.
  void emitRow(OpBuilder &b, Value first, int64_t count) {
    int64_t extent = ranges[row];
    int64_t whole = extent / width * width;
    if (whole > 0)
      emitLoop(b, whole, width, {},
               [&](OpBuilder &inner, Value iv, ValueRange) {
                 ivs[row] = iv;
                 emitOutputs(inner, /*mask=*/nullptr, first, count);
                 return SmallVector<Value>();
               });
    if (whole < extent) {
      ivs[row] = arith::ConstantIndexOp::create(b, loc, whole);
      lanes = extent - whole;
      Value remaining = arith::ConstantIndexOp::create(b, loc, lanes);
      emitOutputs(b,
                  vector::CreateMaskOp::create(
                      b, loc, VectorType::get({width}, b.getI1Type()),
                      ValueRange{remaining}),
                  first, count);
      lanes = width;
    }
  }

  /// Points the in-flight loop at its `j`-th value from `first`.
  void setInFlight(OpBuilder &b, Value first, int64_t j) {
    if (inFlight)
      ivs[*inFlight] = arith::AddIOp::create(
          b, loc, first, arith::ConstantIndexOp::create(b, loc, j));
  }

  /// `count` vectors of outputs through every reduction step.
  void emitOutputs(OpBuilder &b, Value mask, Value first, int64_t count) {
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> outputs;
    for (int64_t j = 0; j < count; ++j) {
      setInFlight(b, first, j);
      outputs.push_back(read(b, init, mask));
    }
    outputs = emitReductions(b, 0, outputs, mask, first);
    for (int64_t j = 0; j < count; ++j) {
      setInFlight(b, first, j);
      SmallVector<Value> indices = indicesOf(b, init);
      if (mask)
        vector::MaskedStoreOp::create(b, loc, init->get(), indices, mask,
                                      outputs[j]);
      else
        vector::StoreOp::create(b, loc, outputs[j], init->get(), indices);
    }
  }

  SmallVector<Value> emitReductions(OpBuilder &b, size_t i, ValueRange outputs,
                                    Value mask, Value first) {
    if (i == reductions.size()) {
      SmallVector<Value> next;
      for (auto [j, output] : llvm::enumerate(outputs)) {
        setInFlight(b, first, j);
        next.push_back(emitBody(b, output, mask));
      }
      return next;
    }
    return emitLoop(b, ranges[reductions[i]], 1, outputs,
                    [&](OpBuilder &inner, Value iv, ValueRange carried) {
                      ivs[reductions[i]] = iv;
                      return emitReductions(inner, i + 1, carried, mask, first);
                    })
        .getResults();
  }

  /// The memref indices of `operand` at the loop values `ivs`.
  SmallVector<Value> indicesOf(OpBuilder &b, OpOperand *operand) {
    SmallVector<Value> indices;
    AffineMap map = op.getMatchingIndexingMap(operand);
    for (AffineExpr expr : map.getResults())
      indices.push_back(affine::makeComposedAffineApply(
          b, loc, AffineMap::get(map.getNumDims(), 0, expr),
          getAsOpFoldResult(ValueRange(ivs))));
    return indices;
  }

  /// A vector of `operand` along the row, or its one value broadcast.
  Value read(OpBuilder &b, OpOperand *operand, Value mask) {
    Value memref = operand->get();
    Type element = getElementTypeOrSelf(memref.getType());
    auto type = VectorType::get({width}, element);
    SmallVector<Value> indices = indicesOf(b, operand);
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (!map.isFunctionOfDim(row))
      return vector::BroadcastOp::create(
          b, loc, type, memref::LoadOp::create(b, loc, memref, indices));
    int64_t step = *rowStep(map, row);
    if (step > 1)
      return readStrided(b, memref, indices, step);
    if (!mask)
      return vector::LoadOp::create(b, loc, type, memref, indices);
    Value passThrough = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(element)));
    return vector::MaskedLoadOp::create(b, loc, type, memref, indices, mask,
                                        passThrough);
  }

  /// The row's `lanes` values `step` elements apart from `indices`: the
  /// elements up to the last one read, every step-th kept. The lanes past
  /// them are zeros.
  Value readStrided(OpBuilder &b, Value memref, ValueRange indices,
                    int64_t step) {
    Type element = getElementTypeOrSelf(memref.getType());
    auto wide = VectorType::get({width * step}, element);
    Value passThrough = arith::ConstantOp::create(
        b, loc, wide, DenseElementsAttr::get(wide, b.getZeroAttr(element)));
    Value mask = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({width * step}, b.getI1Type()),
        ArrayRef<int64_t>{step * (lanes - 1) + 1});
    Value loaded = vector::MaskedLoadOp::create(b, loc, wide, memref, indices,
                                                mask, passThrough);
    SmallVector<int64_t> kept;
    for (int64_t lane = 0; lane < width; ++lane)
      kept.push_back(lane * step);
    return vector::ShuffleOp::create(b, loc, loaded, loaded, kept);
  }

  /// The body's ops on vectors, at one reduction step.
  Value emitBody(OpBuilder &b, Value outputs, Value mask) {
    IRMapping mapping;
    Block *body = op.getBlock();
    mapping.map(body->getArguments().back(), outputs);
    for (OpOperand *input : op.getDpsInputOperands())
      if (op.payloadUsesValueFromOperand(input))
        mapping.map(body->getArgument(input->getOperandNumber()),
                    read(b, input, mask));
    for (Operation &inner : body->without_terminator()) {
      // Scalars from outside the body (constants) become vectors.
      for (Value operand : inner.getOperands())
        if (!mapping.contains(operand))
          mapping.map(operand,
                      vector::BroadcastOp::create(
                          b, loc, VectorType::get({width}, operand.getType()),
                          operand));
      Operation *vectorOp = b.clone(inner, mapping);
      for (Value result : vectorOp->getResults())
        result.setType(VectorType::get({width}, result.getType()));
    }
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    return mapping.lookup(yield.getOperand(0));
  }

  linalg::GenericOp op;
  unsigned row;
  int64_t width;
  Location loc;
  SmallVector<int64_t> ranges;
  /// The loops' induction variables where the emitter is.
  SmallVector<Value> ivs;
  SmallVector<unsigned> parallel, reductions;
  /// The parallel loop whose values are computed kRowsInFlight at a time.
  std::optional<unsigned> inFlight;
  /// The outputs of the row's vector being emitted: width, or fewer at
  /// the row's end.
  int64_t lanes = width;
};

struct VectorizeReductionRowsPass
    : public kiln::impl::VectorizeReductionRowsBase<
          VectorizeReductionRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel) || vectorWidth < 2)
      return;
    SmallVector<std::pair<linalg::GenericOp, unsigned>> found;
    func.walk([&](linalg::GenericOp op) {
      if (std::optional<unsigned> row = rowLoop(op))
        found.push_back({op, *row});
    });
    for (auto [op, row] : found) {
      OpBuilder b(op);
      RowVectorizer(op, row, vectorWidth).emit(b);
      op->erase();
    }
  }
};

} // namespace
