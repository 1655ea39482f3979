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

/// A 2-D convolution of dequantized uint8 activations by constant weights.
struct Int8Conv {
  ConvOp conv;
  Value activations;         ///< X, uint8 [N, C, H, W]
  float zeroPoint = 0;       ///< z, an integer in [0, 255]
  float activationScale = 1; ///< s
  int64_t stride = 1;
  SmallVector<int64_t, 4> pads; ///< begin H, W, end H, W
  /// Pads (zeros: X's zero point) and slices of the dequantized values
  /// between them and the convolution, outermost first: applied to X's
  /// bytes instead.
  SmallVector<Operation *> moves;
  ConstantOp weights;      ///< float32 [F, C, KH, KW]
  ConstantOp weightScales; ///< Q * scale: one, or one per filter
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

/// The weights: a constant, or Q * scale of constants (the importer left
/// a large DequantizeLinear to a kernel), scale one value or one per
/// filter.
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
    match.weightScales = scales;
    match.weightScaling = mul;
    weight = mul.getLhs();
  }
  match.weights = weight.getDefiningOp<ConstantOp>();
  return bool(match.weights);
}

/// The conv's input as (cast<f32>(X) [- z]) * s, padded with zeros and
/// sliced or not.
std::optional<Int8Conv> matchInt8Conv(ConvOp conv) {
  Int8Conv match;
  match.conv = conv;
  auto result = dyn_cast<RankedTensorType>(conv.getType());
  ArrayRef<int64_t> strides = conv.getStrides();
  if (!result || result.getRank() != 4 || !result.hasStaticShape() ||
      !result.getElementType().isF32() || conv.getGroup() != 1 ||
      conv.getChannelsLast() || strides[0] != strides[1] ||
      strides[0] > kMaxStride ||
      !llvm::all_of(conv.getDilations(), [](int64_t d) { return d == 1; }))
    return std::nullopt;
  match.stride = strides[0];
  match.pads.assign(conv.getPads().begin(), conv.getPads().end());
  Value input = conv.getInput();
  while (isSpatialMove(input.getDefiningOp())) {
    match.moves.push_back(input.getDefiningOp());
    match.dequantizeOps.push_back(input.getDefiningOp());
    input = input.getDefiningOp()->getOperand(0);
  }
  auto mul = input.getDefiningOp<MulOp>();
  std::optional<float> scale =
      mul ? scalarConstant(mul.getRhs()) : std::nullopt;
  if (!scale || !(*scale > 0) || mul.getLhs().getType() != input.getType())
    return std::nullopt;
  match.activationScale = *scale;
  match.dequantizeOps.push_back(mul);
  input = mul.getLhs();
  if (auto sub = input.getDefiningOp<SubOp>()) {
    std::optional<float> zero = scalarConstant(sub.getRhs());
    if (!zero || !(*zero >= 0 && *zero <= 255) ||
        *zero != std::nearbyint(*zero) ||
        sub.getLhs().getType() != input.getType())
      return std::nullopt;
    match.zeroPoint = *zero;
    match.dequantizeOps.push_back(sub);
    input = sub.getLhs();
  }
  match.activations = uint8Source(input);
  if (!match.activations || !getElementTypeOrSelf(input.getType()).isF32() ||
      !matchWeights(match, conv.getWeight()))
    return std::nullopt;
  match.dequantizeOps.push_back(input.getDefiningOp());
  auto weightType = ConstantOp(match.weights).getType();
  if (!weightType.hasStaticShape() || weightType.getRank() != 4 ||
      !weightType.getElementType().isF32() ||
      weightType.getNumElements() / weightType.getDimSize(0) > kMaxTaps)
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
  auto result = cast<RankedTensorType>(ConvOp(match.conv).getType());
  auto weights = ConstantOp(match.weights).getType();
  int64_t filters = weights.getDimSize(0);
  int64_t taps = weights.getDimSize(2) * weights.getDimSize(3);
  int64_t depth = quadChannels(weights.getDimSize(1)) * taps;
  int64_t outputs = result.getNumElements() / filters;
  return 2 * result.getDimSize(3) < kQuadLanes && taps > 1 &&
         filters >= kQuadLanes && filters * depth >= kMinPatchWeights &&
         outputs * depth <= kMaxPatchBytes;
}

struct PackInt8ConvWeightsPass
    : public kiln::impl::PackInt8ConvWeightsBase<PackInt8ConvWeightsPass> {
  using Base::Base;

  /// Q as int8 quads [F, C'/4, s * KH, 4 * ceil(KW / s)] for stride s
  /// (quadWeights), the sum of each filter's Q (float32 [F]) and each
  /// filter's scale.
  struct Packed {
    Value quads;
    std::vector<float> sums, scales;
  };
  DenseMap<std::pair<Operation *, int64_t>, Packed> packedCopies;

  /// Each filter's scale and Q (the weights divided by it): the weights
  /// themselves when they are integers or Q * scale was not folded, else
  /// the int8 grid they lie on. None when there is no such grid.
  static std::optional<std::vector<float>>
  filterScales(Int8Conv &match, std::vector<float> &values,
               ElementsAttr &value) {
    auto type = cast<RankedTensorType>(ConstantOp(match.weights).getType());
    int64_t f = type.getDimSize(0);
    int64_t perFilter = type.getNumElements() / f;
    if (holdsInt8(values)) {
      if (!match.weightScales)
        return std::vector<float>(f, 1.0f);
      FailureOr<std::vector<float>> scales =
          readFloatConstant(cast<ElementsAttr>(match.weightScales.getValue()));
      if (failed(scales))
        return std::nullopt;
      if (scales->size() == 1)
        return std::vector<float>(f, scales->front());
      return *scales;
    }
    if (match.weightScales)
      return std::nullopt;
    std::optional<std::vector<float>> scales =
        int8Scales(values, perFilter, f,
                   [&](int64_t i, int64_t g) { return g * perFilter + i; });
    if (!scales)
      return std::nullopt;
    for (int64_t i = 0; i < int64_t(values.size()); ++i)
      values[i] = std::nearbyint(double(values[i]) / (*scales)[i / perFilter]);
    value = DenseElementsAttr::get(type, ArrayRef<float>(values));
    return scales;
  }

  Packed packed(Int8Conv &match) {
    auto [it, inserted] = packedCopies.try_emplace(
        {match.weights.getOperation(), match.stride}, Packed{});
    if (!inserted)
      return it->second;
    auto type = cast<RankedTensorType>(ConstantOp(match.weights).getType());
    int64_t f = type.getDimSize(0), c = type.getDimSize(1);
    int64_t kh = type.getDimSize(2), kw = type.getDimSize(3);
    int64_t stride = match.stride;
    auto value = cast<ElementsAttr>(ConstantOp(match.weights).getValue());
    FailureOr<std::vector<float>> values = readFloatConstant(value);
    if (failed(values))
      return it->second;
    std::optional<std::vector<float>> scales =
        filterScales(match, *values, value);
    if (!scales)
      return it->second;
    // Wq[f, q, s * i + ph, 4 * j + t] = Q[f, 4q + t, i, s * j + ph].
    int64_t quads = quadChannels(c) / kQuadDepth;
    int64_t rows = stride * kh, row = kQuadDepth * ceilDiv(kw, stride);
    OpBuilder builder(match.weights);
    builder.setInsertionPointAfter(match.weights);
    FailureOr<ElementsAttr> packedQuads = narrowIntegerValuedConstant(
        value, builder.getIntegerType(8), {f, quads, rows, row},
        [&](int64_t i) {
          int64_t t = i % kQuadDepth, j = (i % row) / kQuadDepth;
          int64_t tap = (i / row) % rows, q = (i / (row * rows)) % quads;
          int64_t filter = i / (row * rows * quads);
          int64_t channel = q * kQuadDepth + t;
          int64_t y = tap / stride, x = stride * j + tap % stride;
          if (channel >= c || x >= kw)
            return int64_t(-1);
          return ((filter * c + channel) * kh + y) * kw + x;
        },
        ".quads");
    if (failed(packedQuads))
      return it->second;
    Packed result;
    result.scales = std::move(*scales);
    // Integers of at most 8 bits, at most 2^16 of them: exact in float32.
    int64_t perFilter = type.getNumElements() / f;
    result.sums.assign(f, 0.0f);
    for (int64_t i = 0; i < int64_t(values->size()); ++i)
      result.sums[i / perFilter] += (*values)[i];
    result.quads =
        ConstantOp::create(builder, match.weights.getLoc(), *packedQuads);
    it->second = result;
    return result;
  }

  /// X moved as the dequantized values were (padded with z instead of
  /// zeros), padded with z for the convolution (its padding, the channels
  /// to a multiple of 4, the columns to a multiple of the stride s), and
  /// laid out as Xq [N, C'/4, H' * s, W' / s * 4]: Xq[n, q, s * y + ph,
  /// 4 * x + t] = X[n, 4q + t, y, s * x + ph]. Made once for all the
  /// convolutions that read the same bytes with the same stride and pads
  /// (a 1x1 convolution and the shortcut's beside it).
  using QuadBytesKey =
      std::tuple<const void *, int64_t, int64_t, int64_t, int64_t, int64_t>;
  std::map<QuadBytesKey, Value> quadCopies;
  Value quadBytes(OpBuilder &builder, Location loc, const Int8Conv &match) {
    Value moved = match.activations;
    for (Operation *move : llvm::reverse(match.moves))
      moved = movedBytes(move, moved, match.zeroPoint);
    ArrayRef<int64_t> pads = match.pads;
    QuadBytesKey key{moved.getAsOpaquePointer(),
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
    auto input =
        cast<RankedTensorType>(ConvOp(match.conv).getInput().getType());
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

  /// What `move` does to the dequantized values, done to their `bytes`
  /// (zero point `zero`), once for all the convolutions that read it: a
  /// pad with zeros pads with the zero point, and a max pooling pools the
  /// bytes' values (widened: pooling takes floats).
  DenseMap<Operation *, Value> movedCopies;
  Value movedBytes(Operation *move, Value bytes, float zero) {
    auto [it, inserted] = movedCopies.try_emplace(move, Value());
    if (!inserted)
      return it->second;
    OpBuilder builder(move->getContext());
    builder.setInsertionPointAfter(move);
    Location loc = withoutOnnxValues(move->getLoc());
    auto type = cast<RankedTensorType>(move->getResult(0).getType());
    Type byte = getElementTypeOrSelf(bytes.getType());
    Operation *copy = builder.clone(*move);
    copy->setLoc(loc);
    if (isa<MaxPoolOp>(move)) {
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
    if (auto pad = dyn_cast<PadOp>(copy))
      pad.setValueAttr(builder.getF64FloatAttr(zero));
    return it->second = copy->getResult(0);
  }

  /// X moved as the dequantized values were and padded with z for the
  /// convolution (channels to a multiple of 4), as [N, C', H', W'].
  Value paddedBytes(OpBuilder &builder, Location loc, const Int8Conv &match,
                    int64_t extraColumns) {
    Value bytes = match.activations;
    for (Operation *move : llvm::reverse(match.moves))
      bytes = movedBytes(move, bytes, match.zeroPoint);
    auto type = cast<RankedTensorType>(bytes.getType());
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    ArrayRef<int64_t> pads = match.pads;
    int64_t h = type.getDimSize(2) + pads[0] + pads[2];
    int64_t w = type.getDimSize(3) + pads[1] + pads[3] + extraColumns;
    int64_t channels = quadChannels(c);
    if (channels == c && !extraColumns &&
        llvm::all_of(pads, [](int64_t p) { return p == 0; }))
      return bytes;
    return PadOp::create(
        builder, loc, type.clone({n, channels, h, w}), bytes,
        builder.getDenseI64ArrayAttr({0, 0, pads[0], pads[1], 0, channels - c,
                                      pads[2], pads[3] + extraColumns}),
        builder.getStringAttr("constant"),
        builder.getF64FloatAttr(match.zeroPoint));
  }

  /// Each output's window of X's padded bytes, taps outer and channels
  /// inner: patches [N, Ho * Wo, KH * KW * C'], where
  /// patches[n, y * Wo + x, (i * KW + j) * C' + c] =
  /// X'[n, c, s * y + i, s * x + j]. X' is made channels-last first, so
  /// that each tap's slice and the stacking copy whole pixels.
  Value patchBytes(OpBuilder &builder, Location loc, const Int8Conv &match) {
    Value bytes = paddedBytes(builder, loc, match, 0);
    auto type = cast<RankedTensorType>(bytes.getType());
    auto result = cast<RankedTensorType>(ConvOp(match.conv).getType());
    auto weights = ConstantOp(match.weights).getType();
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

  /// The weights as the matmul's B, Q * scale: Q [KH * KW * C', F] (zeros
  /// for the padding channels) times one scale per filter [F].
  static Value patchWeights(OpBuilder &builder, Location loc,
                            const Int8Conv &match) {
    auto type = cast<RankedTensorType>(ConstantOp(match.weights).getType());
    int64_t f = type.getDimSize(0), c = type.getDimSize(1);
    int64_t kh = type.getDimSize(2), kw = type.getDimSize(3);
    int64_t channels = quadChannels(c);
    auto value = cast<ElementsAttr>(ConstantOp(match.weights).getValue());
    FailureOr<std::vector<float>> values = readFloatConstant(value);
    if (failed(values))
      return Value();
    Int8Conv copy = match;
    std::optional<std::vector<float>> scales =
        filterScales(copy, *values, value);
    if (!scales)
      return Value();
    int64_t depth = kh * kw * channels;
    std::vector<float> q(depth * f, 0.0f);
    for (int64_t filter = 0; filter < f; ++filter)
      for (int64_t channel = 0; channel < c; ++channel)
        for (int64_t tap = 0; tap < kh * kw; ++tap)
          q[(tap * channels + channel) * f + filter] =
              (*values)[(filter * c + channel) * kh * kw + tap];
    auto f32 = builder.getF32Type();
    auto qType = RankedTensorType::get({depth, f}, f32);
    auto scaleType = RankedTensorType::get({f}, f32);
    Value qConstant = ConstantOp::create(
        builder, loc, DenseElementsAttr::get(qType, ArrayRef<float>(q)));
    Value scaleConstant = ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(scaleType, ArrayRef<float>(*scales)));
    return MulOp::create(builder, loc, qType, qConstant, scaleConstant);
  }

  /// The convolution as a matmul of dequantized patches by the weights,
  /// plus the bias, transposed back to NCHW. False when the weights have
  /// no int8 grid.
  bool rewriteAsPatches(const Int8Conv &match) {
    ConvOp conv = match.conv;
    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    Location partLoc = withoutOnnxValues(loc);
    Value weights = patchWeights(builder, partLoc, match);
    if (!weights)
      return false;
    Value bytes = patchBytes(builder, partLoc, match);
    auto bytesType = cast<RankedTensorType>(bytes.getType());
    auto f32 = builder.getF32Type();
    auto scalarType = RankedTensorType::get({}, f32);
    Value a = CastOp::create(builder, partLoc, bytesType.clone(f32), bytes);
    if (match.zeroPoint != 0)
      a = SubOp::create(builder, partLoc, bytesType.clone(f32), a,
                        ConstantOp::create(builder, partLoc,
                                           DenseElementsAttr::get(
                                               scalarType, match.zeroPoint)));
    a = MulOp::create(
        builder, partLoc, bytesType.clone(f32), a,
        ConstantOp::create(
            builder, partLoc,
            DenseElementsAttr::get(scalarType, match.activationScale)));
    auto result = cast<RankedTensorType>(conv.getType());
    int64_t n = result.getDimSize(0), f = result.getDimSize(1);
    int64_t ho = result.getDimSize(2), wo = result.getDimSize(3);
    Value sums = MatMulOp::create(builder, partLoc,
                                  result.clone({n, ho * wo, f}), a, weights);
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

  /// One float32 value per filter, as [F, 1, 1] to broadcast over NCHW.
  static Value perFilter(OpBuilder &builder, Location loc,
                         ArrayRef<float> values) {
    auto type = RankedTensorType::get({int64_t(values.size()), 1, 1},
                                      builder.getF32Type());
    return ConstantOp::create(builder, loc,
                              DenseElementsAttr::get(type, values));
  }

  void rewrite(const Int8Conv &match, const Packed &packed) {
    ConvOp conv = match.conv;
    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    Location partLoc = withoutOnnxValues(loc);
    auto result = cast<RankedTensorType>(conv.getType());
    auto weights = cast<RankedTensorType>(packed.quads.getType());
    Value bytes = quadBytes(builder, partLoc, match);
    auto bytesType = cast<RankedTensorType>(bytes.getType());
    Value a = CastOp::create(builder, partLoc,
                             bytesType.clone(builder.getF32Type()), bytes);
    Value b = CastOp::create(builder, partLoc,
                             weights.clone(builder.getF32Type()), packed.quads);
    int64_t stride = match.stride;
    Value sums = ConvOp::create(
        builder, partLoc, result, a, b, Value(),
        builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
        builder.getDenseI64ArrayAttr({stride * stride, kQuadDepth}),
        builder.getDenseI64ArrayAttr({1, 1}), builder.getI64IntegerAttr(1),
        UnitAttr());
    if (match.zeroPoint != 0) {
      SmallVector<float> share;
      for (float sum : packed.sums)
        share.push_back(match.zeroPoint * sum);
      sums = SubOp::create(builder, partLoc, result, sums,
                           perFilter(builder, partLoc, share));
    }
    SmallVector<float> scales;
    for (float scale : packed.scales)
      scales.push_back(float(double(match.activationScale) * scale));
    Value bias = conv.getBias();
    sums = MulOp::create(builder, bias ? partLoc : loc, result, sums,
                         perFilter(builder, partLoc, scales));
    if (bias) {
      auto biasType = cast<RankedTensorType>(bias.getType());
      Value column = ReshapeOp::create(
          builder, partLoc, biasType.clone({biasType.getNumElements(), 1, 1}),
          bias);
      sums = AddOp::create(builder, loc, result, sums, column);
    }
    conv.getResult().replaceAllUsesWith(sums);
    conv->erase();
  }

  /// Whether the quads' convolution has the original's output columns:
  /// ceil(W / s) - ceil(KW / s) + 1 of the padded width W.
  static bool keepsColumns(Int8Conv &match) {
    auto input =
        cast<RankedTensorType>(ConvOp(match.conv).getInput().getType());
    int64_t w = input.getDimSize(3) + match.pads[1] + match.pads[3];
    int64_t kw = ConstantOp(match.weights).getType().getDimSize(3);
    return ceilDiv(w, match.stride) - ceilDiv(kw, match.stride) + 1 ==
           ConvOp(match.conv).getType().getDimSize(3);
  }

  void runOnOperation() override {
    SmallVector<Int8Conv> matches;
    getOperation().walk([&](ConvOp conv) {
      std::optional<Int8Conv> match = matchInt8Conv(conv);
      if (match && keepsColumns(*match) &&
          match->weights.getType().getNumElements() >= minWeightElements)
        matches.push_back(*match);
    });
    llvm::SetVector<Operation *> dropped;
    for (Int8Conv &match : matches) {
      if (prefersPatches(match)) {
        if (!rewriteAsPatches(match))
          continue;
      } else {
        Packed quads = packed(match);
        if (!quads.quads)
          continue;
        rewrite(match, quads);
      }
      for (Operation *dequantize : llvm::reverse(match.dequantizeOps))
        dropped.insert(dequantize);
    }
    llvm::SetVector<Operation *> weights;
    for (Int8Conv &match : matches) {
      if (match.weightScaling)
        weights.insert(match.weightScaling);
      weights.insert(match.weights);
    }
    eraseReplacedOperands(weights.getArrayRef(), dropped.getArrayRef());
    packedCopies.clear();
    movedCopies.clear();
    quadCopies.clear();
  }
};

} // namespace
