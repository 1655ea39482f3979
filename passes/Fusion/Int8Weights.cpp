//===- Int8Weights.cpp - int8 weights and uint8 activations of QDQ models -===//
#include "Int8Weights.h"

#include "kiln/Dialect/KilnDialect.h"

#include <cmath>

using namespace mlir;

Value kiln::floatConstant(OpBuilder &builder, Location loc,
                          ArrayRef<double> values, ArrayRef<int64_t> shape,
                          Type type) {
  SmallVector<Attribute> elements;
  for (double v : values)
    elements.push_back(builder.getFloatAttr(type, v));
  return ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(RankedTensorType::get(shape, type), elements));
}

std::optional<float> kiln::scalarConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  if (dense.getElementType().isF32())
    return *dense.getValues<float>().begin();
  if (!dense.getElementType().isF64())
    return std::nullopt;
  double element = *dense.getValues<double>().begin();
  if (double(float(element)) != element)
    return std::nullopt;
  return float(element);
}

Value kiln::uint8Source(Value value) {
  auto cast = value.getDefiningOp<CastOp>();
  if (!cast)
    return nullptr;
  Value input = cast.getInput();
  Type to = getElementTypeOrSelf(cast.getType());
  return getElementTypeOrSelf(input.getType()).isUnsignedInteger(8) &&
                 (to.isF32() || to.isF64())
             ? input
             : nullptr;
}

bool kiln::holdsInt8(ArrayRef<float> values) {
  return llvm::all_of(values, [](float v) {
    return v >= -128 && v <= 127 && v == std::nearbyint(v) &&
           !(v == 0 && std::signbit(v));
  });
}

namespace {

/// Whether every value of groups [first, last) is float32(q * scale) for
/// an integer q int8 holds.
bool onGrid(ArrayRef<float> values, int64_t groupSize, int64_t first,
            int64_t last, function_ref<int64_t(int64_t, int64_t)> index,
            float scale) {
  for (int64_t g = first; g < last; ++g)
    for (int64_t i = 0; i < groupSize; ++i) {
      float v = values[index(i, g)];
      double q = std::nearbyint(double(v) / scale);
      if (!(q >= -128 && q <= 127) || float(q) * scale != v)
        return false;
    }
  return true;
}

} // namespace

std::optional<std::vector<float>>
kiln::int8Offsets(ArrayRef<float> values, int64_t groupSize, int64_t groups,
                  function_ref<int64_t(int64_t, int64_t)> index) {
  std::vector<float> offsets(groups, 0.0f);
  for (int64_t g = 0; g < groups; ++g) {
    float low = INFINITY, high = -INFINITY;
    bool fits = true;
    for (int64_t i = 0; i < groupSize; ++i) {
      float v = values[index(i, g)];
      if (!(std::fabs(v) <= 255) || v != std::nearbyint(v))
        return std::nullopt;
      low = std::min(low, v);
      high = std::max(high, v);
      fits = fits && holdsInt8(v);
    }
    if (fits)
      continue;
    if (high - low > 255)
      return std::nullopt;
    offsets[g] = low + 128;
  }
  return offsets;
}

void kiln::eraseReplacedOperands(ArrayRef<Operation *> weights,
                                 ArrayRef<Operation *> dropped) {
  for (Operation *weight : weights)
    if (weight->use_empty())
      weight->erase();
  for (Operation *op : llvm::reverse(dropped))
    if (op->use_empty())
      op->erase();
}

std::optional<std::vector<float>>
kiln::int8Scales(ArrayRef<float> values, int64_t groupSize, int64_t groups,
                 function_ref<int64_t(int64_t, int64_t)> index) {
  auto scaleOf = [&](int64_t first, int64_t last) -> std::optional<float> {
    float largest = 0;
    for (int64_t g = first; g < last; ++g)
      for (int64_t i = 0; i < groupSize; ++i)
        largest = std::max(largest, std::fabs(values[index(i, g)]));
    if (largest == 0)
      return 1.0f;
    float guess = float(double(largest) / 127.0);
    for (float scale : {guess, std::nextafter(guess, 0.0f),
                        std::nextafter(guess, 2 * guess)}) {
      if (scale > 0 && onGrid(values, groupSize, first, last, index, scale))
        return scale;
    }
    return std::nullopt;
  };
  if (std::optional<float> all = scaleOf(0, groups))
    return std::vector<float>(groups, *all);
  std::vector<float> scales(groups);
  for (int64_t g = 0; g < groups; ++g) {
    std::optional<float> scale = scaleOf(g, g + 1);
    if (!scale)
      return std::nullopt;
    scales[g] = *scale;
  }
  return scales;
}
