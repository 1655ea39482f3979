//===- kiln-emulate-gpu.cpp - run GPU kernels on the CPU, thread by thread ===//
//
// Checks the GPU code generation of tiled kernels without a GPU. For each
// `kiln.kernel` function of the input (bufferized and tiled, as
// kiln-contract-with-matrix-cores and kiln-map-kernels-to-gpu get them),
// two versions are JIT-compiled for this CPU:
//
//   reference: the same function with its forall run as loops;
//   emulated:  the GPU kernel pipeline's gpu.func (matrix instructions,
//              lanes, workgroup memory, barriers), turned into a function of
//              (buffers, workgroup buffers, block id, thread id).
//
// Both run on the same pseudo-random buffers; the emulated kernel runs block
// after block, each GPU thread of a block a fiber (Boost.Context: its own
// stack, switched in user space), so that `gpu.barrier` and the warp-wide
// matrix instructions (which exchange fragments between lanes) behave as
// on the device. One OS thread runs them all, in a fixed order that flips
// at every block barrier: the same result on every run, and a missing
// barrier shows whichever way the data crosses between threads. Their
// semantics here are written from the PTX ISA (mma.sync m16n8k16 and m16n8k8
// TF32 fragment layouts, ldmatrix, cp.async landing at its wait, wgmma's matrix
// descriptors and core-matrix layouts, read from workgroup memory kept in
// one 256 KiB-aligned arena so that a descriptor's address bits decode;
// a cp.async into what a wgmma not yet waited for reads fails the kernel,
// as does a wgmma reading what a cp.async wrote with no fence.proxy.async
// by its thread after it landed: emulate-gpu/ProxyFences.h, or starting
// on accumulators other instructions wrote with no wgmma.fence between:
// emulate-gpu/WgmmaFences.h) and AMD's
// matrix instruction tables (v_mfma 16x16x16),
// independently of the code generator. Workgroup memory starts as NaN, so a
// read of a value no thread wrote shows up as a wrong result. Every buffer
// is compared afterwards; the tool fails when any differs by more than the
// tolerance. With --check-bounds (the default) every memref load and store
// of the emulated kernel is checked against its view
// (generate-runtime-verification) and every cp.async against the kernel's
// buffers: an access past a view that a wrong result would not show (a
// padded row's load, whose result is never stored) fails the run too.
//
//   kiln-emulate-gpu kernels.mlir --target=cuda [--allow-tf32]
//   kiln-emulate-gpu kernels.mlir --target=cuda:sm_90a   (wgmma)
//   kiln-emulate-gpu kernels.mlir --target=rocm
//
//===----------------------------------------------------------------------===//
#include "emulate-gpu/MemoryTraffic.h"
#include "emulate-gpu/ProxyFences.h"
#include "emulate-gpu/WgmmaFences.h"

#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Passes/Passes.h"
#include "kiln/Pipeline/CompileFlags.h"
#include "kiln/Pipeline/Pipeline.h"
#include "kiln/Target/CudaTarget.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/thread.h"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <unordered_map>

using namespace mlir;

static llvm::cl::OptionCategory toolCategory("kiln-emulate-gpu flags");
static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<kernels.mlir>"),
                                            llvm::cl::cat(toolCategory));
/// The target the kernels are emulated for (--target, --allow-tf32,
/// --workgroup-memory-limit, --wgmma-groups-in-flight: the compile flags of
/// CompileFlagSet::Target), described once in main().
static kiln::TargetDescription target;
static int64_t wgmmaGroupsInFlight = 1;
/// sm_90a: warpgroup matrix instructions, whose proxy fences and register
/// order the emulator checks.
static bool wgmma = false;
static llvm::cl::opt<bool> bufferize(
    "bufferize",
    llvm::cl::desc("Kernels are tiled tensor code (kiln-compile --compile-to="
                   "tiled): bufferize them as the GPU targets do first"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<int64_t> maxThreads(
    "max-threads",
    llvm::cl::desc("Skip kernels with more GPU threads than this, all blocks "
                   "together (each runs as a fiber here)"),
    llvm::cl::init(200000), llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool>
    dump("dump",
         llvm::cl::desc("Print the module of both functions before "
                        "lowering to LLVM"),
         llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> checkBounds(
    "check-bounds",
    llvm::cl::desc("Check every load and store of the emulated kernel "
                   "against its memref's bounds (generate-runtime-"
                   "verification: a violation aborts with the op) and every "
                   "cp.async against the buffers it copies between"),
    llvm::cl::init(true), llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> kernelFilter(
    "kernels",
    llvm::cl::desc("Emulate only the kernels whose names match this regular "
                   "expression (a few kernels of a full-size model)"),
    llvm::cl::init(""), llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> memoryTraffic(
    "memory-traffic",
    llvm::cl::desc("Count how each kernel's warps use global memory (32-byte "
                   "sectors per request against the bytes asked for) and "
                   "workgroup memory (wavefronts per request against the "
                   "conflict-free count), and print it after its result"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> memoryTrafficSites(
    "memory-traffic-sites",
    llvm::cl::desc("With --memory-traffic, also a line per load or store "
                   "that takes more sectors or wavefronts than its bytes "
                   "need, named by op and location"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<double> tolerance(
    "tolerance",
    llvm::cl::desc("Largest |emulated - reference| / (1 + |reference|)"),
    llvm::cl::init(1e-2), llvm::cl::cat(toolCategory));

//===----------------------------------------------------------------------===//
// The emulated device: blocks of fibers
//===----------------------------------------------------------------------===//

namespace {

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

FiberScheduler scheduler;

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
/// A wgmma's accumulators per thread, at most (m64n256: 128).
constexpr int64_t kWgmmaScratch = 128;

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

ThreadBlock *currentBlock = nullptr;

/// Which warp-wide instruction a kiln_emu_matrix call is.
enum MatrixKind : int64_t { kMmaF16 = 0, kMmaTf32 = 1, kMfma16 = 2 };

/// Computes this lane's D of one warp-wide matrix instruction from every
/// lane's A, B, C slots. Layouts (g = lane / 4, t = lane % 4):
///   mma.sync m16n8k16 (PTX ISA): a0,a1 A[g][2t+j]; a2,a3 A[g+8][2t+j];
///     a4,a5 A[g][2t+8+j]; a6,a7 A[g+8][2t+8+j]; b0,b1 B[2t+j][g];
///     b2,b3 B[2t+8+j][g]; c/d 0,1 at [g][2t+j], 2,3 at [g+8][2t+j].
///   mma.sync m16n8k8 TF32: a0 A[g][t], a1 A[g+8][t], a2 A[g][t+4],
///     a3 A[g+8][t+4]; b0 B[t][g], b1 B[t+4][g]; C/D as above.
///   v_mfma_f32_16x16x16 (wave 64, q = lane / 16, c = lane % 16):
///     a_i A[c][4q+i]; b_i B[4q+i][c]; c/d_i at [4q+i][c].
void computeMatrix(ThreadBlock &block, int lane0, int lane, MatrixKind kind) {
  const int rows = 16, cols = kind == kMfma16 ? 16 : 8;
  const int depth = kind == kMmaTf32 ? 8 : 16;
  float a[16][16] = {}, b[16][16] = {}, c[16][16] = {};
  int lanes = kind == kMfma16 ? 64 : 32;
  for (int l = 0; l < lanes; ++l) {
    const float *s = &block.slots[size_t(lane0 + l) * kSlot];
    int g = l / 4, t = l % 4, q = l / 16, col = l % 16;
    switch (kind) {
    case kMmaF16:
      for (int j = 0; j < 2; ++j) {
        a[g][2 * t + j] = s[j];
        a[g + 8][2 * t + j] = s[2 + j];
        a[g][2 * t + 8 + j] = s[4 + j];
        a[g + 8][2 * t + 8 + j] = s[6 + j];
        b[2 * t + j][g] = s[8 + j];
        b[2 * t + 8 + j][g] = s[10 + j];
        c[g][2 * t + j] = s[12 + j];
        c[g + 8][2 * t + j] = s[14 + j];
      }
      break;
    case kMmaTf32:
      a[g][t] = s[0];
      a[g + 8][t] = s[1];
      a[g][t + 4] = s[2];
      a[g + 8][t + 4] = s[3];
      b[t][g] = s[8];
      b[t + 4][g] = s[9];
      for (int j = 0; j < 2; ++j) {
        c[g][2 * t + j] = s[12 + j];
        c[g + 8][2 * t + j] = s[14 + j];
      }
      break;
    case kMfma16:
      for (int i = 0; i < 4; ++i) {
        a[col][4 * q + i] = s[i];
        b[4 * q + i][col] = s[8 + i];
        c[4 * q + i][col] = s[12 + i];
      }
      break;
    }
  }
  auto d = [&](int r, int n) {
    double sum = c[r][n];
    for (int k = 0; k < depth; ++k)
      sum += double(a[r][k]) * double(b[k][n]);
    return float(sum);
  };
  (void)rows;
  (void)cols;
  float *out = &block.slots[size_t(lane0 + lane) * kSlot + 16];
  int g = lane / 4, t = lane % 4, q = lane / 16, col = lane % 16;
  if (kind == kMfma16) {
    for (int i = 0; i < 4; ++i)
      out[i] = d(4 * q + i, col);
    return;
  }
  out[0] = d(g, 2 * t);
  out[1] = d(g, 2 * t + 1);
  out[2] = d(g + 8, 2 * t);
  out[3] = d(g + 8, 2 * t + 1);
}

} // namespace

extern "C" void kiln_emu_barrier() { currentBlock->barrier.arriveAndWait(); }

/// One warp-wide matrix instruction: `scratch` (a memref<20xf32>) holds
/// this lane's operands and receives its result.
extern "C" void kiln_emu_matrix(float *, float *scratch, int64_t offset,
                                int64_t, int64_t, int64_t kind) {
  ThreadBlock &block = *currentBlock;
  int warpSize = kind == kMfma16 ? 64 : 32;
  int64_t thread = scheduler.current();
  int warp = thread / warpSize, lane = thread % warpSize;
  float *slot = &block.slots[size_t(thread) * kSlot];
  std::copy(scratch + offset, scratch + offset + 16, slot);
  Barrier &warpBarrier = *block.warpBarriers[warp];
  warpBarrier.arriveAndWait();
  computeMatrix(block, warp * warpSize, lane, MatrixKind(kind));
  std::copy(slot + 16, slot + 20, scratch + offset + 16);
  // No lane overwrites its slots (next instruction) before all have read.
  warpBarrier.arriveAndWait();
}

/// The first access whose address the GPU would refuse as misaligned (a
/// cp.async of N bytes at an address N does not divide, an ldmatrix row
/// not 16-byte aligned): "misaligned address" faults the context there,
/// while the host here does not care.
std::string misalignedAccess;

void noteMisaligned(const char *what, int64_t address, int64_t alignment) {
  if (misalignedAccess.empty())
    misalignedAccess = (llvm::Twine(what) + " at an address " +
                        llvm::Twine(address % alignment) + " bytes past a " +
                        llvm::Twine(alignment) + "-byte boundary")
                           .str();
}

/// nvgpu.ldmatrix x4: `scratch` (a memref<20xf32>) holds this lane's row,
/// the 8 16-bit elements at the address it gave, in [0, 8), and receives
/// its fragment in [8, 16). PTX ISA: lanes 8m..8m+7 give rows 0-7 of
/// matrix m; lane l receives, of each matrix m, the pair at row l / 4,
/// columns 2 (l % 4) and 2 (l % 4) + 1; with .trans (`transpose` 1), at
/// rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4.
extern "C" void kiln_emu_ldmatrix(float *, float *scratch, int64_t offset,
                                  int64_t, int64_t, int64_t transpose,
                                  int64_t address) {
  if (address % 16)
    noteMisaligned("an ldmatrix row", address, 16);
  ThreadBlock &block = *currentBlock;
  int64_t thread = scheduler.current();
  int warp = thread / 32, lane = thread % 32;
  float *slot = &block.slots[size_t(thread) * kSlot];
  std::copy(scratch + offset, scratch + offset + 8, slot);
  Barrier &warpBarrier = *block.warpBarriers[warp];
  warpBarrier.arriveAndWait();
  for (int m = 0; m < 4; ++m)
    for (int j = 0; j < 2; ++j) {
      int row = transpose ? 2 * (lane % 4) + j : lane / 4;
      int column = transpose ? lane / 4 : 2 * (lane % 4) + j;
      scratch[offset + 8 + 2 * m + j] =
          block.slots[size_t(warp * 32 + 8 * m + row) * kSlot + column];
    }
  warpBarrier.arriveAndWait();
}

/// cp.async (nvgpu.device_async_copy): a copy this thread has issued, and
/// the commit group it belongs to (-1: not committed yet).
struct PendingCopy {
  uint8_t *dst;
  const uint8_t *src;
  /// Bytes written, and read from `src` (the rest are zero-filled).
  int64_t bytes, sourceBytes, group;
};
/// Per GPU thread: its copies in flight, and how many groups it committed.
std::vector<std::vector<PendingCopy>> pendingCopies;
std::vector<int64_t> committedGroups;

/// The byte ranges of the kernel's buffers (global memory) and of its
/// workgroup buffers, for --check-bounds; set before a kernel runs.
std::vector<std::pair<const uint8_t *, size_t>> globalRanges, workgroupRanges;
/// Set by a cp.async outside those ranges (any GPU thread).
bool asyncCopyOutOfBounds = false;

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
/// Workgroup memory that cp.async wrote and the async proxy (wgmma's
/// reads) cannot see yet; kept for sm_90a targets (wgmma) only.
kiln::emulator::AsyncProxyVisibility asyncProxy;
/// Per thread, whether a wgmma may start on its accumulators: wgmma.fence
/// since the last wgmma, or accumulators passed on from it.
kiln::emulator::WgmmaRegisterOrder wgmmaRegisters;

bool withinOne(const std::vector<std::pair<const uint8_t *, size_t>> &ranges,
               const uint8_t *start, int64_t bytes) {
  return llvm::any_of(ranges, [&](const auto &range) {
    return start >= range.first && start + bytes <= range.first + range.second;
  });
}

/// The kernel being emulated and the messages of its bounds checks (the
/// cf.assert ops of generate-runtime-verification, by index).
std::string currentKernel;
std::vector<std::string> boundsMessages;

/// A bounds check failed: the access would fault or corrupt memory on a
/// GPU (and here), so the run ends with the check's message.
extern "C" void kiln_emu_out_of_bounds(int64_t check) {
  llvm::outs() << currentKernel
               << ": OUT OF BOUNDS: " << StringRef(boundsMessages[check]).trim()
               << "\n";
  llvm::outs().flush();
  std::_Exit(1);
}

/// Records a copy of `bytes`, the first `sourceBytes` of them read from
/// `src` and the rest zero (cp.async's src-size); it lands only when a
/// wait completes its group, the latest the PTX ISA allows, so a read
/// before the wait (or before the barrier after it) sees what was there
/// before. A copy that reads outside the kernel's buffers or writes
/// anything but a workgroup buffer is dropped and fails the kernel
/// (--check-bounds).
extern "C" void kiln_emu_async_copy(int64_t dst, int64_t src, int64_t bytes,
                                    int64_t sourceBytes) {
  auto *to = reinterpret_cast<uint8_t *>(dst);
  auto *from = reinterpret_cast<const uint8_t *>(src);
  // PTX: both addresses aligned to the copy's size.
  if (dst % bytes)
    noteMisaligned("a cp.async writes workgroup memory", dst, bytes);
  if (sourceBytes > 0 && src % bytes)
    noteMisaligned("a cp.async reads global memory", src, bytes);
  if (sourceBytes < 0 || sourceBytes > bytes ||
      (checkBounds &&
       ((sourceBytes > 0 && !withinOne(globalRanges, from, sourceBytes)) ||
        !withinOne(workgroupRanges, to, bytes)))) {
    asyncCopyOutOfBounds = true;
    return;
  }
  for (int64_t at = 0; at < bytes; at += 16)
    if (wgmmaReadRows.count(to + at -
                            (reinterpret_cast<uintptr_t>(to + at) % 16)) &&
        wgmmaFault.empty())
      wgmmaFault = "a cp.async writes workgroup memory that a wgmma not yet "
                   "waited for reads";
  pendingCopies[scheduler.current()].push_back(
      {to, from, bytes, sourceBytes, -1});
}

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

/// cp.async.commit_group: the uncommitted copies become the newest group.
extern "C" void kiln_emu_async_commit() {
  int64_t thread = scheduler.current();
  commitGroup(pendingCopies[thread], committedGroups[thread]);
}

/// cp.async.wait_group `keep`: every committed group but the `keep` newest
/// lands.
extern "C" void kiln_emu_async_wait(int64_t keep) {
  int64_t thread = scheduler.current();
  waitGroups(pendingCopies[thread], committedGroups[thread], keep,
             [&](const PendingCopy &copy) {
               std::memcpy(copy.dst, copy.src, copy.sourceBytes);
               std::memset(copy.dst + copy.sourceBytes, 0,
                           copy.bytes - copy.sourceBytes);
               if (wgmma)
                 asyncProxy.written(thread, copy.dst, copy.bytes);
             });
}

/// fence.proxy.async: this thread's landed copies become visible to the
/// async proxy.
extern "C" void kiln_emu_proxy_fence() {
  if (wgmma)
    asyncProxy.fenced(scheduler.current());
}

/// wgmma.fence: this thread's register accesses are ordered before the
/// wgmmas it issues next.
extern "C" void kiln_emu_wgmma_fence() {
  wgmmaRegisters.fenced(scheduler.current());
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
WorkgroupArena *workgroupArena = nullptr;

/// The warpgroup's first thread stands for it in the bookkeeping above.
bool leadsWarpgroup(int64_t thread) {
  return thread % ThreadBlock::kWarpgroup == 0;
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
    if (wgmmaFault.empty())
      wgmmaFault = "a wgmma in a block whose threads are no whole warpgroups";
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
  if (std::memcmp(first, slot, 16) != 0 && wgmmaFault.empty())
    wgmmaFault = "wgmma descriptors that differ within a warpgroup";
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
      if (!asyncProxy.visible(row) && wgmmaFault.empty())
        wgmmaFault = "a wgmma reads workgroup memory that a cp.async wrote "
                     "with no fence.proxy.async by its thread after it "
                     "landed";
    }
  }
  auto element = [&](int64_t descriptor, bool mnMajor, int64_t mn,
                     int64_t k) -> double {
    auto field = [&](int shift) {
      return ((descriptor >> shift) & 0x3FFF) << 4;
    };
    if ((uint64_t(descriptor) >> 62) != 0) {
      if (wgmmaFault.empty())
        wgmmaFault = "a wgmma descriptor with a swizzle mode";
      return 0;
    }
    int64_t at =
        field(0) + (mn / 8) * field(32) + (k / 8) * field(16) +
        (mnMajor ? 16 * (k % 8) + 2 * (mn % 8) : 16 * (mn % 8) + 2 * (k % 8));
    const uint8_t *address = workgroupArena->base + at;
    if (!withinOne(workgroupRanges, address, 2)) {
      if (wgmmaFault.empty())
        wgmmaFault = "a wgmma reads outside the workgroup buffers";
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
  if (!unordered.empty() && wgmmaFault.empty())
    wgmmaFault = unordered;
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

/// --memory-traffic: the accesses of the kernel being emulated, and the
/// totals of the kernels emulated so far.
kiln::emulator::MemoryTraffic traffic;
kiln::emulator::TrafficByKind allKernelsTraffic;
int64_t kernelsCounted = 0;

/// A global or workgroup-memory access of `bytes` at `address` by the
/// running GPU thread, at instrumented site `site`.
extern "C" void kiln_emu_access(int64_t site, int64_t address, int64_t bytes) {
  traffic.record(scheduler.current(), site, uint64_t(address), bytes);
}

//===----------------------------------------------------------------------===//
// From gpu.func to a CPU function of (buffers, workgroup buffers, block,
// thread)
//===----------------------------------------------------------------------===//

namespace {

MemRefType withoutMemorySpace(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout(), Attribute());
}

/// The byte address of `memref[indices]`: the buffer's aligned pointer plus
/// the view's offset and the indices times its strides.
Value byteAddress(OpBuilder &b, Location loc, Value memref,
                  ValueRange indices) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = meta.getOffset();
  for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  auto type = cast<MemRefType>(memref.getType());
  Value bytes =
      arith::MulIOp::create(b, loc, linear,
                            arith::ConstantIndexOp::create(
                                b, loc, type.getElementTypeBitWidth() / 8));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    arith::AddIOp::create(b, loc, base, bytes));
}

/// The kernel's loads and stores that --memory-traffic instruments: which
/// entry-block arguments are global buffers and which workgroup buffers,
/// and the sites found so far.
struct AccessTracer {
  unsigned globalBuffers = 0, workgroupBuffers = 0;
  std::vector<kiln::emulator::AccessSite> sites;

  /// Where `memref` lives, from the buffer it is a view of; none for
  /// private arrays and constant tables (registers and the constant cache
  /// on the device), which are not traced.
  std::optional<kiln::emulator::MemorySpace> spaceOf(Value memref) const {
    while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
      memref = view.getViewSource();
    auto argument = dyn_cast<BlockArgument>(memref);
    if (!argument || !argument.getOwner()->isEntryBlock())
      return std::nullopt;
    if (argument.getArgNumber() < globalBuffers)
      return kiln::emulator::MemorySpace::Global;
    if (argument.getArgNumber() < globalBuffers + workgroupBuffers)
      return kiln::emulator::MemorySpace::Workgroup;
    return std::nullopt;
  }

  /// Whether the innermost loop around `op` has at most 16 iterations,
  /// known here: LLVM unrolls those (4-wide elementwise tiles).
  static bool inUnrolledLoop(Operation *op) {
    auto loop = op->getParentOfType<scf::ForOp>();
    if (!loop)
      return false;
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    return lower && upper && step && *step > 0 &&
           (*upper - *lower + *step - 1) / *step <= 16;
  }

  /// Calls kiln_emu_access before `op`, which reads (or with `store`
  /// writes) `bytes` at `memref[indices]`.
  void trace(OpBuilder &b, Operation *op, Value memref, ValueRange indices,
             Value bytes, bool store) {
    std::optional<kiln::emulator::MemorySpace> space = spaceOf(memref);
    if (!space)
      return;
    std::string where;
    llvm::raw_string_ostream os(where);
    os << op->getName();
    if (auto file = dyn_cast<FileLineColLoc>(op->getLoc()))
      os << " at " << llvm::sys::path::filename(file.getFilename().getValue())
         << ":" << file.getLine() << ":" << file.getColumn();
    Location loc = op->getLoc();
    func::CallOp::create(
        b, loc, "kiln_emu_access", TypeRange{},
        ValueRange{arith::ConstantIntOp::create(b, loc, sites.size(), 64),
                   byteAddress(b, loc, memref, indices), bytes});
    sites.push_back({where, *space, store, inUnrolledLoop(op)});
  }
  void trace(OpBuilder &b, Operation *op, Value memref, ValueRange indices,
             int64_t bytes, bool store) {
    trace(b, op, memref, indices,
          arith::ConstantIntOp::create(b, op->getLoc(), bytes, 64), store);
  }

  /// Loads and stores of scalars and vectors.
  void traceLoadOrStore(OpBuilder &b, Operation *op) {
    auto elementBytes = [](Value memref) {
      return cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
    };
    if (auto load = dyn_cast<memref::LoadOp>(op))
      trace(b, op, load.getMemRef(), load.getIndices(),
            elementBytes(load.getMemRef()), false);
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      trace(b, op, store.getMemRef(), store.getIndices(),
            elementBytes(store.getMemRef()), true);
    else if (auto load = dyn_cast<vector::LoadOp>(op))
      trace(b, op, load.getBase(), load.getIndices(),
            load.getVectorType().getNumElements() *
                elementBytes(load.getBase()),
            false);
    else if (auto store = dyn_cast<vector::StoreOp>(op))
      trace(b, op, store.getBase(), store.getIndices(),
            store.getVectorType().getNumElements() *
                elementBytes(store.getBase()),
            true);
  }
};

/// A warp-wide matrix op as a call of kiln_emu_matrix through a scratch
/// buffer: operands (vectors) widened to f32 at A [0, 8), B [8, 12), C
/// [12, 16); returns the `results` result elements read back from [16, 20).
SmallVector<Value> callMatrixOp(OpBuilder &b, Location loc, Value a, Value bv,
                                Value c, MatrixKind kind, int64_t results) {
  auto f32 = b.getF32Type();
  auto scratchType = MemRefType::get({kSlot}, f32);
  Value scratch = memref::AllocaOp::create(b, loc, scratchType);
  auto store = [&](Value vector, int64_t base) {
    auto type = cast<VectorType>(vector.getType());
    Value flat = vector::ShapeCastOp::create(
        b, loc, VectorType::get({type.getNumElements()}, type.getElementType()),
        vector);
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      Value element = vector::ExtractOp::create(b, loc, flat, i);
      if (!element.getType().isF32())
        element = arith::ExtFOp::create(b, loc, f32, element);
      memref::StoreOp::create(
          b, loc, element, scratch,
          ValueRange{arith::ConstantIndexOp::create(b, loc, base + i)});
    }
  };
  store(a, 0);
  store(bv, 8);
  store(c, 12);
  func::CallOp::create(
      b, loc, "kiln_emu_matrix", TypeRange{},
      ValueRange{scratch, arith::ConstantIntOp::create(b, loc, kind, 64)});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < results; ++i)
    elements.push_back(memref::LoadOp::create(
        b, loc, scratch,
        ValueRange{arith::ConstantIndexOp::create(b, loc, 16 + i)}));
  return elements;
}

/// Replaces a matrix op whose operands and result are vectors (nvgpu
/// mma.sync, amdgpu mfma) by callMatrixOp.
LogicalResult emulateMatrixOp(OpBuilder &b, Operation *op, Value a, Value bv,
                              Value c, MatrixKind kind) {
  Location loc = op->getLoc();
  auto resultType = cast<VectorType>(op->getResult(0).getType());
  SmallVector<Value> elements =
      callMatrixOp(b, loc, a, bv, c, kind, resultType.getNumElements());
  op->getResult(0).replaceAllUsesWith(
      vector::FromElementsOp::create(b, loc, resultType, elements));
  op->erase();
  return success();
}

/// nvvm.mma.sync m16n8k16 of bfloat16 (kiln-contract-with-matrix-cores
/// packs each pair of a fragment in an i32, as the instruction's registers
/// hold them; nvgpu.mma.sync does not take bfloat16): the pairs unpacked,
/// and the result struct rebuilt from the emulated elements (its
/// llvm.extractvalue users stay as they are).
LogicalResult emulateBFloat16Mma(OpBuilder &b, NVVM::MmaOp mma) {
  Location loc = mma.getLoc();
  NVVM::MMAShapeAttr shape = mma.getShape();
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
      mma.getMultiplicandAPtxType() != NVVM::MMATypes::bf16 ||
      mma.getMultiplicandBPtxType() != NVVM::MMATypes::bf16 ||
      mma.getOperandC().size() != 4)
    return mma.emitError("only nvvm.mma.sync m16n8k16 of bfloat16 is "
                         "emulated");
  auto pairs = [&](ValueRange words) -> Value {
    SmallVector<Value> elements;
    auto pairType = VectorType::get({2}, b.getBF16Type());
    for (Value word : words) {
      Value pair = vector::BitCastOp::create(
          b, loc, pairType,
          vector::FromElementsOp::create(
              b, loc, VectorType::get({1}, b.getI32Type()), word));
      for (int64_t j = 0; j < 2; ++j)
        elements.push_back(vector::ExtractOp::create(b, loc, pair, j));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({int64_t(elements.size())}, b.getBF16Type()),
        elements);
  };
  Value c = vector::FromElementsOp::create(
      b, loc, VectorType::get({4}, b.getF32Type()), mma.getOperandC());
  SmallVector<Value> elements =
      callMatrixOp(b, loc, pairs(mma.getOperandA()), pairs(mma.getOperandB()),
                   c, kMmaF16, 4);
  Value result = LLVM::UndefOp::create(b, loc, mma.getType());
  for (auto [i, element] : llvm::enumerate(elements))
    result = LLVM::InsertValueOp::create(b, loc, result, element,
                                         ArrayRef<int64_t>{int64_t(i)});
  mma.getResult().replaceAllUsesWith(result);
  mma->erase();
  return success();
}

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

/// Turns `kernel` into func.func @emulated_<name>(buffers..., workgroup
/// buffers..., block id, thread id) in `module`. With `tracer`, its global
/// and workgroup-memory accesses call kiln_emu_access first.
LogicalResult emulateKernel(ModuleOp module, gpu::GPUFuncOp kernel,
                            int64_t warpSize, AccessTracer *tracer) {
  OpBuilder b(module.getContext());
  if (tracer) {
    tracer->globalBuffers = kernel.getNumArguments();
    tracer->workgroupBuffers = kernel.getNumWorkgroupAttributions();
  }
  b.setInsertionPointToEnd(module.getBody());
  Region &body = kernel.getBody();
  Block &entry = body.front();
  for (BlockArgument arg : entry.getArguments())
    if (auto type = dyn_cast<MemRefType>(arg.getType()))
      arg.setType(withoutMemorySpace(type));
  Value blockId = entry.addArgument(b.getIndexType(), kernel.getLoc());
  Value threadId = entry.addArgument(b.getIndexType(), kernel.getLoc());
  auto func = func::FuncOp::create(
      b, kernel.getLoc(), ("emulated_" + kernel.getName()).str(),
      b.getFunctionType(entry.getArgumentTypes(), {}));
  func.getBody().takeBody(body);

  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  // Views of workgroup buffers (a stage of a pair) live where the buffers
  // now do.
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (auto type = dyn_cast<MemRefType>(result.getType()))
        result.setType(withoutMemorySpace(type));
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (tracer)
      tracer->traceLoadOrStore(b, op);
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      if (id.getDimension() != gpu::Dimension::x)
        return op->emitError("only 1-D blocks are emulated");
      id.replaceAllUsesWith(threadId);
      op->erase();
    } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      if (id.getDimension() != gpu::Dimension::x)
        return op->emitError("only 1-D grids are emulated");
      id.replaceAllUsesWith(blockId);
      op->erase();
    } else if (isa<gpu::LaneIdOp>(op)) {
      op->getResult(0).replaceAllUsesWith(arith::RemUIOp::create(
          b, loc, threadId, arith::ConstantIndexOp::create(b, loc, warpSize)));
      op->erase();
    } else if (isa<gpu::BarrierOp>(op)) {
      func::CallOp::create(b, loc, "kiln_emu_barrier", TypeRange{},
                           ValueRange{});
      op->erase();
    } else if (isa<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, loc);
      op->erase();
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      // Whole-warp xor shuffles of 32-bit values (kiln-distribute-rows-to-
      // lanes' reductions): every partner lane exists.
      Type type = shuffle.getValue().getType();
      std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
      if (shuffle.getMode() != gpu::ShuffleMode::XOR || !width ||
          *width != warpSize || type.getIntOrFloatBitWidth() != 32)
        return op->emitError("only whole-warp xor shuffles of 32-bit values "
                             "are emulated");
      Value bits = shuffle.getValue();
      if (!type.isInteger(32))
        bits = arith::BitcastOp::create(b, loc, b.getI32Type(), bits);
      Value result =
          func::CallOp::create(b, loc, "kiln_emu_shuffle_xor", b.getI32Type(),
                               ValueRange{bits, shuffle.getOffset()})
              .getResult(0);
      if (!type.isInteger(32))
        result = arith::BitcastOp::create(b, loc, type, result);
      shuffle.getShuffleResult().replaceAllUsesWith(result);
      shuffle.getValid().replaceAllUsesWith(
          arith::ConstantIntOp::create(b, loc, 1, 1));
      op->erase();
    } else if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
      int64_t elementBytes =
          cast<MemRefType>(copy.getDst().getType()).getElementTypeBitWidth() /
          8;
      int64_t bytes = copy.getDstElements().getZExtValue() * elementBytes;
      // src-size: the elements read, the rest of the copy zero-filled.
      Value sourceBytes = arith::ConstantIntOp::create(b, loc, bytes, 64);
      if (Value elements = copy.getSrcElements())
        sourceBytes = arith::MulIOp::create(
            b, loc,
            arith::IndexCastOp::create(b, loc, b.getI64Type(), elements),
            arith::ConstantIntOp::create(b, loc, elementBytes, 64));
      if (tracer) {
        tracer->trace(b, op, copy.getSrc(), copy.getSrcIndices(), sourceBytes,
                      false);
        tracer->trace(b, op, copy.getDst(), copy.getDstIndices(), bytes, true);
      }
      func::CallOp::create(
          b, loc, "kiln_emu_async_copy", TypeRange{},
          ValueRange{byteAddress(b, loc, copy.getDst(), copy.getDstIndices()),
                     byteAddress(b, loc, copy.getSrc(), copy.getSrcIndices()),
                     arith::ConstantIntOp::create(b, loc, bytes, 64),
                     sourceBytes});
      copy.getAsyncToken().replaceAllUsesWith(
          arith::ConstantIndexOp::create(b, loc, 0).getResult());
      op->erase();
    } else if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
      // Ordering only (the emulated wgmma computes when issued), but
      // whether it was run is checked (WgmmaRegisterOrder).
      func::CallOp::create(b, loc, "kiln_emu_wgmma_fence", TypeRange{},
                           ValueRange{});
      op->erase();
    } else if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
      // One address space holds what both proxies see; what the async
      // proxy may read is kept apart (asyncProxy).
      NVVM::ProxyKind kind = fence.getKind();
      if (kind == NVVM::ProxyKind::async ||
          kind == NVVM::ProxyKind::async_shared)
        func::CallOp::create(b, loc, "kiln_emu_proxy_fence", TypeRange{},
                             ValueRange{});
      op->erase();
    } else if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
      func::CallOp::create(b, loc, "kiln_emu_wgmma_commit", TypeRange{},
                           ValueRange{});
      op->erase();
    } else if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
      func::CallOp::create(b, loc, "kiln_emu_wgmma_wait", TypeRange{},
                           ValueRange{arith::ConstantIntOp::create(
                               b, loc, wait.getGroup(), 64)});
      op->erase();
    } else if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
      if (failed(emulateWgmma(b, mma)))
        return failure();
    } else if (auto group = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
      func::CallOp::create(b, loc, "kiln_emu_async_commit", TypeRange{},
                           ValueRange{});
      group.getAsyncToken().replaceAllUsesWith(
          arith::ConstantIndexOp::create(b, loc, 0).getResult());
      op->erase();
    } else if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
      func::CallOp::create(b, loc, "kiln_emu_async_wait", TypeRange{},
                           ValueRange{arith::ConstantIntOp::create(
                               b, loc, wait.getNumGroups().value_or(0), 64)});
      op->erase();
    } else if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op)) {
      auto type = cast<VectorType>(ldmatrix.getRes().getType());
      if (ldmatrix.getNumTiles() != 4 ||
          type.getShape() != ArrayRef<int64_t>{4, 2} ||
          type.getElementTypeBitWidth() != 16 || warpSize != 32)
        return op->emitError("only ldmatrix.x4 of 16-bit elements is "
                             "emulated");
      Type element = type.getElementType();
      auto f32 = b.getF32Type();
      Value scratch =
          memref::AllocaOp::create(b, loc, MemRefType::get({kSlot}, f32));
      auto index = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      // Each lane reads its row: 8 lanes' rows make a matrix, one
      // wavefront when they fall in distinct banks.
      if (tracer)
        tracer->trace(b, op, ldmatrix.getSrcMemref(), ldmatrix.getIndices(), 16,
                      false);
      Value row = vector::LoadOp::create(b, loc, VectorType::get({8}, element),
                                         ldmatrix.getSrcMemref(),
                                         ldmatrix.getIndices());
      for (int64_t i = 0; i < 8; ++i)
        memref::StoreOp::create(
            b, loc,
            arith::ExtFOp::create(
                b, loc, f32,
                vector::ExtractOp::create(b, loc, row, i).getResult()),
            scratch, ValueRange{index(i)});
      func::CallOp::create(
          b, loc, "kiln_emu_ldmatrix", TypeRange{},
          ValueRange{scratch,
                     arith::ConstantIntOp::create(
                         b, loc, ldmatrix.getTranspose() ? 1 : 0, 64),
                     byteAddress(b, loc, ldmatrix.getSrcMemref(),
                                 ldmatrix.getIndices())});
      SmallVector<Value> elements;
      for (int64_t i = 0; i < 8; ++i)
        elements.push_back(arith::TruncFOp::create(
            b, loc, element,
            memref::LoadOp::create(b, loc, scratch, ValueRange{index(8 + i)})
                .getResult()));
      ldmatrix.getRes().replaceAllUsesWith(
          vector::FromElementsOp::create(b, loc, type, elements));
      op->erase();
    } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      auto shape = mma.getMmaShapeAsArray();
      bool isTf32 = shape[2] == 8;
      if (shape[0] != 16 || shape[1] != 8 || (shape[2] != 16 && !isTf32))
        return op->emitError("mma.sync shape not emulated");
      if (failed(emulateMatrixOp(b, op, mma.getMatrixA(), mma.getMatrixB(),
                                 mma.getMatrixC(),
                                 isTf32 ? kMmaTf32 : kMmaF16)))
        return failure();
    } else if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
      if (failed(emulateBFloat16Mma(b, mma)))
        return failure();
    } else if (auto mfma = dyn_cast<amdgpu::MFMAOp>(op)) {
      if (mfma.getM() != 16 || mfma.getN() != 16 || mfma.getK() != 16 ||
          mfma.getBlocks() != 1)
        return op->emitError("mfma shape not emulated");
      if (failed(emulateMatrixOp(b, op, mfma.getSourceA(), mfma.getSourceB(),
                                 mfma.getDestC(), kMfma16)))
        return failure();
    } else if (op->getDialect() &&
               isa<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect,
                   amdgpu::AMDGPUDialect>(op->getDialect())) {
      return op->emitError("not emulated on the CPU");
    }
  }
  // cp.async tokens carried by loops (a stage's group, waited for in the
  // next iteration) are placeholders now.
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (isa<nvgpu::DeviceAsyncTokenType>(result.getType()))
        result.setType(b.getIndexType());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          if (isa<nvgpu::DeviceAsyncTokenType>(argument.getType()))
            argument.setType(b.getIndexType());
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Buffers and runs
//===----------------------------------------------------------------------===//

/// Allocates bytes 256-byte aligned, as the runtime's arena places every
/// tensor on the GPU: --memory-traffic counts 32-byte sectors and banks
/// from the addresses.
/// With an arena (workgroup buffers), allocates from it.
template <typename T> struct DeviceAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{256};
  WorkgroupArena *arena = nullptr;
  DeviceAlignedAllocator() = default;
  explicit DeviceAlignedAllocator(WorkgroupArena *arena) : arena(arena) {}
  template <typename U>
  DeviceAlignedAllocator(const DeviceAlignedAllocator<U> &other)
      : arena(other.arena) {}
  T *allocate(size_t count) {
    if (arena)
      return reinterpret_cast<T *>(arena->allocate(count * sizeof(T)));
    return static_cast<T *>(::operator new(count * sizeof(T), kAlignment));
  }
  void deallocate(T *pointer, size_t) {
    if (!arena)
      ::operator delete(pointer, kAlignment);
  }
  bool operator==(const DeviceAlignedAllocator &other) const {
    return arena == other.arena;
  }
};

/// A host buffer for one memref argument, with its descriptor fields
/// (allocated, aligned, offset, sizes, strides) for a packed call.
struct Buffer {
  MemRefType type;
  std::vector<uint8_t, DeviceAlignedAllocator<uint8_t>> bytes;
  void *pointer = nullptr;
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;

  explicit Buffer(MemRefType t, WorkgroupArena *arena = nullptr)
      : type(t), bytes(DeviceAlignedAllocator<uint8_t>(arena)) {
    bytes.resize(std::max<int64_t>(1, t.getNumElements()) * elementBytes());
    pointer = bytes.data();
    sizes.assign(t.getShape().begin(), t.getShape().end());
    strides.assign(t.getRank(), 1);
    for (int64_t d = t.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * sizes[d + 1];
  }
  /// A byte per boolean (i1), as the runtime and both code generators
  /// store them.
  int64_t elementBytes() const {
    return std::max<int64_t>(1,
                             type.getElementType().getIntOrFloatBitWidth() / 8);
  }
  int64_t count() const { return type.getNumElements(); }
  /// Element `i` of an integer buffer of element type T.
  template <typename T> double getInteger(int64_t i) const {
    return double(reinterpret_cast<const T *>(bytes.data())[i]);
  }
  /// Stores `v` rounded down, or T's lowest value for NaN (an unwritten
  /// output's poison).
  template <typename T> void setInteger(int64_t i, double v) {
    reinterpret_cast<T *>(bytes.data())[i] =
        std::isnan(v) ? std::numeric_limits<T>::min() : T(std::floor(v));
  }
  double get(int64_t i) const {
    Type t = type.getElementType();
    if (t.isInteger(1)) // the byte: 0xff (unwritten) differs from 0 and 1
      return double(bytes[i]);
    switch (t.isInteger() ? t.getIntOrFloatBitWidth() : 0) {
    case 64:
      return getInteger<int64_t>(i);
    case 32:
      return getInteger<int32_t>(i);
    case 16:
      return getInteger<int16_t>(i);
    case 8:
      return getInteger<int8_t>(i);
    }
    if (t.isF32())
      return reinterpret_cast<const float *>(bytes.data())[i];
    uint16_t raw = reinterpret_cast<const uint16_t *>(bytes.data())[i];
    const llvm::fltSemantics &sem =
        t.isF16() ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
    return llvm::APFloat(sem, llvm::APInt(16, raw)).convertToDouble();
  }
  bool isInteger() const { return type.getElementType().isInteger(); }
  /// Integer buffers (indices) take `v` rounded down (setInteger).
  void set(int64_t i, double v) {
    Type t = type.getElementType();
    if (t.isInteger(1)) { // booleans: the low bit of v rounded down
      bytes[i] = std::isnan(v) ? 0xff : uint8_t(int64_t(std::floor(v)) & 1);
      return;
    }
    switch (t.isInteger() ? t.getIntOrFloatBitWidth() : 0) {
    case 64:
      return setInteger<int64_t>(i, v);
    case 32:
      return setInteger<int32_t>(i, v);
    case 16:
      return setInteger<int16_t>(i, v);
    case 8:
      return setInteger<int8_t>(i, v);
    }
    if (t.isF32()) {
      reinterpret_cast<float *>(bytes.data())[i] = float(v);
      return;
    }
    llvm::APFloat value(v);
    bool lost;
    value.convert(t.isF16() ? llvm::APFloat::IEEEhalf()
                            : llvm::APFloat::BFloat(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    reinterpret_cast<uint16_t *>(bytes.data())[i] =
        value.bitcastToAPInt().getZExtValue();
  }
  /// Appends the addresses of the descriptor fields; they stay valid while
  /// this buffer does not move.
  void appendArgs(SmallVectorImpl<void *> &args) {
    pointer = bytes.data(); // copies of a buffer point to their own bytes
    args.push_back(&pointer);
    args.push_back(&pointer);
    args.push_back(&offset);
    for (int64_t &s : sizes)
      args.push_back(&s);
    for (int64_t &s : strides)
      args.push_back(&s);
  }
};

bool supported(Type t) {
  auto memref = dyn_cast<MemRefType>(t);
  return memref && memref.hasStaticShape() &&
         (memref.getElementType().isF32() || memref.getElementType().isF16() ||
          memref.getElementType().isBF16() ||
          llvm::any_of(std::array{1u, 8u, 16u, 32u, 64u}, [&](unsigned width) {
            return memref.getElementType().isInteger(width);
          }));
}

/// Runs `pipeline` (the passes inside a builtin.module(...)) on `module`.
LogicalResult runPipeline(ModuleOp module, StringRef pipeline) {
  PassManager pm = PassManager::on<ModuleOp>(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  return pm.run(module);
}

constexpr StringLiteral kToLLVM =
    "expand-strided-metadata,lower-affine,convert-vector-to-scf,"
    "convert-vector-to-llvm,finalize-memref-to-llvm,convert-scf-to-cf,"
    "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-"
    "cf-to-llvm,"
    "convert-func-to-llvm,convert-index-to-llvm,convert-ub-to-llvm,"
    "reconcile-unrealized-casts";

/// Prints why kernel `name` is not emulated; not a failure.
LogicalResult skip(StringRef name, const Twine &why) {
  llvm::outs() << name << ": skipped: " << why << "\n";
  return success();
}

/// Stack of the thread that runs a reference: its bufferized temporaries
/// are stack allocations as large as the kernel's outputs (a 1x1
/// convolution's float32 accumulators over MobileNetV2's 2x112x112x96
/// outputs: 9.6 MB, past the main thread's 8 MB). Reserved, not committed:
/// pages are only touched as the reference uses them.
constexpr unsigned kReferenceStackBytes = 1u << 30;

/// Runs the kernel's reference (its own loops, one workgroup) on `buffers`.
LogicalResult runReference(ExecutionEngine &engine,
                           std::vector<Buffer> &buffers) {
  int64_t workgroup = 0, workgroupCount = 1;
  SmallVector<void *> args;
  for (Buffer &buffer : buffers)
    buffer.appendArgs(args);
  args.push_back(&workgroup);
  args.push_back(&workgroupCount);
  std::optional<std::string> error;
  llvm::thread reference(std::optional<unsigned>(kReferenceStackBytes), [&] {
    if (llvm::Error e = engine.invokePacked("reference", args))
      error = llvm::toString(std::move(e));
  });
  reference.join();
  if (error) {
    llvm::errs() << "error: " << *error << "\n";
    return failure();
  }
  return success();
}

/// Runs the reference again on `initial` (the buffers before its first
/// run, which gave `first`) with every output (a buffer the first run
/// changed) filled with NaN: an element still NaN afterwards was never
/// written, or was computed from the output's old contents, which the
/// runtime leaves undefined (arena bytes that other tensors used). Either
/// is a tiling bug (tiles that miss part of the output) that comparing the
/// emulated kernel with the reference cannot show: both start from the
/// same buffers and both keep the same stale elements.
LogicalResult checkOutputsWritten(ExecutionEngine &engine, StringRef name,
                                  const std::vector<Buffer> &initial,
                                  const std::vector<Buffer> &first) {
  std::vector<Buffer> poisoned(initial);
  SmallVector<size_t> outputs;
  for (size_t i = 0; i < poisoned.size(); ++i) {
    if (poisoned[i].bytes == first[i].bytes)
      continue;
    outputs.push_back(i);
    for (int64_t e = 0; e < poisoned[i].count(); ++e)
      poisoned[i].set(e, NAN);
  }
  if (failed(runReference(engine, poisoned)))
    return failure();
  for (size_t i : outputs)
    for (int64_t e = 0; e < poisoned[i].count(); ++e)
      if (std::isnan(poisoned[i].get(e)) && !std::isnan(first[i].get(e))) {
        llvm::outs() << name << ": the kernel never writes element " << e
                     << " of buffer " << i
                     << " (or reads its old value): NOT WRITTEN\n";
        return failure();
      }
  return success();
}

/// Emulates `kernel` against its reference; prints the result and returns
/// whether it matched (kernels that cannot be emulated are skipped).
LogicalResult checkKernel(func::FuncOp kernelFunc) {
  MLIRContext *context = kernelFunc.getContext();
  std::string nameStorage = kernelFunc.getName().str();
  StringRef name = nameStorage;
  OwningOpRef<ModuleOp> module(ModuleOp::create(kernelFunc.getLoc()));
  module->getBody()->push_back(kernelFunc->clone());
  auto original = *module->getOps<func::FuncOp>().begin();
  SmallVector<Type> argTypes(original.getArgumentTypes());
  int64_t buffers = 0;
  while (buffers < int64_t(argTypes.size()) && supported(argTypes[buffers]))
    ++buffers;
  if (buffers + 2 != int64_t(argTypes.size()))
    return skip(
        name,
        "arguments other than static f32/f16/bf16/i1/i8/i16/i32/i64 buffers");
  if (bufferize) {
    PassManager pm = PassManager::on<ModuleOp>(context);
    kiln::addGpuBufferizePasses(pm);
    if (failed(pm.run(*module)))
      return failure();
  }

  OwningOpRef<ModuleOp> reference(cast<ModuleOp>(module->clone()));
  for (auto func : reference->getOps<func::FuncOp>())
    if (func.getName() == name)
      func.setName("reference");
  int64_t warpSize = target.warpSize;
  PassManager gpuPipeline = PassManager::on<ModuleOp>(context);
  kiln::addGpuThreadMappingPasses(gpuPipeline, target, wgmmaGroupsInFlight);
  if (failed(gpuPipeline.run(*module)) ||
      failed(runPipeline(*reference, "func.func(scf-forall-to-for),"
                                     "func.func(convert-linalg-to-loops)")))
    return failure();
  func::FuncOp declaration;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.getName() == name)
      declaration = func;
  int64_t blocks =
      declaration->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroups)
          .getInt();
  int64_t threads =
      declaration->getAttrOfType<IntegerAttr>(kiln::attrs::kThreads).getInt();
  std::string cores;
  if (auto attr =
          declaration->getAttrOfType<StringAttr>(kiln::attrs::kMatrixCores))
    cores = attr.str();
  if (auto tile = declaration->getAttrOfType<DenseI64ArrayAttr>(
          kiln::attrs::kThreadTile))
    cores = "thread tiles " + std::to_string(tile[0]) + "x" +
            std::to_string(tile[1]);
  declaration.erase();
  if (blocks * threads > maxThreads)
    return skip(name, Twine(blocks * threads) + " GPU threads (--max-threads)");
  auto gpuModule = *module->getOps<gpu::GPUModuleOp>().begin();
  auto kernel = *gpuModule.getOps<gpu::GPUFuncOp>().begin();
  SmallVector<MemRefType> shared;
  for (BlockArgument arg : kernel.getWorkgroupAttributions())
    shared.push_back(withoutMemorySpace(cast<MemRefType>(arg.getType())));
  AccessTracer tracer;
  if (failed(emulateKernel(*module, kernel, warpSize,
                           memoryTraffic ? &tracer : nullptr)))
    return failure();
  // Constant tables live in the gpu.module; the emulated kernel reads them
  // from the host module.
  for (auto global :
       llvm::make_early_inc_range(gpuModule.getOps<memref::GlobalOp>()))
    global->moveBefore(module->getBody(), module->getBody()->end());
  gpuModule.erase();
  module->walk([](Operation *op) { op->removeAttr("gpu.container_module"); });
  OpBuilder b(context);
  b.setInsertionPointToEnd(module->getBody());
  auto declare = [&](StringRef callee, TypeRange inputs) {
    func::FuncOp::create(b, module->getLoc(), callee,
                         b.getFunctionType(inputs, {}))
        .setPrivate();
  };
  declare("kiln_emu_barrier", {});
  func::FuncOp::create(
      b, module->getLoc(), "kiln_emu_shuffle_xor",
      b.getFunctionType({b.getI32Type(), b.getI32Type()}, {b.getI32Type()}))
      .setPrivate();
  declare("kiln_emu_matrix",
          {MemRefType::get({kSlot}, b.getF32Type()), b.getI64Type()});
  declare("kiln_emu_ldmatrix", {MemRefType::get({kSlot}, b.getF32Type()),
                                b.getI64Type(), b.getI64Type()});
  declare("kiln_emu_async_copy",
          {b.getI64Type(), b.getI64Type(), b.getI64Type(), b.getI64Type()});
  declare("kiln_emu_wgmma",
          {MemRefType::get({kWgmmaScratch}, b.getF32Type()), b.getI64Type(),
           b.getI64Type(), b.getI64Type(), b.getI64Type()});
  declare("kiln_emu_wgmma_commit", {});
  declare("kiln_emu_proxy_fence", {});
  declare("kiln_emu_wgmma_fence", {});
  declare("kiln_emu_wgmma_wait", {b.getI64Type()});
  declare("kiln_emu_async_commit", {});
  declare("kiln_emu_async_wait", {b.getI64Type()});
  declare("kiln_emu_access", {b.getI64Type(), b.getI64Type(), b.getI64Type()});
  // Bounds checks in the emulated kernel only (the reference is the
  // kernel's own loops): an index past a view's extent that stays inside
  // the buffer would otherwise go unnoticed here and fault or corrupt on a
  // GPU.
  if (checkBounds) {
    if (failed(runPipeline(*module, "generate-runtime-verification")))
      return failure();
    // Each check reports through kiln_emu_out_of_bounds: cf.assert would
    // abort without its message.
    boundsMessages.clear();
    declare("kiln_emu_out_of_bounds", {b.getI64Type()});
    module->walk([&](cf::AssertOp check) {
      OpBuilder at(check);
      Location loc = check.getLoc();
      Value failed = arith::XOrIOp::create(
          at, loc, check.getArg(), arith::ConstantIntOp::create(at, loc, 1, 1));
      auto report =
          scf::IfOp::create(at, loc, failed, /*withElseRegion=*/false);
      at.setInsertionPoint(report.thenBlock()->getTerminator());
      func::CallOp::create(at, loc, "kiln_emu_out_of_bounds", TypeRange{},
                           ValueRange{arith::ConstantIntOp::create(
                               at, loc, int64_t(boundsMessages.size()), 64)});
      boundsMessages.push_back(check.getMsg().str());
      check.erase();
    });
  }
  // Both functions in one module; constant tables (same names, same
  // values: both come from bufferizing the same kernel) once.
  SymbolTable symbols(*module);
  for (Operation &op :
       llvm::make_early_inc_range(reference->getBody()->getOperations())) {
    if (auto global = dyn_cast<memref::GlobalOp>(op))
      if (symbols.lookup(global.getSymName()))
        continue;
    op.moveBefore(module->getBody(), module->getBody()->end());
  }
  if (dump)
    module->print(llvm::errs());
  if (failed(runPipeline(*module, kToLLVM)))
    return failure();

  auto optimize = makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    llvm::errs() << "error: JIT: " << llvm::toString(engine.takeError())
                 << "\n";
    return failure();
  }
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("kiln_emu_barrier")] = {
        llvm::orc::ExecutorAddr::fromPtr(&kiln_emu_barrier),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("kiln_emu_shuffle_xor")] = {
        llvm::orc::ExecutorAddr::fromPtr(&kiln_emu_shuffle_xor),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("kiln_emu_matrix")] = {
        llvm::orc::ExecutorAddr::fromPtr(&kiln_emu_matrix),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("kiln_emu_ldmatrix")] = {
        llvm::orc::ExecutorAddr::fromPtr(&kiln_emu_ldmatrix),
        llvm::JITSymbolFlags::Exported};
    for (auto [name, function] :
         {std::pair<const char *, void *>{
              "kiln_emu_async_copy",
              reinterpret_cast<void *>(&kiln_emu_async_copy)},
          {"kiln_emu_async_commit",
           reinterpret_cast<void *>(&kiln_emu_async_commit)},
          {"kiln_emu_wgmma", reinterpret_cast<void *>(&kiln_emu_wgmma)},
          {"kiln_emu_proxy_fence",
           reinterpret_cast<void *>(&kiln_emu_proxy_fence)},
          {"kiln_emu_wgmma_fence",
           reinterpret_cast<void *>(&kiln_emu_wgmma_fence)},
          {"kiln_emu_wgmma_commit",
           reinterpret_cast<void *>(&kiln_emu_wgmma_commit)},
          {"kiln_emu_wgmma_wait",
           reinterpret_cast<void *>(&kiln_emu_wgmma_wait)},
          {"kiln_emu_async_wait",
           reinterpret_cast<void *>(&kiln_emu_async_wait)},
          {"kiln_emu_out_of_bounds",
           reinterpret_cast<void *>(&kiln_emu_out_of_bounds)},
          {"kiln_emu_access", reinterpret_cast<void *>(&kiln_emu_access)}})
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                 llvm::JITSymbolFlags::Exported};
    return symbols;
  });

  // Pseudo-random inputs in [-1, 1), the same for both runs; integers
  // (indices, which the kernels clamp into range and wrap when negative) in
  // [-8, 8).
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<Buffer> expected, actual;
  for (int64_t i = 0; i < buffers; ++i) {
    expected.emplace_back(cast<MemRefType>(argTypes[i]));
    double scale = expected.back().isInteger() ? 8.0 : 1.0;
    for (int64_t e = 0; e < expected.back().count(); ++e)
      expected.back().set(e, scale * uniform(random));
    actual.push_back(expected.back());
  }
  if (failed(runReference(**engine, expected)) ||
      failed(checkOutputsWritten(**engine, name, actual, expected)))
    return failure();

  auto entry = (*engine)->lookupPacked(("emulated_" + name).str());
  if (!entry) {
    llvm::errs() << "error: " << llvm::toString(entry.takeError()) << "\n";
    return failure();
  }
  ThreadBlock device(threads, warpSize);
  WorkgroupArena arena;
  workgroupArena = &arena;
  std::vector<Buffer> sharedBuffers;
  sharedBuffers.reserve(shared.size());
  for (MemRefType type : shared)
    sharedBuffers.emplace_back(type, &arena); // reserved: no buffer moves
  currentKernel = name.str();
  globalRanges.clear();
  workgroupRanges.clear();
  for (Buffer &buffer : actual)
    globalRanges.push_back({buffer.bytes.data(), buffer.bytes.size()});
  for (Buffer &buffer : sharedBuffers)
    workgroupRanges.push_back({buffer.bytes.data(), buffer.bytes.size()});
  asyncCopyOutOfBounds = false;
  misalignedAccess.clear();
  wgmmaFault.clear();
  auto resetShared = [&] {
    for (Buffer &buffer : sharedBuffers)
      for (int64_t e = 0; e < buffer.count(); ++e)
        buffer.set(e, NAN);
  };
  // Descriptor fields every thread passes (read only).
  SmallVector<void *> kernelArgs;
  for (Buffer &buffer : actual)
    buffer.appendArgs(kernelArgs);
  for (Buffer &buffer : sharedBuffers)
    buffer.appendArgs(kernelArgs);
  // The threads of a block run the blocks one after another, meeting at
  // the block barrier between blocks, when workgroup memory goes back to
  // NaN.
  currentBlock = &device;
  pendingCopies.assign(threads, {});
  committedGroups.assign(threads, 0);
  wgmmaReadRows.clear();
  asyncProxy.reset(threads);
  wgmmaRegisters.reset(threads);
  pendingWgmmas.assign(threads / ThreadBlock::kWarpgroup, {});
  committedWgmmaGroups.assign(threads / ThreadBlock::kWarpgroup, 0);
  traffic.start(std::move(tracer.sites), threads, warpSize);
  scheduler.run(threads, [&](int64_t thread) {
    int64_t blockId = 0, threadId = thread;
    SmallVector<void *> threadArgs(kernelArgs);
    threadArgs.push_back(&blockId);
    threadArgs.push_back(&threadId);
    for (int64_t block = 0; block < blocks; ++block) {
      if (thread == 0)
        resetShared();
      device.barrier.arriveAndWait();
      blockId = block;
      wgmmaRegisters.startBlock(thread);
      (*entry)(threadArgs.data());
      device.barrier.arriveAndWait();
      // Every thread has finished the block; none starts the next before
      // thread 0 arrives at its first barrier.
      if (thread == 0)
        traffic.finishBlock();
    }
  });

  if (!wgmmaReadRows.empty() && wgmmaFault.empty())
    wgmmaFault = "a wgmma not waited for before its kernel ends";
  if (asyncCopyOutOfBounds) {
    llvm::outs() << name << ": " << blocks << " blocks x " << threads
                 << " threads: a cp.async copies outside the kernel's "
                    "buffers: OUT OF BOUNDS\n";
    return failure();
  }
  if (!wgmmaFault.empty()) {
    llvm::outs() << name << ": " << blocks << " blocks x " << threads
                 << " threads: " << wgmmaFault << ": WGMMA FAULT\n";
    return failure();
  }
  if (!misalignedAccess.empty()) {
    llvm::outs() << name << ": " << blocks << " blocks x " << threads
                 << " threads: " << misalignedAccess << ": MISALIGNED\n";
    return failure();
  }
  double worst = 0;
  int64_t worstAt = -1, worstBuffer = -1;
  for (int64_t i = 0; i < buffers; ++i)
    for (int64_t e = 0; e < expected[i].count(); ++e) {
      double want = expected[i].get(e), got = actual[i].get(e);
      // Inputs are finite, but a real model's kernel may still make a NaN
      // of them (the reference loops too: a log of a negative random
      // value): NaN where the reference has NaN agrees; anywhere else it
      // is a wrong result.
      double error = std::isnan(got) && std::isnan(want) ? 0
                     : std::isnan(got) || std::isnan(want)
                         ? INFINITY
                         : std::fabs(got - want) / (1 + std::fabs(want));
      if (error > worst || worstAt < 0) {
        worst = error;
        worstAt = e;
        worstBuffer = i;
      }
    }
  llvm::outs() << name << ": " << blocks << " blocks x " << threads
               << " threads" << (cores.empty() ? "" : ", " + cores) << ", "
               << shared.size() << " workgroup buffers: max error " << worst;
  if (worst > tolerance) {
    llvm::outs() << " at buffer " << worstBuffer << " element " << worstAt
                 << " (reference " << expected[worstBuffer].get(worstAt)
                 << ", emulated " << actual[worstBuffer].get(worstAt)
                 << "): MISMATCH\n";
    return failure();
  }
  llvm::outs() << ": OK\n";
  if (memoryTraffic) {
    traffic.print(llvm::outs(), name, memoryTrafficSites);
    kiln::emulator::TrafficByKind kernel = traffic.byKind();
    for (size_t kind = 0; kind < kernel.size(); ++kind)
      allKernelsTraffic[kind].add(kernel[kind]);
    ++kernelsCounted;
  }
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerAllPasses();
  kiln::registerKilnPasses();
  kiln::registerCompileFlags(kiln::CompileFlagSet::Target, "cuda");
  kiln::hideForeignFlags(toolCategory);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Runs tiled GPU kernels on the CPU against their reference\n");
  std::string error;
  FailureOr<kiln::CompileOptions> options =
      kiln::compileOptionsFromFlags(error);
  FailureOr<kiln::TargetDescription> described = llvm::failure();
  if (llvm::succeeded(options))
    described = kiln::describeTarget(*options, error);
  if (succeeded(described) && !described->isGpu())
    error = "--target=" + described->name +
            " is not a GPU target (cuda, "
            "cuda:sm_90a, rocm, ...)";
  if (!error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return 2;
  }
  target = *described;
  wgmmaGroupsInFlight = options->wgmmaGroupsInFlight;
  wgmma = target.matrix == kiln::MatrixInstructions::Wgmma;
  DialectRegistry registry;
  registerAllDialects(registry);
  memref::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<kiln::KilnDialect>();
  MLIRContext context(registry);
  context.disableMultithreading();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(inputFile, &context);
  if (!module)
    return 2;
  // Kernels anywhere in the input (kiln-compile's phases nest them in a
  // module of their own).
  llvm::Regex filter(kernelFilter.empty() ? std::string(".*")
                                          : kernelFilter.getValue());
  std::string filterError;
  if (!filter.isValid(filterError)) {
    llvm::errs() << "error: --kernels=" << kernelFilter << ": " << filterError
                 << "\n";
    return 2;
  }
  SmallVector<func::FuncOp> kernels;
  module->walk([&](func::FuncOp func) {
    if (func->hasAttr(kiln::attrs::kKernel) && !func.isExternal() &&
        filter.match(func.getName()))
      kernels.push_back(func);
  });
  if (kernels.empty()) {
    llvm::errs() << "error: " << inputFile << " has no kiln.kernel function"
                 << (kernelFilter.empty() ? "" : " matching --kernels") << "\n";
    return 2;
  }
  int failures = 0;
  for (func::FuncOp kernel : kernels)
    failures += failed(checkKernel(kernel));
  // A whole model's totals, to compare two compilations of it.
  if (memoryTraffic && kernelsCounted > 1)
    kiln::emulator::printTraffic(
        llvm::outs(), "all " + std::to_string(kernelsCounted) + " kernels",
        allKernelsTraffic);
  return failures ? 1 : 0;
}
