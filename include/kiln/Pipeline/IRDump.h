//===- IRDump.h - the IR after every pass, one file each --------*- C++ -*-===//
#ifndef KILN_PIPELINE_IRDUMP_H
#define KILN_PIPELINE_IRDUMP_H

#include "mlir/Pass/PassInstrumentation.h"

#include <memory>
#include <string>

namespace kiln {

/// Writes the whole module to `dir`/NN-<pass>.mlir after every pass, in the
/// order the passes ran (a pass that runs on several functions writes one
/// file). Weights are elided so the files stay small.
/// `counter` numbers the files; it outlives the instrumentation so that
/// several pass managers (one per phase) continue one sequence.
std::unique_ptr<mlir::PassInstrumentation>
createIRDumpInstrumentation(const std::string &dir, unsigned &counter);

/// Writes `op` to `dir`/`name` the same way; for the imported module.
mlir::LogicalResult dumpIR(mlir::Operation *op, const std::string &dir,
                           const std::string &name);

} // namespace kiln

#endif
