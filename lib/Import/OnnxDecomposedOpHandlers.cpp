//===- OnnxDecomposedOpHandlers.cpp - ops built from other kiln ops -------===//
//
// Ops that are a few kiln ops around a constant computed here: a triangular
// mask (Trilu), a triangular matrix (CumSum), an index ramp (Hardmax,
// OneHot), infinities (IsInf). They need no kernels of their own; fusion
// groups the pieces.
//
//===----------------------------------------------------------------------===//
#include "ConstantEvaluator.h"
#include "IndexOps.h"

#include "mlir/IR/Matchers.h"

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
  return ctx.constant(RankedTensorType::get(shape, ctx.b().getIntegerType(64)),
                      values);
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

} // namespace

/// Trilu's mask for a k read at run time: the diagonal offset j - i of each
/// element (two small iotas, subtracted in the kernel) compared with k.
static FailureOr<Value> triluMaskAtRunTime(NodeContext &ctx, int64_t rows,
                                           int64_t cols, bool upper) {
  Value k = ctx.input(1);
  if (!k || failed(ctx.requireIndices(k)))
    return failure();
  if (cast<RankedTensorType>(k.getType()).getNumElements() != 1)
    return ctx.fail("k must hold one value");
  auto i64 = ctx.b().getI64Type();
  auto iota = [&](int64_t n, ArrayRef<int64_t> shape) {
    std::vector<double> values(n);
    for (int64_t v = 0; v < n; ++v)
      values[v] = double(v);
    return ctx.constant(RankedTensorType::get(shape, i64), values);
  };
  if (failed(ctx.reserveConstant(rows + cols, i64)))
    return failure();
  auto offsets = ctx.create<SubOp>(
      ValueRange{iota(cols, {1, cols}), iota(rows, {rows, 1})});
  if (failed(offsets))
    return failure();
  Value scalarK = reshapeTo(ctx, k, {});
  if (cast<RankedTensorType>(k.getType()).getElementType() != i64)
    scalarK = CastOp::create(ctx.b(), ctx.getLoc(),
                             RankedTensorType::get({}, i64), scalarK);
  return upper ? ctx.create<GreaterEqualOp>(ValueRange{*offsets, scalarK})
               : ctx.create<LessEqualOp>(ValueRange{*offsets, scalarK});
}

static LogicalResult importTrilu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (rankOf(x) < 2)
    return ctx.fail("input must have rank >= 2");
  bool upper = ctx.intAttr("upper", 1) != 0;
  int64_t rows = shapeOf(x)[rankOf(x) - 2], cols = shapeOf(x).back();
  if (ctx.hasInput(1) && !ctx.constInput(1)) {
    auto mask = triluMaskAtRunTime(ctx, rows, cols, upper);
    if (failed(mask))
      return failure();
    return setResult(ctx, where(ctx, *mask, x, ctx.scalar(x, 0)));
  }
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    auto given = ctx.constInts(1);
    if (failed(given))
      return failure();
    k = given->empty() ? 0 : given->front();
  }
  SmallVector<bool> keep;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(upper ? j - i >= k : j - i <= k);
  Value mask = boolConstant(ctx, {rows, cols}, keep);
  return setResult(ctx, where(ctx, mask, x, ctx.scalar(x, 0)));
}

/// The running sum along the last axis of `moved` ([..., n]), whose
/// element j counts into element i where `counted[j * n + i]`. Floats: a
/// product with the triangular 0/1 matrix (a matmul, which GPU targets put
/// on matrix instructions). Integers, which matmul does not take (RoBERTa's
/// position ids count its int32 padding mask): each element broadcast
/// along a new last axis ([..., n, 1] against the [n, n] mask), the
/// uncounted ones replaced by 0 and the rest summed over j, exact in the
/// input's own type.
static FailureOr<Value> runningSumAlongLastAxis(NodeContext &ctx, Value moved,
                                                ArrayRef<bool> counted) {
  int64_t rank = rankOf(moved);
  int64_t n = shapeOf(moved).back();
  Type element = getElementTypeOrSelf(moved.getType());
  if (isa<FloatType>(element)) {
    std::vector<double> triangle(counted.begin(), counted.end());
    Value matrix =
        ctx.constant(RankedTensorType::get({n, n}, element), triangle);
    return ctx.create<MatMulOp>(ValueRange{moved, matrix});
  }
  SmallVector<int64_t> column(shapeOf(moved));
  column.push_back(1);
  auto terms = where(ctx, boolConstant(ctx, {n, n}, counted),
                     reshapeTo(ctx, moved, column), ctx.scalar(moved, 0));
  if (failed(terms))
    return failure();
  auto &b = ctx.b();
  return ctx.create<ReduceSumOp>(
      *terms, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({rank - 1})),
               b.getNamedAttr("keepdims", b.getBoolAttr(false))});
}

/// CumSum along an axis: the axis moved last, runningSumAlongLastAxis,
/// moved back.
/// The running sum of `x` along `axis`.
static FailureOr<Value> cumSumAlong(NodeContext &ctx, Value x, int64_t axis,
                                    bool exclusive, bool reverse) {
  int64_t rank = rankOf(x);
  int64_t n = shapeOf(x)[axis], elements;
  if (__builtin_mul_overflow(n, n, &elements) ||
      failed(ctx.reserveConstant(elements, getElementTypeOrSelf(x.getType()))))
    return failure();
  // out[i] = sum over the j counted into i of in[j]
  SmallVector<bool> counted(n * n, false);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      counted[j * n + i] =
          reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
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
  auto summed = runningSumAlongLastAxis(ctx, moved, counted);
  if (failed(summed) || axis == rank - 1)
    return summed;
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return ctx.create<TransposeOp>(
      *summed, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(inverse))});
}

/// A CumSum whose axis is read at run time: the running sum along every
/// axis, the one the axis names selected in the kernel (rank times the
/// work of a constant axis), and a run-time check that it names one.
static FailureOr<Value> cumSumAlongRunTimeAxis(NodeContext &ctx, Value x,
                                               bool exclusive, bool reverse) {
  Value axis = ctx.input(1);
  if (!axis || failed(ctx.requireIndices(axis)))
    return failure();
  if (ShapedType::getNumElements(shapeOf(axis)) != 1)
    return ctx.fail("axis must be a scalar"), failure();
  auto i64 = ctx.b().getI64Type();
  auto scalarType = RankedTensorType::get({}, i64);
  Value a = reshapeTo(ctx, axis, {});
  if (getElementTypeOrSelf(a.getType()) != i64)
    a = CastOp::create(ctx.b(), ctx.getLoc(), scalarType, a);
  int64_t rank = rankOf(x);
  auto constant = [&](int64_t v) {
    return ctx.constant(scalarType, {double(v)});
  };
  auto negative = ctx.create<LessOp>(ValueRange{a, constant(0)});
  auto wrapped = ctx.create<AddOp>(ValueRange{a, constant(rank)});
  if (failed(negative) || failed(wrapped))
    return failure();
  auto normalized = where(ctx, *negative, *wrapped, a);
  if (failed(normalized))
    return failure();
  FailureOr<Value> result = failure();
  for (int64_t d = rank - 1; d >= 0; --d) {
    auto summed = cumSumAlong(ctx, x, d, exclusive, reverse);
    if (failed(summed))
      return failure();
    if (d == rank - 1) {
      result = summed;
      continue;
    }
    auto named = ctx.create<EqualOp>(ValueRange{*normalized, constant(d)});
    if (failed(named))
      return failure();
    result = where(ctx, *named, *summed, *result);
    if (failed(result))
      return failure();
  }
  auto below = ctx.create<LessOp>(ValueRange{*normalized, constant(0)});
  auto past =
      ctx.create<GreaterEqualOp>(ValueRange{*normalized, constant(rank)});
  if (failed(below) || failed(past))
    return failure();
  auto outside = ctx.create<OrOp>(ValueRange{*below, *past});
  if (failed(outside))
    return failure();
  ctx.addRuntimeCheck(*outside, "its axis is out of range for the data's " +
                                    Twine(rank) + " dims");
  return result;
}

static LogicalResult importCumSum(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  int64_t rank = rankOf(x);
  if (rank == 0)
    return ctx.fail("input must have rank >= 1");
  bool exclusive = ctx.intAttr("exclusive", 0) != 0;
  bool reverse = ctx.intAttr("reverse", 0) != 0;
  if (!ctx.constInput(1))
    return setResult(ctx, cumSumAlongRunTimeAxis(ctx, x, exclusive, reverse));
  auto axisValue = ctx.constInts(1);
  if (failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return ctx.fail("axis must be a scalar");
  int64_t axis = normalizeAxis(axisValue->front(), rank);
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis out of range");
  return setResult(ctx, cumSumAlong(ctx, x, axis, exclusive, reverse));
}

/// A scalar constant's value, or nullopt when `v` is no constant.
static std::optional<double> constantScalar(Value v) {
  DenseElementsAttr value;
  if (!matchPattern(v, m_Constant(&value)) || value.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(value.getElementType())) {
    APFloat f = *value.value_begin<APFloat>();
    bool lost;
    f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  return double((*value.value_begin<APInt>()).getSExtValue());
}

/// The length of a Range of constants, max(ceil((limit - start) / delta),
/// 0); nullopt when an input is read at run time.
static FailureOr<std::optional<int64_t>>
constantRangeLength(NodeContext &ctx, Value start, Value limit, Value delta) {
  std::optional<double> s = constantScalar(start), l = constantScalar(limit),
                        d = constantScalar(delta);
  if (!s || !l || !d)
    return std::optional<int64_t>();
  if (*d == 0) {
    (void)ctx.fail("delta is 0");
    return failure();
  }
  double length = std::max(std::ceil((*l - *s) / *d), 0.0);
  if (!(length <= double(kMaxConstantElements))) { // NaN too
    (void)ctx.fail("its start, limit and delta give more than " +
                   Twine(kMaxConstantElements) + " elements, or none (NaN)");
    return failure();
  }
  return std::optional<int64_t>(int64_t(length));
}

/// Range: start + i * delta for i below its length. The length of constant
/// inputs is computed here (the kiln ops' folders then compute the values);
/// for inputs read at run time it is the one the model declares, checked
/// at run time.
static LogicalResult importRange(NodeContext &ctx) {
  Value start = ctx.input(0), limit = ctx.input(1), delta = ctx.input(2);
  if (!start || !limit || !delta ||
      failed(ctx.requireDtypes({start, limit, delta},
                               NodeContext::Float | NodeContext::Int)) ||
      failed(ctx.requireSameDtype({start, limit, delta})))
    return failure();
  for (Value v : {start, limit, delta})
    if (ShapedType::getNumElements(shapeOf(v)) != 1)
      return ctx.fail("start, limit and delta must be scalars");
  FailureOr<std::optional<int64_t>> known =
      constantRangeLength(ctx, start, limit, delta);
  if (failed(known))
    return failure();
  std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
  if (!*known && (!declared || declared->size() != 1))
    return ctx.failNotConstant(
        0, "must be a constant, as must limit and delta, unless the model "
           "declares the Range's (1-D) result shape");
  int64_t n = *known ? **known : declared->front();
  Type element = getElementTypeOrSelf(start.getType());
  std::vector<double> steps(n);
  for (int64_t i = 0; i < n; ++i)
    steps[i] = double(i);
  if (failed(ctx.reserveConstant(n, element)))
    return failure();
  Value s = reshapeTo(ctx, start, {}), l = reshapeTo(ctx, limit, {}),
        d = reshapeTo(ctx, delta, {});
  auto offsets = ctx.create<MulOp>(
      ValueRange{ctx.constant(RankedTensorType::get({n}, element), steps), d});
  if (failed(offsets))
    return failure();
  auto result = ctx.create<AddOp>(ValueRange{s, *offsets});
  if (*known)
    return setResult(ctx, result);
  // The length max(ceil((limit - start) / delta), 0), in double.
  auto f64 = RankedTensorType::get({}, ctx.b().getF64Type());
  auto widen = [&](Value v) -> Value {
    return CastOp::create(ctx.b(), ctx.getLoc(), f64, v);
  };
  auto span = ctx.create<SubOp>(ValueRange{widen(l), widen(s)});
  if (failed(span))
    return failure();
  auto quotient = ctx.create<DivOp>(ValueRange{*span, widen(d)});
  if (failed(quotient))
    return failure();
  auto rounded = ctx.create<CeilOp>(*quotient);
  if (failed(rounded))
    return failure();
  auto length = ctx.create<MaxOp>(ValueRange{*rounded, ctx.constant(f64, {0})});
  if (failed(length))
    return failure();
  auto same =
      ctx.create<EqualOp>(ValueRange{*length, ctx.constant(f64, {double(n)})});
  if (failed(same))
    return failure();
  auto differs = ctx.create<NotOp>(*same);
  if (failed(differs))
    return failure();
  ctx.addRuntimeCheck(*differs, "its start, limit and delta give another "
                                "length than the " +
                                    Twine(n) +
                                    " the model declares and the artifact "
                                    "was compiled for (or a delta of 0)");
  return setResult(ctx, result);
}

/// ConstantOfShape: its one-element `value` (float32 zero by default)
/// expanded to the shape, which must be known at compile time (a constant,
/// or a model input the declared shapes fix). The expand's folder computes
/// it within the folding budget; past it, it is a kernel.
static LogicalResult importConstantOfShape(NodeContext &ctx) {
  const ConstTensor *shapeInput = ctx.constInput(0);
  if (!shapeInput)
    return ctx.failNotConstant(0, "must be a constant");
  std::vector<int64_t> shape = shapeInput->asInts();
  if (int64_t(shape.size()) !=
      ShapedType::getNumElements(shapeOf(ctx.input(0))))
    return ctx.fail("the shape must be int64");
  for (int64_t d : shape)
    if (d < 0)
      return ctx.fail("the shape has a negative dimension " + Twine(d));
  ConstTensor value;
  value.onnxType = onnx::TensorProto::FLOAT;
  value.bytes.assign(4, 0);
  std::string error;
  if (const onnx::AttributeProto *a = ctx.attr("value"))
    if (failed(readTensorBytes(a->t(), value, error)))
      return ctx.fail("value: " + error);
  auto element = elementTypeFor(ctx.b().getContext(), value.onnxType);
  if (failed(element))
    return ctx.fail("value has unsupported dtype " + dtypeName(value.onnxType));
  if (value.bytes.size() != bytesPerElement(value.onnxType))
    return ctx.fail("value must hold exactly one element");
  auto scalarType = RankedTensorType::get({}, *element);
  DenseElementsAttr scalar =
      element->isInteger(1)
          ? DenseElementsAttr::get(scalarType,
                                   ArrayRef<bool>{value.bytes[0] != 0})
          : DenseElementsAttr::getFromRawBuffer(
                scalarType,
                ArrayRef<char>(value.bytes.data(), value.bytes.size()));
  Value fill = ConstantOp::create(ctx.b(), ctx.getLoc(), scalar);
  ctx.setOutput(0,
                ExpandOp::create(ctx.b(), ctx.getLoc(),
                                 RankedTensorType::get(shape, *element), fill));
  return success();
}

/// Hardmax: 1 where the index equals the (first) argmax along the axis.
static LogicalResult importHardmax(NodeContext &ctx) {
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

static LogicalResult importOneHot(NodeContext &ctx) {
  Value indices = ctx.input(0);
  if (!indices ||
      failed(ctx.requireDtypes(indices, NodeContext::Int | NodeContext::Float)))
    return failure();
  const ConstTensor *depthTensor = ctx.constInput(1);
  if (!depthTensor)
    return ctx.failNotConstant(1, "must be a constant");
  std::optional<float> depthFloat = depthTensor->asScalarFloat();
  std::vector<int64_t> depthInts = depthTensor->asInts();
  // A float depth converts only when it is a finite int64.
  int64_t depth = -1;
  if (depthFloat)
    depth = std::isfinite(*depthFloat) && std::fabs(*depthFloat) < 0x1p62f
                ? int64_t(*depthFloat)
                : -1;
  else if (depthInts.size() == 1)
    depth = depthInts[0];
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
  auto hit = ctx.create<EqualOp>(
      ValueRange{expanded, ramp(ctx, depth, axis, outRank)});
  if (failed(hit))
    return failure();
  auto &b = ctx.b();
  auto element = [&](int64_t i) {
    auto starts = b.getDenseI64ArrayAttr({i});
    auto steps = b.getDenseI64ArrayAttr({1});
    auto sliceType =
        RankedTensorType::get({1}, getElementTypeOrSelf(values.getType()));
    Value one =
        SliceOp::create(b, ctx.getLoc(), sliceType, values, starts, steps);
    return reshapeTo(ctx, one, {});
  };
  return setResult(ctx, where(ctx, *hit, element(1), element(0)));
}

static LogicalResult importIsInf(NodeContext &ctx) {
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

static LogicalResult importShrink(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  double lambd = ctx.floatAttr("lambd", 0.5f),
         bias = ctx.floatAttr("bias", 0.0f);
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
static LogicalResult importDropout(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (ctx.hasInput(2)) {
    const ConstTensor *training = ctx.constInput(2);
    if (!training)
      return ctx.failNotConstant(2, "must be a constant");
    // Training with ratio 0 drops nothing: still the identity.
    bool inTraining = !training->bytes.empty() && training->bytes[0] != 0;
    const ConstTensor *ratio = ctx.hasInput(1) ? ctx.constInput(1) : nullptr;
    if (inTraining && ctx.hasInput(1) && !ratio)
      return ctx.failNotConstant(1, "must be a constant in training mode");
    std::optional<float> r = ratio ? ratio->asScalarFloat() : std::nullopt;
    if (inTraining && (!r || *r != 0))
      return ctx.fail("training_mode=true with a non-zero ratio is not "
                      "supported (random masks)");
  }
  ctx.setOutput(0, x);
  if (ctx.proto().output_size() > 1 && !ctx.proto().output(1).empty()) {
    auto type = cast<RankedTensorType>(x.getType()).clone(ctx.b().getI1Type());
    ctx.setOutput(1, ConstantOp::create(ctx.b(), ctx.getLoc(),
                                        DenseElementsAttr::get(type, true)));
  }
  return success();
}

static LogicalResult importEinsum(NodeContext &ctx) {
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
  auto type =
      RankedTensorType::get(shape, getElementTypeOrSelf(inputs[0].getType()));
  ctx.setOutput(0, EinsumOp::create(ctx.b(), ctx.getLoc(), type, inputs,
                                    ctx.b().getStringAttr(equation)));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

namespace {

/// Fails the import, or adds a check that fails the run, where class index
/// `target` (the node's input 1, `safeTarget` once ignored elements are 0)
/// is outside [-C, C) for the C classes of `inputShape` [N, C, d...]: an
/// error in onnxruntime, whose GatherElements refuses it, not a clamp.
LogicalResult requireClassIndices(NodeContext &ctx, Value safeTarget,
                                  ArrayRef<int64_t> inputShape,
                                  std::optional<int64_t> ignored) {
  int64_t classes = inputShape[1];
  if (ShapedType::isDynamic(classes))
    return success();
  if (const ConstTensor *target = ctx.constInput(1)) {
    for (auto [e, value] : llvm::enumerate(target->asInts())) {
      if ((ignored && value == *ignored) ||
          (value >= -classes && value < classes))
        continue;
      return ctx.fail("target element " + Twine(e) + " is " + Twine(value) +
                      ", out of range for " + Twine(classes) +
                      " classes (a class index is in [" + Twine(-classes) +
                      ", " + Twine(classes - 1) + "])");
    }
    return success();
  }
  return ctx.checkIndicesAtRunTime(safeTarget, ctx.proto().input(1), {1},
                                   inputShape);
}

/// Negative log likelihood of `input` [N, C, d...] (log-probabilities) at
/// the class indices `target` [N, d...], with optional class weights and an
/// ignored index, reduced as ONNX's `reduction` says.
FailureOr<Value> negativeLogLikelihood(NodeContext &ctx, Value input,
                                       Value target, Value weight) {
  auto &b = ctx.b();
  SmallVector<int64_t> targetShape(shapeOf(input));
  targetShape.erase(targetShape.begin() + 1);
  if (shapeOf(target) != ArrayRef(targetShape))
    return ctx.fail("the target must have the input's shape without its "
                    "class dim"),
           failure();
  if (weight && shapeOf(weight) != ArrayRef<int64_t>{shapeOf(input)[1]})
    return ctx.fail("the weight must have one value per class"), failure();
  auto i64 = b.getIntegerType(64);
  if (getElementTypeOrSelf(target.getType()) != i64)
    target = CastOp::create(b, ctx.getLoc(),
                            cast<RankedTensorType>(target.getType()).clone(i64),
                            target);
  const auto *ignoreAttr = ctx.attr("ignore_index");
  Value keep; // i1 [N, d...]: false where target == ignore_index
  Value safeTarget = target;
  if (ignoreAttr) {
    auto ignored = ctx.create<EqualOp>(
        ValueRange{target, ctx.scalar(target, double(ignoreAttr->i()))});
    if (failed(ignored))
      return failure();
    auto kept = ctx.create<NotOp>(*ignored);
    if (failed(kept))
      return failure();
    keep = *kept;
    auto safe = where(ctx, keep, target, ctx.scalar(target, 0));
    if (failed(safe))
      return failure();
    safeTarget = *safe;
  }
  std::optional<int64_t> ignored;
  if (ignoreAttr)
    ignored = ignoreAttr->i();
  if (failed(requireClassIndices(ctx, safeTarget, shapeOf(input), ignored)))
    return failure();
  // input[n, target[n, d...], d...]
  SmallVector<int64_t> indexShape(shapeOf(safeTarget));
  indexShape.insert(indexShape.begin() + 1, 1);
  auto picked = ctx.create<GatherElementsOp>(
      ValueRange{input, reshapeTo(ctx, safeTarget, indexShape)},
      {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
  if (failed(picked))
    return failure();
  auto loss = ctx.create<NegOp>(reshapeTo(ctx, *picked, shapeOf(safeTarget)));
  if (failed(loss))
    return failure();
  // The weight of each element: weight[target], 0 where ignored.
  Value elementWeight;
  if (weight) {
    auto gathered =
        ctx.create<GatherOp>(ValueRange{weight, safeTarget},
                             {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
    if (failed(gathered))
      return failure();
    elementWeight = *gathered;
  }
  if (keep) {
    Value one = elementWeight ? elementWeight : ctx.scalar(*loss, 1.0);
    auto masked = where(ctx, keep, one, ctx.scalar(*loss, 0.0));
    if (failed(masked))
      return failure();
    elementWeight = *masked;
  }
  if (elementWeight) {
    loss = ctx.create<MulOp>(ValueRange{*loss, elementWeight});
    if (failed(loss))
      return failure();
  }
  std::string reduction = ctx.stringAttr("reduction", "mean");
  if (reduction == "none")
    return loss;
  auto all = llvm::to_vector(llvm::seq<int64_t>(0, rankOf(*loss)));
  SmallVector<NamedAttribute> sumAttrs = {
      b.getNamedAttr("axes", b.getDenseI64ArrayAttr(all)),
      b.getNamedAttr("keepdims", b.getBoolAttr(false))};
  auto total = ctx.create<ReduceSumOp>(*loss, sumAttrs);
  if (failed(total) || reduction == "sum")
    return total;
  if (reduction != "mean")
    return ctx.fail("reduction '" + reduction + "' is not valid"), failure();
  if (!elementWeight)
    return ctx.create<ReduceMeanOp>(*loss, sumAttrs);
  auto weightSum = ctx.create<ReduceSumOp>(elementWeight, sumAttrs);
  if (failed(weightSum))
    return failure();
  return ctx.create<DivOp>(ValueRange{*total, *weightSum});
}

} // namespace

static LogicalResult importNegativeLogLikelihoodLoss(NodeContext &ctx) {
  Value input = ctx.input(0), target = ctx.input(1);
  if (!input || !target || failed(ctx.requireFloat(input)) ||
      failed(ctx.requireDtypes(target, NodeContext::Int)))
    return failure();
  if (rankOf(input) < 2)
    return ctx.fail("input must have rank >= 2");
  Value weight = ctx.hasInput(2) ? ctx.input(2) : nullptr;
  return setResult(ctx, negativeLogLikelihood(ctx, input, target, weight));
}

/// SoftmaxCrossEntropyLoss = NegativeLogLikelihoodLoss(LogSoftmax(scores)).
static LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  Value scores = ctx.input(0), labels = ctx.input(1);
  if (!scores || !labels || failed(ctx.requireFloat(scores)) ||
      failed(ctx.requireDtypes(labels, NodeContext::Int)))
    return failure();
  if (rankOf(scores) < 2)
    return ctx.fail("scores must have rank >= 2");
  auto &b = ctx.b();
  auto logProb = ctx.create<LogSoftmaxOp>(
      scores, {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
  if (failed(logProb))
    return failure();
  Value weight = ctx.hasInput(2) ? ctx.input(2) : nullptr;
  auto loss = negativeLogLikelihood(ctx, *logProb, labels, weight);
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  ctx.setOutput(1, *logProb);
  return success();
}

/// EyeLike depends only on the input's static shape: a constant.
static LogicalResult importEyeLike(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (rankOf(x) != 2)
    return ctx.fail("input must be 2-D");
  Type type = getElementTypeOrSelf(x.getType());
  if (const auto *dtype = ctx.attr("dtype")) {
    auto given = elementTypeFor(ctx.b().getContext(), dtype->i());
    if (failed(given))
      return ctx.fail("dtype " + dtypeName(dtype->i()) + " is not supported");
    type = *given;
  }
  if (!type.isIntOrFloat() ||
      (isa<IntegerType>(type) && !type.isSignlessInteger()))
    return ctx.fail("dtype is not supported yet");
  int64_t k = ctx.intAttr("k", 0), rows = shapeOf(x)[0], cols = shapeOf(x)[1];
  int64_t elements;
  if (__builtin_mul_overflow(rows, cols, &elements) ||
      failed(ctx.reserveConstant(elements, type)))
    return failure();
  std::vector<double> values(rows * cols, 0.0);
  // The diagonal's column: i + k, for the rows where it is in [0, cols).
  for (int64_t i = 0; i < rows; ++i)
    if (k >= -i && k < cols - i)
      values[i * cols + i + k] = 1.0;
  if (type.isInteger(1)) {
    SmallVector<bool> bits;
    for (double v : values)
      bits.push_back(v != 0);
    auto boolType = RankedTensorType::get({rows, cols}, type);
    ctx.setOutput(0,
                  ConstantOp::create(ctx.b(), ctx.getLoc(),
                                     DenseElementsAttr::get(boolType, bits)));
    return success();
  }
  ctx.setOutput(
      0, ctx.constant(RankedTensorType::get({rows, cols}, type), values));
  return success();
}

/// LRN: x / (bias + alpha / size * sum of squares over a window of
/// channels) ^ beta. The channel window sum is an average pool (which
/// counts padding) over [N, 1, C, H*W], times the window size.
static LogicalResult importLRN(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  if (rankOf(x) < 3)
    return ctx.fail("input must have rank >= 3");
  int64_t size = ctx.intAttr("size", 0);
  if (size <= 0)
    return ctx.fail("size must be positive");
  double alpha = ctx.floatAttr("alpha", 1e-4f),
         beta = ctx.floatAttr("beta", 0.75f);
  double bias = ctx.floatAttr("bias", 1.0f);
  auto shape = shapeOf(x);
  int64_t n = shape[0], c = shape[1], rest = 1;
  for (int64_t d : shape.drop_front(2))
    rest *= d;
  auto squared = ctx.create<MulOp>(ValueRange{x, x});
  if (failed(squared))
    return failure();
  auto &b = ctx.b();
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  auto averaged = ctx.create<AveragePoolOp>(
      reshapeTo(ctx, *squared, {n, 1, c, rest}),
      {b.getNamedAttr("kernel_shape", b.getDenseI64ArrayAttr({size, 1})),
       b.getNamedAttr("strides", b.getDenseI64ArrayAttr({1, 1})),
       b.getNamedAttr("pads", b.getDenseI64ArrayAttr({before, 0, after, 0})),
       b.getNamedAttr("dilations", b.getDenseI64ArrayAttr({1, 1})),
       b.getNamedAttr("ceil_mode", b.getBoolAttr(false)),
       b.getNamedAttr("count_include_pad", b.getBoolAttr(true))});
  if (failed(averaged))
    return failure();
  Value windowSum = reshapeTo(ctx, *averaged, shape);
  auto scaled = ctx.create<MulOp>(ValueRange{windowSum, ctx.scalar(x, alpha)});
  if (failed(scaled))
    return failure();
  auto shifted = ctx.create<AddOp>(ValueRange{*scaled, ctx.scalar(x, bias)});
  if (failed(shifted))
    return failure();
  auto denominator =
      ctx.create<PowOp>(ValueRange{*shifted, ctx.scalar(x, beta)});
  if (failed(denominator))
    return failure();
  return setResult(ctx, ctx.create<DivOp>(ValueRange{x, *denominator}));
}

/// When `indices` (of `shape` [outer..., k]) hold at each position its own
/// coordinates along the outer dims of more than one element, in order,
/// and 0 for the others (index [b, 0, s] is (b, s): exporters build them
/// from Ranges to read a block of the data), the size of the data block
/// each index component spans; else nothing.
static std::optional<SmallVector<int64_t>>
enumeratedBlock(ArrayRef<int64_t> indices, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> outer = shape.drop_back();
  int64_t k = shape.back();
  if (indices.empty())
    return std::nullopt;
  SmallVector<int64_t> wide; // the outer dims of more than one element
  for (auto [d, size] : llvm::enumerate(outer))
    if (size > 1)
      wide.push_back(int64_t(d));
  // Whether component j holds, at every position, its coordinate along
  // outer dim `dim` (0 where `dim` is none).
  auto holds = [&](int64_t j, std::optional<int64_t> dim) {
    SmallVector<int64_t> at(outer.size(), 0);
    for (size_t offset = 0; offset < indices.size(); offset += k) {
      if (indices[offset + j] != (dim ? at[*dim] : 0))
        return false;
      for (int64_t d = int64_t(outer.size()) - 1; d >= 0 && ++at[d] == outer[d];
           --d)
        at[d] = 0;
    }
    return true;
  };
  SmallVector<int64_t> block;
  size_t next = 0;
  for (int64_t j = 0; j < k; ++j) {
    if (next < wide.size() && holds(j, wide[next])) {
      block.push_back(outer[wide[next++]]);
    } else if (holds(j, std::nullopt)) {
      block.push_back(1);
    } else {
      return std::nullopt;
    }
  }
  if (next != wide.size())
    return std::nullopt;
  return block;
}

/// GatherND (batch_dims = 0): the last index dim of size k addresses the
/// first k data dims; their linear offset indexes the data flattened to
/// [prod(first k dims), rest...], which a Gather along axis 0 reads.
static LogicalResult importGatherND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  if (!data || !indices || failed(ctx.requireDtypes(indices, NodeContext::Int)))
    return failure();
  auto dataShape = shapeOf(data);
  auto indexShape = shapeOf(indices);
  // The leading batch_dims dims of data and indices pair up: each batch
  // element gathers from its own slice of the data.
  int64_t batchDims = ctx.intAttr("batch_dims", 0);
  if (batchDims < 0 || batchDims >= int64_t(indexShape.size()) ||
      batchDims >= int64_t(dataShape.size()) ||
      indexShape.take_front(batchDims) != dataShape.take_front(batchDims))
    return ctx.fail("batch_dims must be below both ranks, with the leading "
                    "dims of data and indices equal");
  if (indexShape.empty() || indexShape.back() < 1 ||
      indexShape.back() > (int64_t)dataShape.size() - batchDims)
    return ctx.fail("the last indices dim must be in [1, data rank - "
                    "batch_dims]");
  int64_t k = indexShape.back();
  if (failed(ctx.requireIndicesInRange(
          1, llvm::to_vector(llvm::seq<int64_t>(batchDims, batchDims + k)),
          dataShape)))
    return failure();
  auto &b = ctx.b();
  // Indices that enumerate their positions read a leading block of the
  // data as it lies: a slice (none when the block is all of it) and a
  // reshape, no gather kernel and no index constant that changes with the
  // batch.
  const ConstTensor *known = ctx.constInput(1);
  std::optional<SmallVector<int64_t>> block;
  if (batchDims == 0 && known)
    block = enumeratedBlock(known->asInts(), indexShape);
  if (block) {
    llvm::append_range(*block, dataShape.drop_front(k));
    Type element = getElementTypeOrSelf(data);
    Value read = data;
    if (ArrayRef<int64_t>(*block) != dataShape)
      read = SliceOp::create(
          b, ctx.getLoc(), RankedTensorType::get(*block, element), data,
          b.getDenseI64ArrayAttr(SmallVector<int64_t>(block->size(), 0)),
          b.getDenseI64ArrayAttr(SmallVector<int64_t>(block->size(), 1)));
    SmallVector<int64_t> shape(indexShape.drop_back());
    llvm::append_range(shape, dataShape.drop_front(k));
    ctx.setOutput(0, ReshapeOp::create(b, ctx.getLoc(),
                                       RankedTensorType::get(shape, element),
                                       read));
    return success();
  }
  auto i64 = b.getIntegerType(64);
  Value idx = indices;
  if (getElementTypeOrSelf(idx.getType()) != i64)
    idx = CastOp::create(b, ctx.getLoc(),
                         cast<RankedTensorType>(idx.getType()).clone(i64), idx);
  SmallVector<int64_t> outer(indexShape.drop_back());
  int64_t rank = indexShape.size();
  Value linear;
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1), sizes(indexShape);
    starts[rank - 1] = j;
    sizes[rank - 1] = 1;
    Value component = reshapeTo(
        ctx,
        SliceOp::create(b, ctx.getLoc(), RankedTensorType::get(sizes, i64), idx,
                        b.getDenseI64ArrayAttr(starts),
                        b.getDenseI64ArrayAttr(steps)),
        outer);
    // Negative indices count from the end of their dim.
    auto negative =
        ctx.create<LessOp>(ValueRange{component, ctx.scalar(component, 0)});
    auto wrapped = ctx.create<AddOp>(ValueRange{
        component, ctx.scalar(component, double(dataShape[batchDims + j]))});
    if (failed(negative) || failed(wrapped))
      return failure();
    auto normalized = where(ctx, *negative, *wrapped, component);
    auto scaled = ctx.create<MulOp>(
        ValueRange{*normalized, ctx.scalar(component, double(stride))});
    if (failed(normalized) || failed(scaled))
      return failure();
    if (!linear) {
      linear = *scaled;
    } else {
      auto sum = ctx.create<AddOp>(ValueRange{linear, *scaled});
      if (failed(sum))
        return failure();
      linear = *sum;
    }
    stride *= dataShape[batchDims + j];
  }
  int64_t batch = 1;
  for (int64_t d = 0; d < batchDims; ++d)
    batch *= dataShape[d];
  if (batch > 1) {
    // Each index row moves to its batch element's slice.
    int64_t rows = ShapedType::getNumElements(outer);
    std::vector<double> offsets(rows);
    for (int64_t r = 0; r < rows; ++r)
      offsets[r] = double(r / (rows / batch) * stride);
    auto moved = ctx.create<AddOp>(ValueRange{
        linear, ctx.constant(RankedTensorType::get(outer, i64), offsets)});
    if (failed(moved))
      return failure();
    linear = *moved;
  }
  SmallVector<int64_t> flatShape = {batch * stride};
  flatShape.append(dataShape.begin() + batchDims + k, dataShape.end());
  Value flat = reshapeTo(ctx, data, flatShape);
  return setResult(ctx, ctx.create<GatherOp>(
                            ValueRange{flat, linear},
                            {b.getNamedAttr("axis", b.getI64IntegerAttr(0))}));
}

/// MeanVarianceNormalization: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9)
/// over `axes`, as ONNX's function body defines it.
static LogicalResult importMeanVarianceNormalization(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  std::vector<int64_t> axes =
      ctx.intsAttr("axes").value_or(std::vector<int64_t>{0, 2, 3});
  auto normalized = normalizeAxes(ctx, axes, rank);
  if (failed(normalized))
    return failure();
  auto &b = ctx.b();
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("axes", b.getDenseI64ArrayAttr(*normalized)),
      b.getNamedAttr("keepdims", b.getBoolAttr(true))};
  auto mean = ctx.create<ReduceMeanOp>(x, attrs);
  auto squared = ctx.create<MulOp>(ValueRange{x, x});
  if (failed(mean) || failed(squared))
    return failure();
  auto meanOfSquares = ctx.create<ReduceMeanOp>(*squared, attrs);
  auto squaredMean = ctx.create<MulOp>(ValueRange{*mean, *mean});
  if (failed(meanOfSquares) || failed(squaredMean))
    return failure();
  auto variance = ctx.create<SubOp>(ValueRange{*meanOfSquares, *squaredMean});
  if (failed(variance))
    return failure();
  auto deviation = ctx.create<SqrtOp>(*variance);
  if (failed(deviation))
    return failure();
  auto denominator =
      ctx.create<AddOp>(ValueRange{*deviation, ctx.scalar(x, 1e-9)});
  auto centered = ctx.create<SubOp>(ValueRange{x, *mean});
  if (failed(denominator) || failed(centered))
    return failure();
  return setResult(ctx, ctx.create<DivOp>(ValueRange{*centered, *denominator}));
}

/// HannWindow, HammingWindow, BlackmanWindow: a constant of the (constant)
/// size, sum_k (-1)^k a_k cos(2 pi k n / N') with N' = N (periodic) or N - 1.
static LogicalResult importWindow(NodeContext &ctx, ArrayRef<double> a) {
  const ConstTensor *sizeTensor = ctx.constInput(0);
  if (!sizeTensor)
    return ctx.failNotConstant(0, "must be a constant");
  std::vector<int64_t> sizes = sizeTensor->asInts();
  if (sizes.size() != 1 || sizes[0] < 0)
    return ctx.fail("size must be a non-negative integer scalar");
  auto type =
      elementTypeFor(ctx.b().getContext(), ctx.intAttr("output_datatype", 1));
  if (failed(type) || !isa<FloatType>(*type))
    return ctx.fail("output_datatype must be a float type");
  int64_t n = sizes[0];
  if (failed(ctx.reserveConstant(n, *type)))
    return failure();
  double period = ctx.intAttr("periodic", 1) != 0 ? double(n) : double(n - 1);
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) {
    double sign = 1.0;
    for (size_t k = 0; k < a.size(); ++k, sign = -sign)
      values[i] +=
          sign * a[k] * std::cos(2.0 * M_PI * double(k) * double(i) / period);
  }
  ctx.setOutput(0, ctx.constant(RankedTensorType::get({n}, *type), values));
  return success();
}

static LogicalResult importHannWindow(NodeContext &ctx) {
  return importWindow(ctx, {0.5, 0.5});
}
static LogicalResult importHammingWindow(NodeContext &ctx) {
  return importWindow(ctx, {25.0 / 46.0, 21.0 / 46.0});
}
static LogicalResult importBlackmanWindow(NodeContext &ctx) {
  return importWindow(ctx, {0.42, 0.5, 0.08});
}

/// TopK with a constant k: k rounds of ArgMax (ArgMin for the smallest),
/// each masking out the element it took. Ties go to the lower index, as in
/// ONNX; the result is sorted.
static LogicalResult importTopK(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  auto axisOrFailure = ctx.axisAttr(-1, rank);
  if (failed(axisOrFailure))
    return failure();
  int64_t axis = *axisOrFailure;
  int64_t k = ctx.intAttr("k", -1);
  if (ctx.opset() >= 10) {
    auto given = ctx.constInts(1);
    if (failed(given))
      return failure();
    k = given->empty() ? -1 : given->front();
  }
  int64_t n = shapeOf(x)[axis];
  if (k < 1 || k > n)
    return ctx.fail("k must be in [1, " + Twine(n) + "]");
  bool largest = ctx.intAttr("largest", 1) != 0;
  auto &b = ctx.b();
  SmallVector<NamedAttribute> argAttrs = {
      b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
      b.getNamedAttr("keepdims", b.getBoolAttr(true)),
      b.getNamedAttr("select_last_index", b.getBoolAttr(false))};
  Value excluded = ctx.scalar(x, largest ? -INFINITY : INFINITY);
  Value positions = ramp(ctx, n, axis, rank);
  SmallVector<Value> values, indices;
  Value remaining = x;
  for (int64_t round = 0; round < k; ++round) {
    auto best = largest ? ctx.create<ArgMaxOp>(remaining, argAttrs)
                        : ctx.create<ArgMinOp>(remaining, argAttrs);
    if (failed(best))
      return failure();
    auto value = ctx.create<GatherElementsOp>(
        ValueRange{x, *best},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
    if (failed(value))
      return failure();
    values.push_back(*value);
    indices.push_back(*best);
    if (round + 1 == k)
      break;
    auto taken = ctx.create<EqualOp>(ValueRange{positions, *best});
    if (failed(taken))
      return failure();
    auto masked = where(ctx, *taken, excluded, remaining);
    if (failed(masked))
      return failure();
    remaining = *masked;
  }
  auto joinAlongAxis = [&](ArrayRef<Value> parts) -> FailureOr<Value> {
    if (parts.size() == 1)
      return parts.front();
    return ctx.create<ConcatOp>(
        parts, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
  };
  auto topValues = joinAlongAxis(values), topIndices = joinAlongAxis(indices);
  if (failed(topValues) || failed(topIndices))
    return failure();
  ctx.setOutput(0, *topValues);
  ctx.setOutput(1, *topIndices);
  return success();
}

/// The most rows of a matrix whose determinant Det expands: n! products of
/// n elements (24 at 4).
constexpr int64_t kMaxDetRows = 4;

/// Det: the Leibniz expansion, the signed sum over permutations p of the
/// products of x[i, p(i)], on every matrix of the batch at once.
static LogicalResult importDet(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2 || shape[rank - 1] != shape[rank - 2])
    return ctx.fail("the input must be [..., n, n]");
  int64_t n = shape.back();
  if (n < 1 || n > kMaxDetRows)
    return ctx.fail("determinants of " + Twine(n) + "x" + Twine(n) +
                    " matrices are not supported (up to " + Twine(kMaxDetRows) +
                    "x" + Twine(kMaxDetRows) + ")");
  IndexOps m(ctx);
  SmallVector<int64_t> batch(shape.drop_back(2));
  Value rows = m.reshape(x, [&] {
    SmallVector<int64_t> flat(batch);
    flat.push_back(n * n);
    return flat;
  }());
  auto &b = ctx.b();
  auto element = [&](int64_t i, int64_t j) {
    SmallVector<int64_t> starts(batch.size() + 1, 0),
        steps(batch.size() + 1, 1), one(batch);
    starts.back() = i * n + j;
    one.push_back(1);
    Value slice = SliceOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get(one, getElementTypeOrSelf(x.getType())), rows,
        b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(steps));
    return m.reshape(slice, batch);
  };
  auto perm = llvm::to_vector(llvm::seq<int64_t>(0, n));
  Value det;
  do {
    // The sign: the parity of the permutation's inversions.
    int64_t inversions = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j)
        inversions += perm[i] > perm[j];
    Value term = element(0, perm[0]);
    for (int64_t i = 1; i < n; ++i)
      term = m.op<MulOp>(term, element(i, perm[i]));
    if (!det)
      det = inversions % 2 ? m.unary<NegOp>(term) : term;
    else
      det = inversions % 2 ? m.op<SubOp>(det, term) : m.op<AddOp>(det, term);
  } while (std::next_permutation(perm.begin(), perm.end()));
  if (m.failed() || !det)
    return failure();
  ctx.setOutput(0, det);
  return success();
}

/// MaxUnpool: a zero tensor of the output shape with each input value
/// scattered to its index (MaxPool's Indices: flat positions in the whole
/// output). The output shape is the output_shape input (constant, or read
/// at run time against the declared result) or the pooling's inverse.
static LogicalResult importMaxUnpool(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  if (!x || !indices || failed(ctx.requireIndices(indices)))
    return failure();
  if (shapeOf(x) != shapeOf(indices))
    return ctx.fail("the indices must have the input's shape");
  int64_t rank = rankOf(x), spatial = rank - 2;
  auto kernel = ctx.intsAttr("kernel_shape");
  if (spatial < 1 || !kernel || int64_t(kernel->size()) != spatial)
    return ctx.fail("kernel_shape must give each spatial dim");
  std::vector<int64_t> strides =
      ctx.intsAttr("strides").value_or(std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads =
      ctx.intsAttr("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if (int64_t(strides.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return ctx.fail("strides and pads must give each spatial dim");
  IndexOps m(ctx);
  // The pooling's inverse holds the scattered values; output_shape, at
  // least as large, pads it with zeros at the end of each dim.
  std::vector<int64_t> inferred(shapeOf(x).begin(), shapeOf(x).end());
  for (int64_t d = 0; d < spatial; ++d)
    inferred[d + 2] = (inferred[d + 2] - 1) * strides[d] - pads[d] -
                      pads[spatial + d] + (*kernel)[d];
  std::vector<int64_t> outShape = inferred;
  if (ctx.hasInput(2)) {
    if (const ConstTensor *given = ctx.constInput(2)) {
      outShape = given->asInts();
    } else {
      std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
      if (!declared)
        return ctx.failNotConstant(2, "(output_shape) must be a constant "
                                      "unless the model declares the "
                                      "result's shape");
      outShape = *declared;
      Value read = m.widen(ctx.input(2));
      if (!read || rankOf(read) != 1 ||
          shapeOf(read)[0] != int64_t(outShape.size()))
        return ctx.fail("output_shape must list every output dim");
      ctx.addRuntimeCheck(
          m.differs(read, m.constant(outShape, {int64_t(outShape.size())})),
          "its output_shape differs from the declared result shape the "
          "artifact was compiled for");
    }
  }
  if (int64_t(outShape.size()) != rank ||
      llvm::any_of(inferred, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(llvm::zip(outShape, inferred),
                   [](auto p) { return std::get<0>(p) < std::get<1>(p); }) ||
      outShape[0] != inferred[0] || outShape[1] != inferred[1])
    return ctx.fail("the output shape must keep the input's batch and "
                    "channels and hold the unpooled dims");
  int64_t total = 1, elements = ShapedType::getNumElements(shapeOf(x));
  for (int64_t d : inferred)
    if (__builtin_mul_overflow(total, d, &total))
      return ctx.fail("the output shape is too large");
  Value flatIndices = m.reshape(m.widen(indices), {elements});
  ctx.addRuntimeCheck(
      m.op<OrOp>(m.op<LessOp>(flatIndices, m.scalar(0)),
                 m.op<GreaterEqualOp>(flatIndices, m.scalar(total))),
      "an index is outside the unpooled output's " + Twine(total) +
          " elements");
  Type elementType = getElementTypeOrSelf(x.getType());
  Value zeros =
      ctx.constant(RankedTensorType::get({total}, elementType), {0.0});
  auto &b = ctx.b();
  Value scattered = ScatterElementsOp::create(
      b, ctx.getLoc(), zeros.getType(), zeros, flatIndices,
      m.reshape(x, {elements}), b.getI64IntegerAttr(0),
      b.getStringAttr("none"));
  if (m.failed())
    return failure();
  Value y = reshapeTo(ctx, scattered, inferred);
  if (outShape != inferred) {
    SmallVector<int64_t> padding(rank, 0);
    for (int64_t d = 0; d < rank; ++d)
      padding.push_back(outShape[d] - inferred[d]);
    y = PadOp::create(b, ctx.getLoc(),
                      RankedTensorType::get(outShape, elementType), y,
                      b.getDenseI64ArrayAttr(padding),
                      b.getStringAttr("constant"), b.getF64FloatAttr(0.0));
  }
  ctx.setOutput(0, y);
  return success();
}

void onnx_import::registerDecomposedOps(OpRegistry &registry) {
  // clang-format off
  registry.add("BlackmanWindow", 17, kMaxOpset, "constant or guarded size", importBlackmanWindow);
  registry.add("CumSum", 11, kMaxOpset, "float and integer; exclusive, reverse; axis constant or read at run time (then a running sum per axis, one selected)", importCumSum);
  registry.add("Dropout", 1, kMaxOpset, "inference mode (identity)", importDropout);
  registry.add("Einsum", 12, kMaxOpset, "float; broadcasting ...", importEinsum);
  registry.add("EyeLike", 9, kMaxOpset, "a constant from the static shape", importEyeLike);
  registry.add("Det", 11, kMaxOpset, "up to 4x4 matrices, by the Leibniz expansion", importDet);
  registry.add("MaxUnpool", 9, kMaxOpset, "a scatter into zeros; output_shape constant or read at run time against the declared result", importMaxUnpool);
  registry.add("GatherND", 11, kMaxOpset, "any batch_dims", importGatherND);
  registry.add("Hardmax", 13, kMaxOpset, "", importHardmax);
  registry.add("HammingWindow", 17, kMaxOpset, "constant or guarded size", importHammingWindow);
  registry.add("HannWindow", 17, kMaxOpset, "constant or guarded size", importHannWindow);
  registry.add("IsInf", 10, kMaxOpset, "", importIsInf);
  registry.add("LRN", 1, kMaxOpset, "", importLRN);
  registry.add("MeanVarianceNormalization", 9, kMaxOpset, "", importMeanVarianceNormalization);
  registry.add("NegativeLogLikelihoodLoss", 12, kMaxOpset, "weights, ignore_index, reductions", importNegativeLogLikelihoodLoss);
  registry.add("ConstantOfShape", 9, kMaxOpset, "the shape a constant, or a model input the declared shapes fix", importConstantOfShape);
  registry.add("Range", 11, kMaxOpset, "constant inputs, or inputs read at run time where the model declares the result length", importRange);
  registry.add("OneHot", 9, kMaxOpset, "constant or guarded depth", importOneHot);
  registry.add("Shrink", 9, kMaxOpset, "", importShrink);
  registry.add("SoftmaxCrossEntropyLoss", 12, kMaxOpset, "weights, ignore_index, reductions, log_prob output", importSoftmaxCrossEntropyLoss);
  registry.add("TopK", 1, kMaxOpset, "float; constant or guarded k; k rounds of ArgMax", importTopK);
  registry.add("Trilu", 14, kMaxOpset, "k constant or read at run time", importTrilu);
  // clang-format on
}
