//===- OutputBlockStaging.cpp - a block's operand stages -----------------===//
//
// The reduction loop of a block and its stages: operand tiles copied to
// workgroup memory (synchronously, or with cp.async in a pipeline of
// buffers), their layout and swizzle, and each thread's share of a stage.
//
//===----------------------------------------------------------------------===//
#include "OutputBlock.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

using namespace mlir;
using namespace kiln;
using namespace kiln::detail;

int64_t OutputBlock::stageRun(unsigned input, int64_t stageK) {
  OpOperand *operand = contraction.getDpsInputOperand(input);
  AffineMap map = contraction.getMatchingIndexingMap(operand);
  auto fast = dyn_cast<AffineDimExpr>(map.getResult(map.getNumResults() - 1));
  int64_t tileLoop = input == 0 ? loops.m : loops.n;
  if (!fast || (int64_t(fast.getPosition()) != tileLoop &&
                int64_t(fast.getPosition()) != loops.k))
    return 1;
  // Runs along M would cross from one output row into the next.
  if (input == 0 && loops.mOuter >= 0 && int64_t(fast.getPosition()) == loops.m)
    return 1;
  int64_t fastExtent = int64_t(fast.getPosition()) == tileLoop
                           ? (input == 0 ? tileM : tileN)
                           : stageK;
  auto type = cast<MemRefType>(operand->get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return 1;
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  int64_t known = knownOffsetMultiple(operand->get(), bytes);
  // A padded input's runs are read from the unpadded source, at the
  // slice's offsets within the padded buffer, which keep the last dim's:
  // both must be aligned, and the source's strides multiples of a run.
  if (input == 0 && paddedInput) {
    auto copiedType = cast<MemRefType>(paddedInput->copied.getType());
    SmallVector<int64_t> copiedStrides;
    int64_t copiedOffset;
    if (failed(copiedType.getStridesAndOffset(copiedStrides, copiedOffset)) ||
        copiedStrides.back() != 1)
      return 1;
    known = std::gcd(
        knownOffsetMultiple(operand->get(), bytes, paddedInput->buffer),
        knownOffsetMultiple(paddedInput->copied, bytes));
    strides.insert(strides.begin(), copiedStrides.begin(),
                   copiedStrides.end() - 1);
  }
  for (int64_t run = 16 / bytes; run > 1; run /= 2) {
    // Along M of a padded block, runs end at the last valid row too.
    bool alongValidM = input != 0 || int64_t(fast.getPosition()) != loops.m ||
                       validM % run == 0;
    // Along N of a padded block, and along a padded K, runs end at the
    // last valid column or k too.
    bool alongValidN = input != 1 || int64_t(fast.getPosition()) != loops.n ||
                       validN % run == 0;
    bool alongValidK =
        int64_t(fast.getPosition()) != loops.k || validK % run == 0;
    bool aligned = fastExtent % run == 0 && alongValidM && alongValidN &&
                   alongValidK && known % run == 0 &&
                   llvm::all_of(ArrayRef(strides).drop_back(), [&](int64_t s) {
                     return !ShapedType::isDynamic(s) && s % run == 0;
                   });
    if (aligned)
      return run;
  }
  return 1;
}

int64_t OutputBlock::stageCount(int64_t stepK) const {
  int64_t count = tileK / stepK;
  for (int64_t w : loops.window)
    count *= loops.ranges[w];
  return count;
}

std::pair<Value, OutputBlock::WindowValues>
OutputBlock::stageAt(OpBuilder &b, Location loc, Value stage, int64_t stepK) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t kSteps = tileK / stepK;
  Value k0 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, stage, c(kSteps)), c(stepK));
  WindowValues window;
  Value rest = arith::DivUIOp::create(b, loc, stage, c(kSteps));
  for (int64_t i = int64_t(loops.window.size()) - 1; i >= 0; --i) {
    int64_t extent = loops.ranges[loops.window[i]];
    window.push_back(
        {loops.window[i],
         i == 0 ? rest
                : arith::RemUIOp::create(b, loc, rest, c(extent)).getResult()});
    if (i > 0)
      rest = arith::DivUIOp::create(b, loc, rest, c(extent));
  }
  return {k0, window};
}

bool OutputBlock::carriesStagePosition(int64_t stages, bool tensorCores) const {
  return tensorCores && !loops.window.empty() && stages <= kStagesPtxasUnrolls;
}

SmallVector<Value>
OutputBlock::packStage(const std::pair<Value, WindowValues> &position) {
  SmallVector<Value> packed = {position.first};
  for (const auto &[loop, value] : position.second)
    packed.push_back(value);
  return packed;
}

std::pair<Value, OutputBlock::WindowValues>
OutputBlock::unpackStage(ValueRange packed) const {
  // stageAt's order: the innermost window loop first.
  WindowValues window;
  for (int64_t i = int64_t(loops.window.size()) - 1, j = 1; i >= 0; --i, ++j)
    window.push_back({loops.window[i], packed[j]});
  return {packed[0], window};
}

SmallVector<Value> OutputBlock::nextStage(OpBuilder &b, Location loc,
                                          ValueRange packed,
                                          int64_t stepK) const {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto wrapTo0 = [&](Value wrap, Value value) -> Value {
    return arith::SelectOp::create(b, loc, wrap, c(0), value);
  };
  Value k0 = arith::AddIOp::create(b, loc, packed[0], c(stepK));
  Value wrap =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k0, c(tileK));
  SmallVector<Value> next = {wrapTo0(wrap, k0)};
  // Window values innermost first; the outermost is not wrapped (past the
  // last stage nobody reads it).
  for (int64_t j = 1, n = packed.size(); j < n; ++j) {
    int64_t extent = loops.ranges[loops.window[n - 1 - j]];
    Value moved = arith::SelectOp::create(
        b, loc, wrap, arith::AddIOp::create(b, loc, packed[j], c(1)),
        packed[j]);
    if (j + 1 == n) {
      next.push_back(moved);
      break;
    }
    wrap = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, moved,
                                 c(extent));
    next.push_back(wrapTo0(wrap, moved));
  }
  return next;
}

ValueRange OutputBlock::emitReductionLoop(OpBuilder &b, Location loc,
                                          int64_t stepK, ValueRange accs,
                                          StepBuilder step) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  scf::ForOp loop =
      loops.window.empty()
          ? scf::ForOp::create(b, loc, c(0), c(tileK), c(stepK), accs)
          : scf::ForOp::create(b, loc, c(0), c(stageCount(stepK)), c(1), accs);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value k0 = loop.getInductionVar();
  WindowValues window;
  if (!loops.window.empty())
    std::tie(k0, window) = stageAt(b, loc, loop.getInductionVar(), stepK);
  SmallVector<Value> next =
      step(b, k0, window, ValueRange(loop.getRegionIterArgs()));
  scf::YieldOp::create(b, loc, next);
  return loop.getResults();
}

ValueRange OutputBlock::emitStagedReductionLoop(
    OpBuilder &b, Location loc, int64_t stageK, ValueRange accs, Value thread,
    int64_t threads, std::array<bool, 2> kMajor, StageCompute compute,
    std::array<bool, 2> swizzled, bool tensorCores) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value pairA = allocateStages(b, loc, 0, stageK, kMajor[0], 2, swizzled[0]);
  Value pairB = allocateStages(b, loc, 1, stageK, kMajor[1], 2, swizzled[1]);
  auto half = [&](Value pair, Value which) {
    return stageBuffer(b, loc, pair, which);
  };
  auto loadBothAt = [&](const std::pair<Value, WindowValues> &position) {
    auto &[k0, window] = position;
    return std::pair(
        loadStageShare(b, loc, 0, window, k0, stageK, thread, threads),
        loadStageShare(b, loc, 1, window, k0, stageK, thread, threads));
  };
  auto loadBoth = [&](Value stage) {
    return loadBothAt(stageAt(b, loc, stage, stageK));
  };
  auto storeBoth = [&](Value which, ArrayRef<Value> a, ArrayRef<Value> bs) {
    storeStageShare(b, loc, 0, stageK, thread, threads, half(pairA, which),
                    kMajor[0], a, swizzled[0]);
    storeStageShare(b, loc, 1, stageK, thread, threads, half(pairB, which),
                    kMajor[1], bs, swizzled[1]);
  };

  // Zeros in place of a share's loads past the last stage: what the loop
  // stores of them goes to a buffer nobody reads again.
  auto zerosLike = [&](ArrayRef<Value> share) {
    SmallVector<Value> zeros;
    for (Value value : share)
      zeros.push_back(arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(value.getType()))));
    return zeros;
  };

  // Stage 0 into buffer 0, and stage 1's loads in flight into the loop.
  int64_t stages = stageCount(stageK);
  SmallVector<Value> inits(accs);
  {
    auto [a, bs] = loadBoth(c(0));
    storeBoth(c(0), a, bs);
    auto [nextA, nextB] =
        stages > 1 ? loadBoth(c(1)) : std::pair(zerosLike(a), zerosLike(bs));
    llvm::append_range(inits, nextA);
    llvm::append_range(inits, nextB);
    gpu::BarrierOp::create(b, loc);
  }
  size_t loadedCount = inits.size() - accs.size();
  // A convolution's loop may carry the position of stage 2, the first it
  // loads, from stage to stage (carriesStagePosition).
  if (carriesStagePosition(stages, tensorCores))
    llvm::append_range(inits, packStage(stageAt(b, loc, c(2), stageK)));
  // One stage: `carried` holds the accumulators, stage s + 1's loaded
  // values and stage s + 2's position; returns the same for the next
  // stage. `which` is s % 2, the buffer computed from.
  auto emitStage = [&](Value stage, Value which, ValueRange carried) {
    ValueRange sumsIn = carried.take_front(accs.size());
    ValueRange loaded = carried.slice(accs.size(), loadedCount);
    ValueRange aheadPosition = carried.drop_front(accs.size() + loadedCount);
    // The loads of the stage after next first: they have this iteration
    // and the next to land. The last two stages have none to load (a
    // branch the whole block takes alike): reloading the last stage
    // instead would read global memory for nothing, twice the loads when
    // K has 2 stages.
    Value ahead = arith::AddIOp::create(b, loc, stage, c(2));
    size_t shareA = 0;
    auto aheadLoads = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead,
                              c(stages)),
        [&](OpBuilder &, Location) {
          auto [a, bs] = aheadPosition.empty()
                             ? loadBoth(ahead)
                             : loadBothAt(unpackStage(aheadPosition));
          shareA = a.size();
          scf::YieldOp::create(b, loc,
                               llvm::to_vector(llvm::concat<Value>(a, bs)));
        },
        [&](OpBuilder &, Location) {
          // The values carried in: stored again into a buffer nobody
          // reads. (Zeros cost an instruction per register every
          // iteration: ptxas set them before the branch that skips the
          // loads.)
          scf::YieldOp::create(b, loc, SmallVector<Value>(loaded));
        });
    ValueRange aheadA = aheadLoads.getResults().take_front(shareA);
    ValueRange aheadB = aheadLoads.getResults().drop_front(shareA);
    SmallVector<Value> next =
        compute(b, half(pairA, which), half(pairB, which), sumsIn);
    // The next stage, loaded in the previous iteration, into the other
    // buffer; the barrier publishes it and ends this stage's reads.
    storeBoth(arith::SubIOp::create(b, loc, c(1), which),
              SmallVector<Value>(loaded.take_front(shareA)),
              SmallVector<Value>(loaded.drop_front(shareA)));
    gpu::BarrierOp::create(b, loc);
    llvm::append_range(next, aheadA);
    llvm::append_range(next, aheadB);
    if (!aheadPosition.empty())
      llvm::append_range(next, nextStage(b, loc, aheadPosition, stageK));
    return next;
  };

  // For tensor cores, two stages an iteration, one per buffer. With one,
  // the loads issued in an iteration are still in registers when the next
  // begins while the previous iteration's are being stored, so each
  // iteration ends in a register move per loaded value (12 of the 94
  // instructions a stage of ResNet-50's float16 layer3 3x3 convolutions,
  // 72 stages); paired, the two sets alternate and each stage's buffer is
  // a constant (79 a stage). Only for loops longer than ptxas unrolls
  // whole (up to about 40 stages: layer2's 39 took 4.5 instructions an
  // HMMA unrolled, 8.6 paired), and not for float32 thread tiles, whose
  // few carried registers beside 256-1024 FFMA a stage gained 2% in all
  // and lost in some.
  bool paired = tensorCores && stages > kStagesPtxasUnrolls;
  int64_t perIteration = paired ? 2 : 1;
  // An odd count's first stage comes before the loop, from buffer 0.
  SmallVector<Value> carried(inits);
  int64_t begin = paired ? stages % 2 : 0;
  if (begin == 1)
    carried = emitStage(c(0), c(0), carried);
  auto loop =
      scf::ForOp::create(b, loc, c(begin), c(stages), c(perIteration), carried);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value first = loop.getInductionVar();
  if (!paired) {
    carried = emitStage(first, arith::RemUIOp::create(b, loc, first, c(2)),
                        loop.getRegionIterArgs());
  } else {
    carried = emitStage(first, c(begin), loop.getRegionIterArgs());
    carried = emitStage(arith::AddIOp::create(b, loc, first, c(1)),
                        c(1 - begin), carried);
  }
  scf::YieldOp::create(b, loc, carried);
  return loop.getResults().take_front(accs.size());
}

Value OutputBlock::stageBuffer(OpBuilder &b, Location loc, Value pair,
                               Value which) {
  auto type = cast<MemRefType>(pair.getType());
  SmallVector<OpFoldResult> offsets = {which, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(1)),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      type.getShape().drop_front(), type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType), pair,
                                   offsets, sizes, strides);
}

bool OutputBlock::stageCopiesAsync(unsigned input, int64_t stageK,
                                   int64_t threads, bool kMajor) {
  int64_t run = stageRun(input, stageK);
  int64_t runs = (input == 0 ? tileM : tileN) * stageK / run;
  return run * loops.operandType.getIntOrFloatBitWidth() / 8 == 16 &&
         operandContiguousAlongTile(input) == kMajor && runs % threads == 0;
}

SmallVector<Value>
OutputBlock::issueAsyncStageCopies(OpBuilder &b, Location loc, unsigned input,
                                   const WindowValues &window, Value k0,
                                   int64_t stageK, Value thread,
                                   int64_t threads, Value shared, bool kMajor) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t run = stageRun(input, stageK);
  int64_t runs = (input == 0 ? tileM : tileN) * stageK / run;
  OpOperand *operand = contraction.getDpsInputOperand(input);
  forgetUnreadStores(operand->get());
  AffineMap map = contraction.getMatchingIndexingMap(operand);
  Value origin = stageOrigin(b, loc, input, k0, window);
  Value source = origin ? origin : operand->get();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  SmallVector<Value> tokens;
  for (int64_t i = 0; i < runs / threads; ++i) {
    auto [tileIndex, k] =
        stagePlace(b, loc, input, thread, i, threads, run, stageK);
    SmallVector<std::pair<int64_t, Value>> at =
        tileAt(b, loc, input, runStart(b, loc, input, tileIndex, run));
    auto [kAt, valid] = runK(
        b, loc, input,
        origin ? k : arith::AddIOp::create(b, loc, k0, k).getResult(), run);
    at.push_back({loops.k, kAt});
    if (!origin)
      llvm::append_range(at, window);
    GlobalRead read = readAt(b, loc, input, source, indicesAt(b, loc, map, at));
    // Past a padded K, and in a padded input's padding, the copy reads no
    // source bytes and zero-fills.
    Value sourceElements;
    if (Value copied = bothValid(b, loc, valid, read.valid))
      sourceElements = arith::SelectOp::create(b, loc, copied, c(run), c(0));
    Value row = kMajor ? k : tileIndex, column = kMajor ? tileIndex : k;
    if (stageSwizzles(input, stageK, kMajor))
      column = swizzledColumn(b, loc, shared, row, column);
    if (coreMatrixStages) {
      row = coreMatrixRow(b, loc, input, stageK, kMajor, tileIndex, k);
      column = c(0);
    }
    // A copy of no bytes reads nothing, wherever it points (as CUTLASS's
    // zero-filling copies rely on): no select on its address, which the
    // device can then step by the stage's offset alone.
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, shared, ValueRange{row, column}, read.memref,
        read.valid ? read.unclampedIndices : read.indices, b.getIndexAttr(run),
        sourceElements, /*bypassL1=*/b.getUnitAttr()));
  }
  return tokens;
}

int64_t OutputBlock::asyncStagesAhead(int64_t stages, int64_t buffers,
                                      int64_t matrixGroupsInFlight) {
  if (buffers >= stages)
    return stages;
  return buffers - 1 - matrixGroupsInFlight;
}

ValueRange OutputBlock::emitAsyncStagedReductionLoop(
    OpBuilder &b, Location loc, int64_t stageK, ValueRange accs, Value thread,
    int64_t threads, std::array<bool, 2> kMajor, int64_t buffers,
    StageCompute compute, int64_t matrixGroupsInFlight) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t stages = stageCount(stageK);
  // Whether a buffer is refilled: where every stage has one of its own,
  // all are copied before the loop and the iterations copy nothing.
  bool refills = stages > buffers;
  assert((!refills || buffers >= 2 + matrixGroupsInFlight) &&
         "one stage in flight while another is computed");
  // Stages whose copies fly while one is computed (and, with a matrix
  // group in flight, another is still read).
  int64_t ahead = asyncStagesAhead(stages, buffers, matrixGroupsInFlight);
  Value setA = allocateStages(b, loc, 0, stageK, kMajor[0], buffers,
                              stageSwizzles(0, stageK, kMajor[0]));
  Value setB = allocateStages(b, loc, 1, stageK, kMajor[1], buffers,
                              stageSwizzles(1, stageK, kMajor[1]));
  // Copies of both operands' shares of `stage` into buffer `which`, as one
  // group; its token. Every iteration commits one group, so that the wait
  // counts stay the same: past the last stage an empty one (a branch the
  // whole block takes alike; copying the last stage again would read
  // global memory for nothing, 2.5x the copies when K has 2 stages of a
  // 4-buffer pipeline).
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto copyStageAt = [&](const std::pair<Value, WindowValues> &position,
                         Value which) -> Value {
    auto &[k0, window] = position;
    SmallVector<Value> tokens =
        issueAsyncStageCopies(b, loc, 0, window, k0, stageK, thread, threads,
                              stageBuffer(b, loc, setA, which), kMajor[0]);
    llvm::append_range(
        tokens,
        issueAsyncStageCopies(b, loc, 1, window, k0, stageK, thread, threads,
                              stageBuffer(b, loc, setB, which), kMajor[1]));
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  auto copyStage = [&](Value stage, Value which) -> Value {
    return copyStageAt(stageAt(b, loc, stage, stageK), which);
  };
  auto emptyGroup = [&]() -> Value {
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                   ValueRange{});
  };
  // `position`: the stage's, carried by the loop; else computed from it.
  auto issueStage = [&](Value stage, Value which,
                        ValueRange position = {}) -> Value {
    if (std::optional<int64_t> known = getConstantIntValue(stage))
      return *known < stages ? copyStage(stage, which) : emptyGroup();
    auto group = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, stage,
                              c(stages)),
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc,
                               position.empty()
                                   ? copyStage(stage, which)
                                   : copyStageAt(unpackStage(position), which));
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, emptyGroup());
        });
    return group.getResult(0);
  };
  Value newest;
  for (int64_t s = 0; s < ahead; ++s)
    newest = issueStage(c(s), c(s));
  // The loop carries the accumulators, the newest group's token, and
  // maybe the position of the stage it copies first (`ahead`;
  // carriesStagePosition).
  SmallVector<Value> inits(accs);
  inits.push_back(newest);
  if (refills && carriesStagePosition(stages, /*tensorCores=*/true))
    llvm::append_range(inits, packStage(stageAt(b, loc, c(ahead), stageK)));
  size_t tokenAt = accs.size();
  size_t positionSize = inits.size() - tokenAt - 1;
  // The buffers of the stage computed and of the one copied: the stage
  // modulo `buffers` (an AND for a power of two), or carried by the loop
  // and wrapped (a division by 5 costs a dozen instructions a stage).
  // (As 32-bit integers: an index is 64 bits on the GPU.) Without refills
  // the stage is its buffer.
  bool carriesBuffers = refills && !llvm::isPowerOf2_64(buffers);
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  if (carriesBuffers) {
    inits.push_back(i32(0));
    inits.push_back(i32(ahead % buffers));
  }
  auto loop = scf::ForOp::create(b, loc, c(0), c(stages), c(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value stage = loop.getInductionVar();
    ValueRange iterArgs = loop.getRegionIterArgs();
    ValueRange aheadPosition = iterArgs.slice(tokenAt + 1, positionSize);
    // This thread's copies of the stage have landed (the groups of the
    // ahead - 1 stages after it may still fly); after the barrier
    // everyone's have, and nobody still reads the buffer of stage s - 1
    // (s - 2 with a matrix group in flight), which is refilled next.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, iterArgs[tokenAt],
                                     b.getI32IntegerAttr(ahead - 1));
    // wgmma reads the stage through the async proxy: this thread's
    // copies (generic proxy writes) are made visible to it before the
    // barrier publishes them.
    if (coreMatrixStages)
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);
    auto toIndex = [&](Value v) -> Value {
      return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
    };
    Value which = !refills ? stage
                  : carriesBuffers
                      ? toIndex(iterArgs[iterArgs.size() - 2])
                      : arith::RemUIOp::create(b, loc, stage, c(buffers));
    Value group;
    if (refills) {
      Value refilled = arith::AddIOp::create(b, loc, stage, c(ahead));
      Value refilledWhich =
          carriesBuffers ? toIndex(iterArgs.back())
                         : arith::RemUIOp::create(b, loc, refilled, c(buffers));
      group = issueStage(refilled, refilledWhich, aheadPosition);
    } else {
      // Keeps one commit per iteration, so that the wait counts stay.
      group = emptyGroup();
    }
    SmallVector<Value> next =
        compute(b, stageBuffer(b, loc, setA, which),
                stageBuffer(b, loc, setB, which), iterArgs.take_front(tokenAt));
    next.push_back(group);
    if (!aheadPosition.empty())
      llvm::append_range(next, nextStage(b, loc, aheadPosition, stageK));
    if (carriesBuffers)
      for (Value buffer : iterArgs.take_back(2)) {
        Value following = arith::AddIOp::create(b, loc, buffer, i32(1));
        next.push_back(arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, following,
                                  i32(buffers)),
            i32(0), following));
      }
    scf::YieldOp::create(b, loc, next);
  }
  // No copy is still in flight when the block's threads finish, and the
  // accumulators are final before the epilogue reads them.
  nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResult(tokenAt),
                                   b.getI32IntegerAttr(0));
  if (matrixGroupsInFlight)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return loop.getResults().take_front(tokenAt);
}

Value OutputBlock::loadOperand(OpBuilder &b, Location loc, unsigned input,
                               Value tileIndex, Value k,
                               const WindowValues &window, Value origin) {
  OpOperand *operand = contraction.getDpsInputOperand(input);
  forgetUnreadStores(operand->get());
  AffineMap map = contraction.getMatchingIndexingMap(operand);
  SmallVector<std::pair<int64_t, Value>> at = tileAt(b, loc, input, tileIndex);
  at.push_back({loops.k, clampK(b, loc, k)});
  llvm::append_range(at, window);
  GlobalRead read = readAt(b, loc, input, origin ? origin : operand->get(),
                           indicesAt(b, loc, map, at));
  Value element = memref::LoadOp::create(b, loc, read.memref, read.indices);
  if (Value valid = bothValid(b, loc, kValid(b, loc, k), read.valid))
    element = zeroUnless(b, loc, valid, element);
  return element;
}

/// Whether `expr` is a sum of loop terms and a constant (no mod or
/// division): then it splits into the parts of any two sets of loops.
static bool isLinear(AffineExpr expr) {
  bool linear = true;
  expr.walk([&](AffineExpr e) {
    if (e.getKind() == AffineExprKind::Mod ||
        e.getKind() == AffineExprKind::FloorDiv ||
        e.getKind() == AffineExprKind::CeilDiv)
      linear = false;
  });
  return linear;
}

Value OutputBlock::stageOrigin(OpBuilder &b, Location loc, unsigned input,
                               Value k0, const WindowValues &window) {
  if (loops.window.empty() || validK != tileK)
    return Value();
  OpOperand *operand = contraction.getDpsInputOperand(input);
  AffineMap map = contraction.getMatchingIndexingMap(operand);
  if (!llvm::all_of(map.getResults(), isLinear))
    return Value();
  MLIRContext *context = b.getContext();
  // The loops that stay fixed through a stage: K (at its offset) and the
  // window's; every other loop reads as 0 here, and these as 0 in the
  // loads from the origin.
  SmallVector<std::pair<int64_t, Value>> stageLoops(window);
  stageLoops.push_back({loops.k, k0});
  SmallVector<AffineExpr> others(map.getNumDims(),
                                 getAffineConstantExpr(0, context));
  for (auto [loop, value] : stageLoops)
    others[loop] = getAffineDimExpr(loop, context);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> loopValues(map.getNumDims(), zero);
  for (auto [loop, value] : stageLoops)
    loopValues[loop] = value;
  Value source = operand->get();
  auto type = cast<MemRefType>(source.getType());
  SmallVector<OpFoldResult> offsets, sizes;
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  // The largest offset of each dim over the stages (K at 0: a padded
  // input's K dim is not padded), for readAt's window masks.
  SmallVector<AffineExpr> lastWindow(map.getNumDims(),
                                     getAffineConstantExpr(0, context));
  for (int64_t loop : loops.window)
    lastWindow[loop] = getAffineConstantExpr(loops.ranges[loop] - 1, context);
  SmallVector<int64_t> largestOffsets;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    // The stage's part of the index, less the constant (the loads from
    // the origin keep that).
    AffineExpr stagePart = simplifyAffineExpr(
        expr.replaceDims(others) -
            expr.replaceDims(SmallVector<AffineExpr>(
                map.getNumDims(), getAffineConstantExpr(0, context))),
        map.getNumDims(), 0);
    OpFoldResult extent =
        type.isDynamicDim(dim)
            ? OpFoldResult(memref::DimOp::create(b, loc, source, dim))
            : b.getIndexAttr(type.getDimSize(dim));
    auto largest = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
        stagePart.replaceDims(lastWindow), map.getNumDims(), 0));
    largestOffsets.push_back(largest && !stagePart.isFunctionOfDim(loops.k)
                                 ? largest.getValue()
                                 : -1);
    if (auto constant = dyn_cast<AffineConstantExpr>(stagePart);
        constant && constant.getValue() == 0) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(extent);
      continue;
    }
    Value offset = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, stagePart), loopValues);
    offsets.push_back(offset);
    sizes.push_back(
        arith::SubIOp::create(
            b, loc, getValueOrCreateConstantIndexOp(b, loc, extent), offset)
            .getResult());
  }
  auto origin =
      memref::SubViewOp::create(b, loc, source, offsets, sizes, strides);
  originLargestOffsets[origin.getResult()] = largestOffsets;
  return origin;
}

SmallVector<int64_t, 2> OutputBlock::stageBufferShape(unsigned input,
                                                      int64_t stageK,
                                                      bool kMajor,
                                                      bool swizzled) const {
  if (coreMatrixStages) {
    int64_t perRow = 16 / (loops.operandType.getIntOrFloatBitWidth() / 8);
    int64_t slowExtent = kMajor ? stageK : (input == 0 ? tileM : tileN);
    return {slowExtent / 8 * coreMatrixSpacing(input, stageK, kMajor).slow,
            perRow};
  }
  int64_t pad =
      swizzled ? 0 : 16 / (loops.operandType.getIntOrFloatBitWidth() / 8);
  int64_t extent = input == 0 ? tileM : tileN;
  if (kMajor)
    return {stageK, extent + pad};
  return {extent, stageK + pad};
}

bool OutputBlock::stageSwizzles(unsigned input, int64_t stageK,
                                bool kMajor) const {
  if (coreMatrixStages)
    return false;
  int64_t rowBytes = stageBufferShape(input, stageK, kMajor, true)[1] *
                     loops.operandType.getIntOrFloatBitWidth() / 8;
  return rowBytes == 32 || rowBytes == 64;
}

bool OutputBlock::registerStagesSwizzle(unsigned input, int64_t stageK,
                                        bool kMajor) {
  int64_t runBytes =
      stageRun(input, stageK) * loops.operandType.getIntOrFloatBitWidth() / 8;
  return stageSwizzles(input, stageK, kMajor) && runBytes == 16 &&
         operandContiguousAlongTile(input) == kMajor;
}

Value OutputBlock::swizzledColumn(OpBuilder &b, Location loc, Value shared,
                                  Value row, Value column) {
  auto type = cast<MemRefType>(shared.getType());
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  int64_t rowBytes = type.getShape().back() * elementBytes;
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Rows of 32 or 64 bytes: 4 or 2 of them share a 128-byte line of
  // banks; the line's rows take their 16-byte chunks in XOR-permuted
  // orders, so that 8 rows' same chunk (an ldmatrix matrix) and a line's
  // whole rows (8 lanes' 16-byte copies) both cover all 32 banks.
  int64_t chunks = rowBytes / 16, rowsPerLine = 128 / rowBytes;
  Value permutation = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, row, c(rowsPerLine)),
          c(chunks)),
      c(16 / elementBytes));
  return arith::XOrIOp::create(b, loc, column, permutation);
}

OutputBlock::CoreMatrixSpacing
OutputBlock::coreMatrixSpacing(unsigned input, int64_t stageK,
                               bool kMajor) const {
  int64_t perRow = 16 / (loops.operandType.getIntOrFloatBitWidth() / 8);
  int64_t extent = input == 0 ? tileM : tileN;
  // Runs of 16 bytes along the contiguous dim: consecutive threads copy
  // consecutive ones (stagePlace), so the 8 copies of a wavefront are
  // `runs` core matrices adjacent along that dim (at most 8) times
  // 8 / runs consecutive rows of them. A row's 16 bytes fall in banks
  // 4 (place in its matrix) .. +3 plus the matrix's start: spacing the
  // adjacent matrices 8 + 8 / runs rows apart (mod 8) gives each copy
  // of the wavefront its own 4 banks.
  int64_t runsPerRow = (kMajor ? extent : stageK) / perRow;
  int64_t runs = std::min<int64_t>(runsPerRow, 8);
  int64_t fast = 8 + (8 / runs) % 8;
  // The groups of 8 rows: past the last matrix of a row, a multiple of 8
  // (a wavefront never spans two groups).
  int64_t slow = llvm::alignTo((runsPerRow - 1) * fast + 8, 8);
  return {fast, slow};
}

Value OutputBlock::coreMatrixRow(OpBuilder &b, Location loc, unsigned input,
                                 int64_t stageK, bool kMajor, Value tileIndex,
                                 Value k) const {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t perRow = 16 / (loops.operandType.getIntOrFloatBitWidth() / 8);
  // A core matrix is 8 rows of 16 bytes: K-major, 8 tile indices' runs
  // along K; MN-major, 8 k's runs along the tile.
  Value along = kMajor ? tileIndex : k, across = kMajor ? k : tileIndex;
  CoreMatrixSpacing spacing = coreMatrixSpacing(input, stageK, kMajor);
  Value group = arith::DivUIOp::create(b, loc, across, c(8));
  Value chunk = arith::DivUIOp::create(b, loc, along, c(perRow));
  Value matrixRow = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, group, c(spacing.slow)),
      arith::MulIOp::create(b, loc, chunk, c(spacing.fast)));
  return arith::AddIOp::create(b, loc, matrixRow,
                               arith::RemUIOp::create(b, loc, across, c(8)));
}

OutputBlock::CoreMatrixStrides
OutputBlock::coreMatrixStrides(unsigned input, int64_t stageK,
                               bool kMajor) const {
  CoreMatrixSpacing spacing = coreMatrixSpacing(input, stageK, kMajor);
  // The contiguous dim's spacing is K's for a K-major operand, M's or N's
  // for an MN-major one.
  if (kMajor)
    return {16 * spacing.slow, 16 * spacing.fast};
  return {16 * spacing.fast, 16 * spacing.slow};
}

int64_t OutputBlock::stageBufferBytes(unsigned input, int64_t stageK,
                                      bool kMajor, bool swizzled) const {
  SmallVector<int64_t, 2> shape =
      stageBufferShape(input, stageK, kMajor, swizzled);
  return shape[0] * shape[1] * loops.operandType.getIntOrFloatBitWidth() / 8;
}

int64_t OutputBlock::stageBytes(int64_t stageK, std::array<bool, 2> kMajor,
                                bool async) const {
  int64_t bytes = 0;
  for (unsigned input : {0u, 1u})
    bytes +=
        stageBufferBytes(input, stageK, kMajor[input],
                         async && stageSwizzles(input, stageK, kMajor[input]));
  return bytes;
}

Value OutputBlock::allocateStages(OpBuilder &b, Location loc, unsigned input,
                                  int64_t stageK, bool kMajor, int64_t buffers,
                                  bool swizzled) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<int64_t> shape = {buffers};
  llvm::append_range(shape, stageBufferShape(input, stageK, kMajor, swizzled));
  return memref::AllocOp::create(b, loc,
                                 MemRefType::get(shape, loops.operandType,
                                                 MemRefLayoutAttrInterface(),
                                                 space),
                                 b.getI64IntegerAttr(16));
}

Value OutputBlock::runStart(OpBuilder &b, Location loc, unsigned input,
                            Value tileIndex, int64_t run) {
  if (!operandContiguousAlongTile(input))
    return tileIndex;
  return input == 0 ? clampRow(b, loc, tileIndex, run)
                    : clampColumn(b, loc, tileIndex, run);
}

std::pair<Value, Value> OutputBlock::stagePlace(OpBuilder &b, Location loc,
                                                unsigned input, Value thread,
                                                int64_t share, int64_t threads,
                                                int64_t run, int64_t stageK) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t extent = input == 0 ? tileM : tileN;
  bool tileFastest = operandContiguousAlongTile(input);
  int64_t fastest = tileFastest ? extent : stageK;
  // Elements between a thread's consecutive shares.
  int64_t step = threads * run;
  Value first = arith::MulIOp::create(b, loc, thread, c(run));
  Value inner, outer;
  if (step % fastest == 0) {
    inner = arith::RemUIOp::create(b, loc, first, c(fastest));
    outer = arith::DivUIOp::create(b, loc, first, c(fastest));
    if (share > 0)
      outer = arith::AddIOp::create(b, loc, outer, c(share * step / fastest));
  } else {
    Value index = arith::AddIOp::create(b, loc, first, c(share * step));
    inner = arith::RemUIOp::create(b, loc, index, c(fastest));
    outer = arith::DivUIOp::create(b, loc, index, c(fastest));
  }
  return tileFastest ? std::pair(inner, outer) : std::pair(outer, inner);
}

SmallVector<Value> OutputBlock::loadStageShare(OpBuilder &b, Location loc,
                                               unsigned input,
                                               const WindowValues &window,
                                               Value k0, int64_t stageK,
                                               Value thread, int64_t threads) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t run = stageRun(input, stageK);
  int64_t runs = (input == 0 ? tileM : tileN) * stageK / run;
  Type type = loops.operandType;
  Type runType = run == 1 ? type : VectorType::get({run}, type);
  OpOperand *operand = contraction.getDpsInputOperand(input);
  AffineMap map = contraction.getMatchingIndexingMap(operand);
  Value origin = stageOrigin(b, loc, input, k0, window);
  Value source = origin ? origin : operand->get();
  const WindowValues &loadWindow = origin ? WindowValues() : window;
  auto load = [&](OpBuilder &b, int64_t i) -> Value {
    auto [tileIndex, k] =
        stagePlace(b, loc, input, thread, i, threads, run, stageK);
    Value kAt = origin ? k : arith::AddIOp::create(b, loc, k0, k).getResult();
    if (run == 1)
      return loadOperand(b, loc, input, tileIndex, kAt, loadWindow, origin);
    forgetUnreadStores(operand->get());
    SmallVector<std::pair<int64_t, Value>> at =
        tileAt(b, loc, input, runStart(b, loc, input, tileIndex, run));
    auto [kClamped, kValid] = runK(b, loc, input, kAt, run);
    at.push_back({loops.k, kClamped});
    llvm::append_range(at, loadWindow);
    GlobalRead read = readAt(b, loc, input, source, indicesAt(b, loc, map, at));
    Value values = vector::LoadOp::create(
        b, loc, cast<VectorType>(runType), read.memref, read.indices,
        /*nontemporal=*/false,
        llvm::MaybeAlign(run * type.getIntOrFloatBitWidth() / 8));
    // Past a padded K, in a padded input's padding.
    if (Value valid = bothValid(b, loc, kValid, read.valid))
      values = zeroUnless(b, loc, valid, values);
    return values;
  };
  SmallVector<Value> share;
  for (int64_t i = 0; i * threads < runs; ++i) {
    Value index = arith::AddIOp::create(b, loc, thread, c(i * threads));
    if ((i + 1) * threads <= runs) {
      share.push_back(load(b, i));
      continue;
    }
    // The last share, when the threads do not divide the slice: only the
    // first threads have a run left (the place of one past the slice is
    // out of the operand's bounds, so it is computed inside).
    Value inSlice = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          index, c(runs));
    auto guard = scf::IfOp::create(
        b, loc, inSlice,
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, load(b, i));
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(
              b, loc,
              arith::ConstantOp::create(b, loc, b.getZeroAttr(runType))
                  .getResult());
        });
    share.push_back(guard.getResult(0));
  }
  return share;
}

void OutputBlock::storeStageShare(OpBuilder &b, Location loc, unsigned input,
                                  int64_t stageK, Value thread, int64_t threads,
                                  Value shared, bool kMajor,
                                  ArrayRef<Value> share, bool swizzled) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t run = stageRun(input, stageK);
  int64_t runs = (input == 0 ? tileM : tileN) * stageK / run;
  // A run lies along the tile dim or along K in workgroup memory as it did
  // in global memory; when that is the buffer's contiguous dim it is one
  // vector store, else an element at a time.
  bool runAlongTile = operandContiguousAlongTile(input);
  bool contiguous = runAlongTile == kMajor;
  auto store = [&](OpBuilder &b, Value value, int64_t share) {
    auto [tileIndex, k] =
        stagePlace(b, loc, input, thread, share, threads, run, stageK);
    auto at = [&](int64_t i) -> SmallVector<Value> {
      Value t = tileIndex, kk = k;
      if (i > 0)
        (runAlongTile ? t : kk) =
            arith::AddIOp::create(b, loc, runAlongTile ? tileIndex : k, c(i));
      return kMajor ? SmallVector<Value>{kk, t} : SmallVector<Value>{t, kk};
    };
    if (run == 1) {
      memref::StoreOp::create(b, loc, value, shared, at(0));
    } else if (contiguous) {
      SmallVector<Value> start = at(0);
      if (swizzled)
        start[1] = swizzledColumn(b, loc, shared, start[0], start[1]);
      vector::StoreOp::create(
          b, loc, value, shared, start, /*nontemporal=*/false,
          llvm::MaybeAlign(run * loops.operandType.getIntOrFloatBitWidth() /
                           8));
    } else {
      for (int64_t i = 0; i < run; ++i)
        memref::StoreOp::create(
            b, loc, vector::ExtractOp::create(b, loc, value, i), shared, at(i));
    }
  };
  for (auto [i, value] : llvm::enumerate(share)) {
    Value index = arith::AddIOp::create(b, loc, thread, c(i * threads));
    if (int64_t(i + 1) * threads <= runs) {
      store(b, value, i);
      continue;
    }
    Value inSlice = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          index, c(runs));
    auto guard = scf::IfOp::create(b, loc, inSlice, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    store(b, value, i);
  }
}
