//===- Pipeline.cpp - the compiler's phases and their passes --------------===//
//
// The graph, fused and tiled phases, which every target runs with its own
// strategies, and the dispatch to each target's kernels phase
// (CpuPipeline.cpp, CudaPipeline.cpp, RocmPipeline.cpp). Pipelines are built
// as C++ calls with typed pass options; `kiln-compile --print-pipeline`
// prints them.
//
// Each function pass is added on its own (addNestedPass), as the textual
// form `func.func(a),func.func(b)` would be.
//
//===----------------------------------------------------------------------===//
#include "PipelineSteps.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace kiln;

std::optional<Phase> kiln::parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("graph", Phase::Graph)
      .Case("fused", Phase::Fused)
      .Case("tiled", Phase::Tiled)
      .Case("kernels", Phase::Kernels)
      .Case("artifact", Phase::Artifact)
      .Default(std::nullopt);
}

llvm::StringRef kiln::phaseName(Phase phase) {
  switch (phase) {
  case Phase::Graph:
    return "graph";
  case Phase::Fused:
    return "fused";
  case Phase::Tiled:
    return "tiled";
  case Phase::Kernels:
    return "kernels";
  case Phase::Artifact:
    return "artifact";
  }
  llvm_unreachable("unknown phase");
}

void kiln::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // Serializing GPU modules translates them to LLVM IR in-process.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<KilnDialect>();
}

Strategies kiln::resolveStrategies(const CompileOptions &options,
                                   const TargetDescription &target) {
  bool gpu = target.isGpu();
  Strategies s;
  // Strided convolutions over an image's channels as space-to-depth ones
  // where matrix instructions compute them: on float32 thread tiles the
  // blocks' zero weights would only add work.
  s.spaceToDepthConvs = options.spaceToDepthConvs.value_or(
      gpu && (options.precision != "f32" || target.tf32));
  // Patches as einsums: matrix instructions' K on GPUs, register tiles
  // instead of a strided convolution's scalar reductions on the CPU.
  s.patchifyConvs = options.patchifyConvs.value_or(true);
  s.kMajorMatMulWeights = options.kMajorMatMulWeights.value_or(gpu);
  s.foldTransposesIntoContractions = gpu;
  s.splitMatMulK = options.splitMatMulK.value_or(gpu);
  s.splitConvK = options.splitConvK.value_or(gpu);
  // GPU: threads for a long reduction's few outputs; CPU: workgroups for
  // a whole tensor's (DynamicQuantizeLinear's range) on every core.
  s.splitReductions = true;
  s.channelsLastActivations = options.channelsLastActivations.value_or(gpu);
  s.everyConvChannelsLast = options.channelsLastActivations.value_or(false);
  s.channelsLastConvWeights = options.channelsLastConvWeights.value_or(gpu);
  s.windowPaddingInPlace = options.windowPaddingInPlace.value_or(gpu);
  // Off unless asked: each stage load then tests a mask (about 5 more SASS
  // instructions a copy), which issue-bound convolution loops may pay more
  // for than the padding kernel costs (docs/targets/cuda.md).
  s.convPaddingInPlace = gpu && options.convPaddingInPlace.value_or(false);
  s.fuseAttention = !gpu;
  s.narrowIntegerWeights = !gpu && options.narrowIntegerWeights;
  s.packMatMulWeights = !gpu && options.packMatMulWeights;
  auto has = [&](StringRef feature) {
    return llvm::is_contained(target.cpuFeatures, feature);
  };
  if (!gpu && options.int8DotProducts)
    s.int8DotProducts = has("avx512vnni") ? "avx512-vnni"
                        : has("avxvnni")  ? "avx-vnni"
                        : has("avx2")     ? "avx2"
                                          : "";
  s.int8MatrixTiles = !s.int8DotProducts.empty() && options.int8MatrixTiles &&
                      llvm::is_contained(target.cpuFeatures, "amx-int8") &&
                      llvm::is_contained(target.cpuFeatures, "amx-tile");
  return s;
}

static void addGraphPasses(OpPassManager &pm, const CompileOptions &options,
                           const TargetDescription &target,
                           const Strategies &strategies) {
  // First, on the graph as imported: which dim of each value is the batch.
  pm.addNestedPass<func::FuncOp>(createCheckBatchIndependence());
  pm.addNestedPass<func::FuncOp>(createFoldEmptyResults());
  pm.addNestedPass<func::FuncOp>(createDropRepeatedQuantization());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  // Before the passes that read constant weights: the GPUs' unpacked ones
  // are such constants.
  pm.addNestedPass<func::FuncOp>(
      createPackedWeights(PackedWeightsOptions{/*fold=*/target.isGpu()}));
  pm.addNestedPass<func::FuncOp>(createGatherBeforeTranspose());
  pm.addNestedPass<func::FuncOp>(createCancelLayoutTransposes());
  pm.addNestedPass<func::FuncOp>(createRecognizeLayerNorm());
  pm.addNestedPass<func::FuncOp>(createRecognizeActivations());
  pm.addNestedPass<func::FuncOp>(createDropPaddingOnlyTaps());
  pm.addNestedPass<func::FuncOp>(createConvColumnsAsRows());
  // The weights of a Gemm of few rows stay N x K on GPU targets (a warp per
  // output reads its row), and of one row on the CPU once K spans 16 vector
  // registers (a dot product per output; shorter ones spend more on the
  // horizontal sums, and more rows share a register tile's loads).
  int64_t oneRowMinK = target.isGpu() ? 1 : 16 * target.vectorWidth;
  int64_t dotProductRows = target.isGpu() ? kMaxGpuDotProductRows : 1;
  pm.addNestedPass<func::FuncOp>(createTransposeWeights(
      TransposeWeightsOptions{oneRowMinK, dotProductRows}));
  if (strategies.spaceToDepthConvs)
    pm.addNestedPass<func::FuncOp>(createSpaceToDepthStridedConvs());
  if (options.precision != "f32")
    pm.addNestedPass<func::FuncOp>(
        createDemotePrecision(DemotePrecisionOptions{options.precision}));
  pm.addNestedPass<func::FuncOp>(createComputeHalfInSingle());
}

/// On the CPU, attention as one kernel, whose workgroups each take whole
/// heads (the GPU kernels would give each thread a whole row of it). On
/// GPUs, transposes read by matmuls (attention's heads) folded into them,
/// and short deep matmuls and convolutions in parts along K (BERT and
/// ResNet-50 at batch 1).
/// The fewest elements of a CPU reduction with few outputs that is split
/// across workgroups (256 KiB of float32: a core reads it in about 20 us,
/// a second kernel costs about 2).
constexpr int64_t kCpuSplitReductionElements = 65536;

static void addFusedPasses(OpPassManager &pm, const CompileOptions &options,
                           const TargetDescription &target,
                           const Strategies &strategies) {
  // Patch embeddings as einsums first: a transpose after one (ViT's
  // flatten and transpose) then folds into it.
  if (strategies.patchifyConvs)
    pm.addNestedPass<func::FuncOp>(createPatchifyConvsAsEinsums(
        PatchifyConvsAsEinsumsOptions{/*vectorRegisters=*/!target.isGpu()}));
  // Before the fold that makes its transposes permuted einsums.
  if (strategies.kMajorMatMulWeights)
    pm.addNestedPass<func::FuncOp>(createKMajorMatMulWeights());
  if (strategies.foldTransposesIntoContractions)
    pm.addNestedPass<func::FuncOp>(createFoldTransposesIntoContractions());
  // Split until a contraction has two blocks per multiprocessor.
  int64_t enoughBlocks = 2 * target.multiprocessors;
  if (strategies.splitMatMulK) {
    SplitMatMulKOptions split;
    if (target.isGpu())
      split.maxBlocks = enoughBlocks;
    pm.addNestedPass<func::FuncOp>(createSplitMatMulK(split));
  }
  // GPU kernels that pad a depthwise input inside would pad a copy of
  // every thread's tile.
  SplitConvPaddingOptions splitPadding;
  splitPadding.splitDepthwise =
      target.isGpu() && !strategies.windowPaddingInPlace;
  pm.addNestedPass<func::FuncOp>(createSplitConvPadding(splitPadding));
  pm.addNestedPass<func::FuncOp>(createSplitPointwiseConvStride());
  // After both splits above (it moves their pads and slices to NHWC) and
  // before split-K, which splits either layout.
  if (strategies.channelsLastActivations) {
    ChannelsLastActivationsOptions channelsLast;
    if (strategies.everyConvChannelsLast)
      channelsLast.minConvsPerTranspose = 0;
    pm.addNestedPass<func::FuncOp>(createChannelsLastActivations(channelsLast));
  }
  // After both splits above: the convolutions it splits have no padding
  // and strided 1x1 ones are stride 1.
  if (strategies.splitConvK) {
    SplitConvKOptions split;
    if (target.isGpu())
      split.maxBlocks = enoughBlocks;
    pm.addNestedPass<func::FuncOp>(createSplitConvK(split));
  }
  // After the layout is chosen: a channels-last pooling reduces a middle
  // run of dims.
  if (strategies.splitReductions) {
    SplitReductionsOptions split;
    if (!target.isGpu()) {
      split.minOutputs = options.maxWorkgroups;
      split.minElements = kCpuSplitReductionElements;
    }
    pm.addNestedPass<func::FuncOp>(createSplitReductions(split));
  }
  // After split-K, whose grouped convolutions keep their layout.
  if (strategies.channelsLastConvWeights)
    pm.addNestedPass<func::FuncOp>(createChannelsLastConvWeights());
  // Before the epilogues move past reshapes: a packed matmul's result is
  // reshaped back. Integer matmuls first: the float32 packing would take
  // their weights. Convolutions before matmuls: those on narrow maps
  // become matmuls of patches.
  if (!strategies.int8DotProducts.empty()) {
    pm.addNestedPass<func::FuncOp>(createPackInt8ConvWeights());
    pm.addNestedPass<func::FuncOp>(createPackInt8MatMulWeights());
  }
  if (strategies.packMatMulWeights) {
    PackMatMulWeightsOptions pack;
    pack.panelWidth = 2 * cpuRegisterTile(options, target).vectorWidth;
    pm.addNestedPass<func::FuncOp>(createPackMatMulWeights(pack));
  }
  pm.addNestedPass<func::FuncOp>(createMoveReshapesAfterElementwise());
  // Last before the kernels form: after every pass that rearranges a
  // weight (they read float32 constants), and its casts then go into
  // their contractions' kernels.
  if (strategies.narrowIntegerWeights)
    pm.addNestedPass<func::FuncOp>(createNarrowIntegerWeights());
  FormDispatchRegionsOptions regions;
  regions.fuseAttention = strategies.fuseAttention;
  // GPU blocks read a convolution's padding in place.
  regions.fuseConvPadding = strategies.convPaddingInPlace;
  regions.absorbDequantizedOperands = !target.isGpu();
  pm.addNestedPass<func::FuncOp>(createFormDispatchRegions(regions));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
}

/// The kernel config pass of `target`: the CPU's workgroups around its
/// register tile; the GPUs' thread blocks, matrix blocks and workgroup
/// memory.
static std::unique_ptr<Pass> kernelConfigPass(const CompileOptions &options,
                                              const TargetDescription &target) {
  if (!target.isGpu()) {
    ConfigureCpuKernelsOptions config;
    config.maxWorkgroups = options.maxWorkgroups;
    RegisterTile tile = cpuRegisterTile(options, target);
    config.registerRows = tile.rows;
    config.vectorWidth = tile.vectorWidth;
    if (resolveStrategies(options, target).int8MatrixTiles)
      config.quadRows = kAmxTileRows;
    return createConfigureCpuKernels(config);
  }
  ConfigureGpuKernelsOptions config;
  if (target.isRocm())
    config.minBlockThreads = target.warpSize;
  config.threadBlocks = true;
  config.matrixTile = 16;
  config.matrixBlockRows = options.matrixBlockRows;
  config.matrixBlockCols = options.matrixBlockCols;
  config.workgroupMemoryBytes = target.workgroupMemoryBytes;
  // 128x256 matrix blocks pay on warpgroup instructions alone
  // (BlockTileSizes.cpp's widestMatrixColumns says why).
  config.wideMatrixBlocks = target.matrix == MatrixInstructions::Wgmma;
  config.matrixFloat32 = target.tf32;
  return createConfigureGpuKernels(config);
}

static void addTiledPasses(OpPassManager &pm, const CompileOptions &options,
                           const TargetDescription &target,
                           const Strategies &strategies) {
  pm.addPass(createOutlineDispatches(OutlineDispatchesOptions{target.name}));
  OpPassManager &kernels = pm.nest<ModuleOp>();
  ConvertKilnToLinalgOptions lowering;
  if (target.isGpu()) {
    lowering.flattenRowsBelow = 0;
    lowering.concatByElement = true;
  }
  lowering.readWindowPaddingInPlace = strategies.windowPaddingInPlace;
  kernels.addPass(createConvertKilnToLinalg(lowering));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addNestedPass<func::FuncOp>(createFoldExpandShapesIntoConsumers());
  kernels.addNestedPass<func::FuncOp>(createFuseElementwiseProducers());
  if (target.isGpu())
    kernels.addNestedPass<func::FuncOp>(createCollapseReductionLoops());
  kernels.addNestedPass<func::FuncOp>(
      createPrepareKernelTiling(PrepareKernelTilingOptions{target.isGpu()}));
  kernels.addNestedPass<func::FuncOp>(kernelConfigPass(options, target));
  kernels.addNestedPass<func::FuncOp>(
      createTileAndDistribute(TileAndDistributeOptions{target.isGpu()}));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
}

void kiln::addBufferizePasses(OpPassManager &kernels) {
  kernels.addPass(bufferization::createEmptyTensorEliminationPass());
  kernels.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  kernels.addPass(bufferization::createOneShotBufferizePass());
  kernels.addPass(createCanonicalizerPass());
}

static void addKernelPasses(OpPassManager &pm, const CompileOptions &options,
                            const TargetDescription &target) {
  // Identical kernels (repeated layers) first become one, so that each is
  // generated and compiled once.
  pm.addPass(createDeduplicateKernels());
  OpPassManager &kernels = pm.nest<ModuleOp>();
  switch (target.kind) {
  case TargetKind::Cpu:
    return addCpuKernelPasses(kernels, options, target);
  case TargetKind::Cuda:
    return addCudaKernelPasses(kernels, options, target);
  case TargetKind::Rocm:
    return addRocmKernelPasses(kernels, options, target);
  }
}

void kiln::buildPhasePipeline(OpPassManager &pm, Phase phase,
                              const CompileOptions &options,
                              const TargetDescription &target) {
  Strategies strategies = resolveStrategies(options, target);
  switch (phase) {
  case Phase::Graph:
    return addGraphPasses(pm, options, target, strategies);
  case Phase::Fused:
    return addFusedPasses(pm, options, target, strategies);
  case Phase::Tiled:
    return addTiledPasses(pm, options, target, strategies);
  case Phase::Kernels:
    return addKernelPasses(pm, options, target);
  case Phase::Artifact:
    return;
  }
}

LogicalResult kiln::checkCompileOptions(const CompileOptions &options,
                                        std::string &error) {
  if (options.precision != "f32" && options.precision != "f16" &&
      options.precision != "bf16") {
    error = "unknown precision '" + options.precision + "' (f32, f16, bf16)";
    return failure();
  }
  return success();
}
