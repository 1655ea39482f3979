//===- CpuTarget.h - LLVM-dialect kernels → x86-64 shared object -*- C++
//-*-===//
#ifndef KILN_TARGET_CPUTARGET_H
#define KILN_TARGET_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

struct CpuTargetOptions {
  /// LLVM CPU name; "native" means the host's CPU and features.
  std::string cpu = "native";
};

/// Float32 elements of one vector register of the CPU: 16 with AVX-512, 8
/// with AVX, 4 otherwise (the register tiles of
/// kiln-contract-with-vector-registers are sized by it).
int64_t cpuVectorWidth(const CpuTargetOptions &options);

/// Translates the kernels module (LLVM dialect only) to LLVM IR, optimizes it
/// at O3, emits an object file and links it into an ELF shared object with
/// lld. Returns the shared object's bytes.
mlir::FailureOr<std::string>
buildCpuKernelObject(mlir::ModuleOp kernels, const CpuTargetOptions &options);

} // namespace kiln

#endif
