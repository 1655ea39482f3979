//===- Common.h - helpers shared by the kiln → linalg patterns ---*- C++
//-*-===//
#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_COMMON_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_COMMON_H

#include "KilnToLinalg.h"
#include "kiln/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::lowering {

using mlir::utils::IteratorType;
using BodyFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                              mlir::ValueRange)>;

inline mlir::RankedTensorType tensorTypeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// A scalar constant of a float or integer type.
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                        double value);
/// The most negative (or positive) value of a type: -inf for floats.
mlir::Value lowestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                        bool highest = false);
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, double value);
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value scalar);

/// The map reading an operand of shape `in` inside a loop nest over `out`,
/// with numpy broadcasting (dims aligned right, size-1 dims stay at 0).
mlir::AffineMap broadcastMap(llvm::ArrayRef<int64_t> in,
                             llvm::ArrayRef<int64_t> out,
                             mlir::MLIRContext *ctx);

/// A parallel generic over `resultType` reading `inputs` with broadcasting.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange inputs,
                             mlir::RankedTensorType resultType, BodyFn body);

/// The accumulator map of a reduction over `axes` of a rank-`rank` input.
mlir::AffineMap reductionOutMap(int64_t rank, llvm::ArrayRef<int64_t> axes,
                                bool keepdims, mlir::MLIRContext *ctx);

/// `type` without the dims in `axes`: the shape a reduction computes before
/// its kept (size-1) dims are put back.
mlir::RankedTensorType withoutAxes(mlir::RankedTensorType type,
                                   llvm::ArrayRef<int64_t> axes);

/// Puts back the size-1 dims `axes` of a keepdims reduction. Reductions
/// write through projected permutations only (never a constant index), so
/// that every one of them can be tiled and fused.
mlir::Value expandToKeptDims(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value reduced,
                             mlir::RankedTensorType keptType,
                             llvm::ArrayRef<int64_t> axes);

/// Pads the spatial dims (firstSpatialDim.. : 2 for NC..., 1 for N...C)
/// of `input`; `extraEnd` adds to the end pads.
mlir::Value padSpatial(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input, llvm::ArrayRef<int64_t> pads,
                       llvm::ArrayRef<int64_t> extraEnd, double padValue,
                       int64_t firstSpatialDim = 2);
/// Expressions o_i * stride_i + k_i * dilation_i for each spatial dim.
llvm::SmallVector<mlir::AffineExpr>
windowExprs(mlir::MLIRContext *ctx, int64_t firstO, int64_t firstK,
            llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations);
/// A window generic's loops: batch, channel, output positions and window
/// positions (one per spatial dim), and the window's geometry.
struct WindowLoops {
  int64_t nDim = 0, cDim = 1;
  /// The input is [N, spatial..., C] rather than [N, C, spatial...].
  bool channelsLast = false;
  llvm::SmallVector<int64_t> oDims, kDims;
  llvm::ArrayRef<int64_t> strides, dilations, padsBegin;
};

/// For window generics on GPUs (depthwise convolutions, pooling): built in
/// the generic's body from linalg.index, the element of `input` [N, C,
/// spatial...] that the iteration reads, at o_i * stride_i + k_i *
/// dilation_i - padBegin_i, or `padValue` where that lies in the padding
/// (the load's indices are clamped into the input, then the value
/// selected). The padded input is never materialized: tiled to GPU
/// threads, a tensor.pad becomes a padded copy of its tile per thread. An
/// input that a float cast widened is read narrow and widened here (the
/// cast, no longer an operand the generic's tiles fuse, would otherwise
/// convert the whole tensor in every thread).
mlir::Value readWindowElement(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value input, const WindowLoops &loops,
                              mlir::Type elementType, double padValue);

/// Dim expressions d_first .. d_{first+count-1}.
llvm::SmallVector<mlir::AffineExpr> dimRange(mlir::MLIRContext *ctx,
                                             int64_t first, int64_t count);

void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateContractionPatterns(mlir::RewritePatternSet &patterns,
                                 int64_t flattenRowsBelow,
                                 bool readWindowPaddingInPlace);
void populatePoolingPatterns(mlir::RewritePatternSet &patterns,
                             bool readWindowPaddingInPlace);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
/// `concatByElement`: concatenations that other ops of their kernel
/// consume become generics reading each element from the input that holds
/// it (ConcatLowering).
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns,
                                  bool concatByElement);

} // namespace kiln::lowering

#endif
