//===- Device.h - the emulated GPU: blocks of fibers ------------*- C++ -*-===//
//
// kiln-emulate-gpu's device: the GPU threads of a block run as fibers
// (Boost.Context: each its own stack, switched in user space) on one OS
// thread, in a fixed order that flips at every block barrier, so that
// barriers and warp-wide instructions behave as on the device and runs
// are deterministic. The state of the kernel being emulated lives here,
// read by the runtime functions (kiln_emu_*) that the emulated kernel
// calls: the device's own (barriers, shuffles, bounds, memory traffic) in
// Device.cpp, and one file per instruction family: WarpMatrix.cpp
// (mma.sync, ldmatrix, MFMA), AsyncCopies.cpp (cp.async), Warpgroups.cpp
// (wgmma).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_EMULATEGPU_DEVICE_H
#define KILN_TOOLS_EMULATEGPU_DEVICE_H

#include "MemoryTraffic.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <boost/context/fiber.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::emulator {

namespace fibers = boost::context;

/// Runs the GPU threads of a block as fibers on the calling OS thread. A
/// fiber runs until it waits at a barrier, then the next one runs; the
/// order is fixed (deterministic runs) and flips at every block barrier.
class FiberScheduler {
public:
  /// Runs `body(thread)` for threads 0..count-1 to completion.
  void run(int64_t count, const std::function<void(int64_t)> &body);
  /// From inside a fiber: lets the others run until this one is resumed.
  void yield();
  /// The thread whose fiber runs now.
  int64_t current() const { return currentThread; }
  /// Reverses the order in which the fibers run from the next round on.
  void flipOrder() { flipPending = !flipPending; }

private:
  std::vector<fibers::fiber> threads;
  /// Per thread: where its fiber returns to when it yields.
  std::vector<fibers::fiber> schedulers;
  int64_t currentThread = 0;
  bool reversed = false, flipPending = false;
};

extern FiberScheduler scheduler;

/// A reusable barrier for `count` GPU threads (fibers). A block's barrier
/// flips the order the fibers run in when the last thread arrives.
class Barrier {
public:
  Barrier(int count, bool flipsOrder) : count(count), flipsOrder(flipsOrder) {}
  void arriveAndWait() {
    int generation = this->generation;
    if (++arrived == count) {
      arrived = 0;
      ++this->generation;
      if (flipsOrder)
        scheduler.flipOrder();
      return;
    }
    while (generation == this->generation)
      scheduler.yield();
  }

private:
  int count;
  bool flipsOrder;
  int arrived = 0, generation = 0;
};

/// Exchange slots of one lane for a warp-wide instruction: operands A
/// [0, 8), B [8, 12), C [12, 16), the result D [16, 20).
constexpr int kSlot = 20;

struct ThreadBlock {
  ThreadBlock(int threads, int warpSize)
      : threads(threads), warpSize(warpSize), barrier(threads, true),
        slots(size_t(threads) * kSlot) {
    for (int w = 0; w < threads / warpSize; ++w)
      warpBarriers.push_back(std::make_unique<Barrier>(warpSize, false));
    for (int g = 0; g < threads / kWarpgroup; ++g)
      warpgroupBarriers.push_back(std::make_unique<Barrier>(kWarpgroup, false));
  }
  /// Threads of an NVIDIA warpgroup (wgmma): 4 warps.
  static constexpr int kWarpgroup = 128;
  int threads, warpSize;
  Barrier barrier;
  std::vector<std::unique_ptr<Barrier>> warpBarriers, warpgroupBarriers;
  std::vector<float> slots;
};

/// The block being emulated.
extern ThreadBlock *currentBlock;

/// The first access whose address the GPU would refuse as misaligned (a
/// cp.async of N bytes at an address N does not divide, an ldmatrix row
/// not 16-byte aligned): "misaligned address" faults the context there,
/// while the host here does not care.
extern std::string misalignedAccess;
void noteMisaligned(const char *what, int64_t address, int64_t alignment);

/// The byte ranges of the kernel's buffers (global memory) and of its
/// workgroup buffers, for --check-bounds; set before a kernel runs.
extern std::vector<std::pair<const uint8_t *, size_t>> globalRanges,
    workgroupRanges;
/// Whether `bytes` from `start` lie within one of `ranges`.
bool withinOne(const std::vector<std::pair<const uint8_t *, size_t>> &ranges,
               const uint8_t *start, int64_t bytes);

/// The kernel being emulated and the messages of its bounds checks (the
/// cf.assert ops of generate-runtime-verification, by index).
extern std::string currentKernel;
extern std::vector<std::string> boundsMessages;

/// Commit groups of asynchronous operations (cp.async, wgmma): each of
/// `pending` has a `group`, -1 until committed. commit_group makes the
/// uncommitted ones the newest group of the `committed` so far.
template <typename Pending>
void commitGroup(std::vector<Pending> &pending, int64_t &committed) {
  for (Pending &op : pending)
    if (op.group < 0)
      op.group = committed;
  ++committed;
}

/// wait_group `keep`: every committed group but the `keep` newest
/// completes; `complete` runs for each of its operations, which then
/// leave `pending`.
template <typename Pending, typename Complete>
void waitGroups(std::vector<Pending> &pending, int64_t committed, int64_t keep,
                Complete complete) {
  int64_t limit = committed - keep;
  llvm::erase_if(pending, [&](const Pending &op) {
    if (op.group < 0 || op.group >= limit)
      return false;
    complete(op);
    return true;
  });
}

/// Workgroup buffers live in one arena whose start is aligned to 256 KiB,
/// as a block's shared memory is one window: a wgmma matrix descriptor
/// holds bits 4-17 of a shared-memory address, which here are an offset
/// into the arena.
struct WorkgroupArena {
  static constexpr size_t kSpan = size_t(1) << 18;
  uint8_t *base;
  size_t used = 0;
  WorkgroupArena()
      : base(static_cast<uint8_t *>(
            ::operator new(kSpan, std::align_val_t(kSpan)))) {}
  ~WorkgroupArena() { ::operator delete(base, std::align_val_t(kSpan)); }
  WorkgroupArena(const WorkgroupArena &) = delete;
  WorkgroupArena &operator=(const WorkgroupArena &) = delete;
  uint8_t *allocate(size_t bytes) {
    used = llvm::alignTo(used, 256);
    if (used + bytes > kSpan)
      llvm::report_fatal_error("workgroup buffers over 256 KiB");
    uint8_t *at = base + used;
    used += bytes;
    return at;
  }
};
/// The arena of the kernel being emulated.
extern WorkgroupArena *workgroupArena;

/// --memory-traffic: the accesses of the kernel being emulated.
extern MemoryTraffic traffic;

/// Declares runtime function `name` in `module` for the emulated kernel
/// to call.
void declareRuntimeFunction(mlir::ModuleOp module, llvm::StringRef name,
                            mlir::TypeRange inputs,
                            mlir::TypeRange results = {});
/// A runtime function the emulated kernel calls: its name and address
/// (KILN_EMU_RUNTIME_FUNCTION(kiln_emu_barrier)).
struct RuntimeFunction {
  const char *name;
  void *address;
};
#define KILN_EMU_RUNTIME_FUNCTION(function)                                    \
  ::kiln::emulator::RuntimeFunction {                                          \
    #function, reinterpret_cast<void *>(&function)                             \
  }
/// Adds `functions` to the JIT's symbols.
void addRuntimeSymbols(llvm::orc::SymbolMap &symbols,
                       llvm::orc::MangleAndInterner &interner,
                       llvm::ArrayRef<RuntimeFunction> functions);

/// The runtime functions of the device itself (barrier, shuffle, bounds
/// checks, memory traffic) and of each instruction family: declared in
/// the module of an emulated kernel, and their addresses for the JIT.
void declareDeviceRuntime(mlir::ModuleOp module);
void addDeviceSymbols(llvm::orc::SymbolMap &symbols,
                      llvm::orc::MangleAndInterner &interner);
void declareWarpMatrixRuntime(mlir::ModuleOp module);
void addWarpMatrixSymbols(llvm::orc::SymbolMap &symbols,
                          llvm::orc::MangleAndInterner &interner);
void declareAsyncCopyRuntime(mlir::ModuleOp module);
void addAsyncCopySymbols(llvm::orc::SymbolMap &symbols,
                         llvm::orc::MangleAndInterner &interner);
void declareWarpgroupRuntime(mlir::ModuleOp module);
void addWarpgroupSymbols(llvm::orc::SymbolMap &symbols,
                         llvm::orc::MangleAndInterner &interner);

/// cp.async's state, reset before a kernel of `threads` threads runs;
/// `checkBounds`: copies outside the kernel's buffers fail it;
/// `trackAsyncProxy`: landed copies are tracked until a proxy fence
/// (sm_90a, whose wgmma reads through the async proxy).
void resetAsyncCopies(int64_t threads, bool checkBounds, bool trackAsyncProxy);
/// Whether a cp.async of the kernel copied outside its buffers.
bool asyncCopiesOutOfBounds();
/// Whether the async proxy (wgmma) sees the 16-byte row at `row`.
bool asyncProxySees(const uint8_t *row);

/// wgmma's state, reset before a kernel of `threads` threads runs.
void resetWarpgroups(int64_t threads);
/// Thread `thread` starts a block: its accumulators are its own again.
void startWarpgroupBlock(int64_t thread);
/// Whether a wgmma not yet waited for reads the 16-byte row at `row`.
bool warpgroupReadsRow(const uint8_t *row);
/// The first wgmma fault of the kernel ("" for none; a wgmma still in
/// flight at its end counts).
std::string warpgroupFault();
/// Records `fault` as the kernel's wgmma fault unless one was.
void noteWarpgroupFault(const char *fault);

} // namespace kiln::emulator

#endif
