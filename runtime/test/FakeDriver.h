//===- FakeDriver.h - load the stand-in GPU driver in a test ----*- C++ -*-===//
//
// The GPU fault tests load FakeCudaDriver.cpp's build (libcuda.so.1 or
// libamdhip64.so) by path before the runtime looks for a driver, so that
// the runtime's dlopen by name finds it by soname, and steer it through
// its kiln_fake_cuda_* control functions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_TEST_FAKEDRIVER_H
#define KILN_RUNTIME_TEST_FAKEDRIVER_H

#include "kiln/runtime.h"

#include <cstdint>
#include <dlfcn.h>
#include <string>

namespace kiln_test {

struct FakeDriver {
  void (*reset)();
  /// The nth next call of an entry point ("cuMemAlloc") returns `code`;
  /// with `sticky`, so does every later call.
  void (*fail)(const char *entry, int nth, int code, int sticky);
  void (*setMemory)(uint64_t bytes);
  /// Shared memory a block may opt in to (cuda; 227 KiB by default).
  void (*setSharedMemoryOptin)(int bytes);
  /// "launches", "graph-launches", "live-allocations", "live-modules", ...
  long (*count)(const char *what);
  /// The device pointer the last launch (or capture) of `kernel` passed
  /// first; 0 when it was not launched.
  uint64_t (*firstArgument)(const char *kernel);
};

/// Loads the stand-in at `path`; null functions when it cannot.
inline FakeDriver loadFakeDriver(const char *path) {
  FakeDriver d{};
  void *handle = ::dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return d;
  d.reset =
      reinterpret_cast<void (*)()>(::dlsym(handle, "kiln_fake_cuda_reset"));
  d.fail = reinterpret_cast<void (*)(const char *, int, int, int)>(
      ::dlsym(handle, "kiln_fake_cuda_fail"));
  d.setMemory = reinterpret_cast<void (*)(uint64_t)>(
      ::dlsym(handle, "kiln_fake_cuda_set_memory"));
  d.setSharedMemoryOptin = reinterpret_cast<void (*)(int)>(
      ::dlsym(handle, "kiln_fake_cuda_set_shared_memory_optin"));
  d.count = reinterpret_cast<long (*)(const char *)>(
      ::dlsym(handle, "kiln_fake_cuda_count"));
  d.firstArgument = reinterpret_cast<uint64_t (*)(const char *)>(
      ::dlsym(handle, "kiln_fake_cuda_first_argument"));
  return d;
}

/// What a test checks after it: every driver object was released.
inline const char *const kLiveCounts[] = {"live-allocations", "live-modules",
                                          "live-graphs", "live-events",
                                          "live-streams"};

inline std::string lastError() { return kiln_last_error(); }

inline bool contains(const std::string &s, const std::string &n) {
  return s.find(n) != std::string::npos;
}

} // namespace kiln_test

#endif
