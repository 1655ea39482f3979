//===- NodeContext.h - what an op handler sees of its node -----*- C++ -*-===//
//
// The interface of every import function (OpRegistry.h): the node's inputs,
// attributes and import-time constants, the ops it builds, and the helpers
// the handler files share. The importer's own state stays in GraphImporter.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_NODECONTEXT_H
#define KILN_LIB_IMPORT_NODECONTEXT_H

#include "OnnxImporterImpl.h"

namespace kiln::onnx_import {

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
  /// The import-time value of input `i` when it is a constant, or when it
  /// is a shape-like model input whose values the declared result shapes
  /// determine (deriveFromDeclaredShapes).
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
  /// Whether output `i` has one reader in the model, an op of type
  /// `opType` that reads it as its input `input`.
  bool outputReadOnceAs(size_t i, llvm::StringRef opType, int input) const;
  /// The node's ops are left as they are even where they read only
  /// constants (4-bit weights kept packed, which computing would expand).
  void keepUnfolded() { unfolded = true; }
  bool keepsUnfolded() const { return unfolded; }
  /// Fails when an output has more bytes than a tensor may have
  /// (ImportOptions::maxTensorBytes), so that no later size overflows.
  mlir::LogicalResult checkOutputSizes();

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
  /// Each value of input `i` must index the dim of `dataShape` it is for:
  /// `dims[e % dims.size()]` for element e (one axis for Gather; for
  /// GatherND one dim per position along the last dim). A constant input
  /// that does not fails the import (onnxruntime refuses such a model);
  /// any other gets a run-time check that fails the run, since the kernels
  /// clamp the indices they read.
  mlir::LogicalResult requireIndicesInRange(size_t i,
                                            llvm::ArrayRef<int64_t> dims,
                                            llvm::ArrayRef<int64_t> dataShape);

  /// The run-time half of requireIndicesInRange: a check that fails the
  /// run when `indices` (what input `inputName` became) holds a value
  /// outside [-size, size) of the data dims `dims`.
  mlir::LogicalResult checkIndicesAtRunTime(mlir::Value indices,
                                            llvm::StringRef inputName,
                                            llvm::ArrayRef<int64_t> dims,
                                            llvm::ArrayRef<int64_t> dataShape);

  /// The static shape the model declares for output `k` (graph outputs,
  /// value_info), if it does.
  std::optional<std::vector<int64_t>> declaredOutputShape(size_t k) const;
  /// A run-time check: `failed` (a bool tensor) holds a true element when
  /// the run's inputs are invalid, and the run then fails with the node
  /// named and `what`.
  void addRuntimeCheck(mlir::Value failed, const llvm::Twine &what);

  /// Fails unless all values have the same element type.
  mlir::LogicalResult requireSameDtype(mlir::ValueRange values);

  /// A constant of `type` holding `values` (one value: a splat).
  mlir::Value constant(mlir::RankedTensorType type,
                       llvm::ArrayRef<double> values);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalar(mlir::Value like, double value);
  /// Charges a constant of `elements` elements of `type` that the handler
  /// computes itself to the model's folding budget (--max-folded-bytes);
  /// fails, saying so, when it does not fit.
  mlir::LogicalResult reserveConstant(int64_t elements, mlir::Type type);
  /// reserveConstant for a constant the handler can do without: false,
  /// with no error set, when it does not fit.
  bool tryReserveConstant(int64_t elements, mlir::Type type);

  /// Creates an op whose result types come from its own type inference; a
  /// shape error becomes a failure instead of an abort.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return createInferred(OpTy::getOperationName(), operands, attrs);
  }

  /// A constant op holding `tensor`, kept for later nodes' import-time
  /// evaluation (GraphImporter::createConstant).
  mlir::Value createConstant(llvm::StringRef name, ConstTensor tensor,
                             std::string &error);

  /// A reduction's axes input `i`, a model input, where several sets of
  /// axes give the result shape the model declares: each set that reduces
  /// other dims (constInput holds the first); empty otherwise. The handler
  /// computes each and lets the run's values choose.
  std::vector<std::vector<int64_t>> axisAlternatives(size_t i) const;

private:
  /// Values for shape-like input `i`, a model input, that give the result
  /// shapes the model declares, with a guard recorded that the runtime
  /// checks; null (the reason kept for failNotConstant) when the op does
  /// not read it at run time or the declared shapes do not determine it
  /// (RuntimeShapeInputs.cpp).
  const ConstTensor *deriveFromDeclaredShapes(size_t i) const;

  GraphImporter &importer;
  bool unfolded = false;
  mlir::FailureOr<mlir::Value>
  createInferred(llvm::StringRef opName, mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attrs);

  const onnx::NodeProto &node;
  mlir::Location loc;
  std::string errorMessage;
  std::string nonConstantInput;
  /// deriveFromDeclaredShapes' results and reasons, per input index.
  mutable std::map<size_t, ConstTensor> derivedInputs;
  mutable std::map<size_t, std::vector<std::vector<int64_t>>>
      derivedAlternatives;
  mutable std::map<size_t, std::string> derivationProblems;
};

/// The base of a handler's op builders that create several ops in a row:
/// the first failure is remembered (each later op gets a null operand and
/// builds nothing), so the handler checks once at the end.
class ChainedOps {
public:
  bool failed() const { return hasFailed; }

protected:
  mlir::Value check(mlir::FailureOr<mlir::Value> v) {
    if (mlir::failed(v)) {
      hasFailed = true;
      return nullptr;
    }
    return *v;
  }
  mlir::Value fail() {
    hasFailed = true;
    return nullptr;
  }

private:
  bool hasFailed = false;
};

// Helpers shared by the handler files.
/// `v` (non-null) converted to `elementType`; `v` itself when it has it.
mlir::Value castElements(NodeContext &ctx, mlir::Value v,
                         mlir::Type elementType);
int64_t rankOf(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
/// Normalizes possibly negative axes against `rank`, sorted and unique;
/// fails (with the node's error set) when one is out of range.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(NodeContext &ctx, llvm::ArrayRef<int64_t> axes, int64_t rank);
/// `v` reshaped to `shape` (no op when it already has that shape).
mlir::Value reshapeTo(NodeContext &ctx, mlir::Value v,
                      llvm::ArrayRef<int64_t> shape);
/// `parts` (of one type) stacked along a new dim `axis`: the per-step
/// outputs of an unrolled Scan or Loop (OnnxScanImporter.cpp).
mlir::FailureOr<mlir::Value>
stackAlong(NodeContext &ctx, llvm::ArrayRef<mlir::Value> parts, int64_t axis);
/// Window attributes shared by Conv, the pools and the integer
/// convolutions, with auto_pad resolved to explicit pads.
struct Window {
  llvm::SmallVector<int64_t> kernel, strides, dilations, pads;
};
/// The window of a node over `input` with `kernel` (OnnxOpHandlers.cpp);
/// fails (with the node's error set) on inconsistent attributes.
mlir::FailureOr<Window> readWindow(NodeContext &ctx, mlir::Value input,
                                   llvm::ArrayRef<int64_t> kernel);
/// A pool's window over `input` (kernel_shape, pads, strides, dilations)
/// and the kiln attributes of its op: those, ceil_mode, and for an average
/// pool count_include_pad.
struct PoolWindow {
  Window window;
  llvm::SmallVector<mlir::NamedAttribute> attrs;
};
/// The pool window of a node over `input` (OnnxOpHandlers.cpp); fails
/// (with the node's error set) on inconsistent attributes.
mlir::FailureOr<PoolWindow> readPoolWindow(NodeContext &ctx, mlir::Value input,
                                           bool average);
/// Sets output 0 from a created value; propagates failure.
mlir::LogicalResult setResult(NodeContext &ctx,
                              mlir::FailureOr<mlir::Value> value);

/// A Slice whose starts, ends, axes or steps are read at run time, sized by
/// the declared result shape (OnnxDynamicSliceHandlers.cpp).
mlir::LogicalResult importSliceAtRunTime(NodeContext &ctx);
/// A Pad whose pads are read at run time, sized by the declared result
/// shape (OnnxDynamicSliceHandlers.cpp).
mlir::LogicalResult importPadAtRunTime(NodeContext &ctx);
/// ReverseSequence, its lengths read at run time
/// (OnnxDynamicSliceHandlers.cpp).
mlir::LogicalResult importReverseSequence(NodeContext &ctx);

/// Gather and GatherElements: data, integer indices and an `axis`.
template <typename OpTy>
mlir::LogicalResult importIndexedAlongAxis(NodeContext &ctx) {
  mlir::Value data = ctx.input(0), indices = ctx.input(1);
  if (!data || !indices || mlir::failed(ctx.requireIndices(indices)))
    return mlir::failure();
  auto axis = ctx.axisAttr(0, rankOf(data));
  if (mlir::failed(axis) ||
      mlir::failed(ctx.requireIndicesInRange(1, {*axis}, shapeOf(data))))
    return mlir::failure();
  auto &b = ctx.b();
  return setResult(
      ctx,
      ctx.create<OpTy>(mlir::ValueRange{data, indices},
                       {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
}

} // namespace kiln::onnx_import

#endif
