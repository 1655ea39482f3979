//===- KilnDialect.h - the kiln dialect -------------------------*- C++ -*-===//
#ifndef KILN_DIALECT_KILNDIALECT_H
#define KILN_DIALECT_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>

#include "kiln/Dialect/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/KilnAttrs.h.inc"

#include "kiln/Dialect/KilnDialect.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/KilnOps.h.inc"

#include <optional>
#include <vector>

namespace kiln {
/// The names of the kiln. attributes KilnDialect.td declares (see there for
/// what each holds and its type); KilnAttributes.cpp verifies them.
namespace attrs {
constexpr llvm::StringLiteral kTarget =
    KilnDialect::TargetAttrHelper::getNameStr();
constexpr llvm::StringLiteral kKernel =
    KilnDialect::KernelAttrHelper::getNameStr();
constexpr llvm::StringLiteral kNodes =
    KilnDialect::NodesAttrHelper::getNameStr();
constexpr llvm::StringLiteral kOnnxValues =
    KilnDialect::OnnxValuesAttrHelper::getNameStr();
constexpr llvm::StringLiteral kAbi = KilnDialect::AbiAttrHelper::getNameStr();
constexpr llvm::StringLiteral kFlops =
    KilnDialect::FlopsAttrHelper::getNameStr();
constexpr llvm::StringLiteral kWorkgroups =
    KilnDialect::WorkgroupsAttrHelper::getNameStr();
constexpr llvm::StringLiteral kThreads =
    KilnDialect::ThreadsAttrHelper::getNameStr();
constexpr llvm::StringLiteral kTile = KilnDialect::TileAttrHelper::getNameStr();
constexpr llvm::StringLiteral kMatrixTile =
    KilnDialect::MatrixTileAttrHelper::getNameStr();
constexpr llvm::StringLiteral kConfig =
    KilnDialect::ConfigAttrHelper::getNameStr();
constexpr llvm::StringLiteral kRegisterTile =
    KilnDialect::RegisterTileAttrHelper::getNameStr();
constexpr llvm::StringLiteral kContraction =
    KilnDialect::ContractionAttrHelper::getNameStr();
constexpr llvm::StringLiteral kLanes =
    KilnDialect::LanesAttrHelper::getNameStr();
constexpr llvm::StringLiteral kCooperative =
    KilnDialect::CooperativeAttrHelper::getNameStr();
constexpr llvm::StringLiteral kWorkgroupMemory =
    KilnDialect::WorkgroupMemoryAttrHelper::getNameStr();
constexpr llvm::StringLiteral kDynamicWorkgroupMemory =
    KilnDialect::DynamicWorkgroupMemoryAttrHelper::getNameStr();
constexpr llvm::StringLiteral kPrivateMemory =
    KilnDialect::PrivateMemoryAttrHelper::getNameStr();
constexpr llvm::StringLiteral kShapeGuards =
    KilnDialect::ShapeGuardsAttrHelper::getNameStr();
/// On @main's arguments and results: the ONNX graph input or output each
/// one is (a string).
constexpr llvm::StringLiteral kName = "kiln.name";
/// On @main's results that are not graph outputs: a run-time check, a
/// tensor whose elements are all false when the run's inputs are valid;
/// the string is the error the runtime reports otherwise.
constexpr llvm::StringLiteral kCheck = "kiln.check";
/// On @main's arguments and results (an integer): the value's dim that is
/// the batch, which a dynamic-batch artifact runs in chunks of the compiled
/// size (kiln-check-batch-independence).
constexpr llvm::StringLiteral kBatched = "kiln.batched";
/// On an op of a dynamic-batch graph whose result carries the batch
/// (array<i64: dim, inner, outer, step>, kiln::BatchDim): where, as the
/// model imported at two batch sizes shows (kiln::checkBatchDimsAt).
constexpr llvm::StringLiteral kBatchDim = "kiln.batch_dim";
} // namespace attrs

/// Raises the kiln folders' result limit (KilnDialect::maxFoldedElements)
/// for its lifetime.
class FoldLimitScope {
public:
  FoldLimitScope(mlir::MLIRContext *context, int64_t maxElements);
  ~FoldLimitScope();

private:
  KilnDialect *dialect;
  int64_t saved;
};

/// Calls `use` with the elements of a constant (dense or resource),
/// row-major, one byte a bool and the element's width otherwise, read in
/// place where they can be; false when they cannot be read (an elided
/// blob) or there are more than the folders compute.
bool withConstantElements(mlir::Attribute value,
                          llvm::function_ref<void(llvm::ArrayRef<char>)> use);

/// Numpy/ONNX broadcast of two shapes; std::nullopt when incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// An einsum equation with `...` expanded: one subscript string per operand
/// and the output's, each with one character per dim.
struct EinsumSubscripts {
  llvm::SmallVector<std::string> inputs;
  std::string output;
};
/// Parses `equation` for operands of the given ranks; an implicit output (no
/// `->`) is the broadcast dims then the letters used once, sorted.
mlir::FailureOr<EinsumSubscripts>
parseEinsumEquation(llvm::StringRef equation, llvm::ArrayRef<int64_t> ranks,
                    std::string &error);
/// The size of every subscript letter (size-1 dims broadcast); fails when
/// two operands disagree.
mlir::FailureOr<std::map<char, int64_t>>
einsumDimSizes(const EinsumSubscripts &subscripts,
               llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
               std::string &error);

/// True for kiln ops that compute each result element from the operand
/// elements at the same (broadcast) position.
bool isElementwise(mlir::Operation *op);

/// True for ops that only move or copy elements (reshape, transpose, slice,
/// gather, pad, ...): exact in any element type, so they need not compute in a
/// wider one.
bool movesDataOnly(mlir::Operation *op);

/// The value of `v` when it is a kiln.constant float splat (the scalar
/// constants exporters write: 0.5, 1e-5, sqrt(2)), else nothing.
std::optional<double> floatSplatValue(mlir::Value v);

/// Output size of one spatial dim of a window op (conv or pool).
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padBegin, int64_t padEnd,
                         bool ceilMode);
} // namespace kiln

#endif
