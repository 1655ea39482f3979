//===- CpuTarget.h - LLVM-dialect kernels → x86-64 shared object -*- C++
//-*-===//
#ifndef KILN_TARGET_CPUTARGET_H
#define KILN_TARGET_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

struct CpuTargetOptions {
  /// LLVM CPU name; "native" means the host's CPU and features.
  std::string cpu = "native";
};

/// What LLVM makes of `--cpu`.
struct CpuDescription {
  /// The LLVM CPU ("native" resolved to this machine's).
  std::string cpu;
  /// The features of kiln/cpu_features.h the CPU enables: the artifact
  /// records them and the runtime checks them before it runs the kernels.
  std::vector<std::string> features;
  /// Float32 elements of one vector register: 16 with AVX-512, 8 with AVX,
  /// 4 otherwise (the register tiles of kiln-contract-with-vector-registers
  /// are sized by it).
  int64_t vectorWidth = 4;
};
CpuDescription describeCpu(const CpuTargetOptions &options);

/// Translates the kernels module (LLVM dialect only) to LLVM IR, optimizes it
/// at O3, emits an object file and links it into an ELF shared object with
/// lld. Returns the shared object's bytes.
mlir::FailureOr<std::string>
buildCpuKernelObject(mlir::ModuleOp kernels, const CpuTargetOptions &options);

} // namespace kiln

#endif
