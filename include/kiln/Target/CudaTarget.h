//===- CudaTarget.h - the cuda target: chips, toolkit, device images -*- C++
//-*-===//
#ifndef KILN_TARGET_CUDATARGET_H
#define KILN_TARGET_CUDATARGET_H

#include "kiln/Target/GpuImage.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

/// `--target=cuda` (sm_90) or `--target=cuda:sm_80,sm_90`.
struct CudaTargetSpec {
  std::vector<std::string> chips;
};

/// The most workgroup (shared) memory one block may use on every chip of
/// `spec`, in bytes, dynamic shared memory included (CUDA's opt-in limit
/// per block: 227 KiB on sm_90, 163 KiB on sm_80, 99 KiB on sm_86 and
/// sm_89).
int64_t cudaWorkgroupMemoryLimit(const CudaTargetSpec &spec);

/// The most streaming multiprocessors of any chip of `spec`, taking each
/// chip as its largest data-center part (A100 108, A40 84, L40S 142,
/// H100/H200 SXM 132): a kernel with fewer blocks leaves some idle.
int64_t cudaMultiprocessors(const CudaTargetSpec &spec);

/// True when every chip of `spec` is sm_90a, whose kernels may then use
/// warpgroup matrix instructions (wgmma; one gpu.module serves every chip
/// of a target, and sm_90 without `a` or earlier chips lack them).
bool cudaTargetHasWgmma(const CudaTargetSpec &spec);

/// True for "cuda" and "cuda:...".
bool isCudaTarget(llvm::StringRef target);

/// Parses a cuda target; on failure `error` names the bad chip and the
/// supported ones.
mlir::FailureOr<CudaTargetSpec> parseCudaTarget(llvm::StringRef target,
                                                std::string &error);

/// The CUDA toolkit folder: `explicitPath` when set, else $CUDA_HOME, then
/// $CUDA_PATH, then /usr/local/cuda. Empty when none of them holds
/// bin/ptxas and nvvm/libdevice/libdevice.10.bc, or when `explicitPath` is
/// "none" (compile PTX for the driver, as on a machine without a toolkit).
std::string findCudaToolkit(llvm::StringRef explicitPath);

/// Serializes the kernels module's `gpu.module` (NVVM dialect, targets
/// attached) into one image per chip: a cubin when `toolkit` is set, PTX
/// for the driver to compile otherwise.
mlir::FailureOr<std::vector<GpuImage>> buildCudaImages(mlir::ModuleOp kernels,
                                                       llvm::StringRef toolkit);

} // namespace kiln

#endif
