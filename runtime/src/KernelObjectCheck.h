//===- KernelObjectCheck.h - a kernel object checked before it loads ------===//
//
// An artifact's CPU kernels are an ELF shared object that the system loader
// maps. The loader runs an object's initializers, IFUNC resolvers and
// finalizers, and binds its imports to whatever the process defines, so a
// forged artifact could run code as it is opened. The check below reads the
// object as data first and refuses anything Kiln's own linker does not
// emit.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_KERNEL_OBJECT_CHECK_H
#define KILN_RUNTIME_KERNEL_OBJECT_CHECK_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

/// The executable segments of a kernel object, as offsets from its load
/// base: where its entry points must lie.
struct CodeRanges {
  struct Range {
    uint64_t begin, end;
  };
  std::vector<Range> ranges;
  bool contains(uint64_t offset) const;
};

/// Checks the ELF bytes of a kernel object: a shared object for this
/// machine that runs none of its code while it is loaded or unloaded (no
/// initializers, finalizers, IFUNCs or interpreter), uses only the
/// relocation kinds a linker emits for plain code and data, needs only
/// libm and libc, and imports only libm's functions, the memory functions
/// kernels call (malloc, free, memcpy, memset, ...) and the compiler
/// runtime's float16/bfloat16 conversions. Fills
/// `code` with its executable segments. Every read is bounds-checked: the
/// bytes may be anything.
kiln_status checkKernelObject(const uint8_t *bytes, size_t size,
                              CodeRanges &code);

} // namespace kiln

#endif
