//===- cpu_features.h - x86-64 features a CPU artifact may need -*- C++ -*-===//
//
// The instruction-set extensions a CPU artifact records (Model.cpu_features)
// and the runtime checks before it loads the kernels: by LLVM's feature name
// (what --cpu enables), with where CPUID reports each and the register state
// the OS must save for it (XCR0). Features every x86-64 CPU has (SSE2, CMOV)
// are not listed. Shared by the compiler's CPU target and the runtime;
// header-only data.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CPU_FEATURES_H
#define KILN_CPU_FEATURES_H

#include <cstdint>

namespace kiln::cpu_features {

enum class Reg : uint8_t { Eax, Ebx, Ecx, Edx };
/// Register state the OS must enable (XCR0) for the feature's instructions.
enum class State : uint8_t { None, Avx, Avx512, Amx };

struct Feature {
  const char *name; // LLVM's
  uint32_t leaf, subleaf;
  Reg reg;
  uint8_t bit;
  State state;
};

inline constexpr Feature kFeatures[] = {
    {"sse3", 1, 0, Reg::Ecx, 0, State::None},
    {"pclmul", 1, 0, Reg::Ecx, 1, State::None},
    {"ssse3", 1, 0, Reg::Ecx, 9, State::None},
    {"fma", 1, 0, Reg::Ecx, 12, State::Avx},
    {"sse4.1", 1, 0, Reg::Ecx, 19, State::None},
    {"sse4.2", 1, 0, Reg::Ecx, 20, State::None},
    {"movbe", 1, 0, Reg::Ecx, 22, State::None},
    {"popcnt", 1, 0, Reg::Ecx, 23, State::None},
    {"aes", 1, 0, Reg::Ecx, 25, State::None},
    {"avx", 1, 0, Reg::Ecx, 28, State::Avx},
    {"f16c", 1, 0, Reg::Ecx, 29, State::Avx},
    {"bmi", 7, 0, Reg::Ebx, 3, State::None},
    {"avx2", 7, 0, Reg::Ebx, 5, State::Avx},
    {"bmi2", 7, 0, Reg::Ebx, 8, State::None},
    {"avx512f", 7, 0, Reg::Ebx, 16, State::Avx512},
    {"avx512dq", 7, 0, Reg::Ebx, 17, State::Avx512},
    {"adx", 7, 0, Reg::Ebx, 19, State::None},
    {"avx512ifma", 7, 0, Reg::Ebx, 21, State::Avx512},
    {"avx512cd", 7, 0, Reg::Ebx, 28, State::Avx512},
    {"sha", 7, 0, Reg::Ebx, 29, State::None},
    {"avx512bw", 7, 0, Reg::Ebx, 30, State::Avx512},
    {"avx512vl", 7, 0, Reg::Ebx, 31, State::Avx512},
    {"avx512vbmi", 7, 0, Reg::Ecx, 1, State::Avx512},
    {"avx512vbmi2", 7, 0, Reg::Ecx, 6, State::Avx512},
    {"gfni", 7, 0, Reg::Ecx, 8, State::None},
    {"vaes", 7, 0, Reg::Ecx, 9, State::Avx},
    {"vpclmulqdq", 7, 0, Reg::Ecx, 10, State::Avx},
    {"avx512vnni", 7, 0, Reg::Ecx, 11, State::Avx512},
    {"avx512bitalg", 7, 0, Reg::Ecx, 12, State::Avx512},
    {"avx512vpopcntdq", 7, 0, Reg::Ecx, 14, State::Avx512},
    {"avx512vp2intersect", 7, 0, Reg::Edx, 8, State::Avx512},
    {"amx-bf16", 7, 0, Reg::Edx, 22, State::Amx},
    {"avx512fp16", 7, 0, Reg::Edx, 23, State::Avx512},
    {"amx-tile", 7, 0, Reg::Edx, 24, State::Amx},
    {"amx-int8", 7, 0, Reg::Edx, 25, State::Amx},
    {"avxvnni", 7, 1, Reg::Eax, 4, State::Avx},
    {"avx512bf16", 7, 1, Reg::Eax, 5, State::Avx512},
    {"lzcnt", 0x80000001, 0, Reg::Ecx, 5, State::None},
};

} // namespace kiln::cpu_features

#endif // KILN_CPU_FEATURES_H
