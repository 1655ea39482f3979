//===- PatchifyConvsAsEinsums.cpp - patch embeddings as einsums ----------===//
//
// A convolution whose windows tile the image (stride = kernel, no padding:
// ViT's 16x16 patch embedding, CLIP's 32x32) sums over input channels and
// the window. As implicit GEMM its K is the input channels, 3 for an RGB
// image, which matrix instructions (16 along K) cannot take: the kernel ran
// as float32 thread tiles. Reshaped into patches, [N, C, H, W] ->
// [N, C, H/p, p, W/p, q] (an alias), the same sums are an einsum whose
// summed subscripts all index the operands directly; the one for the
// window's width, contiguous in memory and at least 16 wide, sorts first
// and becomes K (matchMatrixContraction takes the first summed loop both
// operands index directly), the window's rows and the channels its outer
// loops.
//
//===----------------------------------------------------------------------===//
#include "FloatConstants.h"
#include "Widening.h"

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_PATCHIFYCONVSASEINSUMS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A 2-D convolution with static shapes, one group, no padding or
/// dilation, whose stride equals its kernel (the rows and columns past its
/// last whole window, which it never reads, are sliced off), with a window
/// width that matrix instructions take as K (paddedMatrixK: 16 or 32; 14
/// padded to 16; a 1-D convolution's frames of 256), or any width with
/// `anyWidth` (register tiles).
bool isPatchify(ConvOp conv, bool anyWidth) {
  auto inType = conv.getInput().getType();
  auto wType = conv.getWeight().getType();
  auto outType = conv.getType();
  if (conv.getGroup() != 1 || inType.getRank() != 4 ||
      !inType.hasStaticShape() || !wType.hasStaticShape() ||
      !outType.hasStaticShape())
    return false;
  if (llvm::any_of(conv.getPads(), [](int64_t p) { return p != 0; }) ||
      llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
    return false;
  for (int64_t i = 0; i < 2; ++i) {
    int64_t window = wType.getDimSize(2 + i);
    if (conv.getStrides()[i] != window ||
        inType.getDimSize(2 + i) < outType.getDimSize(2 + i) * window)
      return false;
  }
  return anyWidth || paddedMatrixK(wType.getDimSize(3)) > 0;
}

/// The constant weight [O, C, window..] stored as [C, window.., O] (a
/// 16-bit one widened after), so that register tiles load vectors of
/// filters; null when the weight is not a constant.
Value filtersLastWeight(PatternRewriter &rewriter, Location loc, Value weight) {
  Value stored = storedValue(weight);
  auto constant = stored.getDefiningOp<ConstantOp>();
  if (!constant)
    return nullptr;
  int64_t rank = cast<RankedTensorType>(weight.getType()).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(1, rank));
  perm.push_back(0);
  FailureOr<ElementsAttr> permuted = permuteFloatConstant(
      cast<ElementsAttr>(constant.getValue()), perm, ".filters_last");
  if (failed(permuted))
    return nullptr;
  Value result = ConstantOp::create(rewriter, constant.getLoc(), *permuted);
  if (stored == weight)
    return result;
  return CastOp::create(
      rewriter, loc,
      RankedTensorType::get(permuted->getShapedType().getShape(),
                            getElementTypeOrSelf(weight.getType())),
      result);
}

/// The one user of `value`, or null.
Operation *onlyUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// The transpose that makes the convolution's [N, O, H', W'] result tokens
/// ([N, H' * W', O], ViT's flatten(2).transpose(1, 2)) through a reshape,
/// perhaps after the result's rounding to 16 bits (--precision), each the
/// only user of the one before; null when there is none.
TransposeOp tokensTranspose(ConvOp conv) {
  Value value = conv.getResult();
  Operation *user = onlyUser(value);
  if (auto cast = dyn_cast_or_null<CastOp>(user)) {
    value = cast.getResult();
    user = onlyUser(value);
  }
  auto reshape = dyn_cast_or_null<ReshapeOp>(user);
  auto outType = conv.getType();
  if (!reshape ||
      reshape.getType().getShape() !=
          ArrayRef<int64_t>{outType.getDimSize(0), outType.getDimSize(1),
                            outType.getDimSize(2) * outType.getDimSize(3)})
    return nullptr;
  auto transpose = dyn_cast_or_null<TransposeOp>(onlyUser(reshape.getResult()));
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1})
    return nullptr;
  return transpose;
}

struct PatchifyConv : public OpRewritePattern<ConvOp> {
  PatchifyConv(MLIRContext *context, bool vectorRegisters)
      : OpRewritePattern(context), vectorRegisters(vectorRegisters) {}
  /// The CPU: the einsum sums along the filters (see the pass options).
  bool vectorRegisters;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!isPatchify(conv, /*anyWidth=*/vectorRegisters))
      return failure();
    auto inType = conv.getInput().getType();
    auto wType = conv.getWeight().getType();
    auto outType = conv.getType();
    int64_t n = inType.getDimSize(0), c = inType.getDimSize(1);
    int64_t rows = outType.getDimSize(2), cols = outType.getDimSize(3);
    int64_t p = wType.getDimSize(2), q = wType.getDimSize(3);
    // The einsum writes tokens ([N, H', W', O]) where the result is only
    // made tokens by a transpose (ViT), else the convolution's layout.
    TransposeOp transpose = tokensTranspose(conv);
    int64_t filters = outType.getDimSize(1);
    Location partLoc = withoutOnnxValues(conv.getLoc());
    // On the CPU the einsum writes tokens and reads the weight filters
    // last: register tiles of filters, each loaded vector of weights serving
    // a row of patches. A result not read as tokens is transposed back,
    // which pays only where the convolution's own register tiles cannot
    // load its strided input.
    Value weight = conv.getWeight();
    if (vectorRegisters) {
      if (!transpose && q <= kMaxVectorStride)
        return failure();
      weight = filtersLastWeight(rewriter, partLoc, weight);
      if (!weight)
        return failure();
    }
    bool tokens = transpose || vectorRegisters;
    Value input = conv.getInput();
    if (inType.getDimSize(2) != rows * p || inType.getDimSize(3) != cols * q)
      input =
          SliceOp::create(rewriter, partLoc,
                          RankedTensorType::get({n, c, rows * p, cols * q},
                                                inType.getElementType()),
                          input, rewriter.getDenseI64ArrayAttr({0, 0, 0, 0}),
                          rewriter.getDenseI64ArrayAttr({1, 1, 1, 1}));
    Value patches = reshapeBeforeWidening(rewriter, partLoc, input,
                                          {n, c, rows, p, cols, q});
    // n: image, c: channel, u/v: patch row/column, b/a: row/column in the
    // patch (a sorts first: K), o: filter.
    auto resultType = tokens ? RankedTensorType::get({n, rows, cols, filters},
                                                     outType.getElementType())
                             : outType;
    // Only a result in the convolution's own shape and with its bias
    // claims its ONNX value (kiln-bisect compares by shape).
    Value bias = conv.getBias();
    Location resultLoc = tokens ? partLoc : conv.getLoc();
    StringRef spec = vectorRegisters ? "ncubva,cbao->nuvo"
                     : transpose     ? "ncubva,ocba->nuvo"
                                     : "ncubva,ocba->nouv";
    Value result = EinsumOp::create(rewriter, bias ? partLoc : resultLoc,
                                    resultType, ValueRange{patches, weight},
                                    rewriter.getStringAttr(spec));
    if (bias) {
      SmallVector<int64_t> biasShape =
          tokens ? SmallVector<int64_t>{1, 1, 1, filters}
                 : SmallVector<int64_t>{1, filters, 1, 1};
      result = AddOp::create(
          rewriter, resultLoc, resultType, result,
          reshapeBeforeWidening(rewriter, partLoc, bias, biasShape));
    }
    if (tokens && !transpose) {
      rewriter.replaceOpWithNewOp<TransposeOp>(
          conv, outType, result, rewriter.getDenseI64ArrayAttr({0, 3, 1, 2}));
      return success();
    }
    if (transpose) {
      // The rounding to 16 bits, if any, then the tokens' shape: the
      // transpose's value, without the copy.
      Operation *reshape = transpose.getInput().getDefiningOp();
      auto rounding = dyn_cast<CastOp>(*conv->getUsers().begin());
      Value rounded = result;
      if (rounding)
        rounded = CastOp::create(
            rewriter, withoutOnnxValues(rounding.getLoc()),
            RankedTensorType::get({n, rows, cols, filters},
                                  getElementTypeOrSelf(rounding.getType())),
            result);
      rewriter.replaceOpWithNewOp<ReshapeOp>(transpose, transpose.getType(),
                                             rounded);
      rewriter.eraseOp(reshape);
      if (rounding)
        rewriter.eraseOp(rounding);
      rewriter.eraseOp(conv);
      return success();
    }
    rewriter.replaceOp(conv, result);
    return success();
  }
};

/// The CPU's 1-D form: a convolution over [N, C, T] whose stride is its
/// window q, past the largest stride register tiles load (an EEG or audio
/// model's downscaling by frames), as `ncva,cao->nvo` over frames
/// [N, C, T / q, q] and the weight stored [C, q, O], transposed back to
/// [N, O, T / q].
struct PatchifyConv1D : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    auto inType = conv.getInput().getType();
    auto wType = conv.getWeight().getType();
    auto outType = conv.getType();
    if (conv.getGroup() != 1 || inType.getRank() != 3 ||
        !inType.hasStaticShape() || !wType.hasStaticShape() ||
        !outType.hasStaticShape() || conv.getPads()[0] != 0 ||
        conv.getPads()[1] != 0 || conv.getDilations()[0] != 1)
      return failure();
    int64_t n = inType.getDimSize(0), c = inType.getDimSize(1);
    int64_t frames = outType.getDimSize(2), q = wType.getDimSize(2);
    int64_t filters = outType.getDimSize(1);
    if (conv.getStrides()[0] != q || q <= kMaxVectorStride ||
        inType.getDimSize(2) < frames * q)
      return failure();
    Location partLoc = withoutOnnxValues(conv.getLoc());
    Value weight = filtersLastWeight(rewriter, partLoc, conv.getWeight());
    if (!weight)
      return failure();
    Value input = conv.getInput();
    if (inType.getDimSize(2) != frames * q)
      input = SliceOp::create(
          rewriter, partLoc,
          RankedTensorType::get({n, c, frames * q}, inType.getElementType()),
          input, rewriter.getDenseI64ArrayAttr({0, 0, 0}),
          rewriter.getDenseI64ArrayAttr({1, 1, 1}));
    Value patches =
        reshapeBeforeWidening(rewriter, partLoc, input, {n, c, frames, q});
    auto framesType =
        RankedTensorType::get({n, frames, filters}, outType.getElementType());
    Value result = EinsumOp::create(rewriter, partLoc, framesType,
                                    ValueRange{patches, weight},
                                    rewriter.getStringAttr("ncva,cao->nvo"));
    if (Value bias = conv.getBias())
      result = AddOp::create(
          rewriter, partLoc, framesType, result,
          reshapeBeforeWidening(rewriter, partLoc, bias, {1, 1, filters}));
    rewriter.replaceOpWithNewOp<TransposeOp>(
        conv, outType, result, rewriter.getDenseI64ArrayAttr({0, 2, 1}));
    return success();
  }
};

struct PatchifyConvsAsEinsumsPass
    : public kiln::impl::PatchifyConvsAsEinsumsBase<
          PatchifyConvsAsEinsumsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PatchifyConv>(&getContext(), vectorRegisters);
    if (vectorRegisters)
      patterns.add<PatchifyConv1D>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
