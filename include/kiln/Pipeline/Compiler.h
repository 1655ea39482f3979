//===- Compiler.h - ONNX file → IR text or .kiln artifact -------*- C++ -*-===//
#ifndef KILN_PIPELINE_COMPILER_H
#define KILN_PIPELINE_COMPILER_H

#include "kiln/Artifact/ArtifactWriter.h"
#include "kiln/Import/OnnxImporter.h"
#include "kiln/Pipeline/IRDump.h"
#include "kiln/Pipeline/Pipeline.h"

#include <functional>

namespace kiln {

struct CompileRequest {
  std::string modelPath;
  ImportOptions import;
  CompileOptions compile;
  /// The last phase to run; for any phase but Artifact the result is IR text.
  Phase stopAfter = Phase::Artifact;
  /// Lets the caller add instrumentation (IR printing, timing) to the pass
  /// manager before it runs.
  std::function<void(mlir::PassManager &)> configurePassManager;
  /// When dumpIR.dir is set, the IR after import and after every pass that
  /// changed it goes to files there.
  IRDumpOptions dumpIR;
  /// When set, the graph with its dispatch regions is drawn here (DOT).
  std::string dumpGraphFile;
  /// --dynamic-batch: other chunks of the batch to compile the kernels for
  /// too; the artifact carries each, and the runtime runs a batch as pieces
  /// of the chunks it has.
  std::vector<int64_t> batchChunks;
  /// Set when this compile is a batch variant of another: its weights go
  /// into that artifact's pool instead of its own.
  SharedWeights *parentWeights = nullptr;
};

struct CompileResult {
  /// The artifact bytes, or the IR text of the phase compilation stopped at.
  std::string output;
  std::vector<UnsupportedNode> unsupported;
  ArtifactSummary summary;
  /// ONNX nodes in the model's graph.
  size_t onnxNodes = 0;
  /// Wall time of import, each phase that ran, and code generation.
  std::vector<std::pair<std::string, double>> phaseSeconds;
};

/// Writes the result's summary as JSON: per kernel its ONNX nodes, FLOPs,
/// bytes, tiling and arena slots; totals; compile time per phase.
void writeReportJson(const CompileResult &result, llvm::StringRef model,
                     llvm::raw_ostream &os);
/// The same as a short table for `kiln-compile --summary`.
void printSummary(const CompileResult &result, llvm::raw_ostream &os);

/// Runs the whole compiler. Errors are reported as diagnostics on `context`;
/// unsupported nodes are returned in `CompileResult::unsupported` with a
/// failure status.
mlir::LogicalResult compileModel(mlir::MLIRContext &context,
                                 const CompileRequest &request,
                                 CompileResult &result);

/// Parses "name=1x3x224x224" (an empty dim list means a scalar).
mlir::LogicalResult parseInputShape(llvm::StringRef spec,
                                    ImportOptions &options, std::string &error);

} // namespace kiln

#endif
