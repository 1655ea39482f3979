//===- RocmPipeline.cpp - the rocm target's kernels phase -----------------===//
//
// The GPU kernels lowered to ROCDL (math through the ROCm device
// libraries, linked at serialization) with one target per chip
// (docs/targets/rocm.md).
//
//===----------------------------------------------------------------------===//
#include "PipelineSteps.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace kiln;

void kiln::addRocmKernelPasses(OpPassManager &kernels, const CompileOptions &,
                               const TargetDescription &target) {
  addGpuBufferizePasses(kernels);
  addGpuThreadMappingPasses(kernels, target);
  kernels.addPass(createAddGpuKernelSignatures());
  // The shared lowering assumes the oldest chip's ISA, so that every chip
  // runs what it emits.
  const std::string &chipset = target.loweringChip;
  OpPassManager &gpuModule = kernels.nest<gpu::GPUModuleOp>();
  gpuModule.addNestedPass<gpu::GPUFuncOp>(createHoistStaticAllocas());
  gpuModule.addPass(memref::createExpandStridedMetadataPass());
  gpuModule.addPass(createLowerAffinePass());
  gpuModule.addPass(createSCFToControlFlowPass());
  gpuModule.addPass(
      createConvertAMDGPUToROCDLPass(ConvertAMDGPUToROCDLPassOptions{chipset}));
  // Before the gpu lowering, whose generic math patterns may pick
  // llvm.intr.tanh & co., which the AMDGPU backend cannot select.
  kernels.addPass(createConvertMathToROCDL(ConvertMathToROCDLOptions{chipset}));
  ConvertGpuOpsToROCDLOpsOptions toROCDL;
  toROCDL.chipset = chipset;
  toROCDL.useBarePtrCallConv = true;
  toROCDL.runtime = gpu::amd::Runtime::HIP;
  OpPassManager &loweredModule = kernels.nest<gpu::GPUModuleOp>();
  loweredModule.addPass(createConvertGpuOpsToROCDLOps(toROCDL));
  loweredModule.addNestedPass<LLVM::LLVMFuncOp>(
      createAllocasToPrivateAddressSpace());
  // Code object v5: what ROCm 6 runtimes load by default.
  addChipTargetPasses(kernels, target, [](llvm::StringRef chip) {
    GpuROCDLAttachTargetOptions attach;
    attach.chip = chip.str();
    attach.abiVersion = "500";
    attach.optLevel = 3;
    return createGpuROCDLAttachTarget(attach);
  });
}
