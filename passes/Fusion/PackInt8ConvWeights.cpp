//===- PackInt8ConvWeights.cpp - uint8 x int8 convolutions as quad dots ---===//
//
// A QDQ model's convolution reads dequantized activations, (X - z) * s of
// uint8 X, and weights the importer dequantized, Q * scale of int8 Q.
// Computed as it is imported, every product is a widening and an FMA on
// float32 values. x86's `vpdpbusd` adds the four products of 4 uint8 by
// 4 int8 values to each of 16 int32 lanes: 64 products per instruction.
//
// This pass gives the convolution the operands that instruction reads:
// X's bytes with 4 channels side by side for every pixel,
// Xq [N, C/4, H, W * 4], and Q likewise for every tap, Wq [F, C/4, KH,
// KW * 4]. A stride-1 convolution of X by Q is then a convolution of Xq
// by Wq with strides [1, 4]: output x's taps read Xq from 4 * x on, 4
// channels' bytes at a time, 16 outputs' 64 contiguous bytes. A stride-s
// convolution's s column phases become rows of Xq (and of Wq), so that it
// too reads its rows 4 bytes an output. kiln-contract-int8-conv-quads
// lowers it to `vpdpbusd`. The zero point's share of every sum,
// z * sum(Q[f]), is subtracted after, and the scales multiplied once.
//
// Rows of vectors waste lanes on a narrow map (7 of 16 on a 7x7 one).
// Where rows fill less than half a vector, X's bytes are cut into each
// output's window instead, patches [N, Ho * Wo,
// KH * KW * C], and multiplied as a matmul by the weights as [KH * KW * C,
// F]; kiln-pack-int8-matmul-weights, which runs after, packs that matmul,
// whose vectors lie along the filters.
//
// A dynamically quantized model's ConvInteger is the same convolution
// without scales, of X minus a zero point known only at run time, by
// uint8 weights minus theirs: integers of 9 bits. Each filter is moved
// into int8 by an offset, whose share of the sums is the offset times
// each window's sum of X's bytes (a convolution by one filter of ones).
// Its result is the exact integer sum, in float64 where float32 could
// round a partial sum.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"
#include "Int8Weights.h"

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include <map>
#include <tuple>

namespace kiln {
#define GEN_PASS_DEF_PACKINT8CONVWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The largest count of products per output whose sums of uint8 x int8
/// products int32 holds.
constexpr int64_t kMaxTaps = 65536;
/// The largest stride taken: a stride-s convolution reads s phases.
constexpr int64_t kMaxStride = 4;

/// A 2-D convolution of uint8 activations minus a zero point, scaled or
/// not, by constant weights.
struct Int8Conv {
  ConvOp conv;
  RankedTensorType resultType; ///< float32 or float64 [N, F, Ho, Wo]
  Value activations;           ///< X, uint8 [N, C, H, W]
  float zeroPoint = 0;         ///< z, an integer in [0, 255], when constant
  Value zeroPointBytes;        ///< else z: one uint8 known at run time
  float activationScale = 1;   ///< s
  /// No s: the activations are integers (ConvInteger, QLinearConv), and
  /// with integer weights the sums are integers, exact.
  bool unscaled = false;
  int64_t stride = 1;
  SmallVector<int64_t, 4> pads; ///< begin H, W, end H, W
  /// Pads (zeros: X's zero point) and slices of the dequantized values
  /// between them and the convolution, outermost first: applied to X's
  /// bytes instead.
  SmallVector<Operation *> moves;
  RankedTensorType inputType;   ///< the convolution's input
  Operation *weights = nullptr; ///< a constant [F, C, KH, KW]
  ElementsAttr weightValue;     ///< its value, of the result's type
  RankedTensorType weightType;  ///< its type
  ElementsAttr weightScales;    ///< Q * scale: one, or one per filter
  Operation *weightScaling = nullptr;
  SmallVector<Operation *> dequantizeOps; ///< from the input back, to go
};

/// A kiln.pad with zeros, a kiln.slice or a max pooling, of the spatial
/// dims only.
bool isSpatialMove(Operation *op) {
  // The largest of dequantized values is the dequantized largest byte
  // (the scale is positive).
  if (auto pool = dyn_cast_or_null<MaxPoolOp>(op))
    return !pool.getChannelsLast();
  if (auto pad = dyn_cast_or_null<PadOp>(op)) {
    ArrayRef<int64_t> pads = pad.getPads();
    return pad.getMode() == "constant" &&
           pad.getValue().convertToDouble() == 0 && pads.size() == 8 &&
           !pads[0] && !pads[1] && !pads[4] && !pads[5];
  }
  auto slice = dyn_cast_or_null<SliceOp>(op);
  if (!slice)
    return false;
  ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
  auto in = cast<RankedTensorType>(slice.getInput().getType());
  auto out = cast<RankedTensorType>(slice.getType());
  return starts.size() == 4 && !starts[0] && !starts[1] && steps[0] == 1 &&
         steps[1] == 1 && steps[2] > 0 && steps[3] > 0 &&
         in.getDimSize(0) == out.getDimSize(0) &&
         in.getDimSize(1) == out.getDimSize(1);
}

/// The weights: a constant of the result's type, or (float32) Q * scale
/// of constants (the importer left a large DequantizeLinear to a kernel),
/// scale one value or one per filter.
bool matchWeights(Int8Conv &match, Value weight) {
  if (auto mul = weight.getDefiningOp<MulOp>()) {
    auto scales = mul.getRhs().getDefiningOp<ConstantOp>();
    auto type = cast<RankedTensorType>(weight.getType());
    auto scaleType = scales ? dyn_cast<RankedTensorType>(scales.getType())
                            : RankedTensorType();
    if (!scaleType || !scaleType.getElementType().isF32() ||
        mul.getLhs().getType() != weight.getType() ||
        !(scaleType.getNumElements() == 1 ||
          (scaleType.getRank() == 4 &&
           scaleType.getDimSize(0) == type.getDimSize(0) &&
           scaleType.getNumElements() == type.getDimSize(0))))
      return false;
    match.weightScales = scales.getValue();
    match.weightScaling = mul;
    weight = mul.getLhs();
  }
  auto constant = weight.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  match.weights = constant;
  match.weightValue = constant.getValue();
  match.weightType = cast<RankedTensorType>(constant.getType());
  return match.weightType.getElementType() ==
             match.resultType.getElementType() &&
         (!match.weightScales || match.weightType.getElementType().isF32());
}

/// X minus its zero point: cast(X) - z of a constant z, or of z known at
/// run time (cast(Z) of one uint8 Z: DynamicQuantizeLinear's), or cast(X).
bool matchCentered(Int8Conv &match, Value input) {
  if (auto sub = input.getDefiningOp<SubOp>()) {
    if (sub.getLhs().getType() != input.getType())
      return false;
    if (std::optional<float> zero = scalarConstant(sub.getRhs())) {
      if (!(*zero >= 0 && *zero <= 255) || *zero != std::nearbyint(*zero))
        return false;
      match.zeroPoint = *zero;
    } else {
      auto zeroType = cast<RankedTensorType>(sub.getRhs().getType());
      match.zeroPointBytes = uint8Source(sub.getRhs());
      if (!match.zeroPointBytes || !zeroType.hasStaticShape() ||
          zeroType.getNumElements() != 1 ||
          zeroType.getElementType() != match.resultType.getElementType())
        return false;
    }
    match.dequantizeOps.push_back(sub);
    input = sub.getLhs();
  }
  match.activations = uint8Source(input);
  if (!match.activations || getElementTypeOrSelf(input.getType()) !=
                                match.resultType.getElementType())
    return false;
  match.dequantizeOps.push_back(input.getDefiningOp());
  return true;
}

/// The conv's input as (cast(X) [- z]) [* s], padded with zeros and
/// sliced or not.
std::optional<Int8Conv> matchInt8Conv(ConvOp conv) {
  Int8Conv match;
  match.conv = conv;
  auto result = dyn_cast<RankedTensorType>(conv.getType());
  ArrayRef<int64_t> strides = conv.getStrides();
  if (!result || result.getRank() != 4 || !result.hasStaticShape() ||
      !(result.getElementType().isF32() || result.getElementType().isF64()) ||
      conv.getGroup() != 1 || conv.getChannelsLast() ||
      strides[0] != strides[1] || strides[0] > kMaxStride ||
      !llvm::all_of(conv.getDilations(), [](int64_t d) { return d == 1; }))
    return std::nullopt;
  match.resultType = result;
  match.inputType = cast<RankedTensorType>(conv.getInput().getType());
  match.stride = strides[0];
  match.pads.assign(conv.getPads().begin(), conv.getPads().end());
  Value input = conv.getInput();
  while (isSpatialMove(input.getDefiningOp())) {
    match.moves.push_back(input.getDefiningOp());
    match.dequantizeOps.push_back(input.getDefiningOp());
    input = input.getDefiningOp()->getOperand(0);
  }
  match.unscaled = true;
  if (auto mul = input.getDefiningOp<MulOp>()) {
    std::optional<float> scale = scalarConstant(mul.getRhs());
    if (!scale || !(*scale > 0) || mul.getLhs().getType() != input.getType())
      return std::nullopt;
    match.activationScale = *scale;
    match.unscaled = false;
    match.dequantizeOps.push_back(mul);
    input = mul.getLhs();
  }
  if (!matchCentered(match, input) || !matchWeights(match, conv.getWeight()))
    return std::nullopt;
  if (!match.weightType.hasStaticShape() || match.weightType.getRank() != 4 ||
      match.weightType.getNumElements() / match.weightType.getDimSize(0) >
          kMaxTaps)
    return std::nullopt;
  return match;
}

/// The channels padded to a multiple of 4.
int64_t quadChannels(int64_t c) { return llvm::alignTo(c, kQuadDepth); }

/// ceil(a / b).
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The largest patches made, in bytes: they are written and read once.
constexpr int64_t kMaxPatchBytes = 4 << 20;
/// The fewest weights of a matmul of patches: as many as
/// kiln-pack-int8-matmul-weights packs by default.
constexpr int64_t kMinPatchWeights = 16384;

/// Whether `match` is computed as a matmul of patches: its output rows
/// fill less than half a vector (a 1x1's contiguous rows are one row
/// already), it has filters enough for a vector, and its patches are of a
/// bounded size. Wider rows keep the quads: the patches' copy costs more
/// than the lanes it saves there.
bool prefersPatches(const Int8Conv &match) {
  RankedTensorType weights = match.weightType;
  int64_t filters = weights.getDimSize(0);
  int64_t taps = weights.getDimSize(2) * weights.getDimSize(3);
  int64_t depth = quadChannels(weights.getDimSize(1)) * taps;
  int64_t outputs = match.resultType.getNumElements() / filters;
  return 2 * match.resultType.getDimSize(3) < kQuadLanes && taps > 1 &&
         filters >= kQuadLanes && filters * depth >= kMinPatchWeights &&
         outputs * depth <= kMaxPatchBytes;
}

/// A convolution's weights as integers: W[f] = (Q[f] + offset[f]) *
/// scale[f] for int8 Q.
struct IntegerWeights {
  ElementsAttr q;                ///< Q, [F, C, KH, KW] float32 values
  std::vector<float> scales;     ///< one per filter
  std::vector<float> offsets;    ///< one per filter, zeros for int8 W
  std::vector<double> sums;      ///< sum(Q[f] + offset[f]) per filter
  std::vector<double> magnitude; ///< sum(|Q[f]|) per filter
  /// Whether the weights are integers (every scale 1, none folded).
  bool integers = false;
  bool hasOffsets() const {
    return llvm::any_of(offsets, [](float c) { return c != 0; });
  }
};

struct PackInt8ConvWeightsPass
    : public kiln::impl::PackInt8ConvWeightsBase<PackInt8ConvWeightsPass> {
  using Base::Base;

  /// The weights as integers (integerWeights), read once per constant.
  DenseMap<Operation *, std::optional<IntegerWeights>> integerCopies;
  const std::optional<IntegerWeights> &integerWeights(const Int8Conv &match) {
    auto [it, inserted] =
        integerCopies.try_emplace(match.weights, std::nullopt);
    if (inserted)
      it->second = readIntegerWeights(match);
    return it->second;
  }

  /// Q, the scales and the offsets of the weights: the weights themselves
  /// when they are int8 integers or Q * scale was not folded; integers
  /// moved into int8 by an offset per filter; else the int8 grid they lie
  /// on (float32 only). None when there is no such form.
  static std::optional<IntegerWeights>
  readIntegerWeights(const Int8Conv &match) {
    int64_t f = match.weightType.getDimSize(0);
    int64_t perFilter = match.weightType.getNumElements() / f;
    ElementsAttr value = match.weightValue;
    FailureOr<std::vector<float>> values = readFloatConstant(value);
    if (failed(values))
      return std::nullopt;
    IntegerWeights weights;
    weights.q = value;
    weights.scales.assign(f, 1.0f);
    weights.offsets.assign(f, 0.0f);
    if (match.weightScales) {
      FailureOr<std::vector<float>> scales =
          readFloatConstant(match.weightScales);
      if (failed(scales) || !holdsInt8(*values))
        return std::nullopt;
      weights.scales = scales->size() == 1
                           ? std::vector<float>(f, scales->front())
                           : std::move(*scales);
    } else if (std::optional<std::vector<float>> offsets = int8Offsets(
                   *values, perFilter, f,
                   [&](int64_t i, int64_t g) { return g * perFilter + i; })) {
      weights.integers = true;
      weights.offsets = std::move(*offsets);
    } else if (std::optional<std::vector<float>> scales = int8Scales(
                   *values, perFilter, f,
                   [&](int64_t i, int64_t g) { return g * perFilter + i; });
               scales && match.resultType.getElementType().isF32()) {
      weights.scales = std::move(*scales);
    } else {
      return std::nullopt;
    }
    // Q is stored as float32 values for the packing to read.
    bool rewritten = weights.hasOffsets() || !weights.integers ||
                     !match.weightType.getElementType().isF32();
    weights.sums.assign(f, 0.0);
    weights.magnitude.assign(f, 0.0);
    for (int64_t i = 0; i < int64_t(values->size()); ++i) {
      int64_t filter = i / perFilter;
      float &v = (*values)[i];
      if (!match.weightScales)
        v = std::nearbyint(double(v) / weights.scales[filter]) -
            weights.offsets[filter];
      weights.sums[filter] += double(v) + weights.offsets[filter];
      weights.magnitude[filter] += std::fabs(v);
    }
    if (rewritten && !match.weightScales)
      weights.q = DenseElementsAttr::get(
          RankedTensorType::get(
              match.weightType.getShape(),
              Float32Type::get(match.weightType.getContext())),
          ArrayRef<float>(*values));
    return weights;
  }

  /// The type the quads' convolution sums in: float64 for float64
  /// convolutions, and for integer ones whose partial sums (of products
  /// with X's bytes, not X - z) may reach 2^24; else float32.
  static FloatType sumType(const Int8Conv &match,
                           const IntegerWeights &weights) {
    MLIRContext *context = match.resultType.getContext();
    if (match.resultType.getElementType().isF64())
      return Float64Type::get(context);
    if (!match.unscaled || !weights.integers)
      return Float32Type::get(context);
    int64_t perFilter =
        match.weightType.getNumElements() / match.weightType.getDimSize(0);
    double zero = match.zeroPointBytes ? 255 : match.zeroPoint;
    for (size_t f = 0; f < weights.sums.size(); ++f) {
      double bound = 255 * (weights.magnitude[f] +
                            std::fabs(weights.offsets[f]) * perFilter) +
                     zero * std::fabs(weights.sums[f]);
      if (bound >= kExactFloat32)
        return Float64Type::get(context);
    }
    return Float32Type::get(context);
  }

  /// Wq[f, q, s * i + ph, 4 * j + t] = Q[f, 4q + t, i, s * j + ph]: the
  /// element of Q [F, C, KH, KW] that element i of Wq [F, C'/4, s * KH,
  /// 4 * ceil(KW / s)] holds, or -1 for padding.
  static int64_t quadSource(ArrayRef<int64_t> q, int64_t stride,
                            ArrayRef<int64_t> quads, int64_t i) {
    int64_t c = q[1], kh = q[2], kw = q[3];
    int64_t rows = quads[2], row = quads[3], count = quads[1];
    int64_t t = i % kQuadDepth, j = (i % row) / kQuadDepth;
    int64_t tap = (i / row) % rows, quad = (i / (row * rows)) % count;
    int64_t filter = i / (row * rows * count);
    int64_t channel = quad * kQuadDepth + t;
    int64_t y = tap / stride, x = stride * j + tap % stride;
    if (channel >= c || x >= kw)
      return -1;
    return ((filter * c + channel) * kh + y) * kw + x;
  }

  /// The quads' shape for weights of `type` [F, C, KH, KW] at `stride`.
  static SmallVector<int64_t, 4> quadShape(RankedTensorType type,
                                           int64_t stride) {
    return {type.getDimSize(0), quadChannels(type.getDimSize(1)) / kQuadDepth,
            stride * type.getDimSize(2),
            kQuadDepth * ceilDiv(type.getDimSize(3), stride)};
  }

  /// Q as int8 quads [F, C'/4, s * KH, 4 * ceil(KW / s)] for stride s.
  DenseMap<std::pair<Operation *, int64_t>, Value> quadWeightCopies;
  Value quadWeights(const Int8Conv &match, const IntegerWeights &weights) {
    auto [it, inserted] =
        quadWeightCopies.try_emplace({match.weights, match.stride}, Value());
    if (!inserted)
      return it->second;
    SmallVector<int64_t, 4> shape = quadShape(match.weightType, match.stride);
    OpBuilder builder(match.weights);
    builder.setInsertionPointAfter(match.weights);
    FailureOr<ElementsAttr> packedQuads = narrowIntegerValuedConstant(
        weights.q, builder.getIntegerType(8), shape,
        [&](int64_t i) {
          return quadSource(match.weightType.getShape(), match.stride, shape,
                            i);
        },
        ".quads");
    if (failed(packedQuads))
      return Value();
    return it->second = ConstantOp::create(builder, match.weights->getLoc(),
                                           *packedQuads);
  }

  /// One filter of ones over the weights' real channels and taps, as
  /// quads: convolved with Xq, it sums each output's window of X's bytes.
  static Value onesQuads(OpBuilder &builder, Location loc,
                         const Int8Conv &match) {
    SmallVector<int64_t, 4> shape = quadShape(match.weightType, match.stride);
    shape[0] = 1;
    auto type = RankedTensorType::get(shape, builder.getIntegerType(8));
    std::vector<int8_t> ones(type.getNumElements());
    for (int64_t i = 0; i < int64_t(ones.size()); ++i)
      ones[i] =
          quadSource(match.weightType.getShape(), match.stride, shape, i) >= 0;
    return ConstantOp::create(
        builder, loc, DenseElementsAttr::get(type, ArrayRef<int8_t>(ones)));
  }

  /// X moved as the dequantized values were, padded with z for the
  /// convolution (its padding, the channels to a multiple of 4, the
  /// columns to a multiple of the stride s), and laid out as Xq [N, C'/4,
  /// H' * s, W' / s * 4]: Xq[n, q, s * y + ph, 4 * x + t] = X[n, 4q + t,
  /// y, s * x + ph]. Made once for all the convolutions that read the same
  /// bytes with the same stride and pads (a 1x1 convolution and the
  /// shortcut's beside it).
  using QuadBytesKey =
      std::tuple<const void *, int64_t, int64_t, int64_t, int64_t, int64_t>;
  std::map<QuadBytesKey, Value> quadCopies;
  Value quadBytes(OpBuilder &builder, Location loc, const Int8Conv &match) {
    ArrayRef<int64_t> pads = match.pads;
    QuadBytesKey key{movedActivations(match).getAsOpaquePointer(),
                     match.stride,
                     pads[0],
                     pads[1],
                     pads[2],
                     pads[3]};
    auto [it, inserted] = quadCopies.try_emplace(key, Value());
    if (inserted)
      it->second = layQuadBytes(builder, loc, match);
    return it->second;
  }

  /// The ops that make quadBytes' Xq, at the builder's point.
  Value layQuadBytes(OpBuilder &builder, Location loc, const Int8Conv &match) {
    RankedTensorType input = match.inputType;
    int64_t stride = match.stride;
    int64_t w = input.getDimSize(3) + match.pads[1] + match.pads[3];
    int64_t phaseColumns = ceilDiv(w, stride);
    Value bytes = paddedBytes(builder, loc, match, phaseColumns * stride - w);
    auto type = cast<RankedTensorType>(bytes.getType());
    int64_t n = type.getDimSize(0), channels = type.getDimSize(1);
    int64_t h = type.getDimSize(2);
    int64_t quads = channels / kQuadDepth;
    Value split = ReshapeOp::create(
        builder, loc,
        type.clone({n, quads, kQuadDepth, h, phaseColumns, stride}), bytes);
    Value interleaved = TransposeOp::create(
        builder, loc,
        type.clone({n, quads, h, stride, phaseColumns, kQuadDepth}), split,
        builder.getDenseI64ArrayAttr({0, 1, 3, 5, 4, 2}));
    return ReshapeOp::create(
        builder, loc,
        type.clone({n, quads, h * stride, phaseColumns * kQuadDepth}),
        interleaved);
  }

  /// The sum of each output's window of X's padded bytes, float32 [N, 1,
  /// Ho, Wo] (at most 255 * 2^16: exact), for the convolutions whose
  /// weights take offsets; once per Xq and window.
  std::map<std::tuple<const void *, int64_t, int64_t>, Value> windowSumCopies;
  Value windowSums(OpBuilder &builder, Location loc, const Int8Conv &match,
                   Value bytes) {
    int64_t kh = match.weightType.getDimSize(2);
    int64_t kw = match.weightType.getDimSize(3);
    auto [it, inserted] = windowSumCopies.try_emplace(
        {bytes.getAsOpaquePointer(), kh, kw}, Value());
    if (!inserted)
      return it->second;
    auto f32 = builder.getF32Type();
    Value ones = onesQuads(builder, loc, match);
    auto bytesType = cast<RankedTensorType>(bytes.getType());
    auto onesType = cast<RankedTensorType>(ones.getType());
    SmallVector<int64_t> shape(match.resultType.getShape());
    shape[1] = 1;
    return it->second = ConvOp::create(
               builder, loc, RankedTensorType::get(shape, f32),
               CastOp::create(builder, loc, bytesType.clone(f32), bytes),
               CastOp::create(builder, loc, onesType.clone(f32), ones), Value(),
               builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
               builder.getDenseI64ArrayAttr(
                   {match.stride * match.stride, kQuadDepth}),
               builder.getDenseI64ArrayAttr({1, 1}),
               builder.getI64IntegerAttr(1), UnitAttr());
  }

  /// `bytes` padded by `pads` (begin and end of every dim) to `type`,
  /// with z: a constant; or Z known at run time, as (bytes - Z) padded
  /// with 0, plus Z, in uint8's wrapping arithmetic (the subtraction joins
  /// the bytes' kernel, the addition the padding's).
  static Value padWithZeroPoint(OpBuilder &builder, Location loc,
                                const Int8Conv &match, RankedTensorType type,
                                Value bytes, ArrayRef<int64_t> pads) {
    Value zero = match.zeroPointBytes;
    if (zero)
      bytes = SubOp::create(builder, loc, bytes.getType(), bytes, zero);
    Value padded = PadOp::create(
        builder, loc, type, bytes, builder.getDenseI64ArrayAttr(pads),
        builder.getStringAttr("constant"),
        builder.getF64FloatAttr(zero ? 0 : match.zeroPoint));
    return zero ? AddOp::create(builder, loc, type, padded, zero) : padded;
  }

  /// A max pooling's padding applied to the `bytes` it pools, with their
  /// smallest value (every window holds one of them): the kernel pads a
  /// quarter of the bytes a padding of the widened values writes, and
  /// pools them with the widening in its loop.
  static Value padForMaxPool(OpBuilder &builder, Location loc, MaxPoolOp pool,
                             Value bytes) {
    ArrayRef<int64_t> pads = pool.getPads();
    if (llvm::all_of(pads, [](int64_t pad) { return pad == 0; }))
      return bytes;
    auto type = cast<RankedTensorType>(bytes.getType());
    int64_t spatial = pads.size() / 2;
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<int64_t> allPads(2 * type.getRank(), 0);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t dim = type.getRank() - spatial + i;
      allPads[dim] = pads[i];
      allPads[type.getRank() + dim] = pads[spatial + i];
      shape[dim] += pads[i] + pads[spatial + i];
    }
    double smallest = type.getElementType().isUnsignedInteger() ? 0 : -128;
    return PadOp::create(builder, loc, type.clone(shape), bytes,
                         builder.getDenseI64ArrayAttr(allPads),
                         builder.getStringAttr("constant"),
                         builder.getF64FloatAttr(smallest));
  }

  /// What `move` does to the dequantized values, done to their `bytes`,
  /// once for all the convolutions that read it: a pad with zeros pads
  /// with the zero point, and a max pooling pools the bytes' values
  /// (widened: pooling takes floats).
  DenseMap<Operation *, Value> movedCopies;
  Value movedBytes(Operation *move, Value bytes, const Int8Conv &match) {
    auto [it, inserted] = movedCopies.try_emplace(move, Value());
    if (!inserted)
      return it->second;
    OpBuilder builder(move->getContext());
    builder.setInsertionPointAfter(move);
    Location loc = withoutOnnxValues(move->getLoc());
    auto type = cast<RankedTensorType>(move->getResult(0).getType());
    Type byte = getElementTypeOrSelf(bytes.getType());
    if (auto pad = dyn_cast<PadOp>(move))
      return it->second = padWithZeroPoint(
                 builder, loc, match, type.clone(byte), bytes, pad.getPads());
    if (auto pool = dyn_cast<MaxPoolOp>(move))
      bytes = padForMaxPool(builder, loc, pool, bytes);
    Operation *copy = builder.clone(*move);
    copy->setLoc(loc);
    if (auto pool = dyn_cast<MaxPoolOp>(copy)) {
      pool.setPadsAttr(builder.getDenseI64ArrayAttr(
          SmallVector<int64_t>(pool.getPads().size(), 0)));
      auto input = cast<RankedTensorType>(bytes.getType());
      copy->setOperand(0, CastOp::create(builder, loc,
                                         input.clone(type.getElementType()),
                                         bytes));
      copy->moveAfter(copy->getOperand(0).getDefiningOp());
      builder.setInsertionPointAfter(copy);
      return it->second = CastOp::create(builder, loc, type.clone(byte),
                                         copy->getResult(0));
    }
    copy->setOperand(0, bytes);
    copy->getResult(0).setType(type.clone(byte));
    return it->second = copy->getResult(0);
  }

  /// X's bytes moved as the dequantized values were.
  Value movedActivations(const Int8Conv &match) {
    Value bytes = match.activations;
    for (Operation *move : llvm::reverse(match.moves))
      bytes = movedBytes(move, bytes, match);
    return bytes;
  }

  /// X moved as the dequantized values were and padded with z for the
  /// convolution (channels to a multiple of 4), as [N, C', H', W'].
  Value paddedBytes(OpBuilder &builder, Location loc, const Int8Conv &match,
                    int64_t extraColumns) {
    Value bytes = movedActivations(match);
    auto type = cast<RankedTensorType>(bytes.getType());
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    ArrayRef<int64_t> pads = match.pads;
    int64_t h = type.getDimSize(2) + pads[0] + pads[2];
    int64_t w = type.getDimSize(3) + pads[1] + pads[3] + extraColumns;
    int64_t channels = quadChannels(c);
    if (channels == c && !extraColumns &&
        llvm::all_of(pads, [](int64_t p) { return p == 0; }))
      return bytes;
    return padWithZeroPoint(builder, loc, match,
                            type.clone({n, channels, h, w}), bytes,
                            {0, 0, pads[0], pads[1], 0, channels - c, pads[2],
                             pads[3] + extraColumns});
  }

  /// Each output's window of X's padded bytes, taps outer and channels
  /// inner: patches [N, Ho * Wo, KH * KW * C'], where
  /// patches[n, y * Wo + x, (i * KW + j) * C' + c] =
  /// X'[n, c, s * y + i, s * x + j]. X' is made channels-last first, so
  /// that each tap's slice and the stacking copy whole pixels.
  Value patchBytes(OpBuilder &builder, Location loc, const Int8Conv &match) {
    Value bytes = paddedBytes(builder, loc, match, 0);
    auto type = cast<RankedTensorType>(bytes.getType());
    RankedTensorType result = match.resultType;
    RankedTensorType weights = match.weightType;
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    int64_t h = type.getDimSize(2), w = type.getDimSize(3);
    int64_t ho = result.getDimSize(2), wo = result.getDimSize(3);
    int64_t kh = weights.getDimSize(2), kw = weights.getDimSize(3);
    int64_t stride = match.stride;
    Value pixels =
        TransposeOp::create(builder, loc, type.clone({n, h, w, c}), bytes,
                            builder.getDenseI64ArrayAttr({0, 2, 3, 1}));
    SmallVector<Value> taps;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        Value tap = SliceOp::create(
            builder, loc, type.clone({n, ho, wo, c}), pixels,
            builder.getDenseI64ArrayAttr({0, i, j, 0}),
            builder.getDenseI64ArrayAttr({1, stride, stride, 1}));
        taps.push_back(ReshapeOp::create(builder, loc,
                                         type.clone({n, ho, wo, 1, c}), tap));
      }
    int64_t count = kh * kw;
    Value windows =
        ConcatOp::create(builder, loc, type.clone({n, ho, wo, count, c}), taps,
                         builder.getI64IntegerAttr(3));
    return ReshapeOp::create(builder, loc, type.clone({n, ho * wo, count * c}),
                             windows);
  }

  /// The weights as the matmul's B [KH * KW * C', F] (zeros for the
  /// padding channels): Q * scale[f] of a QDQ model's weights; the
  /// integers W = Q + offset[f] themselves, of the sums' `type`, of an
  /// integer convolution (kiln-pack-int8-matmul-weights moves them into
  /// int8 again).
  static Value patchWeights(OpBuilder &builder, Location loc,
                            const Int8Conv &match,
                            const IntegerWeights &weights, FloatType type) {
    RankedTensorType shape = match.weightType;
    int64_t f = shape.getDimSize(0), c = shape.getDimSize(1);
    int64_t kh = shape.getDimSize(2), kw = shape.getDimSize(3);
    int64_t channels = quadChannels(c);
    FailureOr<std::vector<float>> values = readFloatConstant(weights.q);
    if (failed(values))
      return Value();
    int64_t depth = kh * kw * channels;
    std::vector<float> b(depth * f, 0.0f);
    for (int64_t filter = 0; filter < f; ++filter)
      for (int64_t channel = 0; channel < c; ++channel)
        for (int64_t tap = 0; tap < kh * kw; ++tap)
          b[(tap * channels + channel) * f + filter] =
              (*values)[(filter * c + channel) * kh * kw + tap] +
              weights.offsets[filter];
    if (weights.integers && type.isF64()) {
      std::vector<double> wide(b.begin(), b.end());
      return ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(RankedTensorType::get({depth, f}, type),
                                 ArrayRef<double>(wide)));
    }
    auto f32 = builder.getF32Type();
    auto bType = RankedTensorType::get({depth, f}, f32);
    Value bConstant = ConstantOp::create(
        builder, loc, DenseElementsAttr::get(bType, ArrayRef<float>(b)));
    if (weights.integers)
      return bConstant;
    auto scaleType = RankedTensorType::get({f}, f32);
    Value scaleConstant = ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(scaleType, ArrayRef<float>(weights.scales)));
    return MulOp::create(builder, loc, bType, bConstant, scaleConstant);
  }

  /// Whether `match` is computed as a matmul of patches
  /// (prefersPatches): a QDQ convolution's float32 sums, or an integer
  /// convolution's, whose zero point and offsets the matmul packing takes.
  static bool takesPatches(const Int8Conv &match,
                           const IntegerWeights &weights) {
    return prefersPatches(match) &&
           ((weights.integers && match.unscaled) ||
            (!match.zeroPointBytes && !weights.hasOffsets() &&
             sumType(match, weights).isF32()));
  }

  /// The convolution as a matmul of dequantized patches by the weights,
  /// in the sums' type, plus the bias, transposed back to NCHW. False
  /// when the weights are not readable.
  bool rewriteAsPatches(const Int8Conv &match, const IntegerWeights &integers) {
    ConvOp conv = match.conv;
    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    Location partLoc = withoutOnnxValues(loc);
    FloatType type = sumType(match, integers);
    Value weights = patchWeights(builder, partLoc, match, integers, type);
    if (!weights)
      return false;
    Value bytes = patchBytes(builder, partLoc, match);
    auto bytesType = cast<RankedTensorType>(bytes.getType());
    auto scalarType = RankedTensorType::get({}, type);
    Value a = CastOp::create(builder, partLoc, bytesType.clone(type), bytes);
    if (match.zeroPointBytes) {
      auto zeroType = cast<RankedTensorType>(match.zeroPointBytes.getType());
      a = SubOp::create(builder, partLoc, bytesType.clone(type), a,
                        CastOp::create(builder, partLoc, zeroType.clone(type),
                                       match.zeroPointBytes));
    } else if (match.zeroPoint != 0) {
      a = SubOp::create(
          builder, partLoc, bytesType.clone(type), a,
          ConstantOp::create(
              builder, partLoc,
              DenseElementsAttr::get(
                  scalarType, builder.getFloatAttr(type, match.zeroPoint))));
    }
    if (!match.unscaled)
      a = MulOp::create(builder, partLoc, bytesType.clone(type), a,
                        ConstantOp::create(
                            builder, partLoc,
                            DenseElementsAttr::get(
                                scalarType, builder.getFloatAttr(
                                                type, match.activationScale))));
    RankedTensorType result = match.resultType;
    int64_t n = result.getDimSize(0), f = result.getDimSize(1);
    int64_t ho = result.getDimSize(2), wo = result.getDimSize(3);
    auto rows = RankedTensorType::get({n, ho * wo, f}, type);
    Value sums = MatMulOp::create(builder, partLoc, rows, a, weights);
    if (type != result.getElementType())
      sums = CastOp::create(builder, partLoc,
                            rows.clone(result.getElementType()), sums);
    if (Value bias = conv.getBias())
      sums = AddOp::create(builder, partLoc, sums.getType(), sums, bias);
    Value pixels =
        ReshapeOp::create(builder, partLoc, result.clone({n, ho, wo, f}), sums);
    Value back =
        TransposeOp::create(builder, loc, result, pixels,
                            builder.getDenseI64ArrayAttr({0, 3, 1, 2}));
    conv.getResult().replaceAllUsesWith(back);
    conv->erase();
    return true;
  }

  /// One value per filter, as [F, 1, 1] of `type` to broadcast over NCHW.
  static Value perFilter(OpBuilder &builder, Location loc,
                         ArrayRef<double> values, FloatType type) {
    return floatConstant(builder, loc, values, {int64_t(values.size()), 1, 1},
                         type);
  }

  /// The convolution of Xq by Wq, its sums corrected for the weights'
  /// offsets and the zero point, in the sum type, then scaled and biased
  /// in the result's:
  ///   y = (conv(Xq, Wq)[f] + offset[f] * windowSum - z * sum(W[f]))
  ///       * s * scale[f] + bias[f]
  void rewrite(const Int8Conv &match, const IntegerWeights &integers,
               Value weights) {
    ConvOp conv = match.conv;
    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    Location partLoc = withoutOnnxValues(loc);
    FloatType type = sumType(match, integers);
    RankedTensorType sumsType =
        RankedTensorType::get(match.resultType.getShape(), type);
    Value bytes = quadBytes(builder, partLoc, match);
    auto bytesType = cast<RankedTensorType>(bytes.getType());
    auto weightType = cast<RankedTensorType>(weights.getType());
    Value a = CastOp::create(builder, partLoc, bytesType.clone(type), bytes);
    Value b = CastOp::create(builder, partLoc, weightType.clone(type), weights);
    int64_t stride = match.stride;
    Value sums = ConvOp::create(
        builder, partLoc, sumsType, a, b, Value(),
        builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
        builder.getDenseI64ArrayAttr({stride * stride, kQuadDepth}),
        builder.getDenseI64ArrayAttr({1, 1}), builder.getI64IntegerAttr(1),
        UnitAttr());
    if (integers.hasOffsets()) {
      Value windows = windowSums(builder, partLoc, match, bytes);
      auto windowType = cast<RankedTensorType>(windows.getType());
      if (!type.isF32())
        windows =
            CastOp::create(builder, partLoc, windowType.clone(type), windows);
      SmallVector<double> offsets(integers.offsets.begin(),
                                  integers.offsets.end());
      Value share = MulOp::create(builder, partLoc, sumsType, windows,
                                  perFilter(builder, partLoc, offsets, type));
      sums = AddOp::create(builder, partLoc, sumsType, sums, share);
    }
    if (match.zeroPointBytes) {
      auto zeroType = cast<RankedTensorType>(match.zeroPointBytes.getType());
      Value zero = CastOp::create(builder, partLoc, zeroType.clone(type),
                                  match.zeroPointBytes);
      Value sumsPerFilter = perFilter(builder, partLoc, integers.sums, type);
      Value share = MulOp::create(builder, partLoc, sumsPerFilter.getType(),
                                  sumsPerFilter, zero);
      sums = SubOp::create(builder, partLoc, sumsType, sums, share);
    } else if (match.zeroPoint != 0) {
      SmallVector<double> share;
      for (double sum : integers.sums)
        share.push_back(match.zeroPoint * sum);
      sums = SubOp::create(builder, partLoc, sumsType, sums,
                           perFilter(builder, partLoc, share, type));
    }
    RankedTensorType result = match.resultType;
    if (sumsType != result)
      sums = CastOp::create(builder, partLoc, result, sums);
    SmallVector<double> scales;
    for (float scale : integers.scales)
      scales.push_back(float(double(match.activationScale) * scale));
    auto resultType = cast<FloatType>(result.getElementType());
    if (llvm::any_of(scales, [](double s) { return s != 1; }))
      sums = MulOp::create(builder, partLoc, result, sums,
                           perFilter(builder, partLoc, scales, resultType));
    if (Value bias = conv.getBias()) {
      auto biasType = cast<RankedTensorType>(bias.getType());
      Value column = ReshapeOp::create(
          builder, partLoc, biasType.clone({biasType.getNumElements(), 1, 1}),
          bias);
      sums = AddOp::create(builder, partLoc, result, sums, column);
    }
    // The last op takes the convolution's ONNX names.
    sums.getDefiningOp()->setLoc(loc);
    conv.getResult().replaceAllUsesWith(sums);
    conv->erase();
  }

  /// Whether the quads' convolution has the original's output columns:
  /// ceil(W / s) - ceil(KW / s) + 1 of the padded width W.
  static bool keepsColumns(const Int8Conv &match) {
    int64_t w = match.inputType.getDimSize(3) + match.pads[1] + match.pads[3];
    int64_t kw = match.weightType.getDimSize(3);
    return ceilDiv(w, match.stride) - ceilDiv(kw, match.stride) + 1 ==
           match.resultType.getDimSize(3);
  }

  void runOnOperation() override {
    SmallVector<Int8Conv, 0> matches;
    getOperation().walk([&](ConvOp conv) {
      std::optional<Int8Conv> match = matchInt8Conv(conv);
      if (match && keepsColumns(*match) &&
          match->weightType.getNumElements() >= minWeightElements)
        matches.push_back(*match);
    });
    llvm::SetVector<Operation *> dropped;
    SmallVector<Int8Conv *> rewritten;
    for (Int8Conv &match : matches) {
      const std::optional<IntegerWeights> &integers = integerWeights(match);
      if (!integers)
        continue;
      if (takesPatches(match, *integers)) {
        if (!rewriteAsPatches(match, *integers))
          continue;
      } else {
        Value weights = quadWeights(match, *integers);
        if (!weights)
          continue;
        rewrite(match, *integers, weights);
      }
      rewritten.push_back(&match);
      for (Operation *dequantize : llvm::reverse(match.dequantizeOps))
        dropped.insert(dequantize);
    }
    llvm::SetVector<Operation *> weights;
    for (Int8Conv *match : rewritten) {
      if (match->weightScaling)
        weights.insert(match->weightScaling);
      weights.insert(match->weights);
    }
    eraseReplacedOperands(weights.getArrayRef(), dropped.getArrayRef());
    integerCopies.clear();
    quadWeightCopies.clear();
    movedCopies.clear();
    quadCopies.clear();
    windowSumCopies.clear();
  }
};

} // namespace
