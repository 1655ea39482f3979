//===- PackMatMulWeights.cpp - a few-row matmul's weight in column panels -===//
//
// A matmul of few rows (a transformer at batch 1, a decoder's tokens) reads
// its constant weight B [K, N] once per run, from memory: it is bound by
// that stream. The CPU's register tiles walk B one 32-column panel at a
// time, 128 bytes from each of its K rows, N * 4 bytes apart: K streams
// per panel, which the hardware prefetchers follow poorly (a chain of
// 1024 x 1024 matmuls read its weights at half the bandwidth of a copy).
//
// This pass stores such a B as panels, Bp [N / P, K, P] with
// Bp[b, k, w] = B[k, b * P + w], and computes the matmul as the einsum
// `...mk,bkw->...mbw`: each panel is one contiguous run, and the result
// [..., M, N / P, P] is the matmul's [..., M, N] in the same order of
// elements, so a reshape gives it back.
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

  /// Whether `matmul` reads a float32 constant B [K, N] of at least
  /// minBytes, N a multiple of two panels, for at most maxRows rows.
  bool isPackable(MatMulOp matmul) {
    auto a = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
    auto b = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
    auto result = dyn_cast<RankedTensorType>(matmul.getType());
    if (!a || !b || !result || a.getRank() < 2 || b.getRank() != 2 ||
        !a.hasStaticShape() || !b.hasStaticShape() ||
        !result.hasStaticShape() || !b.getElementType().isF32() ||
        !matmul.getRhs().getDefiningOp<ConstantOp>() ||
        result.getRank() != a.getRank())
      return false;
    int64_t n = b.getDimSize(1);
    int64_t rows = result.getNumElements() / n;
    return panelWidth > 0 && n % panelWidth == 0 && n >= 2 * panelWidth &&
           rows <= maxRows && b.getNumElements() * 4 >= minBytes;
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

  /// `...mk,bkw->...mbw` for A of `rank` dims (letters for the batch dims
  /// that the four of the panels' einsum do not use).
  static std::string equation(int64_t rank) {
    std::string batch = std::string("acdefghijl").substr(0, rank - 2);
    return batch + "mk,bkw->" + batch + "mbw";
  }

  void runOnOperation() override {
    DenseMap<Operation *, Value> copies;
    SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp matmul) {
      if (isPackable(matmul))
        matmuls.push_back(matmul);
    });
    for (MatMulOp matmul : matmuls) {
      auto weights = matmul.getRhs().getDefiningOp<ConstantOp>();
      Value panels = packed(weights, copies);
      if (!panels)
        continue;
      auto result = cast<RankedTensorType>(matmul.getType());
      SmallVector<int64_t> shape(result.getShape().drop_back());
      shape.append({result.getShape().back() / panelWidth, panelWidth});
      OpBuilder builder(matmul);
      // The einsum computes the matmul's value in another shape: it claims
      // no ONNX value (kiln-bisect compares shapes); the reshape does.
      auto einsum = EinsumOp::create(
          builder, withoutOnnxValues(matmul.getLoc()), result.clone(shape),
          ValueRange{matmul.getLhs(), panels},
          builder.getStringAttr(equation(result.getRank())));
      Value back = ReshapeOp::create(builder, matmul.getLoc(), result,
                                     einsum.getResult());
      matmul.replaceAllUsesWith(back);
      matmul.erase();
    }
    for (auto &[weights, copy] : copies)
      if (weights->use_empty())
        weights->erase();
  }
};

} // namespace
