//===- OutputBlock.h - one GPU block's share of a contraction ---*- C++ -*-===//
//
// What kiln-contract-with-matrix-cores and kiln-contract-with-thread-tiles
// share. After kiln-tile-and-distribute has given a contraction (a matmul,
// or a convolution as implicit GEMM: matchMatrixContraction) output blocks,
// one per forall iteration, and bufferization, each iteration holds the
// contraction and elementwise ops over the block (the accumulator's fill,
// the epilogue). Both passes make such an iteration the work of the
// threads of one GPU block (or of one warp), each thread owning some of the
// block's output elements, its "positions"; this file has the parts that
// do not depend on how positions are assigned or products computed:
// matching, the elementwise ops run at a thread's positions, the loop over
// K (and a convolution's window), the accumulators' first and last values,
// and the copies that stage operand slices in workgroup memory.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CODEGEN_OUTPUTBLOCK_H
#define KILN_PASSES_CODEGEN_OUTPUTBLOCK_H

#include "kiln/Passes/Passes.h"

#include <array>

namespace kiln {

class OutputBlock {
public:
  /// (row, column) of one output element within the block.
  using Position = std::pair<mlir::Value, mlir::Value>;
  /// A convolution's window loops and their values at one step.
  using WindowValues = llvm::SmallVector<std::pair<int64_t, mlir::Value>>;

  /// The kernel's one forall iteration as an output block: exactly one
  /// contraction that matchMatrixContraction accepts (`allowFloat32`: float32
  /// operands too) and otherwise elementwise ops over the block, side-effect
  /// free ops and allocations; every loop of the contraction other than M,
  /// N, K and the window of extent 1. None otherwise.
  static std::optional<OutputBlock> match(mlir::func::FuncOp func,
                                          bool allowFloat32);

  mlir::scf::ForallOp forall;
  mlir::linalg::GenericOp contraction;
  /// With loops.mOuter (-1 when the block takes one convolution row): the
  /// block's M is tileM / rowWidth whole rows of rowWidth outputs, its row
  /// r the output row r / rowWidth, position r % rowWidth.
  MatrixContractionLoops loops;
  int64_t tileM = 0, tileN = 0; ///< the block's rows (M) and columns (N)
  int64_t rowWidth = 0;         ///< M's extent (one output row's width)
  /// The block's output rows: tileM, or fewer after padRows.
  int64_t validM = 0;
  /// The block's output columns: tileN, or fewer after padColumns.
  int64_t validN = 0;
  /// The extent of the reduction along K the loops walk (tileK) and the
  /// contraction's own (validK: fewer after padK).
  int64_t tileK = 0, validK = 0;

  /// Makes the block compute `rows` rows (more than it has: matrix tiles
  /// of 16 over 49 outputs). Rows past validM read the operands and the
  /// epilogue's inputs at the last valid row (in bounds, and never NaN
  /// from uninitialized workgroup memory) and store nothing.
  void padRows(int64_t rows);

  /// Makes the block compute `columns` columns (more than it has: 24
  /// filters as 32), as padRows does rows: columns past validN read B and
  /// the epilogue's inputs at the last valid column and store nothing.
  void padColumns(int64_t columns);

  /// Makes the reduction walk `k` along K (more than the contraction has:
  /// 24 input channels in steps of 16). Every operand load past validK
  /// reads zero (a select, or a cp.async that copies no source bytes and
  /// zero-fills), from an address clamped into the operand.
  void padK(int64_t k);

  /// Replaces every linalg op of the iteration, in order: the contraction
  /// by what `emitContraction` builds (at its place), each other op by its
  /// body run at `positions` only, or, for the ops before the contraction,
  /// at `prologuePositions` when given (as many: the positions at which
  /// the thread holds its accumulators when it stores them elsewhere).
  /// Erases the ops.
  void rewrite(mlir::OpBuilder &b, llvm::ArrayRef<Position> positions,
               llvm::function_ref<void(mlir::OpBuilder &)> emitContraction,
               llvm::ArrayRef<Position> prologuePositions = {});

  /// The accumulators' first values at `positions`: the output's current
  /// values (the fill), or zero when the products are scaled (the sum is
  /// scaled once, then added to the output by storeResults).
  llvm::SmallVector<mlir::Value>
  initialAccumulators(mlir::OpBuilder &b, mlir::Location loc,
                      llvm::ArrayRef<Position> positions);
  /// Writes the accumulators' last values to the output at `positions`.
  void storeResults(mlir::OpBuilder &b, mlir::Location loc,
                    llvm::ArrayRef<Position> positions, mlir::ValueRange sums);

  /// One step of the reduction: at K offset `k0` and window position
  /// `window`, from the accumulators `accs` to their next values.
  using StepBuilder = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::OpBuilder &b, mlir::Value k0, const WindowValues &window,
      mlir::ValueRange accs)>;
  /// One scf.for over the window positions (a convolution's kernel; none
  /// for a matmul) times the steps of `stepK` along K, carrying `accs`.
  /// Returns the loop's results.
  mlir::ValueRange emitReductionLoop(mlir::OpBuilder &b, mlir::Location loc,
                                     int64_t stepK, mlir::ValueRange accs,
                                     StepBuilder step);

  /// The element of operand `input` (0: A, 1: B) at `tileIndex` (a row of
  /// the block for A, a column for B) and `k`, from global memory; from
  /// `origin` (a stageOrigin view; `k` then counts from the stage's and
  /// `window` is empty) when given.
  mlir::Value loadOperand(mlir::OpBuilder &b, mlir::Location loc,
                          unsigned input, mlir::Value tileIndex, mlir::Value k,
                          const WindowValues &window, mlir::Value origin = {});
  /// Operand `input` seen from a stage's origin: the view at the indices
  /// its map takes from the stage's K offset `k0` and window position
  /// (the same for every thread of the block), so that a stage's loads
  /// index it with what depends on the thread and the element only. A
  /// convolution's gathered loads then cost one add each on the device
  /// (the rest is invariant across stages and hoisted) instead of the
  /// whole 64-bit address computed from the stage's divided-out window
  /// position per load. None for a matmul (no window: LLVM already steps
  /// its addresses), a padded K (its clamp is not linear) or a map that is
  /// not a sum of loop terms.
  mlir::Value stageOrigin(mlir::OpBuilder &b, mlir::Location loc,
                          unsigned input, mlir::Value k0,
                          const WindowValues &window);

  /// This thread's share of the block's slice of operand `input` at `k0`
  /// (and `window`), loaded from global memory. The `threads` threads of
  /// the block (`thread`: this one) take equal shares, the last guarded when
  /// they do not divide the slice (its elements past the slice are zero);
  /// consecutive threads take consecutive elements along whichever dim is
  /// contiguous in global memory (coalesced loads).
  llvm::SmallVector<mlir::Value>
  loadStageShare(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
                 const WindowValues &window, mlir::Value k0, int64_t stageK,
                 mlir::Value thread, int64_t threads);
  /// Stores a share from loadStageShare into `shared`, a stage buffer:
  /// [tile index][k], or [k][tile index] when `kMajor`; `swizzled`: its
  /// 16-byte runs at swizzledColumn (registerStagesSwizzle).
  void storeStageShare(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
                       int64_t stageK, mlir::Value thread, int64_t threads,
                       mlir::Value shared, bool kMajor,
                       llvm::ArrayRef<mlir::Value> share,
                       bool swizzled = false);

  /// What one stage computes from the operand slices in workgroup memory
  /// (`sharedA`, `sharedB`: stage buffers), from the accumulators
  /// `accs` to their next values.
  using StageCompute = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::OpBuilder &b, mlir::Value sharedA, mlir::Value sharedB,
      mlir::ValueRange accs)>;
  /// The reduction in stages of `stageK` along K (times the window
  /// positions) staged through workgroup memory by the `threads` threads of
  /// the block, software-pipelined: two buffers per operand; while a stage
  /// is computed from one, the next stage (loaded into registers in the
  /// previous iteration) is stored into the other and the loads of the
  /// stage after it are in flight, two iterations ahead of their use; one
  /// barrier per stage separates them (the stage written is complete
  /// before anyone reads it; the one read is done before it is overwritten
  /// two stages later).
  /// `kMajor[i]`: operand i's buffers are [k][tile index], else [tile
  /// index][k]; `swizzled[i]`: they are swizzled (registerStagesSwizzle),
  /// which the fragments' reads must know too. `tensorCores`: the stages
  /// feed matrix instructions; then a loop of more than
  /// kStagesPtxasUnrolls stages computes two an iteration, one from each
  /// buffer (no register moves of the carried loads), and
  /// carriesStagePosition may hold. Returns the accumulators' last values.
  mlir::ValueRange emitStagedReductionLoop(
      mlir::OpBuilder &b, mlir::Location loc, int64_t stageK,
      mlir::ValueRange accs, mlir::Value thread, int64_t threads,
      std::array<bool, 2> kMajor, StageCompute compute,
      std::array<bool, 2> swizzled = {false, false}, bool tensorCores = false);
  /// The most stages of a staged loop that ptxas unrolls whole (ResNet-50
  /// float16's 3x3 convolutions: 11, 21 and 39 stages of about 100
  /// instructions were, 72 were not).
  static constexpr int64_t kStagesPtxasUnrolls = 40;

  /// The same loop with the stage copies as `cp.async` (NVIDIA sm_80+,
  /// nvgpu.device_async_copy of 16 bytes, no registers) into `buffers`
  /// buffers per operand, `ahead` = asyncStagesAhead stages in flight: the
  /// first `ahead` stages are issued before the loop, one commit group
  /// each; iteration s waits until its own copies of stage s have landed
  /// (all but the newest `ahead - 1` groups), meets the others at one
  /// barrier (stage s complete everywhere; everyone done computing stage
  /// s - 1, whose buffer is refilled next), issues the copies of stage
  /// s + ahead into that buffer and computes stage s while they fly. Only
  /// where stageCopiesAsync holds for both operands.
  /// `matrixGroupsInFlight` (0 or 1; wgmma): `compute` leaves that many
  /// groups of asynchronous matrix instructions reading their stages when
  /// it returns (wgmma.wait_group 1), so the buffer refilled at stage s is
  /// that of stage s - 2: one stage fewer of copies flies, and the loop
  /// ends by waiting for the last group. With a buffer per stage
  /// (`buffers` >= the stage count) nothing is refilled: every stage is
  /// issued before the loop and its iterations commit empty groups.
  mlir::ValueRange emitAsyncStagedReductionLoop(
      mlir::OpBuilder &b, mlir::Location loc, int64_t stageK,
      mlir::ValueRange accs, mlir::Value thread, int64_t threads,
      std::array<bool, 2> kMajor, int64_t buffers, StageCompute compute,
      int64_t matrixGroupsInFlight = 0);
  /// Stages whose copies such a pipeline issues ahead of the one computed:
  /// all of them where each has a buffer of its own (`buffers` >=
  /// `stages`), else every buffer but the one computed from and the
  /// `matrixGroupsInFlight` still read.
  static int64_t asyncStagesAhead(int64_t stages, int64_t buffers,
                                  int64_t matrixGroupsInFlight);
  /// True when every thread's share of operand `input`'s stage slice is
  /// whole 16-byte runs (stageRun) that stay contiguous in a `kMajor`
  /// buffer, none guarded: what cp.async copies.
  bool stageCopiesAsync(unsigned input, int64_t stageK, int64_t threads,
                        bool kMajor);

  /// Bytes of workgroup memory one stage takes: a buffer of each operand
  /// (`kMajor[i]`: operand i's buffer is [k][tile index]; `async`: the
  /// cp.async pipeline's, unpadded where stageSwizzles).
  int64_t stageBytes(int64_t stageK, std::array<bool, 2> kMajor,
                     bool async = false) const;
  /// Number of stages of `stepK` along K times the window positions.
  int64_t stageCount(int64_t stepK) const;

  /// True when operand `input` (0: A, 1: B) is contiguous in global memory
  /// along its tile dim (M for A, N for B) rather than along K.
  bool operandContiguousAlongTile(unsigned input);

  /// True when every element of the contraction's accumulator starts at
  /// the same value (a fill of one value in the block, or Gemm's alpha
  /// form, which starts at zero): lanes may then hold their accumulators
  /// at other positions than they store them at.
  bool uniformInitialAccumulators();
  /// True when the ops before the contraction write only its accumulator
  /// (a fill, a bias broadcast along the rows): run at the positions the
  /// thread holds its accumulators at, they leave nothing that the ops
  /// after it, run at other positions, would read.
  bool prologueWritesOnlyAccumulator();
  /// True when the block's last op writes 16-bit elements that are
  /// consecutive in memory along N (a row-major matmul's output; not an
  /// NCHW convolution's, whose N is the channel).
  bool storesSixteenBitRowsAlongN();
  /// Whether the cp.async pipeline's buffers of operand `input` are
  /// swizzled: their unpadded rows are 32 or 64 bytes (a float16 stage of
  /// 16 or 32 along K, or 16 or 32 columns [k][n]). Padded by 16 bytes,
  /// such rows keep ldmatrix's 8-row reads conflict-free, but the 8 lanes
  /// of a 16-byte copy's phase write 2 or 4 rows whose banks overlap (two
  /// wavefronts where one would do; kiln-emulate-gpu --memory-traffic).
  bool stageSwizzles(unsigned input, int64_t stageK, bool kMajor) const;
  /// Whether the register pipeline's buffers of operand `input` can be
  /// swizzled as the cp.async pipeline's are: rows of 32 or 64 bytes
  /// (stageSwizzles) that its stores fill in whole 16-byte runs, each one
  /// vector store along the buffer's contiguous dim. With NHWC activations
  /// the runs are whole (split-K's 16-channel groups, whose weight tiles
  /// cp.async cannot take): padded, their stores took twice the
  /// conflict-free wavefronts.
  bool registerStagesSwizzle(unsigned input, int64_t stageK, bool kMajor);
  /// wgmma (sm_90a) reads its operands from workgroup memory through
  /// matrix descriptors, in the ISA's canonical layout without swizzling:
  /// 8 x 16-byte core matrices, each 128 contiguous bytes, placed at any
  /// two 16-byte multiples apart along K and along M or N. With
  /// `coreMatrixStages`, the cp.async pipeline's stage buffers are rows
  /// of 16 bytes (stageBufferShape), the core matrices adjacent along
  /// the operand's contiguous dim (K for [tile index][k] operands, the
  /// tile for [k][tile index] ones) coreMatrixSpacing().fast rows apart,
  /// groups of 8 rows along the other .slow apart. After their copies
  /// land, each thread fences them for the async proxy that wgmma reads
  /// through.
  bool coreMatrixStages = false;
  /// Core matrix spacing in 16-byte rows: `fast` between matrices
  /// adjacent along the operand's contiguous dim (8 plus 8 over the
  /// matrices a wavefront of copies spans, so that its 8 copies of 16
  /// bytes take distinct banks: the packed layout put 4 or 8 of them in
  /// the same 4 banks), `slow` between groups of 8 rows along the other.
  struct CoreMatrixSpacing {
    int64_t fast, slow;
  };
  CoreMatrixSpacing coreMatrixSpacing(unsigned input, int64_t stageK,
                                      bool kMajor) const;
  /// The 16-byte row of a core-matrix stage buffer of operand `input`
  /// where the run at (`tileIndex`, `k`) starts (`tileIndex` a multiple of
  /// the run along the tile when `kMajor`, `k` along K otherwise).
  mlir::Value coreMatrixRow(mlir::OpBuilder &b, mlir::Location loc,
                            unsigned input, int64_t stageK, bool kMajor,
                            mlir::Value tileIndex, mlir::Value k) const;
  /// A core-matrix stage buffer's strides in bytes, as a matrix
  /// descriptor takes them: `leading` between core matrices adjacent
  /// along K, `stride` between ones adjacent along M or N.
  struct CoreMatrixStrides {
    int64_t leading, stride;
  };
  CoreMatrixStrides coreMatrixStrides(unsigned input, int64_t stageK,
                                      bool kMajor) const;

  /// The column at which element (`row`, `column`) of the swizzled stage
  /// buffer `shared` lives: its 16-byte chunk XOR-permuted by the row's
  /// place in its 128-byte line of banks. `column` starts a chunk.
  static mlir::Value swizzledColumn(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value shared, mlir::Value row,
                                    mlir::Value column);

  /// True when the output is contiguous along M (its last dim is M's: a
  /// convolution's output width), false when along N (a matmul's columns).
  bool outputContiguousAlongM() const;

  /// A convolution's input read through its zero padding in place. When
  /// kiln-tile-and-distribute keeps a kernel's tensor.pad of A whole
  /// (outside the block loop), bufferization makes it a buffer filled
  /// with zeros into whose interior the input is copied: every thread
  /// would pad the whole image. Operand A views that buffer; its loads
  /// read `copied` (the unpadded input) instead, zero outside it, and the
  /// buffer, its fill and its copy are erased after the rewrite.
  struct PaddedInput {
    mlir::Value buffer; ///< the zero-filled allocation A's subviews view
    mlir::Value copied; ///< what the kernel copies into its interior
    /// Per dim of `buffer`: the padding before, the unpadded extent.
    llvm::SmallVector<int64_t> low, extent;
    /// `copied` as one dim, once made, and the strides of its dims in it.
    mlir::Value source;
    llvm::SmallVector<int64_t> strides;
  };
  std::optional<PaddedInput> paddedInput;

private:
  /// Where a load of operand `input` from `view` (the operand or a view
  /// of it) at `indices` reads: through a padded input (paddedInput), the
  /// unpadded source at the indices less the padding, clamped into it,
  /// and whether the element is inside it (null when it always is).
  struct GlobalRead {
    mlir::Value memref;
    llvm::SmallVector<mlir::Value> indices;
    mlir::Value valid;
    /// The indices before an element outside was moved inside: where a
    /// cp.async that copies no bytes may point (it reads nothing).
    llvm::SmallVector<mlir::Value> unclampedIndices;
  };
  GlobalRead readAt(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
                    mlir::Value view, llvm::SmallVector<mlir::Value> indices);
  /// Whether a padded input's element is inside the source, from a mask
  /// of the stage offsets at which the loop-invariant indices `rest` are
  /// (computed once by the device) shifted by the stage's number (from
  /// `stagePart`, the same for the block's threads): one shift a load
  /// where compares would take an add and a compare a dim. Null where the
  /// offsets (`largest`, per dim; -1: unknown) take over 32 bits.
  mlir::Value windowMaskBit(mlir::OpBuilder &b, mlir::Location loc,
                            llvm::ArrayRef<mlir::Value> rest,
                            llvm::ArrayRef<mlir::OpFoldResult> stagePart,
                            llvm::ArrayRef<int64_t> largest,
                            llvm::ArrayRef<int64_t> paddedDims);
  /// The largest offset of each dim of the views stageOrigin made, over
  /// the stages (-1 where it depends on K).
  llvm::DenseMap<mlir::Value, llvm::SmallVector<int64_t>> originLargestOffsets;
  /// Makes paddedInput's source, ahead of the block loop.
  void makePaddedInputSource(mlir::OpBuilder &b, mlir::Location loc);
  /// Erases the padded buffer of paddedInput, its fill and its copy once
  /// nothing reads it.
  void erasePaddedBuffer();

  /// Workgroup memory for `buffers` stages (`stageK` along K) of operand
  /// `input`: [buffers][tile index][k], or [buffers][k][tile index] when
  /// `kMajor`; each row padded by 16 bytes, so that rows that would map to
  /// the same banks start in different ones, and 16-byte aligned (thread
  /// tiles read runs of a row as one vector).
  /// With `swizzled`, rows are not padded: swizzledColumn places the
  /// elements instead.
  mlir::Value allocateStages(mlir::OpBuilder &b, mlir::Location loc,
                             unsigned input, int64_t stageK, bool kMajor,
                             int64_t buffers = 2, bool swizzled = false);
  /// The shape of one buffer of allocateStages.
  llvm::SmallVector<int64_t, 2> stageBufferShape(unsigned input, int64_t stageK,
                                                 bool kMajor,
                                                 bool swizzled = false) const;
  /// Bytes of workgroup memory one stage buffer of operand `input` takes
  /// (allocateStages' rows).
  int64_t stageBufferBytes(unsigned input, int64_t stageK, bool kMajor,
                           bool swizzled = false) const;
  /// Buffer `which` of a set from allocateStages.
  mlir::Value stageBuffer(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value pair, mlir::Value which);
  /// Issues cp.async copies of this thread's share of operand `input`'s
  /// slice at `k0` (and `window`) into `shared`; returns their tokens.
  llvm::SmallVector<mlir::Value>
  issueAsyncStageCopies(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
                        const WindowValues &window, mlir::Value k0,
                        int64_t stageK, mlir::Value thread, int64_t threads,
                        mlir::Value shared, bool kMajor);
  /// K offset and window position of stage `stage` of the reduction loop
  /// (steps of `stepK` along K, innermost, times the window positions).
  std::pair<mlir::Value, WindowValues> stageAt(mlir::OpBuilder &b,
                                               mlir::Location loc,
                                               mlir::Value stage,
                                               int64_t stepK);
  /// The same position as values a loop carries ([k0, window values]),
  /// and back.
  static llvm::SmallVector<mlir::Value>
  packStage(const std::pair<mlir::Value, WindowValues> &position);
  std::pair<mlir::Value, WindowValues>
  unpackStage(mlir::ValueRange packed) const;
  /// Whether a tensor-core loop of `stages` stages carries the position
  /// of the stage it loads next (nextStage) instead of dividing it out of
  /// the stage's number: a convolution's window positions are such a
  /// division (by 3 for a 3x3 window), which ptxas folded poorly where it
  /// unrolls the loop whole (ResNet-50 f16's 3x3 convolutions and stem:
  /// 14-26% fewer instructions, layer1's at b32 829 -> 677, layer4's at b1
  /// 868 -> 643; but b1's smallest split-K parts, 9 stages of 2 HMMA,
  /// 207 -> 255). Not for loops ptxas keeps (72 and 144 stages: about the
  /// same), nor matmuls (a K offset is the stage times the step: 9
  /// instructions a stage more), nor float32 thread tiles (0.4% more).
  bool carriesStagePosition(int64_t stages, bool tensorCores) const;
  /// The position of the stage after `packed`'s: k0 moves by `stepK`, and
  /// past the tile's K the window's innermost position moves by one, and
  /// so on outwards (selects, no division by the window's extents).
  llvm::SmallVector<mlir::Value> nextStage(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::ValueRange packed,
                                           int64_t stepK) const;
  /// Elements that a thread's stage copy of operand `input` moves at a time:
  /// 16 bytes' worth (else 8, 4) when the operand is contiguous along the
  /// slice's fastest dim, that dim's extent in the slice is a multiple, and
  /// each run starts aligned to its size (the operand's other strides and
  /// its offset from the kernel argument, as far as known, are multiples);
  /// else 1.
  int64_t stageRun(unsigned input, int64_t stageK);
  /// Where share `share` of `thread` (of `threads`, runs of `run`
  /// elements) of a slice of operand `input` goes: (tile index, k),
  /// consecutive elements along the dim contiguous in memory. When a
  /// round of shares covers whole lines of that dim, a thread's shares
  /// differ by a constant along the other: one address and immediate
  /// offsets on the device instead of an address per share.
  std::pair<mlir::Value, mlir::Value>
  stagePlace(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
             mlir::Value thread, int64_t share, int64_t threads, int64_t run,
             int64_t stageK);

  /// Positions of M and N (and of the rows outside M) among the output
  /// tile's dims.
  int64_t outM = -1, outN = -1, outMOuter = -1;
  /// The loops of an op over the block that walk its rows (the output row
  /// outside M, -1 without loops.mOuter; M) and its columns (N).
  struct TileLoops {
    int64_t rowOuter = -1, row = -1, col = -1;
  };
  llvm::SmallVector<mlir::linalg::LinalgOp> ops;
  /// Per element of the thread's positions, whether it is one of the
  /// block's (row under validM, column under validN); empty when the block
  /// has no padded rows or columns. Those of the positions being emitted:
  /// rewrite's prologue positions, then its positions.
  llvm::SmallVector<mlir::Value> positionValid;
  /// positionValid's values for `positions` (empty when none is padded).
  llvm::SmallVector<mlir::Value> validities(mlir::OpBuilder &b,
                                            llvm::ArrayRef<Position> positions);
  /// For a reduction padded along K (padK): whether `k` is one of the
  /// contraction's (null when K is not padded), and `k` clamped to the last
  /// valid start of a run of `run` elements (`k` itself when not padded).
  mlir::Value kValid(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Value k) const;
  mlir::Value clampK(mlir::OpBuilder &b, mlir::Location loc, mlir::Value k,
                     int64_t run = 1) const;
  /// Where a run of `run` elements of operand `input` at `k` reads along K
  /// (clampK; a run along the tile dim is at one k), and whether it is one
  /// of the contraction's (null when K is not padded).
  std::pair<mlir::Value, mlir::Value> runK(mlir::OpBuilder &b,
                                           mlir::Location loc, unsigned input,
                                           mlir::Value k, int64_t run);
  /// `row`, or the last valid row start for a run of `run` elements when
  /// the block is padded.
  mlir::Value clampRow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value row,
                       int64_t run = 1) const;
  /// `column`, or the last valid column start for a run of `run` elements
  /// when the block's columns are padded.
  mlir::Value clampColumn(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value column, int64_t run = 1) const;
  /// Where a run of `run` elements of operand `input` at `tileIndex` of a
  /// stage slice is read from: a padded block's runs along M (N) past its
  /// last valid row (column) read the last valid run instead.
  mlir::Value runStart(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
                       mlir::Value tileIndex, int64_t run);
  /// What this thread last stored at (buffer, element of its positions).
  llvm::DenseMap<std::pair<mlir::Value, int64_t>, mlir::Value> stored;
  /// This thread's last store at (buffer, element) when nothing has read
  /// the buffer since: a later store there makes it dead (the fill's zero
  /// under the contraction's result).
  llvm::DenseMap<std::pair<mlir::Value, int64_t>, mlir::Operation *>
      unreadStores;
  void forgetUnreadStores(mlir::Value buffer);

  static bool isTileElementwise(mlir::linalg::LinalgOp op);
  std::optional<TileLoops> tileLoopsOf(mlir::linalg::LinalgOp op,
                                       int64_t outRank) const;
  bool indexesTileElement(mlir::linalg::LinalgOp op, mlir::AffineMap map,
                          TileLoops loops) const;
  /// Loop values at the block's row `row` for loops `rowOuter` (-1: none)
  /// and `rowLoop`: M's alone, or the output row and the position in it.
  llvm::SmallVector<std::pair<int64_t, mlir::Value>>
  rowAt(mlir::OpBuilder &b, mlir::Location loc, int64_t rowOuter,
        int64_t rowLoop, mlir::Value row) const;
  /// Loop values of the contraction at `tileIndex` along operand `input`'s
  /// tile dim (a row of the block for A, a column for B).
  llvm::SmallVector<std::pair<int64_t, mlir::Value>>
  tileAt(mlir::OpBuilder &b, mlir::Location loc, unsigned input,
         mlir::Value tileIndex) const;
  /// The contraction's own TileLoops.
  TileLoops contractionTileLoops() const {
    return {loops.mOuter, loops.m, loops.n};
  }
  mlir::Value loadElement(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value buffer,
                          llvm::ArrayRef<mlir::Value> indices, int64_t e,
                          bool tileElement);
  void storeElement(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                    mlir::Value buffer, llvm::ArrayRef<mlir::Value> indices,
                    int64_t e, bool tileElement);
  void emitAtPositions(mlir::OpBuilder &b, mlir::linalg::LinalgOp op,
                       llvm::ArrayRef<Position> positions);
  llvm::SmallVector<mlir::Value>
  outputIndices(mlir::OpBuilder &b, mlir::Location loc, Position position);
};

/// Indices of an operand whose map is `map`, with each loop of `at` at its
/// value and every other loop at 0.
llvm::SmallVector<mlir::Value>
indicesAt(mlir::OpBuilder &b, mlir::Location loc, mlir::AffineMap map,
          llvm::ArrayRef<std::pair<int64_t, mlir::Value>> at);

/// Helpers of the OutputBlock*.cpp files.
namespace detail {
/// Whether `index` is under `extent`.
mlir::Value isBelow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value index,
                    int64_t extent);
/// `value` where `valid` holds, else zero (an operand read past a padded K).
mlir::Value zeroUnless(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value valid, mlir::Value value);
/// `first` and `second`, either of which may be null (always true).
mlir::Value bothValid(mlir::OpBuilder &b, mlir::Location loc, mlir::Value first,
                      mlir::Value second);
/// A multiple of elements that the offset of `view` from the start of its
/// kernel argument (or from `alignedRoot`) is known to be; 1 when unknown.
int64_t knownOffsetMultiple(mlir::Value view, int64_t elementBytes,
                            mlir::Value alignedRoot = mlir::Value());
} // namespace detail

} // namespace kiln

#endif
