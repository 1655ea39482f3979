//===- KernelObjectCheck.h - a kernel object checked before it loads ------===//
//
// An artifact's CPU kernels are an ELF shared object, linked by kiln-compile
// and mapped by the runtime's own loader (KernelObject.cpp), never by the
// system's: nothing in the object runs until a dispatch calls a kernel. The
// check below reads the object as data and refuses anything Kiln's linker
// does not emit (initializers, finalizers, IFUNCs, thread-local storage,
// relocations that run code, imports beyond a fixed list); what passes is
// described for the loader.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_KERNEL_OBJECT_CHECK_H
#define KILN_RUNTIME_KERNEL_OBJECT_CHECK_H

#include "kiln/runtime.h"

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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

/// A checked kernel object as its loader needs it; addresses are the
/// object's own (from a load base of 0).
struct KernelObjectLayout {
  std::vector<Elf64_Phdr> loads; ///< its PT_LOAD segments
  std::optional<Elf64_Phdr> relro;
  /// The address of its unwind table header (PT_GNU_EH_FRAME), if any.
  std::optional<uint64_t> unwindTableHeader;
  CodeRanges code; ///< its executable segments
  struct Relocation {
    uint64_t offset;
    uint32_t type;
    int64_t addend;
    uint64_t symbolValue; ///< the object's own symbol's address, else 0
    std::string import;   ///< the imported symbol's name, else ""
  };
  std::vector<Relocation> relocations;
  struct Symbol {
    std::string name;
    uint64_t value, size;
    uint8_t type; ///< STT_FUNC, STT_OBJECT, ...
  };
  std::vector<Symbol> symbols; ///< the symbols it defines
};

/// Checks the ELF bytes of a kernel object: a shared object for this
/// machine that runs none of its code while it is loaded or unloaded (no
/// initializers, finalizers, IFUNCs or interpreter), uses only the
/// relocation kinds a linker emits for plain code and data, needs only
/// libm and libc, and imports only libm's functions, the memory functions
/// kernels call (malloc, free, memcpy, memset, ...) and the compiler
/// runtime's float16/bfloat16 conversions. Fills `layout`. Every read is
/// bounds-checked: the bytes may be anything.
kiln_status checkKernelObject(const uint8_t *bytes, size_t size,
                              KernelObjectLayout &layout);

} // namespace kiln

#endif
