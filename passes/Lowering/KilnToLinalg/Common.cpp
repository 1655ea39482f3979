//===- Common.cpp - helpers shared by the kiln → linalg patterns
//-----------===//
#include "Common.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

Value kiln::lowering::scalarConst(OpBuilder &b, Location loc, Type type,
                                  double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  auto integer = cast<IntegerType>(type);
  if (integer.isSignless())
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(type, int64_t(value)));
  // arith constants are signless: the same bits, then the unsigned (or
  // signed) type the tensors hold, as the lowering's other casts do.
  Type signless = b.getIntegerType(integer.getWidth());
  Value bits = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(signless, int64_t(value)));
  return UnrealizedConversionCastOp::create(b, loc, type, bits).getResult(0);
}

Value kiln::lowering::lowestValue(OpBuilder &b, Location loc, Type type,
                                  bool highest) {
  if (isa<FloatType>(type))
    return scalarConst(b, loc, type, highest ? INFINITY : -INFINITY);
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value = highest ? APInt::getSignedMaxValue(width)
                        : APInt::getSignedMinValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value kiln::lowering::emptyTensor(OpBuilder &b, Location loc,
                                  RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value kiln::lowering::filledTensor(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value scalar) {
  Value init = emptyTensor(b, loc, type);
  return linalg::FillOp::create(b, loc, scalar, init).getResult(0);
}

Value kiln::lowering::filledTensor(OpBuilder &b, Location loc,
                                   RankedTensorType type, double value) {
  return filledTensor(b, loc, type,
                      scalarConst(b, loc, type.getElementType(), value));
}

AffineMap kiln::lowering::broadcastMap(ArrayRef<int64_t> in,
                                       ArrayRef<int64_t> out,
                                       MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    exprs.push_back(in[i] == 1 && out[i + offset] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(i + offset, ctx));
  return AffineMap::get(out.size(), 0, exprs, ctx);
}

Value kiln::lowering::buildElementwise(OpBuilder &b, Location loc,
                                       ValueRange inputs,
                                       RankedTensorType resultType,
                                       BodyFn body) {
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

AffineMap kiln::lowering::reductionOutMap(int64_t rank, ArrayRef<int64_t> axes,
                                          bool keepdims, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    if (!llvm::is_contained(axes, i))
      exprs.push_back(getAffineDimExpr(i, ctx));
    else if (keepdims)
      exprs.push_back(getAffineConstantExpr(0, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

RankedTensorType kiln::lowering::withoutAxes(RankedTensorType type,
                                             ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(type.getDimSize(i));
  return RankedTensorType::get(shape, type.getElementType());
}

Value kiln::lowering::expandToKeptDims(OpBuilder &b, Location loc,
                                       Value reduced, RankedTensorType keptType,
                                       ArrayRef<int64_t> axes) {
  if (reduced.getType() == keptType)
    return reduced;
  // An elementwise generic rather than tensor.expand_shape: tile-and-fuse
  // fuses it (and the reduction behind it) into the consumer's tiles.
  int64_t rank = keptType.getRank();
  SmallVector<AffineExpr> keptDims;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      keptDims.push_back(b.getAffineDimExpr(i));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, keptDims, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, keptType, reduced, emptyTensor(b, loc, keptType), maps,
             iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

/// Pads the spatial dims (2..) of `input`; `extraEnd` adds to the end pads.
Value kiln::lowering::padSpatial(OpBuilder &b, Location loc, Value input,
                                 ArrayRef<int64_t> pads,
                                 ArrayRef<int64_t> extraEnd, double padValue,
                                 int64_t firstSpatialDim) {
  auto type = tensorTypeOf(input);
  int64_t rank = type.getRank(), spatial = rank - 2;
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  bool any = false;
  for (int64_t i = 0; i < spatial; ++i) {
    low[i + firstSpatialDim] = pads[i];
    high[i + firstSpatialDim] = pads[i + spatial] + extraEnd[i];
    any |= pads[i] != 0 || pads[i + spatial] + extraEnd[i] != 0;
  }
  if (!any)
    return input;
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < rank; ++d)
    shape[d] += low[d] + high[d];
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  Value value = scalarConst(b, loc, type.getElementType(), padValue);
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (auto [l, h] : llvm::zip(low, high)) {
    lowSizes.push_back(b.getIndexAttr(l));
    highSizes.push_back(b.getIndexAttr(h));
  }
  return tensor::PadOp::create(b, loc, paddedType, input, lowSizes, highSizes,
                               value)
      .getResult();
}

/// The 16-bit tensor that `v` widens (a float kiln.cast, or the
/// elementwise extf generic it lowered to), else `v`.
static Value narrowSourceOf(Value v) {
  if (auto cast = v.getDefiningOp<CastOp>()) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    Type to = getElementTypeOrSelf(cast.getType());
    if (isa<FloatType>(from) && isa<FloatType>(to) &&
        from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return cast.getInput();
    return v;
  }
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return v;
  Block &body = generic.getRegion().front();
  auto extf =
      body.getTerminator()->getOperand(0).getDefiningOp<arith::ExtFOp>();
  if (!extf || body.getOperations().size() != 2 ||
      extf.getIn() != body.getArgument(0))
    return v;
  return generic.getDpsInputs()[0];
}

Value kiln::lowering::readWindowElement(OpBuilder &b, Location loc, Value input,
                                        const WindowLoops &loops,
                                        Type elementType, double padValue) {
  Value source = narrowSourceOf(input);
  auto shape = tensorTypeOf(source).getShape();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> indices = {linalg::IndexOp::create(b, loc, loops.nDim)};
  if (!loops.channelsLast)
    indices.push_back(linalg::IndexOp::create(b, loc, loops.cDim));
  int64_t firstSpatial = loops.channelsLast ? 1 : 2;
  Value inside;
  for (size_t i = 0; i < loops.oDims.size(); ++i) {
    // o * stride + k * dilation - padBegin, in [0, size) or padding.
    auto index = [&](int64_t dim, int64_t scale) -> Value {
      Value v = linalg::IndexOp::create(b, loc, dim);
      if (scale == 1)
        return v;
      return arith::MulIOp::create(
          b, loc, v, arith::ConstantIndexOp::create(b, loc, scale));
    };
    Value pos =
        arith::AddIOp::create(b, loc, index(loops.oDims[i], loops.strides[i]),
                              index(loops.kDims[i], loops.dilations[i]));
    if (loops.padsBegin[i] != 0)
      pos = arith::SubIOp::create(
          b, loc, pos,
          arith::ConstantIndexOp::create(b, loc, loops.padsBegin[i]));
    Value last =
        arith::ConstantIndexOp::create(b, loc, shape[i + firstSpatial] - 1);
    Value inRange = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pos, zero),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, pos, last));
    inside = inside ? arith::AndIOp::create(b, loc, inside, inRange).getResult()
                    : inRange;
    indices.push_back(arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, pos, zero), last));
  }
  if (loops.channelsLast)
    indices.push_back(linalg::IndexOp::create(b, loc, loops.cDim));
  Value element = tensor::ExtractOp::create(b, loc, source, indices);
  if (element.getType() != elementType)
    element = arith::ExtFOp::create(b, loc, elementType, element);
  if (!inside)
    return element;
  return arith::SelectOp::create(b, loc, inside, element,
                                 scalarConst(b, loc, elementType, padValue));
}

/// Expressions o_i * stride_i + k_i * dilation_i for each spatial dim.
SmallVector<AffineExpr>
kiln::lowering::windowExprs(MLIRContext *ctx, int64_t firstO, int64_t firstK,
                            ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> dilations) {
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < strides.size(); ++i)
    exprs.push_back(getAffineDimExpr(firstO + i, ctx) * strides[i] +
                    getAffineDimExpr(firstK + i, ctx) * dilations[i]);
  return exprs;
}

SmallVector<AffineExpr> kiln::lowering::dimRange(MLIRContext *ctx,
                                                 int64_t first, int64_t count) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < count; ++i)
    exprs.push_back(getAffineDimExpr(first + i, ctx));
  return exprs;
}
