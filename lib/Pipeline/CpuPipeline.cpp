//===- CpuPipeline.cpp - the cpu target's kernels phase -------------------===//
//
// Tiled kernels to the LLVM dialect: workgroups as loops of one function
// each, contractions on vector registers, math as inline polynomials, and
// the kernel ABI the runtime calls (docs/targets/cpu.md).
//
//===----------------------------------------------------------------------===//
#include "PipelineSteps.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace kiln;

/// 8 x 16 with AVX-512 (16 accumulators of two vectors per row), 6 x 8
/// elsewhere (12 of AVX's 16 registers), unless --register-tile says.
RegisterTile kiln::cpuRegisterTile(const CompileOptions &options,
                                   const TargetDescription &target) {
  int64_t width =
      options.vectorWidth > 0 ? options.vectorWidth : target.vectorWidth;
  int64_t rows = options.registerRows > 0 ? options.registerRows
                 : width >= 16            ? 8
                                          : 6;
  return {rows, width};
}

/// Accumulators of 16 int32 sums take one register with AVX-512 VNNI (16
/// of 32: 4 x 4), two with AVX-VNNI and four with AVX2 (8 of 16: 2 x 2
/// and 2 x 1, leaving registers for the operands).
Int8RegisterTile kiln::cpuInt8RegisterTile(StringRef instructions) {
  if (instructions == "avx-vnni")
    return {2, 2};
  if (instructions == "avx2")
    return {2, 1};
  return {4, 4};
}

/// The loops, memrefs and math of the kernels as LLVM dialect (AMX tiles
/// as LLVM's AMX intrinsics, whose tile configuration LLVM writes).
static void addLowerToLLVMPasses(OpPassManager &kernels, bool amx) {
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  ConvertVectorToLLVMPassOptions vectors;
  vectors.amx = amx;
  kernels.addPass(createConvertVectorToLLVMPass(vectors));
  kernels.addPass(createFinalizeMemRefToLLVMConversionPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createConvertMathToLibmPass());
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertControlFlowToLLVMPass());
  kernels.addPass(createConvertFuncToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void kiln::addCpuKernelPasses(OpPassManager &kernels,
                              const CompileOptions &options,
                              const TargetDescription &target) {
  kernels.addNestedPass<func::FuncOp>(createDecomposePads());
  addBufferizePasses(kernels);
  // cse after bufferization: a padded tile written into the output leaves
  // a copy of the output's tile onto an identical view of itself, which
  // canonicalize folds once the two views are one value.
  kernels.addPass(createCSEPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addNestedPass<func::FuncOp>(createMapForallToWorkgroups());
  kernels.addNestedPass<func::FuncOp>(createExpandMemrefCopies());
  RegisterTile tile = cpuRegisterTile(options, target);
  kernels.addNestedPass<func::FuncOp>(createContractWithVectorRegisters(
      ContractWithVectorRegistersOptions{tile.vectorWidth, tile.rows}));
  kernels.addNestedPass<func::FuncOp>(createVectorizeReductionRows(
      VectorizeReductionRowsOptions{tile.vectorWidth}));
  bufferization::buildBufferDeallocationPipeline(
      kernels, bufferization::BufferDeallocationPipelineOptions());
  // After deallocation, which refuses ops of unknown memory effects (its
  // LLVM intrinsic calls and the memref cast).
  Strategies strategies = resolveStrategies(options, target);
  if (!strategies.int8DotProducts.empty()) {
    Int8RegisterTile int8Tile = cpuInt8RegisterTile(strategies.int8DotProducts);
    ContractInt8QuadsOptions quads;
    quads.instructions = strategies.int8DotProducts;
    quads.rows = int8Tile.rows;
    quads.panels = int8Tile.panels;
    quads.matrixTiles = strategies.int8MatrixTiles;
    kernels.addNestedPass<func::FuncOp>(createContractInt8Quads(quads));
    ContractInt8ConvQuadsOptions convQuads;
    convQuads.instructions = strategies.int8DotProducts;
    convQuads.rows = int8Tile.rows;
    convQuads.panels = int8Tile.panels;
    convQuads.matrixTiles = strategies.int8MatrixTiles;
    kernels.addNestedPass<func::FuncOp>(createContractInt8ConvQuads(convQuads));
  }
  kernels.addNestedPass<func::FuncOp>(createForallToForLoopPass());
  kernels.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  kernels.addNestedPass<func::FuncOp>(createRelaxClampsBeforeIntegerCasts());
  // Inline polynomials instead of libm calls, so that LLVM vectorizes
  // softmax, GELU and sigmoid loops.
  ApproximateMathOptions approximate;
  approximate.functions = {"math.exp", "math.erf", "math.tanh"};
  kernels.addNestedPass<func::FuncOp>(createApproximateMath(approximate));
  // bfloat16 rounding without a libcall (__truncsfbf2).
  kernels.addPass(createExpandBFloat16Casts());
  addLowerToLLVMPasses(kernels, strategies.int8MatrixTiles);
  kernels.addPass(createAddCpuKernelAbi());
  kernels.addPass(createCanonicalizerPass());
}
