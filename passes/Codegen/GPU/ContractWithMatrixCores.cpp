//===- ContractWithMatrixCores.cpp - output blocks on tensor cores / MFMA ===//
//
// kiln-tile-and-distribute gives a contraction with 16-bit operands and a
// float32 accumulator (`extf(a) * extf(b) + acc`, as --precision=f16|bf16
// makes matmuls and convolutions) one output block (multiples of 16 rows
// and columns) per forall iteration. This pass computes each 16x16 subtile
// of the block with matrix instructions run by a warp (NVIDIA, 32 lanes) or
// wavefront (AMD, 64 lanes), the K loop stepping by 16, through the
// WarpMatrixInstructions of `arch` (MatrixInstructions.h):
//
//   nvidia: two nvgpu.mma.sync m16n8k16 (mma.sync.aligned on sm_80+;
//           m16n8k8 TF32 for float32 with tf32=true;
//           NVVM/MmaSyncInstructions.cpp),
//   amd:    one amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16{f16,bf16_1k};
//           ROCDL/MfmaInstructions.cpp).
//
// A 16x16 block is one warp whose lanes load their fragments straight from
// global memory. A larger block is one GPU block of warps, each computing
// up to 32x32 of it (64 along a block side of 128); per step of 32 (or 16)
// along K, all threads stage the block's operand slices in workgroup
// memory (pipelined: OutputBlock::emitStagedReductionLoop, with cp.async
// and up to three stages in flight on NVIDIA) and the warps load their
// fragments from there: each operand element is read from global memory
// once per block instead of once per warp and subtile.
//
// On sm_90a alone (wgmma=true) a staged block whose rows 64 divides is one
// warpgroup (4 warps) per 64 rows instead, each running wgmma.mma_async
// m64nNk16 (N the block's columns) with both operands read from the
// cp.async stage buffers, laid out as the instruction's core matrices,
// through matrix descriptors (chooseWarpgroups, emitWarpgroupStage); each
// stage leaves its group of instructions running into the next stage
// (matrixGroupsInFlight), as CUTLASS's Hopper main loops do.
//
// A convolution is an implicit GEMM: M its output width, N its filters, K
// its input channels; its window loops (kh, kw) run around the K steps and
// the input's `o * stride + k` indices are computed per element.
//
// A block whose rows 16 does not divide (whole 7x7 images: 49 outputs;
// seven 14-pixel rows: 98) computes the next multiple of 16 when that
// wastes at most a quarter (paddedMatrixRows): the padded rows load the
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

#include <tuple>

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
    instructions = warpMatrixInstructions(arch);
    if (!func->hasAttr(kiln::attrs::kKernel) || !instructions)
      return;
    std::optional<OutputBlock> block =
        OutputBlock::match(func, tf32 && instructions->takesTf32());
    if (!block)
      return;
    // Rows that 16 does not divide (a 7x7 map's 49 pixels) are computed
    // as the next multiple of 16 when that wastes little.
    if (int64_t rows = paddedMatrixRows(block->tileM); rows > block->tileM)
      block->padRows(rows);
    // Columns likewise (24 filters as 32; the same rule), and a K that 16
    // does not divide (24 input channels), the operands reading zero past
    // it.
    if (int64_t columns = paddedMatrixRows(block->tileN);
        columns > block->tileN)
      block->padColumns(columns);
    if (int64_t k = paddedMatrixK(block->tileK); k > block->tileK)
      block->padK(k);
    if (!chooseWarpLayout(*block))
      return;
    warpgroups = wgmma && instructions->sharesWarpgroupLayout() &&
                 chooseWarpgroups(*block);
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
    if (staged()) {
      // One forall iteration per GPU block: its warps share the staged
      // operands and meet at barriers.
      func->setAttr(kiln::attrs::kCooperative, rewriter.getUnitAttr());
      func->setAttr(kiln::attrs::kWarpTile,
                    rewriter.getDenseI64ArrayAttr({warpRows, warpCols}));
    }
    std::string instruction =
        warpgroups ? "wgmma m64n" + std::to_string(tileN) + "k16"
                   : instructions->name(block->loops.operandType);
    func->setAttr(kiln::attrs::kMatrixCores,
                  rewriter.getStringAttr(instruction));
  }

  /// Whether the block's warps form warpgroups running wgmma (decided by
  /// chooseWarpgroups).
  bool warpgroups = false;

  /// wgmma groups a stage of a pipeline of `buffers` buffers over `stages`
  /// stages leaves running (wgmma-groups-in-flight): the buffer a stage
  /// refills is then that of `1 +` this many stages before, so it takes
  /// three buffers where buffers are refilled.
  int64_t matrixGroupsInFlight(int64_t buffers, int64_t stages) const {
    return buffers >= 3 || buffers >= stages ? groupsInFlightAsked() : 0;
  }
  /// What wgmma-groups-in-flight asks of a warpgroup block (0 or 1).
  int64_t groupsInFlightAsked() const {
    return warpgroups ? std::clamp<int64_t>(wgmmaGroupsInFlight, 0, 1) : 0;
  }

  /// Makes the block warpgroups for wgmma m64nNk16 when it can be: 16-bit
  /// operands, rows that 64 divides (a warpgroup of 4 warps per 64 rows,
  /// warp w of a warpgroup holding its rows 16w..16w+15 at every column,
  /// which is the mma.sync accumulator layout per 8 columns: the
  /// fragments' positions, epilogue and stores stay those of a warp tile
  /// of 16 x tileN) and stages cp.async copies into core-matrix buffers.
  /// Otherwise leaves the mma.sync layout and returns false.
  bool chooseWarpgroups(OutputBlock &block) {
    if (!isSixteenBitFloat(block.loops.operandType) || tileM % 64 != 0 ||
        tileN % 8 != 0 || tileN > 256)
      return false;
    int64_t mmaRows = warpRows, mmaCols = warpCols;
    warpRows = kTile;
    warpCols = tileN;
    block.coreMatrixStages = true;
    std::array<bool, 2> kMajor = {block.operandContiguousAlongTile(0),
                                  block.operandContiguousAlongTile(1)};
    if (staged() && asyncPipeline(block, kMajor))
      return true;
    warpRows = mmaRows;
    warpCols = mmaCols;
    block.coreMatrixStages = false;
    return false;
  }

  /// The warp's matrix instructions (mma.sync, MFMA), by `arch`.
  std::shared_ptr<const WarpMatrixInstructions> instructions;

  int64_t lanes() const { return instructions->lanes(); }

  /// The block's output tile (tileM x tileN, multiples of 16), the part of
  /// it each warp computes (warpRows x warpCols: up to 4 x 4 16x16
  /// subtiles, so that each fragment a lane loads serves several matrix
  /// instructions), and the step along K of one shared-memory stage.
  int64_t tileM = 0, tileN = 0, warpRows = 0, warpCols = 0, stageK = 0;

  int64_t warps() const { return (tileM / warpRows) * (tileN / warpCols); }
  int64_t threads() const { return lanes() * warps(); }
  /// A single 16x16 tile is one warp that loads its fragments straight from
  /// global memory; larger tiles stage operands through shared memory.
  bool staged() const { return tileM * tileN > kTile * kTile; }
  int64_t subtileRows() const { return warpRows / kTile; }
  int64_t subtileCols() const { return warpCols / kTile; }

  /// Most cp.async stage buffers per operand: three stages in flight while
  /// a fourth is computed, as CUTLASS's Ampere kernels keep.
  static constexpr int64_t kMaxAsyncBuffers = 4;

  /// Stage buffers per operand of a cp.async pipeline in stages of `depth`
  /// along K: one per stage where the reduction's stages fit them (none is
  /// refilled: every stage copied before the loop); else as many as fit
  /// the workgroup memory a block may use, up to kMaxAsyncBuffers; 0 where
  /// not even two fit (chooseWarpLayout estimates with another buffer
  /// layout: 32 along K of a 128x256 block's padded 512-byte rows did not
  /// fit 48 KiB). No buffer more than the stages: it would never be
  /// written (ResNet-50's 1x1 convolutions from 64 channels would declare
  /// a third more shared memory than they use).
  int64_t asyncBuffers(const OutputBlock &block, int64_t depth,
                       std::array<bool, 2> kMajor) const {
    // A wgmma group left running holds one buffer more.
    int64_t held = groupsInFlightAsked();
    int64_t buffers =
        std::min(kMaxAsyncBuffers + held,
                 workgroupMemoryBytes / block.stageBytes(depth, kMajor,
                                                         /*async=*/true));
    int64_t stages = block.stageCount(depth);
    if (stages <= buffers)
      return stages;
    return buffers >= 2 ? buffers : 0;
  }

  /// The stage depth along K (32 or 16, dividing K) and buffers per operand
  /// of a cp.async pipeline that keep the most of K in flight (depth times
  /// the buffers not computed from; on a tie, one whose wgmma groups run
  /// into the next stage, then the deeper stage: fewer barriers), among those
  /// whose copies cp.async takes (stageCopiesAsync). In CUDA's 48 KiB of
  /// static shared memory a 128x128 float16 block fits two buffers of 32
  /// (32 KiB) or four of 16: 48 along K in flight instead of 32; with the
  /// dynamic shared memory of sm_80/sm_90 (163/227 KiB) four of 32 (64
  /// KiB): 96. None when no depth qualifies.
  std::optional<std::pair<int64_t, int64_t>>
  asyncPipeline(OutputBlock &block, std::array<bool, 2> kMajor) const {
    int64_t k = block.tileK;
    std::optional<std::pair<int64_t, int64_t>> best;
    for (int64_t depth : {32, 16}) {
      if (k % depth != 0 ||
          !block.stageCopiesAsync(0, depth, threads(), kMajor[0]) ||
          !block.stageCopiesAsync(1, depth, threads(), kMajor[1]))
        continue;
      int64_t buffers = asyncBuffers(block, depth, kMajor);
      if (buffers == 0)
        continue;
      // K in flight, then a wgmma group left running, then the depth.
      auto merit = [&](int64_t depth, int64_t buffers) {
        int64_t stages = block.stageCount(depth);
        int64_t groups = matrixGroupsInFlight(buffers, stages);
        return std::make_tuple(
            depth * OutputBlock::asyncStagesAhead(stages, buffers, groups),
            groups, depth);
      };
      if (!best || merit(depth, buffers) > merit(best->first, best->second))
        best = {depth, buffers};
    }
    return best;
  }

  /// Sets the tile fields from the contraction's M (padded: padRows), N and
  /// K (padded: padK) extents; false when matrix instructions cannot cover
  /// them (M or N not a multiple of 16, M over 128 or N over 256, K not a
  /// multiple of 16, a stage the block's threads cannot copy in equal
  /// shares, two stages that do not fit the static workgroup memory).
  bool chooseWarpLayout(const OutputBlock &block) {
    tileM = block.tileM;
    tileN = block.tileN;
    int64_t k = block.tileK;
    if (tileM % kTile || tileN % kTile || k % kTile || tileM > 128 ||
        tileN > 256)
      return false;
    // Warps of up to 32x32, 64 along a side of 128 or 256: a 128x128 block
    // is four warps of 64x64 (each A fragment serves four subtiles, each B
    // fragment four), which halves the workgroup-memory reads per matrix
    // instruction of a 32x32 warp; a 128x256 block eight. Sides that 32
    // does not divide (blocks of whole convolution rows: 112 = two rows of
    // 56) take warps of 16.
    auto warpExtent = [](int64_t tile) -> int64_t {
      if (tile >= 128)
        return 64;
      return tile % 32 == 0 ? 32 : kTile;
    };
    warpRows = warpExtent(tileM);
    warpCols = warpExtent(tileN);
    if (!staged()) {
      stageK = k % 32 == 0 ? 32 : kTile;
      return true;
    }
    // Stages of 32 along K, or 16 where 32 does not divide K or two
    // buffers per operand would not fit the workgroup memory (a 128x128
    // float32 block for TF32 in 48 KiB: 72 KiB at 32, 40 KiB at 16).
    // Blocks of 16-row warps (112 rows: 14 warps for 64 columns) too:
    // their stage loads, carried in registers, fit since each thread's
    // loads share one address (OutputBlock::stagePlace, stageOrigin; at
    // 32 a warp runs 8 mma.sync per stage instead of 4 for the same
    // barrier and loop).
    for (int64_t depth : {32, 16}) {
      if (k % depth != 0 ||
          2 * block.stageBytes(depth, {false, false}) > workgroupMemoryBytes)
        continue;
      stageK = depth;
      // A stage slice that the threads do not divide (112 rows: seven
      // warps) leaves the last copy guarded (loadStageShare).
      return true;
    }
    return false;
  }

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
    Type f32 = b.getF32Type();
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
      // Fragments that one warp-wide load takes from a stage either way
      // round (ldmatrix, .trans) let each operand's buffer keep the order
      // it has in global memory, so the copies store whole runs.
      // Elsewhere fragments are loaded element by element from [tile][k].
      bool ldmatrix =
          instructions->loadsStageFragments(operandType) && !warpgroups;
      // wgmma reads either order too (imm-trans).
      std::array<bool, 2> kMajor = {
          (ldmatrix || warpgroups) && block.operandContiguousAlongTile(0),
          (ldmatrix || warpgroups) && block.operandContiguousAlongTile(1)};
      // cp.async where every copy is a whole 16-byte run (sm_80+, every
      // chip the cuda target takes); it may choose another stage depth.
      std::optional<std::pair<int64_t, int64_t>> pipeline;
      if (ldmatrix || warpgroups)
        pipeline = asyncPipeline(block, kMajor);
      if (pipeline)
        stageK = pipeline->first;
      int64_t inFlight =
          pipeline
              ? matrixGroupsInFlight(pipeline->second, block.stageCount(stageK))
              : 0;
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
                                    inFlight);
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
                       pipeline->second, computeStage, inFlight)
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
