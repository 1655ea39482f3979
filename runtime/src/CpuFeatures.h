//===- CpuFeatures.h - does this CPU run a CPU artifact's kernels? --------===//
#ifndef KILN_RUNTIME_CPUFEATURES_H
#define KILN_RUNTIME_CPUFEATURES_H

#include <string>
#include <vector>

namespace kiln {

/// The features of `needed` (LLVM names, kiln/cpu_features.h) that this CPU
/// lacks, its OS does not enable, or this runtime does not know, in the order
/// given. $KILN_CPU_FEATURES_DISABLE (a comma list) hides features the CPU
/// has, to check that an artifact is refused where they are missing.
std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &needed);

/// Asks Linux for this process's AMX tile data state when `needed` holds
/// "amx-tile" (the kernels may use AMX tiles: an instruction on them
/// faults until the process asked, once). Empty on success or when not
/// needed, else why the OS refused.
std::string enableTileState(const std::vector<std::string> &needed);

} // namespace kiln

#endif // KILN_RUNTIME_CPUFEATURES_H
