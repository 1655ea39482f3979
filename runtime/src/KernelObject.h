//===- KernelObject.h - the CPU kernels, loaded by the runtime --*- C++ -*-===//
//
// An artifact's CPU kernel object is loaded as data by the runtime's own
// loader: checked (KernelObjectCheck.h), copied into fresh pages, relocated,
// and only then made executable. The system loader never sees it, so no
// code in it runs while it is opened, its names never enter the process's
// symbol scope, and its imports bind only to a fixed list of functions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_KERNEL_OBJECT_H
#define KILN_RUNTIME_KERNEL_OBJECT_H

#include "KernelObjectCheck.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln {

class KernelObject {
public:
  using KernelFn = void (*)(void **, int64_t, int64_t);

  /// What a kernel was compiled to take, as kiln-compile exports it beside
  /// the kernel (`<kernel>.signature`: the binding count, the workgroup
  /// count, then the bytes the kernel reaches in each binding).
  struct Signature {
    /// The workgroups it was compiled for.
    uint64_t workgroups = 0;
    std::vector<uint64_t> bindingBytes;
  };

  KernelObject() = default;
  KernelObject(const KernelObject &) = delete;
  KernelObject &operator=(const KernelObject &) = delete;
  ~KernelObject();

  /// Checks the object (checkKernelObject) and loads it.
  kiln_status load(const uint8_t *bytes, size_t size);
  /// The entry point called `name`: a function the object defines in its
  /// code; null otherwise.
  KernelFn lookup(const std::string &name) const;
  /// The signature exported for kernel `name`; null when there is none.
  const Signature *signature(const std::string &name) const;

private:
  kiln_status map(const uint8_t *bytes, const KernelObjectLayout &layout);
  kiln_status relocate(const KernelObjectLayout &layout);
  kiln_status protect(const KernelObjectLayout &layout);
  void registerUnwindTable(const KernelObjectLayout &layout);
  kiln_status readSymbols(const KernelObjectLayout &layout);

  uint8_t *base_ = nullptr; ///< where the object's address 0 is mapped
  size_t span_ = 0;         ///< bytes mapped from base_
  /// The object's unwind table as registered with the unwinder, if any (an
  /// exception may pass through a kernel that calls back into C++).
  void *unwindTable_ = nullptr;
  std::unordered_map<std::string, KernelFn> entries_;
  std::unordered_map<std::string, Signature> signatures_;
};

} // namespace kiln

#endif
