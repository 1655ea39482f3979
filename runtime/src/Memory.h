//===- Memory.h - host memory the runtime allocates -------------*- C++ -*-===//
#ifndef KILN_RUNTIME_MEMORY_H
#define KILN_RUNTIME_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kiln {

/// Frees memory obtained from std::aligned_alloc.
struct FreeDeleter {
  void operator()(void *p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;

/// Allocates `size` bytes (at least 1) aligned to KILN_ARTIFACT_ALIGNMENT.
/// Returns null when out of memory.
AlignedBytes allocateAligned(uint64_t size);

/// Zero-filled, page-aligned memory from mmap: pages cost nothing until a
/// kernel touches them, so large arenas are cheap to create.
class ArenaMemory {
public:
  ArenaMemory() = default;
  ArenaMemory(const ArenaMemory &) = delete;
  ArenaMemory &operator=(const ArenaMemory &) = delete;
  ~ArenaMemory();
  bool allocate(uint64_t size);
  uint8_t *get() const { return data; }

private:
  uint8_t *data = nullptr;
  size_t size = 0;
};

} // namespace kiln

#endif // KILN_RUNTIME_MEMORY_H
