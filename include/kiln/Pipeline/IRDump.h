//===- IRDump.h - the IR after every pass that changed it -------*- C++ -*-===//
#ifndef KILN_PIPELINE_IRDUMP_H
#define KILN_PIPELINE_IRDUMP_H

#include "mlir/Pass/PassInstrumentation.h"

#include <memory>
#include <set>
#include <string>

namespace kiln {

/// What --dump-ir writes, and where.
struct IRDumpOptions {
  std::string dir;
  /// Pass arguments (kiln-tile-and-distribute) to dump; empty: every pass.
  std::set<std::string> passes;
  /// Kernel names (their symbols) to dump; empty: everything. With names,
  /// a pass dumps only those kernels, however much else it changed.
  std::set<std::string> kernels;
};

/// Writes the IR a pass changed, in the order the passes ran: a pass on the
/// whole module writes `dir`/NNNN-<pass>.mlir, a pass on each kernel writes
/// `dir`/NNNN-<pass>/<kernel>.mlir for the kernels it changed. NNNN numbers
/// the passes (zero-padded, so that files sort in order); a pass that
/// changed nothing writes nothing. Weights are elided so that files stay
/// small. `counter` outlives the instrumentation so that several pass
/// managers (one per phase) continue one sequence.
std::unique_ptr<mlir::PassInstrumentation>
createIRDumpInstrumentation(const IRDumpOptions &options, unsigned &counter);

/// Writes `op` to `dir`/`name` the same way; for the imported module
/// (0000-import.mlir).
mlir::LogicalResult dumpIR(mlir::Operation *op, const std::string &dir,
                           const std::string &name);

} // namespace kiln

#endif
