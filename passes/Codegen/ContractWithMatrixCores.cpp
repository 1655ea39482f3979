//===- ContractWithMatrixCores.cpp - 16x16 tiles on tensor cores / MFMA ---===//
//
// kiln-tile-and-distribute gives a contraction with 16-bit operands and a
// float32 accumulator (`extf(a) * extf(b) + acc`, as --precision=f16|bf16
// makes matmuls and convolutions) one 16x16 output tile per forall
// iteration. This pass hands each tile to one warp (NVIDIA, 32 lanes) or
// wavefront (AMD, 64 lanes): the K loop steps by 16 and each step is one
// matrix instruction over fragments the lanes load from global memory,
//
//   nvidia: two nvgpu.mma.sync m16n8k16 (mma.sync.aligned on sm_80+;
//           m16n8k8 TF32 for float32 with tf32=true),
//   amd:    one amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16{f16,bf16_1k}).
//
// A convolution is an implicit GEMM: M its output width, N its filters, K
// its input channels; its window loops (kh, kw) run around the K steps and
// the input's `o * stride + k` indices are computed per fragment element.
//
// Every other op of the tile (the accumulator's fill, the elementwise
// epilogue: bias, activation, rounding to 16 bits) is elementwise over the
// 16x16 tile, so each lane runs it only at the output elements its
// accumulator fragment holds; no lane reads what another wrote, and
// temporaries private to a lane stay correct.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_CONTRACTWITHMATRIXCORES
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kTile = 16;

bool isSixteenBitFloat(Type t) { return t.isF16() || t.isBF16(); }

} // namespace

bool kiln::isMultiplyAdd(linalg::GenericOp op, Value &scale) {
  Block &body = op.getRegion().front();
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if (add.getLhs() != acc && add.getRhs() != acc)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  scale = Value();
  for (auto [term, other] : {std::pair(mul.getLhs(), mul.getRhs()),
                             std::pair(mul.getRhs(), mul.getLhs())}) {
    auto inner = term.getDefiningOp<arith::MulFOp>();
    if (inner && other.getParentBlock() != &body) {
      scale = other;
      mul = inner;
      break;
    }
  }
  unsigned widened = 0;
  auto input = [&](Value v) {
    if (auto extf = v.getDefiningOp<arith::ExtFOp>()) {
      ++widened;
      return extf.getIn();
    }
    return v;
  };
  llvm::SmallPtrSet<Value, 2> ins = {input(mul.getLhs()), input(mul.getRhs())};
  unsigned expected = 3 + widened + (scale ? 1 : 0); // mul, add, yield
  return body.getOperations().size() == expected &&
         ins.contains(body.getArgument(0)) && ins.contains(body.getArgument(1));
}

/// Matches a contraction matrix instructions can compute: 16-bit inputs
/// (or float32 ones when `allowFloat32`, for TF32) into float32, an output
/// indexed by plain loops, M the innermost output loop only the first input
/// uses, N the innermost one only the second uses, K a reduction loop both
/// inputs index directly (a matmul's K, a convolution's input channels);
/// any other reduction loops (a convolution's window) become `window`.
/// Static loop ranges.
std::optional<MatrixContractionLoops>
kiln::matchMatrixContraction(linalg::LinalgOp linalgOp, bool allowFloat32) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() < 1)
    return std::nullopt;
  MatrixContractionLoops loops;
  if (!isMultiplyAdd(op, loops.scale))
    return std::nullopt;
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!(isSixteenBitFloat(a) || (allowFloat32 && a.isF32())) || a != b ||
      !c.isF32())
    return std::nullopt;
  AffineMap first = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap second = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!out.isProjectedPermutation() || out.getNumResults() < 2)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto uses = [](AffineMap map, int64_t dim) { return map.isFunctionOfDim(dim); };
  for (int64_t r = out.getNumResults() - 1; r >= 0; --r) {
    int64_t dim = cast<AffineDimExpr>(out.getResult(r)).getPosition();
    if (loops.m < 0 && uses(first, dim) && !uses(second, dim)) {
      loops.m = dim;
      loops.outM = r;
    }
    if (loops.n < 0 && uses(second, dim) && !uses(first, dim)) {
      loops.n = dim;
      loops.outN = r;
    }
  }
  auto direct = [](AffineMap map, int64_t dim) {
    return llvm::any_of(map.getResults(), [&](AffineExpr e) {
      auto d = dyn_cast<AffineDimExpr>(e);
      return d && int64_t(d.getPosition()) == dim;
    });
  };
  for (auto [i, type] : llvm::enumerate(iterators)) {
    if (type != utils::IteratorType::reduction)
      continue;
    if (loops.k < 0 && direct(first, i) && direct(second, i))
      loops.k = i;
    else
      loops.window.push_back(i);
  }
  if (loops.m < 0 || loops.n < 0 || loops.k < 0)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  loops.ranges = ranges;
  loops.operandType = a;
  return loops;
}

namespace {

struct ContractWithMatrixCoresPass
    : public kiln::impl::ContractWithMatrixCoresBase<
          ContractWithMatrixCoresPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("kiln.kernel") || (arch != "nvidia" && arch != "amd"))
      return;
    SmallVector<scf::ForallOp> loops(func.getBody().getOps<scf::ForallOp>());
    if (loops.size() != 1)
      return;
    scf::ForallOp forall = loops.front();
    SmallVector<linalg::LinalgOp> ops;
    linalg::GenericOp contraction;
    std::optional<MatrixContractionLoops> loopsOf;
    for (Operation &op : forall.getBody()->without_terminator()) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (!linalgOp.hasPureBufferSemantics())
          return;
        if (auto match = matchMatrixContraction(linalgOp, tf32 && arch == "nvidia")) {
          if (contraction)
            return;
          contraction = cast<linalg::GenericOp>(op);
          loopsOf = match;
        } else if (!isTileElementwise(linalgOp)) {
          return;
        }
        ops.push_back(linalgOp);
        continue;
      }
      if (op.getNumRegions() > 0 ||
          !(isMemoryEffectFree(&op) ||
            isa<memref::AllocaOp, memref::AllocOp, memref::DeallocOp,
                memref::GetGlobalOp>(op)))
        return;
    }
    if (!contraction || loopsOf->ranges[loopsOf->m] != kTile ||
        loopsOf->ranges[loopsOf->n] != kTile ||
        loopsOf->ranges[loopsOf->k] % kTile != 0)
      return;
    for (auto [i, extent] : llvm::enumerate(loopsOf->ranges))
      if (int64_t(i) != loopsOf->m && int64_t(i) != loopsOf->n &&
          int64_t(i) != loopsOf->k && !llvm::is_contained(loopsOf->window, i) &&
          extent != 1)
        return;
    // Every other op writes a buffer shaped like the output tile, whose M
    // and N dims are at the contraction's positions.
    outM = loopsOf->outM;
    outN = loopsOf->outN;
    int64_t outRank =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0))
            .getNumResults();
    for (linalg::LinalgOp op : ops)
      if (op.getOperation() != contraction.getOperation() &&
          !tileLoopsOf(op, outRank))
        return;

    IRRewriter rewriter(&getContext());
    stored.clear();
    rewriter.setInsertionPointToStart(forall.getBody());
    Location loc = forall.getLoc();
    Value lane = gpu::LaneIdOp::create(rewriter, loc, IntegerAttr());
    SmallVector<std::pair<Value, Value>> positions =
        ownedPositions(rewriter, loc, lane);
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (op.getOperation() == contraction.getOperation())
        emitContraction(rewriter, contraction, *loopsOf, lane, positions);
      else
        emitAtPositions(rewriter, op, positions);
      rewriter.eraseOp(op);
    }
    func->setAttr("kiln.lanes", rewriter.getI64IntegerAttr(lanes()));
    StringRef instruction = arch != "nvidia" ? "mfma 16x16x16"
                            : loopsOf->operandType.isF32()
                                ? "mma.sync m16n8k8 tf32"
                                : "mma.sync m16n8k16";
    func->setAttr("kiln.matrix_cores", rewriter.getStringAttr(instruction));
  }

  int64_t lanes() const { return arch == "nvidia" ? 32 : 64; }

  /// What this lane last stored at (buffer, element of its positions).
  DenseMap<std::pair<Value, int64_t>, Value> stored;

  /// All loops parallel, every loop of extent 1 except two of extent 16,
  /// every operand indexed by plain loops or constants.
  static bool isTileElementwise(linalg::LinalgOp op) {
    if (op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1)
      return false;
    int64_t tileLoops = 0;
    for (int64_t extent : op.getStaticLoopRanges()) {
      if (extent == kTile)
        ++tileLoops;
      else if (extent != 1)
        return false;
    }
    if (tileLoops != 2)
      return false;
    for (OpOperand &operand : op->getOpOperands())
      for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults())
        if (!isa<AffineConstantExpr, AffineDimExpr>(expr))
          return false;
    return true;
  }

  /// The loops of an elementwise tile op that walk the tile's rows (M) and
  /// columns (N): those its output indexes at the contraction's M and N
  /// positions; none when its output is not shaped like the tile.
  std::optional<std::pair<int64_t, int64_t>>
  tileLoopsOf(linalg::LinalgOp op, int64_t outRank) const {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (int64_t(map.getNumResults()) != outRank)
      return std::nullopt;
    auto row = dyn_cast<AffineDimExpr>(map.getResult(outM));
    auto col = dyn_cast<AffineDimExpr>(map.getResult(outN));
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (!row || !col || ranges[row.getPosition()] != kTile ||
        ranges[col.getPosition()] != kTile)
      return std::nullopt;
    return std::pair<int64_t, int64_t>(row.getPosition(), col.getPosition());
  }

  /// Positions of M and N among the output tile's dims.
  int64_t outM = -1, outN = -1;

  /// The (row, column) of the tile's output elements that this lane's
  /// accumulator fragment holds, in fragment order.
  ///   nvidia, m16n8k16 twice (columns 0-7, 8-15): g = lane / 4,
  ///     t = lane % 4; element [h][i][j] is (g + 8i, 8h + 2t + j).
  ///   amd, 16x16x16: element [i] is (4 * (lane / 16) + i, lane % 16).
  SmallVector<std::pair<Value, Value>>
  ownedPositions(OpBuilder &b, Location loc, Value lane) {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value x, int64_t v) -> Value {
      return v == 0 ? x : arith::AddIOp::create(b, loc, x, c(v)).getResult();
    };
    SmallVector<std::pair<Value, Value>> positions;
    if (arch == "nvidia") {
      Value g = arith::DivUIOp::create(b, loc, lane, c(4));
      Value t = arith::RemUIOp::create(b, loc, lane, c(4));
      Value t2 = arith::MulIOp::create(b, loc, t, c(2));
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            positions.push_back({add(g, 8 * i), add(t2, 8 * h + j)});
      return positions;
    }
    Value quad = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(4));
    Value column = arith::RemUIOp::create(b, loc, lane, c(16));
    for (int64_t i = 0; i < 4; ++i)
      positions.push_back({add(quad, i), column});
    return positions;
  }

  /// Indices of an operand whose map is `map`, with loop `row` at `r`,
  /// loop `col` at `c` (when >= 0) and every other loop at 0.
  static SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
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

  /// True when `map` indexes a buffer shaped like the output tile, loop
  /// `row` at the M position and `col` at the N position, every other
  /// result a unit loop or a constant: each position then names the same
  /// element of every such buffer.
  bool indexesTileElement(linalg::LinalgOp op, AffineMap map, int64_t row,
                          int64_t col) const {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (int64_t(map.getNumResults()) <= std::max(outM, outN))
      return false;
    for (auto [r, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      int64_t want = int64_t(r) == outM ? row : int64_t(r) == outN ? col : -1;
      if (want >= 0 ? (!dim || int64_t(dim.getPosition()) != want)
                    : (dim && ranges[dim.getPosition()] != 1))
        return false;
    }
    return true;
  }

  /// Loads element `e` of the lane's positions from `buffer`, or reuses
  /// the value this lane stored there (temporaries private to the lane then
  /// need no memory round trip: stores that are never loaded are dead).
  Value loadElement(OpBuilder &b, Location loc, Value buffer,
                    ArrayRef<Value> indices, int64_t e, bool tileElement) {
    if (tileElement)
      if (Value known = stored.lookup({buffer, e}))
        return known;
    return memref::LoadOp::create(b, loc, buffer, indices);
  }

  void storeElement(OpBuilder &b, Location loc, Value value, Value buffer,
                    ArrayRef<Value> indices, int64_t e, bool tileElement) {
    memref::StoreOp::create(b, loc, value, buffer, indices);
    if (tileElement)
      stored[{buffer, e}] = value;
  }

  /// Runs the elementwise `op` at each of `positions` only.
  void emitAtPositions(OpBuilder &b, linalg::LinalgOp op,
                       ArrayRef<std::pair<Value, Value>> positions) {
    Location loc = op.getLoc();
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    auto [rowLoop, colLoop] = *tileLoopsOf(op, outMap.getNumResults());
    SmallVector<int64_t> tileLoops = {rowLoop, colLoop};
    Block &body = op->getRegion(0).front();
    for (auto [e, position] : llvm::enumerate(positions)) {
      auto [row, col] = position;
      SmallVector<std::pair<int64_t, Value>> at = {{tileLoops[0], row},
                                                   {tileLoops[1], col}};
      IRMapping mapping;
      for (OpOperand &operand : op->getOpOperands()) {
        BlockArgument arg = op.getMatchingBlockArgument(&operand);
        if (arg.use_empty())
          continue;
        Value v = operand.get();
        AffineMap map = op.getMatchingIndexingMap(&operand);
        if (isa<MemRefType>(v.getType()))
          v = loadElement(
              b, loc, v, indicesAt(b, loc, map, at), e,
              indexesTileElement(op, map, tileLoops[0], tileLoops[1]));
        mapping.map(arg, v);
      }
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          int64_t dim = index.getDim();
          mapping.map(index.getResult(),
                      dim == tileLoops[0]   ? row
                      : dim == tileLoops[1] ? col
                                            : Value(arith::ConstantIndexOp::create(
                                                  b, loc, 0)));
          continue;
        }
        b.clone(inner, mapping);
      }
      for (auto [init, value] :
           llvm::zip(op.getDpsInitsMutable(), body.getTerminator()->getOperands())) {
        AffineMap map = op.getMatchingIndexingMap(&init);
        storeElement(b, loc, mapping.lookupOrDefault(value), init.get(),
                     indicesAt(b, loc, map, at), e,
                     indexesTileElement(op, map, tileLoops[0], tileLoops[1]));
      }
    }
  }

  /// Loads the fragment elements at (row, k) of the first input or (k, col)
  /// of the second, into a vector of `shape`.
  /// `window` holds the values of the window loops (a convolution's
  /// kernel position) for this step.
  static Value loadFragment(OpBuilder &b, Location loc, linalg::GenericOp op,
                            unsigned input, const MatrixContractionLoops &loops,
                            ArrayRef<std::pair<int64_t, Value>> window,
                            ArrayRef<std::pair<Value, Value>> elements,
                            ArrayRef<int64_t> shape) {
    OpOperand *operand = op.getDpsInputOperand(input);
    AffineMap map = op.getMatchingIndexingMap(operand);
    int64_t tileLoop = input == 0 ? loops.m : loops.n;
    SmallVector<Value> values;
    for (auto [tileIndex, k] : elements) {
      SmallVector<std::pair<int64_t, Value>> at = {{tileLoop, tileIndex},
                                                   {loops.k, k}};
      llvm::append_range(at, window);
      values.push_back(memref::LoadOp::create(b, loc, operand->get(),
                                              indicesAt(b, loc, map, at)));
    }
    auto type = VectorType::get(shape, loops.operandType);
    if (shape.size() == 1)
      return vector::FromElementsOp::create(b, loc, type, values);
    Value fragment = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    auto rowType = VectorType::get({shape[1]}, loops.operandType);
    for (int64_t r = 0; r < shape[0]; ++r) {
      Value row = vector::FromElementsOp::create(
          b, loc, rowType,
          ArrayRef(values).slice(r * shape[1], shape[1]));
      fragment = vector::InsertOp::create(b, loc, row, fragment, r);
    }
    return fragment;
  }

  /// One m16n8k16 mma.sync: A vector<4x2xT>, B vector<2x2xT>, C and the
  /// result vector<2x2xf32>. nvgpu.mma.sync covers float16; bfloat16 goes
  /// to nvvm.mma.sync directly, its pairs packed in 32-bit registers.
  static Value mmaSync(OpBuilder &b, Location loc, Value a, Value bFragment,
                       Value acc) {
    Type element = cast<VectorType>(a.getType()).getElementType();
    if (element.isF16())
      return nvgpu::MmaSyncOp::create(b, loc, a, bFragment, acc,
                                      ArrayRef<int64_t>{16, 8, 16});
    auto packed = [&](Value fragment, int64_t rows) {
      SmallVector<Value> registers;
      for (int64_t r = 0; r < rows; ++r) {
        Value pair = vector::ExtractOp::create(b, loc, fragment,
                                               ArrayRef<int64_t>{r});
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), pair);
        registers.push_back(
            vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
      }
      return registers;
    };
    SmallVector<Value> c;
    for (int64_t i = 0; i < 4; ++i)
      c.push_back(vector::ExtractOp::create(
          b, loc, acc, ArrayRef<int64_t>{i / 2, i % 2}));
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, packed(a, 4), packed(bFragment, 2), c,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({2, 2}, f32), elements);
  }

  void emitContraction(OpBuilder &b, linalg::GenericOp op,
                       const MatrixContractionLoops &loops, Value lane,
                       ArrayRef<std::pair<Value, Value>> positions) {
    Location loc = op.getLoc();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value x, int64_t v) -> Value {
      return v == 0 ? x : arith::AddIOp::create(b, loc, x, c(v)).getResult();
    };
    OpOperand &init = op.getDpsInitsMutable()[0];
    AffineMap outMap = op.getMatchingIndexingMap(&init);
    auto outIndices = [&](Value row, Value col) {
      return indicesAt(b, loc, outMap, {{loops.m, row}, {loops.n, col}});
    };
    Type f32 = b.getF32Type();
    bool nvidia = arch == "nvidia";
    // Accumulators start from the output's current values (the fill), or
    // from zero when the products are scaled: the sum is scaled once, then
    // added to the output.
    bool tileElement = indexesTileElement(op, outMap, loops.m, loops.n);
    SmallVector<Value> initial;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    for (auto [e, position] : llvm::enumerate(positions))
      initial.push_back(
          loops.scale ? zero
                      : loadElement(b, loc, init.get(),
                                    outIndices(position.first, position.second),
                                    e, tileElement));
    SmallVector<Value> accumulators;
    if (nvidia) {
      auto accType = VectorType::get({2, 2}, f32);
      for (int64_t h = 0; h < 2; ++h) {
        Value acc = arith::ConstantOp::create(b, loc, b.getZeroAttr(accType));
        for (int64_t i = 0; i < 2; ++i)
          acc = vector::InsertOp::create(
              b, loc,
              vector::FromElementsOp::create(
                  b, loc, VectorType::get({2}, f32),
                  ArrayRef(initial).slice(4 * h + 2 * i, 2)),
              acc, i);
        accumulators.push_back(acc);
      }
    } else {
      accumulators.push_back(vector::FromElementsOp::create(
          b, loc, VectorType::get({4}, f32), initial));
    }

    bool isTf32 = loops.operandType.isF32();
    int64_t kStep = isTf32 ? 8 : kTile;
    // One loop over the window positions (a convolution's kernel; none for
    // a matmul) times the steps along K, carrying the accumulators.
    int64_t kSteps = loops.ranges[loops.k] / kStep, windowCount = 1;
    for (int64_t w : loops.window)
      windowCount *= loops.ranges[w];
    scf::ForOp loop =
        loops.window.empty()
            ? scf::ForOp::create(b, loc, c(0), c(loops.ranges[loops.k]),
                                 c(kStep), accumulators)
            : scf::ForOp::create(b, loc, c(0), c(windowCount * kSteps), c(1),
                                 accumulators);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = loop.getInductionVar();
    SmallVector<std::pair<int64_t, Value>> window;
    if (!loops.window.empty()) {
      Value step = loop.getInductionVar();
      k0 = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, step, c(kSteps)), c(kStep));
      Value rest = arith::DivUIOp::create(b, loc, step, c(kSteps));
      for (int64_t i = int64_t(loops.window.size()) - 1; i >= 0; --i) {
        int64_t extent = loops.ranges[loops.window[i]];
        window.push_back({loops.window[i],
                          i == 0 ? rest
                                 : arith::RemUIOp::create(b, loc, rest, c(extent))
                                       .getResult()});
        if (i > 0)
          rest = arith::DivUIOp::create(b, loc, rest, c(extent));
      }
    }
    SmallVector<Value> next;
    if (nvidia && isTf32) {
      // m16n8k8 TF32 (PTX ISA): A [r] at (g + 8 (r % 2), k0 + t + 4 (r / 2)),
      // B [r] at (k0 + t + 4r, 8h + g); operands are float32 registers the
      // tensor cores read as TF32.
      Value g = arith::DivUIOp::create(b, loc, lane, c(4));
      Value kt = arith::AddIOp::create(
          b, loc, k0, arith::RemUIOp::create(b, loc, lane, c(4)));
      SmallVector<std::pair<Value, Value>> aElements;
      for (int64_t r = 0; r < 4; ++r)
        aElements.push_back({add(g, 8 * (r % 2)), add(kt, 4 * (r / 2))});
      Value a = loadFragment(b, loc, op, 0, loops, window, aElements, {4, 1});
      for (int64_t h = 0; h < 2; ++h) {
        SmallVector<std::pair<Value, Value>> bElements;
        for (int64_t r = 0; r < 2; ++r)
          bElements.push_back({add(g, 8 * h), add(kt, 4 * r)});
        Value bFragment = loadFragment(b, loc, op, 1, loops, window, bElements, {2, 1});
        next.push_back(nvgpu::MmaSyncOp::create(
            b, loc, a, bFragment, loop.getRegionIterArgs()[h],
            ArrayRef<int64_t>{16, 8, 8}, /*tf32Enabled=*/true));
      }
    } else if (nvidia) {
      Value g = arith::DivUIOp::create(b, loc, lane, c(4));
      Value t2 = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, c(4)), c(2));
      Value kt = arith::AddIOp::create(b, loc, k0, t2);
      // A (16x16): [r][j] at (g + 8 (r % 2), k0 + 2t + 8 (r / 2) + j).
      SmallVector<std::pair<Value, Value>> aElements;
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t j = 0; j < 2; ++j)
          aElements.push_back({add(g, 8 * (r % 2)), add(kt, 8 * (r / 2) + j)});
      Value a = loadFragment(b, loc, op, 0, loops, window, aElements, {4, 2});
      for (int64_t h = 0; h < 2; ++h) {
        // B (16x8, columns 8h..8h+7): [r][j] at (k0 + 2t + 8r + j, 8h + g).
        SmallVector<std::pair<Value, Value>> bElements;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t j = 0; j < 2; ++j)
            bElements.push_back({add(g, 8 * h), add(kt, 8 * r + j)});
        Value bFragment = loadFragment(b, loc, op, 1, loops, window, bElements, {2, 2});
        next.push_back(
            mmaSync(b, loc, a, bFragment, loop.getRegionIterArgs()[h]));
      }
    } else {
      // A: [i] at (lane % 16, k0 + 4 (lane / 16) + i); B: [i] at
      // (k0 + 4 (lane / 16) + i, lane % 16).
      Value column = arith::RemUIOp::create(b, loc, lane, c(16));
      Value kq = arith::AddIOp::create(
          b, loc, k0,
          arith::MulIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(4)));
      SmallVector<std::pair<Value, Value>> elements;
      for (int64_t i = 0; i < 4; ++i)
        elements.push_back({column, add(kq, i)});
      Value a = loadFragment(b, loc, op, 0, loops, window, elements, {4});
      Value bFragment = loadFragment(b, loc, op, 1, loops, window, elements, {4});
      auto i32 = [&](int64_t v) { return b.getI32IntegerAttr(v); };
      next.push_back(amdgpu::MFMAOp::create(
          b, loc, VectorType::get({4}, f32), i32(16), i32(16), i32(16), i32(1),
          a, bFragment, loop.getRegionIterArgs()[0]));
    }
    scf::YieldOp::create(b, loc, next);
    b.setInsertionPointAfter(loop);
    for (auto [e, position] : llvm::enumerate(positions)) {
      Value element;
      if (nvidia)
        element = vector::ExtractOp::create(
            b, loc, loop.getResult(e / 4),
            ArrayRef<int64_t>{int64_t(e % 4) / 2, int64_t(e % 2)});
      else
        element = vector::ExtractOp::create(b, loc, loop.getResult(0),
                                            ArrayRef<int64_t>{int64_t(e)});
      SmallVector<Value> at = outIndices(position.first, position.second);
      if (loops.scale)
        element = arith::AddFOp::create(
            b, loc, loadElement(b, loc, init.get(), at, e, tileElement),
            arith::MulFOp::create(b, loc, element, loops.scale));
      storeElement(b, loc, element, init.get(), at, e, tileElement);
    }
  }
};

} // namespace
