//===- ContractInt8Quads.cpp - uint8 x int8 einsums with vpdpbusd ---------===//
//
// kiln-pack-int8-matmul-weights computes a matmul of uint8 activations by
// int8 weights as the einsum `...mqt,bqwt->...mbw` over A [..., M, Q, 4]
// and B [N/16, Q, 16, 4]: each 64-byte quad B[b, q] holds, for 16 outputs,
// 4 weights along K. Lowered as it is, the einsum is a scalar loop that
// widens both bytes to float32 for every product. AVX-512 VNNI's
// `vpdpbusd` multiplies 64 uint8 by 64 int8 values and adds each lane's
// four products to its int32 accumulator: with A's 4 bytes of row m
// broadcast to every lane, one instruction adds sum_t A[m, q, t] *
// B[b, q, w, t] to the 16 sums of row m, panel b. This pass computes the
// einsum as register tiles of those:
//
//   for each tile of R rows x V panels:
//     acc[r][v] = 0                                  (int32 x 16)
//     for q < Q:
//       bq[v] = B[b + v, q]                          (64 bytes)
//       acc[r][v] = vpdpbusd(acc[r][v], broadcast(A[m + r, q]), bq[v])
//     out[m + r, b + v] += sitofp(acc[r][v])
//
// Rows and panels left over get tiles of one row and one panel. The
// extents may be dynamic (a workgroup's share of M or of the panels).
//
// On a CPU with AMX-INT8 (`matrix-tiles`), B's layout is also that of an
// AMX tile: 16 quads of a panel are 16 rows of 64 bytes. Blocks of 16 rows
// of A by two panels then take `tdpbusd` on tiles, 16 x 16 sums per
// instruction:
//
//   for each block of 16 rows x 2 panels:
//     c[v] = 0                                       (tile, 16 x 16 int32)
//     for every 64 bytes of K (unrolled):
//       a = A[m..m+15, k..k+63]                      (tile, row stride K)
//       c[v] = tdpbusd(c[v], a, B[b + v, k/4..k/4+15])
//     out[m + r, b + v] += sitofp(c[v][r])           (through a scratch)
//
// and the rows past the last whole block take the vector tiles.
//
//===----------------------------------------------------------------------===//
#include "Int8QuadBody.h"
#include "QuadDotProducts.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace kiln {
#define GEN_PASS_DEF_CONTRACTINT8QUADS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The loops of a matching einsum: positions among the generic's loops.
struct QuadEinsum {
  linalg::GenericOp op;
  SmallVector<int64_t> batch; ///< loops of A's and the output's leading dims
  Value a, b, out;            ///< A [..., M, Q, 4] (ui8), B, out (f32 or f64)
};

/// `x` is the body's widening of block argument `arg` to `sumType`:
/// arith.uitofp of a uint8 (through the lowering's
/// unrealized_conversion_cast to i8) when `isUnsigned`, else arith.sitofp
/// of an i8.
bool widensArgument(Value x, BlockArgument arg, bool isUnsigned, Type sumType) {
  Operation *def = x.getDefiningOp();
  if (!def || x.getType() != sumType)
    return false;
  if (!isUnsigned) {
    auto widen = dyn_cast<arith::SIToFPOp>(def);
    return widen && widen.getIn() == arg && arg.getType().isSignlessInteger(8);
  }
  auto widen = dyn_cast<arith::UIToFPOp>(def);
  if (!widen)
    return false;
  auto cast = widen.getIn().getDefiningOp<UnrealizedConversionCastOp>();
  return cast && cast->getNumOperands() == 1 && cast.getOperand(0) == arg &&
         arg.getType().isUnsignedInteger(8) &&
         widen.getIn().getType().isSignlessInteger(8);
}

} // namespace

bool kiln::isUint8ByInt8Body(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body.getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || (add.getLhs() != out && add.getRhs() != out))
    return false;
  // float32 sums, or float64 where exact integer sums may pass 2^24.
  Type sumType = out.getType();
  if (!sumType.isF32() && !sumType.isF64())
    return false;
  BlockArgument a = body.getArgument(0), b = body.getArgument(1);
  return (widensArgument(mul.getLhs(), a, true, sumType) &&
          widensArgument(mul.getRhs(), b, false, sumType)) ||
         (widensArgument(mul.getRhs(), a, true, sumType) &&
          widensArgument(mul.getLhs(), b, false, sumType));
}

void kiln::forEachTile(OpBuilder &b, Location loc, Value extent, int64_t size,
                       function_ref<void(OpBuilder &, Value, int64_t)> body) {
  Value step = arith::ConstantIndexOp::create(b, loc, size);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rest = arith::RemUIOp::create(b, loc, extent, step);
  Value whole = arith::SubIOp::create(b, loc, extent, rest);
  scf::ForOp::create(b, loc, zero, whole, step, ValueRange{},
                     [&](OpBuilder &inner, Location, Value iv, ValueRange) {
                       body(inner, iv, size);
                       scf::YieldOp::create(inner, loc);
                     });
  if (size > 1)
    scf::ForOp::create(b, loc, whole, extent, one, ValueRange{},
                       [&](OpBuilder &inner, Location, Value iv, ValueRange) {
                         body(inner, iv, 1);
                         scf::YieldOp::create(inner, loc);
                       });
}

bool kiln::hasContiguousInnerDims(Value memref, int64_t count) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= type.getRank() - count; --d) {
    if (strides[d] != expected || type.isDynamicDim(d))
      return false;
    expected *= type.getDimSize(d);
  }
  return true;
}

bool kiln::isInt8QuadEinsum(linalg::LinalgOp linalgOp) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isUint8ByInt8Body(op))
    return false;
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!a.isProjectedPermutation() || !b.isProjectedPermutation() ||
      !out.isProjectedPermutation() || a.getNumResults() < 3 ||
      b.getNumResults() != 4 || out.getNumResults() != a.getNumResults())
    return false;
  auto dim = [](AffineMap map, int64_t i) {
    return cast<AffineDimExpr>(map.getResult(i)).getPosition();
  };
  int64_t rank = a.getNumResults();
  unsigned m = dim(a, rank - 3), q = dim(a, rank - 2), t = dim(a, rank - 1);
  if (dim(b, 1) != q || dim(b, 3) != t || dim(out, rank - 3) != m ||
      dim(out, rank - 2) != dim(b, 0) || dim(out, rank - 1) != dim(b, 2))
    return false;
  for (int64_t i = 0; i < rank - 3; ++i)
    if (dim(a, i) != dim(out, i))
      return false;
  return true;
}

namespace {

std::optional<QuadEinsum> matchQuadEinsum(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || !isInt8QuadEinsum(op))
    return std::nullopt;
  QuadEinsum match{
      op, {}, op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0]};
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  int64_t rank = a.getNumResults();
  for (int64_t i = 0; i < rank - 3; ++i)
    match.batch.push_back(cast<AffineDimExpr>(a.getResult(i)).getPosition());
  auto aType = cast<MemRefType>(match.a.getType());
  auto bType = cast<MemRefType>(match.b.getType());
  auto outType = cast<MemRefType>(match.out.getType());
  if (aType.getShape().back() != kQuadDepth ||
      bType.getDimSize(2) != kQuadLanes || bType.getDimSize(3) != kQuadDepth ||
      outType.getShape().back() != kQuadLanes || aType.isDynamicDim(rank - 2) ||
      bType.isDynamicDim(1) ||
      aType.getDimSize(rank - 2) != bType.getDimSize(1) ||
      !hasContiguousInnerDims(match.a, 1) ||
      !hasContiguousInnerDims(match.b, 2) ||
      !hasContiguousInnerDims(match.out, 1))
    return std::nullopt;
  return match;
}

struct ContractInt8QuadsPass
    : public kiln::impl::ContractInt8QuadsBase<ContractInt8QuadsPass> {
  using Base::Base;

  /// The dot products of `instructions`, parsed once per function.
  std::optional<QuadDotProducts> dot;

  /// Views of the einsum's operands the tiles index: A as signless i8 and
  /// B as [N/16, Q, 64].
  struct Operands {
    Value a, b, out;
    Value aRows;              ///< A as [..., M, K] for AMX tiles, or null
    Value scratch;            ///< 16 x 16 int32 for a tile's sums, with aRows
    SmallVector<Value> batch; ///< the batch loops' induction variables
  };

  /// The rows of an AMX block, and the bytes of K a tile step takes.
  static constexpr int64_t kTileRows = kAmxTileRows, kTileBytes = kAmxTileBytes;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel) || rows < 1 || panels < 1)
      return;
    std::optional<QuadInstructions> instructionSet =
        parseQuadInstructions(instructions);
    if (!instructionSet) {
      func.emitError() << "kiln-contract-int8-quads: unknown instructions '"
                       << instructions << "'";
      return signalPassFailure();
    }
    dot.emplace(*instructionSet);
    SmallVector<QuadEinsum> found;
    func.walk([&](linalg::GenericOp op) {
      if (std::optional<QuadEinsum> match = matchQuadEinsum(op))
        found.push_back(*match);
    });
    for (QuadEinsum &match : found) {
      OpBuilder builder(match.op);
      emitEinsum(builder, match);
      match.op->erase();
    }
  }

  void emitEinsum(OpBuilder &builder, QuadEinsum &match) {
    Location loc = match.op.getLoc();
    auto aType = cast<MemRefType>(match.a.getType());
    Operands operands;
    // The lowering's uint8 memref as the signless bytes LLVM sees.
    operands.a = UnrealizedConversionCastOp::create(
                     builder, loc,
                     MemRefType::get(aType.getShape(), builder.getI8Type(),
                                     aType.getLayout()),
                     match.a)
                     .getResult(0);
    operands.b = memref::CollapseShapeOp::create(
        builder, loc, match.b,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    operands.out = match.out;
    int64_t rank = aType.getRank();
    int64_t depth = aType.getDimSize(rank - 2) * kQuadDepth;
    if (matrixTiles && depth % kTileBytes == 0 && depth <= maxTileDepth &&
        hasContiguousInnerDims(match.a, 2)) {
      SmallVector<ReassociationIndices> rowsOfK;
      for (int64_t d = 0; d < rank - 2; ++d)
        rowsOfK.push_back({d});
      rowsOfK.push_back({rank - 2, rank - 1});
      operands.aRows =
          memref::CollapseShapeOp::create(builder, loc, operands.a, rowsOfK);
      // One scratch per kernel, at its entry: an alloca in the loops would
      // grow the stack every iteration.
      OpBuilder entry = OpBuilder::atBlockBegin(
          &match.op->getParentOfType<func::FuncOp>().getBody().front());
      operands.scratch = memref::AllocaOp::create(
          entry, loc,
          MemRefType::get({kTileRows, kQuadLanes}, builder.getI32Type()));
    }
    // One loop per batch dim around the tiles.
    std::function<void(OpBuilder &, int64_t)> nest = [&](OpBuilder &b,
                                                         int64_t d) {
      if (d == rank - 3) {
        emitTiles(b, loc, operands);
        return;
      }
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value extent = memref::DimOp::create(b, loc, match.out, d);
      scf::ForOp::create(b, loc, zero, extent, one, ValueRange{},
                         [&](OpBuilder &inner, Location, Value iv, ValueRange) {
                           operands.batch.push_back(iv);
                           nest(inner, d + 1);
                           operands.batch.pop_back();
                           scf::YieldOp::create(inner, loc);
                         });
    };
    nest(builder, 0);
  }

  /// Tiles of rows x panels over all of M and the panels, then of one row
  /// and of one panel for the remainders.
  void emitTiles(OpBuilder &b, Location loc, Operands &operands) {
    int64_t rank = cast<MemRefType>(operands.out.getType()).getRank();
    Value mExtent = memref::DimOp::create(b, loc, operands.out, rank - 3);
    Value panelExtent = memref::DimOp::create(b, loc, operands.out, rank - 2);
    if (operands.aRows) {
      emitMatrixBlocks(b, loc, operands, mExtent, panelExtent);
      return;
    }
    forEachTile(b, loc, mExtent, rows,
                [&](OpBuilder &rowBuilder, Value m, int64_t tileRows) {
                  forEachTile(rowBuilder, loc, panelExtent, panels,
                              [&](OpBuilder &panelBuilder, Value p,
                                  int64_t tilePanels) {
                                emitTile(panelBuilder, loc, operands, m,
                                         tileRows, p, tilePanels);
                              });
                });
  }

  /// Blocks of 16 rows on AMX tiles, two panels at a time (one for an odd
  /// last panel), then each row left over on vector tiles.
  void emitMatrixBlocks(OpBuilder &b, Location loc, const Operands &operands,
                        Value mExtent, Value panelExtent) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value block = arith::ConstantIndexOp::create(b, loc, kTileRows);
    Value whole = arith::SubIOp::create(
        b, loc, mExtent, arith::RemUIOp::create(b, loc, mExtent, block));
    scf::ForOp::create(
        b, loc, zero, whole, block, ValueRange{},
        [&](OpBuilder &rowBuilder, Location, Value m, ValueRange) {
          forEachTile(rowBuilder, loc, panelExtent, 2,
                      [&](OpBuilder &panelBuilder, Value p, int64_t count) {
                        emitMatrixBlock(panelBuilder, loc, operands, m, p,
                                        count);
                      });
          scf::YieldOp::create(rowBuilder, loc);
        });
    scf::ForOp::create(
        b, loc, whole, mExtent, one, ValueRange{},
        [&](OpBuilder &rowBuilder, Location, Value m, ValueRange) {
          forEachTile(rowBuilder, loc, panelExtent, panels,
                      [&](OpBuilder &panelBuilder, Value p, int64_t count) {
                        emitTile(panelBuilder, loc, operands, m, 1, p, count);
                      });
          scf::YieldOp::create(rowBuilder, loc);
        });
  }

  /// 16 rows from `m` by `count` panels from `p` on AMX tiles.
  void emitMatrixBlock(OpBuilder &b, Location loc, const Operands &operands,
                       Value m, Value p, int64_t count) {
    auto index = [&](int64_t i) {
      return arith::ConstantIndexOp::create(b, loc, i).getResult();
    };
    auto plus = [&](Value base, int64_t i) {
      return i == 0 ? base
                    : arith::AddIOp::create(b, loc, base, index(i)).getResult();
    };
    auto bytesTile = amx::TileType::get({kTileRows, kTileBytes}, b.getI8Type());
    auto sumsTile = amx::TileType::get({kTileRows, kQuadLanes}, b.getI32Type());
    int64_t depth =
        cast<MemRefType>(operands.aRows.getType()).getShape().back();
    SmallVector<Value> sums;
    for (int64_t v = 0; v < count; ++v)
      sums.push_back(amx::TileZeroOp::create(b, loc, sumsTile));
    for (int64_t k = 0; k < depth; k += kTileBytes) {
      SmallVector<Value> at(operands.batch);
      at.append({m, index(k)});
      Value rows =
          amx::TileLoadOp::create(b, loc, bytesTile, operands.aRows, at);
      for (int64_t v = 0; v < count; ++v) {
        Value quads = amx::TileLoadOp::create(
            b, loc, bytesTile, operands.b,
            ValueRange{plus(p, v), index(k / kQuadDepth), index(0)});
        sums[v] = amx::TileMulIOp::create(b, loc, sumsTile, rows, quads,
                                          sums[v], /*isZextLhs=*/true,
                                          /*isZextRhs=*/false);
      }
    }
    auto accType = VectorType::get({kQuadLanes}, b.getI32Type());
    auto floatsType = VectorType::get(
        {kQuadLanes}, getElementTypeOrSelf(operands.out.getType()));
    for (int64_t v = 0; v < count; ++v) {
      amx::TileStoreOp::create(b, loc, operands.scratch,
                               ValueRange{index(0), index(0)}, sums[v]);
      for (int64_t r = 0; r < kTileRows; ++r) {
        Value lane = vector::LoadOp::create(b, loc, accType, operands.scratch,
                                            ValueRange{index(r), index(0)});
        SmallVector<Value> at(operands.batch);
        at.append({plus(m, r), plus(p, v), index(0)});
        Value old =
            vector::LoadOp::create(b, loc, floatsType, operands.out, at);
        Value total = arith::AddFOp::create(
            b, loc, old, arith::SIToFPOp::create(b, loc, floatsType, lane));
        vector::StoreOp::create(b, loc, total, operands.out, at);
      }
    }
  }

  /// One tile: `tileRows` rows from `m` by `tilePanels` panels from `p`.
  void emitTile(OpBuilder &b, Location loc, const Operands &operands, Value m,
                int64_t tileRows, Value p, int64_t tilePanels) {
    auto bytesType = VectorType::get({kQuadLanes * kQuadDepth}, b.getI8Type());
    auto quadType = VectorType::get({kQuadDepth}, b.getI8Type());
    auto floatsType = VectorType::get(
        {kQuadLanes}, getElementTypeOrSelf(operands.out.getType()));
    auto index = [&](int64_t i) {
      return arith::ConstantIndexOp::create(b, loc, i).getResult();
    };
    auto plus = [&](OpBuilder &at, Value base, int64_t i) {
      return i == 0
                 ? base
                 : arith::AddIOp::create(at, loc, base, index(i)).getResult();
    };
    // Each accumulator's vectors side by side in the loop's values.
    SmallVector<Value> zero = dot->zero(b, loc);
    int64_t parts = zero.size();
    SmallVector<Value> init;
    for (int64_t i = 0; i < tileRows * tilePanels; ++i)
      init.append(zero);
    int64_t quads = cast<MemRefType>(operands.b.getType()).getDimSize(1);
    SmallVector<Value> rowIndex, panelIndex;
    for (int64_t r = 0; r < tileRows; ++r)
      rowIndex.push_back(plus(b, m, r));
    for (int64_t v = 0; v < tilePanels; ++v)
      panelIndex.push_back(plus(b, p, v));
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(quads), index(1), init,
        [&](OpBuilder &in, Location, Value q, ValueRange acc) {
          SmallVector<Value> weights;
          for (int64_t v = 0; v < tilePanels; ++v)
            weights.push_back(dot->operand(
                in, loc,
                vector::LoadOp::create(in, loc, bytesType, operands.b,
                                       ValueRange{panelIndex[v], q, index(0)}),
                /*isSigned=*/true));
          SmallVector<Value> next(acc.begin(), acc.end());
          for (int64_t r = 0; r < tileRows; ++r) {
            SmallVector<Value> at(operands.batch);
            at.append({rowIndex[r], q, index(0)});
            Value row = dot->broadcast(
                in, loc,
                vector::LoadOp::create(in, loc, quadType, operands.a, at),
                /*isSigned=*/false);
            for (int64_t v = 0; v < tilePanels; ++v)
              dot->accumulate(in, loc,
                              MutableArrayRef<Value>(next).slice(
                                  (r * tilePanels + v) * parts, parts),
                              row, weights[v]);
          }
          scf::YieldOp::create(in, loc, next);
        });
    SmallVector<Value> results(loop.getResults());
    for (int64_t r = 0; r < tileRows; ++r) {
      for (int64_t v = 0; v < tilePanels; ++v) {
        SmallVector<Value> at(operands.batch);
        at.append({rowIndex[r], panelIndex[v], index(0)});
        Value old =
            vector::LoadOp::create(b, loc, floatsType, operands.out, at);
        Value sums = arith::SIToFPOp::create(
            b, loc, floatsType,
            dot->sums(b, loc,
                      ArrayRef<Value>(results).slice(
                          (r * tilePanels + v) * parts, parts)));
        Value total = arith::AddFOp::create(b, loc, old, sums);
        vector::StoreOp::create(b, loc, total, operands.out, at);
      }
    }
  }
};

} // namespace
