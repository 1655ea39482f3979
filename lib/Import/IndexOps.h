//===- IndexOps.h - int64 tensor arithmetic for handlers ---------*- C++
//-*-===//
//
// The ops handlers build to compute indices, offsets, counts and
// coordinates in the kernels (dynamic Slice and Pad, NonZero, Unique,
// Resize and GridSample coordinates, ...): int64 constants and iotas,
// arithmetic, selects, gathers and reductions, each remembering the first
// failure (ChainedOps) so a handler checks once at the end.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_INDEXOPS_H
#define KILN_LIB_IMPORT_INDEXOPS_H

#include "NodeContext.h"

namespace kiln::onnx_import {

/// int64 tensor arithmetic, remembering the first failure.
class IndexOps : public ChainedOps {
public:
  explicit IndexOps(NodeContext &ctx) : ctx(ctx) {}

  mlir::Value constant(llvm::ArrayRef<int64_t> values,
                       llvm::ArrayRef<int64_t> shape) {
    std::vector<double> doubles(values.begin(), values.end());
    return ctx.constant(mlir::RankedTensorType::get(shape, i64()), doubles);
  }
  mlir::Value scalar(int64_t v) { return constant({v}, {}); }
  /// from, from + 1, ... (n values) in `shape`.
  mlir::Value iota(int64_t n, llvm::ArrayRef<int64_t> shape, int64_t from = 0) {
    std::vector<int64_t> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = from + i;
    return constant(values, shape);
  }
  /// `v` as int64 (int32 inputs are widened).
  mlir::Value widen(mlir::Value v) {
    if (!v || mlir::getElementTypeOrSelf(v.getType()) == i64())
      return v;
    return CastOp::create(ctx.b(), ctx.getLoc(),
                          mlir::RankedTensorType::get(shapeOf(v), i64()), v);
  }
  template <typename OpTy> mlir::Value op(mlir::Value a, mlir::Value b) {
    return check(a && b ? ctx.create<OpTy>(mlir::ValueRange{a, b})
                        : mlir::FailureOr<mlir::Value>(mlir::failure()));
  }
  mlir::Value select(mlir::Value c, mlir::Value a, mlir::Value b) {
    return check(c && a && b ? ctx.create<WhereOp>(mlir::ValueRange{c, a, b})
                             : mlir::FailureOr<mlir::Value>(mlir::failure()));
  }
  mlir::Value differs(mlir::Value a, mlir::Value b) {
    mlir::Value same = op<EqualOp>(a, b);
    return check(same ? ctx.create<NotOp>(same)
                      : mlir::FailureOr<mlir::Value>(mlir::failure()));
  }
  mlir::Value clamp(mlir::Value v, mlir::Value low, mlir::Value high) {
    return op<MinOp>(op<MaxOp>(v, low), high);
  }
  /// Element `i` of a 1-D tensor, as a scalar.
  mlir::Value element(mlir::Value v, int64_t i) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    mlir::Value one = SliceOp::create(
        b, ctx.getLoc(), mlir::RankedTensorType::get({1}, i64()), v,
        b.getDenseI64ArrayAttr({i}), b.getDenseI64ArrayAttr({1}));
    return reshapeTo(ctx, one, {});
  }
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape) {
    return v ? reshapeTo(ctx, v, shape) : fail();
  }
  /// The reduction of `v` over dim `axis`, which goes.
  template <typename OpTy> mlir::Value reduce(mlir::Value v, int64_t axis) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    return check(ctx.create<OpTy>(
        v, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({axis})),
            b.getNamedAttr("keepdims", b.getBoolAttr(false))}));
  }
  /// The sum of `v` over dim `axis`, which goes (0: over rows).
  mlir::Value sum(mlir::Value v, int64_t axis = 0) {
    return reduce<ReduceSumOp>(v, axis);
  }
  /// `data` gathered along `axis` at `indices` (clamped by the kernel).
  mlir::Value gather(mlir::Value data, mlir::Value indices, int64_t axis) {
    if (!data || !indices)
      return fail();
    auto &b = ctx.b();
    return check(ctx.create<GatherOp>(
        mlir::ValueRange{data, indices},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
  /// GatherElements of `data` along `axis` (indices clamped by the kernel).
  mlir::Value gatherElements(mlir::Value data, mlir::Value indices,
                             int64_t axis) {
    if (!data || !indices)
      return fail();
    auto &b = ctx.b();
    return check(ctx.create<GatherElementsOp>(
        mlir::ValueRange{data, indices},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
  /// `parts` joined along `axis`.
  mlir::Value concat(llvm::ArrayRef<mlir::Value> parts, int64_t axis) {
    if (parts.empty() || llvm::is_contained(parts, mlir::Value()))
      return fail();
    if (parts.size() == 1)
      return parts.front();
    auto &b = ctx.b();
    return check(ctx.create<ConcatOp>(
        parts, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    return check(ctx.create<TransposeOp>(
        v, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
  }
  /// `v` converted to `elementType` (no op when it has it).
  mlir::Value castTo(mlir::Value v, mlir::Type elementType) {
    return v ? castElements(ctx, v, elementType) : fail();
  }
  /// The first position of the largest element along `axis`, kept as a
  /// dim of 1.
  mlir::Value argMax(mlir::Value v, int64_t axis) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    return check(ctx.create<ArgMaxOp>(
        v, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
            b.getNamedAttr("keepdims", b.getBoolAttr(true)),
            b.getNamedAttr("select_last_index", b.getBoolAttr(false))}));
  }
  template <typename OpTy> mlir::Value unary(mlir::Value v) {
    return check(v ? ctx.create<OpTy>(v)
                   : mlir::FailureOr<mlir::Value>(mlir::failure()));
  }
  mlir::Type i64() { return ctx.b().getI64Type(); }

private:
  NodeContext &ctx;
};

/// IndexOps with float constants of one float type (a model's, or float64
/// for coordinates computed exactly).
class FloatOps : public IndexOps {
public:
  FloatOps(NodeContext &ctx, mlir::Type floatType)
      : IndexOps(ctx), ctx(ctx), floatType_(floatType) {}

  mlir::Type floatType() const { return floatType_; }
  mlir::Value real(double v) { return reals({v}, {}); }
  mlir::Value reals(llvm::ArrayRef<double> values,
                    llvm::ArrayRef<int64_t> shape) {
    return ctx.constant(mlir::RankedTensorType::get(shape, floatType_), values);
  }
  mlir::Value toFloat(mlir::Value v) { return castTo(v, floatType_); }

private:
  NodeContext &ctx;
  mlir::Type floatType_;
};

} // namespace kiln::onnx_import

#endif
