//===- GpuPipeline.cpp - what both GPU targets do to tiled kernels --------===//
//
// Bufferize, keep small temporaries on the stack, choose how each block
// computes its contraction and put it on matrix instructions or thread tiles,
// give each row-reduction row to the lanes of a warp, and make every kernel a
// gpu.func of one gpu.module. The chip-specific lowering follows in
// CudaPipeline.cpp and RocmPipeline.cpp.
//
//===----------------------------------------------------------------------===//
#include "PipelineSteps.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace kiln;

void kiln::addGpuBufferizePasses(OpPassManager &kernels) {
  addBufferizePasses(kernels);
  kernels.addNestedPass<func::FuncOp>(createExpandMemrefCopies());
  kernels.addNestedPass<func::FuncOp>(createPromoteTemporariesToStack());
  bufferization::buildBufferDeallocationPipeline(
      kernels, bufferization::BufferDeallocationPipelineOptions());
}

static ConfigureGpuContractionsOptions
contractionOptions(const TargetDescription &target,
                   int64_t wgmmaGroupsInFlight) {
  ConfigureGpuContractionsOptions options;
  options.arch = target.vendor().str();
  options.tf32 = target.tf32;
  options.workgroupMemoryBytes = target.workgroupMemoryBytes;
  if (target.matrix == MatrixInstructions::Wgmma) {
    options.wgmma = true;
    options.wgmmaGroupsInFlight = wgmmaGroupsInFlight;
  }
  return options;
}

void kiln::addGpuThreadMappingPasses(OpPassManager &kernels,
                                     const TargetDescription &target,
                                     int64_t wgmmaGroupsInFlight) {
  kernels.addNestedPass<func::FuncOp>(createConfigureGpuContractions(
      contractionOptions(target, wgmmaGroupsInFlight)));
  ContractWithMatrixCoresOptions matrix;
  matrix.arch = target.vendor().str();
  kernels.addNestedPass<func::FuncOp>(createContractWithMatrixCores(matrix));
  kernels.addNestedPass<func::FuncOp>(createContractWithThreadTiles());
  DistributeRowsToLanesOptions rows;
  rows.lanes = target.warpSize;
  kernels.addNestedPass<func::FuncOp>(createDistributeRowsToLanes(rows));
  kernels.addNestedPass<func::FuncOp>(createDistributeCopiesToThreads());
  kernels.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  MapKernelsToGpuOptions mapping;
  mapping.warpSize = target.warpSize;
  mapping.workgroupMemoryBytes = target.workgroupMemoryBytes;
  // Blocks run one per multiprocessor at least: a kernel with fewer
  // leaves some idle, so small kernels take smaller blocks.
  mapping.minBlocks = target.multiprocessors;
  kernels.addPass(createMapKernelsToGpu(mapping));
  kernels.nest<gpu::GPUModuleOp>().addNestedPass<gpu::GPUFuncOp>(
      createGroupThreadAccesses());
}

void kiln::addChipTargetPasses(
    OpPassManager &kernels, const TargetDescription &target,
    llvm::function_ref<std::unique_ptr<Pass>(llvm::StringRef chip)>
        attachPass) {
  for (const std::string &chip : target.chips)
    kernels.addPass(attachPass(chip));
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
}
