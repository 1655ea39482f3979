//===- CpuFeatures.cpp - CPUID and XCR0 against a feature list ------------===//
#include "CpuFeatures.h"

#include "kiln/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <cerrno>
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace kiln;
using namespace kiln::cpu_features;

namespace {

#if defined(__x86_64__)
/// XCR0: the register state the OS saves on a context switch (0 without
/// XSAVE, where only SSE state is usable).
uint64_t enabledState() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))
    return 0;
  uint32_t low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return uint64_t(high) << 32 | low;
}

bool stateEnabled(State state, uint64_t xcr0) {
  auto all = [&](uint64_t bits) { return (xcr0 & bits) == bits; };
  switch (state) {
  case State::None:
    return true;
  case State::Avx: // SSE and AVX (YMM) state
    return all(0x6);
  case State::Avx512: // and the opmask and ZMM state
    return all(0xe6);
  case State::Amx: // tile configuration and data
    return all(0x60000);
  }
  return false;
}

bool hostHas(const Feature &feature, uint64_t xcr0) {
  unsigned regs[4];
  if (__get_cpuid_max(feature.leaf & 0x80000000u, nullptr) < feature.leaf)
    return false;
  __cpuid_count(feature.leaf, feature.subleaf, regs[0], regs[1], regs[2],
                regs[3]);
  return (regs[int(feature.reg)] >> feature.bit & 1) &&
         stateEnabled(feature.state, xcr0);
}
#else
uint64_t enabledState() { return 0; }
bool hostHas(const Feature &, uint64_t) { return false; }
#endif

bool hiddenByEnvironment(const std::string &name) {
  const char *hidden = std::getenv("KILN_CPU_FEATURES_DISABLE");
  if (!hidden)
    return false;
  std::stringstream list(hidden);
  std::string item;
  while (std::getline(list, item, ','))
    if (item == name)
      return true;
  return false;
}

} // namespace

std::vector<std::string>
kiln::missingCpuFeatures(const std::vector<std::string> &needed) {
  uint64_t xcr0 = enabledState();
  std::vector<std::string> missing;
  for (const std::string &name : needed) {
    const Feature *known = nullptr;
    for (const Feature &feature : kFeatures)
      if (name == feature.name)
        known = &feature;
    if (!known || !hostHas(*known, xcr0) || hiddenByEnvironment(name))
      missing.push_back(name);
  }
  return missing;
}

std::string kiln::enableTileState(const std::vector<std::string> &needed) {
  bool tiles = false;
  for (const std::string &name : needed)
    tiles = tiles || name == "amx-tile";
  if (!tiles)
    return "";
#if defined(__x86_64__) && defined(__linux__)
  // arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): Linux 5.16 on.
  constexpr int kRequestPermission = 0x1023, kTileData = 18;
  if (syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0)
    return "";
  return std::string("Linux refused the AMX tile state "
                     "(arch_prctl(ARCH_REQ_XCOMP_PERM): ") +
         std::strerror(errno) + ")";
#else
  return "";
#endif
}
