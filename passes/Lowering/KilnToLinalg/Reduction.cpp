//===- Reduction.cpp - reductions and softmax ===//
#include "Common.h"
#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

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

/// An elementwise generic over `x` that also reads per-row statistics
/// (results of reductions, indexed by `rowMap`): `body` gets x's element,
/// then each statistic's, and returns the result element.
Value mapRows(OpBuilder &b, Location loc, Value x, ValueRange rowStats,
              AffineMap rowMap, BodyFn body) {
  auto type = cast<RankedTensorType>(x.getType());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<AffineMap> maps = {identity};
  maps.append(rowStats.size(), rowMap);
  maps.push_back(identity);
  SmallVector<Value> inputs = {x};
  llvm::append_range(inputs, rowStats);
  return linalg::GenericOp::create(
             b, loc, type, inputs, emptyTensor(b, loc, type), maps,
             SmallVector<IteratorType>(type.getRank(), IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args));
             })
      .getResult(0);
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
    auto keptType = op.getType();
    int64_t rank = inType.getRank();
    auto axes = op.getAxes();
    // Computed without the kept unit dims; expanded back at the end.
    RankedTensorType resultType =
        withoutAxes(inType.clone(keptType.getElementType()), axes);
    SmallVector<bool> reduced;
    int64_t count = 1;
    for (int64_t i = 0; i < rank; ++i) {
      reduced.push_back(llvm::is_contained(axes, i));
      if (reduced.back())
        count *= inType.getDimSize(i);
    }
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap outMap = reductionOutMap(rank, axes, /*keepdims=*/false, ctx);
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
      if (isa<IntegerType>(a[0].getType())) // ReduceSum of integers
        return arith::AddIOp::create(b, l, a[0], a[1]);
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
        return arith::DivFOp::create(
            b, l, v, scalarConst(b, l, v.getType(), double(count)));
      });
    } else if constexpr (std::is_same_v<ReduceOp, ReduceMaxOp>) {
      result = reduce(
          -INFINITY,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::MaximumFOp::create(b, l, a[0], a[1]);
          },
          x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceMinOp>) {
      result = reduce(
          INFINITY,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::MinimumFOp::create(b, l, a[0], a[1]);
          },
          x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceProdOp>) {
      result = reduce(
          1.0,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::MulFOp::create(b, l, a[0], a[1]);
          },
          x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceSumSquareOp>) {
      result = reduce(0.0, addSquare, x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceL1Op>) {
      result = reduce(
          0.0,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::AddFOp::create(b, l, math::AbsFOp::create(b, l, a[0]),
                                         a[1]);
          },
          x);
    } else if constexpr (std::is_same_v<ReduceOp, ReduceL2Op>) {
      Value sumSquares = reduce(0.0, addSquare, x);
      result =
          unary(sumSquares, [](OpBuilder &b, Location l, Value v) -> Value {
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
      Value max = reduce(
          -INFINITY,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::MaximumFOp::create(b, l, a[0], a[1]);
          },
          x);
      Value sum = reduce(0.0,
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           Value shifted =
                               arith::SubFOp::create(b, l, a[0], a[1]);
                           return arith::AddFOp::create(
                               b, l, math::ExpOp::create(b, l, shifted), a[2]);
                         },
                         x, {max}, {outMap});
      result =
          buildElementwise(rewriter, loc, ValueRange{sum, max}, resultType,
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::AddFOp::create(
                                 b, l, math::LogOp::create(b, l, a[0]), a[1]);
                           });
    }
    rewriter.replaceOp(op,
                       expandToKeptDims(rewriter, loc, result, keptType, axes));
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
          Value e = math::ExpOp::create(
              b, l, arith::SubFOp::create(b, l, a[0], a[1]));
          return arith::AddFOp::create(b, l, e, a[2]);
        });
    Value result =
        mapRows(rewriter, loc, x, {max, sum}, rowMap,
                [](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
                  if constexpr (isLog)
                    return arith::SubFOp::create(
                        b, l, shifted, math::LogOp::create(b, l, a[2]));
                  return arith::DivFOp::create(
                      b, l, math::ExpOp::create(b, l, shifted), a[2]);
                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// LayerNorm's core: the mean, then the variance of the centered values
/// (two passes over each row: more stable than E[x^2] - E[x]^2), then one
/// elementwise generic. The statistics have the row shape, not keepdims,
/// so tiling fuses both reductions into each tile of rows.
struct LayerNormLowering : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = tensorTypeOf(x);
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type element = type.getElementType();
    SmallVector<int64_t> rowShape, axes;
    SmallVector<bool> reduced;
    int64_t count = 1;
    for (int64_t i = 0; i < rank; ++i) {
      reduced.push_back(i >= axis);
      if (i >= axis) {
        axes.push_back(i);
        count *= type.getDimSize(i);
      } else {
        rowShape.push_back(type.getDimSize(i));
      }
    }
    auto rowType = RankedTensorType::get(rowShape, element);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rowMap = reductionOutMap(rank, axes, /*keepdims=*/false, ctx);
    auto constant = [&](OpBuilder &b, Location l, double v) -> Value {
      return arith::ConstantOp::create(b, l, b.getFloatAttr(element, v));
    };
    double inverseCount = 1.0 / double(std::max<int64_t>(count, 1));
    Value sum = buildReduction(
        rewriter, loc, x, rowType, identity, {}, rowMap, reduced, 0.0,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(b, l, a[0], a[1]);
        });
    Value squares = buildReduction(
        rewriter, loc, ValueRange{x, sum}, rowType, identity, {rowMap}, rowMap,
        reduced, 0.0, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value mean =
              arith::MulFOp::create(b, l, a[1], constant(b, l, inverseCount));
          Value centered = arith::SubFOp::create(b, l, a[0], mean);
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, centered, centered), a[2]);
        });
    double epsilon = op.getEpsilon().convertToFloat();
    Value result = mapRows(
        rewriter, loc, x, {sum, squares}, rowMap,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value scale = constant(b, l, inverseCount);
          Value mean = arith::MulFOp::create(b, l, a[1], scale);
          Value variance = arith::MulFOp::create(b, l, a[2], scale);
          Value root = math::SqrtOp::create(
              b, l,
              arith::AddFOp::create(b, l, variance, constant(b, l, epsilon)));
          return arith::DivFOp::create(
              b, l, arith::SubFOp::create(b, l, a[0], mean), root);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// ArgMax/ArgMin: one reduction generic carrying the best value and its
/// index; ties keep the first index unless select_last_index.
template <typename ArgOp>
struct ArgReduceLowering : public OpRewritePattern<ArgOp> {
  using OpRewritePattern<ArgOp>::OpRewritePattern;
  static constexpr bool isMax = std::is_same_v<ArgOp, ArgMaxOp>;

  LogicalResult matchAndRewrite(ArgOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = this->getContext();
    Location loc = op.getLoc();
    auto inType = op.getInput().getType();
    Type elementType = inType.getElementType();
    int64_t rank = inType.getRank(), axis = op.getAxis();
    auto keptType = op.getType();
    auto indexType = withoutAxes(keptType, {axis});
    if (!op.getKeepdims())
      indexType = keptType;
    auto valueType = indexType.clone(elementType);
    AffineMap outMap = reductionOutMap(rank, {axis}, /*keepdims=*/false, ctx);
    Value values =
        filledTensor(rewriter, loc, valueType,
                     lowestValue(rewriter, loc, elementType, !isMax));
    Value indices = filledTensor(rewriter, loc, indexType, 0.0);
    SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    iterators[axis] = IteratorType::reduction;
    bool last = op.getSelectLastIndex();
    bool isFloat = isa<FloatType>(elementType);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueType, indexType}, op.getInput(),
        ValueRange{values, indices},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank), outMap,
                               outMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value better;
          if (isFloat)
            better = arith::CmpFOp::create(
                b, l,
                isMax ? (last ? arith::CmpFPredicate::OGE
                              : arith::CmpFPredicate::OGT)
                      : (last ? arith::CmpFPredicate::OLE
                              : arith::CmpFPredicate::OLT),
                x, best);
          else
            better = arith::CmpIOp::create(
                b, l,
                isMax ? (last ? arith::CmpIPredicate::sge
                              : arith::CmpIPredicate::sgt)
                      : (last ? arith::CmpIPredicate::sle
                              : arith::CmpIPredicate::slt),
                x, best);
          Value index = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          linalg::YieldOp::create(
              b, l,
              ValueRange{
                  arith::SelectOp::create(b, l, better, x, best),
                  arith::SelectOp::create(b, l, better, index, bestIndex)});
        });
    rewriter.replaceOp(op, expandToKeptDims(rewriter, loc, generic.getResult(1),
                                            keptType, {axis}));
    return success();
  }
};

} // namespace

void kiln::lowering::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp>, ReduceLowering<ReduceMeanOp>,
               ReduceLowering<ReduceMaxOp>, ReduceLowering<ReduceMinOp>,
               ReduceLowering<ReduceProdOp>, ReduceLowering<ReduceSumSquareOp>,
               ReduceLowering<ReduceL1Op>, ReduceLowering<ReduceL2Op>,
               ReduceLowering<ReduceLogSumOp>,
               ReduceLowering<ReduceLogSumExpOp>, SoftmaxLowering<SoftmaxOp>,
               SoftmaxLowering<LogSoftmaxOp>, LayerNormLowering,
               ArgReduceLowering<ArgMaxOp>, ArgReduceLowering<ArgMinOp>>(
      patterns.getContext());
}
