//===- Elementwise.cpp - unary, binary, compare, logic, select, cast ------===//
//
// Every elementwise kiln op becomes one parallel linalg.generic whose body is
// the scalar computation below, on floats or signless integers. arith only
// takes signless integers, so unsigned operands (ui8 ... ui64) enter the body
// through a cast to signless and the unsigned forms of division, remainder,
// min/max, comparisons and conversions are chosen from the original type;
// the casts vanish when the kernels reach LLVM (which has no signedness).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

using arith::CmpFPredicate;
using arith::CmpIPredicate;

/// Scalar builders for one element type: float ops for floats, signed or
/// (for unsigned tensors) unsigned integer ops for integers.
struct Scalar {
  OpBuilder &b;
  Location loc;
  Type type;
  bool isUnsigned = false;

  bool isFloat() const { return isa<FloatType>(type); }
  Value c(double v) { return scalarConst(b, loc, type, v); }
  Value add(Value x, Value y) {
    return isFloat() ? (Value)arith::AddFOp::create(b, loc, x, y)
                     : (Value)arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) {
    return isFloat() ? (Value)arith::SubFOp::create(b, loc, x, y)
                     : (Value)arith::SubIOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    return isFloat() ? (Value)arith::MulFOp::create(b, loc, x, y)
                     : (Value)arith::MulIOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    if (isFloat())
      return arith::DivFOp::create(b, loc, x, y);
    return isUnsigned ? (Value)arith::DivUIOp::create(b, loc, x, y)
                      : (Value)arith::DivSIOp::create(b, loc, x, y);
  }
  Value max(Value x, Value y) {
    if (isFloat())
      return arith::MaximumFOp::create(b, loc, x, y);
    return isUnsigned ? (Value)arith::MaxUIOp::create(b, loc, x, y)
                      : (Value)arith::MaxSIOp::create(b, loc, x, y);
  }
  Value min(Value x, Value y) {
    if (isFloat())
      return arith::MinimumFOp::create(b, loc, x, y);
    return isUnsigned ? (Value)arith::MinUIOp::create(b, loc, x, y)
                      : (Value)arith::MinSIOp::create(b, loc, x, y);
  }
  Value neg(Value x) {
    return isFloat() ? (Value)arith::NegFOp::create(b, loc, x) : sub(c(0), x);
  }
  Value cmp(CmpFPredicate fp, CmpIPredicate ip, Value x, Value y) {
    if (isFloat())
      return arith::CmpFOp::create(b, loc, fp, x, y);
    if (isUnsigned)
      ip = unsignedPredicate(ip);
    return arith::CmpIOp::create(b, loc, ip, x, y);
  }
  static CmpIPredicate unsignedPredicate(CmpIPredicate ip) {
    switch (ip) {
    case CmpIPredicate::slt:
      return CmpIPredicate::ult;
    case CmpIPredicate::sle:
      return CmpIPredicate::ule;
    case CmpIPredicate::sgt:
      return CmpIPredicate::ugt;
    case CmpIPredicate::sge:
      return CmpIPredicate::uge;
    default:
      return ip;
    }
  }
  Value lt(Value x, Value y) {
    return cmp(CmpFPredicate::OLT, CmpIPredicate::slt, x, y);
  }
  Value gt(Value x, Value y) {
    return cmp(CmpFPredicate::OGT, CmpIPredicate::sgt, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
};

Value sigmoid(Scalar &s, Value x) {
  return s.div(s.c(1), s.add(s.c(1), s.exp(s.neg(x))));
}

/// max(x, 0) + log1p(exp(-|x|)) does not overflow for large x.
Value softplus(Scalar &s, Value x) {
  Value e = s.exp(s.neg(math::AbsFOp::create(s.b, s.loc, x)));
  return s.add(s.max(x, s.c(0)), math::Log1pOp::create(s.b, s.loc, e));
}

/// Integer modulo with the divisor's sign, as in Python and ONNX Mod.
Value integerMod(Scalar &s, Value x, Value y) {
  if (s.isUnsigned)
    return arith::RemUIOp::create(s.b, s.loc, x, y);
  Value r = arith::RemSIOp::create(s.b, s.loc, x, y);
  Value zero = s.c(0);
  Value nonZero = arith::CmpIOp::create(s.b, s.loc, CmpIPredicate::ne, r, zero);
  Value signsDiffer = arith::XOrIOp::create(
      s.b, s.loc,
      arith::CmpIOp::create(s.b, s.loc, CmpIPredicate::slt, r, zero),
      arith::CmpIOp::create(s.b, s.loc, CmpIPredicate::slt, y, zero));
  Value adjust = arith::AndIOp::create(s.b, s.loc, nonZero, signsDiffer);
  return s.select(adjust, s.add(r, y), r);
}

/// x << y or x >> y (logical when unsigned); a shift by the bit width or
/// more gives 0 (or the sign for a signed right shift), as numpy does,
/// where LLVM's shifts would be poison.
Value shift(Scalar &s, Value x, Value y, bool left) {
  unsigned width = s.type.getIntOrFloatBitWidth();
  Value inRange =
      s.cmp(CmpFPredicate::OLT, CmpIPredicate::ult, y, s.c(double(width)));
  Value safeY = s.select(inRange, y, s.c(0));
  Value shifted = left ? (Value)arith::ShLIOp::create(s.b, s.loc, x, safeY)
                  : s.isUnsigned
                      ? (Value)arith::ShRUIOp::create(s.b, s.loc, x, safeY)
                      : (Value)arith::ShRSIOp::create(s.b, s.loc, x, safeY);
  Value outOfRange =
      left || s.isUnsigned
          ? s.c(0)
          : (Value)arith::ShRSIOp::create(s.b, s.loc, x, s.c(width - 1));
  return s.select(inRange, shifted, outOfRange);
}

/// ONNX Cast between floats, integers and bool. `x` and `to` are floats or
/// signless integers; the flags say which integers are unsigned.
Value castScalar(OpBuilder &b, Location loc, Value x, Type to,
                 bool fromUnsigned, bool toUnsigned) {
  Type from = x.getType();
  if (from == to)
    return x; // also int8 <-> uint8 and the like: the same bits
  if (to.isInteger(1)) {
    Scalar s{b, loc, from};
    return s.cmp(CmpFPredicate::UNE, CmpIPredicate::ne, x, s.c(0));
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  unsigned fromBits = from.getIntOrFloatBitWidth();
  unsigned toBits = to.getIntOrFloatBitWidth();
  if (fromFloat && toFloat)
    return fromBits < toBits ? (Value)arith::ExtFOp::create(b, loc, to, x)
                             : (Value)arith::TruncFOp::create(b, loc, to, x);
  if (fromFloat)
    return toUnsigned ? (Value)arith::FPToUIOp::create(b, loc, to, x)
                      : (Value)arith::FPToSIOp::create(b, loc, to, x);
  bool fromBool = from.isInteger(1) || fromUnsigned;
  if (toFloat)
    return fromBool ? (Value)arith::UIToFPOp::create(b, loc, to, x)
                    : (Value)arith::SIToFPOp::create(b, loc, to, x);
  if (fromBits < toBits)
    return fromBool ? (Value)arith::ExtUIOp::create(b, loc, to, x)
                    : (Value)arith::ExtSIOp::create(b, loc, to, x);
  return arith::TruncIOp::create(b, loc, to, x);
}

double attr(FloatAttr a) { return a.getValue().convertToDouble(); }

bool isUnsignedInteger(Type t) {
  return isa<IntegerType>(t) && !t.isSignlessInteger();
}

/// An unsigned integer as the signless integer of its width (same bits).
Value toSignless(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (!isUnsignedInteger(t))
    return v;
  Type signless = b.getIntegerType(t.getIntOrFloatBitWidth());
  return UnrealizedConversionCastOp::create(b, loc, signless, v).getResult(0);
}

/// The reverse of toSignless for a result of element type `to`.
Value fromSignless(OpBuilder &b, Location loc, Value v, Type to) {
  if (v.getType() == to || !isUnsignedInteger(to))
    return v;
  return UnrealizedConversionCastOp::create(b, loc, to, v).getResult(0);
}

/// The scalar computation of one elementwise kiln op, on signless `args`;
/// `unsignedOperands` when the op's integer operands are unsigned.
Value elementwiseBody(Operation *op, OpBuilder &b, Location loc,
                      ValueRange args, bool unsignedOperands) {
  Value x = args[0];
  Scalar s{b, loc, x.getType(), unsignedOperands};
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](ReluOp) { return s.max(x, s.c(0)); })
      .Case([&](SigmoidOp) { return sigmoid(s, x); })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, x); })
      .Case([&](ExpOp) { return s.exp(x); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, x); })
      .Case([&](NegOp) { return s.neg(x); })
      .Case([&](AbsOp) -> Value {
        if (s.isFloat())
          return math::AbsFOp::create(b, loc, x);
        if (s.isUnsigned)
          return x;
        return math::AbsIOp::create(b, loc, x);
      })
      .Case([&](SignOp) {
        return s.select(s.gt(x, s.c(0)), s.c(1),
                        s.select(s.lt(x, s.c(0)), s.c(-1), s.c(0)));
      })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, x); })
      .Case([&](ReciprocalOp) { return s.div(s.c(1), x); })
      .Case([&](FloorOp) { return math::FloorOp::create(b, loc, x); })
      .Case([&](CeilOp) { return math::CeilOp::create(b, loc, x); })
      .Case([&](RoundOp) { return math::RoundEvenOp::create(b, loc, x); })
      .Case([&](ErfOp) { return math::ErfOp::create(b, loc, x); })
      .Case([&](SinOp) { return math::SinOp::create(b, loc, x); })
      .Case([&](CosOp) { return math::CosOp::create(b, loc, x); })
      .Case([&](TanOp) { return math::TanOp::create(b, loc, x); })
      .Case([&](AsinOp) { return math::AsinOp::create(b, loc, x); })
      .Case([&](AcosOp) { return math::AcosOp::create(b, loc, x); })
      .Case([&](AtanOp) { return math::AtanOp::create(b, loc, x); })
      .Case([&](SinhOp) { return math::SinhOp::create(b, loc, x); })
      .Case([&](CoshOp) { return math::CoshOp::create(b, loc, x); })
      .Case([&](AsinhOp) { return math::AsinhOp::create(b, loc, x); })
      .Case([&](AcoshOp) { return math::AcoshOp::create(b, loc, x); })
      .Case([&](AtanhOp) { return math::AtanhOp::create(b, loc, x); })
      .Case([&](SoftplusOp) { return softplus(s, x); })
      .Case([&](SoftsignOp) {
        return s.div(x, s.add(s.c(1), math::AbsFOp::create(b, loc, x)));
      })
      .Case([&](MishOp) {
        return s.mul(x, math::TanhOp::create(b, loc, softplus(s, x)));
      })
      .Case([&](GeluOp) {
        Value erf = math::ErfOp::create(b, loc, s.mul(x, s.c(M_SQRT1_2)));
        return s.mul(s.mul(s.c(0.5), x), s.add(s.c(1), erf));
      })
      .Case([&](GeluTanhOp) {
        Value cube = s.mul(s.mul(x, x), x);
        Value inner = s.mul(s.c(std::sqrt(2.0 / M_PI)),
                            s.add(x, s.mul(s.c(0.044715), cube)));
        Value t = math::TanhOp::create(b, loc, inner);
        return s.mul(s.mul(s.c(0.5), x), s.add(s.c(1), t));
      })
      .Case([&](SiluOp) { return s.mul(x, sigmoid(s, x)); })
      .Case([&](HardSwishOp) {
        Value gate = s.add(s.mul(s.c(1.0 / 6.0), x), s.c(0.5));
        return s.mul(x, s.max(s.c(0), s.min(s.c(1), gate)));
      })
      .Case([&](LeakyReluOp op) {
        return s.select(s.lt(x, s.c(0)), s.mul(s.c(attr(op.getAlphaAttr())), x),
                        x);
      })
      .Case([&](EluOp op) {
        Value em1 = math::ExpM1Op::create(b, loc, x);
        return s.select(s.lt(x, s.c(0)),
                        s.mul(s.c(attr(op.getAlphaAttr())), em1), x);
      })
      .Case([&](CeluOp op) {
        double alpha = attr(op.getAlphaAttr());
        Value em1 = math::ExpM1Op::create(b, loc, s.div(x, s.c(alpha)));
        return s.add(s.max(x, s.c(0)), s.min(s.c(0), s.mul(s.c(alpha), em1)));
      })
      .Case([&](ThresholdedReluOp op) {
        return s.select(s.gt(x, s.c(attr(op.getAlphaAttr()))), x, s.c(0));
      })
      .Case([&](HardSigmoidOp op) {
        Value y = s.add(s.mul(s.c(attr(op.getAlphaAttr())), x),
                        s.c(attr(op.getBetaAttr())));
        return s.max(s.c(0), s.min(s.c(1), y));
      })
      .Case([&](SeluOp op) {
        Value em1 = math::ExpM1Op::create(b, loc, x);
        Value negative = s.mul(s.c(attr(op.getAlphaAttr())), em1);
        return s.mul(s.c(attr(op.getBetaAttr())),
                     s.select(s.gt(x, s.c(0)), x, negative));
      })
      .Case([&](ClipOp op) {
        return s.min(s.max(x, s.c(attr(op.getMinAttr()))),
                     s.c(attr(op.getMaxAttr())));
      })
      .Case([&](IsNaNOp) {
        return arith::CmpFOp::create(b, loc, CmpFPredicate::UNO, x, x);
      })
      .Case([&](NotOp) {
        return arith::XOrIOp::create(b, loc, x,
                                     scalarConst(b, loc, x.getType(), 1));
      })
      .Case([&](CastOp op) {
        Type to = op.getType().getElementType();
        Type signlessTo = isUnsignedInteger(to)
                              ? b.getIntegerType(to.getIntOrFloatBitWidth())
                              : to;
        return castScalar(b, loc, x, signlessTo, unsignedOperands,
                          isUnsignedInteger(to));
      })
      .Case([&](ExpandOp) { return x; })
      .Case([&](AddOp) { return s.add(x, args[1]); })
      .Case([&](SubOp) { return s.sub(x, args[1]); })
      .Case([&](MulOp) { return s.mul(x, args[1]); })
      .Case([&](DivOp) { return s.div(x, args[1]); })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, x, args[1]); })
      .Case([&](MaxOp) { return s.max(x, args[1]); })
      .Case([&](MinOp) { return s.min(x, args[1]); })
      .Case([&](ModOp) -> Value {
        if (s.isFloat())
          return arith::RemFOp::create(b, loc, x, args[1]);
        return integerMod(s, x, args[1]);
      })
      .Case([&](ShiftLeftOp) { return shift(s, x, args[1], /*left=*/true); })
      .Case([&](ShiftRightOp) { return shift(s, x, args[1], /*left=*/false); })
      .Case([&](PReluOp) {
        return s.select(s.lt(x, s.c(0)), s.mul(x, args[1]), x);
      })
      .Case([&](EqualOp) {
        return s.cmp(CmpFPredicate::OEQ, CmpIPredicate::eq, x, args[1]);
      })
      .Case([&](LessOp) { return s.lt(x, args[1]); })
      .Case([&](LessEqualOp) {
        return s.cmp(CmpFPredicate::OLE, CmpIPredicate::sle, x, args[1]);
      })
      .Case([&](GreaterOp) { return s.gt(x, args[1]); })
      .Case([&](GreaterEqualOp) {
        return s.cmp(CmpFPredicate::OGE, CmpIPredicate::sge, x, args[1]);
      })
      .Case([&](AndOp) { return arith::AndIOp::create(b, loc, x, args[1]); })
      .Case([&](OrOp) { return arith::OrIOp::create(b, loc, x, args[1]); })
      .Case([&](XorOp) { return arith::XOrIOp::create(b, loc, x, args[1]); })
      .Case([&](WhereOp) { return s.select(x, args[1], args[2]); })
      .Default([](Operation *) { return Value(); });
}

struct ElementwiseLowering : public RewritePattern {
  ElementwiseLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!kiln::isElementwise(op))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // The integer operand whose signedness decides (Where's is the second:
    // its first is the bool condition).
    Value decider = op->getOperand(isa<WhereOp>(op) ? 1 : 0);
    bool unsignedOperands =
        isUnsignedInteger(getElementTypeOrSelf(decider.getType()));
    Value result = buildElementwise(
        rewriter, op->getLoc(), op->getOperands(), resultType,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          SmallVector<Value> signless;
          for (Value arg : args)
            signless.push_back(toSignless(b, loc, arg));
          Value value = elementwiseBody(op, b, loc, signless, unsignedOperands);
          return value
                     ? fromSignless(b, loc, value, resultType.getElementType())
                     : value;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::lowering::populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering>(patterns.getContext());
}
