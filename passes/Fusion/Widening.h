//===- Widening.h - graph rewrites around widened 16-bit values -*- C++ -*-===//
//
// --precision=f16|bf16 stores tensors in 16 bits and widens them to float32
// next to the ops that compute with them (isWidened). Graph passes that
// reshape such an operand do it to the 16-bit value and widen after, so
// that the widening stays next to its consumer: its kernel then loads 16
// bits, and a contraction keeps tensor cores.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_WIDENING_H
#define KILN_PASSES_FUSION_WIDENING_H

#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// The value a float32 operand holds: its 16-bit source when it is a
/// widened one (isWidened), else itself.
mlir::Value storedValue(mlir::Value value);

/// `value` reshaped to `shape`; a widened 16-bit value is reshaped before
/// its widening, which stays next to its consumer (a kernel's prologue).
mlir::Value reshapeBeforeWidening(mlir::PatternRewriter &rewriter,
                                  mlir::Location loc, mlir::Value value,
                                  llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif
