//===- Pooling.cpp - max and average pooling ===//
#include "Common.h"
#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

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
  PoolLowering(MLIRContext *ctx, bool readWindowPaddingInPlace)
      : OpRewritePattern<PoolOp>(ctx),
        readWindowPaddingInPlace(readWindowPaddingInPlace) {}
  static constexpr bool isMax = std::is_same_v<PoolOp, MaxPoolOp>;
  /// The window reads its padding in place (GPU targets: readWindowElement)
  /// instead of from a padded copy of the input.
  bool readWindowPaddingInPlace;

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
    bool channelsLast = op.getChannelsLast();
    int64_t firstSpatial = channelsLast ? 1 : 2;

    // ceil_mode windows may run past the end padding: pad more so every read
    // is in bounds; the extra cells never win a max and are not counted.
    SmallVector<int64_t> extra;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t needed =
          (resultType.getDimSize(i + firstSpatial) - 1) * strides[i] +
          (kernel[i] - 1) * dilations[i] + 1;
      int64_t have = inShape[i + firstSpatial] + pads[i] + pads[i + spatial];
      extra.push_back(std::max<int64_t>(0, needed - have));
    }
    double padValue = isMax ? -INFINITY : 0.0;
    Value input = op.getInput();
    if (!readWindowPaddingInPlace)
      input =
          padSpatial(rewriter, loc, input, pads, extra, padValue, firstSpatial);
    Value window = tensor::EmptyOp::create(
        rewriter, loc, SmallVector<int64_t>(kernel.begin(), kernel.end()),
        elementType);

    // Loop dims: the result's (n, c, o_1..o_s, or n, o_1..o_s, c with
    // channels_last), then k_1..k_s.
    int64_t numDims = 2 + 2 * spatial;
    int64_t cDim = channelsLast ? 1 + spatial : 1;
    int64_t firstO = channelsLast ? 1 : 2;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> xExprs = {d(0)};
    if (!channelsLast)
      xExprs.push_back(d(cDim));
    llvm::append_range(
        xExprs, windowExprs(ctx, firstO, 2 + spatial, strides, dilations));
    if (channelsLast)
      xExprs.push_back(d(cDim));
    SmallVector<AffineExpr> outExprs = dimRange(ctx, 0, 2 + spatial);
    SmallVector<AffineMap> maps = {
        AffineMap::get(numDims, 0, xExprs, ctx),
        AffineMap::get(numDims, 0, dimRange(ctx, 2 + spatial, spatial), ctx),
        AffineMap::get(numDims, 0, outExprs, ctx)};
    SmallVector<IteratorType> iterators(2 + spatial, IteratorType::parallel);
    iterators.append(spatial, IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, resultType, padValue);
    auto combine = [&](OpBuilder &b, Location l, Value x, Value acc) {
      Value r = isMax ? arith::MaximumFOp::create(b, l, x, acc).getResult()
                      : arith::AddFOp::create(b, l, x, acc).getResult();
      linalg::YieldOp::create(b, l, r);
    };
    Value pooled;
    if (readWindowPaddingInPlace) {
      // The window's empty tensor gives the k loops their extents.
      WindowLoops loops;
      loops.cDim = cDim;
      loops.channelsLast = channelsLast;
      loops.oDims =
          llvm::to_vector(llvm::seq<int64_t>(firstO, firstO + spatial));
      loops.kDims =
          llvm::to_vector(llvm::seq<int64_t>(2 + spatial, 2 + 2 * spatial));
      loops.strides = strides;
      loops.dilations = dilations;
      loops.padsBegin = pads.take_front(spatial);
      pooled = linalg::GenericOp::create(
                   rewriter, loc, resultType, ValueRange{window}, init,
                   ArrayRef<AffineMap>{maps[1], maps[2]}, iterators,
                   [&](OpBuilder &b, Location l, ValueRange args) {
                     combine(b, l,
                             readWindowElement(b, l, input, loops, elementType,
                                               padValue),
                             args[1]);
                   })
                   .getResult(0);
    } else {
      pooled = linalg::GenericOp::create(
                   rewriter, loc, resultType, ValueRange{input, window}, init,
                   maps, iterators,
                   [&](OpBuilder &b, Location l, ValueRange args) {
                     combine(b, l, args[0], args[2]);
                   })
                   .getResult(0);
    }
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
    bool channelsLast = op.getChannelsLast();
    int64_t firstSpatial = channelsLast ? 1 : 2;
    auto outSpatial = resultType.getShape().slice(firstSpatial, spatial);
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
        count *= windowCount(
            o, inShape[i + firstSpatial], op.getKernelShape()[i],
            op.getStrides()[i], op.getDilations()[i], op.getPads()[i],
            op.getPads()[i + spatial], op.getCountIncludePad());
      }
      counts.push_back(float(std::max<int64_t>(count, 1)));
    }
    // [spatial...] broadcasts over N, C; [spatial..., 1] over N and a
    // trailing C.
    SmallVector<int64_t> countShape(outSpatial);
    if (channelsLast)
      countShape.push_back(1);
    auto countType =
        RankedTensorType::get(countShape, resultType.getElementType());
    Value countTensor = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(countType, ArrayRef<float>(counts)));
    return buildElementwise(
        rewriter, loc, ValueRange{sums, countTensor}, resultType,
        [](OpBuilder &b, Location l, ValueRange args) {
          return arith::DivFOp::create(b, l, args[0], args[1]).getResult();
        });
  }
};

} // namespace

void kiln::lowering::populatePoolingPatterns(RewritePatternSet &patterns,
                                             bool readWindowPaddingInPlace) {
  patterns.add<PoolLowering<MaxPoolOp>, PoolLowering<AveragePoolOp>>(
      patterns.getContext(), readWindowPaddingInPlace);
}
