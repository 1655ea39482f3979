//===- CudaPipeline.cpp - the cuda target's kernels phase -----------------===//
//
// The GPU kernels lowered to NVVM with one target per chip; serialization
// (ptxas) is the artifact step (docs/targets/cuda.md).
//
//===----------------------------------------------------------------------===//
#include "PipelineSteps.h"

#include "kiln/Passes/Passes.h"
#include "kiln/Target/CudaTarget.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace kiln;

/// Without a CUDA toolkit, math is approximated so that no libdevice
/// function is needed.
static void addLowerToNVVMPasses(OpPassManager &gpuModule, bool toolkit,
                                 bool wgmma) {
  gpuModule.addNestedPass<gpu::GPUFuncOp>(createHoistStaticAllocas());
  gpuModule.addPass(memref::createExpandStridedMetadataPass());
  gpuModule.addPass(createLowerAffinePass());
  gpuModule.addPass(createConvertNvgpuToNvvm());
  if (!toolkit)
    gpuModule.addPass(createApproximateMath());
  gpuModule.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  gpuModule.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  // wgmma.mma_async has no LLVM intrinsic: it becomes inline PTX.
  if (wgmma)
    gpuModule.addPass(createConvertNVVMToLLVMPass());
  gpuModule.addPass(createExternDynamicSharedMemory());
  if (!toolkit)
    gpuModule.addPass(createLibdeviceToIntrinsics());
}

void kiln::addCudaKernelPasses(OpPassManager &kernels,
                               const CompileOptions &options,
                               const TargetDescription &target) {
  addGpuBufferizePasses(kernels);
  addGpuThreadMappingPasses(kernels, target, options.wgmmaGroupsInFlight);
  kernels.addPass(createDynamicWorkgroupMemory());
  if (options.narrowGpuIndices)
    kernels.addPass(createNarrowGpuIndices());
  kernels.addPass(createAddGpuKernelSignatures());
  bool toolkit = !findCudaToolkit(options.cudaToolkit).empty();
  addLowerToNVVMPasses(kernels.nest<gpu::GPUModuleOp>(), toolkit,
                       target.matrix == MatrixInstructions::Wgmma);
  // sm_90 needs PTX 8.0; the same ISA version serves every chip we support.
  addChipTargetPasses(kernels, target, [](llvm::StringRef chip) {
    GpuNVVMAttachTargetOptions attach;
    attach.chip = chip.str();
    attach.features = "+ptx80";
    attach.optLevel = 3;
    return createGpuNVVMAttachTarget(attach);
  });
}
