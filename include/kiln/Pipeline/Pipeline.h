//===- Pipeline.h - the compiler's phases and their passes ------*- C++ -*-===//
#ifndef KILN_PIPELINE_PIPELINE_H
#define KILN_PIPELINE_PIPELINE_H

#include "kiln/Pipeline/CompileOptions.h"
#include "kiln/Target/TargetDescription.h"

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>

namespace kiln {

/// The compiler's phases, in order (docs/architecture.md). Compilation can
/// stop after any of them.
enum class Phase { Graph, Fused, Tiled, Kernels, Artifact };

std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::StringRef phaseName(Phase phase);

/// Registers every dialect and extension the pipeline needs on `registry`.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// The GPU targets' first kernel passes, on the kernels module's pass
/// manager (kiln-emulate-gpu runs them too): bufferization with small
/// temporaries on the stack.
void addGpuBufferizePasses(mlir::OpPassManager &kernels);
/// What follows them: contractions on matrix instructions or thread tiles,
/// rows on the lanes of a warp, copies on threads, and one gpu.func per
/// kernel, whose blocks may use the target's workgroup memory (the stage
/// buffers are sized to it). `wgmmaGroupsInFlight`: sm_90a's
/// --wgmma-groups-in-flight.
void addGpuThreadMappingPasses(mlir::OpPassManager &kernels,
                               const TargetDescription &target,
                               int64_t wgmmaGroupsInFlight = 1);

/// Adds the passes of one phase (the artifact phase has none: it is
/// serialization) for `target`, which describeTarget made from `options`.
void buildPhasePipeline(mlir::OpPassManager &pm, Phase phase,
                        const CompileOptions &options,
                        const TargetDescription &target);

/// Checks what describeTarget does not: the precision. An error names the
/// option.
mlir::LogicalResult checkCompileOptions(const CompileOptions &options,
                                        std::string &error);

} // namespace kiln

#endif
