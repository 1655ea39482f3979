//===- OnnxImporterImpl.h - importer internals shared by its files -*- C++
//-*-===//
#ifndef KILN_LIB_IMPORT_ONNXIMPORTERIMPL_H
#define KILN_LIB_IMPORT_ONNXIMPORTERIMPL_H

#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Import/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace kiln::onnx_import {

mlir::FailureOr<mlir::Type> elementTypeFor(mlir::MLIRContext *ctx,
                                           int onnxType);
std::string dtypeName(int onnxType);

/// A tensor whose value is known at import time (initializer or Constant).
struct ConstTensor {
  int onnxType = 0;
  std::vector<int64_t> shape;
  std::string bytes;
  /// A weight's bytes once its constant op's resource blob owns them (no
  /// copy); GraphImporter::findConstant copies them into `bytes` for the
  /// few nodes evaluated at import time that read a weight.
  llvm::ArrayRef<char> stored;
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

/// How one ONNX op type is imported, for which opsets.
struct OpHandler {
  const char *opType;
  int minOpset;
  int maxOpset;
  const char *notes;
  mlir::LogicalResult (*import)(NodeContext &);
};
const OpHandler *findHandler(llvm::StringRef opType);

// Handlers defined outside OnnxOpHandlers.cpp, by family.
mlir::LogicalResult importGather(NodeContext &ctx);
mlir::LogicalResult importSlice(NodeContext &ctx);
mlir::LogicalResult importSplit(NodeContext &ctx);
mlir::LogicalResult importExpand(NodeContext &ctx);
mlir::LogicalResult importTile(NodeContext &ctx);
mlir::LogicalResult importPad(NodeContext &ctx);
mlir::LogicalResult importDepthToSpace(NodeContext &ctx);
mlir::LogicalResult importSpaceToDepth(NodeContext &ctx);
mlir::LogicalResult importBatchNormalization(NodeContext &ctx);
mlir::LogicalResult importLayerNormalization(NodeContext &ctx);
mlir::LogicalResult importInstanceNormalization(NodeContext &ctx);
mlir::LogicalResult importLSTM(NodeContext &ctx);
mlir::LogicalResult importGRU(NodeContext &ctx);
mlir::LogicalResult importRNN(NodeContext &ctx);
mlir::LogicalResult importGatherElements(NodeContext &ctx);
mlir::LogicalResult importScatterElements(NodeContext &ctx);
mlir::LogicalResult importScatterND(NodeContext &ctx);
mlir::LogicalResult importTrilu(NodeContext &ctx);
mlir::LogicalResult importCumSum(NodeContext &ctx);
mlir::LogicalResult importHardmax(NodeContext &ctx);
mlir::LogicalResult importOneHot(NodeContext &ctx);
mlir::LogicalResult importIsInf(NodeContext &ctx);
mlir::LogicalResult importShrink(NodeContext &ctx);
mlir::LogicalResult importDropout(NodeContext &ctx);
mlir::LogicalResult importEinsum(NodeContext &ctx);
mlir::LogicalResult importNegativeLogLikelihoodLoss(NodeContext &ctx);
mlir::LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &ctx);
mlir::LogicalResult importEyeLike(NodeContext &ctx);
mlir::LogicalResult importLRN(NodeContext &ctx);
mlir::LogicalResult importGatherND(NodeContext &ctx);
mlir::LogicalResult importTopK(NodeContext &ctx);
mlir::LogicalResult importAdagrad(NodeContext &ctx);
mlir::LogicalResult importHannWindow(NodeContext &ctx);
mlir::LogicalResult importHammingWindow(NodeContext &ctx);
mlir::LogicalResult importBlackmanWindow(NodeContext &ctx);
mlir::LogicalResult importMomentum(NodeContext &ctx);
mlir::LogicalResult importAdam(NodeContext &ctx);
mlir::LogicalResult importMeanVarianceNormalization(NodeContext &ctx);
mlir::LogicalResult importConvTranspose(NodeContext &ctx);
mlir::LogicalResult importResize(NodeContext &ctx);
mlir::LogicalResult importUpsample(NodeContext &ctx);
llvm::ArrayRef<OpHandler> allHandlers();

class GraphImporter {
public:
  /// The graph's initializers give their raw bytes up to the constants.
  GraphImporter(mlir::MLIRContext &context, onnx::ModelProto &model,
                llvm::StringRef fileName);
  mlir::FailureOr<ImportResult> run(const ImportOptions &options);

  mlir::MLIRContext &context;
  onnx::ModelProto &model;
  mlir::OpBuilder builder;
  std::string fileName;
  int64_t defaultOpset = 0;
  std::map<std::string, mlir::Value> values;
  std::map<std::string, ConstTensor> constants;
  /// The constant named `name` with its bytes, or null when it is none.
  const ConstTensor *findConstant(const std::string &name);

  /// The constant op holding `tensor`, which is also kept (moved, not
  /// copied: weights run to hundreds of megabytes) for the evaluation of
  /// later nodes at import time.
  mlir::Value createConstant(llvm::StringRef name, ConstTensor tensor,
                             mlir::Location loc, std::string &error);

private:
  mlir::LogicalResult resolveInputType(const onnx::ValueInfoProto &info,
                                       const ImportOptions &options,
                                       mlir::RankedTensorType &type);
  mlir::LogicalResult freezeInput(const onnx::ValueInfoProto &input,
                                  const std::string &file, mlir::Location loc);
  mlir::Location nodeLocation(const onnx::NodeProto &node, int index) const;
  void importNode(const onnx::NodeProto &node, int index);
  /// An If whose condition is a compile-time constant: the taken branch's
  /// nodes are imported in place and its outputs become the If's.
  void importFoldedIf(const onnx::NodeProto &node, int index);
  mlir::LogicalResult foldConstantNode(const onnx::NodeProto &node, int index,
                                       std::string &error);
  std::string opTypeProblem(const onnx::NodeProto &node) const;
  std::string graphInputBehind(const std::string &value) const;
  void nameOutputValues(const onnx::NodeProto &node, int index,
                        mlir::Location nodeLoc);
  void markUnsupported(const onnx::NodeProto &node, int index,
                       const std::string &reason,
                       const std::string &needsConstant = "");

  std::vector<UnsupportedNode> unsupported;
  std::set<std::string> poisoned;
};

/// What a handler sees of one node: its inputs, attributes, constants, and a
/// place to put its outputs.
class NodeContext {
public:
  NodeContext(GraphImporter &importer, const onnx::NodeProto &node,
              mlir::Location loc)
      : importer(importer), node(node), loc(loc) {}

  mlir::OpBuilder &b() { return importer.builder; }
  mlir::Location getLoc() const { return loc; }
  int64_t opset() const { return importer.defaultOpset; }
  const onnx::NodeProto &proto() const { return node; }

  size_t numInputs() const { return node.input_size(); }
  bool hasInput(size_t i) const {
    return i < (size_t)node.input_size() && !node.input(i).empty();
  }
  /// The value of input `i`; null (with an error set) when absent.
  mlir::Value input(size_t i);
  /// The import-time value of input `i` when it is a constant.
  const ConstTensor *constInput(size_t i) const;
  /// Input `i` as a list of integers (shapes, axes); fails when not constant.
  mlir::FailureOr<std::vector<int64_t>> constInts(size_t i);

  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const;
  float floatAttr(llvm::StringRef name, float dflt) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const;

  void setOutput(size_t i, mlir::Value value);
  bool allOutputsSet() const;

  /// Records why the node cannot be imported; returns failure.
  mlir::LogicalResult fail(const llvm::Twine &reason);
  /// Fails because input `i` is not a compile-time constant.
  mlir::LogicalResult failNotConstant(size_t i, const llvm::Twine &reason);
  const std::string &error() const { return errorMessage; }
  const std::string &needsConstant() const { return nonConstantInput; }

  /// Element-type classes a handler accepts.
  /// Int: signless (signed) integers of 8-64 bits; Unsigned: uint8-64, for
  /// the ops whose lowering knows unsigned semantics.
  enum DTypeClass : unsigned {
    Float = 1,
    Int = 2,
    Bool = 4,
    Unsigned = 8,
    Any = 15
  };
  /// Fails unless every value's element type is in one of `classes`:
  /// Float is f32 and f64, Int is signless i8..i64, Bool is i1.
  mlir::LogicalResult requireDtypes(mlir::ValueRange values, unsigned classes);
  mlir::LogicalResult requireFloat(mlir::ValueRange values) {
    return requireDtypes(values, Float);
  }
  /// The `axis` attribute (default `dflt`) normalized against `rank`; fails
  /// when out of range.
  mlir::FailureOr<int64_t> axisAttr(int64_t dflt, int64_t rank);
  /// Fails unless `indices` holds int32 or int64.
  mlir::LogicalResult requireIndices(mlir::Value indices);

  /// Fails unless all values have the same element type.
  mlir::LogicalResult requireSameDtype(mlir::ValueRange values);

  /// A constant of `type` holding `values` (one value: a splat).
  mlir::Value constant(mlir::RankedTensorType type,
                       llvm::ArrayRef<double> values);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalar(mlir::Value like, double value);

  /// Creates an op whose result types come from its own type inference; a
  /// shape error becomes a failure instead of an abort.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return createInferred(OpTy::getOperationName(), operands, attrs);
  }

  GraphImporter &importer;

private:
  mlir::FailureOr<mlir::Value>
  createInferred(llvm::StringRef opName, mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attrs);

  const onnx::NodeProto &node;
  mlir::Location loc;
  std::string errorMessage;
  std::string nonConstantInput;
};

// Helpers shared by the handler files.
int64_t rankOf(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
/// Normalizes possibly negative axes against `rank`, sorted and unique;
/// fails (with the node's error set) when one is out of range.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(NodeContext &ctx, llvm::ArrayRef<int64_t> axes, int64_t rank);
/// `v` reshaped to `shape` (no op when it already has that shape).
mlir::Value reshapeTo(NodeContext &ctx, mlir::Value v,
                      llvm::ArrayRef<int64_t> shape);
/// Sets output 0 from a created value; propagates failure.
mlir::LogicalResult setResult(NodeContext &ctx,
                              mlir::FailureOr<mlir::Value> value);

/// Gather and GatherElements: data, integer indices and an `axis`.
template <typename OpTy>
mlir::LogicalResult importIndexedAlongAxis(NodeContext &ctx) {
  mlir::Value data = ctx.input(0), indices = ctx.input(1);
  if (!data || !indices || mlir::failed(ctx.requireIndices(indices)))
    return mlir::failure();
  auto axis = ctx.axisAttr(0, rankOf(data));
  if (mlir::failed(axis))
    return mlir::failure();
  auto &b = ctx.b();
  return setResult(
      ctx,
      ctx.create<OpTy>(mlir::ValueRange{data, indices},
                       {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
}

} // namespace kiln::onnx_import

#endif
