//===- Device.cpp - the emulated GPU: blocks of fibers --------------------===//
#include "Device.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <boost/context/protected_fixedsize_stack.hpp>

using namespace mlir;
using namespace kiln::emulator;

namespace kiln::emulator {
FiberScheduler scheduler;
ThreadBlock *currentBlock = nullptr;
std::string misalignedAccess;
std::vector<std::pair<const uint8_t *, size_t>> globalRanges, workgroupRanges;
std::string currentKernel;
std::vector<std::string> boundsMessages;
WorkgroupArena *workgroupArena = nullptr;
MemoryTraffic traffic;
} // namespace kiln::emulator

void FiberScheduler::run(int64_t count,
                         const std::function<void(int64_t)> &body) {
  // Kernel frames are small (registers spill into a few KiB of private
  // arrays); a guard page turns an overflow into a crash, not corruption.
  fibers::protected_fixedsize_stack stacks(256 * 1024);
  threads.clear();
  schedulers.clear();
  schedulers.resize(count);
  for (int64_t thread = 0; thread < count; ++thread)
    threads.emplace_back(std::allocator_arg, stacks,
                         [this, thread, &body](fibers::fiber &&back) {
                           schedulers[thread] = std::move(back);
                           body(thread);
                           return std::move(schedulers[thread]);
                         });
  for (int64_t running = count; running > 0;) {
    running = 0;
    reversed ^= flipPending;
    flipPending = false;
    for (int64_t i = 0; i < count; ++i) {
      int64_t thread = reversed ? count - 1 - i : i;
      if (!threads[thread])
        continue;
      currentThread = thread;
      threads[thread] = std::move(threads[thread]).resume();
      running += bool(threads[thread]);
    }
  }
}

void FiberScheduler::yield() {
  int64_t thread = currentThread;
  schedulers[thread] = std::move(schedulers[thread]).resume();
}

void kiln::emulator::noteMisaligned(const char *what, int64_t address,
                                    int64_t alignment) {
  if (misalignedAccess.empty())
    misalignedAccess = (llvm::Twine(what) + " at an address " +
                        llvm::Twine(address % alignment) + " bytes past a " +
                        llvm::Twine(alignment) + "-byte boundary")
                           .str();
}

bool kiln::emulator::withinOne(
    const std::vector<std::pair<const uint8_t *, size_t>> &ranges,
    const uint8_t *start, int64_t bytes) {
  return llvm::any_of(ranges, [&](const auto &range) {
    return start >= range.first && start + bytes <= range.first + range.second;
  });
}

extern "C" void kiln_emu_barrier() { currentBlock->barrier.arriveAndWait(); }

/// A bounds check failed: the access would fault or corrupt memory on a
/// GPU (and here), so the run ends with the check's message.
extern "C" void kiln_emu_out_of_bounds(int64_t check) {
  llvm::outs() << currentKernel
               << ": OUT OF BOUNDS: " << StringRef(boundsMessages[check]).trim()
               << "\n";
  llvm::outs().flush();
  std::_Exit(1);
}

/// gpu.shuffle xor over the whole warp: returns the bits lane
/// `lane ^ offset` passed.
extern "C" int32_t kiln_emu_shuffle_xor(int32_t bits, int32_t offset) {
  ThreadBlock &block = *currentBlock;
  int64_t thread = scheduler.current();
  int warp = thread / block.warpSize, lane = thread % block.warpSize;
  float *slot = &block.slots[size_t(thread) * kSlot];
  std::memcpy(slot, &bits, sizeof bits);
  Barrier &warpBarrier = *block.warpBarriers[warp];
  warpBarrier.arriveAndWait();
  int32_t partner;
  std::memcpy(
      &partner,
      &block.slots[size_t(warp * block.warpSize + (lane ^ offset)) * kSlot],
      sizeof partner);
  warpBarrier.arriveAndWait();
  return partner;
}

/// A global or workgroup-memory access of `bytes` at `address` by the
/// running GPU thread, at instrumented site `site`.
extern "C" void kiln_emu_access(int64_t site, int64_t address, int64_t bytes) {
  traffic.record(scheduler.current(), site, uint64_t(address), bytes);
}

void kiln::emulator::declareRuntimeFunction(ModuleOp module, StringRef name,
                                            TypeRange inputs,
                                            TypeRange results) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  func::FuncOp::create(b, module.getLoc(), name,
                       b.getFunctionType(inputs, results))
      .setPrivate();
}

void kiln::emulator::addRuntimeSymbols(llvm::orc::SymbolMap &symbols,
                                       llvm::orc::MangleAndInterner &interner,
                                       ArrayRef<RuntimeFunction> functions) {
  for (RuntimeFunction function : functions)
    symbols[interner(function.name)] = {
        llvm::orc::ExecutorAddr::fromPtr(function.address),
        llvm::JITSymbolFlags::Exported};
}

void kiln::emulator::declareDeviceRuntime(ModuleOp module) {
  Builder b(module.getContext());
  declareRuntimeFunction(module, "kiln_emu_barrier", {});
  declareRuntimeFunction(module, "kiln_emu_shuffle_xor",
                         {b.getI32Type(), b.getI32Type()}, {b.getI32Type()});
  declareRuntimeFunction(module, "kiln_emu_access",
                         {b.getI64Type(), b.getI64Type(), b.getI64Type()});
  declareRuntimeFunction(module, "kiln_emu_out_of_bounds", {b.getI64Type()});
}

void kiln::emulator::addDeviceSymbols(llvm::orc::SymbolMap &symbols,
                                      llvm::orc::MangleAndInterner &interner) {
  addRuntimeSymbols(symbols, interner,
                    {KILN_EMU_RUNTIME_FUNCTION(kiln_emu_barrier),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_shuffle_xor),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_access),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_out_of_bounds)});
}
