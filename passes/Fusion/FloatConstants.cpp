//===- FloatConstants.cpp - rearranging float32 weights at compile time --===//
#include "FloatConstants.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

FailureOr<ElementsAttr>
kiln::rearrangeFloatConstant(ElementsAttr value, RankedTensorType resultType,
                             function_ref<int64_t(int64_t)> sourceIndex,
                             StringRef nameSuffix) {
  auto type = cast<ShapedType>(value.getType());
  if (!type.getElementType().isF32())
    return failure();
  bool sameCount = type.getNumElements() == resultType.getNumElements();
  SmallVector<float> source;
  std::string name;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat() && sameCount)
      return ElementsAttr(dense.reshape(resultType));
    llvm::append_range(source, dense.getValues<float>());
  } else if (auto resource = dyn_cast<DenseF32ResourceElementsAttr>(value)) {
    std::optional<ArrayRef<float>> floats = resource.tryGetAsArrayRef();
    if (!floats)
      return failure();
    source.assign(floats->begin(), floats->end());
    name = (resource.getRawHandle().getKey() + nameSuffix).str();
  } else {
    return failure();
  }
  SmallVector<float> result(resultType.getNumElements());
  for (int64_t i = 0, e = result.size(); i < e; ++i) {
    int64_t from = sourceIndex(i);
    result[i] = from < 0 ? 0.0f : source[from];
  }
  if (name.empty())
    return ElementsAttr(DenseElementsAttr::get(resultType, ArrayRef(result)));
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(result));
  return ElementsAttr(
      DenseResourceElementsAttr::get(resultType, name, std::move(blob)));
}
