//===- AsyncCopies.cpp - cp.async on the emulated device ------------------===//
//
// cp.async lands only when a wait completes its group, the latest the PTX
// ISA allows, so a read before the wait (or before the barrier after it)
// sees what was there before; a copy outside the kernel's buffers fails
// it (--check-bounds). On sm_90a the landed copies stay invisible to the
// async proxy (wgmma's reads) until the copying thread's
// fence.proxy.async (ProxyFences.h).
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "KernelRewrite.h"
#include "ProxyFences.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <cstring>

using namespace mlir;
using namespace kiln::emulator;

namespace {

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

/// Set by a cp.async outside those ranges (any GPU thread).
bool asyncCopyOutOfBounds = false;

/// Workgroup memory that cp.async wrote and the async proxy (wgmma's
/// reads) cannot see yet; kept for sm_90a targets (wgmma) only.
AsyncProxyVisibility asyncProxy;
bool checkBoundsOfCopies = true, trackAsyncProxy = false;

} // namespace

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
      (checkBoundsOfCopies &&
       ((sourceBytes > 0 && !withinOne(globalRanges, from, sourceBytes)) ||
        !withinOne(workgroupRanges, to, bytes)))) {
    asyncCopyOutOfBounds = true;
    return;
  }
  for (int64_t at = 0; at < bytes; at += 16)
    if (warpgroupReadsRow(to + at -
                          (reinterpret_cast<uintptr_t>(to + at) % 16)))
      noteWarpgroupFault("a cp.async writes workgroup memory that a wgmma "
                         "not yet waited for reads");
  pendingCopies[scheduler.current()].push_back(
      {to, from, bytes, sourceBytes, -1});
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
               if (trackAsyncProxy)
                 asyncProxy.written(thread, copy.dst, copy.bytes);
             });
}

/// fence.proxy.async: this thread's landed copies become visible to the
/// async proxy.
extern "C" void kiln_emu_proxy_fence() {
  if (trackAsyncProxy)
    asyncProxy.fenced(scheduler.current());
}

void kiln::emulator::resetAsyncCopies(int64_t threads, bool checkBounds,
                                      bool trackProxy) {
  pendingCopies.assign(threads, {});
  committedGroups.assign(threads, 0);
  asyncCopyOutOfBounds = false;
  checkBoundsOfCopies = checkBounds;
  trackAsyncProxy = trackProxy;
  asyncProxy.reset(threads);
}

bool kiln::emulator::asyncCopiesOutOfBounds() { return asyncCopyOutOfBounds; }

bool kiln::emulator::asyncProxySees(const uint8_t *row) {
  return asyncProxy.visible(row);
}

std::optional<LogicalResult>
kiln::emulator::rewriteAsyncCopyOp(OpBuilder &b, Operation *op,
                                   AccessTracer *tracer) {
  Location loc = op->getLoc();
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    int64_t elementBytes =
        cast<MemRefType>(copy.getDst().getType()).getElementTypeBitWidth() / 8;
    int64_t bytes = copy.getDstElements().getZExtValue() * elementBytes;
    // src-size: the elements read, the rest of the copy zero-filled.
    Value sourceBytes = arith::ConstantIntOp::create(b, loc, bytes, 64);
    if (Value elements = copy.getSrcElements())
      sourceBytes = arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), elements),
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
    return success();
  }
  if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
    // One address space holds what both proxies see; what the async
    // proxy may read is kept apart (asyncProxy).
    NVVM::ProxyKind kind = fence.getKind();
    if (kind == NVVM::ProxyKind::async || kind == NVVM::ProxyKind::async_shared)
      func::CallOp::create(b, loc, "kiln_emu_proxy_fence", TypeRange{},
                           ValueRange{});
    op->erase();
    return success();
  }
  if (auto group = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
    func::CallOp::create(b, loc, "kiln_emu_async_commit", TypeRange{},
                         ValueRange{});
    group.getAsyncToken().replaceAllUsesWith(
        arith::ConstantIndexOp::create(b, loc, 0).getResult());
    op->erase();
    return success();
  }
  if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
    func::CallOp::create(b, loc, "kiln_emu_async_wait", TypeRange{},
                         ValueRange{arith::ConstantIntOp::create(
                             b, loc, wait.getNumGroups().value_or(0), 64)});
    op->erase();
    return success();
  }
  return std::nullopt;
}

void kiln::emulator::declareAsyncCopyRuntime(ModuleOp module) {
  Builder b(module.getContext());
  Type i64 = b.getI64Type();
  declareRuntimeFunction(module, "kiln_emu_async_copy", {i64, i64, i64, i64});
  declareRuntimeFunction(module, "kiln_emu_async_commit", {});
  declareRuntimeFunction(module, "kiln_emu_async_wait", {i64});
  declareRuntimeFunction(module, "kiln_emu_proxy_fence", {});
}

void kiln::emulator::addAsyncCopySymbols(
    llvm::orc::SymbolMap &symbols, llvm::orc::MangleAndInterner &interner) {
  addRuntimeSymbols(symbols, interner,
                    {KILN_EMU_RUNTIME_FUNCTION(kiln_emu_async_copy),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_async_commit),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_async_wait),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_proxy_fence)});
}
