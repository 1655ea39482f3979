//===- Memory.cpp - host memory the runtime allocates ---------------------===//
#include "Memory.h"

#include "kiln/artifact_version.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>

using namespace kiln;

void FreeDeleter::operator()(void *p) const { std::free(p); }

AlignedBytes kiln::allocateAligned(uint64_t size) {
  // aligned_alloc needs a multiple of the alignment; never allocate zero.
  // Callers fill every byte, so nothing is zeroed here.
  uint64_t rounded =
      (std::max<uint64_t>(size, 1) + KILN_ARTIFACT_ALIGNMENT - 1) &
      ~uint64_t(KILN_ARTIFACT_ALIGNMENT - 1);
  if (rounded < size || rounded > SIZE_MAX)
    return nullptr;
  void *p = std::aligned_alloc(KILN_ARTIFACT_ALIGNMENT, size_t(rounded));
  return AlignedBytes(static_cast<uint8_t *>(p));
}

ArenaMemory::~ArenaMemory() {
  if (data)
    ::munmap(data, size);
}

bool ArenaMemory::allocate(uint64_t bytes) {
  size = size_t(std::max<uint64_t>(bytes, 1));
  if (bytes > SIZE_MAX / 2)
    return false;
  void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return false;
  data = static_cast<uint8_t *>(p);
  return true;
}
