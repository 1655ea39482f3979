//===- TransposeWeights.cpp - store Gemm's transposed weights as K x N ----===//
//
// PyTorch exports a Linear layer on 2-D inputs as Gemm(x, W, b, transB=1)
// with W stored N x K. Read that way, no operand of the contraction is
// contiguous along N, the output's innermost dim, and the CPU's register
// tiles (kiln-contract-with-vector-registers) cannot take it. A constant W
// is transposed once at compile time instead, and the Gemm reads it K x N.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"

#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_TRANSPOSEWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct TransposeWeightsPass
    : public kiln::impl::TransposeWeightsBase<TransposeWeightsPass> {
  void runOnOperation() override {
    getOperation().walk([&](GemmOp gemm) {
      auto weights = gemm.getB().getDefiningOp<ConstantOp>();
      auto type = dyn_cast<RankedTensorType>(gemm.getB().getType());
      if (!gemm.getTransB() || !weights || !type || !type.hasStaticShape() ||
          !type.getElementType().isF32())
        return;
      FailureOr<ElementsAttr> transposed = permuteFloatConstant(
          cast<ElementsAttr>(weights.getValue()), {1, 0}, ".t");
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
