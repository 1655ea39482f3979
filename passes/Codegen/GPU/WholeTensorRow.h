//===- WholeTensorRow.h - a whole-tensor reduction as one row ---*- C++ -*-===//
//
// Part of kiln-distribute-rows-to-lanes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CODEGEN_WHOLETENSORROW_H
#define KILN_PASSES_CODEGEN_WHOLETENSORROW_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// A bufferized GPU kernel that reduces whole tensors (ReduceSum or
/// ReduceMean over every axis, a loss) has no parallel loop that tiling
/// could distribute, so it would run as ONE GPU thread. When every linalg
/// op of the kernel runs over at most one loop longer than 1 once its
/// contiguous loops are merged (its operands are then 1-D views of
/// contiguous buffers, or single elements), and one of them reduces at
/// least `minRow` elements, the ops are merged that way and moved into a
/// forall of one iteration: the kernel becomes one row for
/// kiln-distribute-rows-to-lanes. Returns that forall, or null (kernel
/// unchanged).
mlir::scf::ForallOp wrapWholeTensorReduction(mlir::func::FuncOp kernel,
                                             mlir::RewriterBase &rewriter,
                                             int64_t minRow);

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_WHOLETENSORROW_H
