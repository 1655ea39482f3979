//===- PackInt8MatMulWeights.cpp - uint8 x int8 matmuls as quad dots ------===//
//
// A dynamically quantized model (MatMulInteger, DynamicQuantizeMatMul)
// multiplies uint8 activations minus their zero point by int8 weights.
// Kiln imports those sums as float32 matmuls of integer values; the CPU's
// register tiles then spend a widening and an FMA on every product.
// x86's `vpdpbusd` adds the four products of 4 uint8 by 4 int8 values to
// each of 16 int32 lanes: 64 products per instruction, on a quarter of
// the bytes.
//
// This pass gives such a matmul the operands that instruction reads: X
// itself (uint8, each row's K values as K/4 quads) and the weight as
// int8 quads Bq [N/16, K/4, 16, 4], and computes it as an einsum over
// both; kiln-contract-int8-quads lowers that einsum to `vpdpbusd`. The
// zero point's share of every sum, z * sum_k B[k, n], is subtracted
// after.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"
#include "Int8Weights.h"

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

namespace kiln {
#define GEN_PASS_DEF_PACKINT8MATMULWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The longest K whose sums of uint8 x int8 products int32 holds.
constexpr int64_t kMaxK = 65536;

/// A matmul of uint8 values (minus a zero point) by integer weights.
struct Int8MatMul {
  Operation *op;     ///< a kiln.matmul, or a kiln.gemm A * B (+ C)
  Value lhs;         ///< A: cast<f32>(X) [- z]
  Value activations; ///< X, uint8 [..., M, K]
  Value zeroPoint;   ///< z: one float32 value or one per row; or null
  ConstantOp weights;
  bool transposed = false; ///< the weights are stored [N, K]
  Value bias;              ///< a Gemm's C, or null
  /// A's scale (a QDQ model's DequantizeLinear), 1 when A is not scaled.
  double activationScale = 1.0;
  bool scaledActivations = false;
  /// B's scale when B is Q * s of constants (dequantized weights the
  /// importer left to a kernel): one value, or one per column; else empty.
  SmallVector<float> weightScales;
  Operation *weightScaling = nullptr; ///< the kiln.mul of Q * s

  /// The ops from A back to the cast, outermost first.
  SmallVector<Operation *> dequantizeOps;
  /// Reshapes and transposes of the dequantized values (attention's heads
  /// joined), outermost first: applied to X's bytes instead.
  SmallVector<Operation *> moves;
};

/// A, B, C of a matmul, or of a Gemm A * B + C without transposing A and
/// alpha, beta 1 (B transposed or not: kiln-transpose-weights stores a
/// few-row Gemm's B as [N, K]).
std::optional<Int8MatMul> operandsOf(Operation *op) {
  Int8MatMul match;
  match.op = op;
  Value b;
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    match.lhs = matmul.getLhs();
    b = matmul.getRhs();
  } else {
    auto gemm = dyn_cast<GemmOp>(op);
    if (!gemm || gemm.getTransA() || !gemm.getAlpha().isExactlyValue(1.0) ||
        !gemm.getBeta().isExactlyValue(1.0))
      return std::nullopt;
    match.lhs = gemm.getA();
    b = gemm.getB();
    match.transposed = gemm.getTransB();
    match.bias = gemm.getC();
  }
  // Q * s: s one value, or one per column of an untransposed B.
  if (auto mul = b.getDefiningOp<MulOp>()) {
    auto scale = mul.getRhs().getDefiningOp<ConstantOp>();
    auto dense =
        scale ? dyn_cast<DenseElementsAttr>(scale.getValue()) : nullptr;
    auto type = cast<ShapedType>(b.getType());
    if (!dense || !dense.getElementType().isF32() || !type.hasRank() ||
        type.getRank() != 2 || mul.getLhs().getType() != b.getType() ||
        !(dense.getNumElements() == 1 ||
          (!match.transposed && dense.getNumElements() == type.getDimSize(1) &&
           cast<ShapedType>(dense.getType()).getShape().back() ==
               type.getDimSize(1))))
      return std::nullopt;
    match.weightScales.assign(dense.getValues<float>().begin(),
                              dense.getValues<float>().end());
    match.weightScaling = mul;
    b = mul.getLhs();
  }
  match.weights = b.getDefiningOp<ConstantOp>();
  return match;
}

/// float32, or float64 (the importer's integerSumType where a sum of
/// int8 products may pass 2^24).
bool isSumType(Type type) { return type.isF32() || type.isF64(); }

std::optional<Int8MatMul> matchInt8MatMul(Operation *op) {
  std::optional<Int8MatMul> operands = operandsOf(op);
  if (!operands || !operands->weights)
    return std::nullopt;
  Int8MatMul match = *operands;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto weightType = match.weights.getType();
  if (!result || !result.hasStaticShape() || !weightType.hasStaticShape() ||
      weightType.getRank() != 2 ||
      weightType.getElementType() != result.getElementType() ||
      !isSumType(result.getElementType()) || result.getRank() < 2)
    return std::nullopt;
  int64_t k = weightType.getDimSize(match.transposed ? 1 : 0);
  int64_t n = weightType.getDimSize(match.transposed ? 0 : 1);
  if (k % kQuadDepth != 0 || k > kMaxK || n < kQuadLanes)
    return std::nullopt;
  Value lhs = match.lhs;
  auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
  if (!lhsType || lhsType.getRank() != result.getRank() ||
      !lhsType.hasStaticShape())
    return std::nullopt;
  while (isa_and_nonnull<ReshapeOp, TransposeOp>(lhs.getDefiningOp())) {
    match.moves.push_back(lhs.getDefiningOp());
    match.dequantizeOps.push_back(lhs.getDefiningOp());
    lhs = lhs.getDefiningOp()->getOperand(0);
  }
  // A QDQ model's dequantized activations: (X - z) * s, s one constant.
  if (auto mul = lhs.getDefiningOp<MulOp>()) {
    std::optional<float> scale = scalarConstant(mul.getRhs());
    if (!scale || !(*scale > 0) || mul.getLhs().getType() != lhs.getType())
      return std::nullopt;
    match.activationScale = *scale;
    match.scaledActivations = true;
    match.dequantizeOps.push_back(mul);
    lhs = mul.getLhs();
  }
  if (auto sub = lhs.getDefiningOp<SubOp>()) {
    // One zero point, or one per row (of shape [..., M, 1]).
    auto zeroType = dyn_cast<RankedTensorType>(sub.getRhs().getType());
    if (!zeroType || !zeroType.hasStaticShape() ||
        zeroType.getElementType() != result.getElementType() ||
        zeroType.getRank() > result.getRank() ||
        (zeroType.getRank() > 0 && zeroType.getShape().back() != 1) ||
        sub.getLhs().getType() != lhs.getType())
      return std::nullopt;
    match.zeroPoint = sub.getRhs();
    match.dequantizeOps.push_back(sub);
    lhs = sub.getLhs();
  }
  match.activations = uint8Source(lhs);
  match.dequantizeOps.push_back(lhs.getDefiningOp());
  // A zero point per row does not follow the rows through a move.
  if (!match.activations ||
      (!match.moves.empty() && match.zeroPoint &&
       cast<ShapedType>(match.zeroPoint.getType()).getNumElements() != 1))
    return std::nullopt;
  return match;
}

/// `...mqt,bqwt->...mbw` for A of `rank` dims [..., M, K/4, 4].
std::string quadEquation(int64_t rank) {
  std::string batch = std::string("acdefghijl").substr(0, rank - 3);
  return batch + "mqt,bqwt->" + batch + "mbw";
}

struct PackInt8MatMulWeightsPass
    : public kiln::impl::PackInt8MatMulWeightsBase<PackInt8MatMulWeightsPass> {
  using Base::Base;

  /// B [K, N] (stored [N, K] when `transposed`) as int8 quads
  /// [ceil(N/16), K/4, 16, 4] of Q (zeros past N), where B = (Q + offset[n])
  /// * scale[n]: integers moved into int8 by an offset per column (uint8
  /// weights minus their zero point), or a QDQ model's int8 grid (scales;
  /// none when B holds the integers themselves); one copy per weight and
  /// layout. Null when B is none of these.
  struct Packed {
    Value quads;
    std::vector<double> sums;       ///< sum_k B[k, n] / scale[n]
    std::vector<double> magnitudes; ///< sum_k |Q[k, n]|
    std::vector<float> offsets;     ///< zeros for int8 B
    std::vector<float> scales;
    bool hasOffsets() const {
      return llvm::any_of(offsets, [](float c) { return c != 0; });
    }
  };
  DenseMap<std::pair<Operation *, int>, Packed> packedCopies;

  Packed packed(ConstantOp weights, bool transposed, bool mayBeScaled) {
    auto [it, inserted] =
        packedCopies.try_emplace({weights, int(transposed)}, Packed{});
    if (!inserted)
      return it->second;
    auto type = cast<RankedTensorType>(weights.getType());
    int64_t k = type.getDimSize(transposed ? 1 : 0);
    int64_t n = type.getDimSize(transposed ? 0 : 1);
    auto sourceIndex = [&](int64_t row, int64_t col) {
      return transposed ? col * k + row : row * n + col;
    };
    auto value = cast<ElementsAttr>(weights.getValue());
    FailureOr<std::vector<float>> values = readFloatConstant(value);
    if (failed(values))
      return it->second;
    Packed result;
    result.offsets.assign(n, 0.0f);
    // Integers (moved into int8), or else a QDQ model's dequantized int8
    // weights.
    if (!holdsInt8(*values)) {
      auto groupIndex = [&](int64_t row, int64_t col) {
        return sourceIndex(row, col);
      };
      if (std::optional<std::vector<float>> offsets =
              mayBeScaled ? std::nullopt
                          : int8Offsets(*values, k, n, groupIndex)) {
        result.offsets = std::move(*offsets);
        for (int64_t row = 0; row < k; ++row)
          for (int64_t col = 0; col < n; ++col)
            (*values)[sourceIndex(row, col)] -= result.offsets[col];
      } else {
        std::optional<std::vector<float>> scales =
            mayBeScaled ? int8Scales(*values, k, n, groupIndex) : std::nullopt;
        if (!scales)
          return it->second;
        for (int64_t row = 0; row < k; ++row)
          for (int64_t col = 0; col < n; ++col) {
            float &v = (*values)[sourceIndex(row, col)];
            v = std::nearbyint(double(v) / (*scales)[col]);
          }
        result.scales = std::move(*scales);
      }
    }
    if (!result.scales.empty() || result.hasOffsets() ||
        !type.getElementType().isF32())
      value = DenseElementsAttr::get(
          type.clone(Float32Type::get(type.getContext())),
          ArrayRef<float>(*values));
    OpBuilder builder(weights);
    builder.setInsertionPointAfter(weights);
    FailureOr<ElementsAttr> quads = narrowIntegerValuedConstant(
        value, builder.getIntegerType(8),
        {panels(n), k / kQuadDepth, kQuadLanes, kQuadDepth},
        [&](int64_t i) {
          int64_t t = i % kQuadDepth, w = (i / kQuadDepth) % kQuadLanes;
          int64_t q = (i / (kQuadDepth * kQuadLanes)) % (k / kQuadDepth);
          int64_t b = i / (kQuadDepth * kQuadLanes * (k / kQuadDepth));
          int64_t col = b * kQuadLanes + w;
          // Columns past N (the last panel's padding) are zeros.
          return col < n ? sourceIndex(q * kQuadDepth + t, col) : int64_t(-1);
        },
        ".quads");
    if (failed(quads))
      return it->second;
    result.sums.assign(n, 0.0);
    result.magnitudes.assign(n, 0.0);
    for (int64_t row = 0; row < k; ++row)
      for (int64_t col = 0; col < n; ++col) {
        float q = (*values)[sourceIndex(row, col)];
        result.sums[col] += double(q) + result.offsets[col];
        result.magnitudes[col] += std::fabs(q);
      }
    result.quads = ConstantOp::create(builder, weights.getLoc(), *quads);
    it->second = result;
    return result;
  }

  /// Panels of 16 columns that hold `n`, the last one padded.
  static int64_t panels(int64_t n) { return llvm::divideCeil(n, kQuadLanes); }

  /// The type the einsum sums in: float64 for float64 matmuls, and for
  /// integer ones whose partial sums (of products with X's bytes, not
  /// X - z) may reach 2^24; else float32.
  static FloatType sumType(const Int8MatMul &match, const Packed &packed) {
    auto original = cast<RankedTensorType>(match.op->getResult(0).getType());
    MLIRContext *context = original.getContext();
    if (original.getElementType().isF64())
      return Float64Type::get(context);
    if (isScaled(match, packed))
      return Float32Type::get(context);
    std::optional<float> constantZero =
        match.zeroPoint ? scalarConstant(match.zeroPoint) : 0.0f;
    double zero = constantZero ? std::fabs(*constantZero) : 255.0;
    int64_t k =
        cast<RankedTensorType>(match.activations.getType()).getShape().back();
    for (size_t col = 0; col < packed.sums.size(); ++col)
      if (255 * (packed.magnitudes[col] + std::fabs(packed.offsets[col]) * k) +
              zero * std::fabs(packed.sums[col]) >=
          kExactFloat32)
        return Float64Type::get(context);
    return Float32Type::get(context);
  }

  /// `values` as a constant [N] of `type`.
  static Value columnConstant(OpBuilder &builder, Location loc,
                              ArrayRef<double> values, Type type) {
    return floatConstant(builder, loc, values, {int64_t(values.size())}, type);
  }

  void rewrite(const Int8MatMul &match, const Packed &packed) {
    Operation *op = match.op;
    OpBuilder builder(op);
    Location loc = op->getLoc();
    Location partLoc = withoutOnnxValues(loc);
    auto original = cast<RankedTensorType>(op->getResult(0).getType());
    FloatType type = sumType(match, packed);
    auto result = original.clone(type);
    Value bytes = movedBytes(builder, match);
    auto activations = cast<RankedTensorType>(bytes.getType());
    int64_t k = activations.getShape().back();
    SmallVector<int64_t> quadShape(activations.getShape().drop_back());
    quadShape.append({k / kQuadDepth, kQuadDepth});
    Value rows = ReshapeOp::create(builder, partLoc,
                                   activations.clone(quadShape), bytes);
    Value a = CastOp::create(builder, partLoc,
                             activations.clone(quadShape, type), rows);
    auto quadsType = cast<RankedTensorType>(packed.quads.getType());
    Value b =
        CastOp::create(builder, partLoc, quadsType.clone(type), packed.quads);
    int64_t n = result.getShape().back();
    SmallVector<int64_t> panelShape(result.getShape().drop_back());
    panelShape.append({panels(n), kQuadLanes});
    Value sums = EinsumOp::create(
        builder, partLoc, result.clone(panelShape), ValueRange{a, b},
        builder.getStringAttr(quadEquation(quadShape.size())));
    bool centered = bool(match.zeroPoint);
    bool scaled = isScaled(match, packed);
    bool last = !centered && !scaled && !match.bias && !packed.hasOffsets() &&
                result == original;
    // The last op claims the ONNX value (kiln-bisect compares shapes).
    SmallVector<int64_t> paddedShape(result.getShape());
    paddedShape.back() = panels(n) * kQuadLanes;
    Value back = ReshapeOp::create(
        builder, last && paddedShape.back() == n ? loc : partLoc,
        result.clone(paddedShape), sums);
    // The last panel's padding columns go.
    if (paddedShape.back() != n)
      back = SliceOp::create(
          builder, last ? loc : partLoc, result, back,
          builder.getDenseI64ArrayAttr(SmallVector<int64_t>(result.getRank())),
          builder.getDenseI64ArrayAttr(
              SmallVector<int64_t>(result.getRank(), 1)));
    if (packed.hasOffsets())
      back = AddOp::create(builder, partLoc, result, back,
                           offsetShare(builder, match, packed, bytes, type));
    if (centered)
      back = SubOp::create(builder, partLoc, result, back,
                           zeroPointShare(builder, match, packed, type));
    if (result != original)
      back = CastOp::create(builder, partLoc, original, back);
    if (scaled)
      back = MulOp::create(
          builder, partLoc, original, back,
          productScales(builder, match, packed, original.getElementType()));
    if (match.bias)
      back = AddOp::create(builder, partLoc, original, back, match.bias);
    // The last op claims the ONNX value (kiln-bisect compares shapes).
    back.getDefiningOp()->setLoc(loc);
    Value replaced = op->getResult(0);
    if (!match.bias && !scaled &&
        (!match.zeroPoint || isIntegerValued(match.zeroPoint)))
      dropIntegerRoundTrips(replaced, back);
    if (!replaced.use_empty())
      replaced.replaceAllUsesWith(back);
    op->erase();
  }

  /// offset[n] * sum_k X[..., m, k]: each row's sum of X's bytes (exact
  /// in float32: at most 255 * 2^16) times the columns' offsets, an outer
  /// product that the consumer's kernel recomputes.
  static Value offsetShare(OpBuilder &builder, const Int8MatMul &match,
                           const Packed &packed, Value bytes, FloatType type) {
    Location loc = withoutOnnxValues(match.op->getLoc());
    auto activations = cast<RankedTensorType>(bytes.getType());
    int64_t rank = activations.getRank();
    SmallVector<int64_t> rowShape(activations.getShape());
    rowShape.back() = 1;
    auto f32 = builder.getF32Type();
    Value rowSums = ReduceSumOp::create(
        builder, loc, activations.clone(rowShape, f32),
        CastOp::create(builder, loc, activations.clone(f32), bytes),
        builder.getDenseI64ArrayAttr({rank - 1}), builder.getBoolAttr(true));
    if (!type.isF32())
      rowSums = CastOp::create(builder, loc, activations.clone(rowShape, type),
                               rowSums);
    SmallVector<double> offsets(packed.offsets.begin(), packed.offsets.end());
    SmallVector<int64_t> shape(rowShape);
    shape.back() = offsets.size();
    return MulOp::create(builder, loc, activations.clone(shape, type), rowSums,
                         columnConstant(builder, loc, offsets, type));
  }

  /// X moved as A's dequantized values were: the same reshapes and
  /// transposes, of its bytes.
  static Value movedBytes(OpBuilder &builder, const Int8MatMul &match) {
    Value bytes = match.activations;
    Type byte = getElementTypeOrSelf(bytes.getType());
    for (Operation *move : llvm::reverse(match.moves)) {
      auto type = cast<RankedTensorType>(move->getResult(0).getType());
      Operation *copy = builder.clone(*move);
      copy->setOperand(0, bytes);
      copy->getResult(0).setType(type.clone(byte));
      bytes = copy->getResult(0);
    }
    return bytes;
  }

  static bool isScaled(const Int8MatMul &match, const Packed &packed) {
    return !packed.scales.empty() || !match.weightScales.empty() ||
           match.activationScale != 1.0;
  }

  /// z * sum_k B[k, n] (of B's integers): a constant when z is one, else
  /// computed; of `type`.
  static Value zeroPointShare(OpBuilder &builder, const Int8MatMul &match,
                              const Packed &packed, FloatType type) {
    Location loc = withoutOnnxValues(match.op->getLoc());
    auto result = cast<RankedTensorType>(match.op->getResult(0).getType());
    if (std::optional<float> zero = scalarConstant(match.zeroPoint)) {
      SmallVector<double> share;
      for (double sum : packed.sums)
        share.push_back(*zero * sum);
      return columnConstant(builder, loc, share, type);
    }
    auto zeroType = cast<RankedTensorType>(match.zeroPoint.getType());
    Value zero = match.zeroPoint;
    if (zeroType.getElementType() != type)
      zero = CastOp::create(builder, loc, zeroType.clone(type), zero);
    SmallVector<int64_t> shareShape(zeroType.getShape());
    if (shareShape.empty())
      shareShape.push_back(1);
    shareShape.back() = result.getShape().back();
    return MulOp::create(builder, loc, result.clone(shareShape, type), zero,
                         columnConstant(builder, loc, packed.sums, type));
  }

  /// B's scale of column `col`.
  static double weightScale(const Int8MatMul &match, const Packed &packed,
                            int64_t col) {
    if (!packed.scales.empty())
      return packed.scales[col];
    if (match.weightScales.empty())
      return 1.0;
    return match.weightScales[match.weightScales.size() == 1 ? 0 : col];
  }

  /// A's scale times B's, per column, rounded once to float32; of `type`.
  static Value productScales(OpBuilder &builder, const Int8MatMul &match,
                             const Packed &packed, Type type) {
    SmallVector<double> scales;
    for (int64_t col = 0; col < int64_t(packed.sums.size()); ++col)
      scales.push_back(
          float(match.activationScale * weightScale(match, packed, col)));
    return columnConstant(builder, withoutOnnxValues(match.op->getLoc()),
                          scales, type);
  }

  /// Whether `value` is cast<f32> of integers.
  static bool isIntegerValued(Value value) {
    auto cast = value.getDefiningOp<CastOp>();
    return cast &&
           isa<IntegerType>(getElementTypeOrSelf(cast.getInput().getType()));
  }

  /// Reads of the matmul's integer-valued result `replaced` through
  /// cast<f32>(cast<i32>) (MatMulInteger's int32 result, then Cast to
  /// float) read its float32 `sums` instead:
  /// every sum is an integer of at most 31 bits, which the pair keeps.
  /// Without the casts, the epilogue moves past the reshape into the
  /// einsum's kernel (kiln-move-reshapes-after-elementwise keeps casts).
  static void dropIntegerRoundTrips(Value replaced, Value sums) {
    for (Operation *user : llvm::make_early_inc_range(replaced.getUsers())) {
      auto narrow = dyn_cast<CastOp>(user);
      if (!narrow ||
          !getElementTypeOrSelf(narrow.getType()).isSignlessInteger(32))
        continue;
      for (Operation *widenOp :
           llvm::make_early_inc_range(narrow->getUsers())) {
        auto widen = dyn_cast<CastOp>(widenOp);
        if (widen && widen.getType() == sums.getType()) {
          widen.getResult().replaceAllUsesWith(sums);
          widen->erase();
        }
      }
      if (narrow->use_empty())
        narrow->erase();
    }
  }

  void runOnOperation() override {
    std::vector<Int8MatMul> matches;
    getOperation().walk([&](Operation *op) {
      std::optional<Int8MatMul> match = matchInt8MatMul(op);
      if (match &&
          match->weights.getType().getNumElements() >= minWeightElements)
        matches.push_back(*match);
    });
    // The ops that computed A, from the cast on: once no other op reads
    // them, they go.
    llvm::SetVector<Operation *> dropped;
    for (Int8MatMul &match : matches) {
      // Dequantized weights only beside dequantized activations (QDQ).
      Packed quads =
          packed(match.weights, match.transposed, match.scaledActivations);
      if (!quads.quads)
        continue;
      for (Operation *dequantize : llvm::reverse(match.dequantizeOps))
        dropped.insert(dequantize);
      rewrite(match, quads);
    }
    llvm::SetVector<Operation *> weights;
    for (const Int8MatMul &match : matches) {
      if (match.weightScaling)
        weights.insert(match.weightScaling);
      weights.insert(match.weights);
    }
    eraseReplacedOperands(weights.getArrayRef(), dropped.getArrayRef());
    packedCopies.clear();
  }
};

} // namespace
