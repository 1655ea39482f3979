//===- KilnToLinalg.h - kiln compute ops → linalg on tensors ----*- C++ -*-===//
#ifndef KILN_CONVERSION_KILNTOLINALG_H
#define KILN_CONVERSION_KILNTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace kiln {
/// Pointwise (1x1, stride 1) convolutions whose output rows are shorter
/// than this compute over the flattened image ([N, F, H*W]): rows of 7 or
/// 14 would leave most lanes of a CPU vector register (16 floats with
/// AVX-512) idle. Longer rows stay as they are: split by image rows, each
/// workgroup keeps its slice of the input in cache while it walks the
/// filters, which measured faster on 28x28 maps (ResNet-50 layer2: 0.71 ms
/// by rows, 0.87 ms flattened and split by filters).
/// kiln-split-pointwise-conv-stride gives strided ones of the same rows
/// stride 1.
constexpr int64_t kFlattenImageRowsBelow = 16;

/// Patterns that lower every kiln compute op to linalg, tensor, arith and
/// math ops on tensors, one op family per file in lib/Conversion/KilnToLinalg.
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
