//===- ContractWithVectorRegisters.cpp - CPU register tiles of FMAs -------===//
//
// Lowered to scalar loops, a contraction (a matmul, a convolution) loads and
// stores its accumulator once per multiply-add, and LLVM's vectorizer can do
// little about it: the loop over K is outside the accumulator's. This pass
// computes each matching contraction of a bufferized CPU kernel as register
// tiles instead:
//
//   for each block of `rowTile` rows x `width` neighbouring outputs:
//     acc[i] = vector.load out[row i, v .. v + width)        (i < rowTile)
//     for every point of the reduction loops (K; or channels x window):
//       x = vector.load of the vector input at v             (contiguous)
//       acc[i] = vector.fma(x, broadcast(other input at row i), acc[i])
//     vector.store acc[i]
//
// so each loaded vector serves `rowTile` FMAs and the accumulators stay in
// registers for the whole reduction. `width` is up to two vectors
// (vector-width elements each, 16 floats: one AVX-512 register); the rows
// are a matmul's M (the vector input is B) or a convolution's filters (the
// vector input is the image, along its output width; a strided
// convolution's inputs are loaded as one span and shuffled). Remainders of
// either loop get narrower tiles of the same form. Contractions of other
// forms (B transposed) keep their scalar loops.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

// Strided convolutions load the span of a tile's inputs and keep every
// stride-th element; above this stride the span wastes too much.
static constexpr int64_t kMaxVectorStride = 4;

namespace kiln {
#define GEN_PASS_DEF_CONTRACTWITHVECTORREGISTERS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// How much `expr` grows when loop `dim` grows by 1, if that is a constant.
static std::optional<int64_t> stepOf(AffineExpr expr, int64_t dim,
                                     unsigned numDims) {
  MLIRContext *context = expr.getContext();
  AffineExpr d = getAffineDimExpr(dim, context);
  AffineExpr next = expr.replace(d, d + 1);
  auto step = dyn_cast<AffineConstantExpr>(
      simplifyAffineExpr(next - expr, numDims, /*numSymbols=*/0));
  if (!step)
    return std::nullopt;
  return step.getValue();
}

std::optional<VectorContractionLoops>
kiln::matchVectorContraction(linalg::LinalgOp linalgOp) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() < 1)
    return std::nullopt;
  VectorContractionLoops loops;
  if (!isMultiplyAdd(op, loops.scale) ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return std::nullopt;
  if (loops.scale && !loops.scale.getType().isF32())
    return std::nullopt;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!out.isProjectedPermutation() || out.getNumResults() < 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t vector = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  if (iterators[vector] != utils::IteratorType::parallel)
    return std::nullopt;
  AffineMap inputs[2] = {op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
                         op.getMatchingIndexingMap(op.getDpsInputOperand(1))};
  int found = -1;
  for (int i = 0; i < 2; ++i) {
    if (!inputs[i].isFunctionOfDim(vector))
      continue;
    if (found >= 0)
      return std::nullopt;
    found = i;
  }
  if (found < 0)
    return std::nullopt;
  AffineMap x = inputs[found], y = inputs[1 - found];
  ArrayRef<AffineExpr> xResults = x.getResults();
  std::optional<int64_t> step =
      stepOf(xResults.back(), vector, x.getNumDims());
  if (llvm::any_of(xResults.drop_back(),
                   [&](AffineExpr e) { return e.isFunctionOfDim(vector); }) ||
      !step || *step < 1 || *step > kMaxVectorStride)
    return std::nullopt;
  loops.vectorStride = *step;
  loops.vector = vector;
  loops.vectorInput = found;
  for (int64_t r = int64_t(out.getNumResults()) - 2; r >= 0; --r) {
    int64_t dim = cast<AffineDimExpr>(out.getResult(r)).getPosition();
    if (iterators[dim] == utils::IteratorType::parallel &&
        y.isFunctionOfDim(dim) && !x.isFunctionOfDim(dim)) {
      loops.rows = dim;
      break;
    }
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  loops.ranges = ranges;
  return loops;
}

namespace {

/// A memref whose innermost dim is contiguous: vector loads and stores
/// along it are plain.
bool hasUnitInnerStride(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// `count` tiles of `size` elements of a loop, the first at `begin`.
struct Segment {
  int64_t begin, count, size;
};

/// Whole tiles of `size`, then one tile of the remainder.
SmallVector<Segment> segmentsOf(int64_t extent, int64_t size) {
  SmallVector<Segment> segments;
  if (extent / size > 0)
    segments.push_back({0, extent / size, size});
  if (extent % size != 0)
    segments.push_back({extent - extent % size, 1, extent % size});
  return segments;
}

struct ContractWithVectorRegistersPass
    : public kiln::impl::ContractWithVectorRegistersBase<
          ContractWithVectorRegistersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("kiln.kernel") || vectorWidth < 1 || maxRows < 1)
      return;
    SmallVector<std::pair<linalg::GenericOp, VectorContractionLoops>> found;
    func.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<VectorContractionLoops> loops = matchVectorContraction(op);
      if (loops && hasUnitInnerStride(op.getDpsInputs()[loops->vectorInput]) &&
          hasUnitInnerStride(op.getDpsInits()[0]))
        found.push_back({op, *loops});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, loops] : found) {
      rewriter.setInsertionPoint(op);
      auto [rowTile, width] = emitContraction(rewriter, op, loops);
      // For reports: the register tile of the kernel's (last) contraction.
      func->setAttr("kiln.register_tile",
                    rewriter.getDenseI64ArrayAttr({rowTile, width}));
      rewriter.eraseOp(op);
    }
  }

  /// The tile: up to two vectors wide along the vector loop and up to
  /// `maxRows` rows: 8 x 2 accumulators, two loaded vectors and a broadcast
  /// fit AVX-512's 32 vector registers.
  std::pair<int64_t, int64_t> tileOf(const VectorContractionLoops &loops) {
    int64_t extent = loops.ranges[loops.vector];
    int64_t width = extent >= 2 * vectorWidth ? 2 * vectorWidth
                    : extent >= vectorWidth   ? int64_t(vectorWidth)
                                              : extent;
    int64_t rows = loops.rows >= 0 ? loops.ranges[loops.rows] : 1;
    return {std::min<int64_t>(rows, maxRows), width};
  }

  /// Replaces `op` by register tiles; returns the (full) tile's rows and
  /// width.
  std::pair<int64_t, int64_t> emitContraction(RewriterBase &rewriter,
                                              linalg::GenericOp op,
                                              const VectorContractionLoops &loops) {
    Location loc = op.getLoc();
    auto [rowTile, width] = tileOf(loops);
    int64_t rowExtent = loops.rows >= 0 ? loops.ranges[loops.rows] : 1;
    // Loops outside the tiles: every other parallel loop.
    SmallVector<int64_t> outer;
    for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
      if (type == utils::IteratorType::parallel && int64_t(i) != loops.vector &&
          int64_t(i) != loops.rows)
        outer.push_back(i);
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t i : outer) {
      lbs.push_back(arith::ConstantIndexOp::create(rewriter, loc, 0));
      ubs.push_back(arith::ConstantIndexOp::create(rewriter, loc, loops.ranges[i]));
      steps.push_back(arith::ConstantIndexOp::create(rewriter, loc, 1));
    }
    scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location loc, ValueRange outerIvs) {
          SmallVector<Value> dims(loops.ranges.size());
          for (auto [i, iv] : llvm::zip(outer, outerIvs))
            dims[i] = iv;
          // Vector-loop tiles outside row tiles: the vector input's panel
          // stays in cache while every row block uses it.
          for (Segment columns : segmentsOf(loops.ranges[loops.vector], width))
            for (Segment rows : segmentsOf(rowExtent, rowTile))
              emitTiles(b, loc, op, loops, dims, columns, rows);
        });
    return {rowTile, width};
  }

  /// One loop nest over the tiles of a column and a row segment.
  void emitTiles(OpBuilder &b, Location loc, linalg::GenericOp op,
                 const VectorContractionLoops &loops, SmallVector<Value> dims,
                 Segment columns, Segment rows) {
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> lbs = {constant(columns.begin), constant(rows.begin)};
    SmallVector<Value> ubs = {
        constant(columns.begin + columns.count * columns.size),
        constant(rows.begin + rows.count * rows.size)};
    SmallVector<Value> steps = {constant(columns.size), constant(rows.size)};
    scf::buildLoopNest(b, loc, lbs, ubs, steps,
                       [&](OpBuilder &b, Location loc, ValueRange ivs) {
                         emitTile(b, loc, op, loops, dims, ivs[0], ivs[1],
                                  columns.size, rows.size);
                       });
  }

  /// The indices of `map`'s results at the loop values `dims` (null for
  /// loops the map does not use).
  static SmallVector<Value> indicesOf(OpBuilder &b, Location loc, AffineMap map,
                                      ArrayRef<Value> dims) {
    SmallVector<OpFoldResult> operands;
    for (Value d : dims)
      operands.push_back(d ? OpFoldResult(d) : OpFoldResult(b.getIndexAttr(0)));
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults()) {
      AffineMap single = AffineMap::get(map.getNumDims(), 0, expr);
      indices.push_back(getValueOrCreateConstantIndexOp(
          b, loc,
          affine::makeComposedFoldedAffineApply(b, loc, single, operands)));
    }
    return indices;
  }

  /// A value of the input widened to float32 (f16/bf16 inputs).
  static Value widen(OpBuilder &b, Location loc, Value v, Type f32) {
    if (getElementTypeOrSelf(v.getType()) == getElementTypeOrSelf(f32))
      return v;
    return arith::ExtFOp::create(b, loc, f32, v);
  }

  /// `width` elements of `memref`'s innermost dim, `stride` apart, from
  /// `indices` on: one contiguous load of the span they cover (no element
  /// past the last one used, so never past the buffer), and for strides
  /// above 1 a shuffle that keeps every stride-th element.
  static Value loadVector(OpBuilder &b, Location loc, Value memref,
                          ValueRange indices, int64_t width, int64_t stride) {
    Type element = getElementTypeOrSelf(memref.getType());
    int64_t span = stride * (width - 1) + 1;
    Value loaded = vector::LoadOp::create(
        b, loc, VectorType::get({span}, element), memref, indices);
    if (stride == 1)
      return loaded;
    SmallVector<int64_t> picked;
    for (int64_t i = 0; i < width; ++i)
      picked.push_back(i * stride);
    return vector::ShuffleOp::create(b, loc, loaded, loaded, picked);
  }

  /// One `rowCount` x `width` tile at rows `row0`, columns `column0`.
  void emitTile(OpBuilder &b, Location loc, linalg::GenericOp op,
                const VectorContractionLoops &loops, SmallVector<Value> dims,
                Value column0, Value row0, int64_t width, int64_t rowCount) {
    Type f32 = b.getF32Type();
    auto accType = VectorType::get({width}, f32);
    Value out = op.getDpsInits()[0];
    Value x = op.getDpsInputs()[loops.vectorInput];
    Value y = op.getDpsInputs()[1 - loops.vectorInput];
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    AffineMap xMap = op.getMatchingIndexingMap(
        op.getDpsInputOperand(loops.vectorInput));
    AffineMap yMap = op.getMatchingIndexingMap(
        op.getDpsInputOperand(1 - loops.vectorInput));
    // The row loop's value for each row of the tile.
    SmallVector<Value> rowValues;
    for (int64_t i = 0; i < rowCount; ++i)
      rowValues.push_back(
          i == 0 ? row0
                 : arith::AddIOp::create(
                       b, loc, row0, arith::ConstantIndexOp::create(b, loc, i)));
    auto atRow = [&](int64_t i) {
      if (loops.rows >= 0)
        dims[loops.rows] = rowValues[i];
    };
    dims[loops.vector] = column0;
    SmallVector<Value> accumulators;
    SmallVector<SmallVector<Value>> outIndices;
    for (int64_t i = 0; i < rowCount; ++i) {
      atRow(i);
      outIndices.push_back(indicesOf(b, loc, outMap, dims));
      accumulators.push_back(
          vector::LoadOp::create(b, loc, accType, out, outIndices.back()));
    }

    SmallVector<int64_t> reductions;
    for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
      if (type == utils::IteratorType::reduction)
        reductions.push_back(i);
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t i : reductions) {
      lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, loops.ranges[i]));
      steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
    }
    scf::LoopNest nest = scf::buildLoopNest(
        b, loc, lbs, ubs, steps, accumulators,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange accs) -> scf::ValueVector {
          for (auto [i, iv] : llvm::zip(reductions, ivs))
            dims[i] = iv;
          Value xVector = widen(
              b, loc,
              loadVector(b, loc, x, indicesOf(b, loc, xMap, dims), width,
                         loops.vectorStride),
              accType);
          scf::ValueVector updated;
          for (int64_t i = 0; i < rowCount; ++i) {
            atRow(i);
            Value scalar = widen(
                b, loc,
                memref::LoadOp::create(b, loc, y, indicesOf(b, loc, yMap, dims)),
                f32);
            if (loops.scale)
              scalar = arith::MulFOp::create(b, loc, scalar, loops.scale);
            Value broadcast = vector::BroadcastOp::create(b, loc, accType, scalar);
            updated.push_back(
                vector::FMAOp::create(b, loc, xVector, broadcast, accs[i]));
          }
          return updated;
        });
    for (int64_t i = 0; i < rowCount; ++i)
      vector::StoreOp::create(b, loc, nest.results[i], out, outIndices[i]);
  }
};

} // namespace
