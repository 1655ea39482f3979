//===- DropRepeatedQuantization.cpp - requantizing to the same grid -------===//
//
// A QDQ model quantizes and dequantizes a tensor around every op: a
// Reshape, Transpose or MaxPool between a DequantizeLinear and the next
// QuantizeLinear often has both of the same scale and zero point. The
// importer writes the pair as float ops,
//
//   dequantize(quantize(x)) = (cast(clip(round(x / s) + z, lo, hi)) - z) * s
//
// and on a value that is already (q - z) * s for an integer q in [lo, hi]
// the pair gives that value back bit for bit: (q - z) * s / s is within
// 2^-22 * |q - z| of q - z, so it rounds to it, and the rest recomputes the
// same float ops. Moving data (reshape, transpose, slice, expand, concat,
// a max pool whose every window holds an element) keeps values on the grid.
// This pass replaces such a repeated pair by its input, so the kernels that
// moved the data need not requantize it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_DROPREPEATEDQUANTIZATION
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// How far back through data movement a value's grid is looked for.
constexpr int kMaxMovesToGrid = 8;

/// One quantization grid: the values (q - zeroPoint) * scale for the
/// integers q in [lo, hi], stored in `integerType`.
struct QuantizationGrid {
  float scale = 0;
  float zeroPoint = 0;
  float lo = 0, hi = 0;
  Type integerType;

  /// A value on `inner` is on this grid.
  bool holds(const QuantizationGrid &inner) const {
    return scale == inner.scale && zeroPoint == inner.zeroPoint &&
           integerType == inner.integerType && lo <= inner.lo && inner.hi <= hi;
  }
};

/// The one float32 value of a constant (any shape, every element equal).
std::optional<float> splatF32(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<float>();
}

/// `v` minus the zero point: (v, z) for a kiln.sub of a splat constant z,
/// (v, 0) otherwise (a zero point of 0 is folded away).
std::pair<Value, float> withoutZeroPoint(Value v) {
  if (auto sub = v.getDefiningOp<SubOp>())
    if (std::optional<float> z = splatF32(sub.getRhs()))
      return {sub.getLhs(), *z};
  return {v, 0.0f};
}
std::pair<Value, float> withoutAddedZeroPoint(Value v) {
  if (auto add = v.getDefiningOp<AddOp>())
    if (std::optional<float> z = splatF32(add.getRhs()))
      return {add.getLhs(), *z};
  return {v, 0.0f};
}

/// A scale whose products with the grid's integers (|q - z| < 2^17) stay
/// normal floats, where the rounding argument above holds.
bool isWellScaled(float scale) {
  return std::isfinite(scale) && scale >= 0x1p-100f && scale <= 0x1p100f;
}

/// Matches dequantize(quantize(x)) as the importer writes it: x and the
/// grid, or nullopt.
std::optional<std::pair<Value, QuantizationGrid>> matchFakeQuantize(Value v) {
  QuantizationGrid grid;
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul || mul.getType() != mul.getLhs().getType())
    return std::nullopt;
  std::optional<float> scale = splatF32(mul.getRhs());
  if (!scale || !isWellScaled(*scale))
    return std::nullopt;
  grid.scale = *scale;
  auto [widened, zeroPoint] = withoutZeroPoint(mul.getLhs());
  grid.zeroPoint = zeroPoint;
  auto widen = widened.getDefiningOp<CastOp>();
  if (!widen || !getElementTypeOrSelf(widen.getType()).isF32())
    return std::nullopt;
  auto narrow = widen.getInput().getDefiningOp<CastOp>();
  if (!narrow)
    return std::nullopt;
  grid.integerType = getElementTypeOrSelf(narrow.getType());
  if (!grid.integerType.isInteger() ||
      grid.integerType.getIntOrFloatBitWidth() > 16)
    return std::nullopt;
  auto clip = narrow.getInput().getDefiningOp<ClipOp>();
  if (!clip || !clip.getType().getElementType().isF32())
    return std::nullopt;
  grid.lo = clip.getMin().convertToFloat();
  grid.hi = clip.getMax().convertToFloat();
  // The clip bounds must be integers the stored type holds, so that the
  // casts keep every clipped value.
  unsigned bits = grid.integerType.getIntOrFloatBitWidth();
  bool isUnsigned = grid.integerType.isUnsignedInteger();
  float typeLo = isUnsigned ? 0.0f : -std::ldexp(1.0f, bits - 1);
  float typeHi =
      (isUnsigned ? std::ldexp(1.0f, bits) : std::ldexp(1.0f, bits - 1)) - 1;
  if (grid.lo != std::nearbyint(grid.lo) ||
      grid.hi != std::nearbyint(grid.hi) || grid.lo < typeLo ||
      grid.hi > typeHi || grid.lo > grid.hi)
    return std::nullopt;
  auto [rounded, addedZeroPoint] = withoutAddedZeroPoint(clip.getInput());
  if (addedZeroPoint != grid.zeroPoint)
    return std::nullopt;
  auto round = rounded.getDefiningOp<RoundOp>();
  if (!round)
    return std::nullopt;
  auto div = round.getInput().getDefiningOp<DivOp>();
  if (!div || splatF32(div.getRhs()) != scale ||
      div.getLhs().getType() != v.getType())
    return std::nullopt;
  return std::make_pair(div.getLhs(), grid);
}

/// A max pool every window of which holds at least one input element: its
/// results are input elements, never the padding's -inf.
bool windowsHoldElements(MaxPoolOp pool) {
  auto inShape = cast<RankedTensorType>(pool.getInput().getType()).getShape();
  auto outShape = pool.getType().getShape();
  int64_t spatial = pool.getType().getRank() - 2;
  int64_t first = pool.getChannelsLast() ? 1 : 2;
  auto kernel = pool.getKernelShape(), strides = pool.getStrides();
  auto dilations = pool.getDilations(), pads = pool.getPads();
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t lastStart = (outShape[first + i] - 1) * strides[i] - pads[i];
    if (dilations[i] != 1 || pads[i] >= kernel[i] ||
        lastStart >= inShape[first + i])
      return false;
  }
  return true;
}

/// `v` holds only values of `grid`: it is a fake quantization to it, or
/// such values moved.
bool isOnGrid(Value v, const QuantizationGrid &grid, int depth = 0) {
  if (depth > kMaxMovesToGrid)
    return false;
  if (auto match = matchFakeQuantize(v))
    return grid.holds(match->second);
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<ReshapeOp, TransposeOp, SliceOp, ExpandOp>(op))
    return isOnGrid(op->getOperand(0), grid, depth + 1);
  if (auto pool = dyn_cast<MaxPoolOp>(op))
    return windowsHoldElements(pool) &&
           isOnGrid(pool.getInput(), grid, depth + 1);
  if (isa<ConcatOp>(op))
    return llvm::all_of(op->getOperands(), [&](Value input) {
      return isOnGrid(input, grid, depth + 1);
    });
  return false;
}

struct DropRepeatedQuantizationPass
    : public kiln::impl::DropRepeatedQuantizationBase<
          DropRepeatedQuantizationPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<MulOp, Value>> repeated;
    getOperation().walk([&](MulOp mul) {
      auto match = matchFakeQuantize(mul.getResult());
      if (match && isOnGrid(match->first, match->second))
        repeated.push_back({mul, match->first});
    });
    // Replacing only uses: the quantizing ops die as canonicalize finds
    // them unused, and a grid found through one pair stays matchable for
    // the pairs that read it.
    for (auto [mul, input] : repeated)
      mul.getResult().replaceAllUsesWith(input);
  }
};

} // namespace
