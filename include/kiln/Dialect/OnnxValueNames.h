//===- OnnxValueNames.h - which ONNX value an op computes -------*- C++ -*-===//
//
// For bisecting numerics, each tensor a kernel writes is matched with the
// ONNX value it holds, so that it can be compared with a reference run of the
// model. The names travel in locations, which every pass already keeps (the
// reports name every node from them): the importer gives the op that defines
// an ONNX node's outputs the location
//
//   fused<{kiln.onnx_node = INDEX, kiln.onnx_values = ["y", ...]}>[NODE]
//
// (one name per result of the op). FusedLoc merges only inner locations with
// equal metadata, so an op that absorbed several nodes' work keeps each
// node's names, and the value it computes is that of the latest node: a
// producer absorbing its consumers (Conv + BatchNorm + Relu) computes the
// consumer's value. Ops that compute only part of a node's work (the padded
// copy of a convolution's input, a widening cast of an operand) must not
// claim the node's outputs: passes that add them use withoutOnnxValues.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ONNXVALUENAMES_H
#define KILN_DIALECT_ONNXVALUENAMES_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"

#include <string>

namespace kiln {

/// `nodeLoc` naming the ONNX values of node `nodeIndex` (graph order) that
/// an op's results hold, one entry per result ("" for none).
mlir::Location withOnnxValues(mlir::Location nodeLoc, int64_t nodeIndex,
                              llvm::ArrayRef<std::string> names);

/// `loc` with every ONNX value name removed (node names stay).
mlir::Location withoutOnnxValues(mlir::Location loc);

/// The name of the ONNX value `result` holds according to its defining op's
/// location, or "" when it holds none or the location is ambiguous.
std::string onnxValueName(mlir::Value result);

} // namespace kiln

#endif
