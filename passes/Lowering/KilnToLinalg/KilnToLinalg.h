//===- KilnToLinalg.h - kiln compute ops → linalg on tensors ----*- C++ -*-===//
//
// Private to kiln-convert-to-linalg (passes/Lowering/ConvertKilnToLinalg.cpp),
// the patterns' only user.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_KILNTOLINALG_H
#define KILN_PASSES_LOWERING_KILNTOLINALG_H

#include "kiln/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace kiln {
/// Patterns that lower every kiln compute op to linalg, tensor, arith and
/// math ops on tensors, one op family per file beside this one.
/// Pointwise convolutions with rows shorter than `flattenImageRowsBelow`
/// (every one when 0: the GPU targets) compute over the flattened image.
/// `readWindowPaddingInPlace` (GPU targets): depthwise convolutions and
/// pooling read their padding in place (index checks in the generic's
/// body) instead of from a padded copy of the input. `concatByElement` (GPU
/// targets): concatenations that other ops of their kernel consume become
/// generics that read each element from the input holding it, which tiling
/// fuses into the consumers' tiles.
void populateKilnToLinalgPatterns(
    mlir::RewritePatternSet &patterns,
    int64_t flattenImageRowsBelow = kFlattenImageRowsBelow,
    bool readWindowPaddingInPlace = false, bool concatByElement = false);
} // namespace kiln

#endif
