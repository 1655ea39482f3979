//===- ContractWithMatrixCores.cpp - output blocks on tensor cores / MFMA ===//
//
// kiln-tile-and-distribute gives a contraction with 16-bit operands and a
// float32 accumulator (`extf(a) * extf(b) + acc`, as --precision=f16|bf16
// makes matmuls and convolutions) one output block (multiples of 16 rows
// and columns) per forall iteration. This pass computes each 16x16 subtile
// of the block with matrix instructions run by a warp (NVIDIA, 32 lanes) or
// wavefront (AMD, 64 lanes), the K loop stepping by 16:
//
//   nvidia: two nvgpu.mma.sync m16n8k16 (mma.sync.aligned on sm_80+;
//           m16n8k8 TF32 for float32 with tf32=true),
//   amd:    one amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16{f16,bf16_1k}).
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
#include "OutputBlock.h"

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
    if (!func->hasAttr(kiln::attrs::kKernel) ||
        (arch != "nvidia" && arch != "amd"))
      return;
    std::optional<OutputBlock> block =
        OutputBlock::match(func, tf32 && arch == "nvidia");
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
    warpgroups = wgmma && arch == "nvidia" && chooseWarpgroups(*block);
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
    bool exchange = arch == "nvidia" &&
                    (uniform || block->prologueWritesOnlyAccumulator()) &&
                    block->storesSixteenBitRowsAlongN();
    SmallVector<OutputBlock::Position> positions =
        exchange ? exchangedPositions(rewriter, loc, lane, warpRow, warpCol)
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
        arch != "nvidia" ? "mfma 16x16x16"
        : warpgroups     ? "wgmma m64n" + std::to_string(tileN) + "k16"
        : block->loops.operandType.isF32() ? "mma.sync m16n8k8 tf32"
                                           : "mma.sync m16n8k16";
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

  /// The matrix descriptor (PTX ISA, "Matrix Descriptor Format") of the
  /// core matrices of the stage buffer `shared` from (`tileIndex`, `k`):
  /// the start address's bits 4-17, the leading (K) and stride (M or N)
  /// byte offsets over 16, no swizzle. The allocation's address (shared
  /// memory is one window under 256 KiB, so adding 16-byte units to bits
  /// 4-17 never carries out of them) is the loop-invariant part; a
  /// stage's and a core matrix's offsets are added in 16-byte units.
  Value matrixDescriptor(OpBuilder &b, Location loc, OutputBlock &block,
                         unsigned input, bool kMajor, Value shared,
                         Value tileIndex, Value k) {
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value allocation = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared));
    OutputBlock::CoreMatrixStrides strides =
        block.coreMatrixStrides(input, stageK, kMajor);
    int64_t fields =
        ((strides.leading >> 4) << 16) | ((strides.stride >> 4) << 32);
    Value base = arith::OrIOp::create(
        b, loc,
        arith::ShRUIOp::create(
            b, loc, arith::AndIOp::create(b, loc, allocation, i64(0x3FFFF)),
            i64(4)),
        i64(fields));
    // The view's offset (a stage of the set) and the core matrix's 16-byte
    // row, in 16-byte units.
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, shared);
    int64_t perUnit =
        16 / (block.loops.operandType.getIntOrFloatBitWidth() / 8);
    Value units = arith::AddIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, metadata.getOffset(), index(perUnit)),
        block.coreMatrixRow(b, loc, input, stageK, kMajor, tileIndex, k));
    return arith::AddIOp::create(
        b, loc, base,
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), units));
  }

  /// One stage of warpgroup matrix instructions: the accumulators (two
  /// vector<2x2xf32> per 16 columns, ownedPositions' order, which is
  /// wgmma's register order d[4 (column / 8) + 2 i + j]) go into one
  /// m64nNk16 per 16 along K of the stage, issued as one group after a
  /// wgmma.fence; the stage ends when all but the newest `inFlight` groups
  /// are done (its own, or the previous stage's: the pipeline refills a
  /// buffer only after a barrier that follows the wait for its group).
  SmallVector<Value>
  emitWarpgroupStage(OpBuilder &b, Location loc, OutputBlock &block,
                     std::array<bool, 2> kMajor, Value sharedA, Value sharedB,
                     Value warpgroupRow, ValueRange accs, int64_t inFlight) {
    Type f32 = b.getF32Type();
    int64_t registers = 4 * int64_t(accs.size());
    auto structType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(registers, f32));
    Value d = LLVM::UndefOp::create(b, loc, structType);
    for (int64_t e = 0; e < registers; ++e)
      d = LLVM::InsertValueOp::create(
          b, loc, d,
          vector::ExtractOp::create(b, loc, accs[e / 4],
                                    ArrayRef<int64_t>{(e % 4) / 2, e % 2}),
          e);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    NVVM::WGMMATypes operand = block.loops.operandType.isF16()
                                   ? NVVM::WGMMATypes::f16
                                   : NVVM::WGMMATypes::bf16;
    // K-major operands are A "row" and B "col" (imm-trans 0); MN-major
    // ones the other way round (imm-trans 1).
    auto layout = [&](unsigned input) {
      bool kContiguous = !kMajor[input];
      return (input == 0) == kContiguous ? NVVM::MMALayout::row
                                         : NVVM::MMALayout::col;
    };
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (int64_t kk = 0; kk < stageK; kk += kTile) {
      Value k = arith::ConstantIndexOp::create(b, loc, kk);
      Value descriptorA = matrixDescriptor(b, loc, block, 0, kMajor[0], sharedA,
                                           warpgroupRow, k);
      Value descriptorB =
          matrixDescriptor(b, loc, block, 1, kMajor[1], sharedB, zero, k);
      d = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, structType, d, descriptorA, descriptorB,
          NVVM::MMAShapeAttr::get(b.getContext(), 64, tileN, kTile),
          NVVM::WGMMATypesAttr::get(b.getContext(), operand),
          NVVM::WGMMATypesAttr::get(b.getContext(), operand),
          NVVM::WGMMATypesAttr::get(b.getContext(), NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(b.getContext(),
                                       NVVM::WGMMAScaleOut::one),
          NVVM::WGMMAScaleInAttr::get(b.getContext(), NVVM::WGMMAScaleIn::one),
          NVVM::WGMMAScaleInAttr::get(b.getContext(), NVVM::WGMMAScaleIn::one),
          NVVM::MMALayoutAttr::get(b.getContext(), layout(0)),
          NVVM::MMALayoutAttr::get(b.getContext(), layout(1)),
          NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, inFlight);
    SmallVector<Value> next;
    for (int64_t e = 0; e < registers; e += 4) {
      SmallVector<Value> elements;
      for (int64_t i = 0; i < 4; ++i)
        elements.push_back(LLVM::ExtractValueOp::create(b, loc, d, e + i));
      next.push_back(vector::FromElementsOp::create(
          b, loc, VectorType::get({2, 2}, f32), elements));
    }
    return next;
  }

  int64_t lanes() const { return arch == "nvidia" ? 32 : 64; }

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
  /// fragment order.
  ///   nvidia, m16n8k16 twice (columns 0-7, 8-15): g = lane / 4,
  ///     t = lane % 4; element [h][i][j] is (g + 8i, 8h + 2t + j).
  ///   amd, 16x16x16: element [i] is (4 * (lane / 16) + i, lane % 16).
  SmallVector<OutputBlock::Position> ownedPositions(OpBuilder &b, Location loc,
                                                    Value lane, Value warpRow,
                                                    Value warpCol) {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value x, int64_t v) -> Value {
      return v == 0 ? x : arith::AddIOp::create(b, loc, x, c(v)).getResult();
    };
    Value row, col;
    SmallVector<std::pair<int64_t, int64_t>> offsets;
    if (arch == "nvidia") {
      row = arith::DivUIOp::create(b, loc, lane, c(4));
      col = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, c(4)), c(2));
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            offsets.push_back({8 * i, 8 * h + j});
    } else {
      row = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(4));
      col = arith::RemUIOp::create(b, loc, lane, c(16));
      for (int64_t i = 0; i < 4; ++i)
        offsets.push_back({i, 0});
    }
    row = arith::AddIOp::create(b, loc, row, warpRow);
    col = arith::AddIOp::create(b, loc, col, warpCol);
    SmallVector<OutputBlock::Position> positions;
    for (int64_t si = 0; si < subtileRows(); ++si)
      for (int64_t sj = 0; sj < subtileCols(); ++sj)
        for (auto [dr, dc] : offsets)
          positions.push_back(
              {add(row, kTile * si + dr), add(col, kTile * sj + dc)});
    return positions;
  }

  /// nvidia: where this lane's elements are after exchangeLanePairs, per
  /// subtile: element [i][q] at (g + 8i, base + q) with g = lane / 4,
  /// t = lane % 4 and base 0, 8, 4, 12 for t = 0..3 (even t: its own
  /// columns 2t, 2t+1 of the first 8-column half and its odd partner's;
  /// odd t: its even partner's columns of the second half and its own).
  SmallVector<OutputBlock::Position>
  exchangedPositions(OpBuilder &b, Location loc, Value lane, Value warpRow,
                     Value warpCol) {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value row = arith::AddIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lane, c(4)), warpRow);
    Value t = arith::RemUIOp::create(b, loc, lane, c(4));
    Value base = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, t, c(2)),
                              c(8)),
        arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, t, c(2)),
                              c(4)));
    Value col = arith::AddIOp::create(b, loc, base, warpCol);
    SmallVector<OutputBlock::Position> positions;
    for (int64_t si = 0; si < subtileRows(); ++si)
      for (int64_t sj = 0; sj < subtileCols(); ++sj)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t q = 0; q < 4; ++q)
            positions.push_back(
                {arith::AddIOp::create(b, loc, row, c(kTile * si + 8 * i)),
                 arith::AddIOp::create(b, loc, col, c(kTile * sj + q))});
    return positions;
  }

  /// The accumulator elements (ownedPositions' order) rearranged into
  /// exchangedPositions' order: per subtile row, an even lane sends its
  /// pair of the second 8-column half to its odd partner (lane ^ 1) and
  /// receives the partner's pair of the first half; the odd lane the other
  /// way round. One xor shuffle per element pair.
  static SmallVector<Value> exchangeLanePairs(OpBuilder &b, Location loc,
                                              Value lane,
                                              ArrayRef<Value> elements) {
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(b, loc, lane,
                               arith::ConstantIndexOp::create(b, loc, 2)),
        arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> exchanged(elements.size());
    for (int64_t s = 0; s < int64_t(elements.size()) / 8; ++s)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          Value first = elements[8 * s + 2 * i + j];
          Value second = elements[8 * s + 4 + 2 * i + j];
          Value sent = arith::SelectOp::create(b, loc, odd, first, second);
          Value received =
              gpu::ShuffleOp::create(b, loc, sent, 1, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
          exchanged[8 * s + 4 * i + j] =
              arith::SelectOp::create(b, loc, odd, received, first);
          exchanged[8 * s + 4 * i + 2 + j] =
              arith::SelectOp::create(b, loc, odd, second, received);
        }
    return exchanged;
  }

  /// Loads an operand element by its place in the block's tile: input 0
  /// (A) at (row, k), input 1 (B) at (column, k).
  using ElementLoader =
      llvm::function_ref<Value(unsigned input, Value tileIndex, Value k)>;

  /// Loads the fragments of a 16x16 piece of an operand staged in
  /// workgroup memory ([tile index][k], k contiguous) for m16n8k16 with one
  /// warp-wide `ldmatrix.x4`: input 0 (A) rows `base`..+15 at k `k0`..+15,
  /// as its vector<4x2xT> fragment; input 1 (B) columns `base`..+15, as
  /// the two vector<2x2xT> fragments of its 8-column halves. Null where
  /// fragments are loaded element by element (from global memory, TF32).
  using FragmentLoader =
      std::function<SmallVector<Value>(unsigned input, Value base, Value k0)>;

  /// A FragmentLoader over the stage buffers `sharedA`, `sharedB` ([k][tile
  /// index] where `kMajor`, else [tile index][k]). Lane l gives the address
  /// of row l % 8 of matrix l / 8; ldmatrix hands lane l the pair at row
  /// l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of each matrix (with
  /// .trans: rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4), which is
  /// the mma.sync operand layout when the matrices are, in the operand's
  /// terms: A: rows 0-7 and 8-15 at k 0-7, then both at k 8-15 (a0a1,
  /// a2a3, a4a5, a6a7); B: columns 0-7 at k 0-7 and 8-15 (b0b1, b2b3 of the
  /// first half), then columns 8-15 likewise. A [tile][k] buffer's rows are
  /// the operand's rows (A) or columns (B): plain loads; a [k][tile] one's
  /// rows are k: .trans.
  /// `swizzled[i]`: operand i's stage buffers are swizzled
  /// (OutputBlock::stageSwizzles).
  static FragmentLoader ldmatrixLoader(OpBuilder &b, Location loc,
                                       Value sharedA, Value sharedB,
                                       std::array<bool, 2> kMajor,
                                       std::array<bool, 2> swizzled, Value lane,
                                       Type operandType) {
    return [&b, loc, sharedA, sharedB, kMajor, swizzled, lane, operandType](
               unsigned input, Value base, Value k0) -> SmallVector<Value> {
      auto c = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      Value matrix = arith::DivUIOp::create(b, loc, lane, c(8));
      Value rowInMatrix = arith::RemUIOp::create(b, loc, lane, c(8));
      // Which of the two 8-row groups (A: rows, B: columns) and which 8
      // along k this lane's matrix is.
      Value low = arith::RemUIOp::create(b, loc, matrix, c(2));
      Value high = arith::DivUIOp::create(b, loc, matrix, c(2));
      Value tileGroup = input == 0 ? low : high;
      Value kGroup = input == 0 ? high : low;
      Value tileStart = arith::AddIOp::create(
          b, loc, base, arith::MulIOp::create(b, loc, tileGroup, c(8)));
      Value kStart = arith::AddIOp::create(
          b, loc, k0, arith::MulIOp::create(b, loc, kGroup, c(8)));
      bool transpose = kMajor[input];
      SmallVector<Value> address =
          transpose ? SmallVector<Value>{arith::AddIOp::create(b, loc, kStart,
                                                               rowInMatrix),
                                         tileStart}
                    : SmallVector<Value>{
                          arith::AddIOp::create(b, loc, tileStart, rowInMatrix),
                          kStart};
      Value shared = input == 0 ? sharedA : sharedB;
      if (swizzled[input])
        address[1] =
            OutputBlock::swizzledColumn(b, loc, shared, address[0], address[1]);
      auto fragmentType = VectorType::get({4, 2}, operandType);
      Value fragment = nvgpu::LdMatrixOp::create(
          b, loc, fragmentType, shared, address, transpose, /*numTiles=*/4);
      if (input == 0)
        return {fragment};
      // Registers 0-1 and 2-3, row by row (the NVVM lowering takes 1-D
      // extracts and inserts, not strided slices of 2-D vectors).
      auto halfType = VectorType::get({2, 2}, operandType);
      SmallVector<Value> halves;
      for (int64_t h = 0; h < 2; ++h) {
        Value half = arith::ConstantOp::create(b, loc, b.getZeroAttr(halfType));
        for (int64_t r = 0; r < 2; ++r)
          half = vector::InsertOp::create(
              b, loc,
              vector::ExtractOp::create(b, loc, fragment,
                                        ArrayRef<int64_t>{2 * h + r}),
              half, ArrayRef<int64_t>{r});
        halves.push_back(half);
      }
      return halves;
    };
  }

  /// The elements of `input` at `elements` (tile index, k) as a vector of
  /// `shape` (row-major).
  static Value loadFragment(OpBuilder &b, Location loc, ElementLoader load,
                            unsigned input, Type operandType,
                            ArrayRef<std::pair<Value, Value>> elements,
                            ArrayRef<int64_t> shape) {
    SmallVector<Value> values;
    for (auto [tileIndex, k] : elements)
      values.push_back(load(input, tileIndex, k));
    auto type = VectorType::get(shape, operandType);
    if (shape.size() == 1)
      return vector::FromElementsOp::create(b, loc, type, values);
    Value fragment = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    auto rowType = VectorType::get({shape[1]}, operandType);
    for (int64_t r = 0; r < shape[0]; ++r) {
      Value row = vector::FromElementsOp::create(
          b, loc, rowType, ArrayRef(values).slice(r * shape[1], shape[1]));
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
        Value pair =
            vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{r});
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), pair);
        registers.push_back(
            vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
      }
      return registers;
    };
    SmallVector<Value> c;
    for (int64_t i = 0; i < 4; ++i)
      c.push_back(vector::ExtractOp::create(b, loc, acc,
                                            ArrayRef<int64_t>{i / 2, i % 2}));
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
    return vector::FromElementsOp::create(b, loc, VectorType::get({2, 2}, f32),
                                          elements);
  }

  /// The matrix instructions of one step along K (16; 8 for TF32) at `k0`
  /// for every subtile of the warp. Each subtile row's A fragment and each
  /// subtile column's B fragments are loaded once and serve every
  /// instruction that needs them. `accs` and the result: nvidia, two per
  /// subtile (columns 0-7, 8-15); amd, one; subtiles row-major.
  SmallVector<Value> emitMatrixStep(OpBuilder &b, Location loc,
                                    ElementLoader load, Type operandType,
                                    Value lane, Value warpRow, Value warpCol,
                                    Value k0, ValueRange accs,
                                    const FragmentLoader &fragments = {}) {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value x, int64_t v) -> Value {
      return v == 0 ? x : arith::AddIOp::create(b, loc, x, c(v)).getResult();
    };
    SmallVector<Value> rowBases, colBases;
    for (int64_t si = 0; si < subtileRows(); ++si)
      rowBases.push_back(add(warpRow, kTile * si));
    for (int64_t sj = 0; sj < subtileCols(); ++sj)
      colBases.push_back(add(warpCol, kTile * sj));
    SmallVector<Value> aFragments;
    SmallVector<SmallVector<Value, 2>> bFragments;
    SmallVector<Value> next;
    if (arch == "nvidia") {
      // PTX ISA fragments, g = lane / 4, t = lane % 4, j < pairs:
      //   m16n8k16 (pairs = 2, stride 8): A [r][j] at (g + 8 (r % 2),
      //     k0 + 2t + 8 (r / 2) + j); B [r][j] (columns 8h..8h+7) at
      //     (k0 + 2t + 8r + j, 8h + g).
      //   m16n8k8 TF32 (pairs = 1, stride 4): A [r] at (g + 8 (r % 2),
      //     k0 + t + 4 (r / 2)); B [r] at (k0 + t + 4r, 8h + g); operands
      //     are float32 registers the tensor cores read as TF32.
      // ldmatrix loads them so; elements loaded one by one take K
      // permuted (below).
      bool isTf32 = operandType.isF32();
      int64_t pairs = isTf32 ? 1 : 2;
      if (fragments && !isTf32) {
        for (Value rowBase : rowBases)
          aFragments.push_back(fragments(0, rowBase, k0).front());
        for (Value colBase : colBases) {
          SmallVector<Value> halves = fragments(1, colBase, k0);
          bFragments.emplace_back(halves.begin(), halves.end());
        }
      } else {
        // Elements loaded one by one (from global memory, or a TF32 stage)
        // take K in another order within the step, the same for A and B
        // (the products' sum does not change): the fragment's second half
        // along K, which the ISA puts `stride` further, comes right after
        // the first, so that a lane's elements of a row are 2 * pairs
        // contiguous K (8 bytes: one load where NVPTX joins them, and a
        // warp's rows whole 32-byte sectors instead of half ones).
        Value g = arith::DivUIOp::create(b, loc, lane, c(4));
        Value kt = arith::AddIOp::create(
            b, loc, k0,
            arith::MulIOp::create(b, loc,
                                  arith::RemUIOp::create(b, loc, lane, c(4)),
                                  c(2 * pairs)));
        for (Value rowBase : rowBases) {
          Value row = arith::AddIOp::create(b, loc, rowBase, g);
          SmallVector<std::pair<Value, Value>> elements;
          for (int64_t r = 0; r < 4; ++r)
            for (int64_t j = 0; j < pairs; ++j)
              elements.push_back(
                  {add(row, 8 * (r % 2)), add(kt, pairs * (r / 2) + j)});
          aFragments.push_back(
              loadFragment(b, loc, load, 0, operandType, elements, {4, pairs}));
        }
        for (Value colBase : colBases) {
          Value col = arith::AddIOp::create(b, loc, colBase, g);
          bFragments.emplace_back();
          for (int64_t h = 0; h < 2; ++h) {
            SmallVector<std::pair<Value, Value>> elements;
            for (int64_t r = 0; r < 2; ++r)
              for (int64_t j = 0; j < pairs; ++j)
                elements.push_back({add(col, 8 * h), add(kt, pairs * r + j)});
            bFragments.back().push_back(loadFragment(
                b, loc, load, 1, operandType, elements, {2, pairs}));
          }
        }
      }
      for (auto [si, a] : llvm::enumerate(aFragments))
        for (auto [sj, pair] : llvm::enumerate(bFragments))
          for (auto [h, bFragment] : llvm::enumerate(pair)) {
            Value acc = accs[2 * (si * subtileCols() + sj) + h];
            next.push_back(
                isTf32 ? nvgpu::MmaSyncOp::create(b, loc, a, bFragment, acc,
                                                  ArrayRef<int64_t>{16, 8, 8},
                                                  /*tf32Enabled=*/true)
                       : mmaSync(b, loc, a, bFragment, acc));
          }
      return next;
    }
    // amd, 16x16x16: A [i] at (lane % 16, k0 + 4 (lane / 16) + i); B [i] at
    // (k0 + 4 (lane / 16) + i, lane % 16).
    Value column = arith::RemUIOp::create(b, loc, lane, c(16));
    Value kq = arith::AddIOp::create(
        b, loc, k0,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(4)));
    auto fragmentAt = [&](unsigned input, Value base) {
      Value index = arith::AddIOp::create(b, loc, base, column);
      SmallVector<std::pair<Value, Value>> elements;
      for (int64_t i = 0; i < 4; ++i)
        elements.push_back({index, add(kq, i)});
      return loadFragment(b, loc, load, input, operandType, elements, {4});
    };
    for (Value rowBase : rowBases)
      aFragments.push_back(fragmentAt(0, rowBase));
    for (Value colBase : colBases)
      bFragments.push_back({fragmentAt(1, colBase)});
    auto i32 = [&](int64_t v) { return b.getI32IntegerAttr(v); };
    for (auto [si, a] : llvm::enumerate(aFragments))
      for (auto [sj, pair] : llvm::enumerate(bFragments))
        next.push_back(amdgpu::MFMAOp::create(
            b, loc, VectorType::get({4}, b.getF32Type()), i32(16), i32(16),
            i32(16), i32(1), a, pair.front(), accs[si * subtileCols() + sj]));
    return next;
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
    bool nvidia = arch == "nvidia";
    SmallVector<Value> initial = block.initialAccumulators(b, loc, positions);
    // nvidia: two vector<2x2xf32> per subtile (8 positions); amd: one
    // vector<4xf32> (4 positions).
    SmallVector<Value> accumulators;
    if (nvidia) {
      auto accType = VectorType::get({2, 2}, f32);
      for (int64_t half = 0; half < int64_t(positions.size()) / 4; ++half) {
        Value acc = arith::ConstantOp::create(b, loc, b.getZeroAttr(accType));
        for (int64_t i = 0; i < 2; ++i)
          acc = vector::InsertOp::create(
              b, loc,
              vector::FromElementsOp::create(
                  b, loc, VectorType::get({2}, f32),
                  ArrayRef(initial).slice(4 * half + 2 * i, 2)),
              acc, i);
        accumulators.push_back(acc);
      }
    } else {
      for (int64_t s = 0; s < int64_t(positions.size()) / 4; ++s)
        accumulators.push_back(
            vector::FromElementsOp::create(b, loc, VectorType::get({4}, f32),
                                           ArrayRef(initial).slice(4 * s, 4)));
    }

    // The instruction's K, and the K of one loop iteration: one
    // instruction step, or one shared-memory stage of several.
    int64_t kStep = operandType.isF32() ? 8 : kTile;
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    ValueRange sums;
    if (staged()) {
      Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
      // NVIDIA 16-bit fragments come from ldmatrix, which reads a stage
      // either way round (.trans), so each operand's buffer keeps the
      // order it has in global memory and the copies store whole runs.
      // Elsewhere fragments are loaded element by element from [tile][k].
      bool ldmatrix = nvidia && !operandType.isF32() && !warpgroups;
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
          return emitWarpgroupStage(b, loc, block, kMajor, sharedA, sharedB,
                                    warpgroupRow, accs, inFlight);
        auto fromStage = [&](unsigned input, Value tileIndex,
                             Value k) -> Value {
          return memref::LoadOp::create(b, loc, input == 0 ? sharedA : sharedB,
                                        kMajor[input]
                                            ? ValueRange{k, tileIndex}
                                            : ValueRange{tileIndex, k});
        };
        FragmentLoader fragments;
        if (ldmatrix)
          fragments = ldmatrixLoader(b, loc, sharedA, sharedB, kMajor, swizzled,
                                     lane, operandType);
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
          nvidia ? vector::ExtractOp::create(
                       b, loc, sums[e / 4],
                       ArrayRef<int64_t>{int64_t(e % 4) / 2, int64_t(e % 2)})
                 : vector::ExtractOp::create(
                       b, loc, sums[e / 4], ArrayRef<int64_t>{int64_t(e % 4)}));
    if (exchange)
      elements = exchangeLanePairs(b, loc, lane, elements);
    block.storeResults(b, loc, storePositions, elements);
  }
};

} // namespace
