//===- Warpgroups.cpp - wgmma on the emulated device (sm_90a) -------------===//
//
// wgmma.mma_async reads both operands from workgroup memory through
// matrix descriptors (PTX ISA, "Matrix Descriptor Format", "Shared Memory
// Matrix Layout": the core-matrix layouts without swizzle); workgroup
// memory is one 256 KiB-aligned arena (WorkgroupArena) so that a
// descriptor's address bits decode. Computed when issued; what the device
// would do differently is checked instead: a cp.async into rows a wgmma
// not yet waited for reads, a wgmma reading what a cp.async wrote with no
// fence.proxy.async after it landed (ProxyFences.h), or starting on
// accumulators other instructions wrote with no wgmma.fence between
// (WgmmaFences.h).
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "KernelRewrite.h"
#include "WgmmaFences.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cstring>
#include <unordered_map>

using namespace mlir;
using namespace kiln::emulator;

namespace {

/// A wgmma's accumulators per thread, at most (m64n256: 128).
constexpr int64_t kWgmmaScratch = 128;

/// Set by a wgmma whose descriptors are not the same in every thread of
/// its warpgroup, that reads outside the workgroup buffers or asks for a
/// swizzle (none is generated), by a cp.async into what a wgmma in flight
/// reads, or by a wgmma never waited for; the first such.
std::string wgmmaFault;

/// wgmma operands in flight: the 16-byte rows of workgroup memory that
/// wgmma groups not yet waited for read (counted per instruction, as its
/// warpgroup's first thread issued it), and per warpgroup those
/// instructions' rows with their commit group (-1: not committed). A
/// cp.async may land as soon as it is issued, so one that writes such a
/// row is a race on the device (where the emulated copy lands only at its
/// wait, it would go unnoticed).
std::unordered_map<const uint8_t *, int> wgmmaReadRows;
struct PendingWgmma {
  int64_t group;
  std::vector<const uint8_t *> rows;
};
std::vector<std::vector<PendingWgmma>> pendingWgmmas;
std::vector<int64_t> committedWgmmaGroups;
/// Per thread, whether a wgmma may start on its accumulators: wgmma.fence
/// since the last wgmma, or accumulators passed on from it.
WgmmaRegisterOrder wgmmaRegisters;

/// The warpgroup's first thread stands for it in the bookkeeping above.
bool leadsWarpgroup(int64_t thread) {
  return thread % ThreadBlock::kWarpgroup == 0;
}

} // namespace

/// wgmma.fence: this thread's register accesses are ordered before the
/// wgmmas it issues next.
extern "C" void kiln_emu_wgmma_fence() {
  wgmmaRegisters.fenced(scheduler.current());
}

/// wgmma.commit_group: the warpgroup's uncommitted instructions become
/// its newest group.
extern "C" void kiln_emu_wgmma_commit() {
  int64_t thread = scheduler.current();
  if (!leadsWarpgroup(thread))
    return;
  int64_t group = thread / ThreadBlock::kWarpgroup;
  commitGroup(pendingWgmmas[group], committedWgmmaGroups[group]);
}

/// wgmma.wait_group `keep`: every committed group but the `keep` newest
/// has finished reading its operands.
extern "C" void kiln_emu_wgmma_wait(int64_t keep) {
  int64_t thread = scheduler.current();
  if (!leadsWarpgroup(thread))
    return;
  int64_t group = thread / ThreadBlock::kWarpgroup;
  waitGroups(pendingWgmmas[group], committedWgmmaGroups[group], keep,
             [](const PendingWgmma &mma) {
               for (const uint8_t *row : mma.rows)
                 if (--wgmmaReadRows[row] == 0)
                   wgmmaReadRows.erase(row);
             });
}

/// wgmma.mma_async m64nNk16 with both operands in workgroup memory:
/// `scratch` holds this thread's N/2 float32 accumulators and receives D.
/// `flags`: bit 0 A is M-major (imm-trans-a), bit 1 B is N-major
/// (imm-trans-b), bit 2 bfloat16 operands (else float16). PTX ISA
/// ("Matrix Descriptor Format", "Shared Memory Matrix Layout", canonical
/// layouts without swizzling, T = 8 16-bit elements a 16-byte row):
/// descriptor bits 0-13 the start address >> 4, 16-29 the leading
/// dimension byte offset >> 4 (LBO), 32-45 the stride dimension byte
/// offset >> 4 (SBO), 62-63 the swizzle mode; element (mn, k) of a
/// K-major operand at start + (mn / 8) SBO + (k / 8) LBO + 16 (mn % 8) +
/// 2 (k % 8), of an MN-major one at start + (mn / 8) SBO + (k / 8) LBO +
/// 16 (k % 8) + 2 (mn % 8). D: warp w of the warpgroup holds rows 16w + g
/// and 16w + g + 8 (g = lane / 4, t = lane % 4), d[4c + 2i + j] at row
/// 16w + g + 8i, column 8c + 2t + j. Computed when issued (no other
/// thread's registers are involved); that it is waited for before the
/// registers or the buffers are touched again is the code generator's
/// (wgmma.wait_group 0 ends each stage).
extern "C" void kiln_emu_wgmma(float *, float *scratch, int64_t offset, int64_t,
                               int64_t, int64_t descriptorA,
                               int64_t descriptorB, int64_t n, int64_t flags) {
  ThreadBlock &block = *currentBlock;
  int64_t thread = scheduler.current();
  int64_t group = thread / ThreadBlock::kWarpgroup;
  if (group >= int64_t(block.warpgroupBarriers.size())) {
    noteWarpgroupFault(
        "a wgmma in a block whose threads are no whole warpgroups");
    return;
  }
  // Every thread of the warpgroup gives the same descriptors (PTX: "must
  // be same across all the warps").
  float *slot = &block.slots[size_t(thread) * kSlot];
  std::memcpy(slot, &descriptorA, 8);
  std::memcpy(slot + 2, &descriptorB, 8);
  Barrier &groupBarrier = *block.warpgroupBarriers[group];
  groupBarrier.arriveAndWait();
  const float *first =
      &block.slots[size_t(group * ThreadBlock::kWarpgroup) * kSlot];
  if (std::memcmp(first, slot, 16) != 0)
    noteWarpgroupFault("wgmma descriptors that differ within a warpgroup");
  groupBarrier.arriveAndWait();

  bool bf16 = flags & 4;
  // The 16-byte rows this instruction reads (its warpgroup's first thread
  // records them, reading every element of A and B once).
  if (leadsWarpgroup(thread)) {
    llvm::SmallPtrSet<const uint8_t *, 32> rows;
    auto addRows = [&](int64_t descriptor, bool mnMajor, int64_t extent) {
      auto field = [&](int shift) {
        return ((descriptor >> shift) & 0x3FFF) << 4;
      };
      for (int64_t mn = 0; mn < extent; ++mn)
        for (int64_t k = 0; k < 16; ++k)
          rows.insert(workgroupArena->base + field(0) + (mn / 8) * field(32) +
                      (k / 8) * field(16) + 16 * (mnMajor ? k % 8 : mn % 8));
    };
    addRows(descriptorA, flags & 1, 64);
    addRows(descriptorB, flags & 2, n);
    PendingWgmma &mma = pendingWgmmas[group].emplace_back();
    mma.group = -1;
    for (const uint8_t *row : rows) {
      mma.rows.push_back(row);
      ++wgmmaReadRows[row];
      if (!asyncProxySees(row))
        noteWarpgroupFault("a wgmma reads workgroup memory that a cp.async "
                           "wrote with no fence.proxy.async by its thread "
                           "after it landed");
    }
  }
  auto element = [&](int64_t descriptor, bool mnMajor, int64_t mn,
                     int64_t k) -> double {
    auto field = [&](int shift) {
      return ((descriptor >> shift) & 0x3FFF) << 4;
    };
    if ((uint64_t(descriptor) >> 62) != 0) {
      noteWarpgroupFault("a wgmma descriptor with a swizzle mode");
      return 0;
    }
    int64_t at =
        field(0) + (mn / 8) * field(32) + (k / 8) * field(16) +
        (mnMajor ? 16 * (k % 8) + 2 * (mn % 8) : 16 * (mn % 8) + 2 * (k % 8));
    const uint8_t *address = workgroupArena->base + at;
    if (!withinOne(workgroupRanges, address, 2)) {
      noteWarpgroupFault("a wgmma reads outside the workgroup buffers");
      return 0;
    }
    uint16_t raw;
    std::memcpy(&raw, address, 2);
    const llvm::fltSemantics &semantics =
        bf16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
    return llvm::APFloat(semantics, llvm::APInt(16, raw)).convertToDouble();
  };
  int64_t warp = (thread / 32) % 4, lane = thread % 32;
  int64_t g = lane / 4, t = lane % 4;
  float inputs[kWgmmaScratch];
  std::memcpy(inputs, scratch + offset, size_t(n / 2) * sizeof(float));
  for (int64_t v = 0; v < n / 2; ++v) {
    int64_t row = 16 * warp + g + 8 * ((v % 4) / 2);
    int64_t column = 8 * (v / 4) + 2 * t + v % 2;
    double sum = scratch[offset + v];
    for (int64_t k = 0; k < 16; ++k)
      sum += element(descriptorA, flags & 1, row, k) *
             element(descriptorB, flags & 2, column, k);
    scratch[offset + v] = float(sum);
  }
  std::string unordered =
      wgmmaRegisters.issue(thread, inputs, scratch + offset, n / 2);
  if (!unordered.empty())
    noteWarpgroupFault(unordered.c_str());
}

namespace {

/// nvvm.wgmma.mma_async m64nNk16 of float16 or bfloat16 into float32
/// (kiln-contract-with-matrix-cores with wgmma) as a call of
/// kiln_emu_wgmma: the accumulator struct's elements through a scratch
/// buffer.
LogicalResult emulateWgmma(OpBuilder &b, NVVM::WgmmaMmaAsyncOp mma) {
  Location loc = mma.getLoc();
  NVVM::MMAShapeAttr shape = mma.getShape();
  NVVM::WGMMATypes operand = mma.getTypeA();
  if (shape.getM() != 64 || shape.getK() != 16 || mma.getTypeB() != operand ||
      (operand != NVVM::WGMMATypes::f16 && operand != NVVM::WGMMATypes::bf16) ||
      mma.getTypeD() != NVVM::WGMMATypes::f32 ||
      mma.getScaleD() != NVVM::WGMMAScaleOut::one ||
      mma.getScaleA() != NVVM::WGMMAScaleIn::one ||
      mma.getScaleB() != NVVM::WGMMAScaleIn::one ||
      2 * kWgmmaScratch < shape.getN())
    return mma.emitError("only wgmma.mma_async m64nNk16 of float16 or "
                         "bfloat16 into float32, unscaled, is emulated");
  auto f32 = b.getF32Type();
  Value scratch =
      memref::AllocaOp::create(b, loc, MemRefType::get({kWgmmaScratch}, f32));
  int64_t registers = shape.getN() / 2;
  auto at = [&](int64_t i) -> Value {
    return arith::ConstantIndexOp::create(b, loc, i);
  };
  for (int64_t i = 0; i < registers; ++i)
    memref::StoreOp::create(
        b, loc, LLVM::ExtractValueOp::create(b, loc, mma.getInouts(), i),
        scratch, ValueRange{at(i)});
  // layoutA col: A M-major; layoutB row: B N-major (imm-trans 1).
  int64_t flags = (mma.getLayoutA() == NVVM::MMALayout::col ? 1 : 0) |
                  (mma.getLayoutB() == NVVM::MMALayout::row ? 2 : 0) |
                  (operand == NVVM::WGMMATypes::bf16 ? 4 : 0);
  func::CallOp::create(
      b, loc, "kiln_emu_wgmma", TypeRange{},
      ValueRange{scratch, mma.getDescriptorA(), mma.getDescriptorB(),
                 arith::ConstantIntOp::create(b, loc, shape.getN(), 64),
                 arith::ConstantIntOp::create(b, loc, flags, 64)});
  Value result = LLVM::UndefOp::create(b, loc, mma->getResult(0).getType());
  for (int64_t i = 0; i < registers; ++i)
    result = LLVM::InsertValueOp::create(
        b, loc, result,
        memref::LoadOp::create(b, loc, scratch, ValueRange{at(i)}), i);
  mma->getResult(0).replaceAllUsesWith(result);
  mma->erase();
  return success();
}

} // namespace

void kiln::emulator::resetWarpgroups(int64_t threads) {
  wgmmaFault.clear();
  wgmmaReadRows.clear();
  wgmmaRegisters.reset(threads);
  pendingWgmmas.assign(threads / ThreadBlock::kWarpgroup, {});
  committedWgmmaGroups.assign(threads / ThreadBlock::kWarpgroup, 0);
}

void kiln::emulator::startWarpgroupBlock(int64_t thread) {
  wgmmaRegisters.startBlock(thread);
}

bool kiln::emulator::warpgroupReadsRow(const uint8_t *row) {
  return wgmmaReadRows.count(row) != 0;
}

void kiln::emulator::noteWarpgroupFault(const char *fault) {
  if (wgmmaFault.empty())
    wgmmaFault = fault;
}

std::string kiln::emulator::warpgroupFault() {
  if (!wgmmaReadRows.empty())
    noteWarpgroupFault("a wgmma not waited for before its kernel ends");
  return wgmmaFault;
}

std::optional<LogicalResult> kiln::emulator::rewriteWarpgroupOp(OpBuilder &b,
                                                                Operation *op) {
  Location loc = op->getLoc();
  if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
    // Ordering only (the emulated wgmma computes when issued), but
    // whether it was run is checked (WgmmaRegisterOrder).
    func::CallOp::create(b, loc, "kiln_emu_wgmma_fence", TypeRange{},
                         ValueRange{});
    op->erase();
    return success();
  }
  if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
    func::CallOp::create(b, loc, "kiln_emu_wgmma_commit", TypeRange{},
                         ValueRange{});
    op->erase();
    return success();
  }
  if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    func::CallOp::create(
        b, loc, "kiln_emu_wgmma_wait", TypeRange{},
        ValueRange{arith::ConstantIntOp::create(b, loc, wait.getGroup(), 64)});
    op->erase();
    return success();
  }
  if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
    return emulateWgmma(b, mma);
  return std::nullopt;
}

void kiln::emulator::declareWarpgroupRuntime(ModuleOp module) {
  Builder b(module.getContext());
  Type i64 = b.getI64Type();
  declareRuntimeFunction(
      module, "kiln_emu_wgmma",
      {MemRefType::get({kWgmmaScratch}, b.getF32Type()), i64, i64, i64, i64});
  declareRuntimeFunction(module, "kiln_emu_wgmma_fence", {});
  declareRuntimeFunction(module, "kiln_emu_wgmma_commit", {});
  declareRuntimeFunction(module, "kiln_emu_wgmma_wait", {i64});
}

void kiln::emulator::addWarpgroupSymbols(
    llvm::orc::SymbolMap &symbols, llvm::orc::MangleAndInterner &interner) {
  addRuntimeSymbols(symbols, interner,
                    {KILN_EMU_RUNTIME_FUNCTION(kiln_emu_wgmma),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_wgmma_fence),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_wgmma_commit),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_wgmma_wait)});
}
