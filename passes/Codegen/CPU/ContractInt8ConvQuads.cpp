//===- ContractInt8ConvQuads.cpp - uint8 x int8 convolutions, vpdpbusd ----===//
//
// kiln-pack-int8-conv-weights computes a convolution of uint8 activations
// by int8 weights over Xq [N, C/4, H, W * 4], each pixel's 4 channels
// side by side, and Wq [F, C/4, KH, KW * 4], each tap's 4 channels side
// by side, with strides [1, 4]:
//
//   out[n, f, y, x] += Xq[n, q, y + i, 4 * x + k] * Wq[f, q, i, k]
//
// For one step (q, i and 4 values of k), 16 outputs x..x+15 read 64
// contiguous bytes of Xq, and filter f reads 4 bytes of Wq: AVX-512
// VNNI's `vpdpbusd` adds each lane's four uint8 x int8 products to its
// int32 sum, 64 products per instruction. This pass computes such a
// contraction as register tiles:
//
//   for each tile of R filters x P panels of 16 outputs along x:
//     acc[r][p] = 0                                    (int32 x 16)
//     for every reduction loop but k, and k in steps of 4:
//       xs[p] = Xq[..., 4 * (x + 16p) + k ...]         (64 bytes)
//       acc[r][p] = vpdpbusd(acc[r][p], xs[p], broadcast(Wq[f + r, ..., k]))
//     out[..., f + r, ..., x + 16p ...] += sitofp(acc[r][p])
//
// The loops are read from the generic's indexing maps, so any
// contraction of that form takes it. Filters left over get tiles of one
// filter; a row's last panel under 16 outputs is loaded and stored under
// a mask.
//
// On a CPU with AMX-INT8 (`matrix-tiles`), a 1x1 convolution whose output
// rows are one row is a matrix product: W [F, C] by X's quads, 16 rows
// of 64 bytes (16 outputs' 4 channels) per 16 quads of channels, which
// is an AMX tile's layout for the right operand. Blocks of 16 filters by
// two panels take `tdpbsud` (signed weights, unsigned bytes):
//
//   for each block of 16 filters x 2 panels:
//     c[p] = 0                                       (tile, 16 x 16 int32)
//     for every 64 bytes of C (unrolled):
//       w = W[f..f+15, c..c+63]                      (tile, row stride C)
//       c[p] = tdpbsud(c[p], w, Xq[c/4..c/4+15, x + 16p ...])
//     each filter's 16 sums, through a scratch, to the epilogue
//
// A last panel of n < 16 outputs takes tiles of 4n bytes (n sums) a row;
// filters left over take the vector tiles.
//
//===----------------------------------------------------------------------===//
#include "Int8QuadBody.h"
#include "QuadDotProducts.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace kiln {
#define GEN_PASS_DEF_CONTRACTINT8CONVQUADS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The loops of a matching convolution: positions among the generic's.
struct QuadConvLoops {
  int64_t filters = -1;       ///< parallel; in W and the output, not in X
  int64_t vector = -1;        ///< the output's innermost loop; X reads 4 * it
  int64_t quad = -1;          ///< the reduction W's innermost dim runs along
  SmallVector<int64_t> outer; ///< the other parallel loops
  SmallVector<int64_t> reductions; ///< the other reduction loops
};

/// `4 * v + k` (either way round) as (v, k).
std::optional<std::pair<int64_t, int64_t>> quadOffset(AffineExpr expr) {
  auto add = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!add || add.getKind() != AffineExprKind::Add)
    return std::nullopt;
  for (auto [scaled, plain] : {std::pair{add.getLHS(), add.getRHS()},
                               std::pair{add.getRHS(), add.getLHS()}}) {
    auto mul = dyn_cast<AffineBinaryOpExpr>(scaled);
    auto k = dyn_cast<AffineDimExpr>(plain);
    if (!mul || !k || mul.getKind() != AffineExprKind::Mul)
      continue;
    auto v = dyn_cast<AffineDimExpr>(mul.getLHS());
    auto four = dyn_cast<AffineConstantExpr>(mul.getRHS());
    if (v && four && four.getValue() == kQuadDepth)
      return std::pair<int64_t, int64_t>{v.getPosition(), k.getPosition()};
  }
  return std::nullopt;
}

/// Whether `expr` is sums and constant multiples of loops (what
/// `evaluate` computes).
bool isLinear(AffineExpr expr) {
  bool linear = true;
  expr.walk([&](AffineExpr e) {
    if (!isa<AffineDimExpr, AffineConstantExpr>(e) &&
        e.getKind() != AffineExprKind::Add &&
        e.getKind() != AffineExprKind::Mul)
      linear = false;
  });
  return linear;
}

std::optional<QuadConvLoops> matchQuadConvLoops(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isUint8ByInt8Body(op))
    return std::nullopt;
  AffineMap x = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap w = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!w.isProjectedPermutation() || !out.isProjectedPermutation() ||
      x.getNumResults() == 0 || w.getNumResults() == 0 ||
      out.getNumResults() == 0 || !llvm::all_of(x.getResults(), isLinear))
    return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> offset =
      quadOffset(x.getResults().back());
  if (!offset)
    return std::nullopt;
  QuadConvLoops loops;
  std::tie(loops.vector, loops.quad) = *offset;
  auto innermost = [](AffineMap map) {
    return int64_t(cast<AffineDimExpr>(map.getResults().back()).getPosition());
  };
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (innermost(out) != loops.vector || innermost(w) != loops.quad ||
      iterators[loops.vector] != utils::IteratorType::parallel ||
      iterators[loops.quad] != utils::IteratorType::reduction ||
      ShapedType::isDynamic(ranges[loops.quad]) ||
      ranges[loops.quad] % kQuadDepth != 0)
    return std::nullopt;
  for (int64_t d = 0; d < int64_t(op.getNumLoops()); ++d) {
    if (d == loops.vector || d == loops.quad)
      continue;
    bool inOut = out.isFunctionOfDim(d), inX = x.isFunctionOfDim(d);
    bool parallel = iterators[d] == utils::IteratorType::parallel;
    if (parallel != inOut)
      return std::nullopt;
    if (!parallel)
      loops.reductions.push_back(d);
    else if (!inX && w.isFunctionOfDim(d) && loops.filters < 0)
      loops.filters = d;
    else if (inX && !w.isFunctionOfDim(d))
      loops.outer.push_back(d);
    else
      return std::nullopt;
  }
  if (loops.filters < 0)
    return std::nullopt;
  return loops;
}

/// The loop over quads of channels of a convolution over a 1x1 window:
/// the one reduction loop besides k with more than one iteration, when k
/// runs over one quad and the others have one iteration; else -1.
int64_t channelQuadLoop(linalg::GenericOp op, const QuadConvLoops &loops) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges[loops.quad] != kQuadDepth)
    return -1;
  int64_t channelQuads = -1;
  for (int64_t d : loops.reductions) {
    if (ranges[d] == 1)
      continue;
    if (channelQuads >= 0 || ShapedType::isDynamic(ranges[d]))
      return -1;
    channelQuads = d;
  }
  return channelQuads;
}

} // namespace

int64_t kiln::int8PointwiseConvDepth(linalg::LinalgOp linalgOp) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  std::optional<QuadConvLoops> loops =
      op ? matchQuadConvLoops(op) : std::nullopt;
  int64_t channelQuads = loops ? channelQuadLoop(op, *loops) : -1;
  return channelQuads < 0 ? 0
                          : op.getStaticLoopRanges()[channelQuads] * kQuadDepth;
}

bool kiln::isInt8QuadConv(linalg::LinalgOp linalgOp, int64_t *filters,
                          int64_t *vector) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  std::optional<QuadConvLoops> loops =
      op ? matchQuadConvLoops(op) : std::nullopt;
  if (!loops)
    return false;
  if (filters)
    *filters = loops->filters;
  if (vector)
    *vector = loops->vector;
  return true;
}

namespace {

/// `expr` of the loops' values `dims`, in index arithmetic.
Value evaluate(OpBuilder &b, Location loc, AffineExpr expr,
               ArrayRef<Value> dims) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return dims[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return arith::ConstantIndexOp::create(b, loc, constant.getValue());
  auto binary = cast<AffineBinaryOpExpr>(expr);
  Value lhs = evaluate(b, loc, binary.getLHS(), dims);
  Value rhs = evaluate(b, loc, binary.getRHS(), dims);
  if (binary.getKind() == AffineExprKind::Add)
    return arith::AddIOp::create(b, loc, lhs, rhs);
  return arith::MulIOp::create(b, loc, lhs, rhs);
}

SmallVector<Value> indicesOf(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> dims) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(evaluate(b, loc, expr, dims));
  return indices;
}

/// The linalg.fill of zeros that `op`'s output holds, when it comes just
/// before it (ops between it and `op` write no memory).
linalg::FillOp zeroFillOf(linalg::GenericOp op) {
  Value out = op.getDpsInits()[0];
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.getDpsInits()[0] == out) {
      return matchPattern(fill.getDpsInputs()[0], m_PosZeroFloat())
                 ? fill
                 : linalg::FillOp();
    }
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

/// The elementwise generic after the convolution that reads its output,
/// a temporary only the fill, the convolution and it touch (a QDQ model's
/// bias, requantization and residual add): the tiles compute it on their
/// sums in registers and store its result instead of the sums.
struct Epilogue {
  linalg::GenericOp op;
  Value accumulator;
  /// Its inputs and their maps over the accumulator's dims (its loops).
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  Value output;
};

/// The next op after `op` that writes memory.
Operation *nextWriter(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryEffectFree(next))
      return next;
  return nullptr;
}

std::optional<Epilogue> findEpilogue(linalg::GenericOp op,
                                     linalg::FillOp fill) {
  Value accumulator = op.getDpsInits()[0];
  auto next = dyn_cast_or_null<linalg::GenericOp>(nextWriter(op));
  if (!fill || !next || !accumulator.getDefiningOp<memref::AllocOp>() ||
      next.getNumDpsInits() != 1 || next.getNumReductionLoops() != 0 ||
      !next.getMatchingIndexingMap(next.getDpsInitOperand(0)).isIdentity() ||
      next.getNumLoops() != cast<MemRefType>(accumulator.getType()).getRank() ||
      !hasContiguousInnerDims(next.getDpsInits()[0], 1))
    return std::nullopt;
  for (Operation *user : accumulator.getUsers())
    if (user != op.getOperation() && user != fill.getOperation() &&
        user != next.getOperation() && !isa<memref::DeallocOp>(user))
      return std::nullopt;
  Epilogue epilogue{next, accumulator, {}, {}, next.getDpsInits()[0]};
  int64_t vectorLoop = next.getNumLoops() - 1;
  int readsAccumulator = 0;
  for (OpOperand *input : next.getDpsInputOperands()) {
    AffineMap map = next.getMatchingIndexingMap(input);
    bool alongVector = map.getNumResults() > 0 &&
                       map.getResults().back() ==
                           getAffineDimExpr(vectorLoop, map.getContext());
    if (input->get() == accumulator) {
      if (!map.isIdentity())
        return std::nullopt;
      ++readsAccumulator;
    } else if (!isa<MemRefType>(input->get().getType()) ||
               !map.isProjectedPermutation(/*allowZeroInResults=*/true) ||
               (alongVector ? !hasContiguousInnerDims(input->get(), 1)
                            : map.isFunctionOfDim(vectorLoop))) {
      return std::nullopt;
    }
    epilogue.inputs.push_back(input->get());
    epilogue.maps.push_back(map);
  }
  Block &body = next.getRegion().front();
  if (readsAccumulator != 1 || !body.getArguments().back().use_empty())
    return std::nullopt;
  for (Operation &inner : body.without_terminator()) {
    bool scalar = llvm::all_of(inner.getResultTypes(),
                               [](Type t) { return t.isIntOrFloat(); });
    if (!scalar || inner.getNumRegions() != 0 ||
        !(isa<arith::ConstantOp>(inner) ||
          inner.hasTrait<OpTrait::Elementwise>() ||
          isa<UnrealizedConversionCastOp>(inner)))
      return std::nullopt;
  }
  return epilogue;
}

struct ContractInt8ConvQuadsPass
    : public kiln::impl::ContractInt8ConvQuadsBase<ContractInt8ConvQuadsPass> {
  using Base::Base;

  /// The dot products of `instructions`, parsed once per function.
  std::optional<QuadDotProducts> dot;

  /// One panel of a tile: 16 outputs along the vector loop from `v`, the
  /// first `count` of them under a mask when `count` is set, in row
  /// `block` of the block loop when that is set.
  struct Panel {
    Value block, v, count;
  };

  /// One matched convolution and the views its tiles read.
  struct Conv {
    linalg::GenericOp op;
    QuadConvLoops loops;
    AffineMap xMap, wMap, outMap;
    Value x, w, out;           ///< X as signless bytes
    SmallVector<Value> dims;   ///< the loops' current values
    SmallVector<Value> extent; ///< the loops' extents
    /// The loop of the output's rows (the dim before the vector loop's),
    /// whose rows a tile may span when they are short; or -1.
    int64_t block = -1;
    int64_t rowsPerTile = 1;
    std::optional<int64_t> vectorExtent; ///< when static
    bool zeroFilled = false;             ///< the output held zeros
    std::optional<Epilogue> epilogue;
    /// A 1x1 convolution on AMX tiles: W as [F, C] (16 filters' rows of
    /// a tile), the reduction loop over X's rows of quads, and a 16 x 16
    /// int32 scratch for a block's sums; else null.
    Value filterRows, scratch;
    int64_t channelQuads = -1;
  };

  /// The rows of an AMX block (filters), and the bytes of C a tile step
  /// takes.
  static constexpr int64_t kTileRows = kAmxTileRows, kTileBytes = kAmxTileBytes;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel) || rows < 1 || panels < 1)
      return;
    std::optional<QuadInstructions> instructionSet =
        parseQuadInstructions(instructions);
    if (!instructionSet) {
      func.emitError() << "kiln-contract-int8-conv-quads: unknown "
                          "instructions '"
                       << instructions << "'";
      return signalPassFailure();
    }
    dot.emplace(*instructionSet);
    SmallVector<std::pair<linalg::GenericOp, QuadConvLoops>> found;
    func.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<QuadConvLoops> loops = matchQuadConvLoops(op);
      if (loops && llvm::all_of(op->getOperands(), [](Value v) {
            return hasContiguousInnerDims(v, 1);
          }))
        found.push_back({op, *loops});
    });
    for (auto &[op, loops] : found) {
      // The tiles write every output: they store the sums instead.
      linalg::FillOp fill = zeroFillOf(op);
      std::optional<Epilogue> epilogue = findEpilogue(op, fill);
      // With an epilogue, the tiles go where it is (its inputs' views are
      // made after the convolution).
      OpBuilder builder(epilogue ? epilogue->op.getOperation()
                                 : op.getOperation());
      emitConv(builder, op, loops, bool(fill), epilogue);
      if (epilogue)
        epilogue->op->erase();
      op->erase();
      if (fill)
        fill->erase();
      if (!epilogue)
        continue;
      // The temporary is no longer read or written.
      Value accumulator = epilogue->accumulator;
      if (llvm::all_of(accumulator.getUsers(), [](Operation *user) {
            return isa<memref::DeallocOp>(user);
          })) {
        for (Operation *user :
             llvm::make_early_inc_range(accumulator.getUsers()))
          user->erase();
        accumulator.getDefiningOp()->erase();
      }
    }
  }

  static Value asBytes(OpBuilder &b, Location loc, Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    if (type.getElementType().isSignlessInteger(8))
      return memref;
    return UnrealizedConversionCastOp::create(b, loc,
                                              MemRefType::get(type.getShape(),
                                                              b.getI8Type(),
                                                              type.getLayout()),
                                              memref)
        .getResult(0);
  }

  void emitConv(OpBuilder &b, linalg::GenericOp op, const QuadConvLoops &loops,
                bool zeroFilled, std::optional<Epilogue> epilogue) {
    Location loc = op.getLoc();
    Conv conv;
    conv.op = op;
    conv.loops = loops;
    conv.zeroFilled = zeroFilled;
    conv.epilogue = epilogue;
    conv.xMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    conv.wMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
    conv.outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    conv.x = asBytes(b, loc, op.getDpsInputs()[0]);
    conv.w = op.getDpsInputs()[1];
    conv.out = op.getDpsInits()[0];
    for (Range range :
         cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
      conv.extent.push_back(
          getValueOrCreateConstantIndexOp(b, loc, range.size));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    conv.dims.assign(op.getNumLoops(), zero);
    if (conv.outMap.getNumResults() >= 2) {
      int64_t rowsDim =
          cast<AffineDimExpr>(
              conv.outMap.getResult(conv.outMap.getNumResults() - 2))
              .getPosition();
      if (llvm::is_contained(loops.outer, rowsDim))
        conv.block = rowsDim;
    }
    if (conv.block >= 0)
      flattenRows(b, loc, conv);
    conv.vectorExtent = getConstantIntValue(conv.extent[loops.vector]);
    if (conv.vectorExtent && conv.block >= 0) {
      int64_t rowPanels = llvm::divideCeil(*conv.vectorExtent, kQuadLanes);
      if (rowPanels < panels)
        conv.rowsPerTile = panels / rowPanels;
    }
    if (matrixTiles)
      prepareMatrixTiles(b, loc, conv);
    emitOuterLoops(b, loc, conv, 0, 1);
  }

  /// A 1x1 convolution's output rows as one row (its tiles then run whole
  /// panels across rows): when X's row index is the output's, and X's rows
  /// are 4 times the output's, both contiguous.
  void flattenRows(OpBuilder &b, Location loc, Conv &conv) {
    int64_t xRank = conv.xMap.getNumResults();
    int64_t outRank = conv.outMap.getNumResults();
    auto xType = cast<MemRefType>(conv.x.getType());
    auto outType = cast<MemRefType>(conv.out.getType());
    // Loops of one iteration add nothing to X's row index.
    SmallVector<int64_t> ranges = conv.op.getStaticLoopRanges();
    SmallVector<AffineExpr> unit;
    for (int64_t d = 0; d < int64_t(ranges.size()); ++d)
      unit.push_back(ranges[d] == 1 ? getAffineConstantExpr(0, b.getContext())
                                    : getAffineDimExpr(d, b.getContext()));
    AffineExpr xRow = conv.xMap.getResult(xRank - 2).replaceDims(unit);
    if (xRow != getAffineDimExpr(conv.block, b.getContext()) ||
        !hasContiguousInnerDims(conv.x, 2) ||
        !hasContiguousInnerDims(conv.out, 2) ||
        xType.getDimSize(xRank - 1) !=
            kQuadDepth * outType.getDimSize(outRank - 1))
      return;
    // The epilogue's operands along the rows flatten with them; those
    // broadcast along both stay.
    std::optional<Epilogue> epilogue = conv.epilogue;
    if (epilogue) {
      MLIRContext *ctx = b.getContext();
      AffineExpr row = getAffineDimExpr(outRank - 2, ctx);
      AffineExpr column = getAffineDimExpr(outRank - 1, ctx);
      for (auto [input, map] : llvm::zip(epilogue->inputs, epilogue->maps)) {
        int64_t rank = map.getNumResults();
        bool alongRows = rank >= 2 && map.getResult(rank - 2) == row &&
                         map.getResult(rank - 1) == column;
        if (alongRows && !hasContiguousInnerDims(input, 2))
          return;
        if (!alongRows && (map.isFunctionOfDim(outRank - 2) ||
                           map.isFunctionOfDim(outRank - 1)))
          return;
        SmallVector<AffineExpr> results(map.getResults());
        if (alongRows) {
          results.pop_back();
          // The accumulator is the sums, never read from memory.
          if (input != epilogue->accumulator)
            input = collapse(b, loc, input, rank);
        }
        map = AffineMap::get(outRank - 1, 0, results, ctx);
      }
      if (!hasContiguousInnerDims(epilogue->output, 2))
        return;
      epilogue->output = collapse(b, loc, epilogue->output, outRank);
      conv.epilogue = epilogue;
    }
    conv.x = collapse(b, loc, conv.x, xRank);
    // With an epilogue the sums never reach the output buffer.
    if (!conv.epilogue)
      conv.out = collapse(b, loc, conv.out, outRank);
    conv.xMap = conv.xMap.dropResult(xRank - 2);
    conv.outMap = conv.outMap.dropResult(outRank - 2);
    int64_t vector = conv.loops.vector;
    std::optional<int64_t> rowLength = getConstantIntValue(conv.extent[vector]);
    std::optional<int64_t> rowCount =
        getConstantIntValue(conv.extent[conv.block]);
    conv.extent[vector] =
        rowLength && rowCount
            ? index(b, loc, *rowLength * *rowCount)
            : arith::MulIOp::create(b, loc, conv.extent[vector],
                                    conv.extent[conv.block])
                  .getResult();
    llvm::erase(conv.loops.outer, conv.block);
    conv.block = -1;
  }

  /// `memref`'s last two dims as one.
  static Value collapse(OpBuilder &b, Location loc, Value memref,
                        int64_t rank) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < rank - 2; ++d)
      groups.push_back({d});
    groups.push_back({rank - 2, rank - 1});
    return memref::CollapseShapeOp::create(b, loc, memref, groups);
  }

  /// One loop per outer parallel loop around the tiles; the block loop in
  /// steps of the rows a tile spans.
  void emitOuterLoops(OpBuilder &b, Location loc, Conv &conv, size_t level,
                      int64_t blockRows) {
    if (level == conv.loops.outer.size()) {
      emitTiles(b, loc, conv, blockRows);
      return;
    }
    int64_t d = conv.loops.outer[level];
    if (d == conv.block && conv.rowsPerTile > 1) {
      forEachTile(b, loc, conv.extent[d], conv.rowsPerTile,
                  [&](OpBuilder &inner, Value iv, int64_t size) {
                    conv.dims[d] = iv;
                    emitOuterLoops(inner, loc, conv, level + 1, size);
                  });
      return;
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    scf::ForOp::create(b, loc, zero, conv.extent[d], one, ValueRange{},
                       [&](OpBuilder &inner, Location, Value iv, ValueRange) {
                         conv.dims[d] = iv;
                         emitOuterLoops(inner, loc, conv, level + 1, blockRows);
                         scf::YieldOp::create(inner, loc);
                       });
  }

  /// Tiles of filters by panels.
  void emitTiles(OpBuilder &b, Location loc, Conv &conv, int64_t blockRows) {
    if (conv.filterRows) {
      emitMatrixBlocks(b, loc, conv);
      return;
    }
    forEachTile(b, loc, conv.extent[conv.loops.filters], rows,
                [&](OpBuilder &inner, Value f, int64_t tileRows) {
                  if (conv.vectorExtent)
                    emitStaticPanels(inner, loc, conv, f, tileRows, blockRows);
                  else
                    emitDynamicPanels(inner, loc, conv, f, tileRows);
                });
  }

  static Value index(OpBuilder &b, Location loc, int64_t i) {
    return arith::ConstantIndexOp::create(b, loc, i);
  }

  /// A row of known length: whole tiles of `panels` panels, then one tile
  /// of the rest (whole panels and the last under 16 outputs); or, for
  /// rows shorter than a tile, one tile of `blockRows` whole rows.
  void emitStaticPanels(OpBuilder &b, Location loc, Conv &conv, Value f,
                        int64_t tileRows, int64_t blockRows) {
    int64_t whole = *conv.vectorExtent / kQuadLanes;
    auto rowPanels = [&](Value block, int64_t first) {
      return panelsFrom(b, loc, conv, block, first);
    };
    if (conv.rowsPerTile > 1) {
      SmallVector<Panel> tile;
      for (int64_t r = 0; r < blockRows; ++r) {
        Value block = conv.dims[conv.block];
        if (r)
          block = arith::AddIOp::create(b, loc, block, index(b, loc, r));
        tile.append(rowPanels(block, 0));
      }
      emitTile(b, loc, conv, f, tileRows, tile);
      return;
    }
    int64_t tiles = whole / panels;
    if (tiles)
      emitWholeTiles(b, loc, conv, f, tileRows,
                     index(b, loc, tiles * panels * kQuadLanes));
    SmallVector<Panel> rest = rowPanels(Value(), tiles * panels);
    if (!rest.empty())
      emitTile(b, loc, conv, f, tileRows, rest);
  }

  /// The panels of a row of known length from panel `first` on, the last
  /// under a mask when the row ends within it.
  static SmallVector<Panel> panelsFrom(OpBuilder &b, Location loc,
                                       const Conv &conv, Value block,
                                       int64_t first) {
    int64_t whole = *conv.vectorExtent / kQuadLanes;
    int64_t tail = *conv.vectorExtent % kQuadLanes;
    SmallVector<Panel> row;
    for (int64_t p = first; p < whole; ++p)
      row.push_back({block, index(b, loc, p * kQuadLanes), Value()});
    if (tail)
      row.push_back(
          {block, index(b, loc, whole * kQuadLanes), index(b, loc, tail)});
    return row;
  }

  /// Tiles of `panels` whole panels over [0, end) of the row.
  void emitWholeTiles(OpBuilder &b, Location loc, Conv &conv, Value f,
                      int64_t tileRows, Value end) {
    scf::ForOp::create(
        b, loc, index(b, loc, 0), end, index(b, loc, panels * kQuadLanes),
        ValueRange{}, [&](OpBuilder &inner, Location, Value v, ValueRange) {
          SmallVector<Panel> tile;
          for (int64_t p = 0; p < panels; ++p)
            tile.push_back(
                {Value(),
                 p ? arith::AddIOp::create(inner, loc, v,
                                           index(inner, loc, p * kQuadLanes))
                         .getResult()
                   : v,
                 Value()});
          emitTile(inner, loc, conv, f, tileRows, tile);
          scf::YieldOp::create(inner, loc);
        });
  }

  /// A row of run-time length: tiles of `panels` whole panels, then whole
  /// panels one at a time, then the rest under a mask.
  void emitDynamicPanels(OpBuilder &b, Location loc, Conv &conv, Value f,
                         int64_t tileRows) {
    Value extent = conv.extent[conv.loops.vector];
    Value lanes = index(b, loc, kQuadLanes);
    Value rest = arith::RemUIOp::create(b, loc, extent, lanes);
    Value whole = arith::SubIOp::create(b, loc, extent, rest);
    Value tileLanes = index(b, loc, panels * kQuadLanes);
    Value tiled = arith::SubIOp::create(
        b, loc, whole, arith::RemUIOp::create(b, loc, whole, tileLanes));
    emitWholeTiles(b, loc, conv, f, tileRows, tiled);
    scf::ForOp::create(b, loc, tiled, whole, lanes, ValueRange{},
                       [&](OpBuilder &inner, Location, Value v, ValueRange) {
                         emitTile(inner, loc, conv, f, tileRows,
                                  {Panel{Value(), v, Value()}});
                         scf::YieldOp::create(inner, loc);
                       });
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                          rest, index(b, loc, 0));
    scf::IfOp::create(b, loc, partial, [&](OpBuilder &inner, Location) {
      emitTile(inner, loc, conv, f, tileRows, {Panel{Value(), whole, rest}});
      scf::YieldOp::create(inner, loc);
    });
  }

  /// A 1x1 convolution whose outputs are one row (flattenRows) maps onto
  /// AMX tiles: 16 filters' weights over 64 bytes of C are a tile of W's
  /// rows (row stride C), and 16 quads of channels of 16 outputs are a
  /// tile of X's rows of quads (row stride X's between quads), 64
  /// contiguous bytes each. Sets the views when it does.
  void prepareMatrixTiles(OpBuilder &b, Location loc, Conv &conv) {
    const QuadConvLoops &loops = conv.loops;
    int64_t channelQuads = channelQuadLoop(conv.op, loops);
    // Fewer filters than a block (a window sum's one filter of ones) never
    // reach the tiles.
    std::optional<int64_t> filters =
        getConstantIntValue(conv.extent[loops.filters]);
    if (conv.block >= 0 || !conv.vectorExtent || channelQuads < 0 ||
        (filters && *filters < kTileRows))
      return;
    MLIRContext *ctx = b.getContext();
    int64_t depth = conv.op.getStaticLoopRanges()[channelQuads] * kQuadDepth;
    int64_t xRank = conv.xMap.getNumResults();
    auto wType = cast<MemRefType>(conv.w.getType());
    int64_t wRank = wType.getRank();
    if (depth == 0 || depth % kTileBytes != 0 || depth > maxTileDepth ||
        xRank < 2 ||
        conv.xMap.getResult(xRank - 2) != getAffineDimExpr(channelQuads, ctx) ||
        wRank < 3 ||
        conv.wMap.getResult(0) != getAffineDimExpr(loops.filters, ctx) ||
        conv.wMap.getResult(1) != getAffineDimExpr(channelQuads, ctx) ||
        !hasContiguousInnerDims(conv.w, wRank - 1))
      return;
    for (int64_t d = 2; d + 1 < wRank; ++d)
      if (wType.getDimSize(d) != 1)
        return;
    ReassociationIndices channels;
    for (int64_t d = 1; d < wRank; ++d)
      channels.push_back(d);
    conv.filterRows = memref::CollapseShapeOp::create(
        b, loc, conv.w, ArrayRef<ReassociationIndices>{{0}, channels});
    conv.channelQuads = channelQuads;
    // One scratch per kernel, at its entry: an alloca in the loops would
    // grow the stack every iteration.
    OpBuilder entry = OpBuilder::atBlockBegin(
        &conv.op->getParentOfType<func::FuncOp>().getBody().front());
    conv.scratch = memref::AllocaOp::create(
        entry, loc, MemRefType::get({kTileRows, kQuadLanes}, b.getI32Type()));
  }

  /// Blocks of 16 filters by two panels (one for an odd last panel, and
  /// a last panel of fewer outputs in narrower tiles) on AMX tiles;
  /// filters past the last block on vector tiles.
  void emitMatrixBlocks(OpBuilder &b, Location loc, Conv &conv) {
    Value filters = conv.extent[conv.loops.filters];
    Value block = index(b, loc, kTileRows);
    Value whole = arith::SubIOp::create(
        b, loc, filters, arith::RemUIOp::create(b, loc, filters, block));
    int64_t panelCount = *conv.vectorExtent / kQuadLanes;
    int64_t tail = *conv.vectorExtent % kQuadLanes;
    int64_t pairs = panelCount / 2;
    // The panels after the pairs: one whole, a partial one, or both.
    int64_t lastCount = panelCount % 2 + (tail ? 1 : 0);
    scf::ForOp::create(
        b, loc, index(b, loc, 0), whole, block, ValueRange{},
        [&](OpBuilder &in, Location, Value f, ValueRange) {
          if (pairs)
            scf::ForOp::create(
                in, loc, index(in, loc, 0),
                index(in, loc, pairs * 2 * kQuadLanes),
                index(in, loc, 2 * kQuadLanes), ValueRange{},
                [&](OpBuilder &inner, Location, Value v, ValueRange) {
                  emitMatrixBlock(inner, loc, conv, f, v, 2, kQuadLanes);
                  scf::YieldOp::create(inner, loc);
                });
          if (lastCount)
            emitMatrixBlock(in, loc, conv, f,
                            index(in, loc, pairs * 2 * kQuadLanes), lastCount,
                            tail ? tail : kQuadLanes);
          scf::YieldOp::create(in, loc);
        });
    forEachTile(b, loc, arith::SubIOp::create(b, loc, filters, whole), rows,
                [&](OpBuilder &in, Value r, int64_t tileRows) {
                  emitStaticPanels(in, loc, conv,
                                   arith::AddIOp::create(in, loc, whole, r),
                                   tileRows, 1);
                });
  }

  /// 16 filters from `f` by `count` panels from output `v` on AMX tiles,
  /// the last of `lastColumns` outputs: per 64 bytes of C, `tdpbsud` of
  /// W's rows (signed) by X's quads (unsigned); then each filter's sums
  /// from the scratch.
  void emitMatrixBlock(OpBuilder &b, Location loc, Conv &conv, Value f, Value v,
                       int64_t count, int64_t lastColumns) {
    const QuadConvLoops &loops = conv.loops;
    auto columnsOf = [&](int64_t p) {
      return p + 1 == count ? lastColumns : kQuadLanes;
    };
    auto quadsTile = [&](int64_t p) {
      return amx::TileType::get({kTileRows, columnsOf(p) * kQuadDepth},
                                b.getI8Type());
    };
    auto sumsTile = [&](int64_t p) {
      return amx::TileType::get({kTileRows, columnsOf(p)}, b.getI32Type());
    };
    auto weightsTile =
        amx::TileType::get({kTileRows, kTileBytes}, b.getI8Type());
    auto accType = VectorType::get({kQuadLanes}, b.getI32Type());
    auto plus = [&](Value base, int64_t i) {
      return i == 0 ? base
                    : arith::AddIOp::create(b, loc, base, index(b, loc, i))
                          .getResult();
    };
    int64_t depth = cast<MemRefType>(conv.filterRows.getType()).getDimSize(1);
    SmallVector<Value> sums;
    for (int64_t p = 0; p < count; ++p)
      sums.push_back(amx::TileZeroOp::create(b, loc, sumsTile(p)));
    SmallVector<Value> dims(conv.dims);
    dims[loops.quad] = index(b, loc, 0);
    for (int64_t k = 0; k < depth; k += kTileBytes) {
      Value weights =
          amx::TileLoadOp::create(b, loc, weightsTile, conv.filterRows,
                                  ValueRange{f, index(b, loc, k)});
      dims[conv.channelQuads] = index(b, loc, k / kQuadDepth);
      for (int64_t p = 0; p < count; ++p) {
        dims[loops.vector] = plus(v, p * kQuadLanes);
        Value quads = amx::TileLoadOp::create(
            b, loc, quadsTile(p), conv.x, indicesOf(b, loc, conv.xMap, dims));
        sums[p] = amx::TileMulIOp::create(b, loc, sumsTile(p), weights, quads,
                                          sums[p], /*isZextLhs=*/false,
                                          /*isZextRhs=*/true);
      }
    }
    dims = conv.dims;
    for (int64_t p = 0; p < count; ++p) {
      amx::TileStoreOp::create(b, loc, conv.scratch,
                               ValueRange{index(b, loc, 0), index(b, loc, 0)},
                               sums[p]);
      dims[loops.vector] = plus(v, p * kQuadLanes);
      // The lanes past a narrower tile's columns hold stale sums.
      Value mask;
      if (columnsOf(p) < kQuadLanes)
        mask = vector::ConstantMaskOp::create(
            b, loc, VectorType::get({kQuadLanes}, b.getI1Type()),
            ArrayRef<int64_t>{columnsOf(p)});
      for (int64_t r = 0; r < kTileRows; ++r) {
        Value lane = vector::LoadOp::create(
            b, loc, accType, conv.scratch,
            ValueRange{index(b, loc, r), index(b, loc, 0)});
        dims[loops.filters] = plus(f, r);
        storeSums(b, loc, conv, dims, lane, mask);
      }
    }
  }

  /// One tile: `tileRows` filters from `f` by `tilePanels`.
  void emitTile(OpBuilder &b, Location loc, Conv &conv, Value f,
                int64_t tileRows, ArrayRef<Panel> tilePanels) {
    const QuadConvLoops &loops = conv.loops;
    auto bytesType = VectorType::get({kQuadLanes * kQuadDepth}, b.getI8Type());
    auto quadType = VectorType::get({kQuadDepth}, b.getI8Type());
    auto plus = [&](OpBuilder &at, Value base, int64_t i) {
      return i == 0 ? base
                    : arith::AddIOp::create(at, loc, base, index(at, loc, i))
                          .getResult();
    };
    int64_t count = tilePanels.size();
    SmallVector<Value> loadMasks(count), laneMasks(count);
    for (auto [p, panel] : llvm::enumerate(tilePanels)) {
      if (!panel.count)
        continue;
      loadMasks[p] = dot->firstQuadsMask(b, loc, panel.count);
      laneMasks[p] = vector::CreateMaskOp::create(
          b, loc, VectorType::get({kQuadLanes}, b.getI1Type()),
          ValueRange{panel.count});
    }
    // The loop values of panel `p`.
    auto panelDims = [&](SmallVector<Value> &dims, const Panel &panel) {
      if (panel.block)
        dims[conv.block] = panel.block;
      dims[loops.vector] = panel.v;
    };
    // Each accumulator's vectors side by side in the loops' values.
    SmallVector<Value> zero = dot->zero(b, loc);
    int64_t parts = zero.size();
    SmallVector<Value> init;
    for (int64_t i = 0; i < tileRows * count; ++i)
      init.append(zero);
    int64_t quadExtent = conv.op.getStaticLoopRanges()[loops.quad];
    // The innermost step: every quad of k, unrolled.
    auto step = [&](OpBuilder &in, ValueRange acc) {
      SmallVector<Value> next(acc.begin(), acc.end());
      for (int64_t k = 0; k < quadExtent; k += kQuadDepth) {
        SmallVector<Value> dims(conv.dims);
        dims[loops.quad] = index(in, loc, k);
        SmallVector<Value> xs, ws;
        for (auto [p, panel] : llvm::enumerate(tilePanels)) {
          panelDims(dims, panel);
          SmallVector<Value> at = indicesOf(in, loc, conv.xMap, dims);
          Value bytes =
              loadMasks[p]
                  ? dot->maskedLoad(in, loc, conv.x, at, loadMasks[p])
                  : vector::LoadOp::create(in, loc, bytesType, conv.x, at)
                        .getResult();
          xs.push_back(dot->operand(in, loc, bytes, /*isSigned=*/false));
        }
        for (int64_t r = 0; r < tileRows; ++r) {
          dims[loops.filters] = plus(in, f, r);
          SmallVector<Value> at = indicesOf(in, loc, conv.wMap, dims);
          Value quad = vector::LoadOp::create(in, loc, quadType, conv.w, at);
          ws.push_back(dot->broadcast(in, loc, quad, /*isSigned=*/true));
        }
        for (int64_t r = 0; r < tileRows; ++r)
          for (int64_t p = 0; p < count; ++p)
            dot->accumulate(in, loc,
                            MutableArrayRef<Value>(next).slice(
                                (r * count + p) * parts, parts),
                            xs[p], ws[r]);
      }
      return next;
    };
    SmallVector<Value> sums = emitReductions(b, loc, conv, 0, init, step);
    SmallVector<Value> dims(conv.dims);
    for (int64_t r = 0; r < tileRows; ++r) {
      dims[loops.filters] = plus(b, f, r);
      for (auto [p, panel] : llvm::enumerate(tilePanels)) {
        panelDims(dims, panel);
        storeSums(b, loc, conv, dims,
                  dot->sums(b, loc,
                            ArrayRef<Value>(sums).slice((r * count + p) * parts,
                                                        parts)),
                  laneMasks[p]);
      }
    }
  }

  /// 16 int32 sums of the outputs at `dims` (the first lanes under `mask`
  /// when it is set) as the output's type, through the epilogue, or added
  /// to the output.
  static void storeSums(OpBuilder &b, Location loc, Conv &conv,
                        ArrayRef<Value> dims, Value sums, Value mask) {
    Type sumType = getElementTypeOrSelf(conv.out.getType());
    auto floatsType = VectorType::get({kQuadLanes}, sumType);
    SmallVector<Value> at = indicesOf(b, loc, conv.outMap, dims);
    Value total = arith::SIToFPOp::create(b, loc, floatsType, sums);
    if (conv.epilogue) {
      Value result = applyEpilogue(b, loc, *conv.epilogue, total, at, mask);
      if (mask)
        vector::MaskedStoreOp::create(b, loc, conv.epilogue->output, at, mask,
                                      result);
      else
        vector::StoreOp::create(b, loc, result, conv.epilogue->output, at);
      return;
    }
    if (!conv.zeroFilled) {
      Value zeroFloats = arith::ConstantOp::create(
          b, loc, floatsType,
          DenseElementsAttr::get(floatsType, b.getFloatAttr(sumType, 0)));
      Value old =
          mask ? vector::MaskedLoadOp::create(b, loc, floatsType, conv.out, at,
                                              mask, zeroFloats)
                     .getResult()
               : vector::LoadOp::create(b, loc, floatsType, conv.out, at)
                     .getResult();
      total = arith::AddFOp::create(b, loc, old, total);
    }
    if (mask)
      vector::MaskedStoreOp::create(b, loc, conv.out, at, mask, total);
    else
      vector::StoreOp::create(b, loc, total, conv.out, at);
  }

  /// `map`'s elements of `memref` for the 16 outputs at `position` (the
  /// accumulator's coordinates): a vector load along the innermost dim
  /// (its first lanes under `mask`), or one element broadcast.
  static Value loadPerPanel(OpBuilder &b, Location loc, Value memref,
                            AffineMap map, ArrayRef<Value> position,
                            Value mask) {
    Type element = getElementTypeOrSelf(memref.getType());
    auto type = VectorType::get({kQuadLanes}, element);
    SmallVector<Value> indices = indicesOf(b, loc, map, position);
    if (!map.isFunctionOfDim(map.getNumDims() - 1)) {
      Value scalar = memref::LoadOp::create(b, loc, memref, indices);
      return vector::BroadcastOp::create(b, loc, type, scalar);
    }
    if (!mask)
      return vector::LoadOp::create(b, loc, type, memref, indices);
    Value zeros = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(element)));
    return vector::MaskedLoadOp::create(b, loc, type, memref, indices, mask,
                                        zeros);
  }

  /// The epilogue's body on the 16 sums at `position`; returns what it
  /// yields.
  static Value applyEpilogue(OpBuilder &b, Location loc, Epilogue &epilogue,
                             Value sums, ArrayRef<Value> position, Value mask) {
    Block &body = epilogue.op.getRegion().front();
    IRMapping mapping;
    for (auto [i, input] : llvm::enumerate(epilogue.inputs))
      mapping.map(
          body.getArgument(i),
          input == epilogue.accumulator
              ? sums
              : loadPerPanel(b, loc, input, epilogue.maps[i], position, mask));
    return cloneBodyOnVectors(b, loc, body, mapping, kQuadLanes);
  }

  /// The reduction loops but k, nested, carrying the accumulators.
  SmallVector<Value> emitReductions(
      OpBuilder &b, Location loc, Conv &conv, size_t level, ValueRange acc,
      function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> step) {
    if (level == conv.loops.reductions.size())
      return step(b, acc);
    int64_t d = conv.loops.reductions[level];
    auto loop = scf::ForOp::create(
        b, loc, index(b, loc, 0), conv.extent[d], index(b, loc, 1), acc,
        [&](OpBuilder &inner, Location, Value iv, ValueRange carried) {
          Value saved = conv.dims[d];
          conv.dims[d] = iv;
          SmallVector<Value> next =
              emitReductions(inner, loc, conv, level + 1, carried, step);
          conv.dims[d] = saved;
          scf::YieldOp::create(inner, loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  }
};

} // namespace
