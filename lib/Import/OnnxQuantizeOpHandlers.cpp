//===- OnnxQuantizeOpHandlers.cpp - quantization ops, computed exactly ----===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer
// matmul and convolution ops (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv, and the com.microsoft ops that onnxruntime's quantization
// tools write: QLinearAdd, QLinearConcat, the pools, QGemm,
// MatMulIntegerToFloat, DynamicQuantizeMatMul, MatMulNBits) as kiln ops on
// floats: there is no integer kernel yet, so a quantized model runs as
// dequantize, compute, quantize. Integer products are summed exactly: in
// float32 where a constant weight bounds every partial sum below 2^24
// (integerSumType), else in float64 (exact to 2^53); and requantized as
// onnxruntime does: the float32 product of the
// sum and the scales, rounded half to even, plus the zero point, saturated.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "OpRegistry.h"

#include "kiln/Dialect/KilnDialect.h"

#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// The range of a quantized integer type, or nothing for another type.
std::optional<std::pair<double, double>> quantizedRange(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer || integer.getWidth() > 16 || integer.getWidth() < 8)
    return std::nullopt;
  double width = integer.getWidth();
  if (integer.isUnsigned())
    return std::make_pair(0.0, std::exp2(width) - 1);
  return std::make_pair(-std::exp2(width - 1), std::exp2(width - 1) - 1);
}

/// Element `i` of a float32 constant.
float floatAt(const ConstTensor &t, int64_t i) {
  float value;
  std::memcpy(&value, t.bytes.data() + 4 * i, 4);
  return value;
}

/// Element `bytes` of an integer ONNX dtype, as a double.
double integerAt(int onnxType, const char *bytes) {
  auto read = [&](auto value) {
    std::memcpy(&value, bytes, sizeof value);
    return double(value);
  };
  switch (onnxType) {
  case onnx::TensorProto::INT8:
    return read(int8_t());
  case onnx::TensorProto::UINT8:
    return read(uint8_t());
  case onnx::TensorProto::INT16:
    return read(int16_t());
  case onnx::TensorProto::UINT16:
    return read(uint16_t());
  case onnx::TensorProto::INT32:
    return read(int32_t());
  case onnx::TensorProto::UINT32:
    return read(uint32_t());
  case onnx::TensorProto::INT64:
    return read(int64_t());
  case onnx::TensorProto::UINT64:
    return read(uint64_t());
  default: // BOOL, the one other integer dtype
    return read(uint8_t());
  }
}

template <typename T> void appendBytes(std::string &bytes, T value) {
  bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
}

/// The ops of one handler, each checked once at the end (ChainedOps).
class QuantizedOps : public ChainedOps {
public:
  explicit QuantizedOps(NodeContext &ctx) : ctx(ctx) {}

  Value castTo(Value v, Type element) {
    return v ? castElements(ctx, v, element) : fail();
  }
  Value f32(Value v) { return castTo(v, ctx.b().getF32Type()); }
  /// Input `i` as float32 or float64. A constant integer input (a weight,
  /// a zero point) becomes a float constant here, at import: no kernel
  /// converts it on every run, and unsigned constants, which the kernels'
  /// signless arithmetic cannot hold, never reach them.
  Value floatInput(size_t i, FloatType element) {
    Value v = ctx.input(i);
    const ConstTensor *constant = ctx.constInput(i);
    if (!v || !constant || !isa<IntegerType>(getElementTypeOrSelf(v.getType())))
      return castTo(v, element);
    ConstTensor converted;
    bool wide = element.getWidth() == 64;
    converted.onnxType =
        wide ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
    converted.shape = constant->shape;
    size_t width = bytesPerElement(constant->onnxType);
    for (size_t at = 0; at + width <= constant->bytes.size(); at += width) {
      double value = integerAt(constant->onnxType, constant->bytes.data() + at);
      if (wide)
        appendBytes(converted.bytes, value);
      else
        appendBytes(converted.bytes, float(value));
    }
    std::string error;
    Value result = ctx.createConstant(ctx.proto().input(i) + "_as_float",
                                      std::move(converted), error);
    if (!result) {
      (void)ctx.fail(error);
      return fail();
    }
    return result;
  }

  /// (input - zero point) * scale, in float32, for a quantized input whose
  /// scale and zero point (inputs `scale`, `zero`) hold one value each.
  Value dequantizeInput(size_t data, size_t scale, size_t zero) {
    FloatType f32Type = ctx.b().getF32Type();
    Value x = floatInput(data, f32Type);
    if (ctx.hasInput(zero))
      x = binary<SubOp>(x, floatInput(zero, f32Type));
    return binary<MulOp>(x, f32(ctx.input(scale)));
  }

  /// A value some other builder made, failed when it did.
  Value take(FailureOr<Value> v) { return check(v); }
  Value f64(Value v) { return castTo(v, ctx.b().getF64Type()); }

  template <typename OpTy> Value binary(Value a, Value b) {
    if (!a || !b)
      return fail();
    return check(ctx.create<OpTy>(ValueRange{a, b}));
  }
  template <typename OpTy> Value unary(Value a) {
    if (!a)
      return fail();
    return check(ctx.create<OpTy>(ValueRange{a}));
  }
  Value clip(Value v, std::pair<double, double> range) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    return check(ctx.create<ClipOp>(
        v, {b.getNamedAttr("min", b.getF32FloatAttr(range.first)),
            b.getNamedAttr("max", b.getF32FloatAttr(range.second))}));
  }
  /// One value of every element of `v` (all axes), as a rank-0 tensor.
  template <typename OpTy> Value reduceAll(Value v) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    auto all = llvm::to_vector(llvm::seq<int64_t>(0, rankOf(v)));
    return check(ctx.create<OpTy>(
        v, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(all)),
            b.getNamedAttr("keepdims", b.getBoolAttr(false))}));
  }

  /// A per-axis parameter (1-D, one value per index of `axis`) shaped to
  /// broadcast against a tensor of `rank`; a scalar one as it is.
  Value alongAxis(Value param, int64_t axis, int64_t rank) {
    if (!param)
      return fail();
    ArrayRef<int64_t> shape = shapeOf(param);
    if (rankOf(param) == 0 || (rankOf(param) == 1 && shape[0] == 1))
      return param;
    if (rankOf(param) != 1 || axis < 0 || axis >= rank)
      return fail();
    SmallVector<int64_t> broadcast(rank, 1);
    broadcast[axis] = shape[0];
    return reshapeTo(ctx, param, broadcast);
  }

  /// round(x / scale) + zeroPoint, saturated to `range` (in float32).
  Value quantize(Value x, Value scale, Value zeroPoint,
                 std::pair<double, double> range) {
    Value q = unary<RoundOp>(binary<DivOp>(f32(x), f32(scale)));
    if (zeroPoint)
      q = binary<AddOp>(q, f32(zeroPoint));
    return clip(q, range);
  }

private:
  NodeContext &ctx;
};

/// Fails unless `v` is one of the 8- and 16-bit integer types.
FailureOr<std::pair<double, double>> requireQuantized(NodeContext &ctx, Value v,
                                                      StringRef what) {
  auto range = quantizedRange(getElementTypeOrSelf(v.getType()));
  if (!range)
    return ctx.fail(what + " must be int8, uint8, int16 or uint16"), failure();
  return *range;
}

bool isScalarLike(Value param) {
  return rankOf(param) == 0 || (rankOf(param) == 1 && shapeOf(param)[0] == 1);
}

/// The axis of a per-axis scale (`axis`, default 1); 0 for one value, where
/// no axis applies (opsets before 13 have none, and a rank-1 input no 1).
FailureOr<int64_t> scaleAxis(NodeContext &ctx, Value scale, Value data) {
  if (isScalarLike(scale))
    return 0;
  return ctx.axisAttr(1, rankOf(data));
}

/// A scale or zero point: one value, or one per index of `axis`; with a
/// `blockSize` (opset 21's blocked quantization), data's shape but for
/// `axis`, which holds one per block of that many indices.
LogicalResult requireScaleShape(NodeContext &ctx, Value param, int64_t axis,
                                Value data, int64_t blockSize = 0) {
  if (blockSize > 0) {
    bool fits =
        rankOf(param) == rankOf(data) && axis >= 0 && axis < rankOf(data);
    for (int64_t d = 0; fits && d < rankOf(data); ++d)
      fits = shapeOf(param)[d] ==
             (d == axis ? llvm::divideCeil(shapeOf(data)[d], blockSize)
                        : shapeOf(data)[d]);
    if (fits)
      return success();
    return ctx.fail("with block_size " + Twine(blockSize) +
                    ", a scale or zero point must have the input's shape "
                    "with one value per block along the axis");
  }
  if (isScalarLike(param))
    return success();
  if (rankOf(param) == 1 && shapeOf(param)[0] > 1 && axis >= 0 &&
      axis < rankOf(data) && shapeOf(param)[0] == shapeOf(data)[axis])
    return success();
  return ctx.fail("a scale or zero point must have one value, or one per "
                  "index of the axis");
}

/// How a Q/DQ node's scale and zero point apply to its input: one value,
/// one per index of `axis`, or one per block of `blockSize` indices along
/// it (opset 21).
struct QuantizationAxis {
  int64_t axis = 0, blockSize = 0;

  /// `param` shaped to broadcast against `data`: a block's value repeated
  /// over its indices (a gather along the axis), a per-axis one reshaped.
  Value perElement(NodeContext &ctx, QuantizedOps &ops, Value param,
                   Value data) const {
    if (!param || blockSize <= 0)
      return ops.alongAxis(param, axis, rankOf(data));
    int64_t extent = shapeOf(data)[axis];
    std::vector<double> blockOf;
    for (int64_t i = 0; i < extent; ++i)
      blockOf.push_back(double(i / blockSize));
    auto &b = ctx.b();
    Value indices = ctx.constant(
        RankedTensorType::get({extent}, b.getIntegerType(64)), blockOf);
    return ops.take(ctx.create<GatherOp>(
        ValueRange{param, indices},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
};

/// The axis and block size of a QuantizeLinear or DequantizeLinear whose
/// scale is `scale`, its shape checked against `data`.
FailureOr<QuantizationAxis> quantizationAxis(NodeContext &ctx, Value scale,
                                             Value data) {
  QuantizationAxis result;
  result.blockSize = ctx.intAttr("block_size", 0);
  if (result.blockSize < 0) {
    (void)ctx.fail("block_size must not be negative");
    return failure();
  }
  auto axis = result.blockSize > 0 ? ctx.axisAttr(1, rankOf(data))
                                   : scaleAxis(ctx, scale, data);
  if (failed(axis) ||
      failed(requireScaleShape(ctx, scale, *axis, data, result.blockSize)))
    return failure();
  result.axis = *axis;
  return result;
}

/// The range of 4-bit values (INT4, UINT4), which the importer holds in
/// 8-bit integers.
std::pair<double, double> fourBitRange(int onnxType) {
  return onnxType == kOnnxInt4 ? std::make_pair(-8.0, 7.0)
                               : std::make_pair(0.0, 15.0);
}

/// A [K, N] matrix of 4-bit values (0..15) with a scale and a zero point
/// per block of `blockSize` rows of a column: weights (q - zero point) *
/// scale, as MatMulNBits and a DequantizeLinear of 4-bit weights define
/// them.
struct FourBitMatrix {
  int64_t k, n, blockSize;
  std::function<int64_t(int64_t row, int64_t col)> q;
  std::function<float(int64_t block, int64_t col)> scale, zero;
  int64_t blocks() const { return k / blockSize; }
};

FailureOr<Value> packedFourBitWeights(NodeContext &ctx, const FourBitMatrix &w,
                                      const std::string &name);

/// A DequantizeLinear of a constant [K, N] of 4-bit values that one
/// MatMul reads as its B, with a scale (and zero point) per tensor, per
/// column (axis 1) or per block of rows (axis 0): the weights kept two to
/// a byte (packedFourBitWeights). Null where it is not such a node.
FailureOr<Value> packedDequantizedWeights(NodeContext &ctx,
                                          const QuantizationAxis &axis) {
  const ConstTensor *x = ctx.constInput(0), *scale = ctx.constInput(1);
  const ConstTensor *zero = ctx.hasInput(2) ? ctx.constInput(2) : nullptr;
  if (!x || !x->fourBitType || x->shape.size() != 2 || !scale ||
      scale->onnxType != onnx::TensorProto::FLOAT ||
      (ctx.hasInput(2) && !zero) || !ctx.outputReadOnceAs(0, "MatMul", 1))
    return Value();
  int64_t k = x->shape[0], n = x->shape[1];
  int64_t scaleCount = int64_t(scale->bytes.size()) / 4;
  bool blocked = axis.blockSize > 0;
  if (scaleCount != 1 && (blocked ? axis.axis != 0 : axis.axis != 1))
    return Value();
  // Blocks of the node's own size, else of any even size dividing K (its
  // scales are the same for every row).
  int64_t blockSize = blocked ? axis.blockSize : k & -k;
  blockSize = blocked ? blockSize : std::min<int64_t>(blockSize, 64);
  if (blockSize < 2 || blockSize % 2 != 0 || k % blockSize != 0)
    return Value();
  // Where a parameter of (row block, column) is stored.
  auto paramIndex = [&](int64_t block, int64_t col) -> int64_t {
    if (scaleCount == 1)
      return 0;
    return blocked ? block * n + col : col;
  };
  // int4 values and zero points read as their unsigned offset (+8): the
  // difference is the same.
  int64_t bias = x->fourBitType == kOnnxInt4 ? 8 : 0;
  FourBitMatrix m{
      k,
      n,
      blockSize,
      [&](int64_t row, int64_t col) {
        return int64_t(
                   integerAt(x->onnxType, x->bytes.data() + row * n + col)) +
               bias;
      },
      [&](int64_t block, int64_t col) {
        return floatAt(*scale, paramIndex(block, col));
      },
      [&](int64_t block, int64_t col) {
        if (!zero)
          return float(bias);
        return float(integerAt(zero->onnxType,
                               zero->bytes.data() + paramIndex(block, col)) +
                     bias);
      }};
  return packedFourBitWeights(ctx, m, ctx.proto().input(0));
}

LogicalResult importDequantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale)
    return failure();
  Type xType = getElementTypeOrSelf(x.getType());
  bool int32 = xType.isSignlessInteger(32);
  if (!int32 && failed(requireQuantized(ctx, x, "the input")))
    return failure();
  if (failed(ctx.requireDtypes(scale, NodeContext::Float)))
    return failure();
  auto axis = quantizationAxis(ctx, scale, x);
  if (failed(axis))
    return failure();
  FailureOr<Value> packed = packedDequantizedWeights(ctx, *axis);
  if (failed(packed))
    return failure();
  if (*packed) {
    Value weights = reshapeTo(ctx, *packed, shapeOf(x));
    ctx.setOutput(0, weights);
    ctx.keepUnfolded();
    return success();
  }
  QuantizedOps ops(ctx);
  FloatType f32 = ctx.b().getF32Type();
  Value centered = ops.floatInput(0, f32);
  if (ctx.hasInput(2)) {
    Value zeroPoint = ctx.input(2);
    if (!zeroPoint || failed(ctx.requireSameDtype({x, zeroPoint})) ||
        failed(
            requireScaleShape(ctx, zeroPoint, axis->axis, x, axis->blockSize)))
      return failure();
    centered = ops.binary<SubOp>(
        centered, axis->perElement(ctx, ops, ops.floatInput(2, f32), x));
  }
  Value y = ops.binary<MulOp>(centered,
                              ops.f32(axis->perElement(ctx, ops, scale, x)));
  y = ops.castTo(y, getElementTypeOrSelf(scale.getType()));
  if (ops.failed())
    return failure();
  ctx.setOutput(0, y);
  return success();
}

LogicalResult importQuantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale)
    return failure();
  if (failed(ctx.requireDtypes({x, scale}, NodeContext::Float)))
    return failure();
  auto axis = quantizationAxis(ctx, scale, x);
  if (failed(axis))
    return failure();
  Value zeroPoint;
  Type outType;
  // 4-bit outputs are held in 8-bit integers, saturated to 4 bits.
  int fourBitType = 0;
  if (ctx.hasInput(2)) {
    zeroPoint = ctx.input(2);
    if (!zeroPoint || failed(requireScaleShape(ctx, zeroPoint, axis->axis, x,
                                               axis->blockSize)))
      return failure();
    outType = getElementTypeOrSelf(zeroPoint.getType());
    if (const ConstTensor *constant = ctx.constInput(2))
      fourBitType = constant->fourBitType;
  } else {
    // Without a zero point: output_dtype (opset 21), else uint8.
    int64_t dtype = ctx.intAttr("output_dtype", 0);
    if (dtype == kOnnxInt4 || dtype == kOnnxUint4) {
      fourBitType = int(dtype);
      dtype = dtype == kOnnxInt4 ? onnx::TensorProto::INT8
                                 : onnx::TensorProto::UINT8;
    }
    auto type = elementTypeFor(ctx.b().getContext(),
                               dtype ? dtype : onnx::TensorProto::UINT8);
    if (failed(type))
      return ctx.fail("output_dtype " + dtypeName(dtype) + " is not supported");
    outType = *type;
  }
  auto range = quantizedRange(outType);
  if (!range)
    return ctx.fail("quantizing to " +
                    dtypeName(ctx.intAttr("output_dtype", 0)) +
                    " is not supported (int4, uint4, int8, uint8, int16, "
                    "uint16 are)");
  if (fourBitType)
    range = fourBitRange(fourBitType);
  QuantizedOps ops(ctx);
  Value q = ops.quantize(
      x, axis->perElement(ctx, ops, scale, x),
      zeroPoint ? axis->perElement(ctx, ops,
                                   ops.floatInput(2, ctx.b().getF32Type()), x)
                : Value(),
      *range);
  q = ops.castTo(q, outType);
  if (ops.failed())
    return failure();
  ctx.setOutput(0, q);
  return success();
}

/// A float32 tensor quantized to uint8 over its own range.
struct DynamicallyQuantized {
  Value q, scale, zeroPoint;
};

/// uint8 quantization of float32 `xf` with its own range (which always
/// holds 0): scale = (max - min) / 255 (1 for a range of 0, as onnxruntime
/// takes it), zero point = round(-min / scale); the values rounded, still
/// float32.
DynamicallyQuantized quantizeOverOwnRange(NodeContext &ctx, QuantizedOps &ops,
                                          Value xf) {
  Value zero = xf ? ctx.scalar(xf, 0.0) : Value();
  Value lo = ops.binary<MinOp>(ops.reduceAll<ReduceMinOp>(xf), zero);
  Value hi = ops.binary<MaxOp>(ops.reduceAll<ReduceMaxOp>(xf), zero);
  Value spread = ops.binary<SubOp>(hi, lo);
  Value isZero = ops.binary<EqualOp>(spread, zero);
  Value divided =
      ops.binary<DivOp>(spread, xf ? ctx.scalar(xf, 255.0) : Value());
  Value scale = isZero && divided ? ops.take(ctx.create<WhereOp>(ValueRange{
                                        isZero, ctx.scalar(xf, 1.0), divided}))
                                  : ops.take(failure());
  std::pair<double, double> range = {0, 255};
  Value zeroPoint = ops.clip(
      ops.unary<RoundOp>(ops.binary<DivOp>(ops.unary<NegOp>(lo), scale)),
      range);
  return {ops.quantize(xf, scale, zeroPoint, range), scale, zeroPoint};
}

LogicalResult importDynamicQuantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float)))
    return failure();
  QuantizedOps ops(ctx);
  DynamicallyQuantized quantized = quantizeOverOwnRange(ctx, ops, ops.f32(x));
  Type u8 = IntegerType::get(ctx.b().getContext(), 8, IntegerType::Unsigned);
  Value y = ops.castTo(quantized.q, u8);
  Value zeroPoint = ops.castTo(quantized.zeroPoint, u8);
  if (ops.failed())
    return failure();
  ctx.setOutput(0, y);
  ctx.setOutput(1, quantized.scale);
  ctx.setOutput(2, zeroPoint);
  return success();
}

/// The largest |x - zero point| integer input `index` can hold: with a
/// constant zero point of one value, from its type's range around it; else
/// the whole range (a value and a zero point of one type are that close).
double largestCentered(NodeContext &ctx, size_t index, size_t zeroIndex) {
  Value v = ctx.input(index);
  auto range =
      v ? quantizedRange(getElementTypeOrSelf(v.getType())) : std::nullopt;
  if (!range)
    return INFINITY;
  auto [low, high] = *range;
  double zero = 0;
  if (ctx.hasInput(zeroIndex)) {
    const ConstTensor *z = ctx.constInput(zeroIndex);
    if (!z || z->bytes.size() != bytesPerElement(z->onnxType))
      return high - low;
    zero = integerAt(z->onnxType, z->bytes.data());
  }
  return std::max(std::fabs(low - zero), std::fabs(high - zero));
}

/// The type a contraction of an integer operand (whose |x - zero point| is
/// at most `otherLargest`) with the constant integer weight `weight` sums
/// in: float32 when no partial sum of any output can reach 2^24, so that
/// float32 holds each one exactly, whatever the order (for output n along
/// the weight's `outAxis`: sum over its weights of |w - zero point| times
/// `otherLargest`, plus |bias n|); float64 (exact to 2^53) otherwise.
FloatType integerSumType(NodeContext &ctx, size_t weight, size_t weightZero,
                         int64_t outAxis, double otherLargest,
                         std::optional<size_t> bias) {
  FloatType f64 = ctx.b().getF64Type();
  const ConstTensor *w = ctx.constInput(weight);
  if (!w || !std::isfinite(otherLargest) || outAxis < 0 ||
      outAxis >= int64_t(w->shape.size()))
    return f64;
  int64_t outputs = w->shape[outAxis], inner = 1;
  for (size_t d = outAxis + 1; d < w->shape.size(); ++d)
    inner *= w->shape[d];
  auto perOutput = [&](const ConstTensor *t, int64_t n) {
    size_t width = bytesPerElement(t->onnxType);
    size_t count = t->bytes.size() / width;
    return integerAt(t->onnxType,
                     t->bytes.data() + (count == 1 ? 0 : n) * width);
  };
  const ConstTensor *zero =
      ctx.hasInput(weightZero) ? ctx.constInput(weightZero) : nullptr;
  const ConstTensor *b =
      bias && ctx.hasInput(*bias) ? ctx.constInput(*bias) : nullptr;
  if ((ctx.hasInput(weightZero) && !zero) ||
      (bias && ctx.hasInput(*bias) && !b))
    return f64;
  std::vector<double> sums(outputs, 0.0);
  size_t width = bytesPerElement(w->onnxType);
  for (size_t i = 0, count = w->bytes.size() / width; i < count; ++i) {
    int64_t n = (int64_t(i) / inner) % outputs;
    double centered = integerAt(w->onnxType, w->bytes.data() + i * width) -
                      (zero ? perOutput(zero, n) : 0.0);
    sums[n] += std::fabs(centered);
  }
  for (int64_t n = 0; n < outputs; ++n) {
    double bound =
        sums[n] * otherLargest + (b ? std::fabs(perOutput(b, n)) : 0);
    if (!(bound < std::exp2(24)))
      return f64;
  }
  return ctx.b().getF32Type();
}

/// An integer operand minus its zero point (input `zeroIndex`, when given),
/// in `sumType`. `axis`: where a per-index zero point lies.
Value centered(NodeContext &ctx, QuantizedOps &ops, size_t index,
               size_t zeroIndex, int64_t axis, FloatType sumType) {
  Value v = ctx.input(index);
  if (!v || failed(requireQuantized(ctx, v, "an integer operand")))
    return ops.take(failure());
  Value centered = ops.floatInput(index, sumType);
  if (!ctx.hasInput(zeroIndex))
    return centered;
  Value zeroPoint = ctx.input(zeroIndex);
  if (!zeroPoint || failed(ctx.requireSameDtype({v, zeroPoint})) ||
      failed(requireScaleShape(ctx, zeroPoint, axis, v)))
    return ops.take(failure());
  return ops.binary<SubOp>(
      centered,
      ops.alongAxis(ops.floatInput(zeroIndex, sumType), axis, rankOf(v)));
}

/// `rounded` (a rounded float32 tensor) plus the zero point of input
/// `zeroIndex`, saturated to its type (uint8 without one), as output 0: the
/// end of every op that quantizes its result.
LogicalResult setQuantizedOutput(NodeContext &ctx, QuantizedOps &ops,
                                 Value rounded, size_t zeroIndex) {
  bool hasZeroPoint = ctx.hasInput(zeroIndex);
  Value zeroPoint = hasZeroPoint ? ctx.input(zeroIndex) : Value();
  if (hasZeroPoint && !zeroPoint)
    return failure();
  Type outType = zeroPoint ? getElementTypeOrSelf(zeroPoint.getType())
                           : IntegerType::get(ctx.b().getContext(), 8,
                                              IntegerType::Unsigned);
  auto range = quantizedRange(outType);
  if (!range)
    return ctx.fail("the output zero point must be int8 or uint8");
  Value q = rounded;
  if (zeroPoint)
    q = ops.binary<AddOp>(q, ops.floatInput(zeroIndex, ctx.b().getF32Type()));
  q = ops.castTo(ops.clip(q, *range), outType);
  if (ops.failed())
    return failure();
  ctx.setOutput(0, q);
  return success();
}

/// round(float32(sum) * scale) + zeroPoint, saturated: what the QLinear ops
/// make of an exact integer sum.
LogicalResult requantize(NodeContext &ctx, QuantizedOps &ops, Value sum,
                         Value scale, size_t zeroIndex) {
  return setQuantizedOutput(
      ctx, ops, ops.unary<RoundOp>(ops.binary<MulOp>(ops.f32(sum), scale)),
      zeroIndex);
}

LogicalResult importMatMulInteger(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  QuantizedOps ops(ctx);
  // a's zero point may be one per row, b's one per column.
  FloatType sumType = integerSumType(ctx, 1, 3, rankOf(b) - 1,
                                     largestCentered(ctx, 0, 2), std::nullopt);
  Value product =
      ops.binary<MatMulOp>(centered(ctx, ops, 0, 2, rankOf(a) - 2, sumType),
                           centered(ctx, ops, 1, 3, rankOf(b) - 1, sumType));
  product = ops.castTo(product, ctx.b().getI32Type());
  if (ops.failed())
    return failure();
  ctx.setOutput(0, product);
  return success();
}

LogicalResult importQLinearMatMul(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(3);
  Value aScale = ctx.input(1), bScale = ctx.input(4), yScale = ctx.input(6);
  if (!a || !b || !aScale || !bScale || !yScale ||
      failed(ctx.requireDtypes({aScale, bScale, yScale}, NodeContext::Float)))
    return failure();
  QuantizedOps ops(ctx);
  FloatType sumType = integerSumType(ctx, 3, 5, rankOf(b) - 1,
                                     largestCentered(ctx, 0, 2), std::nullopt);
  Value sum =
      ops.binary<MatMulOp>(centered(ctx, ops, 0, 2, rankOf(a) - 2, sumType),
                           centered(ctx, ops, 3, 5, rankOf(b) - 1, sumType));
  Value scale = ops.binary<DivOp>(
      ops.binary<MulOp>(
          ops.f32(ops.alongAxis(aScale, rankOf(a) - 2, rankOf(a))),
          ops.f32(ops.alongAxis(bScale, rankOf(b) - 1, rankOf(b)))),
      ops.f32(yScale));
  return requantize(ctx, ops, sum, scale, 7);
}

/// ConvInteger and QLinearConv: the convolution of `x` and `w` minus their
/// zero points, plus `bias` (int32) when given, exact (integerSumType).
Value integerConv(NodeContext &ctx, QuantizedOps &ops, size_t x, size_t xZero,
                  size_t w, size_t wZero, std::optional<size_t> bias) {
  Value input = ctx.input(x), weight = ctx.input(w);
  if (!input || !weight)
    return ops.take(failure());
  if (rankOf(input) < 3 || rankOf(weight) != rankOf(input))
    return ctx.fail("input and weight must have equal rank >= 3"),
           ops.take(failure());
  SmallVector<int64_t> kernel(shapeOf(weight).drop_front(2));
  auto window = readWindow(ctx, input, kernel);
  if (failed(window))
    return ops.take(failure());
  FloatType sumType =
      integerSumType(ctx, w, wZero, 0, largestCentered(ctx, x, xZero), bias);
  SmallVector<Value> operands = {centered(ctx, ops, x, xZero, 1, sumType),
                                 centered(ctx, ops, w, wZero, 0, sumType)};
  if (bias && ctx.hasInput(*bias))
    operands.push_back(ops.floatInput(*bias, sumType));
  if (llvm::is_contained(operands, Value()))
    return ops.take(failure());
  auto &b = ctx.b();
  return ops.take(ctx.create<ConvOp>(
      operands,
      {b.getNamedAttr("pads", b.getDenseI64ArrayAttr(window->pads)),
       b.getNamedAttr("strides", b.getDenseI64ArrayAttr(window->strides)),
       b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(window->dilations)),
       b.getNamedAttr("group", b.getI64IntegerAttr(ctx.intAttr("group", 1)))}));
}

LogicalResult importConvInteger(NodeContext &ctx) {
  QuantizedOps ops(ctx);
  Value y = ops.castTo(integerConv(ctx, ops, 0, 2, 1, 3, std::nullopt),
                       ctx.b().getI32Type());
  if (ops.failed())
    return failure();
  ctx.setOutput(0, y);
  return success();
}

LogicalResult importQLinearConv(NodeContext &ctx) {
  Value xScale = ctx.input(1), wScale = ctx.input(4), yScale = ctx.input(6);
  if (!xScale || !wScale || !yScale ||
      failed(ctx.requireDtypes({xScale, wScale, yScale}, NodeContext::Float)))
    return failure();
  QuantizedOps ops(ctx);
  Value sum = integerConv(ctx, ops, 0, 2, 3, 5, 8);
  if (!sum)
    return failure();
  // w's scale is one value or one per output channel (axis 1 of y).
  Value scale = ops.binary<DivOp>(
      ops.binary<MulOp>(ops.f32(xScale),
                        ops.f32(ops.alongAxis(wScale, 1, rankOf(sum)))),
      ops.f32(yScale));
  return requantize(ctx, ops, sum, scale, 7);
}

/// round(y / scale) + zero point (inputs `scale`, `zero`), saturated, as
/// output 0.
LogicalResult quantizeOutput(NodeContext &ctx, QuantizedOps &ops, Value y,
                             size_t scale, size_t zero) {
  return setQuantizedOutput(
      ctx, ops,
      ops.unary<RoundOp>(ops.binary<DivOp>(y, ops.f32(ctx.input(scale)))),
      zero);
}

/// com.microsoft QLinearAdd and QLinearMul: A and B dequantized, combined,
/// quantized.
template <typename OpTy> LogicalResult importQLinearBinary(NodeContext &ctx) {
  QuantizedOps ops(ctx);
  Value result = ops.binary<OpTy>(ops.dequantizeInput(0, 1, 2),
                                  ops.dequantizeInput(3, 4, 5));
  if (ops.failed())
    return failure();
  return quantizeOutput(ctx, ops, result, 6, 7);
}

/// com.microsoft QLinearSigmoid and QLinearLeakyRelu: X dequantized, the
/// activation, quantized.
template <typename OpTy> LogicalResult importQLinearUnary(NodeContext &ctx) {
  QuantizedOps ops(ctx);
  Value x = ops.dequantizeInput(0, 1, 2);
  if (ops.failed())
    return failure();
  SmallVector<NamedAttribute> attrs;
  if constexpr (std::is_same_v<OpTy, LeakyReluOp>)
    attrs.push_back(ctx.b().getNamedAttr(
        "alpha", ctx.b().getF32FloatAttr(ctx.floatAttr("alpha", 0.01f))));
  Value y = ops.take(ctx.create<OpTy>(x, attrs));
  if (ops.failed())
    return failure();
  return quantizeOutput(ctx, ops, y, 3, 4);
}

/// com.microsoft QLinearGlobalAveragePool: the mean over the spatial dims
/// (channels first, or last with channels_last=1), requantized.
LogicalResult importQLinearGlobalAveragePool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || rankOf(x) < 3)
    return ctx.fail("the input must have rank >= 3");
  bool channelsLast = ctx.intAttr("channels_last", 0) != 0;
  int64_t first = channelsLast ? 1 : 2,
          last = rankOf(x) - (channelsLast ? 1 : 0);
  auto spatial = llvm::to_vector(llvm::seq<int64_t>(first, last));
  QuantizedOps ops(ctx);
  Value dequantized = ops.dequantizeInput(0, 1, 2);
  if (ops.failed())
    return failure();
  auto &b = ctx.b();
  Value mean = ops.take(ctx.create<ReduceMeanOp>(
      dequantized, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(spatial)),
                    b.getNamedAttr("keepdims", b.getBoolAttr(true))}));
  if (ops.failed())
    return failure();
  return quantizeOutput(ctx, ops, mean, 3, 4);
}

/// com.microsoft QGemm: alpha * A' * B' + C, with A' and B' the integer
/// operands minus their zero points (B's may be per column) and C an int32
/// bias on the scale a_scale * b_scale; quantized with y_scale and
/// y_zero_point when given, else float32.
LogicalResult importQGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(3);
  Value aScale = ctx.input(1), bScale = ctx.input(4);
  if (!a || !b || !aScale || !bScale || rankOf(a) != 2 || rankOf(b) != 2)
    return ctx.fail("QGemm takes 2-D A and B");
  QuantizedOps ops(ctx);
  auto &builder = ctx.b();
  auto transposed = [&](Value v, bool transpose) {
    if (!transpose || !v)
      return v;
    return ops.take(ctx.create<TransposeOp>(
        v,
        {builder.getNamedAttr("perm", builder.getDenseI64ArrayAttr({1, 0}))}));
  };
  bool transB = ctx.intAttr("transB", 0) != 0;
  // B's zero point and scale are per column of the product: along B's
  // axis 0 when it is transposed.
  int64_t columns = transB ? 0 : 1;
  // A bias of one value or one per column bounds the sums with B.
  std::optional<size_t> bias;
  bool perColumnBias = true;
  if (ctx.hasInput(6)) {
    bias = 6;
    int64_t count = ShapedType::getNumElements(shapeOf(ctx.input(6)));
    perColumnBias = count == 1 || count == shapeOf(b)[columns];
  }
  FloatType sumType =
      perColumnBias
          ? integerSumType(ctx, 3, 5, columns, largestCentered(ctx, 0, 2), bias)
          : builder.getF64Type();
  Value product = ops.binary<MatMulOp>(
      transposed(centered(ctx, ops, 0, 2, 0, sumType),
                 ctx.intAttr("transA", 0)),
      transposed(centered(ctx, ops, 3, 5, columns, sumType), transB));
  if (bias)
    product = ops.binary<AddOp>(product, ops.floatInput(6, sumType));
  Value columnScale = ops.f32(bScale);
  if (!isScalarLike(bScale))
    columnScale = reshapeTo(ctx, columnScale, {shapeOf(bScale)[0]});
  Value scale = ops.binary<MulOp>(
      ops.binary<MulOp>(ops.f32(aScale), columnScale),
      ctx.scalar(ops.f32(aScale), ctx.floatAttr("alpha", 1.0f)));
  if (!ctx.hasInput(7)) {
    Value y = ops.binary<MulOp>(ops.f32(product), scale);
    if (ops.failed())
      return failure();
    ctx.setOutput(0, y);
    return success();
  }
  Value multiplier = ops.binary<DivOp>(scale, ops.f32(ctx.input(7)));
  return requantize(ctx, ops, product, multiplier, 8);
}

/// The float32 product of an exact integer sum `sum` (float32 or float64) and
/// the scales `aScale` (one value) and `bScale` (one value or one per column of
/// the product), plus input `bias` when given: what onnxruntime's
/// MatMulIntegerToFloat and DynamicQuantizeMatMul compute.
LogicalResult scaleIntegerProduct(NodeContext &ctx, QuantizedOps &ops,
                                  Value sum, Value aScale, Value bScale,
                                  size_t bias) {
  if (!aScale || !bScale || !isScalarLike(aScale) ||
      (!isScalarLike(bScale) && rankOf(bScale) != 1))
    return ctx.fail("a_scale must be one value and b_scale one value or one "
                    "per column of B");
  Value y = ops.binary<MulOp>(
      ops.f32(sum), ops.binary<MulOp>(ops.f32(aScale), ops.f32(bScale)));
  if (ctx.hasInput(bias))
    y = ops.binary<AddOp>(y, ops.f32(ctx.input(bias)));
  if (ops.failed())
    return failure();
  ctx.setOutput(0, y);
  return success();
}

/// com.microsoft MatMulIntegerToFloat: (A - a_zero_point) (B -
/// b_zero_point) * a_scale * b_scale + bias, the sum exact.
LogicalResult importMatMulIntegerToFloat(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b || rankOf(b) != 2)
    return ctx.fail("B must be a matrix");
  if (ctx.hasInput(4) && !isScalarLike(ctx.input(4)))
    return ctx.fail("a_zero_point must be one value");
  QuantizedOps ops(ctx);
  FloatType sumType =
      integerSumType(ctx, 1, 5, 1, largestCentered(ctx, 0, 4), std::nullopt);
  Value sum = ops.binary<MatMulOp>(centered(ctx, ops, 0, 4, 0, sumType),
                                   centered(ctx, ops, 1, 5, 1, sumType));
  if (ops.failed())
    return failure();
  return scaleIntegerProduct(ctx, ops, sum, ctx.input(2), ctx.input(3), 6);
}

/// com.microsoft DynamicQuantizeMatMul: A (float32) quantized to uint8 over
/// its own range (as DynamicQuantizeLinear), then MatMulIntegerToFloat with
/// B, b_scale, b_zero_point and bias.
LogicalResult importDynamicQuantizeMatMul(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b || failed(ctx.requireDtypes(a, NodeContext::Float)))
    return failure();
  if (rankOf(b) != 2)
    return ctx.fail("B must be a matrix");
  QuantizedOps ops(ctx);
  DynamicallyQuantized quantized = quantizeOverOwnRange(ctx, ops, ops.f32(a));
  // A is uint8 with a uint8 zero point: |A - zero point| <= 255.
  FloatType sumType = integerSumType(ctx, 1, 3, 1, 255, std::nullopt);
  Value centeredA = ops.binary<SubOp>(ops.castTo(quantized.q, sumType),
                                      ops.castTo(quantized.zeroPoint, sumType));
  Value sum =
      ops.binary<MatMulOp>(centeredA, centered(ctx, ops, 1, 3, 1, sumType));
  if (ops.failed())
    return failure();
  return scaleIntegerProduct(ctx, ops, sum, quantized.scale, ctx.input(2), 4);
}

/// com.microsoft QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale,
/// X_zero_point) per input; each dequantized, concatenated along `axis`,
/// quantized.
LogicalResult importQLinearConcat(NodeContext &ctx) {
  int64_t inputs = ctx.proto().input_size();
  if (inputs < 5 || (inputs - 2) % 3 != 0)
    return ctx.fail("QLinearConcat takes Y_scale, Y_zero_point and an "
                    "(X, X_scale, X_zero_point) triple per input");
  QuantizedOps ops(ctx);
  SmallVector<Value> parts;
  for (int64_t i = 2; i < inputs; i += 3)
    parts.push_back(ops.dequantizeInput(i, i + 1, i + 2));
  if (ops.failed())
    return failure();
  auto axis = ctx.axisAttr(0, rankOf(parts.front()));
  if (failed(axis))
    return failure();
  auto &b = ctx.b();
  Value joined = ops.take(ctx.create<ConcatOp>(
      parts, {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
  if (ops.failed())
    return failure();
  return quantizeOutput(ctx, ops, joined, 0, 1);
}

/// com.microsoft QLinearAveragePool: X dequantized, AveragePool's window
/// (channels first, or last with channels_last=1), quantized.
LogicalResult importQLinearAveragePool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || rankOf(x) < 3)
    return ctx.fail("the input must have rank >= 3");
  QuantizedOps ops(ctx);
  Value dequantized = ops.dequantizeInput(0, 1, 2);
  if (ops.failed())
    return failure();
  // Channels last: pooled as channels first between two transposes.
  int64_t rank = rankOf(x);
  bool channelsLast = ctx.intAttr("channels_last", 0) != 0;
  auto &b = ctx.b();
  auto transposed = [&](Value v, ArrayRef<int64_t> perm) {
    return ops.take(ctx.create<TransposeOp>(
        v, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
  };
  SmallVector<int64_t> toFirst = {0, rank - 1}, toLast = {0};
  for (int64_t d = 1; d < rank - 1; ++d) {
    toFirst.push_back(d);
    toLast.push_back(d + 1);
  }
  toLast.push_back(1);
  if (channelsLast)
    dequantized = transposed(dequantized, toFirst);
  if (ops.failed())
    return failure();
  auto pool = readPoolWindow(ctx, dequantized, /*average=*/true);
  if (failed(pool))
    return failure();
  Value pooled = ops.take(ctx.create<AveragePoolOp>(dequantized, pool->attrs));
  if (channelsLast && pooled)
    pooled = transposed(pooled, toLast);
  if (ops.failed())
    return failure();
  return quantizeOutput(ctx, ops, pooled, 3, 4);
}

/// com.microsoft MatMulNBits' constant inputs read: B ([N, blocks, block
/// bytes] of `bits`-bit values, low bits first), scales ([N * blocks]) and
/// zero points (none: 2^(bits-1); uint8 packed like B, [N * ceil(blocks *
/// bits / 8)]; or float32 like the scales).
struct NBitWeights {
  int64_t k, n, bits, blockSize, blocks;
  const ConstTensor *packed, *scales, *zeros;

  /// Value `i` of a row of packed `bits`-bit values, low bits first.
  int64_t unpack(const char *row, int64_t i) const {
    int64_t bit = i * bits;
    unsigned byte = uint8_t(row[bit / 8]);
    return int64_t((byte >> (bit % 8)) & ((1u << bits) - 1));
  }
  /// The quantized value of element (row, col) of the [K, N] matrix.
  int64_t q(int64_t row, int64_t col) const {
    int64_t blockBytes = blockSize * bits / 8;
    return unpack(packed->bytes.data() + col * blocks * blockBytes, row);
  }
  float scale(int64_t block, int64_t col) const {
    return floatAt(*scales, col * blocks + block);
  }
  float zero(int64_t block, int64_t col) const {
    if (!zeros)
      return float(int64_t(1) << (bits - 1));
    if (zeros->onnxType == onnx::TensorProto::FLOAT)
      return floatAt(*zeros, col * blocks + block);
    int64_t zeroBytes = llvm::divideCeil(blocks * bits, 8);
    return float(unpack(zeros->bytes.data() + col * zeroBytes, block));
  }
};

/// MatMulNBits' constant inputs, checked against K, N, bits and
/// block_size.
FailureOr<NBitWeights> readNBitWeights(NodeContext &ctx, int64_t k, int64_t n,
                                       int64_t bits, int64_t blockSize) {
  NBitWeights w{k,
                n,
                bits,
                blockSize,
                int64_t(llvm::divideCeil(k, blockSize)),
                ctx.constInput(1),
                ctx.constInput(2),
                ctx.hasInput(3) ? ctx.constInput(3) : nullptr};
  if (!w.packed || !w.scales || (ctx.hasInput(3) && !w.zeros)) {
    (void)ctx.fail("B, scales and zero_points must be constants");
    return failure();
  }
  if (ctx.hasInput(4) && !ctx.proto().input(4).empty()) {
    (void)ctx.fail("g_idx (act-order) is not supported");
    return failure();
  }
  int64_t blockBytes = blockSize * bits / 8;
  int64_t zeroBytes = llvm::divideCeil(w.blocks * bits, 8);
  bool floatZeros = w.zeros && w.zeros->onnxType == onnx::TensorProto::FLOAT;
  if (w.packed->onnxType != onnx::TensorProto::UINT8 ||
      int64_t(w.packed->bytes.size()) != n * w.blocks * blockBytes ||
      w.scales->onnxType != onnx::TensorProto::FLOAT ||
      int64_t(w.scales->bytes.size()) != n * w.blocks * 4 ||
      (w.zeros && !floatZeros &&
       (w.zeros->onnxType != onnx::TensorProto::UINT8 ||
        int64_t(w.zeros->bytes.size()) != n * zeroBytes)) ||
      (floatZeros && int64_t(w.zeros->bytes.size()) != n * w.blocks * 4)) {
    (void)ctx.fail("B, scales or zero_points do not have the sizes K, N, "
                   "bits and block_size give");
    return failure();
  }
  return w;
}

/// The float32 [K, N] matrix of the weights: element (k, n) = (q - zero
/// point) * scale of n's block k / block_size.
ConstTensor unpackNBitWeights(const NBitWeights &w) {
  std::vector<float> matrix(w.k * w.n);
  for (int64_t col = 0; col < w.n; ++col)
    for (int64_t block = 0; block < w.blocks; ++block) {
      float scale = w.scale(block, col), zero = w.zero(block, col);
      for (int64_t at = block * w.blockSize;
           at < std::min(w.k, (block + 1) * w.blockSize); ++at)
        matrix[at * w.n + col] = (float(w.q(at, col)) - zero) * scale;
    }
  ConstTensor weights;
  weights.onnxType = onnx::TensorProto::FLOAT;
  weights.shape = {w.k, w.n};
  weights.bytes.assign(reinterpret_cast<const char *>(matrix.data()),
                       matrix.size() * sizeof(float));
  return weights;
}

/// The weights as kiln ops that unpack them where they are read: 4-bit
/// values stay two to a byte, and the kernel that multiplies by them
/// computes each float from its byte, its block's scale and offset
/// (kiln-packed-weights: on the CPU the chain goes into the contraction's
/// kernel; for the GPUs it is computed at compile time).
///
/// Block b keeps its row r in the low half of byte [b, 0, r, n]
/// and its row r + block/2 in the high half, so the chain's result is
/// [blocks, 2, block/2, N]: element (b, j, r, n) = ((byte >> 4j) mod 16) *
/// scale + offset, where offset = -zero point * scale, both of column n's
/// block b. Its operands broadcast plainly along the result's dims; the
/// caller reshapes it to [K, N]. K must be whole blocks of an even size.
FailureOr<Value> packedFourBitWeights(NodeContext &ctx, const FourBitMatrix &w,
                                      const std::string &name) {
  int64_t half = w.blockSize / 2;
  // Signless bytes (int8): the shifts and the modulus below are then
  // kernel immediates, which unsigned constants cannot be.
  ConstTensor bytes;
  bytes.onnxType = onnx::TensorProto::INT8;
  bytes.shape = {w.blocks(), 1, half, w.n};
  bytes.bytes.resize(w.k * w.n / 2);
  for (int64_t block = 0; block < w.blocks(); ++block)
    for (int64_t r = 0; r < half; ++r) {
      int64_t low = block * w.blockSize + r;
      char *row = bytes.bytes.data() + (block * half + r) * w.n;
      for (int64_t col = 0; col < w.n; ++col)
        row[col] = char(w.q(low, col) | (w.q(low + half, col) << 4));
    }
  std::vector<float> scales(w.blocks() * w.n), offsets(w.blocks() * w.n);
  for (int64_t block = 0; block < w.blocks(); ++block)
    for (int64_t col = 0; col < w.n; ++col) {
      float scale = w.scale(block, col);
      scales[block * w.n + col] = scale;
      offsets[block * w.n + col] = -w.zero(block, col) * scale;
    }
  auto floats = [&](std::vector<float> &values) {
    ConstTensor t;
    t.onnxType = onnx::TensorProto::FLOAT;
    t.shape = {w.blocks(), 1, 1, w.n};
    t.bytes.assign(reinterpret_cast<const char *>(values.data()),
                   values.size() * sizeof(float));
    return t;
  };
  std::string error;
  Value packed = ctx.createConstant(name + "_nibbles", std::move(bytes), error);
  Value scale =
      ctx.createConstant(name + "_block_scales", floats(scales), error);
  Value offset =
      ctx.createConstant(name + "_block_offsets", floats(offsets), error);
  if (!packed || !scale || !offset)
    return ctx.fail(error);
  // An arithmetic shift and a floored modulus: a byte's high half too is
  // (byte >> 4) mod 16 where the byte reads as negative.
  Type i8 = getElementTypeOrSelf(packed.getType());
  Value shifts =
      ctx.constant(RankedTensorType::get({1, 2, 1, 1}, i8), {0.0, 4.0});
  QuantizedOps ops(ctx);
  Value nibbles =
      ops.binary<ModOp>(ops.binary<ShiftRightOp>(packed, shifts),
                        ctx.constant(RankedTensorType::get({}, i8), {16.0}));
  Value weights =
      ops.binary<AddOp>(ops.binary<MulOp>(ops.f32(nibbles), scale), offset);
  if (ops.failed())
    return failure();
  return weights;
}

/// MatMulNBits' weights kept packed; null where K is not whole blocks.
FailureOr<Value> packedNBitWeights(NodeContext &ctx, const NBitWeights &w) {
  if (w.bits != 4 || w.k % w.blockSize != 0)
    return Value();
  FourBitMatrix m{w.k,
                  w.n,
                  w.blockSize,
                  [&](int64_t row, int64_t col) { return w.q(row, col); },
                  [&](int64_t b, int64_t col) { return w.scale(b, col); },
                  [&](int64_t b, int64_t col) { return w.zero(b, col); }};
  return packedFourBitWeights(ctx, m, ctx.proto().input(1));
}

/// com.microsoft MatMulNBits: A [..., K] times B, whose 4-bit blocked
/// weights stay packed (packedNBitWeights; unpacked into float32 at import
/// where K is not whole blocks), plus bias.
LogicalResult importMatMulNBits(NodeContext &ctx) {
  Value a = ctx.input(0);
  if (!a || failed(ctx.requireDtypes(a, NodeContext::Float)))
    return failure();
  int64_t k = ctx.intAttr("K", 0), n = ctx.intAttr("N", 0);
  int64_t bits = ctx.intAttr("bits", 4);
  int64_t blockSize = ctx.intAttr("block_size", 0);
  // 4 bits: the width onnxruntime runs (and so the one checked against it).
  if (k <= 0 || n <= 0 || bits != 4 || blockSize < 16 ||
      !llvm::isPowerOf2_64(blockSize))
    return ctx.fail("K and N must be positive, bits 4 and block_size a power "
                    "of two of at least 16");
  if (rankOf(a) < 1 || shapeOf(a).back() != k)
    return ctx.fail("A's last dim must be K");
  auto weights = readNBitWeights(ctx, k, n, bits, blockSize);
  if (failed(weights))
    return failure();
  FailureOr<Value> packed = packedNBitWeights(ctx, *weights);
  if (failed(packed))
    return failure();
  QuantizedOps ops(ctx);
  Value y;
  if (*packed) {
    y = ops.binary<MatMulOp>(ops.f32(a), reshapeTo(ctx, *packed, {k, n}));
  } else {
    std::string error;
    Value b = ctx.createConstant(ctx.proto().input(1) + "_unpacked",
                                 unpackNBitWeights(*weights), error);
    if (!b)
      return ctx.fail(error);
    y = ops.binary<MatMulOp>(ops.f32(a), b);
  }
  if (ctx.hasInput(5))
    y = ops.binary<AddOp>(y, ops.f32(ctx.input(5)));
  y = ops.castTo(y, getElementTypeOrSelf(a.getType()));
  if (ops.failed())
    return failure();
  ctx.setOutput(0, y);
  return success();
}

} // namespace

void onnx_import::registerQuantizeOps(OpRegistry &registry) {
  // clang-format off
  registry.add("ConvInteger", 10, kMaxOpset, "int8/uint8; zero points scalar or per output channel; the sum exact, in float32 where constant weights bound it below 2^24, else float64", importConvInteger);
  registry.add("DequantizeLinear", 10, kMaxOpset, "int4/uint4 (constants)/int8/uint8/int16/uint16/int32; per tensor, per axis or per block (block_size); 4-bit [K, N] weights that one MatMul reads, per tensor, column or block of rows, kept two to a byte as MatMulNBits' are", importDequantizeLinear);
  registry.add("DynamicQuantizeLinear", 11, kMaxOpset, "float32 to uint8", importDynamicQuantizeLinear);
  registry.add("MatMulInteger", 10, kMaxOpset, "int8/uint8; zero points scalar, per row of A or per column of B; the sum exact, in float32 where a constant B bounds it below 2^24, else float64", importMatMulInteger);
  registry.add("QLinearConv", 10, kMaxOpset, "int8/uint8; per-channel weight scales; the sum exact (float32 where constant weights bound it below 2^24, else float64), requantized in float32", importQLinearConv);
  registry.add("QLinearMatMul", 10, kMaxOpset, "int8/uint8; per-column B scales; the sum exact (float32 where a constant B bounds it below 2^24, else float64), requantized in float32", importQLinearMatMul);
  registry.add("QuantizeLinear", 10, kMaxOpset, "to int4/uint4 (held in 8 bits)/int8/uint8/int16/uint16; per tensor, per axis or per block (block_size)", importQuantizeLinear);
  registry.addInDomain("com.microsoft", "DynamicQuantizeMatMul", 1, 1, "domain com.microsoft; A quantized to uint8 over its own range, int8/uint8 B; scales per tensor or per column of B; the sum exact (float32 where a constant B bounds it below 2^24, else float64)", importDynamicQuantizeMatMul);
  registry.addInDomain("com.microsoft", "MatMulIntegerToFloat", 1, 1, "domain com.microsoft; int8/uint8; a_scale one value, b_scale per tensor or per column; the sum exact (float32 where a constant B bounds it below 2^24, else float64)", importMatMulIntegerToFloat);
  registry.addInDomain("com.microsoft", "MatMulNBits", 1, 1, "domain com.microsoft; 4-bit blocked weights (constant, no g_idx) kept two to a byte and unpacked where the kernel reads them (CPU; unpacked into float32 at compile time for the GPUs, and at import where K is not whole blocks)", importMatMulNBits);
  registry.addInDomain("com.microsoft", "QGemm", 1, 1, "domain com.microsoft; int8/uint8; per-column B scales; float32 output without y_scale", importQGemm);
  registry.addInDomain("com.microsoft", "QLinearAdd", 1, 1, "domain com.microsoft; per-tensor scales", importQLinearBinary<AddOp>);
  registry.addInDomain("com.microsoft", "QLinearAveragePool", 1, 1, "domain com.microsoft; per-tensor scales; channels first or last", importQLinearAveragePool);
  registry.addInDomain("com.microsoft", "QLinearConcat", 1, 1, "domain com.microsoft; per-tensor scales", importQLinearConcat);
  registry.addInDomain("com.microsoft", "QLinearGlobalAveragePool", 1, 1, "domain com.microsoft; channels first or last", importQLinearGlobalAveragePool);
  registry.addInDomain("com.microsoft", "QLinearLeakyRelu", 1, 1, "domain com.microsoft; per-tensor scales", importQLinearUnary<LeakyReluOp>);
  registry.addInDomain("com.microsoft", "QLinearMul", 1, 1, "domain com.microsoft; per-tensor scales", importQLinearBinary<MulOp>);
  registry.addInDomain("com.microsoft", "QLinearSigmoid", 1, 1, "domain com.microsoft; per-tensor scales", importQLinearUnary<SigmoidOp>);
  // clang-format on
}
