//===- TransposeWeights.cpp - store Gemm's transposed weights as K x N ----===//
//
// PyTorch exports a Linear layer on 2-D inputs as Gemm(x, W, b, transB=1)
// with W stored N x K. Read that way, no operand of the contraction is
// contiguous along N, the output's innermost dim, and the CPU's register
// tiles (kiln-contract-with-vector-registers) cannot take it. A constant W
// is transposed once at compile time instead, and the Gemm reads it K x N.
//
// On GPU targets (`gpu`) a Gemm whose A is one row (a classifier at batch
// 1: ResNet-50's 1 x 2048 x 1000) reads W N x K instead (kept, or
// transposed when the model stores it K x N). Its kernel computes one
// output per forall iteration, a dot product of A's row with W's row n,
// which kiln-distribute-rows-to-lanes gives to a warp or two whose lanes
// read W's row in 16-byte runs. Transposed, each output was one thread
// walking a column of W at a stride of N: 1000 threads for 8 MB, 0.055 ms
// on an H200 (2026-12-04) where a copy of the weights takes about 2 us.
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
  using Base::Base;

  /// A's rows (M) are one.
  static bool hasOneRow(GemmOp gemm) {
    auto a = dyn_cast<RankedTensorType>(gemm.getA().getType());
    return a && a.getRank() == 2 && a.getDimSize(gemm.getTransA() ? 1 : 0) == 1;
  }

  void runOnOperation() override {
    getOperation().walk([&](GemmOp gemm) {
      // N x K (transB) for a GPU's one-row Gemm, K x N otherwise.
      bool wantTransB = gpu && hasOneRow(gemm);
      auto weights = gemm.getB().getDefiningOp<ConstantOp>();
      auto type = dyn_cast<RankedTensorType>(gemm.getB().getType());
      if (gemm.getTransB() == wantTransB || !weights || !type ||
          !type.hasStaticShape() || !type.getElementType().isF32())
        return;
      FailureOr<ElementsAttr> transposed =
          permuteFloatConstant(cast<ElementsAttr>(weights.getValue()), {1, 0},
                               wantTransB ? ".nk" : ".t");
      if (failed(transposed))
        return;
      OpBuilder builder(gemm);
      auto constant =
          ConstantOp::create(builder, weights.getLoc(), *transposed);
      gemm.getBMutable().assign(constant);
      gemm.setTransB(wantTransB);
      if (weights->use_empty())
        weights->erase();
    });
  }
};

} // namespace
