//===- TransposeWeights.cpp - store Gemm's transposed weights as K x N ----===//
//
// PyTorch exports a Linear layer on 2-D inputs as Gemm(x, W, b, transB=1)
// with W stored N x K. Read that way, no operand of the contraction is
// contiguous along N, the output's innermost dim, and the CPU's register
// tiles (kiln-contract-with-vector-registers) cannot take it. A constant W
// is transposed once at compile time instead, and the Gemm reads it K x N.
//
// A Gemm whose A is one row (a classifier at batch 1, an LSTM's step), or
// up to `max-rows` rows (GPU targets: kMaxGpuDotProductRows), reads W N x K
// instead (kept, or transposed when the model stores it K x N) when K is
// at least `one-row-min-k`: each output is a dot product of A's row with
// W's contiguous row n. On GPU targets (1: always)
// kiln-distribute-rows-to-lanes gives it to a warp or two whose lanes read
// W's row in 16-byte runs; transposed, each output was one thread walking a
// column of W at a stride of N: 1000 threads for 8 MB, 0.055 ms on an H200
// (2026-12-04) where a copy of the weights takes about 2 us. On the CPU
// each workgroup's register tiles walked K rows of a 32-column panel at a
// stride of N: an LSTM's 4 MB of recurrent weights at 19 GB/s, against
// 100 GB/s read as rows; for short rows the dot products' horizontal sums
// cost more than the strided panel.
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

  /// A's rows (M) are at most maxRows.
  bool hasFewRows(GemmOp gemm) {
    auto a = dyn_cast<RankedTensorType>(gemm.getA().getType());
    return a && a.getRank() == 2 &&
           a.getDimSize(gemm.getTransA() ? 1 : 0) <= maxRows;
  }

  /// K: the length of each output's dot product.
  static int64_t reducedLength(GemmOp gemm) {
    auto a = cast<RankedTensorType>(gemm.getA().getType());
    return a.getDimSize(gemm.getTransA() ? 0 : 1);
  }

  /// A MatMul of at most maxRows rows by a constant float32 matrix (a Keras
  /// Dense layer at batch 1) whose K is at least `oneRowMinK` becomes the
  /// same Gemm, for
  /// the Gemm rule below to give it N x K weights (on GPU targets it was
  /// split along K instead, one thread per output and part: 64 blocks for
  /// MTCNN's 1152 x 256 layer).
  void fewRowMatMulsAsGemms() {
    if (oneRowMinK <= 0)
      return;
    getOperation().walk([&](MatMulOp matmul) {
      auto a = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
      auto b = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
      if (!a || !b || a.getRank() != 2 || b.getRank() != 2 ||
          a.getDimSize(0) > maxRows || a.getDimSize(1) < oneRowMinK ||
          !b.hasStaticShape() || !b.getElementType().isF32() ||
          !matmul.getRhs().getDefiningOp<ConstantOp>())
        return;
      OpBuilder builder(matmul);
      auto gemm = GemmOp::create(
          builder, matmul.getLoc(), matmul.getType(), matmul.getLhs(),
          matmul.getRhs(), Value(), builder.getF32FloatAttr(1.0f),
          builder.getF32FloatAttr(1.0f), builder.getBoolAttr(false),
          builder.getBoolAttr(false));
      matmul.replaceAllUsesWith(gemm.getResult());
      matmul.erase();
    });
  }

  void runOnOperation() override {
    fewRowMatMulsAsGemms();
    // One transposed copy per weight and layout, however many Gemms read it
    // (an unrolled LSTM reads its recurrent weights once per step).
    DenseMap<std::pair<Operation *, int>, Value> transposedCopies;
    getOperation().walk([&](GemmOp gemm) {
      // N x K (transB) for a Gemm of few rows and a long enough K, K x N
      // otherwise.
      bool wantTransB = oneRowMinK > 0 && hasFewRows(gemm) &&
                        reducedLength(gemm) >= oneRowMinK;
      auto weights = gemm.getB().getDefiningOp<ConstantOp>();
      auto type = dyn_cast<RankedTensorType>(gemm.getB().getType());
      if (gemm.getTransB() == wantTransB || !weights || !type ||
          !type.hasStaticShape() || !type.getElementType().isF32())
        return;
      Value &copy = transposedCopies[{weights, int(wantTransB)}];
      if (!copy) {
        FailureOr<ElementsAttr> transposed =
            permuteFloatConstant(cast<ElementsAttr>(weights.getValue()), {1, 0},
                                 wantTransB ? ".nk" : ".t");
        if (failed(transposed))
          return;
        OpBuilder builder(weights);
        builder.setInsertionPointAfter(weights);
        copy = ConstantOp::create(builder, weights.getLoc(), *transposed);
      }
      gemm.getBMutable().assign(copy);
      gemm.setTransB(wantTransB);
    });
    for (auto &[key, copy] : transposedCopies)
      if (key.first->use_empty())
        key.first->erase();
  }
};

} // namespace
