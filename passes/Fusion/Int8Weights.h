//===- Int8Weights.h - int8 weights and uint8 activations of QDQ models ---===//
//
// What the int8 packing passes (kiln-pack-int8-matmul-weights,
// kiln-pack-int8-conv-weights) read back from the imported graph: the
// uint8 bytes behind dequantized activations, their constant zero points
// and scales, and the int8 grid of weights the importer dequantized.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_INT8WEIGHTS_H
#define KILN_PASSES_FUSION_INT8WEIGHTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <vector>

namespace kiln {

/// Integers from 0 up to it are exact in float32: an int8 packing pass
/// sums in float64 where a partial sum may reach it.
constexpr double kExactFloat32 = 16777216.0;

/// `values` as a kiln.constant of `shape` and float `type`.
mlir::Value floatConstant(mlir::OpBuilder &builder, mlir::Location loc,
                          llvm::ArrayRef<double> values,
                          llvm::ArrayRef<int64_t> shape, mlir::Type type);

/// The value of a float32 constant that holds one, of any shape (or of a
/// float64 one that float32 holds exactly).
std::optional<float> scalarConstant(mlir::Value value);

/// X when `value` is cast<f32 or f64>(X) of a uint8 X.
mlir::Value uint8Source(mlir::Value value);

/// Whether every value is an integer int8 holds (and not -0.0).
bool holdsInt8(llvm::ArrayRef<float> values);

/// Scales s, one for all `groups` groups of `groupSize` values or else one
/// per group, such that every value `index(i, g)` (the i-th of group g)
/// is float32(q * s[g]) for an integer q in [-128, 127]: what
/// DequantizeLinear computes from int8 weights (zero point 0) and the
/// importer folded. A scale is found from the group's largest magnitude,
/// which symmetric quantization maps to 127, and checked against every
/// value; none when a group has no such scale.
std::optional<std::vector<float>>
int8Scales(llvm::ArrayRef<float> values, int64_t groupSize, int64_t groups,
           llvm::function_ref<int64_t(int64_t, int64_t)> index);

/// Offsets c, one per group of `groupSize` integer values (group g's i-th
/// at `index(i, g)`), such that every value minus its group's offset is in
/// int8: 0 where the group fits already, else its smallest plus 128. None
/// when a value is not an integer or a group spans more than 256 values (a
/// uint8 weight minus its zero point spans at most 256: 9 bits).
std::optional<std::vector<float>>
int8Offsets(llvm::ArrayRef<float> values, int64_t groupSize, int64_t groups,
            llvm::function_ref<int64_t(int64_t, int64_t)> index);

/// Erases what an int8 packing pass replaced once nothing reads it: the
/// float32 `weights` (and their Q * s products), then the ops of
/// `dropped` (those that dequantized the activations), last to first, so
/// that a consumer goes before what it reads.
void eraseReplacedOperands(llvm::ArrayRef<mlir::Operation *> weights,
                           llvm::ArrayRef<mlir::Operation *> dropped);

} // namespace kiln

#endif // KILN_PASSES_FUSION_INT8WEIGHTS_H
