//===- RocmTarget.h - the rocm target: chips, device libs, hsaco -*- C++
//-*-===//
#ifndef KILN_TARGET_ROCMTARGET_H
#define KILN_TARGET_ROCMTARGET_H

#include "kiln/Target/GpuImage.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

/// `--target=rocm` (gfx942) or `--target=rocm:gfx90a,gfx942`.
struct RocmTargetSpec {
  std::vector<std::string> chips;
};

/// True for "rocm" and "rocm:...".
bool isRocmTarget(llvm::StringRef target);

/// Parses a rocm target; on failure `error` names the bad chip and the
/// supported ones.
mlir::FailureOr<RocmTargetSpec> parseRocmTarget(llvm::StringRef target,
                                                std::string &error);

/// The most compute units of any chip of `spec`, taking each chip as its
/// largest part (gfx90a: MI250X, 110 per die; gfx942: MI300X, 304): a
/// kernel with fewer workgroups leaves some idle.
int64_t rocmComputeUnits(const RocmTargetSpec &spec);

/// The chip whose ISA the shared lowering (convert-gpu-to-rocdl) assumes:
/// the oldest of the target's chips, so that every chip runs what it emits.
std::string rocmLoweringChip(const RocmTargetSpec &spec);

/// A folder laid out as `gpu-module-to-binary` expects of a ROCm install
/// (llvm/bin/ld.lld, amdgcn/bitcode/ocml.bc, ...): `explicitPath`
/// (--rocm-path) when set, else $ROCM_PATH, /opt/rocm, then the layout the
/// build assembled from Debian's lld-22 and rocm-device-libs. Empty when
/// none is complete; `searched` then lists where it looked.
std::string findRocmToolkit(llvm::StringRef explicitPath,
                            std::string &searched);

/// Serializes the kernels module's `gpu.module` (ROCDL dialect, targets
/// attached) into one hsaco code object per chip.
mlir::FailureOr<std::vector<GpuImage>> buildRocmImages(mlir::ModuleOp kernels,
                                                       llvm::StringRef toolkit);

} // namespace kiln

#endif
