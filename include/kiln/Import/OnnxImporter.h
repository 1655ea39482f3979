//===- OnnxImporter.h - ONNX model → kiln dialect -----------------*- C++
//-*-===//
#ifndef KILN_IMPORT_ONNXIMPORTER_H
#define KILN_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

struct ImportOptions {
  /// Concrete shapes for graph inputs, by name; they replace symbolic dims.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Graph inputs whose values are fixed at compile time (TensorProto .pb
  /// files, by input name). They become constants and leave the model's
  /// inputs, e.g. to bind a Reshape's shape that a model takes as input.
  std::map<std::string, std::string> frozenInputs;
  /// The largest tensor (graph input, weight or intermediate) a model may
  /// have; larger ones, and shapes whose size overflows 64 bits, are refused
  /// with the value and this limit named. 1 TiB by default.
  uint64_t maxTensorBytes = uint64_t(1) << 40;
  /// The deepest nesting of subgraphs (If branches, Loop/Scan bodies, each
  /// inside another) a model may have; deeper models are refused before
  /// anything walks them. Real models nest a handful deep.
  int maxSubgraphDepth = 16;
  /// The most bytes of constants the importer computes from other
  /// constants (Tile, Expand, ConstantOfShape, shape arithmetic) over the
  /// whole model; 0: four times the model's weights plus 64 MiB (int8
  /// weights dequantized at import grow fourfold). A node past
  /// it is imported as a kernel instead (an error when it has no kernel).
  uint64_t maxFoldedBytes = 0;
  /// What a symbolic dim of a graph input without --input-shape becomes:
  /// 0 refuses it (a compile needs every shape); `kiln-compile --check`
  /// takes 64, large enough for the windows of most image and sequence
  /// models, so that it can list every unsupported node of any model.
  int64_t symbolicDimsAs = 0;
  /// Graph inputs whose leading dim is symbolic take it as the batch: it
  /// becomes the --input-shape's value (1 without one), the chunk a
  /// dynamic-batch artifact's kernels run at once, and the argument is
  /// marked kiln.batched.
  bool dynamicBatch = false;
};

/// A node the importer cannot turn into kiln ops, and why.
struct UnsupportedNode {
  std::string opType;
  std::string nodeName;
  std::string reason;
  /// When the node only needs one of its inputs to be known at compile time,
  /// that input's name (freezing it would make the node supported).
  std::string needsConstant;
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Every node that could not be imported. When non-empty, `module` is null.
  std::vector<UnsupportedNode> unsupported;
  /// Nodes in the ONNX graph.
  size_t numNodes = 0;
};

/// Imports an ONNX model file into a module holding `func.func @main` with
/// kiln ops. File-level problems (unreadable, not ONNX, symbolic input dims
/// without a shape) are emitted as diagnostics and return failure; per-node
/// problems are all collected into `ImportResult::unsupported`.
mlir::FailureOr<ImportResult> importOnnxFile(mlir::MLIRContext &context,
                                             llvm::StringRef path,
                                             const ImportOptions &options);

/// One row of the importer's op table, for `kiln-compile --list-ops`.
struct SupportedOp {
  std::string opType;
  int minOpset;
  int maxOpset;
  std::string notes;
};
std::vector<SupportedOp> getSupportedOps();

/// Prints the unsupported nodes grouped by op type, with counts and names.
void printUnsupportedReport(llvm::raw_ostream &os,
                            const std::vector<UnsupportedNode> &unsupported);

} // namespace kiln

#endif
