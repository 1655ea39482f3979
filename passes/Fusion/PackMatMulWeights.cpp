//===- PackMatMulWeights.cpp - a matmul's constant weight in column panels
//-===//
//
// The CPU's register tiles walk a matmul's constant weight B [K, N] one
// 32-column panel at a time, 128 bytes from each of its K rows, N * 4
// bytes apart: K streams per panel, which the hardware prefetchers follow
// poorly, over K pages. A matmul of few rows (a transformer at batch 1, a
// decoder's tokens) reads B once per run, from memory, bound by that
// stream (a chain of 1024 x 1024 matmuls read its weights at half the
// bandwidth of a copy); one of many rows reads each panel again for every
// tile of rows, and a panel strewn over more pages than the TLB holds
// (BERT-base's 768 x 3072 FFN weights: 3072 pages of 12 KiB rows) costs a
// page walk per row each time.
//
// This pass stores such a B as panels, Bp [N / P, K, P] with
// Bp[b, k, w] = B[k, b * P + w], and computes the matmul as the einsum
// `...mk,bkw->...mbw`: each panel is one contiguous run, and the result
// [..., M, N / P, P] is the matmul's [..., M, N] in the same order of
// elements, so a reshape gives it back. A Gemm A * B + C (a Linear layer,
// GPT-2's on [B * S, E]) becomes the same einsum plus C.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

namespace kiln {
#define GEN_PASS_DEF_PACKMATMULWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct PackMatMulWeightsPass
    : public kiln::impl::PackMatMulWeightsBase<PackMatMulWeightsPass> {
  using Base::Base;

  /// A contraction's A, B and C (a Gemm's bias, or null).
  struct Operands {
    Value a, b, c;
  };

  /// The operands of a matmul, or of a Gemm computing A * B + C (no
  /// transposes, alpha and beta 1: a Linear layer after
  /// kiln-transpose-weights); nothing for any other op.
  static std::optional<Operands> operandsOf(Operation *op) {
    if (auto matmul = dyn_cast<MatMulOp>(op))
      return Operands{matmul.getLhs(), matmul.getRhs(), Value()};
    auto gemm = dyn_cast<GemmOp>(op);
    if (!gemm || gemm.getTransA() || gemm.getTransB() ||
        !gemm.getAlpha().isExactlyValue(1.0) ||
        !gemm.getBeta().isExactlyValue(1.0))
      return std::nullopt;
    return Operands{gemm.getA(), gemm.getB(), gemm.getC()};
  }

  /// Whether `op` reads a float32 constant B [K, N] of at least minBytes,
  /// N two panels or more and a multiple of the panel width, for at most
  /// maxRows rows (when it is positive).
  bool isPackable(Operation *op, const Operands &operands) {
    auto a = dyn_cast<RankedTensorType>(operands.a.getType());
    auto b = dyn_cast<RankedTensorType>(operands.b.getType());
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!a || !b || !result || a.getRank() < 2 || b.getRank() != 2 ||
        !a.hasStaticShape() || !b.hasStaticShape() ||
        !result.hasStaticShape() || !b.getElementType().isF32() ||
        !operands.b.getDefiningOp<ConstantOp>() ||
        result.getRank() != a.getRank())
      return false;
    int64_t n = b.getDimSize(1);
    if (panelWidth <= 0 || n < 2 * panelWidth || n % panelWidth != 0)
      return false;
    int64_t rows = result.getNumElements() / n;
    return (maxRows <= 0 || rows <= maxRows) &&
           b.getNumElements() * 4 >= minBytes;
  }

  /// B [K, N] as panels [N / P, K, P]; one copy per weight.
  Value packed(ConstantOp weights, DenseMap<Operation *, Value> &copies) {
    Value &copy = copies[weights];
    if (copy)
      return copy;
    auto type = cast<RankedTensorType>(weights.getType());
    int64_t k = type.getDimSize(0), n = type.getDimSize(1);
    int64_t p = panelWidth;
    auto packedType =
        RankedTensorType::get({n / p, k, p}, type.getElementType());
    FailureOr<ElementsAttr> panels = rearrangeFloatConstant(
        cast<ElementsAttr>(weights.getValue()), packedType,
        [&](int64_t i) {
          int64_t w = i % p, row = (i / p) % k, panel = i / (p * k);
          return row * n + panel * p + w;
        },
        ".panels");
    if (failed(panels))
      return nullptr;
    OpBuilder builder(weights);
    builder.setInsertionPointAfter(weights);
    copy = ConstantOp::create(builder, weights.getLoc(), *panels);
    return copy;
  }

  /// `...mk,bkw->...mbw` for A of `rank` dims, the batch dims named by
  /// letters other than m, k, b and w.
  static std::string equation(int64_t rank) {
    std::string batch = std::string("acdefghijl").substr(0, rank - 2);
    return batch + "mk,bkw->" + batch + "mbw";
  }

  void runOnOperation() override {
    DenseMap<Operation *, Value> copies;
    SmallVector<std::pair<Operation *, Operands>> packable;
    getOperation().walk([&](Operation *op) {
      std::optional<Operands> operands = operandsOf(op);
      if (operands && isPackable(op, *operands))
        packable.push_back({op, *operands});
    });
    for (auto &[op, operands] : packable) {
      Value panels = packed(operands.b.getDefiningOp<ConstantOp>(), copies);
      if (!panels)
        continue;
      auto result = cast<RankedTensorType>(op->getResult(0).getType());
      SmallVector<int64_t> shape(result.getShape().drop_back());
      shape.append({result.getShape().back() / panelWidth, panelWidth});
      OpBuilder builder(op);
      Location loc = op->getLoc();
      // The einsum computes the product in another shape: it claims no
      // ONNX value (kiln-bisect compares shapes); the last op does.
      Location partLoc = withoutOnnxValues(loc);
      auto einsum = EinsumOp::create(
          builder, partLoc, result.clone(shape), ValueRange{operands.a, panels},
          builder.getStringAttr(equation(result.getRank())));
      Value back = ReshapeOp::create(builder, operands.c ? partLoc : loc,
                                     result, einsum.getResult());
      if (operands.c)
        back = AddOp::create(builder, loc, result, back, operands.c);
      op->getResult(0).replaceAllUsesWith(back);
      op->erase();
    }
    for (auto &[weights, copy] : copies)
      if (weights->use_empty())
        weights->erase();
  }
};

} // namespace
