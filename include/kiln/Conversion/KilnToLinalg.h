//===- KilnToLinalg.h - kiln compute ops → linalg on tensors ----*- C++ -*-===//
#ifndef KILN_CONVERSION_KILNTOLINALG_H
#define KILN_CONVERSION_KILNTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace kiln {
/// Patterns that lower every kiln compute op to linalg, tensor, arith and
/// math ops on tensors, one op family per file in lib/Conversion/KilnToLinalg.
void populateKilnToLinalgPatterns(mlir::RewritePatternSet &patterns);
} // namespace kiln

#endif
