//===- ConstantEvaluator.h - import-time ONNX constant folding --*- C++ -*-===//
//
// Exported models compute shapes with small subgraphs whose inputs are all
// known at import time. Their arithmetic, masks and data movement are
// computed by the kiln ops' folders (GraphImporter::foldImportedNode); this
// evaluator computes the ops whose result shapes are their values: Shape
// and Size (of the static shape) and NonZero (of its input's values). It works
// on raw ConstTensor bytes and needs no MLIR beyond LogicalResult, which keeps
// it unit-testable.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_CONSTANTEVALUATOR_H
#define KILN_LIB_IMPORT_CONSTANTEVALUATOR_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace kiln::onnx_import {

struct ConstTensor;

/// The most elements one evaluated output may hold; larger results are
/// refused so a malformed or adversarial model cannot exhaust memory.
constexpr int64_t kMaxConstantElements = int64_t(1) << 24;

/// True when `opType` (default ONNX domain) has a constant evaluator.
bool canEvaluateConstant(llvm::StringRef opType);

/// Every op type with a constant evaluator, for the supported-ops table.
std::vector<std::string> constantEvaluableOps();

/// Evaluates one node whose inputs are all constants (absent optional inputs
/// are nullptr). Returns failure with `error` set when the node's
/// attributes/inputs are invalid or a dtype is not handled.
mlir::LogicalResult
evaluateConstantNode(const onnx::NodeProto &node, int64_t opset,
                     llvm::ArrayRef<const ConstTensor *> inputs,
                     std::vector<ConstTensor> &outputs, std::string &error);

/// The ONNX Shape op needs only the input's static shape, not its value.
/// `start`/`end` follow opset-15 semantics: negative values count from the
/// back, both are clamped to [0, rank], and an empty range gives an empty
/// 1-D int64 tensor.
ConstTensor shapeOf(llvm::ArrayRef<int64_t> shape, int64_t start,
                    std::optional<int64_t> end);

} // namespace kiln::onnx_import

#endif
