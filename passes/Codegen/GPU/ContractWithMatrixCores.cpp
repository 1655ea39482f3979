//===- ContractWithMatrixCores.cpp - output blocks on tensor cores / MFMA ===//
//
// kiln-tile-and-distribute gives a contraction with 16-bit operands and a
// float32 accumulator (`extf(a) * extf(b) + acc`, as --precision=f16|bf16
// makes matmuls and convolutions) one output block (multiples of 16 rows
// and columns) per forall iteration, and kiln-configure-gpu-contractions
// records how the block is computed (kiln.contraction: its padded extents,
// warp tiles, stage depth and pipeline). This pass builds it: each 16x16
// subtile of the block computed with matrix instructions run by a warp
// (NVIDIA, 32 lanes) or wavefront (AMD, 64 lanes), the K loop stepping by
// 16, through the WarpMatrixInstructions of `arch` (MatrixInstructions.h):
//
//   nvidia: two nvgpu.mma.sync m16n8k16 (mma.sync.aligned on sm_80+;
//           m16n8k8 TF32 for float32 with tf32=true;
//           NVVM/MmaSyncInstructions.cpp),
//   amd:    one amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16{f16,bf16_1k};
//           ROCDL/MfmaInstructions.cpp).
//
// A 16x16 block is one warp whose lanes load their fragments straight from
// global memory. A larger block is one GPU block of warps, each computing
// its warp tile; per stage of 32 (or 16)
// along K, all threads stage the block's operand slices in workgroup
// memory (pipelined: OutputBlock::emitStagedReductionLoop, with cp.async
// and up to three stages in flight on NVIDIA) and the warps load their
// fragments from there: each operand element is read from global memory
// once per block instead of once per warp and subtile.
//
// On sm_90a a block the config gives to warpgroups is one warpgroup (4
// warps) per 64 rows instead, each running wgmma.mma_async
// m64nNk16 (N the block's columns) with both operands read from the
// cp.async stage buffers, laid out as the instruction's core matrices,
// through matrix descriptors (emitWarpgroupStage); each
// stage leaves its group of instructions running into the next stage
// (the config's groups_in_flight), as CUTLASS's Hopper main loops do.
//
// A convolution is an implicit GEMM: M its output width, N its filters, K
// its input channels; its window loops (kh, kw) run around the K steps and
// the input's `o * stride + k` indices are computed per element.
//
// A block whose rows 16 does not divide (whole 7x7 images: 49 outputs;
// seven 14-pixel rows: 98) computes the next multiple of 16 when that
// wastes at most a quarter (paddedMatrixRows, in the config): the padded
// rows load the
// last valid row's operands and epilogue inputs and store nothing. A K
// that 16 does not divide (MobileNet's 24 input channels) is walked as the
// next multiple of 16 on the same terms (paddedMatrixK), both operands
// reading zero past it.
//
// Every other op of the block (the accumulator's fill, the elementwise
// epilogue: bias, activation, rounding to 16 bits) is elementwise over the
// block, so each lane runs it only at the output elements its accumulator
// fragments hold; no lane reads what another wrote, and temporaries
// private to a lane stay correct.
//
//===----------------------------------------------------------------------===//
#include "MatrixInstructions.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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

int64_t kiln::paddedMatrixRows(int64_t rows) {
  if (rows <= 0)
    return 0;
  int64_t padded = llvm::alignTo(rows, kTile);
  if (padded == rows)
    return rows;
  return padded <= 128 && 4 * (padded - rows) <= padded ? padded : 0;
}

int64_t kiln::paddedMatrixK(int64_t k) {
  if (k <= 0)
    return 0;
  int64_t padded = llvm::alignTo(k, kTile);
  return 4 * (padded - k) <= padded ? padded : 0;
}

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
    Operation *producer = v.getDefiningOp();
    if (producer && isScalarWidening(producer)) {
      ++widened;
      return producer->getOperand(0);
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
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  auto uses = [](AffineMap map, int64_t dim) {
    return map.isFunctionOfDim(dim);
  };
  // A matmul's loops of extent 1 are M or N only when no other is: its
  // result transposed from [1, S, N] to [S, 1, N] (ViT's attention
  // projections through kiln-fold-transposes-into-contractions) has M = S,
  // not its unit loop. (A convolution's M stays its output width.)
  bool matmul = op.getNumReductionLoops() == 1;
  for (bool skipUnitLoops : {matmul, false})
    for (int64_t r = out.getNumResults() - 1; r >= 0; --r) {
      int64_t dim = cast<AffineDimExpr>(out.getResult(r)).getPosition();
      if (skipUnitLoops && ranges[dim] == 1)
        continue;
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
  // A convolution (a window) walks its output height just outside M.
  if (!loops.window.empty() && loops.outM > 0) {
    auto height = dyn_cast<AffineDimExpr>(out.getResult(loops.outM - 1));
    int64_t dim = height ? int64_t(height.getPosition()) : -1;
    if (dim >= 0 && iterators[dim] == utils::IteratorType::parallel &&
        uses(first, dim) && !uses(second, dim)) {
      loops.mOuter = dim;
      loops.outMOuter = loops.outM - 1;
    }
  }
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
    auto config =
        func->getAttrOfType<ContractionConfigAttr>(kiln::attrs::kContraction);
    instructions = warpMatrixInstructions(arch);
    if (!func->hasAttr(kiln::attrs::kKernel) || !config ||
        config.getUnit() == ContractionUnit::Threads || !instructions)
      return;
    std::optional<OutputBlock> block =
        OutputBlock::match(func, /*allowFloat32=*/true);
    if (!block || failed(applyConfig(func, config, *block)))
      return signalPassFailure();
    scf::ForallOp forall = block->forall;
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPointToStart(forall.getBody());
    Location loc = forall.getLoc();
    Value lane = gpu::LaneIdOp::create(rewriter, loc, IntegerAttr());
    // The warp's first output row and column within the block's tile.
    Value warpRow = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value warpCol = warpRow;
    if (staged()) {
      Value warp = arith::DivUIOp::create(
          rewriter, loc,
          gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x),
          arith::ConstantIndexOp::create(rewriter, loc, lanes()));
      auto scaled = [&](Value v, int64_t by) -> Value {
        return arith::MulIOp::create(
            rewriter, loc, v,
            arith::ConstantIndexOp::create(rewriter, loc, by));
      };
      auto warpsAcross =
          arith::ConstantIndexOp::create(rewriter, loc, tileN / warpCols);
      warpRow = scaled(arith::DivUIOp::create(rewriter, loc, warp, warpsAcross),
                       warpRows);
      warpCol = scaled(arith::RemUIOp::create(rewriter, loc, warp, warpsAcross),
                       warpCols);
    }
    SmallVector<OutputBlock::Position> fragmentPositions =
        ownedPositions(rewriter, loc, lane, warpRow, warpCol);
    // 16-bit rows along N: lane pairs swap halves of their fragments after
    // the reduction, so that each lane stores 4 consecutive elements (one
    // 8-byte store, a quad's 32 bytes one sector) instead of two pairs.
    // The ops before the contraction then run where the lane holds its
    // accumulators (a bias broadcast along the rows: ResNet's convolutions)
    // unless every accumulator starts at one value (a fill, or Gemm's alpha
    // form, which starts at zero and adds the fill where it stores).
    bool uniform = block->uniformInitialAccumulators();
    bool exchange = instructions->exchangesLanePairs() &&
                    (uniform || block->prologueWritesOnlyAccumulator()) &&
                    block->storesSixteenBitRowsAlongN();
    SmallVector<OutputBlock::Position> positions =
        exchange
            ? instructions->exchangedPositions(rewriter, loc, lane, warpRow,
                                               warpCol, subtileRows(),
                                               subtileCols())
            : fragmentPositions;
    block->rewrite(
        rewriter, positions,
        [&](OpBuilder &b) {
          emitContraction(b, *block, lane, warpRow, warpCol, fragmentPositions,
                          positions, exchange);
        },
        exchange && !uniform ? ArrayRef(fragmentPositions)
                             : ArrayRef<OutputBlock::Position>());
    func->setAttr(kiln::attrs::kLanes,
                  rewriter.getI64IntegerAttr(lanes() * warps()));
    // One forall iteration per GPU block: its warps share the staged
    // operands and meet at barriers.
    if (staged())
      func->setAttr(kiln::attrs::kCooperative, rewriter.getUnitAttr());
  }

  /// Takes the block's layout from `config` (kiln-configure-gpu-
  /// contractions), padding the block to its extents; fails, naming the
  /// kernel, where the config does not fit the block.
  LogicalResult applyConfig(func::FuncOp func, ContractionConfigAttr config,
                            OutputBlock &block) {
    ArrayRef<int64_t> extents = config.getBlock();
    ArrayRef<int64_t> tile = config.getTile();
    if (extents.size() != 3 || tile.size() != 2 || extents[0] < block.validM ||
        extents[1] < block.validN || extents[2] < block.validK ||
        tile[0] <= 0 || tile[1] <= 0 || extents[0] % tile[0] != 0 ||
        extents[1] % tile[1] != 0 || tile[0] % kSubtile != 0 ||
        tile[1] % kSubtile != 0 || extents[2] % kSubtile != 0)
      return func.emitError()
             << "kiln.contraction " << config << " does not fit the kernel's "
             << block.validM << "x" << block.validN << "x" << block.validK
             << " output block";
    block.padRows(extents[0]);
    block.padColumns(extents[1]);
    block.padK(extents[2]);
    tileM = extents[0];
    tileN = extents[1];
    warpRows = tile[0];
    warpCols = tile[1];
    stageK = config.getStageK();
    stageBuffers = config.getStageBuffers();
    groupsInFlight = config.getGroupsInFlight();
    warpgroups = config.getUnit() == ContractionUnit::Warpgroups;
    block.coreMatrixStages = warpgroups;
    return success();
  }

  /// The warp's matrix instructions (mma.sync, MFMA), by `arch`.
  std::shared_ptr<const WarpMatrixInstructions> instructions;

  int64_t lanes() const { return instructions->lanes(); }

  /// The block's output tile (tileM x tileN, multiples of 16), the part of
  /// it each warp computes (warpRows x warpCols: up to 4 x 4 16x16
  /// subtiles, so that each fragment a lane loads serves several matrix
  /// instructions), the step along K of one shared-memory stage (0: the
  /// single warp of a 16x16 block reads global memory), the cp.async
  /// buffers per operand (0: two filled from registers) and the wgmma
  /// groups a stage leaves running: kiln.contraction's.
  int64_t tileM = 0, tileN = 0, warpRows = 0, warpCols = 0, stageK = 0,
          stageBuffers = 0, groupsInFlight = 0;
  /// Whether the warps form warpgroups running wgmma.
  bool warpgroups = false;

  int64_t warps() const { return (tileM / warpRows) * (tileN / warpCols); }
  int64_t threads() const { return lanes() * warps(); }
  bool staged() const { return stageK > 0; }
  int64_t subtileRows() const { return warpRows / kTile; }
  int64_t subtileCols() const { return warpCols / kTile; }

  /// The (row, column) of the block tile's output elements that this lane's
  /// accumulator fragments hold: subtile by subtile (row-major over the
  /// warp's subtiles, whose first is at (warpRow, warpCol)), each in
  /// fragment order (WarpMatrixInstructions::elementOffsets).
  SmallVector<OutputBlock::Position> ownedPositions(OpBuilder &b, Location loc,
                                                    Value lane, Value warpRow,
                                                    Value warpCol) {
    auto [row, col] = instructions->laneOrigin(b, loc, lane);
    row = arith::AddIOp::create(b, loc, row, warpRow);
    col = arith::AddIOp::create(b, loc, col, warpCol);
    SmallVector<std::pair<int64_t, int64_t>> offsets =
        instructions->elementOffsets();
    SmallVector<OutputBlock::Position> positions;
    for (int64_t si = 0; si < subtileRows(); ++si)
      for (int64_t sj = 0; sj < subtileCols(); ++sj)
        for (auto [dr, dc] : offsets)
          positions.push_back({addIndex(b, loc, row, kTile * si + dr),
                               addIndex(b, loc, col, kTile * sj + dc)});
    return positions;
  }

  /// The matrix instructions of one step along K at `k0` for every
  /// subtile of the warp (WarpMatrixInstructions::emitStep).
  SmallVector<Value> emitMatrixStep(OpBuilder &b, Location loc,
                                    ElementLoader load, Type operandType,
                                    Value lane, Value warpRow, Value warpCol,
                                    Value k0, ValueRange accs,
                                    const FragmentLoader &fragments = {}) {
    SmallVector<Value> rowBases, colBases;
    for (int64_t si = 0; si < subtileRows(); ++si)
      rowBases.push_back(addIndex(b, loc, warpRow, kTile * si));
    for (int64_t sj = 0; sj < subtileCols(); ++sj)
      colBases.push_back(addIndex(b, loc, warpCol, kTile * sj));
    return instructions->emitStep(b, loc, load, operandType, lane, rowBases,
                                  colBases, k0, accs, fragments);
  }

  /// The contraction: accumulators start at `positions` (the fragments'),
  /// and the results are stored at `storePositions`, after
  /// exchangeLanePairs when `exchange`.
  void emitContraction(OpBuilder &b, OutputBlock &block, Value lane,
                       Value warpRow, Value warpCol,
                       ArrayRef<OutputBlock::Position> positions,
                       ArrayRef<OutputBlock::Position> storePositions,
                       bool exchange) {
    Location loc = block.contraction.getLoc();
    Type operandType = block.loops.operandType;
    SmallVector<Value> initial = block.initialAccumulators(b, loc, positions);
    // One accumulator per 4 positions (WarpMatrixInstructions'
    // packAccumulator).
    SmallVector<Value> accumulators;
    for (int64_t s = 0; s < int64_t(positions.size()) / 4; ++s)
      accumulators.push_back(instructions->packAccumulator(
          b, loc, ArrayRef(initial).slice(4 * s, 4)));

    // The instruction's K, and the K of one loop iteration: one
    // instruction step, or one shared-memory stage of several.
    int64_t kStep = instructions->stepK(operandType);
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    ValueRange sums;
    if (staged()) {
      Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
      // ldmatrix or wgmma descriptors read each operand's buffer in its
      // global order (stageKMajor); elsewhere fragments are loaded element
      // by element from [tile][k].
      bool ldmatrix =
          instructions->loadsStageFragments(operandType) && !warpgroups;
      std::array<bool, 2> kMajor =
          stageKMajor(*instructions, block, warpgroups);
      bool pipeline = stageBuffers > 0;
      // Buffers of 32- and 64-byte rows are swizzled instead of padded:
      // the cp.async pipeline's, and the register pipeline's where its
      // stores are whole 16-byte runs (ldmatrix reads either).
      auto swizzles = [&](unsigned input) {
        return pipeline ? block.stageSwizzles(input, stageK, kMajor[input])
                        : ldmatrix && block.registerStagesSwizzle(
                                          input, stageK, kMajor[input]);
      };
      std::array<bool, 2> swizzled = {swizzles(0), swizzles(1)};
      // The first row of this thread's warpgroup's 64.
      Value warpgroupRow =
          warpgroups
              ? arith::MulIOp::create(
                    b, loc,
                    arith::DivUIOp::create(b, loc, thread, c(4 * lanes())),
                    c(64))
                    .getResult()
              : Value();
      auto computeStage = [&](OpBuilder &b, Value sharedA, Value sharedB,
                              ValueRange accs) {
        if (warpgroups)
          return emitWarpgroupStage(b, loc, block, stageK, tileN, kMajor,
                                    sharedA, sharedB, warpgroupRow, accs,
                                    groupsInFlight);
        auto fromStage = [&](unsigned input, Value tileIndex,
                             Value k) -> Value {
          return memref::LoadOp::create(b, loc, input == 0 ? sharedA : sharedB,
                                        kMajor[input]
                                            ? ValueRange{k, tileIndex}
                                            : ValueRange{tileIndex, k});
        };
        FragmentLoader fragments;
        if (ldmatrix)
          fragments = instructions->stageFragmentLoader(
              b, loc, sharedA, sharedB, kMajor, swizzled, lane, operandType);
        SmallVector<Value> next(accs);
        for (int64_t kk = 0; kk < stageK; kk += kStep)
          next = emitMatrixStep(b, loc, fromStage, operandType, lane, warpRow,
                                warpCol, c(kk), next, fragments);
        return next;
      };
      sums = pipeline
                 ? block.emitAsyncStagedReductionLoop(
                       b, loc, stageK, accumulators, thread, threads(), kMajor,
                       stageBuffers, computeStage, groupsInFlight)
                 : block.emitStagedReductionLoop(b, loc, stageK, accumulators,
                                                 thread, threads(), kMajor,
                                                 computeStage, swizzled,
                                                 /*tensorCores=*/true);
    } else {
      sums = block.emitReductionLoop(
          b, loc, kStep, accumulators,
          [&](OpBuilder &b, Value k0, const OutputBlock::WindowValues &window,
              ValueRange accs) {
            auto fromGlobal = [&](unsigned input, Value tileIndex,
                                  Value k) -> Value {
              return block.loadOperand(b, loc, input, tileIndex, k, window);
            };
            return emitMatrixStep(b, loc, fromGlobal, operandType, lane,
                                  warpRow, warpCol, k0, accs);
          });
    }
    SmallVector<Value> elements;
    for (int64_t e = 0; e < int64_t(positions.size()); ++e)
      elements.push_back(
          instructions->accumulatorElement(b, loc, sums[e / 4], e % 4));
    if (exchange)
      elements = instructions->exchangeAccumulators(b, loc, lane, elements);
    block.storeResults(b, loc, storePositions, elements);
  }
};

} // namespace
