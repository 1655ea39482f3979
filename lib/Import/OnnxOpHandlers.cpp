//===- OnnxOpHandlers.cpp - one import function per ONNX op type ----------===//
//
// Each handler knows the semantics of its op across opsets (attributes that
// became inputs, changed defaults, flattening Softmax before opset 13) and
// builds kiln ops. Each family's file registers its ops (OpRegistry.h);
// `kiln-compile --list-ops` prints the table.
//
//===----------------------------------------------------------------------===//
#include "ConstantEvaluator.h"
#include "IndexOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy, unsigned Classes = NodeContext::Float>
static LogicalResult importUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, Classes)))
    return failure();
  return setResult(ctx, ctx.create<OpTy>(x));
}

template <typename OpTy>
static LogicalResult importAlphaUnary(NodeContext &ctx, float dflt) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  auto alpha = ctx.b().getNamedAttr(
      "alpha", ctx.b().getF32FloatAttr(ctx.floatAttr("alpha", dflt)));
  return setResult(ctx, ctx.create<OpTy>(x, {alpha}));
}

/// HardSigmoid and Selu carry two float parameters as `alpha` and `beta`.
template <typename OpTy>
static FailureOr<Value> createTwoParam(NodeContext &ctx, Value x, float alpha,
                                       float beta) {
  auto &b = ctx.b();
  return ctx.create<OpTy>(x, {b.getNamedAttr("alpha", b.getF32FloatAttr(alpha)),
                              b.getNamedAttr("beta", b.getF32FloatAttr(beta))});
}

/// `betaName` is the ONNX attribute stored as `beta` (Selu calls it gamma).
template <typename OpTy>
static LogicalResult importTwoParam(NodeContext &ctx, float alpha,
                                    StringRef betaName, float beta) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  return setResult(ctx,
                   createTwoParam<OpTy>(ctx, x, ctx.floatAttr("alpha", alpha),
                                        ctx.floatAttr(betaName, beta)));
}

/// HardSwish(x) = x * HardSigmoid(x; 1/6, 1/2), one kiln op: x has one
/// consumer, so the activation fuses into the op that produces x.
static LogicalResult importHardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  return setResult(ctx, ctx.create<HardSwishOp>(x));
}

static LogicalResult importGelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  std::string approximate = ctx.stringAttr("approximate", "none");
  if (approximate == "tanh")
    return setResult(ctx, ctx.create<GeluTanhOp>(x));
  if (approximate != "none")
    return ctx.fail("approximate='" + approximate + "' is not valid");
  return setResult(ctx, ctx.create<GeluOp>(x));
}

/// com.microsoft FastGelu (onnxruntime's fusion of a bias add and GELU's
/// tanh approximation): gelu_tanh(X + bias).
static LogicalResult importFastGelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  if (ctx.hasInput(1)) {
    Value bias = ctx.input(1);
    if (!bias || failed(ctx.requireSameDtype({x, bias})))
      return failure();
    auto biased = ctx.create<AddOp>(ValueRange{x, bias});
    if (failed(biased))
      return failure();
    x = *biased;
  }
  return setResult(ctx, ctx.create<GeluTanhOp>(x));
}

static LogicalResult importIdentity(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  ctx.setOutput(0, x);
  return success();
}

/// Clip as max and min with bound tensors (integer bounds, and float
/// bounds computed by the graph): the kernel reads them at run time.
/// min(max(x, lo), hi) also gives ONNX's hi everywhere when lo > hi.
static LogicalResult importClipWithBoundTensors(NodeContext &ctx, Value x) {
  Value result = x;
  for (size_t i : {1, 2}) {
    if (!ctx.hasInput(i))
      continue;
    Value bound = ctx.input(i);
    if (!bound || failed(ctx.requireSameDtype({x, bound})))
      return failure();
    auto boundType = cast<ShapedType>(bound.getType());
    if (!boundType.hasStaticShape() || boundType.getNumElements() != 1 ||
        boundType.getRank() > cast<ShapedType>(x.getType()).getRank())
      return ctx.fail("Clip bound " + std::to_string(i) +
                      " must be a scalar (one element)");
    auto clipped = i == 1 ? ctx.create<MaxOp>(ValueRange{result, bound})
                          : ctx.create<MinOp>(ValueRange{result, bound});
    if (failed(clipped))
      return failure();
    result = *clipped;
  }
  ctx.setOutput(0, result);
  return success();
}

static LogicalResult importClip(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  if (!isa<FloatType>(getElementTypeOrSelf(x.getType()))) {
    if (ctx.opset() < 11)
      return ctx.fail("integer Clip needs opset 11");
    return importClipWithBoundTensors(ctx, x);
  }
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (ctx.opset() < 11) {
    lo = ctx.floatAttr("min", lo);
    hi = ctx.floatAttr("max", hi);
  } else {
    for (size_t i : {1, 2}) {
      if (!ctx.hasInput(i))
        continue;
      const ConstTensor *bound = ctx.constInput(i);
      if (!bound)
        return importClipWithBoundTensors(ctx, x);
      std::optional<float> v = bound->asScalarFloat();
      if (!v)
        return ctx.fail("Clip bounds must be float scalars");
      (i == 1 ? lo : hi) = *v;
    }
  }
  auto &b = ctx.b();
  return setResult(ctx, ctx.create<ClipOp>(
                            x, {b.getNamedAttr("min", b.getF32FloatAttr(lo)),
                                b.getNamedAttr("max", b.getF32FloatAttr(hi))}));
}

/// Before opset 7, `broadcast=1` broadcasts the second operand with its dims
/// aligned at `axis` of the first (default: the trailing dims). Reshaping it
/// with unit dims turns that into numpy broadcasting.
static Value legacyBroadcast(NodeContext &ctx, Value lhs, Value rhs) {
  if (ctx.opset() >= 7 || ctx.intAttr("broadcast", 0) == 0)
    return rhs;
  int64_t lhsRank = rankOf(lhs), rhsRank = rankOf(rhs);
  int64_t axis = ctx.intAttr("axis", lhsRank - rhsRank);
  if (axis < 0 || axis + rhsRank > lhsRank)
    return rhs;
  SmallVector<int64_t> shape(shapeOf(rhs));
  shape.append(lhsRank - axis - rhsRank, 1);
  return reshapeTo(ctx, rhs, shape);
}

template <typename OpTy, unsigned Classes = NodeContext::Float |
                                            NodeContext::Int |
                                            NodeContext::Unsigned>
static LogicalResult importBinary(NodeContext &ctx) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (lhs && rhs)
    rhs = legacyBroadcast(ctx, lhs, rhs);
  if (!lhs || !rhs || failed(ctx.requireDtypes({lhs, rhs}, Classes)) ||
      failed(ctx.requireSameDtype({lhs, rhs})))
    return failure();
  return setResult(ctx, ctx.create<OpTy>(ValueRange{lhs, rhs}));
}

/// PRelu: before opset 7 a 1-D slope runs along the channel dim (dim 1).
static LogicalResult importPRelu(NodeContext &ctx) {
  Value x = ctx.input(0), slope = ctx.input(1);
  if (!x || !slope || failed(ctx.requireFloat({x, slope})) ||
      failed(ctx.requireSameDtype({x, slope})))
    return failure();
  if (ctx.opset() < 7 && rankOf(slope) == 1 && rankOf(x) > 2 &&
      shapeOf(slope)[0] == shapeOf(x)[1]) {
    SmallVector<int64_t> shape = {shapeOf(slope)[0]};
    shape.append(rankOf(x) - 2, 1);
    slope = reshapeTo(ctx, slope, shape);
  }
  return setResult(ctx, ctx.create<PReluOp>(ValueRange{x, slope}));
}

/// Pow: a float base; an integer exponent is converted to the base's type.
/// An integer base is computed in float64 and converted back (exact for the
/// values that fit).
static LogicalResult importPow(NodeContext &ctx) {
  Value base = ctx.input(0), exponent = ctx.input(1);
  unsigned numeric =
      NodeContext::Float | NodeContext::Int | NodeContext::Unsigned;
  if (!base || !exponent ||
      failed(ctx.requireDtypes({base, exponent}, numeric)))
    return failure();
  exponent = legacyBroadcast(ctx, base, exponent);
  auto &b = ctx.b();
  auto castTo = [&](Value v, Type t) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() == t)
      return v;
    return CastOp::create(b, ctx.getLoc(), type.clone(t), v);
  };
  Type baseType = getElementTypeOrSelf(base.getType());
  Type computeType = isa<FloatType>(baseType) ? baseType : b.getF64Type();
  auto power = ctx.create<PowOp>(
      ValueRange{castTo(base, computeType), castTo(exponent, computeType)});
  if (failed(power))
    return failure();
  if (computeType == baseType)
    return setResult(ctx, power);
  auto rounded = ctx.create<RoundOp>(*power);
  if (failed(rounded))
    return failure();
  ctx.setOutput(0, castTo(*rounded, baseType));
  return success();
}

/// BitShift (unsigned integers, as ONNX defines it).
static LogicalResult importBitShift(NodeContext &ctx) {
  Value x = ctx.input(0), y = ctx.input(1);
  if (!x || !y || failed(ctx.requireDtypes({x, y}, NodeContext::Unsigned)) ||
      failed(ctx.requireSameDtype({x, y})))
    return failure();
  std::string direction = ctx.stringAttr("direction", "");
  if (direction == "LEFT")
    return setResult(ctx, ctx.create<ShiftLeftOp>(ValueRange{x, y}));
  if (direction == "RIGHT")
    return setResult(ctx, ctx.create<ShiftRightOp>(ValueRange{x, y}));
  return ctx.fail("direction must be LEFT or RIGHT, got '" + direction + "'");
}

static LogicalResult importMod(NodeContext &ctx) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs ||
      failed(ctx.requireDtypes({lhs, rhs}, NodeContext::Float |
                                               NodeContext::Int |
                                               NodeContext::Unsigned)) ||
      failed(ctx.requireSameDtype({lhs, rhs})))
    return failure();
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(lhs.getType()));
  bool fmod = ctx.intAttr("fmod", 0) != 0;
  if (isFloat && !fmod)
    return ctx.fail("Mod of floats needs fmod=1");
  auto mod = ctx.create<ModOp>(ValueRange{lhs, rhs});
  bool isUnsigned = getElementTypeOrSelf(lhs.getType()).isUnsignedInteger();
  if (isFloat || !fmod || isUnsigned || failed(mod))
    return setResult(ctx, mod);
  // C's fmod takes the dividend's sign where kiln.mod takes the divisor's:
  // a nonzero remainder of the other sign moves by one divisor.
  IndexOps m(ctx);
  Value zero = ctx.scalar(lhs, 0);
  Value otherSign =
      m.op<AndOp>(m.differs(*mod, zero),
                  m.differs(m.op<LessOp>(*mod, zero), m.op<LessOp>(lhs, zero)));
  Value result = m.select(otherSign, m.op<SubOp>(*mod, rhs), *mod);
  if (m.failed())
    return failure();
  ctx.setOutput(0, result);
  return success();
}

template <typename OpTy, unsigned Classes>
static LogicalResult importCompare(NodeContext &ctx) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs || failed(ctx.requireDtypes({lhs, rhs}, Classes)) ||
      failed(ctx.requireSameDtype({lhs, rhs})))
    return failure();
  return setResult(ctx, ctx.create<OpTy>(ValueRange{lhs, rhs}));
}

static LogicalResult importWhere(NodeContext &ctx) {
  Value c = ctx.input(0), x = ctx.input(1), y = ctx.input(2);
  if (!c || !x || !y || failed(ctx.requireDtypes(c, NodeContext::Bool)) ||
      failed(ctx.requireDtypes({x, y}, NodeContext::Any)) ||
      failed(ctx.requireSameDtype({x, y})))
    return failure();
  return setResult(ctx, ctx.create<WhereOp>(ValueRange{c, x, y}));
}

/// Cast and CastLike; float16 and bfloat16 are accepted here (and nowhere else
/// yet) so that models can convert at their boundaries.
static LogicalResult castTo(NodeContext &ctx, Value x, Type to) {
  auto isSupported = [](Type t) {
    return t.isF16() || t.isBF16() || t.isF32() || t.isF64() ||
           t.isInteger(1) ||
           (isa<IntegerType>(t) && t.getIntOrFloatBitWidth() >= 8);
  };
  Type from = getElementTypeOrSelf(x.getType());
  if (!isSupported(from) || !isSupported(to)) {
    std::string fromName, toName;
    llvm::raw_string_ostream(fromName) << from;
    llvm::raw_string_ostream(toName) << to;
    return ctx.fail("Cast from " + fromName + " to " + toName +
                    " is not supported yet");
  }
  auto type = cast<RankedTensorType>(x.getType()).clone(to);
  ctx.setOutput(0, from == to
                       ? x
                       : (Value)CastOp::create(ctx.b(), ctx.getLoc(), type, x));
  return success();
}

static LogicalResult importCast(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto to = elementTypeFor(ctx.b().getContext(), ctx.intAttr("to", 0));
  if (failed(to))
    return ctx.fail("Cast to " + dtypeName(ctx.intAttr("to", 0)) +
                    " is not supported");
  return castTo(ctx, x, *to);
}

static LogicalResult importCastLike(NodeContext &ctx) {
  Value x = ctx.input(0), like = ctx.input(1);
  if (!x || !like)
    return failure();
  return castTo(ctx, x, getElementTypeOrSelf(like.getType()));
}

/// Max, Min, Sum, Mean: variadic, folded pairwise left to right.
template <typename OpTy>
static LogicalResult importVariadic(NodeContext &ctx, bool mean) {
  unsigned classes =
      mean ? NodeContext::Float
           : NodeContext::Float | NodeContext::Int | NodeContext::Unsigned;
  Value acc = ctx.input(0);
  if (!acc || failed(ctx.requireDtypes(acc, classes)))
    return failure();
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    Value next = ctx.input(i);
    if (!next || failed(ctx.requireDtypes(next, classes)) ||
        failed(ctx.requireSameDtype({acc, next})))
      return failure();
    auto combined = ctx.create<OpTy>(ValueRange{acc, next});
    if (failed(combined))
      return failure();
    acc = *combined;
  }
  if (mean && ctx.numInputs() > 1) {
    auto divided =
        ctx.create<DivOp>(ValueRange{acc, ctx.scalar(acc, ctx.numInputs())});
    if (failed(divided))
      return failure();
    acc = *divided;
  }
  ctx.setOutput(0, acc);
  return success();
}

template <typename OpTy>
static LogicalResult importArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  auto axis = ctx.axisAttr(0, rankOf(x));
  if (failed(axis))
    return failure();
  auto &b = ctx.b();
  return setResult(
      ctx,
      ctx.create<OpTy>(
          x, {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis)),
              b.getNamedAttr("keepdims",
                             b.getBoolAttr(ctx.intAttr("keepdims", 1) != 0)),
              b.getNamedAttr(
                  "select_last_index",
                  b.getBoolAttr(ctx.intAttr("select_last_index", 0) != 0))}));
}

//===----------------------------------------------------------------------===//
// MatMul, Gemm, Conv, pooling
//===----------------------------------------------------------------------===//

static LogicalResult importMatMul(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b || failed(ctx.requireFloat({a, b})))
    return failure();
  return setResult(ctx, ctx.create<MatMulOp>(ValueRange{a, b}));
}

/// `v` with its last two dims swapped.
static FailureOr<Value> swapLastTwoDims(NodeContext &ctx, Value v) {
  int64_t rank = rankOf(v);
  if (rank < 2)
    return ctx.fail("a transposed operand needs at least 2 dims"), failure();
  auto perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 2], perm[rank - 1]);
  auto &b = ctx.b();
  return ctx.create<TransposeOp>(
      v, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
}

/// com.microsoft FusedMatMul (onnxruntime's fusion of transposes and a
/// scale into MatMul): alpha * op(A) @ op(B), op swapping the last two dims
/// where transA / transB say.
static LogicalResult importFusedMatMul(NodeContext &ctx) {
  if (ctx.intAttr("transBatchA", 0) || ctx.intAttr("transBatchB", 0))
    return ctx.fail("transBatchA and transBatchB are not supported");
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b || failed(ctx.requireFloat({a, b})))
    return failure();
  for (auto [operand, attr] : {std::pair{&a, "transA"}, {&b, "transB"}}) {
    if (!ctx.intAttr(attr, 0))
      continue;
    auto swapped = swapLastTwoDims(ctx, *operand);
    if (failed(swapped))
      return failure();
    *operand = *swapped;
  }
  auto product = ctx.create<MatMulOp>(ValueRange{a, b});
  float alpha = ctx.floatAttr("alpha", 1.0f);
  if (failed(product) || alpha == 1.0f)
    return setResult(ctx, product);
  return setResult(
      ctx, ctx.create<MulOp>(ValueRange{*product, ctx.scalar(a, alpha)}));
}

static LogicalResult importGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  SmallVector<Value> operands = {a, b};
  if (ctx.hasInput(2)) {
    Value c = ctx.input(2);
    if (!c)
      return failure();
    operands.push_back(c);
  }
  if (failed(ctx.requireFloat(operands)))
    return failure();
  auto &bld = ctx.b();
  return setResult(
      ctx,
      ctx.create<GemmOp>(
          operands,
          {bld.getNamedAttr("alpha",
                            bld.getF32FloatAttr(ctx.floatAttr("alpha", 1.0f))),
           bld.getNamedAttr("beta",
                            bld.getF32FloatAttr(ctx.floatAttr("beta", 1.0f))),
           bld.getNamedAttr("transA",
                            bld.getBoolAttr(ctx.intAttr("transA", 0) != 0)),
           bld.getNamedAttr("transB",
                            bld.getBoolAttr(ctx.intAttr("transB", 0) != 0))}));
}

FailureOr<Window> onnx_import::readWindow(NodeContext &ctx, Value input,
                                          ArrayRef<int64_t> kernel) {
  int64_t spatial = rankOf(input) - 2;
  if (spatial < 1)
    return ctx.fail("input must have rank >= 3"), failure();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto orDefault = [&](StringRef name, int64_t count, int64_t value) {
    auto given = ctx.intsAttr(name);
    return given ? SmallVector<int64_t>(given->begin(), given->end())
                 : SmallVector<int64_t>(count, value);
  };
  w.strides = orDefault("strides", spatial, 1);
  w.dilations = orDefault("dilations", spatial, 1);
  w.pads = orDefault("pads", 2 * spatial, 0);
  if ((int64_t)w.kernel.size() != spatial ||
      (int64_t)w.strides.size() != spatial ||
      (int64_t)w.dilations.size() != spatial ||
      (int64_t)w.pads.size() != 2 * spatial)
    return ctx.fail("kernel_shape/strides/dilations/pads lengths do not match "
                    "the input rank"),
           failure();
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = shapeOf(input)[i + 2];
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] +
                                   (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    return ctx.fail("auto_pad '" + autoPad + "' is not valid"), failure();
  }
  return w;
}

static LogicalResult importConv(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  if (!x || !w)
    return failure();
  SmallVector<Value> operands = {x, w};
  if (ctx.hasInput(2)) {
    Value bias = ctx.input(2);
    if (!bias)
      return failure();
    operands.push_back(bias);
  }
  if (failed(ctx.requireFloat(operands)))
    return failure();
  if (rankOf(w) != rankOf(x) || rankOf(x) < 3)
    return ctx.fail("input and weight must have equal rank >= 3");
  auto kernel = ctx.intsAttr("kernel_shape");
  SmallVector<int64_t> kernelShape(shapeOf(w).drop_front(2));
  if (kernel && ArrayRef<int64_t>(*kernel) != ArrayRef<int64_t>(kernelShape))
    return ctx.fail("kernel_shape attribute differs from the weight shape");
  auto window = readWindow(ctx, x, kernelShape);
  if (failed(window))
    return failure();
  auto &b = ctx.b();
  return setResult(
      ctx,
      ctx.create<ConvOp>(
          operands,
          {b.getNamedAttr("pads", b.getDenseI64ArrayAttr(window->pads)),
           b.getNamedAttr("strides", b.getDenseI64ArrayAttr(window->strides)),
           b.getNamedAttr("dilations",
                          b.getDenseI64ArrayAttr(window->dilations)),
           b.getNamedAttr("group",
                          b.getI64IntegerAttr(ctx.intAttr("group", 1)))}));
}

/// MaxPool's Indices output: the flat input position (row-major, or
/// column-major within each image with storage_order=1) of each window's
/// first largest element. Each window tap is a strided slice of the input
/// padded with -inf; a tap that is strictly larger replaces the best so far,
/// as onnxruntime keeps the first.
static FailureOr<Value> maxPoolIndices(NodeContext &ctx, Value x,
                                       const Window &w, Value pooled,
                                       bool columnMajor) {
  IndexOps m(ctx);
  auto &b = ctx.b();
  ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(pooled);
  int64_t rank = in.size(), spatial = rank - 2;
  // Padding at the end covers the windows ceil_mode adds.
  SmallVector<int64_t> pads(rank, 0), padded(in);
  pads.append(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t reach = (out[d + 2] - 1) * w.strides[d] +
                    (w.kernel[d] - 1) * w.dilations[d] + 1;
    pads[d + 2] = w.pads[d];
    pads[rank + d + 2] =
        std::max<int64_t>(w.pads[spatial + d], reach - in[d + 2] - w.pads[d]);
    padded[d + 2] += pads[d + 2] + pads[rank + d + 2];
  }
  Type element = getElementTypeOrSelf(x.getType());
  Value source =
      PadOp::create(b, ctx.getLoc(), RankedTensorType::get(padded, element), x,
                    b.getDenseI64ArrayAttr(pads), b.getStringAttr("constant"),
                    b.getF64FloatAttr(-INFINITY));
  int64_t positions = ShapedType::getNumElements(out.drop_front(2));
  SmallVector<int64_t> tap(spatial, 0);
  Value best, index;
  while (true) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    std::vector<double> where(positions);
    for (int64_t d = 0; d < spatial; ++d) {
      starts[d + 2] = tap[d] * w.dilations[d];
      steps[d + 2] = w.strides[d];
    }
    // The input position each output position reads at this tap.
    for (int64_t p = 0; p < positions; ++p) {
      int64_t rest = p, flat = 0, stride = 1;
      SmallVector<int64_t> coord(spatial);
      for (int64_t d = spatial - 1; d >= 0; --d) {
        coord[d] = rest % out[d + 2] * w.strides[d] - w.pads[d] +
                   tap[d] * w.dilations[d];
        rest /= out[d + 2];
      }
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t d = columnMajor ? i : spatial - 1 - i;
        flat += coord[d] * stride;
        stride *= in[d + 2];
      }
      where[p] = double(flat);
    }
    Value value = SliceOp::create(
        b, ctx.getLoc(), RankedTensorType::get(out, element), source,
        b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(steps));
    SmallVector<int64_t> indexShape = {1, 1};
    indexShape.append(out.begin() + 2, out.end());
    Value at = ctx.constant(RankedTensorType::get(indexShape, m.i64()), where);
    if (!best) {
      best = value;
      SmallVector<int64_t> images = {out[0], out[1]};
      images.append(spatial, 1);
      index = m.op<AddOp>(
          at, m.constant(std::vector<int64_t>(out[0] * out[1], 0), images));
    } else {
      Value larger = m.op<GreaterOp>(value, best);
      best = m.select(larger, value, best);
      index = m.select(larger, at, index);
    }
    int64_t d = spatial - 1;
    while (d >= 0 && ++tap[d] == w.kernel[d])
      tap[d--] = 0;
    if (d < 0)
      break;
  }
  // Each image's positions follow the images before it.
  int64_t image = ShapedType::getNumElements(in.drop_front(2));
  std::vector<int64_t> offsets(in[0] * in[1]);
  for (int64_t i = 0; i < int64_t(offsets.size()); ++i)
    offsets[i] = i * image;
  SmallVector<int64_t> offsetShape = {in[0], in[1]};
  offsetShape.append(spatial, 1);
  index = m.op<AddOp>(index, m.constant(offsets, offsetShape));
  if (m.failed() || !index)
    return failure();
  return index;
}

FailureOr<PoolWindow> onnx_import::readPoolWindow(NodeContext &ctx, Value x,
                                                  bool average) {
  auto kernel = ctx.intsAttr("kernel_shape");
  if (!kernel) {
    (void)ctx.fail("kernel_shape is required");
    return failure();
  }
  auto window = readWindow(ctx, x, *kernel);
  if (failed(window))
    return failure();
  auto &b = ctx.b();
  PoolWindow pool{*window, {}};
  pool.attrs = {
      b.getNamedAttr("kernel_shape", b.getDenseI64ArrayAttr(window->kernel)),
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(window->strides)),
      b.getNamedAttr("pads", b.getDenseI64ArrayAttr(window->pads)),
      b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(window->dilations)),
      b.getNamedAttr("ceil_mode",
                     b.getBoolAttr(ctx.intAttr("ceil_mode", 0) != 0))};
  if (average) {
    if (ctx.attr("dilations") && ctx.opset() < 19) {
      (void)ctx.fail("dilations on AveragePool need opset 19");
      return failure();
    }
    pool.attrs.push_back(b.getNamedAttr(
        "count_include_pad",
        b.getBoolAttr(ctx.intAttr("count_include_pad", 0) != 0)));
  }
  return pool;
}

template <typename OpTy> static LogicalResult importPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  // MaxPool also takes int8 and uint8 (quantized activations): pooled as
  // float32, which holds them exactly, and cast back.
  Type element = getElementTypeOrSelf(x.getType());
  bool bytes = std::is_same_v<OpTy, MaxPoolOp> && isa<IntegerType>(element) &&
               element.getIntOrFloatBitWidth() == 8;
  if (!bytes && failed(ctx.requireFloat(x)))
    return failure();
  bool withIndices =
      ctx.proto().output_size() > 1 && !ctx.proto().output(1).empty();
  if (withIndices && bytes)
    return ctx.fail("the Indices output of int8 and uint8 MaxPool is not "
                    "supported");
  auto pool = readPoolWindow(ctx, x, std::is_same_v<OpTy, AveragePoolOp>);
  if (failed(pool))
    return failure();
  ArrayRef<NamedAttribute> attrs = pool->attrs;
  auto &b = ctx.b();
  if (withIndices) {
    auto pooled = ctx.create<OpTy>(x, attrs);
    if (failed(pooled))
      return failure();
    auto indices = maxPoolIndices(ctx, x, pool->window, *pooled,
                                  ctx.intAttr("storage_order", 0) != 0);
    if (failed(indices))
      return failure();
    ctx.setOutput(0, *pooled);
    ctx.setOutput(1, *indices);
    return success();
  }
  if (!bytes)
    return setResult(ctx, ctx.create<OpTy>(x, attrs));
  auto type = cast<RankedTensorType>(x.getType());
  Value widened =
      CastOp::create(b, ctx.getLoc(), type.clone(b.getF32Type()), x);
  auto pooled = ctx.create<OpTy>(widened, attrs);
  if (failed(pooled))
    return failure();
  ctx.setOutput(0, CastOp::create(
                       b, ctx.getLoc(),
                       cast<RankedTensorType>(pooled->getType()).clone(element),
                       *pooled));
  return success();
}

/// GlobalAveragePool/GlobalMaxPool are reductions over the spatial dims.
template <typename ReduceTy>
static LogicalResult importGlobalPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  if (rankOf(x) < 3)
    return ctx.fail("input must have rank >= 3");
  auto axes = llvm::to_vector(llvm::seq<int64_t>(2, rankOf(x)));
  auto &b = ctx.b();
  return setResult(ctx,
                   ctx.create<ReduceTy>(
                       x, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes)),
                           b.getNamedAttr("keepdims", b.getBoolAttr(true))}));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// An ONNX Reshape or Flatten: a kiln.reshape even where it changes
/// nothing, so that a model imports to the same graph at every batch
/// (--dynamic-batch compares two); its folder drops it later.
static Value reshapeNode(NodeContext &ctx, Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  return ReshapeOp::create(ctx.b(), ctx.getLoc(), type, x);
}

static LogicalResult importReshape(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::vector<int64_t> target;
  if (ctx.opset() < 5) {
    auto shape = ctx.intsAttr("shape");
    if (!shape)
      return ctx.fail("shape attribute is required");
    target = *shape;
  } else {
    auto shape = ctx.constInts(1);
    if (failed(shape))
      return failure();
    target = *shape;
  }
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  auto inShape = shapeOf(x);
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= inShape.size())
        return ctx.fail("shape entry 0 at index " + Twine(i) +
                        " has no input dim to copy");
      target[i] = inShape[i];
    }
    if (target[i] == -1) {
      if (inferred >= 0)
        return ctx.fail("shape has more than one -1");
      inferred = i;
      continue;
    }
    if (target[i] < 0)
      return ctx.fail("shape entry " + Twine(target[i]) + " is invalid");
    // A product past 64 bits cannot match the input (found by the fuzzer).
    if (__builtin_mul_overflow(known, target[i], &known))
      return ctx.fail("shape entries multiply past 64 bits");
  }
  int64_t total = cast<RankedTensorType>(x.getType()).getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return ctx.fail("cannot infer the -1 dim of the shape");
    target[inferred] = total / known;
  } else if (known != total) {
    return ctx.fail("shape has " + Twine(known) + " elements, input has " +
                    Twine(total));
  }
  ctx.setOutput(0, reshapeNode(ctx, x, target));
  return success();
}

static LogicalResult importFlatten(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = rankOf(x);
  int64_t axis = ctx.intAttr("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.fail("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= shapeOf(x)[d];
  ctx.setOutput(0, reshapeNode(ctx, x, {outer, inner}));
  return success();
}

static FailureOr<std::vector<int64_t>> axesAttrOrInput(NodeContext &ctx,
                                                       int inputSinceOpset) {
  if (ctx.opset() >= inputSinceOpset) {
    if (!ctx.hasInput(1))
      return std::vector<int64_t>{};
    return ctx.constInts(1);
  }
  return ctx.intsAttr("axes").value_or(std::vector<int64_t>{});
}

static LogicalResult importSqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto axes = axesAttrOrInput(ctx, 13);
  if (failed(axes))
    return failure();
  auto normalized = normalizeAxes(ctx, *axes, rankOf(x));
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rankOf(x); ++d) {
    bool listed = llvm::is_contained(*normalized, d);
    if (listed && shapeOf(x)[d] != 1)
      return ctx.fail("cannot squeeze dim " + Twine(d) + " of size " +
                      Twine(shapeOf(x)[d]));
    if (!(listed || (axes->empty() && shapeOf(x)[d] == 1)))
      shape.push_back(shapeOf(x)[d]);
  }
  ctx.setOutput(0, reshapeTo(ctx, x, shape));
  return success();
}

static LogicalResult importUnsqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto axes = axesAttrOrInput(ctx, 13);
  if (failed(axes))
    return failure();
  int64_t outRank = rankOf(x) + axes->size();
  auto normalized = normalizeAxes(ctx, *axes, outRank);
  if (failed(normalized))
    return failure();
  if (normalized->size() != axes->size())
    return ctx.fail("axes repeat");
  SmallVector<int64_t> shape;
  auto inShape = shapeOf(x);
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(llvm::is_contained(*normalized, d) ? 1 : inShape[next++]);
  ctx.setOutput(0, reshapeTo(ctx, x, shape));
  return success();
}

static LogicalResult importTranspose(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  SmallVector<int64_t> perm;
  if (auto given = ctx.intsAttr("perm"))
    perm.assign(given->begin(), given->end());
  else
    for (int64_t d = rankOf(x) - 1; d >= 0; --d)
      perm.push_back(d);
  auto &b = ctx.b();
  return setResult(
      ctx, ctx.create<TransposeOp>(
               x, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
}

static LogicalResult importConcat(NodeContext &ctx) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  if (inputs.empty())
    return ctx.fail("Concat needs at least one input");
  int64_t rank = rankOf(inputs.front());
  int64_t axis = ctx.intAttr("axis", ctx.opset() < 4 ? 1 : 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis out of range");
  auto &b = ctx.b();
  return setResult(
      ctx, ctx.create<ConcatOp>(
               inputs, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

template <typename OpTy> static LogicalResult importSoftmax(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  auto &b = ctx.b();
  if (ctx.opset() >= 13) {
    int64_t axis = ctx.intAttr("axis", -1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return ctx.fail("axis out of range");
    return setResult(
        ctx, ctx.create<OpTy>(
                 x, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
  // Before opset 13 the input is coerced to 2-D at `axis` and normalized
  // over the second dim.
  int64_t axis = ctx.intAttr("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.fail("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= shapeOf(x)[d];
  Value flat = reshapeTo(ctx, x, {outer, inner});
  auto result =
      ctx.create<OpTy>(flat, {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
  if (failed(result))
    return failure();
  ctx.setOutput(0, reshapeTo(ctx, *result, shapeOf(x)));
  return success();
}

/// The reduction of `x` over the axes the run's axes input (a model input)
/// names, where several sets of dims give the declared result
/// (`alternatives`, each reducing other dims; `reduce` computes one): each
/// is computed and the run's values select one. A set's key is the sum of
/// 2^d over its dims d of another size than 1, so the alternatives' keys
/// differ, and the runtime's guard has checked that the values are
/// distinct axes giving the declared shape: their key is one of them.
static FailureOr<Value> reduceOverRunTimeAxes(
    NodeContext &ctx, Value x, ArrayRef<std::vector<int64_t>> alternatives,
    function_ref<FailureOr<Value>(ArrayRef<int64_t>)> reduce) {
  auto &b = ctx.b();
  Type i64 = b.getIntegerType(64);
  int64_t rank = rankOf(x);
  std::vector<double> bits(rank);
  for (int64_t d = 0; d < rank; ++d)
    bits[d] = shapeOf(x)[d] == 1 ? 0 : double(int64_t(1) << d);
  auto keyOf = [&](ArrayRef<int64_t> axes) {
    double key = 0;
    for (int64_t a : axes)
      key += bits[a < 0 ? a + rank : a];
    return key;
  };
  // Gather takes negative axes as ONNX does, from the end.
  Value table = ctx.constant(RankedTensorType::get({rank}, i64), bits);
  auto named =
      ctx.create<GatherOp>(ValueRange{table, ctx.input(1)},
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  if (failed(named))
    return failure();
  auto key = ctx.create<ReduceSumOp>(
      *named, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({0})),
               b.getNamedAttr("keepdims", b.getBoolAttr(false))});
  FailureOr<Value> result = reduce(alternatives.front());
  for (ArrayRef<int64_t> axes : alternatives.drop_front()) {
    FailureOr<Value> other = reduce(axes);
    if (failed(key) || failed(result) || failed(other))
      return failure();
    auto chosen = ctx.create<EqualOp>(ValueRange{
        *key, ctx.constant(RankedTensorType::get({}, i64), {keyOf(axes)})});
    if (failed(chosen))
      return failure();
    result = ctx.create<WhereOp>(ValueRange{*chosen, *other, *result});
  }
  return result;
}

template <typename OpTy>
static LogicalResult importReduce(NodeContext &ctx, int axesInputSince) {
  Value x = ctx.input(0);
  // Sums take signed integers too (they wrap, as onnxruntime's do); the
  // maximum, minimum and product of integers (shape arithmetic's) are
  // computed in float64, exact to 2^53.
  constexpr bool integerThroughDouble = std::is_same_v<OpTy, ReduceMaxOp> ||
                                        std::is_same_v<OpTy, ReduceMinOp> ||
                                        std::is_same_v<OpTy, ReduceProdOp>;
  unsigned dtypes = std::is_same_v<OpTy, ReduceSumOp> || integerThroughDouble
                        ? NodeContext::Float | NodeContext::Int
                        : NodeContext::Float;
  if (!x || failed(ctx.requireDtypes(x, dtypes)))
    return failure();
  Type integerType;
  if (integerThroughDouble && isa<IntegerType>(getElementTypeOrSelf(x))) {
    integerType = getElementTypeOrSelf(x);
    x = castElements(ctx, x, ctx.b().getF64Type());
  }
  auto axes = axesAttrOrInput(ctx, axesInputSince);
  if (failed(axes))
    return failure();
  int64_t rank = rankOf(x);
  bool noopWhenEmpty = ctx.intAttr("noop_with_empty_axes", 0) != 0;
  if (axes->empty() && noopWhenEmpty) {
    ctx.setOutput(0, ctx.input(0));
    return success();
  }
  SmallVector<int64_t> normalized;
  if (axes->empty()) {
    normalized = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  } else {
    auto n = normalizeAxes(ctx, *axes, rank);
    if (failed(n))
      return failure();
    normalized = *n;
  }
  auto &b = ctx.b();
  bool keepdims = ctx.intAttr("keepdims", 1) != 0;
  auto reduce = [&](ArrayRef<int64_t> over) {
    return ctx.create<OpTy>(
        x, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(over)),
            b.getNamedAttr("keepdims", b.getBoolAttr(keepdims))});
  };
  std::vector<std::vector<int64_t>> alternatives =
      ctx.opset() >= axesInputSince ? ctx.axisAlternatives(1)
                                    : std::vector<std::vector<int64_t>>{};
  FailureOr<Value> reduced =
      alternatives.empty()
          ? reduce(normalized)
          : reduceOverRunTimeAxes(ctx, x, alternatives, reduce);
  if (succeeded(reduced) && integerType)
    reduced = castElements(ctx, *reduced, integerType);
  return setResult(ctx, reduced);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

static LogicalResult importConstant(NodeContext &ctx) {
  ConstTensor tensor;
  const auto &node = ctx.proto();
  if (node.attribute_size() != 1)
    return ctx.fail("Constant needs exactly one value attribute");
  const auto &a = node.attribute(0);
  auto scalarOrList = [&](int type, auto values, bool scalar) {
    using T = typename decltype(values)::value_type;
    tensor.onnxType = type;
    if (!scalar)
      tensor.shape = {(int64_t)values.size()};
    tensor.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) // an empty list's data() may be null
      memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  };
  if (a.name() == "value") {
    std::string error;
    if (failed(readTensorBytes(a.t(), tensor, error)))
      return ctx.fail(error);
  } else if (a.name() == "value_float") {
    scalarOrList(onnx::TensorProto::FLOAT, std::vector<float>{a.f()}, true);
  } else if (a.name() == "value_floats") {
    scalarOrList(onnx::TensorProto::FLOAT,
                 std::vector<float>(a.floats().begin(), a.floats().end()),
                 false);
  } else if (a.name() == "value_int") {
    scalarOrList(onnx::TensorProto::INT64, std::vector<int64_t>{a.i()}, true);
  } else if (a.name() == "value_ints") {
    scalarOrList(onnx::TensorProto::INT64,
                 std::vector<int64_t>(a.ints().begin(), a.ints().end()), false);
  } else {
    return ctx.fail("Constant attribute '" + a.name() + "' is not supported");
  }
  std::string error;
  Value value = ctx.createConstant(node.output(0), std::move(tensor), error);
  if (!value)
    return ctx.fail(error);
  ctx.setOutput(0, value);
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void onnx_import::registerElementwiseOps(OpRegistry &registry) {
  // clang-format off
  registry.add("Abs", 6, kMaxOpset, "float and integer", importUnary<AbsOp, NodeContext::Float | NodeContext::Int>);
  registry.add("Acos", 7, kMaxOpset, "", importUnary<AcosOp>);
  registry.add("Acosh", 9, kMaxOpset, "", importUnary<AcoshOp>);
  registry.add("Add", 1, kMaxOpset, "numpy broadcasting (legacy broadcast before 7); float and integer", importBinary<AddOp>);
  registry.add("And", 7, kMaxOpset, "", importCompare<AndOp, NodeContext::Bool>);
  registry.add("ArgMax", 1, kMaxOpset, "keepdims, select_last_index", importArgReduce<ArgMaxOp>);
  registry.add("ArgMin", 1, kMaxOpset, "keepdims, select_last_index", importArgReduce<ArgMinOp>);
  registry.add("Asin", 7, kMaxOpset, "", importUnary<AsinOp>);
  registry.add("Asinh", 9, kMaxOpset, "", importUnary<AsinhOp>);
  registry.add("Atan", 7, kMaxOpset, "", importUnary<AtanOp>);
  registry.add("Atanh", 9, kMaxOpset, "", importUnary<AtanhOp>);
  registry.add("AveragePool", 1, kMaxOpset, "1-D/2-D/3-D; ceil_mode; count_include_pad", importPool<AveragePoolOp>);
  registry.add("BitShift", 11, kMaxOpset, "uint8-64; numpy broadcasting", importBitShift);
  registry.add("Cast", 6, kMaxOpset, "float16/32/64, int8-64, uint8-64, bool", importCast);
  registry.add("CastLike", 15, kMaxOpset, "as Cast", importCastLike);
  registry.add("Ceil", 6, kMaxOpset, "", importUnary<CeilOp>);
  registry.add("Celu", 12, kMaxOpset, "", [](NodeContext &c) { return importAlphaUnary<CeluOp>(c, 1.0f); });
  registry.add("Clip", 6, kMaxOpset, "bounds constant or computed (read at run time)", importClip);
  registry.add("Concat", 4, kMaxOpset, "", importConcat);
  registry.add("Constant", 1, kMaxOpset, "value, value_float(s), value_int(s)", importConstant);
  registry.add("Conv", 1, kMaxOpset, "1-D/2-D/3-D; groups, dilations, auto_pad", importConv);
  registry.add("Cos", 7, kMaxOpset, "", importUnary<CosOp>);
  registry.add("Cosh", 9, kMaxOpset, "", importUnary<CoshOp>);
  registry.add("Div", 1, kMaxOpset, "numpy broadcasting; float and integer", importBinary<DivOp>);
  registry.add("Elu", 6, kMaxOpset, "", [](NodeContext &c) { return importAlphaUnary<EluOp>(c, 1.0f); });
  registry.add("Equal", 7, kMaxOpset, "", importCompare<EqualOp, NodeContext::Any>);
  registry.add("Erf", 9, kMaxOpset, "", importUnary<ErfOp>);
  registry.add("Exp", 6, kMaxOpset, "", importUnary<ExpOp>);
  registry.add("Flatten", 1, kMaxOpset, "", importFlatten);
  registry.add("Floor", 6, kMaxOpset, "", importUnary<FloorOp>);
  registry.add("Gelu", 20, kMaxOpset, "exact and tanh", importGelu);
  registry.add("Gemm", 1, kMaxOpset, "alpha, beta, transA, transB; optional C", importGemm);
  registry.add("GlobalAveragePool", 1, kMaxOpset, "", importGlobalPool<ReduceMeanOp>);
  registry.add("GlobalMaxPool", 1, kMaxOpset, "", importGlobalPool<ReduceMaxOp>);
  registry.add("Greater", 7, kMaxOpset, "", importCompare<GreaterOp, NodeContext::Float | NodeContext::Int | NodeContext::Unsigned>);
  registry.add("GreaterOrEqual", 12, kMaxOpset, "", importCompare<GreaterEqualOp, NodeContext::Float | NodeContext::Int | NodeContext::Unsigned>);
  registry.add("HardSigmoid", 6, kMaxOpset, "", [](NodeContext &c) { return importTwoParam<HardSigmoidOp>(c, 0.2f, "beta", 0.5f); });
  registry.add("HardSwish", 14, kMaxOpset, "", importHardSwish);
  registry.add("Identity", 1, kMaxOpset, "tensors only", importIdentity);
  registry.add("IsNaN", 9, kMaxOpset, "", [](NodeContext &c) {
       Value x = c.input(0);
       if (!x || failed(c.requireFloat(x)))
         return failure();
       return setResult(c, c.create<IsNaNOp>(x));
     });
  registry.add("LeakyRelu", 6, kMaxOpset, "", [](NodeContext &c) { return importAlphaUnary<LeakyReluOp>(c, 0.01f); });
  registry.add("Less", 7, kMaxOpset, "", importCompare<LessOp, NodeContext::Float | NodeContext::Int | NodeContext::Unsigned>);
  registry.add("LessOrEqual", 12, kMaxOpset, "", importCompare<LessEqualOp, NodeContext::Float | NodeContext::Int | NodeContext::Unsigned>);
  registry.add("Log", 6, kMaxOpset, "", importUnary<LogOp>);
  registry.add("LogSoftmax", 1, kMaxOpset, "2-D coercion before opset 13", importSoftmax<LogSoftmaxOp>);
  registry.add("MatMul", 1, kMaxOpset, "batched, broadcasting, 1-D operands", importMatMul);
  registry.addInDomain("com.microsoft", "FusedMatMul", 1, 1, "domain com.microsoft; alpha, transA, transB; not transBatchA or transBatchB", importFusedMatMul);
  registry.addInDomain("com.microsoft", "FastGelu", 1, 1, "domain com.microsoft; GELU's tanh approximation of X + bias", importFastGelu);
  registry.add("Max", 6, kMaxOpset, "variadic; float and integer", [](NodeContext &c) { return importVariadic<MaxOp>(c, false); });
  registry.add("MaxPool", 1, kMaxOpset, "1-D/2-D/3-D; float, int8 and uint8; the Indices output for float", importPool<MaxPoolOp>);
  registry.add("Mean", 6, kMaxOpset, "variadic", [](NodeContext &c) { return importVariadic<AddOp>(c, true); });
  registry.add("Min", 6, kMaxOpset, "variadic; float and integer", [](NodeContext &c) { return importVariadic<MinOp>(c, false); });
  registry.add("Mish", 18, kMaxOpset, "", importUnary<MishOp>);
  registry.add("Mod", 10, kMaxOpset, "integers (fmod 0: sign of the divisor; 1: of the dividend) and float fmod", importMod);
  registry.add("Mul", 1, kMaxOpset, "numpy broadcasting; float and integer", importBinary<MulOp>);
  registry.add("Neg", 6, kMaxOpset, "float and integer", importUnary<NegOp, NodeContext::Float | NodeContext::Int>);
  registry.add("Not", 1, kMaxOpset, "", importUnary<NotOp, NodeContext::Bool>);
  registry.add("Or", 7, kMaxOpset, "", importCompare<OrOp, NodeContext::Bool>);
  registry.add("Pow", 1, kMaxOpset, "float or integer base and exponent", importPow);
  registry.add("PRelu", 6, kMaxOpset, "slope broadcasts (along channels before opset 7)", importPRelu);
  registry.add("Reciprocal", 6, kMaxOpset, "", importUnary<ReciprocalOp>);
  registry.add("ReduceL1", 1, kMaxOpset, "axes input (constant or guarded) from opset 18", [](NodeContext &c) { return importReduce<ReduceL1Op>(c, 18); });
  registry.add("ReduceL2", 1, kMaxOpset, "axes input (constant or guarded) from opset 18", [](NodeContext &c) { return importReduce<ReduceL2Op>(c, 18); });
  registry.add("ReduceLogSum", 1, kMaxOpset, "axes input (constant or guarded) from opset 18", [](NodeContext &c) { return importReduce<ReduceLogSumOp>(c, 18); });
  registry.add("ReduceLogSumExp", 1, kMaxOpset, "axes input (constant or guarded) from opset 18", [](NodeContext &c) { return importReduce<ReduceLogSumExpOp>(c, 18); });
  registry.add("ReduceMax", 1, kMaxOpset, "axes input (constant or guarded) from opset 18; signed integers computed in float64 (exact to 2^53)", [](NodeContext &c) { return importReduce<ReduceMaxOp>(c, 18); });
  registry.add("ReduceMean", 1, kMaxOpset, "axes input (constant or guarded) from opset 18", [](NodeContext &c) { return importReduce<ReduceMeanOp>(c, 18); });
  registry.add("ReduceMin", 1, kMaxOpset, "axes input (constant or guarded) from opset 18; signed integers computed in float64 (exact to 2^53)", [](NodeContext &c) { return importReduce<ReduceMinOp>(c, 18); });
  registry.add("ReduceProd", 1, kMaxOpset, "axes input (constant or guarded) from opset 18; signed integers computed in float64 (exact to 2^53)", [](NodeContext &c) { return importReduce<ReduceProdOp>(c, 18); });
  registry.add("ReduceSum", 1, kMaxOpset, "axes input (constant or guarded) from opset 13; float and integer", [](NodeContext &c) { return importReduce<ReduceSumOp>(c, 13); });
  registry.add("ReduceSumSquare", 1, kMaxOpset, "axes input (constant or guarded) from opset 18", [](NodeContext &c) { return importReduce<ReduceSumSquareOp>(c, 18); });
  registry.add("Relu", 6, kMaxOpset, "", importUnary<ReluOp>);
  registry.add("Reshape", 1, kMaxOpset, "constant or guarded shape; 0, -1, allowzero", importReshape);
  registry.add("Round", 11, kMaxOpset, "half to even", importUnary<RoundOp>);
  registry.add("Selu", 6, kMaxOpset, "", [](NodeContext &c) { return importTwoParam<SeluOp>(c, 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f); });
  registry.add("Sigmoid", 6, kMaxOpset, "", importUnary<SigmoidOp>);
  registry.add("Sign", 9, kMaxOpset, "float and integer", importUnary<SignOp, NodeContext::Float | NodeContext::Int>);
  registry.add("Sin", 7, kMaxOpset, "", importUnary<SinOp>);
  registry.add("Sinh", 9, kMaxOpset, "", importUnary<SinhOp>);
  registry.add("Softmax", 1, kMaxOpset, "2-D coercion before opset 13", importSoftmax<SoftmaxOp>);
  registry.add("Softplus", 1, kMaxOpset, "", importUnary<SoftplusOp>);
  registry.add("Softsign", 1, kMaxOpset, "", importUnary<SoftsignOp>);
  registry.add("Sqrt", 6, kMaxOpset, "", importUnary<SqrtOp>);
  registry.add("Squeeze", 1, kMaxOpset, "axes input (constant or guarded) from opset 13", importSqueeze);
  registry.add("Sub", 1, kMaxOpset, "numpy broadcasting; float and integer", importBinary<SubOp>);
  registry.add("Sum", 6, kMaxOpset, "variadic; float and integer", [](NodeContext &c) { return importVariadic<AddOp>(c, false); });
  registry.add("Tan", 7, kMaxOpset, "", importUnary<TanOp>);
  registry.add("Tanh", 6, kMaxOpset, "", importUnary<TanhOp>);
  registry.add("ThresholdedRelu", 10, kMaxOpset, "", [](NodeContext &c) { return importAlphaUnary<ThresholdedReluOp>(c, 1.0f); });
  registry.add("Transpose", 1, kMaxOpset, "", importTranspose);
  registry.add("Unsqueeze", 1, kMaxOpset, "axes input (constant or guarded) from opset 13", importUnsqueeze);
  registry.add("Where", 9, kMaxOpset, "", importWhere);
  registry.add("Xor", 7, kMaxOpset, "", importCompare<XorOp, NodeContext::Bool>);
  // clang-format on
}

/// Whether a row of the default domain imports `opType`.
static bool hasHandler(StringRef opType) {
  int minOpset, maxOpset;
  return opRegistry().has("", opType, minOpset, maxOpset);
}

std::vector<SupportedOp> kiln::getSupportedOps() {
  std::vector<SupportedOp> ops;
  for (const OpHandler &h : opRegistry().all())
    ops.push_back({h.opType, h.minOpset, h.maxOpset, h.notes});
  // Ops evaluated at import time when their inputs are constants.
  for (const std::string &op : constantEvaluableOps())
    if (!hasHandler(op))
      ops.push_back({op, 1, kMaxOpset,
                     "compile-time constants only (shape "
                     "arithmetic is folded at import)"});
  ops.push_back({"Shape", 1, kMaxOpset, "folded from the static shape"});
  ops.push_back({"Size", 1, kMaxOpset, "folded from the static shape"});
  ops.push_back({"If", 1, kMaxOpset,
                 "condition known at compile time: the taken branch is "
                 "inlined; else both branches run and each output is "
                 "selected (branches giving it the same type); a branch "
                 "that does not compile at the model's shapes while the "
                 "other does is left out, and a run taking it fails"});
  ops.push_back({"Scan", 8, kMaxOpset,
                 "unrolled over its steps (the scan axis's static length), "
                 "up to 4096 body nodes; no sequence_lens"});
  ops.push_back({"Loop", 1, kMaxOpset,
                 "unrolled over a constant trip count or its scan outputs' "
                 "declared length, up to 4096 body nodes; iterations past "
                 "the trip count or condition leave the state as it is"});
  llvm::sort(ops, [](const SupportedOp &a, const SupportedOp &b) {
    return a.opType < b.opType;
  });
  ops.erase(std::unique(ops.begin(), ops.end(),
                        [](const SupportedOp &a, const SupportedOp &b) {
                          return a.opType == b.opType;
                        }),
            ops.end());
  return ops;
}
