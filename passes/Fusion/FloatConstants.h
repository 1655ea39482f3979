//===- FloatConstants.h - rearranging float weights at compile time -*- C++
//-*-===//
//
// Graph passes that change how a kernel reads a constant weight (Gemm's
// transposed B, a convolution split into channel groups) store it once in
// the new order instead of adding a kernel that moves it on every run.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_FLOATCONSTANTS_H
#define KILN_PASSES_FUSION_FLOATCONSTANTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace kiln {

/// The float32, float16 or bfloat16 constant `value` rearranged into
/// `resultType` (the same element type): result element i (row-major) is
/// source element `sourceIndex(i)`, or zero where that is -1 (padding). A
/// splat rearranged into as many elements stays a splat; dense data stays
/// dense, a resource becomes a resource named after it plus `nameSuffix`.
/// Failure when the storage is not readable (an external or elided blob)
/// or of another element type.
mlir::FailureOr<mlir::ElementsAttr>
rearrangeFloatConstant(mlir::ElementsAttr value,
                       mlir::RankedTensorType resultType,
                       llvm::function_ref<int64_t(int64_t)> sourceIndex,
                       llvm::StringRef nameSuffix);

/// The constant `value` with its dims permuted as kiln.transpose would:
/// result dim i is source dim `perm[i]`. The same storage and failures as
/// rearrangeFloatConstant.
mlir::FailureOr<mlir::ElementsAttr>
permuteFloatConstant(mlir::ElementsAttr value, llvm::ArrayRef<int64_t> perm,
                     llvm::StringRef nameSuffix);

/// The float32 constant `value` stored as signless integers of
/// `narrowType` (i8 or i16), which hold every one of its elements exactly:
/// each an integer in the type's range, and no -0.0 (its sign would be
/// lost). Dense data stays dense, a resource becomes a resource named
/// after it plus `nameSuffix`. Failure when some element does not fit, or
/// the storage is not readable (an external or elided blob) or a splat.
mlir::FailureOr<mlir::ElementsAttr>
narrowIntegerValuedConstant(mlir::ElementsAttr value,
                            mlir::IntegerType narrowType,
                            llvm::StringRef nameSuffix);

/// The same, rearranged into `shape` as rearrangeFloatConstant does:
/// result element i is source element `sourceIndex(i)`, or zero where
/// that is -1.
mlir::FailureOr<mlir::ElementsAttr>
narrowIntegerValuedConstant(mlir::ElementsAttr value,
                            mlir::IntegerType narrowType,
                            llvm::ArrayRef<int64_t> shape,
                            llvm::function_ref<int64_t(int64_t)> sourceIndex,
                            llvm::StringRef nameSuffix);

/// The elements of the float32 (or float64) constant `value`, row-major;
/// failure when its storage is not readable (an external or elided blob)
/// or a float64 element is not a float32 value.
mlir::FailureOr<std::vector<float>> readFloatConstant(mlir::ElementsAttr value);

} // namespace kiln

#endif
