//===- PipelineSteps.h - the pass lists each target builds from -*- C++ -*-===//
//
// Private to lib/Pipeline: the strategies resolved for one compilation and
// the kernels-phase builders of each target (CpuPipeline.cpp,
// CudaPipeline.cpp, RocmPipeline.cpp; GpuPipeline.cpp holds what both GPU
// targets run).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_PIPELINE_PIPELINESTEPS_H
#define KILN_LIB_PIPELINE_PIPELINESTEPS_H

#include "kiln/Pipeline/Pipeline.h"

namespace kiln {

/// The graph-level strategies of one compilation: each option as given,
/// else its target's default. The one place those defaults are decided.
struct Strategies {
  bool spaceToDepthConvs = false;
  bool patchifyConvs = false;
  bool kMajorMatMulWeights = false;
  bool foldTransposesIntoContractions = false;
  bool splitMatMulK = false;
  bool splitConvK = false;
  bool splitReductions = false;
  bool channelsLastActivations = false;
  /// --channels-last-activations=on: every convolution, even where its
  /// trial would add more transposes than it allows.
  bool everyConvChannelsLast = false;
  bool channelsLastConvWeights = false;
  bool windowPaddingInPlace = false;
  bool convPaddingInPlace = false;
  /// Attention as one kernel whose workgroups take whole heads (the CPU).
  bool fuseAttention = false;
  /// Integer-valued float32 weights of few-row contractions stored as int8
  /// or int16 and widened in the kernel (the CPU's register tiles and dot
  /// products; GPU kernels read float32 weights).
  bool narrowIntegerWeights = false;
  /// Few-row matmuls' constant weights stored as column panels (the CPU's
  /// register tiles; GPU kernels read B in its own layout).
  bool packMatMulWeights = false;
  /// Matmuls and convolutions of uint8 activations by int8 weights as
  /// 4-way integer dot products: the CPU's ISA for them (the
  /// `instructions` of kiln-contract-int8-quads: avx512-vnni, avx-vnni,
  /// avx2), or empty where they compute in floating point (GPUs).
  std::string int8DotProducts;
  /// Their blocks of 16 rows on AMX tiles (`tdpbusd`).
  bool int8MatrixTiles = false;
};
Strategies resolveStrategies(const CompileOptions &options,
                             const TargetDescription &target);

/// The CPU's register tile (kiln-configure-cpu-kernels and
/// kiln-contract-with-vector-registers, which must agree): rows x float32
/// elements of one vector register.
struct RegisterTile {
  int64_t rows, vectorWidth;
};
RegisterTile cpuRegisterTile(const CompileOptions &options,
                             const TargetDescription &target);

/// The register tile of the int8 dot products (kiln-contract-int8-quads'
/// and kiln-contract-int8-conv-quads' `rows` x `panels`), by their ISA.
struct Int8RegisterTile {
  int64_t rows, panels;
};
Int8RegisterTile cpuInt8RegisterTile(llvm::StringRef instructions);

/// The kernels phase of each target, on the kernels module's pass manager.
void addCpuKernelPasses(mlir::OpPassManager &kernels,
                        const CompileOptions &options,
                        const TargetDescription &target);
void addCudaKernelPasses(mlir::OpPassManager &kernels,
                         const CompileOptions &options,
                         const TargetDescription &target);
void addRocmKernelPasses(mlir::OpPassManager &kernels,
                         const CompileOptions &options,
                         const TargetDescription &target);

/// The last passes of both GPU targets: one target attribute per chip of
/// `target` (`attachPass` makes its pass), so that serialization builds
/// an image per chip, then the casts left between dialects resolved.
void addChipTargetPasses(
    mlir::OpPassManager &kernels, const TargetDescription &target,
    llvm::function_ref<std::unique_ptr<mlir::Pass>(llvm::StringRef chip)>
        attachPass);

/// Bufferization and the cleanup after it, the first passes of every
/// target's kernels phase.
void addBufferizePasses(mlir::OpPassManager &kernels);

} // namespace kiln

#endif
