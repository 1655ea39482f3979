//===- SplitMatMulK.cpp - split a short, deep matmul's K over GPU blocks --===//
//
// A float32 matmul with few outputs and a long K (BERT at batch 1: 128 x
// 768 outputs, K = 768 or 3072) gives a GPU few output blocks, each
// walking all of K one stage after another: a couple of warps per SM, each
// waiting on its loads. Split into S parts along K, as cuBLAS does for
// such shapes, the parts are S times as many blocks with S times shorter
// loops, and one more small kernel adds them up:
//
//   A [..., M, K] -> [..., M, S, K/S]            (kiln.reshape: no copy)
//   B [K, N]      -> [S, K/S, N]                 (kiln.reshape)
//   partial = einsum("...msk,skn->s...mn")       [S, ..., M, N]
//   C       = reduce_sum(partial, axes = [0])    [..., M, N]
//
// The einsum is a batched contraction (its block loop over s), the sum a
// kernel that the matmul's elementwise epilogue (bias, residual) joins.
// Float32 only: 16-bit operands (a 16-bit model's, or float32 ones that
// --precision=f16|bf16 stores in 16 bits and widens for the matmul) take
// tensor cores, whose contraction kernels accumulate widened loads, not an
// einsum's products. A Gemm neither transposed nor scaled splits alike,
// its C added to the sum (a batch-32 classifier, 32 x 1280 x 1000: 160
// thread-tile blocks walking K = 1280, 0.044 ms on an H200).
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SPLITMATMULK
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// How many parts along K a product is split into, and the split itself.
struct KParts {
  KParts(int64_t minK, int64_t maxBlocks) : minK(minK), maxBlocks(maxBlocks) {}

  /// Parts along K: the most of 8, 4, 2 that divide K into parts of at
  /// least kSplitKMinPart (multiples of 16) and keep the blocks at most
  /// 4 x maxBlocks; 1 when the product has maxBlocks blocks already or K
  /// is shorter than minK.
  int64_t parts(int64_t outputs, int64_t k) const {
    int64_t blocks =
        std::max<int64_t>(1, outputs / kSmallContractionBlockOutputs);
    if (k < minK || blocks >= maxBlocks)
      return 1;
    for (int64_t s : {8, 4, 2})
      if (k % (16 * s) == 0 && k / s >= kSplitKMinPart &&
          blocks * s <= 4 * maxBlocks)
        return s;
    return 1;
  }

  /// The float32 static shapes split-K takes (A [..., M, K], B [K, N],
  /// the product as A's rank), and no operand widened from 16 bits.
  static bool takes(Value lhs, Value rhs, Type result) {
    auto a = dyn_cast<RankedTensorType>(lhs.getType());
    auto b = dyn_cast<RankedTensorType>(rhs.getType());
    auto c = dyn_cast<RankedTensorType>(result);
    return a && b && c && a.getRank() >= 2 && b.getRank() == 2 &&
           a.hasStaticShape() && b.hasStaticShape() && c.hasStaticShape() &&
           a.getElementType().isF32() && b.getElementType().isF32() &&
           c.getElementType().isF32() && c.getRank() == a.getRank() &&
           a.getRank() - 2 <= 8 && !isWidened(lhs) && !isWidened(rhs);
  }

  /// reduce_sum(einsum("...msk,skn->s...mn", reshape(A), reshape(B)), [0])
  /// at `loc`, its parts at `loc` without its ONNX values.
  static Value split(PatternRewriter &rewriter, Location loc, Value lhs,
                     Value rhs, RankedTensorType resultType, int64_t s) {
    auto a = cast<RankedTensorType>(lhs.getType());
    auto b = cast<RankedTensorType>(rhs.getType());
    int64_t k = b.getDimSize(0), n = b.getDimSize(1);
    // Leading (batch) dims of A keep letters a, b, ... in the equation.
    std::string batch;
    for (int64_t i = 0; i < a.getRank() - 2; ++i)
      batch += char('a' + i);
    std::string equation = batch + "msk,skn->s" + batch + "mn";

    Location partLoc = withoutOnnxValues(loc);
    Type f32 = rewriter.getF32Type();
    SmallVector<int64_t> aShape(a.getShape().drop_back());
    aShape.append({s, k / s});
    Value aParts = ReshapeOp::create(rewriter, partLoc,
                                     RankedTensorType::get(aShape, f32), lhs);
    Value bParts = ReshapeOp::create(
        rewriter, partLoc, RankedTensorType::get({s, k / s, n}, f32), rhs);
    SmallVector<int64_t> partialShape = {s};
    llvm::append_range(partialShape, resultType.getShape());
    Value partial = EinsumOp::create(
        rewriter, partLoc, RankedTensorType::get(partialShape, f32),
        ValueRange{aParts, bParts}, rewriter.getStringAttr(equation));
    return ReduceSumOp::create(rewriter, loc, resultType, partial,
                               rewriter.getDenseI64ArrayAttr({0}),
                               rewriter.getBoolAttr(false));
  }

  int64_t minK, maxBlocks;
};

struct SplitK : public OpRewritePattern<MatMulOp> {
  SplitK(MLIRContext *context, int64_t minK, int64_t maxBlocks)
      : OpRewritePattern(context), kParts(minK, maxBlocks) {}

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    if (!KParts::takes(op.getLhs(), op.getRhs(), op.getType()))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    auto b = cast<RankedTensorType>(op.getRhs().getType());
    int64_t s = kParts.parts(type.getNumElements(), b.getDimSize(0));
    if (s == 1)
      return failure();
    rewriter.replaceOp(op, KParts::split(rewriter, op.getLoc(), op.getLhs(),
                                         op.getRhs(), type, s));
    return success();
  }

  KParts kParts;
};

/// A Gemm (A [M, K] times B [K, N] plus C, neither transposed nor scaled:
/// a Linear layer once kiln-transpose-weights stored B K x N, a batch-32
/// classifier's 32 x 1280 x 1000) splits the same way, C added to the sum.
struct SplitGemmK : public OpRewritePattern<GemmOp> {
  SplitGemmK(MLIRContext *context, int64_t minK, int64_t maxBlocks)
      : OpRewritePattern(context), kParts(minK, maxBlocks) {}

  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTransA() || op.getTransB() ||
        op.getAlpha().convertToFloat() != 1 ||
        (op.getC() && op.getBeta().convertToFloat() != 1) ||
        !KParts::takes(op.getA(), op.getB(), op.getType()))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    auto b = cast<RankedTensorType>(op.getB().getType());
    int64_t s = kParts.parts(type.getNumElements(), b.getDimSize(0));
    if (s == 1)
      return failure();
    Location sumLoc = op.getC() ? withoutOnnxValues(op.getLoc()) : op.getLoc();
    Value sum = KParts::split(rewriter, sumLoc, op.getA(), op.getB(), type, s);
    if (op.getC())
      sum = AddOp::create(rewriter, op.getLoc(), type, sum, op.getC());
    rewriter.replaceOp(op, sum);
    return success();
  }

  KParts kParts;
};

struct SplitMatMulKPass
    : public kiln::impl::SplitMatMulKBase<SplitMatMulKPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitK, SplitGemmK>(&getContext(), minK, maxBlocks);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
