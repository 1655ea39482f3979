//===- OnnxRecurrentOpHandlers.cpp - LSTM, GRU and RNN --------------------===//
//
// With static shapes the sequence length is known, so recurrent ops unroll
// into one step of kiln ops per time step: the input projection of every
// step is one Gemm up front, then each step is a Gemm of the hidden state
// and the gate math, which fusion groups into few kernels per step.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/IR/Verifier.h"

#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

enum class Cell { LSTM, GRU, RNN };

/// Builds kiln ops for one node, remembering the first failure.
class Builder : public ChainedOps {
public:
  explicit Builder(NodeContext &ctx) : ctx(ctx) {}

  Value slice(Value x, int64_t axis, int64_t start, int64_t size) {
    if (!x)
      return nullptr;
    SmallVector<int64_t> shape(shapeOf(x)), starts(shape.size(), 0),
        steps(shape.size(), 1);
    if (start == 0 && size == shape[axis])
      return x;
    starts[axis] = start;
    shape[axis] = size;
    auto type = RankedTensorType::get(shape, getElementTypeOrSelf(x.getType()));
    auto &b = ctx.b();
    return SliceOp::create(b, ctx.getLoc(), type, x,
                           b.getDenseI64ArrayAttr(starts),
                           b.getDenseI64ArrayAttr(steps));
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return x ? reshapeTo(ctx, x, shape) : nullptr;
  }
  template <typename OpTy> Value binary(Value x, Value y) {
    return x && y ? check(ctx.create<OpTy>(ValueRange{x, y})) : fail();
  }
  Value select(Value c, Value x, Value y) {
    return c && x && y ? check(ctx.create<WhereOp>(ValueRange{c, x, y}))
                       : fail();
  }
  template <typename OpTy> Value unary(Value x) {
    return x ? check(ctx.create<OpTy>(x)) : fail();
  }
  Value activation(StringRef name, Value x) {
    if (name == "Sigmoid")
      return unary<SigmoidOp>(x);
    if (name == "Tanh")
      return unary<TanhOp>(x);
    if (name == "Relu")
      return unary<ReluOp>(x);
    return fail();
  }
  /// x * w^T (+ bias).
  Value linear(Value x, Value w, Value bias) {
    if (!x || !w)
      return nullptr;
    SmallVector<Value> operands = {x, w};
    if (bias)
      operands.push_back(bias);
    auto &b = ctx.b();
    return check(ctx.create<GemmOp>(
        operands, {b.getNamedAttr("transB", b.getBoolAttr(true))}));
  }
  /// x * w (+ bias) for int8 weights w [K, N] with `scale` and `zero` (one
  /// value, or one per column): x is quantized to uint8 over its own range
  /// (all of x, or each row's with `perRow`; the range holds 0, and a range
  /// of 0 takes scale 1), the integer product is summed exactly in
  /// `sumType` (see integerSumType), and scaled by x's scale times w's, as
  /// onnxruntime's DynamicQuantizeLSTM computes each product (the input
  /// projection over every step at once, the recurrence per batch
  /// element).
  /// A null `zero`: w is already centered, in `sumType` (centeredWeights).
  Value quantizedLinear(Value x, Value w, Value scale, Value zero, Value bias,
                        bool perRow, FloatType sumType) {
    if (!x || !w || !scale)
      return fail();
    auto &b = ctx.b();
    Value none = ctx.scalar(x, 0.0);
    auto all = [&](auto op) {
      SmallVector<int64_t> axes =
          perRow ? SmallVector<int64_t>{1} : SmallVector<int64_t>{0, 1};
      return check(ctx.create<decltype(op)>(
          x, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes)),
              b.getNamedAttr("keepdims", b.getBoolAttr(perRow))}));
    };
    Value lo = binary<MinOp>(all(ReduceMinOp()), none);
    Value hi = binary<MaxOp>(all(ReduceMaxOp()), none);
    Value range = binary<SubOp>(hi, lo);
    Value xScale = select(binary<EqualOp>(range, none), ctx.scalar(x, 1.0),
                          binary<DivOp>(range, ctx.scalar(x, 255.0)));
    Value xZero =
        clamp(unary<RoundOp>(binary<DivOp>(unary<NegOp>(lo), xScale)), 0, 255);
    Type f32 = b.getF32Type();
    // Stored as uint8, as onnxruntime does: a CPU with 4-way integer dot
    // products reads the bytes (kiln-pack-int8-matmul-weights).
    Value xq = castTo(
        castTo(clamp(binary<AddOp>(unary<RoundOp>(binary<DivOp>(x, xScale)),
                                   xZero),
                     0, 255),
               b.getIntegerType(8, /*isSigned=*/false)),
        f32);
    Value centeredW =
        zero ? binary<SubOp>(castTo(w, sumType), castTo(zero, sumType)) : w;
    Value product =
        binary<MatMulOp>(castTo(binary<SubOp>(xq, xZero), sumType), centeredW);
    Value y = binary<MulOp>(castTo(product, f32),
                            binary<MulOp>(xScale, castTo(scale, f32)));
    return bias ? binary<AddOp>(y, bias) : y;
  }
  Value castTo(Value x, Type element) {
    return x ? castElements(ctx, x, element) : fail();
  }
  Value clamp(Value x, float lo, float hi) {
    if (!x)
      return fail();
    auto &b = ctx.b();
    return check(
        ctx.create<ClipOp>(x, {b.getNamedAttr("min", b.getF32FloatAttr(lo)),
                               b.getNamedAttr("max", b.getF32FloatAttr(hi))}));
  }
  Value clip(Value x, float limit) {
    if (!x || limit <= 0)
      return x;
    auto &b = ctx.b();
    return check(ctx.create<ClipOp>(
        x, {b.getNamedAttr("min", b.getF32FloatAttr(-limit)),
            b.getNamedAttr("max", b.getF32FloatAttr(limit))}));
  }
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    if (llvm::any_of(parts, [](Value v) { return !v; }))
      return nullptr;
    if (parts.size() == 1)
      return parts.front();
    auto &b = ctx.b();
    return check(ctx.create<ConcatOp>(
        parts, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    auto &b = ctx.b();
    if (!x)
      return fail();
    return check(ctx.create<TransposeOp>(
        x, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
  }

private:
  NodeContext &ctx;
};

struct RecurrentSpec {
  Cell cell;
  int64_t gates;                        // 4 LSTM, 3 GRU, 1 RNN
  std::vector<std::string> activations; // per direction, in ONNX order
  /// com.microsoft DynamicQuantizeLSTM: int8 W [D, input, rows] and R
  /// [D, hidden, rows], their scales and zero points at inputs 8 to 11.
  bool quantized = false;
};

/// The per-direction weights, sliced out of [D, ...] tensors.
struct DirectionWeights {
  Value w, r, wBias, rBias, h0, c0;
  Value wScale, wZero, rScale, rZero; // quantized weights
  FloatType wSumType, rSumType;       // quantized weights: integerSumType
  /// x * W (+ W's bias), h * R (+ R's bias).
  Value inputProjection(Builder &bld, Value x) const {
    return wScale ? bld.quantizedLinear(x, w, wScale, wZero, wBias,
                                        /*perRow=*/false, wSumType)
                  : bld.linear(x, w, wBias);
  }
  Value recurrence(Builder &bld, Value h) const {
    return rScale ? bld.quantizedLinear(h, r, rScale, rZero, rBias,
                                        /*perRow=*/true, rSumType)
                  : bld.linear(h, r, rBias);
  }
  Value peepholeI, peepholeO, peepholeF; // LSTM
  Value rz, rh, rzBias, rhBias; // GRU: R's update/reset and hidden rows
};

/// Elements [offset, offset + product(shape)) of input `i`, as a value of
/// `shape`: one direction's (or one gate's) weights are contiguous in W, R,
/// B, P and the initial states. A constant input (the weights, nearly
/// always) is split at import time, so no kernel copies it on every run; a
/// computed one is sliced from its flattened value.
Value part(Builder &bld, NodeContext &ctx, size_t i, int64_t offset,
           ArrayRef<int64_t> shape, const Twine &what) {
  int64_t count = ShapedType::getNumElements(shape);
  if (const ConstTensor *tensor = ctx.constInput(i)) {
    int64_t total = ShapedType::getNumElements(tensor->shape);
    size_t elementBytes = total ? tensor->bytes.size() / total : 0;
    ConstTensor piece;
    piece.onnxType = tensor->onnxType;
    piece.shape.assign(shape.begin(), shape.end());
    piece.bytes =
        tensor->bytes.substr(offset * elementBytes, count * elementBytes);
    std::string error;
    Value v = ctx.createConstant((ctx.proto().input(i) + "." + what).str(),
                                 std::move(piece), error);
    if (!v)
      (void)ctx.fail(error);
    return v;
  }
  Value flat = bld.reshape(ctx.input(i),
                           {ShapedType::getNumElements(shapeOf(ctx.input(i)))});
  return bld.reshape(bld.slice(flat, 0, offset, count), shape);
}

/// Direction `d`'s constant int8 weights of input `weight` ([D, K, N],
/// row-major) and their zero point (input `zero`: the direction's first
/// value; the importer refuses zero points that differ within a direction),
/// when both are constants of that layout.
struct ConstantInt8Weights {
  const int8_t *values;
  double zeroPoint;
};
std::optional<ConstantInt8Weights> constantInt8Weights(NodeContext &ctx,
                                                       size_t weight,
                                                       size_t zero, int64_t d,
                                                       int64_t k, int64_t n) {
  const ConstTensor *w = ctx.constInput(weight);
  const ConstTensor *z = ctx.constInput(zero);
  if (!w || !z || w->onnxType != onnx::TensorProto::INT8 ||
      w->shape.size() != 3 || w->shape[1] != k || w->shape[2] != n ||
      w->bytes.size() != size_t(w->shape[0] * k * n))
    return std::nullopt;
  std::vector<int64_t> zeros = z->asInts();
  if (zeros.empty())
    return std::nullopt;
  return ConstantInt8Weights{reinterpret_cast<const int8_t *>(w->bytes.data()) +
                                 d * k * n,
                             double(zeros[d * zeros.size() / w->shape[0]])};
}

/// The type in which a product of uint8 values centered on their zero
/// point (|x - zero| at most 255) with direction `d`'s int8 weights of
/// input `weight` ([D, K, N]) minus their zero point (input `zero`) is
/// summed exactly: float32 when no partial sum of any output column can
/// reach 2^24 (then every partial sum is an integer float32 holds,
/// whatever the order), float64 otherwise.
FloatType integerSumType(NodeContext &ctx, size_t weight, size_t zero,
                         int64_t d, int64_t k, int64_t n) {
  constexpr double kLargestCenteredX = 255;
  FloatType f64 = ctx.b().getF64Type();
  auto w = constantInt8Weights(ctx, weight, zero, d, k, n);
  if (!w)
    return f64;
  std::vector<double> sums(n, 0.0);
  for (int64_t i = 0; i < k * n; ++i)
    sums[i % n] += std::fabs(w->values[i] - w->zeroPoint);
  for (double sum : sums)
    if (!(sum * kLargestCenteredX < std::exp2(24)))
      return f64;
  return ctx.b().getF32Type();
}

/// Direction `d`'s constant int8 weights of input `weight` ([D, K, N])
/// minus their zero point (input `zero`), computed at import as a [K, N]
/// constant of `sumType`: the recurrence then reads one constant weight
/// (which the graph passes may store transposed, or narrowed back to int8)
/// instead of a kernel widening and centering it on every run. Null when
/// either input is not a constant of that layout or the constant does not
/// fit the folding budget.
Value centeredWeights(NodeContext &ctx, size_t weight, size_t zero, int64_t d,
                      int64_t k, int64_t n, FloatType sumType,
                      const Twine &what) {
  auto w = constantInt8Weights(ctx, weight, zero, d, k, n);
  if (!w || !ctx.tryReserveConstant(k * n, sumType))
    return nullptr;
  ConstTensor centered;
  bool wide = sumType.getWidth() == 64;
  centered.onnxType =
      wide ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
  centered.shape = {k, n};
  centered.bytes.resize(k * n * (wide ? 8 : 4));
  for (int64_t i = 0; i < k * n; ++i) {
    double value = w->values[i] - w->zeroPoint;
    char *at = centered.bytes.data() + i * (wide ? 8 : 4);
    if (wide) {
      std::memcpy(at, &value, 8);
    } else {
      float single = value;
      std::memcpy(at, &single, 4);
    }
  }
  std::string error;
  Value v = ctx.createConstant((ctx.proto().input(weight) + "." + what).str(),
                               std::move(centered), error);
  if (!v)
    (void)ctx.fail(error);
  return v;
}

DirectionWeights weightsFor(Builder &bld, NodeContext &ctx, int64_t d,
                            int64_t gates, int64_t hidden, int64_t batch,
                            int64_t inputSize, bool quantized) {
  DirectionWeights dw;
  std::string dir = "direction" + std::to_string(d) + ".";
  int64_t rows = gates * hidden;
  if (quantized) {
    // One scale per direction, or one per column.
    auto perDirection = [&](size_t i) {
      return ShapedType::getNumElements(shapeOf(ctx.input(i))) /
             shapeOf(ctx.input(i))[0];
    };
    int64_t ws = perDirection(8), rs = perDirection(10);
    dw.wScale = part(bld, ctx, 8, d * ws, {ws}, dir + "Wscale");
    dw.rScale = part(bld, ctx, 10, d * rs, {rs}, dir + "Rscale");
    dw.wSumType = integerSumType(ctx, 1, 9, d, inputSize, rows);
    dw.rSumType = integerSumType(ctx, 2, 11, d, hidden, rows);
    dw.w = centeredWeights(ctx, 1, 9, d, inputSize, rows, dw.wSumType,
                           dir + "Wcentered");
    if (!dw.w) {
      dw.w =
          part(bld, ctx, 1, d * rows * inputSize, {inputSize, rows}, dir + "W");
      dw.wZero = part(bld, ctx, 9, d * ws, {ws}, dir + "Wzero");
    }
    dw.r = centeredWeights(ctx, 2, 11, d, hidden, rows, dw.rSumType,
                           dir + "Rcentered");
    if (!dw.r) {
      dw.r = part(bld, ctx, 2, d * rows * hidden, {hidden, rows}, dir + "R");
      dw.rZero = part(bld, ctx, 11, d * rs, {rs}, dir + "Rzero");
    }
  } else {
    dw.w =
        part(bld, ctx, 1, d * rows * inputSize, {rows, inputSize}, dir + "W");
    dw.r = part(bld, ctx, 2, d * rows * hidden, {rows, hidden}, dir + "R");
  }
  if (gates == 3) {
    dw.rz =
        part(bld, ctx, 2, d * rows * hidden, {2 * hidden, hidden}, dir + "Rzr");
    dw.rh = part(bld, ctx, 2, (d * rows + 2 * hidden) * hidden,
                 {hidden, hidden}, dir + "Rh");
  }
  if (ctx.hasInput(3)) {
    int64_t base = d * 2 * rows;
    dw.wBias = part(bld, ctx, 3, base, {rows}, dir + "Wb");
    dw.rBias = part(bld, ctx, 3, base + rows, {rows}, dir + "Rb");
    if (gates == 3) {
      dw.rzBias = part(bld, ctx, 3, base + rows, {2 * hidden}, dir + "Rbzr");
      dw.rhBias =
          part(bld, ctx, 3, base + rows + 2 * hidden, {hidden}, dir + "Rbh");
    }
  }
  if (ctx.hasInput(5))
    dw.h0 = part(bld, ctx, 5, d * batch * hidden, {batch, hidden}, dir + "h0");
  if (ctx.hasInput(6))
    dw.c0 = part(bld, ctx, 6, d * batch * hidden, {batch, hidden}, dir + "c0");
  if (ctx.hasInput(7)) {
    // P holds the input, output and forget gates' peepholes, in that order.
    dw.peepholeI = part(bld, ctx, 7, d * 3 * hidden, {hidden}, dir + "Pi");
    dw.peepholeO =
        part(bld, ctx, 7, (d * 3 + 1) * hidden, {hidden}, dir + "Po");
    dw.peepholeF =
        part(bld, ctx, 7, (d * 3 + 2) * hidden, {hidden}, dir + "Pf");
  }
  return dw;
}

/// One time step; updates `h` (and `c` for LSTM).
void step(Builder &bld, NodeContext &ctx, const RecurrentSpec &spec,
          const DirectionWeights &dw, ArrayRef<std::string> act, Value xt,
          int64_t hidden, float clipLimit, bool inputForget,
          bool linearBeforeReset, Value &h, Value &c) {
  auto gate = [&](Value v, int64_t k) {
    return bld.slice(v, 1, k * hidden, hidden);
  };
  if (spec.cell == Cell::RNN) {
    Value pre = bld.clip(bld.binary<AddOp>(xt, bld.linear(h, dw.r, dw.rBias)),
                         clipLimit);
    h = bld.activation(act[0], pre);
    return;
  }
  if (spec.cell == Cell::LSTM) {
    Value g = bld.binary<AddOp>(xt, dw.recurrence(bld, h));
    Value iPre = gate(g, 0), oPre = gate(g, 1), fPre = gate(g, 2),
          cPre = gate(g, 3);
    if (dw.peepholeI) {
      iPre = bld.binary<AddOp>(iPre, bld.binary<MulOp>(dw.peepholeI, c));
      fPre = bld.binary<AddOp>(fPre, bld.binary<MulOp>(dw.peepholeF, c));
    }
    Value i = bld.activation(act[0], bld.clip(iPre, clipLimit));
    Value f = inputForget ? bld.binary<SubOp>(ctx.scalar(i, 1.0), i)
                          : bld.activation(act[0], bld.clip(fPre, clipLimit));
    Value candidate = bld.activation(act[1], bld.clip(cPre, clipLimit));
    c = bld.binary<AddOp>(bld.binary<MulOp>(f, c),
                          bld.binary<MulOp>(i, candidate));
    if (dw.peepholeO)
      oPre = bld.binary<AddOp>(oPre, bld.binary<MulOp>(dw.peepholeO, c));
    Value o = bld.activation(act[0], bld.clip(oPre, clipLimit));
    h = bld.binary<MulOp>(o, bld.activation(act[2], c));
    return;
  }
  // GRU, gates z, r, h.
  Value zr = bld.binary<AddOp>(bld.slice(xt, 1, 0, 2 * hidden),
                               bld.linear(h, dw.rz, dw.rzBias));
  Value z = bld.activation(act[0], bld.clip(gate(zr, 0), clipLimit));
  Value r = bld.activation(act[0], bld.clip(gate(zr, 1), clipLimit));
  Value recurrent = linearBeforeReset
                        ? bld.binary<MulOp>(r, bld.linear(h, dw.rh, dw.rhBias))
                        : bld.linear(bld.binary<MulOp>(r, h), dw.rh, dw.rhBias);
  Value candidate = bld.activation(
      act[1], bld.clip(bld.binary<AddOp>(gate(xt, 2), recurrent), clipLimit));
  // h = (1 - z) * candidate + z * h
  Value keep = bld.binary<MulOp>(z, h);
  Value update =
      bld.binary<MulOp>(bld.binary<SubOp>(ctx.scalar(z, 1.0), z), candidate);
  h = bld.binary<AddOp>(update, keep);
}

/// Fails unless input `i`, when present, has `shape`: a weight of another
/// shape would be split at the wrong places or read past its end.
LogicalResult requireShape(NodeContext &ctx, size_t i, ArrayRef<int64_t> shape,
                           StringRef name) {
  if (!ctx.hasInput(i))
    return success();
  Value v = ctx.input(i);
  if (!v)
    return failure();
  if (shapeOf(v) == shape)
    return success();
  auto text = [](ArrayRef<int64_t> dims) {
    std::string out = "[";
    llvm::interleave(
        dims, [&](int64_t d) { out += std::to_string(d); },
        [&] { out += ", "; });
    return out + "]";
  };
  return ctx.fail(name + " has shape " + text(shapeOf(v)) + ", expected " +
                  text(shape));
}

/// DynamicQuantizeLSTM: W and R hold int8.
LogicalResult requireQuantizedWeights(NodeContext &ctx) {
  for (size_t i : {1, 2})
    if (!getElementTypeOrSelf(ctx.input(i).getType()).isSignlessInteger(8))
      return ctx.fail(Twine(i == 1 ? "W" : "R") +
                      " must hold int8 (uint8 weights are not supported)");
  return success();
}

/// DynamicQuantizeLSTM: the scales of W and R (inputs 8, 10) are [D] or
/// [D, rows], float32; each zero point (9, 11) has its scale's shape, is
/// constant, and holds one value per direction (onnxruntime reads only the
/// first).
LogicalResult requireWeightScales(NodeContext &ctx, int64_t directions,
                                  int64_t rows) {
  for (size_t i : {8, 9, 10, 11})
    if (!ctx.hasInput(i))
      return ctx.fail("W and R need their scales and zero points (inputs 8 "
                      "to 11)");
  for (auto [scaleIndex, name] : {std::pair<size_t, StringRef>{8, "W"},
                                  std::pair<size_t, StringRef>{10, "R"}}) {
    Value scale = ctx.input(scaleIndex);
    if (!scale || failed(ctx.requireFloat(scale)))
      return failure();
    SmallVector<int64_t> shape(shapeOf(scale));
    if (shape != ArrayRef<int64_t>{directions} &&
        shape != ArrayRef<int64_t>{directions, rows})
      return ctx.fail(name + "_scale must have shape [" + Twine(directions) +
                      "] or [" + Twine(directions) + ", " + Twine(rows) + "]");
    size_t zeroIndex = scaleIndex + 1;
    if (failed(
            requireShape(ctx, zeroIndex, shape, (name + "_zero_point").str())))
      return failure();
    const ConstTensor *zero = ctx.constInput(zeroIndex);
    if (!zero)
      return ctx.failNotConstant(zeroIndex,
                                 "a weight zero point must be a constant");
    int64_t perDirection = ShapedType::getNumElements(shape) / directions;
    std::vector<int64_t> values = zero->asInts();
    for (size_t k = 0; k < values.size(); ++k)
      if (values[k] != values[k / perDirection * perDirection])
        return ctx.fail(name + "_zero_point must hold one value per "
                               "direction");
  }
  return success();
}

LogicalResult importRecurrent(NodeContext &ctx, RecurrentSpec spec) {
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  if (!x || !w || !r || failed(ctx.requireFloat(x)))
    return failure();
  if (failed(spec.quantized ? requireQuantizedWeights(ctx)
                            : ctx.requireFloat({w, r})))
    return failure();
  if (rankOf(x) != 3 || rankOf(r) != 3)
    return ctx.fail("X and R must be 3-D");
  // sequence_lens: each batch element's steps; a constant one holding the
  // whole sequence everywhere changes nothing.
  Value lengths;
  if (ctx.hasInput(4)) {
    lengths = ctx.input(4);
    if (!lengths || failed(ctx.requireIndices(lengths)))
      return failure();
    int64_t seq = shapeOf(x)[ctx.intAttr("layout", 0) ? 1 : 0];
    const ConstTensor *lens = ctx.constInput(4);
    if (lens &&
        llvm::all_of(lens->asInts(), [&](int64_t len) { return len == seq; }))
      lengths = nullptr;
  }
  std::string direction = ctx.stringAttr("direction", "forward");
  int64_t numDirections = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && numDirections != 2)
    return ctx.fail("direction '" + direction + "' is not valid");
  bool batchFirst = ctx.intAttr("layout", 0) != 0;
  if (batchFirst) {
    Builder pre(ctx);
    x = pre.transpose(x, {1, 0, 2});
    if (pre.failed())
      return failure();
  }
  int64_t seq = shapeOf(x)[0], batch = shapeOf(x)[1], inputSize = shapeOf(x)[2];
  // R is [D, rows, hidden], or [D, hidden, rows] quantized.
  int64_t rHidden = spec.quantized ? shapeOf(r)[1] : shapeOf(r).back();
  int64_t hidden = ctx.intAttr("hidden_size", rHidden);
  if (rHidden != hidden)
    return ctx.fail("hidden_size differs from R's shape");

  int64_t rows = spec.gates * hidden;
  // Quantized weights are stored transposed: [D, input, rows].
  SmallVector<int64_t> wShape = {numDirections, rows, inputSize},
                       rShape = {numDirections, rows, hidden};
  if (spec.quantized) {
    std::swap(wShape[1], wShape[2]);
    std::swap(rShape[1], rShape[2]);
  }
  if (failed(requireShape(ctx, 1, wShape, "W")) ||
      failed(requireShape(ctx, 2, rShape, "R")) ||
      (spec.quantized &&
       failed(requireWeightScales(ctx, numDirections, rows))) ||
      failed(requireShape(ctx, 3, {numDirections, 2 * rows}, "B")) ||
      failed(
          requireShape(ctx, 5, {numDirections, batch, hidden}, "initial_h")) ||
      (spec.cell == Cell::LSTM &&
       (failed(requireShape(ctx, 6, {numDirections, batch, hidden},
                            "initial_c")) ||
        failed(requireShape(ctx, 7, {numDirections, 3 * hidden}, "P")))))
    return failure();

  // Activations: per direction, in ONNX order; defaults per cell type.
  std::vector<std::string> defaults =
      spec.cell == Cell::LSTM
          ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : spec.cell == Cell::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                               : std::vector<std::string>{"Tanh"};
  std::vector<std::string> activations;
  if (const auto *a = ctx.attr("activations"))
    activations.assign(a->strings().begin(), a->strings().end());
  else
    for (int64_t d = 0; d < numDirections; ++d)
      activations.insert(activations.end(), defaults.begin(), defaults.end());
  if (activations.size() != defaults.size() * numDirections)
    return ctx.fail("expected " + Twine(defaults.size() * numDirections) +
                    " activations");
  for (const std::string &name : activations)
    if (name != "Sigmoid" && name != "Tanh" && name != "Relu")
      return ctx.fail("activation '" + name + "' is not supported yet");
  float clipLimit = ctx.floatAttr("clip", 0.0f);
  bool inputForget = ctx.intAttr("input_forget", 0) != 0;
  bool linearBeforeReset = ctx.intAttr("linear_before_reset", 0) != 0;

  Builder bld(ctx);
  Value zeros = ctx.constant(
      RankedTensorType::get({batch, hidden}, getElementTypeOrSelf(x.getType())),
      {0.0});
  // With sequence_lens, step t runs for the batch elements longer than t
  // (mask [batch, 1]); the others keep their state and output zeros.
  Value lengthColumn;
  if (lengths) {
    if (rankOf(lengths) != 1 || shapeOf(lengths)[0] != batch)
      return ctx.fail("sequence_lens must hold one length per batch element");
    auto i64 = RankedTensorType::get({batch}, ctx.b().getI64Type());
    Value wide = getElementTypeOrSelf(lengths.getType()).isInteger(64)
                     ? lengths
                     : CastOp::create(ctx.b(), ctx.getLoc(), i64, lengths);
    lengthColumn = bld.reshape(wide, {batch, 1});
    auto bound = [&](double v) {
      return ctx.constant(RankedTensorType::get({}, ctx.b().getI64Type()), {v});
    };
    ctx.addRuntimeCheck(
        bld.binary<OrOp>(bld.binary<LessOp>(wide, bound(0)),
                         bld.binary<GreaterOp>(wide, bound(double(seq)))),
        "sequence_lens holds a length outside [0, " + Twine(seq) + "]");
  }
  auto stepRuns = [&](int64_t t) -> Value {
    return bld.binary<LessOp>(
        ctx.constant(RankedTensorType::get({}, ctx.b().getI64Type()),
                     {double(t)}),
        lengthColumn);
  };
  SmallVector<Value> ys, lastH, lastC;
  for (int64_t d = 0; d < numDirections; ++d) {
    DirectionWeights dw = weightsFor(bld, ctx, d, spec.gates, hidden, batch,
                                     inputSize, spec.quantized);
    ArrayRef<std::string> act =
        ArrayRef<std::string>(activations)
            .slice(d * defaults.size(), defaults.size());
    // The input projection of every step at once.
    Value projected = bld.reshape(
        dw.inputProjection(bld, bld.reshape(x, {seq * batch, inputSize})),
        {seq, batch, spec.gates * hidden});
    Value h = dw.h0 ? dw.h0 : zeros, c = dw.c0 ? dw.c0 : zeros;
    bool reverse = direction == "reverse" || d == 1;
    SmallVector<Value> steps(seq);
    for (int64_t k = 0; k < seq; ++k) {
      int64_t t = reverse ? seq - 1 - k : k;
      Value xt = bld.reshape(bld.slice(projected, 0, t, 1),
                             {batch, spec.gates * hidden});
      Value hBefore = h, cBefore = c;
      step(bld, ctx, spec, dw, act, xt, hidden, clipLimit, inputForget,
           linearBeforeReset, h, c);
      Value output = h;
      if (lengthColumn) {
        Value runs = stepRuns(t);
        output = bld.select(runs, h, zeros);
        h = bld.select(runs, h, hBefore);
        c = bld.select(runs, c, cBefore);
      }
      steps[t] = bld.reshape(output, {1, 1, batch, hidden});
      if (bld.failed())
        return ctx.fail("could not build the unrolled recurrence");
    }
    ys.push_back(bld.concat(steps, 0));
    lastH.push_back(bld.reshape(h, {1, batch, hidden}));
    lastC.push_back(bld.reshape(c, {1, batch, hidden}));
  }
  Value y = bld.concat(ys, 1), yh = bld.concat(lastH, 0),
        yc = bld.concat(lastC, 0);
  if (batchFirst) {
    y = bld.transpose(y, {2, 0, 1, 3});
    yh = bld.transpose(yh, {1, 0, 2});
    yc = bld.transpose(yc, {1, 0, 2});
  }
  if (bld.failed())
    return ctx.fail("could not build the unrolled recurrence");
  ctx.setOutput(0, y);
  ctx.setOutput(1, yh);
  if (spec.cell == Cell::LSTM)
    ctx.setOutput(2, yc);
  return success();
}

} // namespace

static LogicalResult importLSTM(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::LSTM, 4, {}});
}
static LogicalResult importDynamicQuantizeLSTM(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::LSTM, 4, {}, /*quantized=*/true});
}
static LogicalResult importGRU(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::GRU, 3, {}});
}
static LogicalResult importRNN(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::RNN, 1, {}});
}

static LogicalResult importGatherElements(NodeContext &ctx) {
  return importIndexedAlongAxis<GatherElementsOp>(ctx);
}

static LogicalResult importScatterElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!data || !indices || !updates || failed(ctx.requireIndices(indices)) ||
      failed(ctx.requireSameDtype({data, updates})))
    return failure();
  auto axis = ctx.axisAttr(0, rankOf(data));
  if (failed(axis) ||
      failed(ctx.requireIndicesInRange(1, {*axis}, shapeOf(data))))
    return failure();
  std::string reduction = ctx.stringAttr("reduction", "none");
  auto &b = ctx.b();
  auto scatter = ScatterElementsOp::create(
      b, ctx.getLoc(), data.getType(), data, indices, updates,
      b.getI64IntegerAttr(*axis), b.getStringAttr(reduction));
  if (failed(mlir::verify(scatter))) {
    scatter.erase();
    return ctx.fail("invalid ScatterElements (shapes, axis or reduction)");
  }
  ctx.setOutput(0, scatter);
  return success();
}

static LogicalResult importScatterND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!data || !indices || !updates || failed(ctx.requireIndices(indices)) ||
      failed(ctx.requireSameDtype({data, updates})))
    return failure();
  ArrayRef<int64_t> indexShape = shapeOf(indices);
  if (!indexShape.empty() && indexShape.back() >= 1 &&
      indexShape.back() <= rankOf(data) &&
      failed(ctx.requireIndicesInRange(
          1, llvm::to_vector(llvm::seq<int64_t>(0, indexShape.back())),
          shapeOf(data))))
    return failure();
  auto &b = ctx.b();
  auto scatter = ScatterNDOp::create(
      b, ctx.getLoc(), data.getType(), data, indices, updates,
      b.getStringAttr(ctx.stringAttr("reduction", "none")));
  if (failed(mlir::verify(scatter))) {
    scatter.erase();
    return ctx.fail("invalid ScatterND (shapes or reduction)");
  }
  ctx.setOutput(0, scatter);
  return success();
}

void onnx_import::registerRecurrentOps(OpRegistry &registry) {
  // clang-format off
  registry.add("GatherElements", 11, kMaxOpset, "negative indices", importGatherElements);
  registry.add("GRU", 7, kMaxOpset, "unrolled; Sigmoid/Tanh/Relu; sequence_lens (read at run time)", importGRU);
  registry.add("LSTM", 7, kMaxOpset, "unrolled; peepholes, clip, layout; sequence_lens (read at run time)", importLSTM);
  registry.addInDomain("com.microsoft", "DynamicQuantizeLSTM", 1, 1, "domain com.microsoft; int8 W and R, scales per direction or per column; each product quantizes its float operand to uint8 over its own range, as onnxruntime does", importDynamicQuantizeLSTM);
  registry.add("RNN", 7, kMaxOpset, "unrolled; sequence_lens (read at run time)", importRNN);
  registry.add("Scatter", 9, 10, "as ScatterElements", importScatterElements);
  registry.add("ScatterElements", 11, kMaxOpset, "reductions add/mul/max/min (O(n*m) kernel)", importScatterElements);
  registry.add("ScatterND", 11, kMaxOpset, "reductions add/mul/max/min (O(n*m) kernel)", importScatterND);
  // clang-format on
}
