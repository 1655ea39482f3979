//===- KMajorMatMulWeights.cpp - store 16-bit matmul weights [N][K] -------===//
//
// A MatMul's constant weight is [K][N] (PyTorch exports Linear layers on
// 3-D activations so: BERT's projections). A GPU tile that loads its
// tensor-core fragments straight from global memory (16x16 tiles: BERT at
// batch 1) gives each lane B at (k, n = lane / 4) and (k + 1, n): along N
// the eight lanes of a k row read 16 bytes of a 32-byte sector, and
// nothing joins a lane's two elements, which lie N apart. Stored [N][K],
// a lane's four elements of a column are contiguous along K (the K
// permutation of kiln-contract-with-matrix-cores' element loads): one
// 8-byte load, whole sectors (kiln-emulate-gpu --memory-traffic counts
// them: every fetched byte of BERT-base's FFN2 weights used, where [K][N]
// uses two thirds).
//
// A 16-bit constant weight (behind the widening cast that --precision and
// float16 models put before a contraction: the kernels that take tensor
// cores) is stored transposed and read through a kiln.transpose, which
// kiln-fold-transposes-into-contractions then folds into the matmul as a
// permuted einsum. Float32 weights (thread tiles, which stage B [k][n]
// from runs along N) are left alone. GPU targets.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"

#include "kiln/Dialect/OnnxValueNames.h"
#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KMAJORMATMULWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct KMajorMatMulWeightsPass
    : public kiln::impl::KMajorMatMulWeightsBase<KMajorMatMulWeightsPass> {
  void runOnOperation() override {
    getOperation().walk([&](MatMulOp matmul) { rewrite(matmul); });
  }

  void rewrite(MatMulOp matmul) {
    auto widen = matmul.getRhs().getDefiningOp<CastOp>();
    if (!widen || !widen.isWidening() || !widen->hasOneUse())
      return;
    auto constant = widen.getInput().getDefiningOp<ConstantOp>();
    auto type = dyn_cast<RankedTensorType>(widen.getInput().getType());
    if (!constant || !type || type.getRank() != 2 || !type.hasStaticShape())
      return;
    FailureOr<ElementsAttr> stored = permuteFloatConstant(
        cast<ElementsAttr>(constant.getValue()), {1, 0}, ".nk");
    if (failed(stored))
      return;
    // The fold makes the matmul an einsum over the activations' own dims,
    // no longer one 2-D matmul over their collapsed rows: its rows along
    // the last of them must still fill matrix tiles (BERT's 128-token
    // sequences; 8 tokens would take float32 thread tiles).
    // Rows of whole 32-byte sectors: a K that 16 does not divide (40:
    // rows of 80 bytes) made each lane's 8 bytes straddle sectors, more of
    // them than [K][N]'s 128-byte rows took.
    if (type.getDimSize(0) % 16 != 0)
      return;
    auto lhs = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
    if (!lhs || lhs.getRank() < 2 || lhs.isDynamicDim(lhs.getRank() - 2) ||
        paddedMatrixRows(lhs.getDimSize(lhs.getRank() - 2)) == 0)
      return;
    OpBuilder b(widen);
    Value kMajor = ConstantOp::create(b, constant.getLoc(), *stored);
    // Part of the matmul's work, named by its node but holding none of its
    // ONNX values.
    Value asOnnx =
        TransposeOp::create(b, withoutOnnxValues(matmul.getLoc()), type, kMajor,
                            b.getDenseI64ArrayAttr({1, 0}));
    widen->setOperand(0, asOnnx);
    if (constant->use_empty())
      constant->erase();
  }
};

} // namespace
