//===- OnnxDecomposedOpHandlers.cpp - ops built from other kiln ops -------===//
//
// Ops that are a few kiln ops around a constant computed here: a triangular
// mask (Trilu), a triangular matrix (CumSum), an index ramp (Hardmax,
// OneHot), infinities (IsInf). They need no kernels of their own; fusion
// groups the pieces.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporterImpl.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

FailureOr<Value> where(NodeContext &ctx, Value c, Value x, Value y) {
  return ctx.create<WhereOp>(ValueRange{c, x, y});
}

/// A constant i1 tensor.
Value boolConstant(NodeContext &ctx, ArrayRef<int64_t> shape,
                   ArrayRef<bool> values) {
  auto type = RankedTensorType::get(shape, ctx.b().getI1Type());
  return ConstantOp::create(ctx.b(), ctx.getLoc(),
                            DenseElementsAttr::get(type, values));
}

/// 0, 1, ..., n-1 as int64, shaped to lie along `axis` of a rank-`rank`
/// tensor (size 1 elsewhere).
Value ramp(NodeContext &ctx, int64_t n, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = n;
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = double(i);
  return ctx.constant(
      RankedTensorType::get(shape, ctx.b().getIntegerType(64)), values);
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

} // namespace

LogicalResult onnx_import::importTrilu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (rankOf(x) < 2)
    return ctx.fail("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    auto given = ctx.constInts(1);
    if (failed(given))
      return failure();
    k = given->empty() ? 0 : given->front();
  }
  bool upper = ctx.intAttr("upper", 1) != 0;
  int64_t rows = shapeOf(x)[rankOf(x) - 2], cols = shapeOf(x).back();
  SmallVector<bool> keep;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(upper ? j - i >= k : j - i <= k);
  Value mask = boolConstant(ctx, {rows, cols}, keep);
  return setResult(ctx, where(ctx, mask, x, ctx.scalar(x, 0)));
}

/// CumSum along an axis is a product with a triangular 0/1 matrix.
LogicalResult onnx_import::importCumSum(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  auto axisValue = ctx.constInts(1);
  if (failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return ctx.fail("axis must be a scalar");
  int64_t rank = rankOf(x);
  int64_t axis = normalizeAxis(axisValue->front(), rank);
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis out of range");
  bool exclusive = ctx.intAttr("exclusive", 0) != 0;
  bool reverse = ctx.intAttr("reverse", 0) != 0;
  int64_t n = shapeOf(x)[axis];
  // out[i] = sum_j in[j] * T[j][i]
  std::vector<double> triangle(n * n, 0.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      bool counted = reverse ? (exclusive ? j > i : j >= i)
                             : (exclusive ? j < i : j <= i);
      triangle[j * n + i] = counted ? 1.0 : 0.0;
    }
  Value matrix = ctx.constant(
      RankedTensorType::get({n, n}, getElementTypeOrSelf(x.getType())),
      triangle);
  auto &b = ctx.b();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  Value moved = x;
  if (axis != rank - 1) {
    auto t = ctx.create<TransposeOp>(
        x, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
    if (failed(t))
      return failure();
    moved = *t;
  }
  auto summed = ctx.create<MatMulOp>(ValueRange{moved, matrix});
  if (failed(summed) || axis == rank - 1)
    return setResult(ctx, summed);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return setResult(ctx, ctx.create<TransposeOp>(
                            *summed, {b.getNamedAttr(
                                         "perm", b.getDenseI64ArrayAttr(inverse))}));
}

/// Hardmax: 1 where the index equals the (first) argmax along the axis.
LogicalResult onnx_import::importHardmax(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  if (ctx.opset() < 13)
    return ctx.fail("the 2-D coercion of Hardmax before opset 13 is not "
                    "supported yet");
  int64_t axis = normalizeAxis(ctx.intAttr("axis", -1), rank);
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis out of range");
  auto &b = ctx.b();
  auto best = ctx.create<ArgMaxOp>(
      x, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
          b.getNamedAttr("keepdims", b.getBoolAttr(true)),
          b.getNamedAttr("select_last_index", b.getBoolAttr(false))});
  if (failed(best))
    return failure();
  auto hit = ctx.create<EqualOp>(
      ValueRange{*best, ramp(ctx, shapeOf(x)[axis], axis, rank)});
  if (failed(hit))
    return failure();
  return setResult(ctx, where(ctx, *hit, ctx.scalar(x, 1), ctx.scalar(x, 0)));
}

LogicalResult onnx_import::importOneHot(NodeContext &ctx) {
  Value indices = ctx.input(0);
  if (!indices ||
      failed(ctx.requireDtypes(indices, NodeContext::Int | NodeContext::Float)))
    return failure();
  const ConstTensor *depthTensor = ctx.constInput(1);
  if (!depthTensor)
    return ctx.failNotConstant(1, "must be a constant");
  std::optional<float> depthFloat = depthTensor->asScalarFloat();
  std::vector<int64_t> depthInts = depthTensor->asInts();
  int64_t depth = depthFloat ? int64_t(*depthFloat)
                             : (depthInts.size() == 1 ? depthInts[0] : -1);
  if (depth <= 0)
    return ctx.fail("depth must be a positive scalar");
  Value values = ctx.input(2);
  if (!values || shapeOf(values).size() != 1 || shapeOf(values)[0] != 2)
    return ctx.fail("values must be a 2-element tensor [off, on]");
  int64_t outRank = rankOf(indices) + 1;
  int64_t axis = normalizeAxis(ctx.intAttr("axis", -1), outRank);
  if (axis < 0 || axis >= outRank)
    return ctx.fail("axis out of range");
  auto i64 = ctx.b().getIntegerType(64);
  // Indices as int64, negative ones counted from the end, with a unit dim at
  // the axis.
  Value idx = indices;
  if (getElementTypeOrSelf(idx.getType()) != i64)
    idx = CastOp::create(ctx.b(), ctx.getLoc(),
                         cast<RankedTensorType>(idx.getType()).clone(i64), idx);
  Value depthValue = ctx.scalar(idx, double(depth));
  auto negative = ctx.create<LessOp>(ValueRange{idx, ctx.scalar(idx, 0)});
  auto wrapped = ctx.create<AddOp>(ValueRange{idx, depthValue});
  if (failed(negative) || failed(wrapped))
    return failure();
  auto normalized = where(ctx, *negative, *wrapped, idx);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape(shapeOf(indices));
  shape.insert(shape.begin() + axis, 1);
  Value expanded = reshapeTo(ctx, *normalized, shape);
  auto hit =
      ctx.create<EqualOp>(ValueRange{expanded, ramp(ctx, depth, axis, outRank)});
  if (failed(hit))
    return failure();
  auto &b = ctx.b();
  auto element = [&](int64_t i) {
    auto starts = b.getDenseI64ArrayAttr({i});
    auto steps = b.getDenseI64ArrayAttr({1});
    auto sliceType = RankedTensorType::get({1}, getElementTypeOrSelf(values.getType()));
    Value one = SliceOp::create(b, ctx.getLoc(), sliceType, values, starts, steps);
    return reshapeTo(ctx, one, {});
  };
  return setResult(ctx, where(ctx, *hit, element(1), element(0)));
}

LogicalResult onnx_import::importIsInf(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  bool positive = ctx.intAttr("detect_positive", 1) != 0;
  bool negative = ctx.intAttr("detect_negative", 1) != 0;
  double inf = std::numeric_limits<double>::infinity();
  FailureOr<Value> result = failure();
  if (positive)
    result = ctx.create<EqualOp>(ValueRange{x, ctx.scalar(x, inf)});
  if (negative) {
    auto isNegInf = ctx.create<EqualOp>(ValueRange{x, ctx.scalar(x, -inf)});
    if (failed(isNegInf))
      return failure();
    result = positive && succeeded(result)
                 ? ctx.create<OrOp>(ValueRange{*result, *isNegInf})
                 : isNegInf;
  }
  if (!positive && !negative) {
    auto type = cast<RankedTensorType>(x.getType()).clone(ctx.b().getI1Type());
    ctx.setOutput(0, ConstantOp::create(ctx.b(), ctx.getLoc(),
                                        DenseElementsAttr::get(type, false)));
    return success();
  }
  return setResult(ctx, result);
}

LogicalResult onnx_import::importShrink(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  double lambd = ctx.floatAttr("lambd", 0.5f), bias = ctx.floatAttr("bias", 0.0f);
  auto below = ctx.create<LessOp>(ValueRange{x, ctx.scalar(x, -lambd)});
  auto above = ctx.create<GreaterOp>(ValueRange{x, ctx.scalar(x, lambd)});
  auto plus = ctx.create<AddOp>(ValueRange{x, ctx.scalar(x, bias)});
  auto minus = ctx.create<SubOp>(ValueRange{x, ctx.scalar(x, bias)});
  if (failed(below) || failed(above) || failed(plus) || failed(minus))
    return failure();
  auto upper = where(ctx, *above, *minus, ctx.scalar(x, 0));
  if (failed(upper))
    return failure();
  return setResult(ctx, where(ctx, *below, *plus, *upper));
}

/// Inference-mode Dropout is the identity; its mask is all true.
LogicalResult onnx_import::importDropout(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (ctx.hasInput(2)) {
    const ConstTensor *training = ctx.constInput(2);
    if (!training)
      return ctx.failNotConstant(2, "must be a constant");
    if (!training->bytes.empty() && training->bytes[0] != 0)
      return ctx.fail("training_mode=true is not supported");
  }
  ctx.setOutput(0, x);
  if (ctx.proto().output_size() > 1 && !ctx.proto().output(1).empty()) {
    auto type = cast<RankedTensorType>(x.getType()).clone(ctx.b().getI1Type());
    ctx.setOutput(1, ConstantOp::create(ctx.b(), ctx.getLoc(),
                                        DenseElementsAttr::get(type, true)));
  }
  return success();
}

LogicalResult onnx_import::importEinsum(NodeContext &ctx) {
  SmallVector<Value> inputs;
  SmallVector<int64_t> ranks;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    Value v = ctx.input(i);
    if (!v || failed(ctx.requireFloat(v)))
      return failure();
    inputs.push_back(v);
    ranks.push_back(rankOf(v));
    shapes.push_back(shapeOf(v));
  }
  if (inputs.empty() || failed(ctx.requireSameDtype(inputs)))
    return failure();
  std::string equation = ctx.stringAttr("equation", "");
  std::string error;
  auto subscripts = parseEinsumEquation(equation, ranks, error);
  if (failed(subscripts))
    return ctx.fail(error);
  auto sizes = einsumDimSizes(*subscripts, shapes, error);
  if (failed(sizes))
    return ctx.fail(error);
  SmallVector<int64_t> shape;
  for (char ch : subscripts->output)
    shape.push_back(sizes->at(ch));
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(inputs[0].getType()));
  ctx.setOutput(0, EinsumOp::create(ctx.b(), ctx.getLoc(), type, inputs,
                                    ctx.b().getStringAttr(equation)));
  return success();
}
