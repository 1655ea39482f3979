//===- KernelObject.cpp - the runtime's own loader for CPU kernels --------===//
//
// Loads a checked kernel object (KernelObjectCheck.cpp) the way the system
// loader would map a shared object, minus everything that runs code or
// reaches outside it: the segments are copied into anonymous pages that
// stay writable and never executable while the relocations are applied,
// imports bind to the fixed list the check allows, and the pages then take
// their segments' permissions (never writable and executable at once; the
// RELRO range read-only). Entry points and signatures come only from the
// object's own symbol table.
//
//===----------------------------------------------------------------------===//
#include "KernelObject.h"
#include "Status.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

using namespace kiln;

// libgcc's unwinder (libgcc_s): an object the system loader did not map
// registers its .eh_frame itself, as JIT compilers do.
extern "C" void __register_frame(void *) __attribute__((weak));
extern "C" void __deregister_frame(void *) __attribute__((weak));

namespace {

/// The most address space a kernel object may span: far beyond any model's
/// kernels, and a forged object cannot reserve more.
constexpr uint64_t kMaxSpan = uint64_t(1) << 30;

kiln_status refuse(const std::string &why) {
  return fail(KILN_ERROR_KERNEL_LOAD, "the artifact's kernel object " + why);
}

uint64_t pageSize() {
  static const uint64_t size = uint64_t(sysconf(_SC_PAGESIZE));
  return size;
}
uint64_t pageDown(uint64_t address) { return address & ~(pageSize() - 1); }
uint64_t pageUp(uint64_t address) { return pageDown(address + pageSize() - 1); }

/// Whether [address, address + bytes) lies in one segment with all of
/// `flags` (PF_R, PF_W, PF_X).
bool inSegment(const KernelObjectLayout &layout, uint64_t address,
               uint64_t bytes, uint32_t flags) {
  for (const Elf64_Phdr &load : layout.loads)
    if ((load.p_flags & flags) == flags && address >= load.p_vaddr &&
        address - load.p_vaddr <= load.p_memsz &&
        bytes <= load.p_memsz - (address - load.p_vaddr))
      return true;
  return false;
}

/// The address an allowed import binds to: the process's own definition, as
/// the system loader would bind it (under a sanitizer, its interceptor),
/// else libm's.
void *resolveImport(const std::string &name) {
  if (void *address = dlsym(RTLD_DEFAULT, name.c_str()))
    return address;
  static void *libm = dlopen("libm.so.6", RTLD_LAZY | RTLD_LOCAL);
  return libm ? dlsym(libm, name.c_str()) : nullptr;
}

int protection(uint32_t flags) {
  return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
         (flags & PF_X ? PROT_EXEC : 0);
}

} // namespace

KernelObject::~KernelObject() {
  if (unwindTable_ && __deregister_frame)
    __deregister_frame(unwindTable_);
  if (base_)
    munmap(base_, span_);
}

kiln_status KernelObject::load(const uint8_t *bytes, size_t size) {
  KernelObjectLayout layout;
  if (kiln_status s = checkKernelObject(bytes, size, layout))
    return s;
  if (kiln_status s = map(bytes, layout))
    return s;
  if (kiln_status s = relocate(layout))
    return s;
  if (kiln_status s = protect(layout))
    return s;
  registerUnwindTable(layout);
  return readSymbols(layout);
}

kiln_status KernelObject::map(const uint8_t *bytes,
                              const KernelObjectLayout &layout) {
  std::vector<Elf64_Phdr> loads = layout.loads;
  if (loads.empty())
    return refuse("has no loadable segment");
  std::sort(loads.begin(), loads.end(),
            [](const Elf64_Phdr &a, const Elf64_Phdr &b) {
              return a.p_vaddr < b.p_vaddr;
            });
  uint64_t end = 0;
  for (const Elf64_Phdr &load : loads) {
    if (load.p_vaddr > kMaxSpan || load.p_memsz > kMaxSpan - load.p_vaddr)
      return refuse("spans more than " + std::to_string(kMaxSpan >> 20) +
                    " MiB of addresses");
    // Each page takes one segment's permissions.
    if (end > 0 && pageDown(load.p_vaddr) < pageUp(end))
      return refuse("has segments that share a page");
    if ((load.p_flags & PF_W) && (load.p_flags & PF_X))
      return refuse("has a segment both writable and executable");
    end = load.p_vaddr + load.p_memsz;
  }
  span_ = pageUp(end);
  void *pages = mmap(nullptr, span_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) {
    span_ = 0;
    return fail(
        KILN_ERROR_OUT_OF_MEMORY,
        "cannot map " + std::to_string(end) +
            " bytes for the artifact's kernel object: " + std::strerror(errno));
  }
  base_ = static_cast<uint8_t *>(pages);
  // The check bounded every segment's file bytes by the object's size.
  for (const Elf64_Phdr &load : loads)
    std::memcpy(base_ + load.p_vaddr, bytes + load.p_offset, load.p_filesz);
  return KILN_OK;
}

kiln_status KernelObject::relocate(const KernelObjectLayout &layout) {
  for (const KernelObjectLayout::Relocation &r : layout.relocations) {
    if (r.type == 0) // R_X86_64_NONE, R_AARCH64_NONE
      continue;
    if (!inSegment(layout, r.offset, sizeof(uint64_t), PF_W))
      return refuse("relocates an address outside its writable segments");
    uint64_t symbol = uint64_t(base_) + r.symbolValue;
    if (!r.import.empty()) {
      void *address = resolveImport(r.import);
      if (!address)
        return refuse("imports '" + r.import +
                      "', which this process does not provide");
      symbol = uint64_t(address);
    }
    uint64_t value;
#if defined(__x86_64__)
    switch (r.type) {
    case R_X86_64_RELATIVE:
      value = uint64_t(base_) + uint64_t(r.addend);
      break;
    case R_X86_64_64:
      value = symbol + uint64_t(r.addend);
      break;
    default: // R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT
      value = symbol;
      break;
    }
#else
    // AArch64: RELATIVE is B + A; ABS64, GLOB_DAT and JUMP_SLOT are S + A.
    value = (r.type == R_AARCH64_RELATIVE ? uint64_t(base_) : symbol) +
            uint64_t(r.addend);
#endif
    std::memcpy(base_ + r.offset, &value, sizeof(value));
  }
  return KILN_OK;
}

kiln_status KernelObject::protect(const KernelObjectLayout &layout) {
  auto change = [&](uint64_t begin, uint64_t end, int prot) {
    return begin >= end || mprotect(base_ + begin, end - begin, prot) == 0;
  };
  // Pages between segments stay inaccessible.
  bool ok = change(0, span_, PROT_NONE);
  for (const Elf64_Phdr &load : layout.loads)
    ok = ok &&
         change(pageDown(load.p_vaddr), pageUp(load.p_vaddr + load.p_memsz),
                protection(load.p_flags));
  if (layout.relro && layout.relro->p_vaddr <= span_ &&
      layout.relro->p_memsz <= span_ - layout.relro->p_vaddr)
    ok = ok && change(pageDown(layout.relro->p_vaddr),
                      pageDown(layout.relro->p_vaddr + layout.relro->p_memsz),
                      PROT_READ);
  if (!ok)
    return fail(KILN_ERROR_KERNEL_LOAD,
                std::string("cannot set the permissions of the artifact's "
                            "kernel object: ") +
                    std::strerror(errno));
  return KILN_OK;
}

void KernelObject::registerUnwindTable(const KernelObjectLayout &layout) {
  // .eh_frame_hdr: version 1, then the encoding of the pointer to
  // .eh_frame, which linkers write PC-relative as 4 signed bytes (0x1b).
  constexpr uint8_t kPcRelativeSigned4 = 0x1b;
  if (!layout.unwindTableHeader || !__register_frame ||
      !inSegment(layout, *layout.unwindTableHeader, 8, PF_R))
    return;
  const uint8_t *header = base_ + *layout.unwindTableHeader;
  if (header[0] != 1 || header[1] != kPcRelativeSigned4)
    return;
  int32_t relative;
  std::memcpy(&relative, header + 4, sizeof(relative));
  uint64_t table = *layout.unwindTableHeader + 4 + int64_t(relative);
  // libgcc walks the entries to a zero length: register only a table that
  // ends so inside a readable segment.
  for (uint64_t at = table;;) {
    uint32_t length;
    if (!inSegment(layout, at, sizeof(length), PF_R))
      return;
    std::memcpy(&length, base_ + at, sizeof(length));
    if (length == 0)
      break;
    if (length == 0xffffffffu) // 64-bit lengths: not what linkers write here
      return;
    at += sizeof(length) + uint64_t(length);
  }
  unwindTable_ = base_ + table;
  __register_frame(unwindTable_);
}

kiln_status KernelObject::readSymbols(const KernelObjectLayout &layout) {
  static constexpr std::string_view kSuffix = ".signature";
  for (const KernelObjectLayout::Symbol &symbol : layout.symbols) {
    if (symbol.type == STT_FUNC && layout.code.contains(symbol.value)) {
      entries_[symbol.name] = reinterpret_cast<KernelFn>(base_ + symbol.value);
      continue;
    }
    std::string_view name = symbol.name;
    if (symbol.type != STT_OBJECT || name.size() <= kSuffix.size() ||
        name.substr(name.size() - kSuffix.size()) != kSuffix)
      continue;
    std::string kernel(name.substr(0, name.size() - kSuffix.size()));
    // [binding count, workgroups, bytes of each binding], read-only data.
    uint64_t words[2];
    if (symbol.size < sizeof(words) || symbol.size % sizeof(uint64_t) ||
        !inSegment(layout, symbol.value, symbol.size, PF_R) ||
        inSegment(layout, symbol.value, symbol.size, PF_W))
      return refuse("has a malformed signature for kernel '" + kernel + "'");
    std::memcpy(words, base_ + symbol.value, sizeof(words));
    if (words[0] != symbol.size / sizeof(uint64_t) - 2)
      return refuse("has a signature for kernel '" + kernel + "' of " +
                    std::to_string(words[0]) + " bindings in " +
                    std::to_string(symbol.size) + " bytes");
    Signature &signature = signatures_[kernel];
    signature.workgroups = words[1];
    signature.bindingBytes.resize(words[0]);
    std::memcpy(signature.bindingBytes.data(),
                base_ + symbol.value + sizeof(words),
                words[0] * sizeof(uint64_t));
  }
  return KILN_OK;
}

KernelObject::KernelFn KernelObject::lookup(const std::string &name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second;
}

const KernelObject::Signature *
KernelObject::signature(const std::string &name) const {
  auto it = signatures_.find(name);
  return it == signatures_.end() ? nullptr : &it->second;
}
