//===- ProxyFences.h - what wgmma's reads may see ---------------*- C++ -*-===//
//
// wgmma.mma_async reads its operands from workgroup memory through the
// async proxy; cp.async (and every plain store) writes it through the
// generic proxy. PTX ISA, "Memory Consistency Model", "Proxies": accesses
// of one location through two proxies are ordered only by a proxy fence,
// so a thread that wrote an operand must run fence.proxy.async after its
// write completed (for cp.async: after the wait_group that lands it), and
// a barrier then orders that fence before another thread's wgmma. Without
// the fence the wgmma may read what the location held before, on the
// device; the emulator, whose one address space serves both proxies,
// would compute the right product anyway. AsyncProxyVisibility keeps
// which 16-byte rows of workgroup memory hold such unfenced writes, so
// the emulator can fail a kernel whose wgmma reads one.
//
// Nothing here knows about MLIR: kiln-emulate-gpu reports the writes, the
// fences and the rows each wgmma reads.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_EMULATEGPU_PROXYFENCES_H
#define KILN_TOOLS_EMULATEGPU_PROXYFENCES_H

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace kiln::emulator {

class AsyncProxyVisibility {
public:
  /// Forgets every write; `threads` GPU threads from now on.
  void reset(int64_t threads);

  /// `thread`'s generic-proxy write of [address, address + bytes)
  /// completed.
  void written(int64_t thread, const uint8_t *address, int64_t bytes);

  /// `thread` ran fence.proxy.async: its completed writes become visible
  /// to the async proxy (once a barrier orders the fence before the read).
  void fenced(int64_t thread);

  /// Whether the 16-byte row at `row` (16-byte aligned) holds no write
  /// that the async proxy cannot see yet.
  bool visible(const uint8_t *row) const;

private:
  static uintptr_t rowOf(const uint8_t *address) {
    return reinterpret_cast<uintptr_t>(address) & ~uintptr_t(15);
  }
  /// Rows with unfenced writes: how many threads' write lists hold each.
  std::unordered_map<uintptr_t, int> unfencedWriters;
  /// Per thread, the rows it wrote since its last fence (each once).
  std::vector<std::vector<uintptr_t>> unfencedRowsOf;
};

} // namespace kiln::emulator

#endif
