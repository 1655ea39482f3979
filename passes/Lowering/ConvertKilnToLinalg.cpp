//===- ConvertKilnToLinalg.cpp - kiln ops → linalg on tensors -------------===//
//
// One pattern per op family. Everything becomes linalg.generic (or a named
// linalg op where one fits exactly) so that tiling and fusion treat all ops
// alike through TilingInterface.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "kiln/Passes/LoweringPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

using utils::IteratorType;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value floatConst(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value) {
  Value init = emptyTensor(b, loc, type);
  Value scalar = floatConst(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, scalar, init).getResult(0);
}

/// The map reading an operand of shape `in` inside a loop nest over `out`,
/// with numpy broadcasting (dims aligned right, size-1 dims stay at 0).
AffineMap broadcastMap(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                       MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    exprs.push_back(in[i] == 1 && out[i + offset] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(i + offset, ctx));
  return AffineMap::get(out.size(), 0, exprs, ctx);
}

/// A parallel generic over `resultType` reading `inputs` with broadcasting.
Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       RankedTensorType resultType, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(tensorTypeOf(input).getShape(),
                                resultType.getShape(), ctx));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<IteratorType> iterators(resultType.getRank(),
                                      IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, emptyTensor(b, loc, resultType), maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value negX = arith::NegFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, negX);
  Value one = floatConst(b, loc, t, 1.0);
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

/// The scalar computation of one elementwise kiln op.
Value elementwiseBody(Operation *op, OpBuilder &b, Location loc,
                      ValueRange args) {
  Value x = args[0];
  Type t = x.getType();
  auto zero = [&] { return floatConst(b, loc, t, 0.0); };
  auto one = [&] { return floatConst(b, loc, t, 1.0); };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](ReluOp) { return arith::MaximumFOp::create(b, loc, x, zero()); })
      .Case([&](SigmoidOp) { return sigmoid(b, loc, x); })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, x); })
      .Case([&](ExpOp) { return math::ExpOp::create(b, loc, x); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, x); })
      .Case([&](NegOp) { return arith::NegFOp::create(b, loc, x); })
      .Case([&](AbsOp) { return math::AbsFOp::create(b, loc, x); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, x); })
      .Case([&](ReciprocalOp) { return arith::DivFOp::create(b, loc, one(), x); })
      .Case([&](FloorOp) { return math::FloorOp::create(b, loc, x); })
      .Case([&](CeilOp) { return math::CeilOp::create(b, loc, x); })
      .Case([&](ErfOp) { return math::ErfOp::create(b, loc, x); })
      .Case([&](SinOp) { return math::SinOp::create(b, loc, x); })
      .Case([&](CosOp) { return math::CosOp::create(b, loc, x); })
      .Case([&](SoftplusOp) {
        // max(x, 0) + log1p(exp(-|x|)) does not overflow for large x.
        Value absX = math::AbsFOp::create(b, loc, x);
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, absX));
        return arith::AddFOp::create(b, loc,
                                     arith::MaximumFOp::create(b, loc, x, zero()),
                                     math::Log1pOp::create(b, loc, e));
      })
      .Case([&](LeakyReluOp leaky) {
        Value alpha = floatConst(b, loc, t, leaky.getAlpha().convertToDouble());
        Value scaled = arith::MulFOp::create(b, loc, alpha, x);
        Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero());
        return arith::SelectOp::create(b, loc, negative, scaled, x);
      })
      .Case([&](EluOp elu) {
        Value alpha = floatConst(b, loc, t, elu.getAlpha().convertToDouble());
        Value em1 = math::ExpM1Op::create(b, loc, x);
        Value scaled = arith::MulFOp::create(b, loc, alpha, em1);
        Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero());
        return arith::SelectOp::create(b, loc, negative, scaled, x);
      })
      .Case([&](ClipOp clip) {
        Value lo = floatConst(b, loc, t, clip.getMin().convertToDouble());
        Value hi = floatConst(b, loc, t, clip.getMax().convertToDouble());
        return arith::MinimumFOp::create(b, loc,
                                         arith::MaximumFOp::create(b, loc, x, lo), hi);
      })
      .Case([&](AddOp) { return arith::AddFOp::create(b, loc, x, args[1]); })
      .Case([&](SubOp) { return arith::SubFOp::create(b, loc, x, args[1]); })
      .Case([&](MulOp) { return arith::MulFOp::create(b, loc, x, args[1]); })
      .Case([&](DivOp) { return arith::DivFOp::create(b, loc, x, args[1]); })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, x, args[1]); })
      .Case([&](MaxOp) { return arith::MaximumFOp::create(b, loc, x, args[1]); })
      .Case([&](MinOp) { return arith::MinimumFOp::create(b, loc, x, args[1]); })
      .Default([](Operation *) { return Value(); });
}

struct ElementwiseLowering : public RewritePattern {
  ElementwiseLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, NegOp, AbsOp, SqrtOp,
             ReciprocalOp, FloorOp, CeilOp, ErfOp, SinOp, CosOp, SoftplusOp,
             LeakyReluOp, EluOp, ClipOp, AddOp, SubOp, MulOp, DivOp, PowOp,
             MaxOp, MinOp>(op))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Value result = buildElementwise(
        rewriter, op->getLoc(), op->getOperands(), resultType,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return elementwiseBody(op, b, loc, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// acc + lhs * rhs (* alpha).
void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args,
                        std::optional<double> alpha) {
  Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
  if (alpha)
    product = arith::MulFOp::create(
        b, loc, floatConst(b, loc, product.getType(), *alpha), product);
  linalg::YieldOp::create(b, loc,
                          arith::AddFOp::create(b, loc, args[2], product).getResult());
}

struct MatMulLowering : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    auto lhsShape = tensorTypeOf(op.getLhs()).getShape();
    auto rhsShape = tensorTypeOf(op.getRhs()).getShape();
    auto resultType = op.getType();
    bool lhsVector = lhsShape.size() == 1, rhsVector = rhsShape.size() == 1;
    int64_t lhsBatch = lhsVector ? 0 : lhsShape.size() - 2;
    int64_t rhsBatch = rhsVector ? 0 : rhsShape.size() - 2;
    int64_t batch = std::max(lhsBatch, rhsBatch);
    // Loop dims: batch..., m?, k, n?. With n innermost, the inner loop walks
    // contiguous rows of B and of the result, which LLVM vectorizes.
    int64_t numDims = batch + (lhsVector ? 0 : 1) + (rhsVector ? 0 : 1) + 1;
    int64_t mDim = batch, kDim = batch + (lhsVector ? 0 : 1), nDim = kDim + 1;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    auto batchExprs = [&](ArrayRef<int64_t> shape, int64_t own) {
      SmallVector<AffineExpr> exprs;
      ArrayRef<int64_t> outBatch = resultType.getShape().take_front(batch);
      for (int64_t i = 0; i < own; ++i) {
        int64_t dim = i + batch - own;
        exprs.push_back(shape[i] == 1 && outBatch[dim] != 1
                            ? getAffineConstantExpr(0, ctx)
                            : d(dim));
      }
      return exprs;
    };
    SmallVector<AffineExpr> lhsExprs = batchExprs(lhsShape, lhsBatch);
    if (!lhsVector)
      lhsExprs.push_back(d(mDim));
    lhsExprs.push_back(d(kDim));
    SmallVector<AffineExpr> rhsExprs = batchExprs(rhsShape, rhsBatch);
    rhsExprs.push_back(d(kDim));
    if (!rhsVector)
      rhsExprs.push_back(d(nDim));
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < batch; ++i)
      outExprs.push_back(d(i));
    if (!lhsVector)
      outExprs.push_back(d(mDim));
    if (!rhsVector)
      outExprs.push_back(d(nDim));
    SmallVector<AffineMap> maps = {AffineMap::get(numDims, 0, lhsExprs, ctx),
                                   AffineMap::get(numDims, 0, rhsExprs, ctx),
                                   AffineMap::get(numDims, 0, outExprs, ctx)};
    SmallVector<IteratorType> iterators(numDims, IteratorType::parallel);
    iterators[kDim] = IteratorType::reduction;
    Value init = filledTensor(rewriter, loc, resultType, 0.0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{op.getLhs(), op.getRhs()}, init,
        maps, iterators, [](OpBuilder &b, Location l, ValueRange args) {
          multiplyAccumulate(b, l, args, std::nullopt);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct GemmLowering : public OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    auto resultType = op.getType();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    // beta * C, broadcast to M x N, is the accumulator's initial value.
    Value init;
    if (op.getC() && beta != 0.0) {
      init = buildElementwise(
          rewriter, loc, op.getC(), resultType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            if (beta == 1.0)
              return args[0];
            return arith::MulFOp::create(
                b, l, floatConst(b, l, args[0].getType(), beta), args[0]);
          });
    } else {
      init = filledTensor(rewriter, loc, resultType, 0.0);
    }
    // Loop order (m, k, n) when B is [K, N], so the inner loop walks rows of
    // B and of the result; (m, n, k) when B is [N, K], a contiguous dot.
    bool kInner = op.getTransB();
    AffineExpr m = getAffineDimExpr(0, ctx),
               n = getAffineDimExpr(kInner ? 1 : 2, ctx),
               k = getAffineDimExpr(kInner ? 2 : 1, ctx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0, op.getTransA() ? ArrayRef<AffineExpr>{k, m}
                                            : ArrayRef<AffineExpr>{m, k},
                       ctx),
        AffineMap::get(3, 0, op.getTransB() ? ArrayRef<AffineExpr>{n, k}
                                            : ArrayRef<AffineExpr>{k, n},
                       ctx),
        AffineMap::get(3, 0, {m, n}, ctx)};
    SmallVector<IteratorType> iterators = {
        IteratorType::parallel, IteratorType::parallel, IteratorType::parallel};
    iterators[kInner ? 2 : 1] = IteratorType::reduction;
    std::optional<double> scale;
    if (alpha != 1.0)
      scale = alpha;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{op.getA(), op.getB()}, init, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          multiplyAccumulate(b, l, args, scale);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Windows: conv and pooling
//===----------------------------------------------------------------------===//

/// Pads the spatial dims (2..) of `input`; `extraEnd` adds to the end pads.
Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> extraEnd, double padValue) {
  auto type = tensorTypeOf(input);
  int64_t spatial = type.getRank() - 2;
  SmallVector<int64_t> low(2, 0), high(2, 0);
  bool any = false;
  for (int64_t i = 0; i < spatial; ++i) {
    low.push_back(pads[i]);
    high.push_back(pads[i + spatial] + extraEnd[i]);
    any |= low.back() != 0 || high.back() != 0;
  }
  if (!any)
    return input;
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t i = 0; i < spatial; ++i)
    shape[i + 2] += low[i + 2] + high[i + 2];
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  Value value = floatConst(b, loc, type.getElementType(), padValue);
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (auto [l, h] : llvm::zip(low, high)) {
    lowSizes.push_back(b.getIndexAttr(l));
    highSizes.push_back(b.getIndexAttr(h));
  }
  return tensor::PadOp::create(b, loc, paddedType, input, lowSizes, highSizes,
                               value)
      .getResult();
}

/// Expressions o_i * stride_i + k_i * dilation_i for each spatial dim.
SmallVector<AffineExpr> windowExprs(MLIRContext *ctx, int64_t firstO,
                                    int64_t firstK, ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> dilations) {
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < strides.size(); ++i)
    exprs.push_back(getAffineDimExpr(firstO + i, ctx) * strides[i] +
                    getAffineDimExpr(firstK + i, ctx) * dilations[i]);
  return exprs;
}

SmallVector<AffineExpr> dimRange(MLIRContext *ctx, int64_t first, int64_t count) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < count; ++i)
    exprs.push_back(getAffineDimExpr(first + i, ctx));
  return exprs;
}

struct ConvLowering : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    auto resultType = op.getType();
    Type elementType = resultType.getElementType();
    int64_t spatial = resultType.getRank() - 2;
    int64_t groups = op.getGroup();
    auto inShape = tensorTypeOf(op.getInput()).getShape();
    auto wShape = tensorTypeOf(op.getWeight()).getShape();
    int64_t channelsPerGroup = inShape[1] / groups;
    int64_t filtersPerGroup = wShape[0] / groups;

    SmallVector<int64_t> noExtra(spatial, 0);
    Value input =
        padSpatial(rewriter, loc, op.getInput(), op.getPads(), noExtra, 0.0);
    Value weight = op.getWeight();

    // With groups, operate on [N, G, C/G, ...] and [G, F/G, C/G, ...] views.
    auto expand = [&](Value v, SmallVector<int64_t> shape,
                      SmallVector<ReassociationIndices> reassoc) -> Value {
      auto type = RankedTensorType::get(shape, elementType);
      return tensor::ExpandShapeOp::create(rewriter, loc, type, v, reassoc);
    };
    SmallVector<int64_t> outShape(resultType.getShape());
    bool grouped = groups > 1;
    if (grouped) {
      auto paddedShape = tensorTypeOf(input).getShape();
      SmallVector<int64_t> xShape = {paddedShape[0], groups, channelsPerGroup};
      SmallVector<int64_t> wgShape = {groups, filtersPerGroup, wShape[1]};
      SmallVector<ReassociationIndices> reassoc = {{0}, {1, 2}};
      for (int64_t i = 0; i < spatial; ++i) {
        xShape.push_back(paddedShape[i + 2]);
        wgShape.push_back(wShape[i + 2]);
        reassoc.push_back({i + 3});
      }
      SmallVector<ReassociationIndices> wReassoc = {{0, 1}};
      for (int64_t i = 0; i < spatial + 1; ++i)
        wReassoc.push_back({i + 2});
      input = expand(input, xShape, reassoc);
      weight = expand(weight, wgShape, wReassoc);
      outShape = {outShape[0], groups, filtersPerGroup};
      for (int64_t i = 0; i < spatial; ++i)
        outShape.push_back(resultType.getDimSize(i + 2));
    }
    auto accType = RankedTensorType::get(outShape, elementType);

    // Loop dims: n, [g], f, o_1..o_s, c, k_1..k_s: each output element
    // accumulates in a register over its whole window.
    int64_t g = grouped ? 1 : -1;
    int64_t f = grouped ? 2 : 1;
    int64_t o = f + 1, c = o + spatial, k = c + 1;
    int64_t numDims = k + spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> xExprs = {d(0)}, wExprs, outExprs = {d(0)};
    if (grouped) {
      xExprs.push_back(d(g));
      wExprs.push_back(d(g));
      outExprs.push_back(d(g));
    }
    xExprs.push_back(d(c));
    llvm::append_range(xExprs,
                       windowExprs(ctx, o, k, op.getStrides(), op.getDilations()));
    wExprs.push_back(d(f));
    wExprs.push_back(d(c));
    llvm::append_range(wExprs, dimRange(ctx, k, spatial));
    outExprs.push_back(d(f));
    llvm::append_range(outExprs, dimRange(ctx, o, spatial));

    Value init;
    if (op.getBias()) {
      Value bias = op.getBias();
      if (grouped)
        bias = expand(bias, {groups, filtersPerGroup}, {{0, 1}});
      // Bias runs along the filter dim(s) of the accumulator.
      SmallVector<AffineExpr> biasExprs;
      if (grouped)
        biasExprs = {d(1), d(2)};
      else
        biasExprs = {d(1)};
      SmallVector<AffineMap> maps = {
          AffineMap::get(accType.getRank(), 0, biasExprs, ctx),
          rewriter.getMultiDimIdentityMap(accType.getRank())};
      init = linalg::GenericOp::create(
                 rewriter, loc, accType, bias, emptyTensor(rewriter, loc, accType),
                 maps,
                 SmallVector<IteratorType>(accType.getRank(),
                                           IteratorType::parallel),
                 [](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(b, l, args[0]);
                 })
                 .getResult(0);
    } else {
      init = filledTensor(rewriter, loc, accType, 0.0);
    }

    SmallVector<IteratorType> iterators(c, IteratorType::parallel);
    iterators.append(numDims - c, IteratorType::reduction);
    SmallVector<AffineMap> maps = {AffineMap::get(numDims, 0, xExprs, ctx),
                                   AffineMap::get(numDims, 0, wExprs, ctx),
                                   AffineMap::get(numDims, 0, outExprs, ctx)};
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, accType, ValueRange{input, weight}, init, maps,
            iterators,
            [](OpBuilder &b, Location l, ValueRange args) {
              multiplyAccumulate(b, l, args, std::nullopt);
            })
            .getResult(0);
    if (grouped) {
      SmallVector<ReassociationIndices> reassoc = {{0}, {1, 2}};
      for (int64_t i = 0; i < spatial; ++i)
        reassoc.push_back({i + 3});
      result = tensor::CollapseShapeOp::create(rewriter, loc, resultType, result,
                                               reassoc);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Window positions that read real input (count_include_pad = false) or
/// input and declared padding (true), for one spatial dim.
int64_t windowCount(int64_t out, int64_t in, int64_t kernel, int64_t stride,
                    int64_t dilation, int64_t padBegin, int64_t padEnd,
                    bool includePad) {
  int64_t lo = includePad ? -padBegin : 0;
  int64_t hi = includePad ? in + padEnd : in;
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t pos = out * stride - padBegin + k * dilation;
    count += pos >= lo && pos < hi;
  }
  return count;
}

template <typename PoolOp>
struct PoolLowering : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;
  static constexpr bool isMax = std::is_same_v<PoolOp, MaxPoolOp>;

  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = this->getContext();
    Location loc = op.getLoc();
    auto resultType = op.getType();
    Type elementType = resultType.getElementType();
    auto inShape = tensorTypeOf(op.getInput()).getShape();
    int64_t spatial = resultType.getRank() - 2;
    auto kernel = op.getKernelShape(), strides = op.getStrides();
    auto dilations = op.getDilations(), pads = op.getPads();

    // ceil_mode windows may run past the end padding: pad more so every read
    // is in bounds; the extra cells never win a max and are not counted.
    SmallVector<int64_t> extra;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t needed = (resultType.getDimSize(i + 2) - 1) * strides[i] +
                       (kernel[i] - 1) * dilations[i] + 1;
      int64_t have = inShape[i + 2] + pads[i] + pads[i + spatial];
      extra.push_back(std::max<int64_t>(0, needed - have));
    }
    double padValue = isMax ? -INFINITY : 0.0;
    Value input =
        padSpatial(rewriter, loc, op.getInput(), pads, extra, padValue);
    Value window = tensor::EmptyOp::create(
        rewriter, loc, SmallVector<int64_t>(kernel.begin(), kernel.end()),
        elementType);

    // Loop dims: n, c, o_1..o_s, k_1..k_s.
    int64_t numDims = 2 + 2 * spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> xExprs = {d(0), d(1)};
    llvm::append_range(xExprs,
                       windowExprs(ctx, 2, 2 + spatial, strides, dilations));
    SmallVector<AffineExpr> outExprs = {d(0), d(1)};
    llvm::append_range(outExprs, dimRange(ctx, 2, spatial));
    SmallVector<AffineMap> maps = {
        AffineMap::get(numDims, 0, xExprs, ctx),
        AffineMap::get(numDims, 0, dimRange(ctx, 2 + spatial, spatial), ctx),
        AffineMap::get(numDims, 0, outExprs, ctx)};
    SmallVector<IteratorType> iterators(2 + spatial, IteratorType::parallel);
    iterators.append(spatial, IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, resultType, padValue);
    Value pooled =
        linalg::GenericOp::create(
            rewriter, loc, resultType, ValueRange{input, window}, init, maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value r = isMax ? arith::MaximumFOp::create(b, l, args[0], args[2])
                                    .getResult()
                              : arith::AddFOp::create(b, l, args[0], args[2])
                                    .getResult();
              linalg::YieldOp::create(b, l, r);
            })
            .getResult(0);
    if constexpr (!isMax)
      pooled = divideByWindowCount(rewriter, loc, op, pooled);
    rewriter.replaceOp(op, pooled);
    return success();
  }

  /// Divides window sums by the number of counted cells, a compile-time
  /// constant per output position.
  Value divideByWindowCount(PatternRewriter &rewriter, Location loc, PoolOp op,
                            Value sums) const {
    auto resultType = op.getType();
    int64_t spatial = resultType.getRank() - 2;
    auto outSpatial = resultType.getShape().drop_front(2);
    auto inShape = tensorTypeOf(op.getInput()).getShape();
    SmallVector<float> counts;
    int64_t total = 1;
    for (int64_t s : outSpatial)
      total *= s;
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t rest = flat, count = 1;
      for (int64_t i = spatial - 1; i >= 0; --i) {
        int64_t o = rest % outSpatial[i];
        rest /= outSpatial[i];
        count *= windowCount(o, inShape[i + 2], op.getKernelShape()[i],
                             op.getStrides()[i], op.getDilations()[i],
                             op.getPads()[i], op.getPads()[i + spatial],
                             op.getCountIncludePad());
      }
      counts.push_back(float(std::max<int64_t>(count, 1)));
    }
    auto countType = RankedTensorType::get(outSpatial, resultType.getElementType());
    Value countTensor = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(countType, ArrayRef<float>(counts)));
    return buildElementwise(rewriter, loc, ValueRange{sums, countTensor},
                            resultType,
                            [](OpBuilder &b, Location l, ValueRange args) {
                              return arith::DivFOp::create(b, l, args[0], args[1])
                                  .getResult();
                            });
  }
};

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

/// A reduction generic over all dims of `input` that folds `combine` into an
/// accumulator initialised to `initValue`. `outMap` selects the kept dims.
Value buildReduction(OpBuilder &b, Location loc, ValueRange inputs,
                     RankedTensorType resultType, AffineMap inputMap,
                     ArrayRef<AffineMap> extraMaps, AffineMap outMap,
                     ArrayRef<bool> reduced, double initValue, BodyFn combine) {
  SmallVector<AffineMap> maps = {inputMap};
  llvm::append_range(maps, extraMaps);
  maps.push_back(outMap);
  SmallVector<IteratorType> iterators;
  for (bool r : reduced)
    iterators.push_back(r ? IteratorType::reduction : IteratorType::parallel);
  Value init = filledTensor(b, loc, resultType, initValue);
  return linalg::GenericOp::create(
             b, loc, resultType, inputs, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, combine(nb, l, args));
             })
      .getResult(0);
}

/// The accumulator map of a reduction over `axes` of a rank-`rank` input.
AffineMap reductionOutMap(int64_t rank, ArrayRef<int64_t> axes, bool keepdims,
                          MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    if (!llvm::is_contained(axes, i))
      exprs.push_back(getAffineDimExpr(i, ctx));
    else if (keepdims)
      exprs.push_back(getAffineConstantExpr(0, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

template <typename ReduceOp>
struct ReduceLowering : public OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = this->getContext();
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto inType = tensorTypeOf(x);
    auto resultType = op.getType();
    int64_t rank = inType.getRank();
    auto axes = op.getAxes();
    SmallVector<bool> reduced;
    int64_t count = 1;
    for (int64_t i = 0; i < rank; ++i) {
      reduced.push_back(llvm::is_contained(axes, i));
      if (reduced.back())
        count *= inType.getDimSize(i);
    }
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap outMap = reductionOutMap(rank, axes, op.getKeepdims(), ctx);
    auto reduce = [&](double init, BodyFn combine, Value input,
                      ArrayRef<Value> extra = {},
                      ArrayRef<AffineMap> extraMaps = {}) {
      SmallVector<Value> inputs = {input};
      llvm::append_range(inputs, extra);
      return buildReduction(rewriter, loc, inputs, resultType, identity,
                            extraMaps, outMap, reduced, init, combine);
    };
    auto unary = [&](Value v, auto build) {
      return buildElementwise(rewriter, loc, v, resultType,
                              [&](OpBuilder &b, Location l, ValueRange args) {
                                return build(b, l, args[0]);
                              });
    };
    auto add = [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::AddFOp::create(b, l, a[0], a[1]);
    };
    auto addSquare = [](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value sq = arith::MulFOp::create(b, l, a[0], a[0]);
      return arith::AddFOp::create(b, l, sq, a[1]);
    };
    Value result;
    if constexpr (std::is_same_v<ReduceOp, ReduceSumOp>) {
      result = reduce(0.0, add, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceMeanOp>) {
      Value sum = reduce(0.0, add, x);
      result = unary(sum, [&](OpBuilder &b, Location l, Value v) -> Value {
        return arith::DivFOp::create(b, l, v,
                                     floatConst(b, l, v.getType(), double(count)));
      });
    } else if constexpr (std::is_same_v<ReduceOp, ReduceMaxOp>) {
      result = reduce(-INFINITY, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, l, a[0], a[1]);
      }, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceMinOp>) {
      result = reduce(INFINITY, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MinimumFOp::create(b, l, a[0], a[1]);
      }, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceProdOp>) {
      result = reduce(1.0, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MulFOp::create(b, l, a[0], a[1]);
      }, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceSumSquareOp>) {
      result = reduce(0.0, addSquare, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceL1Op>) {
      result = reduce(0.0, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(b, l, math::AbsFOp::create(b, l, a[0]), a[1]);
      }, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceL2Op>) {
      Value sumSquares = reduce(0.0, addSquare, x);
      result = unary(sumSquares, [](OpBuilder &b, Location l, Value v) -> Value {
        return math::SqrtOp::create(b, l, v);
      });
    } else if constexpr (std::is_same_v<ReduceOp, ReduceLogSumOp>) {
      Value sum = reduce(0.0, add, x);
      result = unary(sum, [](OpBuilder &b, Location l, Value v) -> Value {
        return math::LogOp::create(b, l, v);
      });
    } else {
      static_assert(std::is_same_v<ReduceOp, ReduceLogSumExpOp>);
      // log(sum(exp(x - max))) + max, stable for large x.
      Value max = reduce(-INFINITY, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, l, a[0], a[1]);
      }, x);
      Value sum = reduce(0.0, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
        return arith::AddFOp::create(b, l, math::ExpOp::create(b, l, shifted), a[2]);
      }, x, {max}, {outMap});
      result = buildElementwise(
          rewriter, loc, ValueRange{sum, max}, resultType,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::AddFOp::create(b, l, math::LogOp::create(b, l, a[0]), a[1]);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename SoftmaxLikeOp>
struct SoftmaxLowering : public OpRewritePattern<SoftmaxLikeOp> {
  using OpRewritePattern<SoftmaxLikeOp>::OpRewritePattern;
  static constexpr bool isLog = std::is_same_v<SoftmaxLikeOp, LogSoftmaxOp>;

  LogicalResult matchAndRewrite(SoftmaxLikeOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = this->getContext();
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = tensorTypeOf(x);
    int64_t rank = type.getRank(), axis = op.getAxis();
    SmallVector<int64_t> rowShape;
    SmallVector<bool> reduced;
    for (int64_t i = 0; i < rank; ++i) {
      reduced.push_back(i == axis);
      if (i != axis)
        rowShape.push_back(type.getDimSize(i));
    }
    auto rowType = RankedTensorType::get(rowShape, type.getElementType());
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rowMap = reductionOutMap(rank, {axis}, /*keepdims=*/false, ctx);

    Value max = buildReduction(
        rewriter, loc, x, rowType, identity, {}, rowMap, reduced, -INFINITY,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::MaximumFOp::create(b, l, a[0], a[1]);
        });
    Value sum = buildReduction(
        rewriter, loc, ValueRange{x, max}, rowType, identity, {rowMap}, rowMap,
        reduced, 0.0, [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value e = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]));
          return arith::AddFOp::create(b, l, e, a[2]);
        });
    SmallVector<AffineMap> maps = {identity, rowMap, rowMap, identity};
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, ValueRange{x, max, sum},
            emptyTensor(rewriter, loc, type), maps,
            SmallVector<IteratorType>(rank, IteratorType::parallel),
            [](OpBuilder &b, Location l, ValueRange a) {
              Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
              Value r;
              if constexpr (isLog)
                r = arith::SubFOp::create(b, l, shifted,
                                          math::LogOp::create(b, l, a[2]));
              else
                r = arith::DivFOp::create(b, l, math::ExpOp::create(b, l, shifted),
                                          a[2]);
              linalg::YieldOp::create(b, l, r);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Data movement and constants
//===----------------------------------------------------------------------===//

struct TransposeLowering : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType());
    auto transpose = linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                 op.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value result = emptyTensor(rewriter, loc, op.getType());
    int64_t rank = op.getType().getRank(), offset = 0;
    for (Value input : op.getInputs()) {
      auto shape = tensorTypeOf(input).getShape();
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets[op.getAxis()] = offset;
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             ValueRange{}, ValueRange{},
                                             ValueRange{}, offsets, shape,
                                             strides);
      offset += shape[op.getAxis()];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ReshapeLowering : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    // Collapse to 1-D, then expand: both are views after bufferization.
    Location loc = op.getLoc();
    auto inType = op.getInput().getType();
    auto flatType = RankedTensorType::get({inType.getNumElements()},
                                          inType.getElementType());
    Value flat = op.getInput();
    if (inType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, flatType, flat,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, inType.getRank()))});
    Value result = flat;
    if (op.getType().getRank() != 1)
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, op.getType(), flat,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, op.getType().getRank()))});
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConstantLowering : public OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getValue());
    return success();
  }
};

struct ConvertKilnToLinalgPass
    : public kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<ElementwiseLowering, MatMulLowering, GemmLowering,
                 ConvLowering, PoolLowering<MaxPoolOp>,
                 PoolLowering<AveragePoolOp>, ReduceLowering<ReduceSumOp>,
                 ReduceLowering<ReduceMeanOp>, ReduceLowering<ReduceMaxOp>,
                 ReduceLowering<ReduceMinOp>, ReduceLowering<ReduceProdOp>,
                 ReduceLowering<ReduceSumSquareOp>, ReduceLowering<ReduceL1Op>,
                 ReduceLowering<ReduceL2Op>, ReduceLowering<ReduceLogSumOp>,
                 ReduceLowering<ReduceLogSumExpOp>, SoftmaxLowering<SoftmaxOp>,
                 SoftmaxLowering<LogSoftmaxOp>, TransposeLowering,
                 ConcatLowering, ReshapeLowering, ConstantLowering>(ctx);
    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           bufferization::BufferizationDialect,
                           func::FuncDialect>();
    // Host-side ops stay; only kernel bodies are converted.
    target.addLegalOp<DispatchOp, DispatchRegionOp, YieldOp>();
    target.addIllegalDialect<KilnDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    FrozenRewritePatternSet frozen(std::move(patterns));
    getOperation()->walk([&](func::FuncOp func) {
      if (func->hasAttr("kiln.kernel") &&
          failed(applyPartialConversion(func, target, frozen)))
        signalPassFailure();
    });
  }
};

} // namespace
