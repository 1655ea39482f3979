//===- ConfigureGpuContractions.cpp - how a GPU block computes its block ===//
//
// The second half of the GPU kernel config. kiln-configure-gpu-kernels
// chose the output block of a contraction that one GPU block computes;
// this pass chooses how, where the facts that choice needs are known:
// after tiling fixed the block's extents and bufferization the operands'
// layouts (whether a stage's copies are whole 16-byte runs that cp.async
// takes, how many bytes a stage buffer holds). It records the choice as
// `kiln.contraction`; kiln-contract-with-matrix-cores and
// kiln-contract-with-thread-tiles only build it.
//
// Matrix instructions (MatrixInstructions.h) take 16-bit operands, or
// float32 ones as TF32, in 16x16 subtiles: rows and columns that 16 does
// not divide are padded where that wastes at most a quarter (a 7x7 map's
// 49 pixels as 64; paddedMatrixRows), as is a K (24 input channels as 32;
// paddedMatrixK). Each warp computes up to 32x32 of the block, 64 along a
// side of 128 or 256, so that a fragment it loads serves several
// instructions. On sm_90a a block whose rows 64 divides is one warpgroup
// per 64 rows running wgmma instead, where its stages are cp.async copies.
// Anything else is the SIMT sibling's: thread tiles of up to 8x8 outputs.
//
//===----------------------------------------------------------------------===//
#include "MatrixInstructions.h"

#include <tuple>

namespace kiln {
#define GEN_PASS_DEF_CONFIGUREGPUCONTRACTIONS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A block's layout on matrix instructions while it is being chosen.
struct MatrixLayout {
  int64_t lanes = 0;
  int64_t tileM = 0, tileN = 0, warpRows = 0, warpCols = 0, stageK = 0;
  bool warpgroups = false;

  int64_t warps() const { return (tileM / warpRows) * (tileN / warpCols); }
  int64_t threads() const { return lanes * warps(); }
  /// A single 16x16 tile is one warp that loads its fragments straight from
  /// global memory; larger tiles stage operands through shared memory.
  bool staged() const { return tileM * tileN > kSubtile * kSubtile; }
};

/// A cp.async pipeline: the stage depth along K and buffers per operand.
struct AsyncPipeline {
  int64_t depth = 0, buffers = 0;
};

struct ConfigureGpuContractionsPass
    : public kiln::impl::ConfigureGpuContractionsBase<
          ConfigureGpuContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr(kiln::attrs::kKernel))
      return;
    instructions = warpMatrixInstructions(arch);
    ContractionConfigAttr config;
    if (instructions)
      if (std::optional<OutputBlock> block =
              OutputBlock::match(func, tf32 && instructions->takesTf32()))
        config = matrixConfig(*block);
    if (!config)
      if (std::optional<OutputBlock> block =
              OutputBlock::match(func, /*allowFloat32=*/true))
        config = threadConfig(*block);
    if (config)
      func->setAttr(kiln::attrs::kContraction, config);
  }

  /// The warp's matrix instructions (mma.sync, MFMA), by `arch`.
  std::shared_ptr<const WarpMatrixInstructions> instructions;

  //===--------------------------------------------------------------------===//
  // Matrix instructions
  //===--------------------------------------------------------------------===//

  /// The block on warps or warpgroups; null when matrix instructions cannot
  /// cover it.
  ContractionConfigAttr matrixConfig(OutputBlock &block) {
    if (int64_t rows = paddedMatrixRows(block.tileM); rows > block.tileM)
      block.padRows(rows);
    if (int64_t columns = paddedMatrixRows(block.tileN); columns > block.tileN)
      block.padColumns(columns);
    if (int64_t k = paddedMatrixK(block.tileK); k > block.tileK)
      block.padK(k);
    MatrixLayout layout;
    layout.lanes = instructions->lanes();
    if (!chooseWarpLayout(block, layout))
      return {};
    bool warpgroups = wgmma && instructions->sharesWarpgroupLayout() &&
                      chooseWarpgroups(block, layout);
    layout.warpgroups = warpgroups;
    Type operandType = block.loops.operandType;
    int64_t buffers = 0, inFlight = 0;
    if (layout.staged()) {
      // Fragments that one warp-wide load takes from a stage either way
      // round (ldmatrix), or wgmma's descriptors, let each operand's buffer
      // keep its global order and cp.async copy whole runs (sm_80+, every
      // chip the cuda target takes); it may choose another stage depth.
      bool ldmatrix =
          instructions->loadsStageFragments(operandType) && !layout.warpgroups;
      if (ldmatrix || layout.warpgroups)
        if (std::optional<AsyncPipeline> pipeline = asyncPipeline(
                block, layout,
                stageKMajor(*instructions, block, layout.warpgroups))) {
          layout.stageK = pipeline->depth;
          buffers = pipeline->buffers;
          inFlight = matrixGroupsInFlight(layout, buffers,
                                          block.stageCount(layout.stageK));
        }
    } else {
      layout.stageK = 0;
    }
    std::string instruction =
        layout.warpgroups ? "wgmma m64n" + std::to_string(layout.tileN) + "k16"
                          : instructions->name(operandType);
    return ContractionConfigAttr::get(
        &getContext(),
        layout.warpgroups ? ContractionUnit::Warpgroups
                          : ContractionUnit::Warps,
        instruction, {layout.tileM, layout.tileN, block.tileK},
        {layout.warpRows, layout.warpCols}, layout.stageK, buffers, inFlight);
  }

  /// Sets the layout from the block's M, N and K (padded); false when
  /// matrix instructions cannot cover them (M or N not a multiple of 16, M
  /// over 128 or N over 256, K not a multiple of 16, two stages that do
  /// not fit the workgroup memory).
  bool chooseWarpLayout(const OutputBlock &block, MatrixLayout &layout) {
    layout.tileM = block.tileM;
    layout.tileN = block.tileN;
    int64_t k = block.tileK;
    if (layout.tileM % kSubtile || layout.tileN % kSubtile || k % kSubtile ||
        layout.tileM > 128 || layout.tileN > 256)
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
      return tile % 32 == 0 ? 32 : kSubtile;
    };
    layout.warpRows = warpExtent(layout.tileM);
    layout.warpCols = warpExtent(layout.tileN);
    if (!layout.staged()) {
      layout.stageK = k % 32 == 0 ? 32 : kSubtile;
      return true;
    }
    // Stages of 32 along K, or 16 where 32 does not divide K or two
    // buffers per operand would not fit the workgroup memory (a 128x128
    // float32 block for TF32 in 48 KiB: 72 KiB at 32, 40 KiB at 16).
    // Blocks of 16-row warps (112 rows: 14 warps for 64 columns) too:
    // their stage loads, carried in registers, fit since each thread's
    // loads share one address (OutputBlock::stagePlace, stageOrigin; at
    // 32 a warp runs 8 mma.sync per stage instead of 4 for the same
    // barrier and loop). A stage slice that the threads do not divide (112
    // rows: seven warps) leaves the last copy guarded (loadStageShare).
    for (int64_t depth : {32, 16}) {
      if (k % depth != 0 ||
          2 * block.stageBytes(depth, {false, false}) > workgroupMemoryBytes)
        continue;
      layout.stageK = depth;
      return true;
    }
    return false;
  }

  /// Makes the block warpgroups for wgmma m64nNk16 when it can be: 16-bit
  /// operands, rows that 64 divides (a warpgroup of 4 warps per 64 rows,
  /// warp w of a warpgroup holding its rows 16w..16w+15 at every column,
  /// which is the mma.sync accumulator layout per 8 columns: the
  /// fragments' positions, epilogue and stores stay those of a warp tile
  /// of 16 x tileN) and stages cp.async copies into core-matrix buffers.
  /// Otherwise leaves the mma.sync layout and returns false.
  bool chooseWarpgroups(OutputBlock &block, MatrixLayout &layout) {
    Type operandType = block.loops.operandType;
    if (!(operandType.isF16() || operandType.isBF16()) ||
        layout.tileM % 64 != 0 || layout.tileN % 8 != 0 || layout.tileN > 256)
      return false;
    MatrixLayout warpgroupLayout = layout;
    warpgroupLayout.warpRows = kSubtile;
    warpgroupLayout.warpCols = layout.tileN;
    block.coreMatrixStages = true;
    // Whether a pipeline exists at all: asked as of mma.sync warps, which
    // hold no wgmma group back.
    if (warpgroupLayout.staged() &&
        asyncPipeline(block, warpgroupLayout,
                      {block.operandContiguousAlongTile(0),
                       block.operandContiguousAlongTile(1)})) {
      layout = warpgroupLayout;
      return true;
    }
    block.coreMatrixStages = false;
    return false;
  }

  /// wgmma groups a stage of a pipeline of `buffers` buffers over `stages`
  /// stages leaves running (wgmma-groups-in-flight): the buffer a stage
  /// refills is then that of `1 +` this many stages before, so it takes
  /// three buffers where buffers are refilled.
  int64_t matrixGroupsInFlight(const MatrixLayout &layout, int64_t buffers,
                               int64_t stages) const {
    return buffers >= 3 || buffers >= stages ? groupsInFlightAsked(layout) : 0;
  }
  /// What wgmma-groups-in-flight asks of a warpgroup block (0 or 1).
  int64_t groupsInFlightAsked(const MatrixLayout &layout) const {
    return layout.warpgroups ? std::clamp<int64_t>(wgmmaGroupsInFlight, 0, 1)
                             : 0;
  }

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
  int64_t asyncBuffers(const OutputBlock &block, const MatrixLayout &layout,
                       int64_t depth, std::array<bool, 2> kMajor) const {
    // A wgmma group left running holds one buffer more.
    int64_t held = groupsInFlightAsked(layout);
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
  std::optional<AsyncPipeline> asyncPipeline(OutputBlock &block,
                                             const MatrixLayout &layout,
                                             std::array<bool, 2> kMajor) const {
    int64_t k = block.tileK;
    std::optional<AsyncPipeline> best;
    // K in flight, then a wgmma group left running, then the depth.
    auto merit = [&](AsyncPipeline pipeline) {
      int64_t stages = block.stageCount(pipeline.depth);
      int64_t groups = matrixGroupsInFlight(layout, pipeline.buffers, stages);
      return std::make_tuple(
          pipeline.depth *
              OutputBlock::asyncStagesAhead(stages, pipeline.buffers, groups),
          groups, pipeline.depth);
    };
    for (int64_t depth : {32, 16}) {
      if (k % depth != 0 ||
          !block.stageCopiesAsync(0, depth, layout.threads(), kMajor[0]) ||
          !block.stageCopiesAsync(1, depth, layout.threads(), kMajor[1]))
        continue;
      AsyncPipeline candidate{depth,
                              asyncBuffers(block, layout, depth, kMajor)};
      if (candidate.buffers == 0)
        continue;
      if (!best || merit(candidate) > merit(*best))
        best = candidate;
    }
    return best;
  }

  //===--------------------------------------------------------------------===//
  // Thread tiles
  //===--------------------------------------------------------------------===//

  /// The block on threads with register tiles (threadTileExtent per side);
  /// null when that makes fewer threads than a warp (a per-thread register
  /// tile of kiln-tile-and-distribute without thread-blocks) or more than
  /// a block takes.
  ContractionConfigAttr threadConfig(OutputBlock &block) {
    constexpr int64_t kMinThreads = 32, kMaxThreads = 1024;
    // Rows that 4 does not divide (a 7x7 map's 49 pixels) would leave each
    // thread one row (1x4 tiles: a loaded weight serves one FMA); padded
    // (threadTileRows), each thread gets four, unless that leaves the
    // block fewer threads than a warp.
    if (int64_t rows = threadBlockRows(block.tileM, block.tileN);
        rows > block.tileM)
      block.padRows(rows);
    int64_t rowsPerThread = threadTileExtent(block.tileM);
    int64_t colsPerThread = threadTileExtent(block.tileN);
    int64_t threads =
        (block.tileM / rowsPerThread) * (block.tileN / colsPerThread);
    if (threads < kMinThreads || threads > kMaxThreads)
      return {};
    return ContractionConfigAttr::get(
        &getContext(), ContractionUnit::Threads, "fma",
        {block.tileM, block.tileN, block.tileK}, {rowsPerThread, colsPerThread},
        stageDepth(block.loops.ranges[block.loops.k]), /*stageBuffers=*/0,
        /*groupsInFlight=*/0);
  }
};

} // namespace
