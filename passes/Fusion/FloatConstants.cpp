//===- FloatConstants.cpp - rearranging float weights at compile time -----===//
#include "FloatConstants.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace {

/// The bytes of `value`'s elements, row-major, without a copy: a splat's
/// one element (`isSplat`) or every element; and for a resource its key.
/// Failure when they are not readable (an external or elided blob).
FailureOr<ArrayRef<char>> elementBytes(ElementsAttr value, size_t width,
                                       std::string &resourceKey,
                                       bool &isSplat) {
  size_t count = cast<ShapedType>(value.getType()).getNumElements();
  ArrayRef<char> raw;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    raw = dense.getRawData();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    raw = blob->getData();
    resourceKey = resource.getRawHandle().getKey().str();
  } else {
    return failure();
  }
  isSplat = raw.size() == width && count > 1;
  if (!isSplat && raw.size() != count * width)
    return failure();
  return raw;
}

/// The float32, float16 or bfloat16 constant `value` rearranged into
/// `resultType` by `fill(source, isSplat, width, result)`, which writes
/// every element of `result` (row-major, `width` bytes each) from `source`
/// (a splat's one element when `isSplat`). The bytes go straight into the
/// result's storage: a resource's new blob (aligned to the element, as the
/// importer's and demote-precision's), or dense data. Weights run to
/// hundreds of megabytes.
FailureOr<ElementsAttr>
rearrange(ElementsAttr value, RankedTensorType resultType, StringRef nameSuffix,
          function_ref<void(const char *, bool, size_t, char *)> fill) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  if (!(element.isF32() || element.isF16() || element.isBF16()) ||
      resultType.getElementType() != element)
    return failure();
  bool sameCount = type.getNumElements() == resultType.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    if (dense.isSplat() && sameCount)
      return ElementsAttr(dense.reshape(resultType));
  size_t width = element.getIntOrFloatBitWidth() / 8;
  std::string key;
  bool isSplat = false;
  FailureOr<ArrayRef<char>> source = elementBytes(value, width, key, isSplat);
  if (failed(source))
    return failure();
  size_t bytes = resultType.getNumElements() * width;
  if (key.empty()) {
    std::vector<char> result(bytes);
    fill(source->data(), isSplat, width, result.data());
    return ElementsAttr(
        DenseElementsAttr::getFromRawBuffer(resultType, result));
  }
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(bytes, width);
  fill(source->data(), isSplat, width, blob.getMutableData().data());
  return ElementsAttr(DenseResourceElementsAttr::get(
      resultType, key + nameSuffix.str(), std::move(blob)));
}

/// Copies `count` elements of `Width` bytes to consecutive places of
/// `result` from `source`, stepping through the source as an odometer over
/// the result's dims (`shape`) whose dim d moves `steps[d]` elements: a
/// transpose without a division per element.
template <size_t Width>
void copyPermuted(const char *source, char *result, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> steps, int64_t count) {
  int64_t rank = shape.size();
  SmallVector<int64_t> index(rank, 0);
  int64_t from = 0;
  for (int64_t i = 0; i < count; ++i, result += Width) {
    std::memcpy(result, source + from * Width, Width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      from += steps[d];
      if (++index[d] < shape[d])
        break;
      from -= steps[d] * shape[d];
      index[d] = 0;
    }
  }
}

} // namespace

FailureOr<ElementsAttr> kiln::permuteFloatConstant(ElementsAttr value,
                                                   ArrayRef<int64_t> perm,
                                                   StringRef nameSuffix) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> sourceStrides(rank, 1), shape(rank), steps(rank);
  for (int64_t d = rank - 2; d >= 0; --d)
    sourceStrides[d] = sourceStrides[d + 1] * type.getDimSize(d + 1);
  // Result dim d steps along source dim perm[d].
  for (int64_t d = 0; d < rank; ++d) {
    shape[d] = type.getDimSize(perm[d]);
    steps[d] = sourceStrides[perm[d]];
  }
  int64_t count = type.getNumElements();
  return rearrange(
      value, RankedTensorType::get(shape, type.getElementType()), nameSuffix,
      [&](const char *source, bool isSplat, size_t width, char *result) {
        if (isSplat) {
          for (int64_t i = 0; i < count; ++i)
            std::memcpy(result + i * width, source, width);
        } else if (width == 2) {
          copyPermuted<2>(source, result, shape, steps, count);
        } else {
          copyPermuted<4>(source, result, shape, steps, count);
        }
      });
}

FailureOr<ElementsAttr>
kiln::rearrangeFloatConstant(ElementsAttr value, RankedTensorType resultType,
                             function_ref<int64_t(int64_t)> sourceIndex,
                             StringRef nameSuffix) {
  int64_t count = resultType.getNumElements();
  return rearrange(
      value, resultType, nameSuffix,
      [&](const char *source, bool isSplat, size_t width, char *result) {
        for (int64_t i = 0; i < count; ++i) {
          int64_t from = sourceIndex(i);
          if (from < 0) // zero bits are 0.0 in every IEEE-style float type
            std::memset(result + i * width, 0, width);
          else
            std::memcpy(result + i * width,
                        source + (isSplat ? 0 : from * width), width);
        }
      });
}

FailureOr<ElementsAttr>
kiln::narrowIntegerValuedConstant(ElementsAttr value, IntegerType narrowType,
                                  StringRef nameSuffix) {
  auto type = cast<ShapedType>(value.getType());
  return narrowIntegerValuedConstant(
      value, narrowType, type.getShape(), [](int64_t i) { return i; },
      nameSuffix);
}

FailureOr<ElementsAttr> kiln::narrowIntegerValuedConstant(
    ElementsAttr value, IntegerType narrowType, ArrayRef<int64_t> shape,
    function_ref<int64_t(int64_t)> sourceIndex, StringRef nameSuffix) {
  auto type = cast<ShapedType>(value.getType());
  unsigned bits = narrowType.getWidth();
  if (!type.getElementType().isF32() || !narrowType.isSignless() ||
      (bits != 8 && bits != 16))
    return failure();
  std::string key;
  bool isSplat = false;
  FailureOr<ArrayRef<char>> source = elementBytes(value, 4, key, isSplat);
  if (failed(source) || isSplat)
    return failure();
  auto resultType = RankedTensorType::get(shape, narrowType);
  size_t count = resultType.getNumElements();
  float lowest = -std::ldexp(1.0f, bits - 1);
  float highest = std::ldexp(1.0f, bits - 1) - 1;
  size_t width = bits / 8;
  std::vector<char> narrow(count * width, 0);
  for (size_t i = 0; i < count; ++i) {
    int64_t from = sourceIndex(i);
    if (from < 0)
      continue;
    float v;
    std::memcpy(&v, source->data() + 4 * from, 4);
    // NaN fails every comparison; -0.0 would come back as +0.0.
    if (!(v >= lowest && v <= highest) || v != std::nearbyint(v) ||
        (v == 0 && std::signbit(v)))
      return failure();
    if (bits == 8)
      narrow[i] = static_cast<char>(static_cast<int8_t>(v));
    else {
      int16_t half = static_cast<int16_t>(v);
      std::memcpy(narrow.data() + 2 * i, &half, 2);
    }
  }
  if (key.empty())
    return ElementsAttr(
        DenseElementsAttr::getFromRawBuffer(resultType, narrow));
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(narrow.size(), width);
  std::memcpy(blob.getMutableData().data(), narrow.data(), narrow.size());
  return ElementsAttr(DenseResourceElementsAttr::get(
      resultType, key + nameSuffix.str(), std::move(blob)));
}

FailureOr<std::vector<float>> kiln::readFloatConstant(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  bool wide = type.getElementType().isF64();
  if (!type.getElementType().isF32() && !wide)
    return failure();
  size_t width = wide ? 8 : 4;
  std::string key;
  bool isSplat = false;
  FailureOr<ArrayRef<char>> source = elementBytes(value, width, key, isSplat);
  if (failed(source))
    return failure();
  std::vector<float> values(type.getNumElements());
  for (size_t i = 0; i < values.size(); ++i) {
    const char *at = source->data() + (isSplat ? 0 : width * i);
    if (!wide) {
      std::memcpy(&values[i], at, 4);
      continue;
    }
    double v;
    std::memcpy(&v, at, 8);
    values[i] = static_cast<float>(v);
    if (static_cast<double>(values[i]) != v && !std::isnan(v))
      return failure();
  }
  return values;
}
