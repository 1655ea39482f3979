//===- KernelObjectCheck.cpp - a kernel object checked before it loads ----===//
#include "KernelObjectCheck.h"
#include "Status.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <optional>
#include <set>
#include <string>

using namespace kiln;

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char *kHostName = "x86-64";
/// The relocations a linker writes for position-independent code and data:
/// none of them runs code (R_X86_64_IRELATIVE calls a resolver).
bool isPlainRelocation(uint32_t type) {
  return type == R_X86_64_NONE || type == R_X86_64_64 ||
         type == R_X86_64_RELATIVE || type == R_X86_64_GLOB_DAT ||
         type == R_X86_64_JUMP_SLOT;
}
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char *kHostName = "AArch64";
bool isPlainRelocation(uint32_t type) {
  return type == R_AARCH64_NONE || type == R_AARCH64_ABS64 ||
         type == R_AARCH64_RELATIVE || type == R_AARCH64_GLOB_DAT ||
         type == R_AARCH64_JUMP_SLOT;
}
#else
constexpr uint16_t kHostMachine = EM_NONE;
constexpr const char *kHostName = "this machine";
bool isPlainRelocation(uint32_t) { return false; }
#endif

/// Functions kernels call besides libm's: libc's for their temporaries and
/// copies, and the compiler runtime's float16/bfloat16 conversions.
const std::set<std::string> kRuntimeFunctions = {
    "malloc",         "free",           "calloc",       "realloc",
    "aligned_alloc",  "posix_memalign", "memcpy",       "memmove",
    "memset",         "__truncdfhf2",   "__truncsfhf2", "__extendhfsf2",
    "__extendhfdf2",  "__truncdfbf2",   "__truncsfbf2", "__extendbfsf2",
    "__gnu_h2f_ieee", "__gnu_f2h_ieee"};

kiln_status refuse(const std::string &why) {
  return fail(KILN_ERROR_KERNEL_LOAD, "the artifact's kernel object " + why);
}

/// The object's bytes, read through bounds checks.
class ElfImage {
public:
  ElfImage(const uint8_t *bytes, size_t size) : bytes(bytes), size(size) {}

  /// A copy of the T at file offset `offset` (the bytes have no alignment),
  /// or none past the end.
  template <typename T> std::optional<T> at(uint64_t offset) const {
    if (offset > size || size - offset < sizeof(T))
      return std::nullopt;
    T value;
    std::memcpy(&value, bytes + offset, sizeof(T));
    return value;
  }
  /// The file offset of virtual address `address`, from the loadable
  /// segments; none when no segment's file bytes hold it.
  std::optional<uint64_t> offsetOf(uint64_t address) const {
    for (const Elf64_Phdr &load : loads)
      if (address >= load.p_vaddr && address - load.p_vaddr < load.p_filesz)
        return load.p_offset + (address - load.p_vaddr);
    return std::nullopt;
  }
  /// The NUL-terminated string at `offset` in the string table at file
  /// offset `table` of `tableSize` bytes; none when it runs past either.
  std::optional<std::string> string(uint64_t table, uint64_t tableSize,
                                    uint64_t offset) const {
    if (table > size || tableSize > size - table || offset >= tableSize)
      return std::nullopt;
    const char *begin = reinterpret_cast<const char *>(bytes + table + offset);
    size_t length = strnlen(begin, tableSize - offset);
    if (length == tableSize - offset)
      return std::nullopt;
    return std::string(begin, length);
  }

  std::vector<Elf64_Phdr> loads;

private:
  const uint8_t *bytes;
  size_t size;
};

/// What the dynamic section says.
struct Dynamic {
  std::vector<uint64_t> needed;
  uint64_t strtab = 0, strsz = 0, symtab = 0, syment = sizeof(Elf64_Sym);
  uint64_t rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0, gnuHash = 0;
  bool hasStrtab = false, hasSymtab = false;
};

/// Why a dynamic tag makes the loader run the object's code or look
/// outside it; "" for the tags a plain object has.
const char *forbiddenTag(int64_t tag) {
  switch (tag) {
  case DT_INIT:
  case DT_INIT_ARRAY:
  case DT_PREINIT_ARRAY:
    return "has initializers (code that runs when it is loaded)";
  case DT_FINI:
  case DT_FINI_ARRAY:
    return "has finalizers (code that runs when it is unloaded)";
  case DT_REL:
  case DT_TEXTREL:
    return "has relocations of a kind Kiln's linker does not emit";
  case DT_RPATH:
  case DT_RUNPATH:
  case DT_AUDIT:
  case DT_DEPAUDIT:
  case DT_AUXILIARY:
  case DT_FILTER:
    return "names other objects to search or load";
  }
  return "";
}

kiln_status readDynamic(const ElfImage &image, const Elf64_Phdr &segment,
                        Dynamic &dynamic) {
  for (uint64_t offset = segment.p_offset;; offset += sizeof(Elf64_Dyn)) {
    if (offset - segment.p_offset >= segment.p_filesz)
      return refuse("has a dynamic section without its end marker");
    std::optional<Elf64_Dyn> entry = image.at<Elf64_Dyn>(offset);
    if (!entry)
      return refuse("has a dynamic section past its end");
    if (entry->d_tag == DT_NULL)
      return KILN_OK;
    if (const char *why = forbiddenTag(entry->d_tag); *why)
      return refuse(why);
    uint64_t value = entry->d_un.d_val;
    switch (entry->d_tag) {
    case DT_NEEDED:
      dynamic.needed.push_back(value);
      break;
    case DT_STRTAB:
      dynamic.strtab = value;
      dynamic.hasStrtab = true;
      break;
    case DT_STRSZ:
      dynamic.strsz = value;
      break;
    case DT_SYMTAB:
      dynamic.symtab = value;
      dynamic.hasSymtab = true;
      break;
    case DT_SYMENT:
      dynamic.syment = value;
      break;
    case DT_RELA:
      dynamic.rela = value;
      break;
    case DT_RELASZ:
      dynamic.relasz = value;
      break;
    case DT_JMPREL:
      dynamic.jmprel = value;
      break;
    case DT_PLTRELSZ:
      dynamic.pltrelsz = value;
      break;
    case DT_GNU_HASH:
      dynamic.gnuHash = value;
      break;
    }
  }
}

/// Symbols in the dynamic symbol table, from the GNU hash table (the last
/// symbol any bucket's chain reaches, plus one); none when unreadable.
std::optional<uint64_t> symbolCount(const ElfImage &image,
                                    uint64_t gnuHashOffset) {
  std::optional<uint32_t> buckets = image.at<uint32_t>(gnuHashOffset);
  std::optional<uint32_t> symbolOffset = image.at<uint32_t>(gnuHashOffset + 4);
  std::optional<uint32_t> bloomWords = image.at<uint32_t>(gnuHashOffset + 8);
  if (!buckets || !symbolOffset || !bloomWords)
    return std::nullopt;
  uint64_t bucketsAt = gnuHashOffset + 16 + uint64_t(*bloomWords) * 8;
  uint64_t last = 0;
  for (uint64_t b = 0; b < *buckets; ++b) {
    std::optional<uint32_t> bucket = image.at<uint32_t>(bucketsAt + b * 4);
    if (!bucket)
      return std::nullopt;
    last = std::max<uint64_t>(last, *bucket);
  }
  if (last < *symbolOffset)
    return uint64_t(*symbolOffset);
  // The last bucket's chain ends at the entry whose low bit is set.
  uint64_t chainsAt = bucketsAt + uint64_t(*buckets) * 4;
  for (uint64_t i = last;; ++i) {
    std::optional<uint32_t> hash =
        image.at<uint32_t>(chainsAt + (i - *symbolOffset) * 4);
    if (!hash)
      return std::nullopt;
    if (*hash & 1)
      return i + 1;
  }
}

/// Whether `name` is a function libm itself defines (not one of its
/// dependencies': a lookup through libm's handle also finds libc's).
bool isLibmFunction(const std::string &name) {
  static void *libm = dlopen("libm.so.6", RTLD_LAZY | RTLD_LOCAL);
  if (!libm)
    return false;
  void *symbol = dlsym(libm, name.c_str());
  Dl_info info;
  link_map *map = nullptr;
  return symbol && dladdr(symbol, &info) &&
         dlinfo(libm, RTLD_DI_LINKMAP, &map) == 0 && map &&
         info.dli_fbase == reinterpret_cast<void *>(map->l_addr);
}

/// Checks one relocation table: plain kinds only, and each symbol it binds
/// either the object's own (not an IFUNC) or an allowed import. Appends
/// them to `relocations`.
kiln_status
checkRelocations(const ElfImage &image, const Dynamic &dynamic, uint64_t table,
                 uint64_t bytes, uint64_t symbols,
                 std::vector<KernelObjectLayout::Relocation> &relocations) {
  if (bytes == 0)
    return KILN_OK;
  std::optional<uint64_t> at = image.offsetOf(table);
  if (!at)
    return refuse("has a relocation table outside its segments");
  std::optional<uint64_t> strtab = image.offsetOf(dynamic.strtab);
  std::optional<uint64_t> symtab = image.offsetOf(dynamic.symtab);
  for (uint64_t i = 0; i < bytes / sizeof(Elf64_Rela); ++i) {
    std::optional<Elf64_Rela> rela =
        image.at<Elf64_Rela>(*at + i * sizeof(Elf64_Rela));
    if (!rela)
      return refuse("has a relocation table past its end");
    uint32_t type = ELF64_R_TYPE(rela->r_info);
    if (!isPlainRelocation(type))
      return refuse("has a relocation of type " + std::to_string(type) +
                    ", which Kiln's linker does not emit (one that runs "
                    "code, or for another machine)");
    KernelObjectLayout::Relocation relocation{rela->r_offset, type,
                                              rela->r_addend, 0, ""};
    uint64_t index = ELF64_R_SYM(rela->r_info);
    if (index == 0) {
      relocations.push_back(relocation);
      continue;
    }
    std::optional<Elf64_Sym> symbol =
        index < symbols && symtab
            ? image.at<Elf64_Sym>(*symtab + index * dynamic.syment)
            : std::nullopt;
    if (!symbol)
      return refuse("has a relocation against a symbol it does not hold");
    if (ELF64_ST_TYPE(symbol->st_info) == STT_GNU_IFUNC)
      return refuse("binds an IFUNC (a symbol resolved by running code)");
    if (symbol->st_shndx != SHN_UNDEF) {
      relocation.symbolValue = symbol->st_value;
      relocations.push_back(relocation);
      continue;
    }
    std::optional<std::string> name =
        strtab ? image.string(*strtab, dynamic.strsz, symbol->st_name)
               : std::nullopt;
    if (!name)
      return refuse("imports a symbol whose name it does not hold");
    if (!kRuntimeFunctions.count(*name) && !isLibmFunction(*name))
      return refuse("imports '" + *name +
                    "', which is neither a libm function nor one of the "
                    "memory and conversion functions kernels call");
    relocation.import = *name;
    relocations.push_back(relocation);
  }
  return KILN_OK;
}

} // namespace

bool CodeRanges::contains(uint64_t offset) const {
  for (const Range &range : ranges)
    if (offset >= range.begin && offset < range.end)
      return true;
  return false;
}

kiln_status kiln::checkKernelObject(const uint8_t *bytes, size_t size,
                                    KernelObjectLayout &layout) {
  CodeRanges &code = layout.code;
  ElfImage image(bytes, size);
  std::optional<Elf64_Ehdr> header = image.at<Elf64_Ehdr>(0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0)
    return refuse("is not an ELF file");
  if (header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_ident[EI_DATA] != ELFDATA2LSB)
    return refuse("is not a 64-bit little-endian ELF file");
  if (header->e_machine != kHostMachine)
    return refuse("is for ELF machine " + std::to_string(header->e_machine) +
                  ", not " + kHostName +
                  ": the artifact was compiled for another CPU");
  if (header->e_type != ET_DYN)
    return refuse("is not a shared object");
  if (header->e_phentsize != sizeof(Elf64_Phdr))
    return refuse("has program headers of an unknown size");

  std::optional<Elf64_Phdr> dynamicSegment;
  for (uint64_t i = 0; i < header->e_phnum; ++i) {
    std::optional<Elf64_Phdr> segment =
        image.at<Elf64_Phdr>(header->e_phoff + i * sizeof(Elf64_Phdr));
    if (!segment)
      return refuse("has program headers past its end");
    switch (segment->p_type) {
    case PT_LOAD:
      if (segment->p_offset > size ||
          segment->p_filesz > size - segment->p_offset)
        return refuse("has a segment past its end");
      if (segment->p_memsz < segment->p_filesz)
        return refuse("has a segment smaller in memory than in the file");
      image.loads.push_back(*segment);
      if (segment->p_flags & PF_X)
        code.ranges.push_back(
            {segment->p_vaddr, segment->p_vaddr + segment->p_memsz});
      break;
    case PT_DYNAMIC:
      dynamicSegment = segment;
      break;
    case PT_GNU_RELRO:
      layout.relro = *segment;
      break;
    case PT_GNU_EH_FRAME:
      layout.unwindTableHeader = segment->p_vaddr;
      break;
    case PT_INTERP:
      return refuse("names a program interpreter");
    case PT_TLS:
      return refuse("has thread-local storage");
    }
  }
  if (!dynamicSegment)
    return refuse("has no dynamic section");

  Dynamic dynamic;
  if (kiln_status s = readDynamic(image, *dynamicSegment, dynamic))
    return s;
  std::optional<uint64_t> strtab = image.offsetOf(dynamic.strtab);
  if (!dynamic.hasStrtab || !dynamic.hasSymtab || !strtab ||
      dynamic.syment != sizeof(Elf64_Sym))
    return refuse("has no readable symbol table");
  for (uint64_t name : dynamic.needed) {
    std::optional<std::string> library =
        image.string(*strtab, dynamic.strsz, name);
    if (!library || (*library != "libm.so.6" && *library != "libc.so.6"))
      return refuse("needs '" + library.value_or("?") +
                    "'; kernels need only libm.so.6 and libc.so.6");
  }
  std::optional<uint64_t> hash = image.offsetOf(dynamic.gnuHash);
  std::optional<uint64_t> symbols =
      dynamic.gnuHash && hash ? symbolCount(image, *hash) : std::nullopt;
  if (!symbols)
    return refuse("has no readable GNU hash table");
  // Every symbol, bound or not: dlsym of an IFUNC entry point would run it.
  std::optional<uint64_t> symtab = image.offsetOf(dynamic.symtab);
  for (uint64_t i = 1; i < *symbols; ++i) {
    std::optional<Elf64_Sym> symbol =
        symtab ? image.at<Elf64_Sym>(*symtab + i * sizeof(Elf64_Sym))
               : std::nullopt;
    if (!symbol)
      return refuse("has a symbol table past its end");
    if (ELF64_ST_TYPE(symbol->st_info) == STT_GNU_IFUNC)
      return refuse("defines an IFUNC (a symbol resolved by running code)");
    if (symbol->st_shndx == SHN_UNDEF)
      continue;
    std::optional<std::string> name =
        image.string(*strtab, dynamic.strsz, symbol->st_name);
    if (!name)
      return refuse("has a symbol whose name it does not hold");
    layout.symbols.push_back({*name, symbol->st_value, symbol->st_size,
                              uint8_t(ELF64_ST_TYPE(symbol->st_info))});
  }
  layout.loads = image.loads;
  if (kiln_status s =
          checkRelocations(image, dynamic, dynamic.rela, dynamic.relasz,
                           *symbols, layout.relocations))
    return s;
  return checkRelocations(image, dynamic, dynamic.jmprel, dynamic.pltrelsz,
                          *symbols, layout.relocations);
}
