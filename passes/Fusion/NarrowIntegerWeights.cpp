//===- NarrowIntegerWeights.cpp - integer-valued weights stored narrow ----===//
//
// A dynamically quantized model (MatMulInteger, DynamicQuantizeLSTM)
// multiplies by int8 weights minus their zero point. Kiln sums those
// products exactly in float32 (the importer's integerSumType), so each
// weight becomes a float32 constant of small integers, four times the bytes
// the model stores. A matmul of few rows (a decoder's tokens, an LSTM's
// step) reads each weight once or a few times per run: it is bound by
// loading that constant.
//
// This pass stores such a weight, every element an integer that int8 (or
// else int16) holds, in that type behind a kiln.cast to float32.
// kiln-form-dispatch-regions puts the cast in the contraction's kernel,
// which then loads a quarter (a half) of the bytes and converts them in
// registers. The values, and so the results, stay the same.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"

#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_NARROWINTEGERWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct NarrowIntegerWeightsPass
    : public kiln::impl::NarrowIntegerWeightsBase<NarrowIntegerWeightsPass> {
  using Base::Base;

  /// The operand of `op` that holds a matmul's or Gemm's B, if it is a
  /// float32 constant of at least minBytes read for at most maxRows rows
  /// of outputs (each of its elements is loaded that many times).
  OpOperand *narrowableWeight(Operation *op) {
    OpOperand *b = nullptr;
    if (auto matmul = dyn_cast<MatMulOp>(op))
      b = &matmul.getRhsMutable();
    else if (auto gemm = dyn_cast<GemmOp>(op))
      b = &gemm.getBMutable();
    else if (isa<EinsumOp>(op) && op->getNumOperands() == 2)
      b = &op->getOpOperand(1);
    if (!b || !b->get().getDefiningOp<ConstantOp>())
      return nullptr;
    auto weight = dyn_cast<RankedTensorType>(b->get().getType());
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!weight || !result || !weight.hasStaticShape() ||
        !result.hasStaticShape() || result.getRank() == 0 ||
        !weight.getElementType().isF32() ||
        weight.getNumElements() * 4 < minBytes)
      return nullptr;
    int64_t columns = outputColumns(op, weight, result);
    int64_t rows = columns ? result.getNumElements() / columns : 0;
    return rows <= maxRows ? b : nullptr;
  }

  /// The outputs one row of the contraction has: a matmul's N (the
  /// result's last dim); for panels [N / P, K, P] read by an einsum whose
  /// result ends in [N / P, P] (kiln-pack-matmul-weights), N; 0 for any
  /// other einsum.
  static int64_t outputColumns(Operation *op, RankedTensorType weight,
                               RankedTensorType result) {
    ArrayRef<int64_t> shape = result.getShape();
    if (!isa<EinsumOp>(op))
      return shape.back();
    if (weight.getRank() != 3 || shape.size() < 2 ||
        shape.take_back(2) !=
            ArrayRef<int64_t>{weight.getDimSize(0), weight.getDimSize(2)})
      return 0;
    return weight.getDimSize(0) * weight.getDimSize(2);
  }

  /// `weights` as int8 or else int16, or null when neither holds it.
  static ConstantOp narrowed(ConstantOp weights) {
    OpBuilder builder(weights);
    builder.setInsertionPointAfter(weights);
    for (unsigned bits : {8u, 16u}) {
      FailureOr<ElementsAttr> narrow = narrowIntegerValuedConstant(
          cast<ElementsAttr>(weights.getValue()), builder.getIntegerType(bits),
          bits == 8 ? ".i8" : ".i16");
      if (succeeded(narrow))
        return ConstantOp::create(builder, weights.getLoc(), *narrow);
    }
    return nullptr;
  }

  void runOnOperation() override {
    // One narrowed copy per weight however many contractions read it (an
    // unrolled LSTM reads its recurrent weights once per step); a weight
    // found not to fit is read again by none.
    DenseMap<Operation *, ConstantOp> narrowCopies;
    getOperation().walk([&](Operation *op) {
      OpOperand *use = narrowableWeight(op);
      if (!use)
        return;
      auto weights = use->get().getDefiningOp<ConstantOp>();
      auto [it, inserted] = narrowCopies.try_emplace(weights, nullptr);
      if (inserted)
        it->second = narrowed(weights);
      if (!it->second)
        return;
      // A cast per use: each becomes the prologue of its own kernel.
      OpBuilder builder(op);
      Value widened =
          CastOp::create(builder, op->getLoc(), weights.getType(), it->second);
      use->assign(widened);
    });
    for (auto &[weights, copy] : narrowCopies)
      if (weights->use_empty())
        weights->erase();
  }
};

} // namespace
