//===- OnnxImporterImpl.h - the graph importer's state ------*- C++ -*-===//
#ifndef KILN_LIB_IMPORT_ONNXIMPORTERIMPL_H
#define KILN_LIB_IMPORT_ONNXIMPORTERIMPL_H

#include "OpRegistry.h"
#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Import/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace kiln {
struct ShapeGuardDesc;
} // namespace kiln

namespace kiln::onnx_import {

mlir::FailureOr<mlir::Type> elementTypeFor(mlir::MLIRContext *ctx,
                                           int onnxType);
std::string dtypeName(int onnxType);
/// Bytes of one element of an ONNX dtype (1 for bool, int8 and the rest).
size_t bytesPerElement(int onnxType);

/// A tensor whose value is known at import time (initializer or Constant).
/// The most body nodes one Scan or Loop may unroll into: a longer one would
/// make compile time and code size grow with its length.
constexpr int64_t kMaxUnrolledBodyNodes = 4096;

/// ONNX's 4-bit dtypes (onnx 1.16), newer than some onnx libraries Kiln
/// builds against: values two a byte, the first in the low bits.
constexpr int kOnnxUint4 = 21, kOnnxInt4 = 22;

struct ConstTensor {
  int onnxType = 0;
  std::vector<int64_t> shape;
  std::string bytes;
  /// A weight's bytes once its constant op's resource blob owns them (no
  /// copy); GraphImporter::findConstant copies them into `bytes` for the
  /// few nodes evaluated at import time that read a weight.
  llvm::ArrayRef<char> stored;
  /// kOnnxInt4 or kOnnxUint4 for values stored 4 bits each, which
  /// readTensorBytes widens to INT8 or UINT8 (onnxType); 0 otherwise.
  int fourBitType = 0;
  std::vector<int64_t> asInts() const;
  std::optional<float> asScalarFloat() const;
};

/// Reads a TensorProto's payload into little-endian bytes of its dtype.
/// With `takeRaw` (the tensor's own raw_data, which the caller may give
/// up), raw bytes move into `out` instead of being copied: an initializer's
/// weights run to hundreds of megabytes.
mlir::LogicalResult readTensorBytes(const onnx::TensorProto &tensor,
                                    ConstTensor &out, std::string &error,
                                    std::string *takeRaw = nullptr);

class NodeContext;

class GraphImporter {
public:
  /// The graph's initializers give their raw bytes up to the constants.
  GraphImporter(mlir::MLIRContext &context, onnx::ModelProto &model,
                llvm::StringRef fileName);
  mlir::FailureOr<ImportResult> run(const ImportOptions &options);

private:
  // What handlers may use of it, NodeContext gives them.
  friend class NodeContext;

  mlir::MLIRContext &context;
  onnx::ModelProto &model;
  mlir::OpBuilder builder;
  std::string fileName;
  int64_t defaultOpset = 0;
  std::map<std::string, mlir::Value> values;
  std::map<std::string, ConstTensor> constants;
  /// Who reads each value of the model (subgraphs included), as (op type,
  /// input index); a graph output as ("", -1).
  std::map<std::string, std::vector<std::pair<std::string, int>>> readers;
  void recordReaders(const onnx::GraphProto &graph);
  /// The constant named `name` with its bytes, or null when it is none.
  const ConstTensor *findConstant(const std::string &name);

  /// The constant op holding `tensor`, which is also kept (moved, not
  /// copied: weights run to hundreds of megabytes) for the evaluation of
  /// later nodes at import time.
  mlir::Value createConstant(llvm::StringRef name, ConstTensor tensor,
                             mlir::Location loc, std::string &error);

  /// The row of the op table that imports `node`, or null.
  const OpHandler *handlerFor(const onnx::NodeProto &node) const;
  /// The type of graph input `info`, and `batchDim`, its dim that
  /// --dynamic-batch takes as the batch: a symbolic leading dim, else the
  /// first dim named as some input's symbolic leading dim (batchSymbols).
  mlir::LogicalResult resolveInputType(const onnx::ValueInfoProto &info,
                                       const ImportOptions &options,
                                       mlir::RankedTensorType &type,
                                       std::optional<int64_t> &batchDim);
  mlir::LogicalResult freezeInput(const onnx::ValueInfoProto &input,
                                  const std::string &file, mlir::Location loc);
  mlir::Location nodeLocation(const onnx::NodeProto &node, int index) const;
  void importNode(const onnx::NodeProto &node, int index);
  /// Fills declaredShapes from the graph's outputs and value_info.
  void recordDeclaredShapes(const onnx::GraphProto &graph);
  /// Adds the shapes elementwise chains carry back from declared results to
  /// their inputs (DeclaredShapes.cpp).
  void propagateDeclaredShapes(const onnx::GraphProto &graph);
  /// An If whose condition is a compile-time constant: the taken branch's
  /// nodes are imported in place and its outputs become the If's. Else
  /// importSelectedIf.
  void importIf(const onnx::NodeProto &node, int index);
  /// An If whose condition is known only at run time: both branches are
  /// imported and each output selects between them (their run-time checks
  /// hold only for the branch taken); the branches must give each output
  /// the same type. A branch that does not import at these shapes while
  /// the other does is left out (OnnxIfImporter.cpp).
  void importSelectedIf(const onnx::NodeProto &node, int index);
  /// One branch of an If on a run-time condition, and what importing it
  /// added to the importer's state, for takeBackBranch.
  struct RunTimeBranch {
    std::string name;
    std::optional<std::vector<mlir::Value>> outputs;
    /// The last op before the branch's and the branch's last (the same
    /// when it made none; null: the block's start).
    mlir::Operation *opBefore = nullptr, *lastOp = nullptr;
    size_t unsupportedBegin = 0, unsupportedEnd = 0;
    size_t checksBegin = 0, checksEnd = 0;
    size_t guardsBegin = 0, guardsEnd = 0;
    /// Whether every output was imported and no node of it failed.
    bool imported() const;
  };
  RunTimeBranch importRunTimeBranch(const onnx::NodeProto &node, int index,
                                    const std::string &branchName);
  bool importsEveryOpType(const onnx::GraphProto &graph) const;
  /// Erases what importing `branch` made (its ops, unsupported nodes and
  /// run-time checks); false, changing nothing, when something outside it
  /// depends on it.
  bool takeBackBranch(const RunTimeBranch &branch);
  /// Leaves out `branch`, which failed to import at these shapes only,
  /// adding a run-time check that fails a run where `takesIt`; false,
  /// changing nothing, when it cannot be left out.
  bool leaveOutBranch(NodeContext &ctx, int index, const RunTimeBranch &branch,
                      mlir::Value takesIt);
  /// The op the builder inserted last, or null at the block's start.
  mlir::Operation *lastImportedOp();
  /// Imports the nodes of the branch attribute `branchName` in place and
  /// returns its outputs (null for one an unsupported node poisoned), or
  /// nullopt with the node marked unsupported. `scoped`: the branch's own
  /// names are forgotten afterwards, for the other branch to reuse.
  std::optional<std::vector<mlir::Value>>
  importBranch(const onnx::NodeProto &node, int index,
               const std::string &branchName, bool scoped);
  /// Imports the nodes of `graph`, a subgraph of `node` (`what` names it in
  /// errors), in place, its inputs bound to `inputs`; returns its outputs
  /// as importBranch does.
  std::optional<std::vector<mlir::Value>>
  importSubgraph(const onnx::NodeProto &node, int index,
                 const onnx::GraphProto &graph, const std::string &what,
                 llvm::ArrayRef<mlir::Value> inputs, bool scoped);
  /// The `body` graph attribute of a Loop or Scan, or null.
  static const onnx::GraphProto *bodyOf(const onnx::NodeProto &node);
  /// Whether `copies` copies of `body` stay within kMaxUnrolledBodyNodes.
  static bool fitsUnrolled(const onnx::GraphProto &body, int64_t copies);
  /// One more copy of a Loop's or Scan's `body`, imported in place with its
  /// inputs bound to `inputs`: its outputs, or nullopt where a node of it
  /// is unsupported (the node marked, or its outputs poisoned).
  std::optional<std::vector<mlir::Value>>
  importUnrolledBody(const onnx::NodeProto &node, int index,
                     const onnx::GraphProto &body,
                     llvm::ArrayRef<mlir::Value> inputs);
  /// A Scan whose steps (the scan axis's static length) are unrolled: the
  /// body imported once per step (OnnxScanImporter.cpp).
  void importScan(const onnx::NodeProto &node, int index);
  /// A Loop unrolled over a bound known at compile time (a constant trip
  /// count, or the declared length of its scan outputs), each iteration's
  /// effect selected by whether it runs (OnnxLoopImporter.cpp).
  void importLoop(const onnx::NodeProto &node, int index);
  mlir::LogicalResult foldConstantNode(const onnx::NodeProto &node, int index,
                                       std::string &error);
  void foldImportedNode(const onnx::NodeProto &node, int index,
                        mlir::Operation *lastBefore);
  bool foldImportedOp(mlir::Operation *op, llvm::ArrayRef<std::string> outputs,
                      bool mayGrow);
  std::string opTypeProblem(const onnx::NodeProto &node) const;
  /// Why the node's attributes do not fit its ONNX schema (an attribute of
  /// another type than the op takes: `axis` as a float), or "".
  std::string attributeTypeProblem(const onnx::NodeProto &node) const;
  std::string graphInputBehind(const std::string &value) const;
  void nameOutputValues(const onnx::NodeProto &node, int index,
                        mlir::Location nodeLoc);
  void markUnsupported(const onnx::NodeProto &node, int index,
                       const std::string &reason,
                       const std::string &needsConstant = "");

  std::vector<UnsupportedNode> unsupported;
  /// Run-time checks (NodeContext::requireIndicesInRange): a tensor that is
  /// all false on valid inputs, and the error a run reports otherwise.
  std::vector<std::pair<mlir::Value, std::string>> runtimeChecks;
  /// The static shapes the model declares for its values (graph outputs,
  /// value_info), by name.
  std::map<std::string, std::vector<int64_t>> declaredShapes;
  /// --dynamic-batch: the names of inputs' symbolic leading dims, each the
  /// batch wherever an input has it.
  std::set<std::string> batchSymbols;
  /// Shape-like model inputs read at run time (kiln.shape_guards on @main).
  std::vector<mlir::Attribute> shapeGuards;
  void recordShapeGuard(const std::string &input,
                        const kiln::ShapeGuardDesc &guard);
  std::set<std::string> poisoned;
  /// Bytes of the constants computed at import time so far, and the most
  /// the model may have (ImportOptions::maxFoldedBytes, resolved).
  uint64_t foldedBytes = 0;
  uint64_t foldBudget = 0;
  /// The most bytes one value may have (ImportOptions::maxTensorBytes).
  uint64_t maxTensorBytes = 0;
};

/// Bytes of a statically shaped tensor, or nullopt when the size overflows
/// 64 bits.
std::optional<uint64_t> tensorBytes(mlir::RankedTensorType type);

} // namespace kiln::onnx_import

#endif
