//===- TransposeWeights.cpp - store Gemm's transposed weights as K x N ----===//
//
// PyTorch exports a Linear layer on 2-D inputs as Gemm(x, W, b, transB=1)
// with W stored N x K. Read that way, no operand of the contraction is
// contiguous along N, the output's innermost dim, and the CPU's register
// tiles (kiln-contract-with-vector-registers) cannot take it. A constant W
// is transposed once at compile time instead, and the Gemm reads it K x N.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/DialectResourceBlobManager.h"

namespace kiln {
#define GEN_PASS_DEF_TRANSPOSEWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The float32 matrix `value` (rows x columns) transposed; failure when its
/// storage is not readable.
FailureOr<ElementsAttr> transposeMatrix(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
  auto transposedType =
      RankedTensorType::get({columns, rows}, type.getElementType());
  SmallVector<float> source;
  std::string name;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return ElementsAttr(dense.reshape(transposedType));
    for (float f : dense.getValues<float>())
      source.push_back(f);
  } else if (auto resource = dyn_cast<DenseF32ResourceElementsAttr>(value)) {
    std::optional<ArrayRef<float>> floats = resource.tryGetAsArrayRef();
    if (!floats)
      return failure();
    source.assign(floats->begin(), floats->end());
    name = (resource.getRawHandle().getKey() + ".t").str();
  } else {
    return failure();
  }
  SmallVector<float> transposed(source.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c)
      transposed[c * rows + r] = source[r * columns + c];
  if (name.empty())
    return ElementsAttr(
        DenseElementsAttr::get(transposedType, ArrayRef(transposed)));
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(transposed));
  return ElementsAttr(
      DenseResourceElementsAttr::get(transposedType, name, std::move(blob)));
}

struct TransposeWeightsPass
    : public kiln::impl::TransposeWeightsBase<TransposeWeightsPass> {
  void runOnOperation() override {
    getOperation().walk([&](GemmOp gemm) {
      auto weights = gemm.getB().getDefiningOp<ConstantOp>();
      auto type = dyn_cast<RankedTensorType>(gemm.getB().getType());
      if (!gemm.getTransB() || !weights || !type || !type.hasStaticShape() ||
          !type.getElementType().isF32())
        return;
      FailureOr<ElementsAttr> transposed =
          transposeMatrix(cast<ElementsAttr>(weights.getValue()));
      if (failed(transposed))
        return;
      OpBuilder builder(gemm);
      auto constant = ConstantOp::create(builder, weights.getLoc(), *transposed);
      gemm.getBMutable().assign(constant);
      gemm.setTransB(false);
      if (weights->use_empty())
        weights->erase();
    });
  }
};

} // namespace
