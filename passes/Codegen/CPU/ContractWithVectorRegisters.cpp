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
// (with short vectors, a tile also spans up to 3 values of a loop only the
// vector input and the output use, a convolution's output rows: 3 loaded
// vectors per step, each broadcast serving 3 FMAs; see blocksPerTile)
// so each loaded vector serves `rowTile` FMAs and the accumulators stay in
// registers for the whole reduction. `width` is up to two vectors
// (vector-width elements each, 16 floats: one AVX-512 register); the rows
// are a matmul's M (the vector input is B) or a convolution's filters (the
// vector input is the image, along its output width; a strided
// convolution's inputs are loaded as one masked span and shuffled). Remainders
// of either loop get narrower tiles of the same form. Contractions of other
// forms (B transposed) keep their scalar loops.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/bit.h"

namespace kiln {
#define GEN_PASS_DEF_CONTRACTWITHVECTORREGISTERS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

std::optional<int64_t> kiln::stepOf(AffineExpr expr, int64_t dim,
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
  std::optional<int64_t> step = stepOf(xResults.back(), vector, x.getNumDims());
  if (llvm::any_of(xResults.drop_back(),
                   [&](AffineExpr e) { return e.isFunctionOfDim(vector); }) ||
      !step || *step < 1 || *step > kMaxVectorStride)
    return std::nullopt;
  loops.vectorStride = *step;
  loops.vector = vector;
  loops.vectorInput = found;
  // The innermost parallel output loop (vector loop aside) that `used`
  // indexes and `unused` does not, or -1.
  auto innermostLoopOnlyIn = [&](AffineMap used, AffineMap unused) {
    for (int64_t r = int64_t(out.getNumResults()) - 2; r >= 0; --r) {
      int64_t dim = cast<AffineDimExpr>(out.getResult(r)).getPosition();
      if (iterators[dim] == utils::IteratorType::parallel &&
          used.isFunctionOfDim(dim) && !unused.isFunctionOfDim(dim))
        return dim;
    }
    return int64_t(-1);
  };
  loops.rows = innermostLoopOnlyIn(y, x);
  loops.block = innermostLoopOnlyIn(x, y);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  loops.ranges = ranges;
  return loops;
}

Value kiln::cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body,
                               IRMapping &mapping, int64_t width) {
  auto vectorOf = [&](Type t) { return VectorType::get({width}, t); };
  for (Operation &inner : body.without_terminator()) {
    if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
      auto type = vectorOf(constant.getType());
      mapping.map(
          constant.getResult(),
          arith::ConstantOp::create(
              b, loc, type, DenseElementsAttr::get(type, constant.getValue())));
      continue;
    }
    for (Value operand : inner.getOperands())
      if (!mapping.contains(operand))
        mapping.map(operand, vector::BroadcastOp::create(
                                 b, loc, vectorOf(operand.getType()), operand));
    Operation *clone = b.clone(inner, mapping);
    for (OpResult result : clone->getResults())
      result.setType(vectorOf(result.getType()));
  }
  return mapping.lookup(body.getTerminator()->getOperand(0));
}

bool kiln::hasUnitInnerStride(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

namespace {

/// Bounds of scf.for loops that run `loops` (positions in `ranges`) whole,
/// from 0 by 1.
struct WholeLoops {
  SmallVector<Value> lbs, ubs, steps;
  WholeLoops(OpBuilder &b, Location loc, ArrayRef<int64_t> loops,
             ArrayRef<int64_t> ranges) {
    for (int64_t i : loops) {
      lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, ranges[i]));
      steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
    }
  }
};

/// `count` tiles of `size` elements of a loop, the first at `begin`.
struct Segment {
  int64_t begin, count, size;
};

/// Whole tiles of `size`, then the remainder as tiles of decreasing powers
/// of two down to 8, then what is left (under 8) as one tile: 56 = 32 + 16
/// + 8, 14 = 8 + 6. LLVM widens a vector of under 8 floats to 8 and runs it
/// well, but legalizes wider odd sizes such as <24 x float> element by
/// element through the stack (measured: a 56-wide convolution row ran 5x
/// slower as 32 + 24 than as 32 + 16 + 8; 7-wide rows 2x slower as 4 + 2 +
/// 1 than as one 7-wide vector).
SmallVector<Segment> segmentsOf(int64_t extent, int64_t size) {
  SmallVector<Segment> segments;
  if (extent / size > 0)
    segments.push_back({0, extent / size, size});
  int64_t begin = extent - extent % size;
  for (int64_t piece = size / 2; piece >= 8; piece /= 2) {
    if (extent - begin >= piece) {
      segments.push_back({begin, 1, piece});
      begin += piece;
    }
  }
  if (begin < extent)
    segments.push_back({begin, 1, extent - begin});
  return segments;
}

struct ContractWithVectorRegistersPass
    : public kiln::impl::ContractWithVectorRegistersBase<
          ContractWithVectorRegistersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel) || vectorWidth < 1 ||
        registerRows < 1)
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
      fill = findFill(op);
      epilogue = findEpilogue(op);
      prologue = findPrologue(op, loops);
      // The tiles replace the epilogue too, so they go where it is (only
      // ops without memory effects lie between it and the contraction).
      rewriter.setInsertionPoint(epilogue ? epilogue.getOperation()
                                          : op.getOperation());
      auto [rowTile, width] = emitContraction(rewriter, op, loops);
      // For reports: the register tile of the kernel's (last) contraction.
      func->setAttr(kiln::attrs::kRegisterTile,
                    rewriter.getDenseI64ArrayAttr({rowTile, width}));
      Value accumulator = op.getDpsInits()[0];
      Value vectorInput = op.getDpsInputs()[loops.vectorInput];
      for (Operation *replaced : {epilogue.getOperation(), op.getOperation(),
                                  fill, prologue.getOperation()})
        if (replaced)
          rewriter.eraseOp(replaced);
      for (Value buffer : {accumulator, vectorInput})
        if (auto alloc = buffer.getDefiningOp<memref::AllocOp>())
          if (alloc->use_empty())
            rewriter.eraseOp(alloc);
    }
  }

  /// What initializes the contraction's accumulator buffer just before it
  /// (a linalg.fill, or a generic that copies or broadcasts its input, such
  /// as a bias): the tiles then start from that value in registers instead
  /// of from the buffer. Null when there is none or its input cannot be
  /// loaded per tile.
  Operation *fill = nullptr;
  /// The elementwise generic right after the contraction that is the only
  /// reader of its accumulator (a temporary): bias, residual add,
  /// activation, rounding. The tiles apply it to the accumulators in
  /// registers and store its result instead. Null when there is none.
  linalg::GenericOp epilogue;

  /// The elementwise generic that computes the vector input, a temporary
  /// only it writes, from inputs registers can load per tile (4-bit
  /// weights unpacked from their bytes, scaled by their block's scale),
  /// where each of its values serves one tile only (the contraction's rows
  /// fit one row tile: a decoder step's matmul). The tiles then compute its
  /// values in registers where they would load them, and it is never
  /// stored. Null otherwise: with more rows, every row tile of a column
  /// panel loads what it stored once.
  linalg::GenericOp prologue;

  linalg::GenericOp findPrologue(linalg::GenericOp op,
                                 const VectorContractionLoops &loops) {
    int64_t rows = loops.rows >= 0 ? loops.ranges[loops.rows] : 1;
    if (loops.block >= 0 || loops.vectorStride != 1 ||
        rows > tileOf(loops).first)
      return {};
    OpOperand *vectorInput = op.getDpsInputOperand(loops.vectorInput);
    Value buffer = vectorInput->get();
    if (!buffer.getDefiningOp<memref::AllocOp>() ||
        !llvm::all_of(op.getMatchingIndexingMap(vectorInput).getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); }))
      return {};
    linalg::GenericOp writer;
    for (Operation *user : buffer.getUsers()) {
      if (user == op.getOperation())
        continue;
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (writer || !generic || generic.getNumDpsInits() != 1 ||
          generic.getDpsInits()[0] != buffer)
        return {};
      writer = generic;
    }
    if (!writer || writer->getBlock() != op->getBlock() ||
        !coversWithIdentity(writer, buffer))
      return {};
    // Nothing between them writes what the writer reads: only the
    // accumulator's allocation and fill, and ops without memory effects.
    for (Operation *between = writer->getNextNode(); between != op;
         between = between->getNextNode())
      if (!between || !(isMemoryEffectFree(between) || between == fill ||
                        isa<memref::AllocOp>(between)))
        return {};
    int64_t vectorLoop = writer.getNumLoops() - 1;
    for (OpOperand *input : writer.getDpsInputOperands())
      if (!loadablePerTile(input->get(), writer.getMatchingIndexingMap(input),
                           vectorLoop))
        return {};
    Block &body = writer.getRegion().front();
    if (!body.getArguments().back().use_empty() || !isScalarElementwise(body))
      return {};
    return writer;
  }

  /// Every op of `body` an elementwise op or a constant, on scalars.
  static bool isScalarElementwise(Block &body) {
    return llvm::all_of(body.without_terminator(), [](Operation &inner) {
      bool scalar = llvm::all_of(inner.getResultTypes(),
                                 [](Type t) { return t.isIntOrFloat(); });
      return scalar && inner.getNumRegions() == 0 &&
             (isa<arith::ConstantOp>(inner) ||
              inner.hasTrait<OpTrait::Elementwise>());
    });
  }

  /// The prologue's value at the contraction's loop values `dims`, which
  /// it reads through `xMap`, as a vector of `width`.
  Value computePrologue(OpBuilder &b, Location loc, AffineMap xMap,
                        ArrayRef<Value> dims, int64_t width) {
    SmallVector<Value> position;
    for (AffineExpr e : xMap.getResults())
      position.push_back(dims[cast<AffineDimExpr>(e).getPosition()]);
    Block &body = prologue.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : prologue.getDpsInputOperands())
      mapping.map(body.getArgument(input->getOperandNumber()),
                  loadPerTile(b, loc, input->get(),
                              prologue.getMatchingIndexingMap(input), position,
                              width));
    return cloneBodyOnVectors(b, loc, body, mapping, width);
  }

  /// The nearest op before (`step` -1) or after (+1) `op` that has memory
  /// effects.
  static Operation *neighbour(Operation *op, int step) {
    Operation *next = step < 0 ? op->getPrevNode() : op->getNextNode();
    while (next && isMemoryEffectFree(next))
      next = step < 0 ? next->getPrevNode() : next->getNextNode();
    return next;
  }

  /// A value of `memref` indexed through `map` that registers can hold per
  /// tile: independent of the vector loop `vectorLoop` (broadcast), or
  /// contiguous along it (vector load).
  static bool loadablePerTile(Value memref, AffineMap map, int64_t vectorLoop) {
    if (map.getNumResults() == 0)
      return true;
    ArrayRef<AffineExpr> results = map.getResults();
    if (llvm::any_of(results.drop_back(), [&](AffineExpr e) {
          return e.isFunctionOfDim(vectorLoop);
        }))
      return false;
    if (!results.back().isFunctionOfDim(vectorLoop))
      return true;
    std::optional<int64_t> step =
        stepOf(results.back(), vectorLoop, map.getNumDims());
    return step && *step == 1 && hasUnitInnerStride(memref);
  }

  /// An all-parallel generic over exactly the shape of `buffer`, writing
  /// it through the identity map.
  static bool coversWithIdentity(linalg::GenericOp generic, Value init) {
    auto type = dyn_cast<MemRefType>(init.getType());
    return type && type.hasStaticShape() &&
           generic.getNumReductionLoops() == 0 &&
           generic.getNumDpsInits() == 1 &&
           generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
               .isIdentity() &&
           llvm::equal(generic.getStaticLoopRanges(), type.getShape());
  }

  Operation *findFill(linalg::GenericOp op) {
    Value accumulator = op.getDpsInits()[0];
    Operation *before = neighbour(op, -1);
    if (auto fillOp = dyn_cast_or_null<linalg::FillOp>(before))
      return fillOp.getDpsInits()[0] == accumulator &&
                     fillOp.getInputs()[0].getType().isF32()
                 ? before
                 : nullptr;
    auto copy = dyn_cast_or_null<linalg::GenericOp>(before);
    if (!copy || copy.getNumDpsInputs() != 1 ||
        copy.getDpsInits().front() != accumulator ||
        !coversWithIdentity(copy, accumulator))
      return nullptr;
    Block &body = copy.getRegion().front();
    Value input = copy.getDpsInputs()[0];
    if (body.getOperations().size() != 1 ||
        body.getTerminator()->getOperand(0) != body.getArgument(0) ||
        !getElementTypeOrSelf(input.getType()).isF32() ||
        !loadablePerTile(
            input, copy.getMatchingIndexingMap(copy.getDpsInputOperand(0)),
            copy.getNumLoops() - 1))
      return nullptr;
    return before;
  }

  linalg::GenericOp findEpilogue(linalg::GenericOp op) {
    Value accumulator = op.getDpsInits()[0];
    auto next = dyn_cast_or_null<linalg::GenericOp>(neighbour(op, +1));
    if (!next || !accumulator.getDefiningOp<memref::AllocOp>() ||
        !coversWithIdentity(next, accumulator) ||
        !hasUnitInnerStride(next.getDpsInits()[0]))
      return {};
    // The accumulator is a temporary that only the fill, the contraction
    // and this epilogue touch, so its values need not be stored.
    for (Operation *user : accumulator.getUsers())
      if (user != op.getOperation() && user != fill &&
          user != next.getOperation())
        return {};
    int64_t vectorLoop = next.getNumLoops() - 1;
    int readsAccumulator = 0;
    for (OpOperand *input : next.getDpsInputOperands()) {
      AffineMap map = next.getMatchingIndexingMap(input);
      if (input->get() == accumulator) {
        if (!map.isIdentity())
          return {};
        ++readsAccumulator;
      } else if (!loadablePerTile(input->get(), map, vectorLoop)) {
        return {};
      }
    }
    Block &body = next.getRegion().front();
    if (readsAccumulator != 1 || !body.getArguments().back().use_empty() ||
        !isScalarElementwise(body))
      return {};
    return next;
  }

  /// The tile: up to two vectors wide along the vector loop (a power of
  /// two, or the whole loop when it is at most 8; see segmentsOf) and up to
  /// `registerRows` rows: 8 x 2 accumulators, two loaded vectors and a
  /// broadcast fit AVX-512's 32 vector registers.
  std::pair<int64_t, int64_t> tileOf(const VectorContractionLoops &loops) {
    int64_t extent = loops.ranges[loops.vector];
    int64_t width = extent <= 8
                        ? extent
                        : int64_t(llvm::bit_floor(uint64_t(
                              std::min<int64_t>(extent, 2 * vectorWidth))));
    int64_t rows = loops.rows >= 0 ? loops.ranges[loops.rows] : 1;
    return {std::min<int64_t>(rows, registerRows), width};
  }

  /// Replaces `op` by register tiles; returns the (full) tile's rows and
  /// width.
  std::pair<int64_t, int64_t>
  emitContraction(RewriterBase &rewriter, linalg::GenericOp op,
                  const VectorContractionLoops &loops) {
    Location loc = op.getLoc();
    // Named copies: a lambda below captures them (structured bindings
    // cannot be captured in C++17).
    std::pair<int64_t, int64_t> tile = tileOf(loops);
    int64_t rowTile = tile.first, width = tile.second;
    int64_t rowExtent = loops.rows >= 0 ? loops.ranges[loops.rows] : 1;
    int64_t blockExtent = loops.block >= 0 ? loops.ranges[loops.block] : 1;
    // Loops outside the tiles: every other parallel loop.
    SmallVector<int64_t> outer;
    for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
      if (type == utils::IteratorType::parallel && int64_t(i) != loops.vector &&
          int64_t(i) != loops.rows && int64_t(i) != loops.block)
        outer.push_back(i);
    WholeLoops whole(rewriter, loc, outer, loops.ranges);
    scf::buildLoopNest(
        rewriter, loc, whole.lbs, whole.ubs, whole.steps,
        [&](OpBuilder &b, Location loc, ValueRange outerIvs) {
          SmallVector<Value> dims(loops.ranges.size());
          for (auto [i, iv] : llvm::zip(outer, outerIvs))
            dims[i] = iv;
          // Vector-loop tiles outside row tiles: the vector input's panel
          // stays in cache while every row block uses it.
          for (Segment columns : segmentsOf(loops.ranges[loops.vector], width))
            for (Segment blocks :
                 segmentsOf(blockExtent, blocksPerTile(columns.size, rowTile)))
              for (Segment rows : segmentsOf(rowExtent, rowTile))
                emitTiles(b, loc, op, loops, dims, columns, blocks, rows);
        });
    return {rowTile, width};
  }

  /// Values of the block loop per tile for vectors of `width` and `rows`
  /// rows: the most (up to 3) whose accumulators, loaded vectors and a
  /// broadcast fit the vector registers (32 with AVX-512, 16 with AVX). A
  /// 7-wide convolution row then loads 3 input vectors and broadcasts 8
  /// weights for 24 FMAs instead of 1 and 8 for 8; 8 x 32 tiles keep 1.
  int64_t blocksPerTile(int64_t width, int64_t rows) const {
    int64_t registers = vectorWidth >= 16 ? 32 : 16;
    int64_t perVector = llvm::divideCeil(width, vectorWidth);
    int64_t blocks = 3;
    while (blocks > 1 && (rows + 1) * blocks * perVector + 1 > registers)
      --blocks;
    return blocks;
  }

  /// One loop nest over the tiles of a column, a block and a row segment.
  void emitTiles(OpBuilder &b, Location loc, linalg::GenericOp op,
                 const VectorContractionLoops &loops, SmallVector<Value> dims,
                 Segment columns, Segment blocks, Segment rows) {
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> lbs, ubs, steps;
    for (Segment segment : {columns, blocks, rows}) {
      lbs.push_back(constant(segment.begin));
      ubs.push_back(constant(segment.begin + segment.count * segment.size));
      steps.push_back(constant(segment.size));
    }
    scf::buildLoopNest(b, loc, lbs, ubs, steps,
                       [&](OpBuilder &b, Location loc, ValueRange ivs) {
                         emitTile(b, loc, op, loops, dims, ivs[0], ivs[1],
                                  ivs[2], columns.size, blocks.size, rows.size);
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

  /// A value of the input widened to float32 (f16/bf16 inputs, int8/int16
  /// weights).
  static Value widen(OpBuilder &b, Location loc, Value v, Type f32) {
    if (getElementTypeOrSelf(v.getType()) == getElementTypeOrSelf(f32))
      return v;
    return createScalarWidening(b, loc, v, f32);
  }

  /// `width` elements of `memref`'s innermost dim, `stride` apart, from
  /// `indices` on. For strides above 1: one masked load of `stride *
  /// width` elements whose mask stops at the last element used (masked-off
  /// lanes are not read, so never past the buffer) and a shuffle that keeps
  /// every stride-th element. (An unmasked load of just the span, an odd
  /// size such as 31, is legalized element by element.)
  static Value loadVector(OpBuilder &b, Location loc, Value memref,
                          ValueRange indices, int64_t width, int64_t stride) {
    Type element = getElementTypeOrSelf(memref.getType());
    if (stride == 1)
      return vector::LoadOp::create(b, loc, VectorType::get({width}, element),
                                    memref, indices);
    int64_t span = stride * (width - 1) + 1;
    auto type = VectorType::get({stride * width}, element);
    Value mask = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({stride * width}, b.getI1Type()),
        ArrayRef<int64_t>{span});
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(element)));
    Value loaded =
        vector::MaskedLoadOp::create(b, loc, type, memref, indices, mask, zero);
    SmallVector<int64_t> picked;
    for (int64_t i = 0; i < width; ++i)
      picked.push_back(i * stride);
    return vector::ShuffleOp::create(b, loc, loaded, loaded, picked);
  }

  /// One tile of `rowCount` rows x `blockCount` values of the block loop
  /// x `width` columns, at rows `row0`, blocks `block0`, columns `column0`:
  /// rowCount * blockCount accumulators.
  void emitTile(OpBuilder &b, Location loc, linalg::GenericOp op,
                const VectorContractionLoops &loops, SmallVector<Value> dims,
                Value column0, Value block0, Value row0, int64_t width,
                int64_t blockCount, int64_t rowCount) {
    Type f32 = b.getF32Type();
    auto accType = VectorType::get({width}, f32);
    Value out = op.getDpsInits()[0];
    Value x = op.getDpsInputs()[loops.vectorInput];
    Value y = op.getDpsInputs()[1 - loops.vectorInput];
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    AffineMap xMap =
        op.getMatchingIndexingMap(op.getDpsInputOperand(loops.vectorInput));
    AffineMap yMap =
        op.getMatchingIndexingMap(op.getDpsInputOperand(1 - loops.vectorInput));
    // The row and block loops' values for each row and block of the tile.
    auto offsets = [&](Value first, int64_t count) {
      SmallVector<Value> values;
      for (int64_t i = 0; i < count; ++i)
        values.push_back(i == 0
                             ? first
                             : arith::AddIOp::create(
                                   b, loc, first,
                                   arith::ConstantIndexOp::create(b, loc, i)));
      return values;
    };
    SmallVector<Value> rowValues = offsets(row0, rowCount);
    SmallVector<Value> blockValues = offsets(block0, blockCount);
    auto atRow = [&](int64_t i) {
      if (loops.rows >= 0)
        dims[loops.rows] = rowValues[i];
    };
    auto atBlock = [&](int64_t j) {
      if (loops.block >= 0)
        dims[loops.block] = blockValues[j];
    };
    dims[loops.vector] = column0;
    // Accumulator i * blockCount + j: row i, block j.
    SmallVector<Value> accumulators;
    SmallVector<SmallVector<Value>> outIndices;
    for (int64_t i = 0; i < rowCount; ++i) {
      atRow(i);
      for (int64_t j = 0; j < blockCount; ++j) {
        atBlock(j);
        outIndices.push_back(indicesOf(b, loc, outMap, dims));
        accumulators.push_back(
            initialAccumulator(b, loc, out, outIndices.back(), accType));
      }
    }

    SmallVector<int64_t> reductions;
    for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
      if (type == utils::IteratorType::reduction)
        reductions.push_back(i);
    WholeLoops whole(b, loc, reductions, loops.ranges);
    scf::LoopNest nest = scf::buildLoopNest(
        b, loc, whole.lbs, whole.ubs, whole.steps, accumulators,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange accs) -> scf::ValueVector {
          for (auto [i, iv] : llvm::zip(reductions, ivs))
            dims[i] = iv;
          SmallVector<Value> xVectors;
          for (int64_t j = 0; j < blockCount; ++j) {
            atBlock(j);
            xVectors.push_back(widen(
                b, loc,
                prologue ? computePrologue(b, loc, xMap, dims, width)
                         : loadVector(b, loc, x, indicesOf(b, loc, xMap, dims),
                                      width, loops.vectorStride),
                accType));
          }
          scf::ValueVector updated;
          for (int64_t i = 0; i < rowCount; ++i) {
            atRow(i);
            Value scalar = widen(b, loc,
                                 memref::LoadOp::create(
                                     b, loc, y, indicesOf(b, loc, yMap, dims)),
                                 f32);
            if (loops.scale)
              scalar = arith::MulFOp::create(b, loc, scalar, loops.scale);
            Value broadcast =
                vector::BroadcastOp::create(b, loc, accType, scalar);
            for (int64_t j = 0; j < blockCount; ++j)
              updated.push_back(vector::FMAOp::create(
                  b, loc, xVectors[j], broadcast, accs[i * blockCount + j]));
          }
          return updated;
        });
    for (auto [acc, indices] : llvm::zip(nest.results, outIndices)) {
      if (!epilogue) {
        vector::StoreOp::create(b, loc, acc, out, indices);
        continue;
      }
      Value result = applyEpilogue(b, loc, out, acc, indices, width);
      vector::StoreOp::create(b, loc, result, epilogue.getDpsInits()[0],
                              indices);
    }
  }

  /// `map`'s element of `memref` at the output position `position` (the
  /// loops of a generic over the output's shape) as a vector of `width`:
  /// a vector load along the innermost (vector) loop, or a broadcast.
  static Value loadPerTile(OpBuilder &b, Location loc, Value memref,
                           AffineMap map, ArrayRef<Value> position,
                           int64_t width) {
    Type element = getElementTypeOrSelf(memref.getType());
    auto type = VectorType::get({width}, element);
    SmallVector<Value> indices = indicesOf(b, loc, map, position);
    if (map.getNumResults() > 0 &&
        map.getResults().back().isFunctionOfDim(map.getNumDims() - 1))
      return vector::LoadOp::create(b, loc, type, memref, indices);
    Value scalar = memref::LoadOp::create(b, loc, memref, indices);
    return vector::BroadcastOp::create(b, loc, type, scalar);
  }

  /// The accumulators' starting value: the fill's, or what the buffer holds.
  Value initialAccumulator(OpBuilder &b, Location loc, Value out,
                           ArrayRef<Value> position, VectorType type) {
    if (auto fillOp = dyn_cast_or_null<linalg::FillOp>(fill))
      return vector::BroadcastOp::create(b, loc, type, fillOp.getInputs()[0]);
    if (auto copy = dyn_cast_or_null<linalg::GenericOp>(fill))
      return loadPerTile(
          b, loc, copy.getDpsInputs()[0],
          copy.getMatchingIndexingMap(copy.getDpsInputOperand(0)), position,
          type.getNumElements());
    return vector::LoadOp::create(b, loc, type, out, position);
  }

  /// The epilogue's body on vectors of `width`: the accumulator for its
  /// reads of `accumulatorBuffer`, per-tile loads for its other inputs,
  /// values from outside its body broadcast. Returns what it yields.
  Value applyEpilogue(OpBuilder &b, Location loc, Value accumulatorBuffer,
                      Value accumulator, ArrayRef<Value> position,
                      int64_t width) {
    Block &body = epilogue.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      Value arg = body.getArgument(input->getOperandNumber());
      if (input->get() == accumulatorBuffer)
        mapping.map(arg, accumulator);
      else
        mapping.map(arg, loadPerTile(b, loc, input->get(),
                                     epilogue.getMatchingIndexingMap(input),
                                     position, width));
    }
    return cloneBodyOnVectors(b, loc, body, mapping, width);
  }
};

} // namespace
