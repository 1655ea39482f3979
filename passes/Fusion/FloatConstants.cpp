//===- FloatConstants.cpp - rearranging float weights at compile time -----===//
#include "FloatConstants.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace {

/// The bytes of `value`'s elements, row-major (a splat's one element
/// repeated), and for a resource its key; failure when they are not
/// readable (an external or elided blob).
FailureOr<std::vector<char>> elementBytes(ElementsAttr value, size_t width,
                                          std::string &resourceKey) {
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
  if (raw.size() == width && count > 1) { // a splat's one element
    std::vector<char> bytes;
    bytes.reserve(count * width);
    for (size_t i = 0; i < count; ++i)
      bytes.insert(bytes.end(), raw.begin(), raw.end());
    return bytes;
  }
  if (raw.size() != count * width)
    return failure();
  return std::vector<char>(raw.begin(), raw.end());
}

} // namespace

FailureOr<ElementsAttr> kiln::permuteFloatConstant(ElementsAttr value,
                                                   ArrayRef<int64_t> perm,
                                                   StringRef nameSuffix) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> sourceStrides(rank, 1), shape(rank);
  for (int64_t d = rank - 2; d >= 0; --d)
    sourceStrides[d] = sourceStrides[d + 1] * type.getDimSize(d + 1);
  for (int64_t d = 0; d < rank; ++d)
    shape[d] = type.getDimSize(perm[d]);
  return rearrangeFloatConstant(
      value, RankedTensorType::get(shape, type.getElementType()),
      [&](int64_t i) {
        // Result dim d, innermost first, steps along source dim perm[d].
        int64_t source = 0;
        for (int64_t d = rank - 1; d >= 0; --d) {
          source += (i % shape[d]) * sourceStrides[perm[d]];
          i /= shape[d];
        }
        return source;
      },
      nameSuffix);
}

FailureOr<ElementsAttr>
kiln::rearrangeFloatConstant(ElementsAttr value, RankedTensorType resultType,
                             function_ref<int64_t(int64_t)> sourceIndex,
                             StringRef nameSuffix) {
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
  FailureOr<std::vector<char>> source = elementBytes(value, width, key);
  if (failed(source))
    return failure();
  // Zero bits are 0.0 in every IEEE-style float type: the padding.
  std::vector<char> result(resultType.getNumElements() * width, 0);
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i)
    if (int64_t from = sourceIndex(i); from >= 0)
      std::memcpy(&result[i * width], &(*source)[from * width], width);
  if (key.empty())
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(resultType, result));
  // Aligned to the element, as the importer's and demote-precision's.
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(ArrayRef(result),
                                                            width);
  return ElementsAttr(DenseResourceElementsAttr::get(
      resultType, key + nameSuffix.str(), std::move(blob)));
}
