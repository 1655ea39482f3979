//===- DispatchGraph.h - the model graph with its kernels, as DOT -*- C++
//-*-===//
#ifndef KILN_PIPELINE_DISPATCHGRAPH_H
#define KILN_PIPELINE_DISPATCHGRAPH_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Writes `@main` after dispatch-region formation as a Graphviz graph: one
/// node per op (labelled with its ONNX node), one cluster per dispatch
/// region, i.e. per kernel. Render with `dot -Tsvg`.
mlir::LogicalResult writeDispatchGraph(mlir::ModuleOp module,
                                       llvm::raw_ostream &os);

} // namespace kiln

#endif
