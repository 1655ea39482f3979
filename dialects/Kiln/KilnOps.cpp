//===- KilnOps.cpp - kiln dialect ops: verifiers, inference, folders -----===//
#include "kiln/Dialect/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;

#include "kiln/Dialect/KilnDialect.cpp.inc"
#include "kiln/Dialect/KilnEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/KilnAttrs.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/KilnAttrs.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (auto elements = dyn_cast<ElementsAttr>(value))
    if (elements.getType() == type)
      return ConstantOp::create(builder, loc, type, elements);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>> kiln::broadcastShapes(ArrayRef<int64_t> a,
                                                          ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

int64_t kiln::windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                               int64_t dilation, int64_t padBegin,
                               int64_t padEnd, bool ceilMode) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in PyTorch and the ONNX reference: the last window must start inside
  // the input or its begin padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

bool kiln::isElementwise(Operation *op) {
  return isa<ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, NegOp, AbsOp, SignOp,
             SqrtOp, ReciprocalOp, FloorOp, CeilOp, RoundOp, ErfOp, SinOp,
             CosOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp,
             AcoshOp, AtanhOp, SoftplusOp, SoftsignOp, MishOp, GeluOp,
             GeluTanhOp, SiluOp, HardSwishOp, LeakyReluOp, EluOp, CeluOp,
             ThresholdedReluOp, HardSigmoidOp, SeluOp, ClipOp, IsNaNOp, NotOp,
             CastOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp,
             PReluOp, EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
             AndOp, OrOp, XorOp, WhereOp, ExpandOp, ShiftLeftOp, ShiftRightOp>(
      op);
}

std::optional<double> kiln::floatSplatValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool kiln::movesDataOnly(Operation *op) {
  // A pad's constant is rounded like the elements: the 16-bit pad is the
  // rounded 32-bit one.
  return isa<ReshapeOp, TransposeOp, ConcatOp, GatherOp, GatherElementsOp,
             SliceOp, ExpandOp, TileOp, PadOp>(op);
}

FailureOr<EinsumSubscripts> kiln::parseEinsumEquation(StringRef equation,
                                                      ArrayRef<int64_t> ranks,
                                                      std::string &error) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ')
      eq += ch;
  auto [lhs, rhs] = StringRef(eq).split("->");
  bool explicitOutput = StringRef(eq).contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size()) {
    error = "the equation has " + std::to_string(terms.size()) +
            " operands, the op " + std::to_string(ranks.size());
    return failure();
  }
  // Broadcast (`...`) dims get the characters '0', '1', ... counted from the
  // right, so that they line up across operands.
  int64_t broadcastRank = 0;
  auto expand = [&](StringRef term, int64_t rank,
                    std::string &out) -> LogicalResult {
    size_t dots = term.find("...");
    int64_t letters = int64_t(term.size()) - (dots == StringRef::npos ? 0 : 3);
    int64_t extra = rank - letters;
    if (dots == StringRef::npos ? extra != 0 : extra < 0) {
      error = "subscripts '" + term.str() + "' do not match rank " +
              std::to_string(rank);
      return failure();
    }
    broadcastRank =
        std::max(broadcastRank, dots == StringRef::npos ? 0 : extra);
    for (size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        for (int64_t k = extra - 1; k >= 0; --k)
          out += char('0' + k);
        i += 2;
        continue;
      }
      if (!llvm::isAlpha(term[i])) {
        error = "invalid subscript '" + std::string(1, term[i]) + "'";
        return failure();
      }
      out += term[i];
    }
    return success();
  };
  EinsumSubscripts result;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    result.inputs.emplace_back();
    if (failed(expand(term, rank, result.inputs.back())))
      return failure();
  }
  if (explicitOutput) {
    if (rhs.contains("...") || broadcastRank == 0) {
      if (failed(expand(rhs,
                        broadcastRank + int64_t(rhs.size()) -
                            (rhs.contains("...") ? 3 : 0),
                        result.output)))
        return failure();
    } else {
      error = "the output drops the broadcast dims";
      return failure();
    }
  } else {
    for (int64_t k = broadcastRank - 1; k >= 0; --k)
      result.output += char('0' + k);
    std::map<char, int> counts;
    for (const std::string &in : result.inputs)
      for (char ch : in)
        if (llvm::isAlpha(ch))
          ++counts[ch];
    for (auto [ch, n] : counts)
      if (n == 1)
        result.output += ch;
  }
  return result;
}

FailureOr<std::map<char, int64_t>>
kiln::einsumDimSizes(const EinsumSubscripts &subscripts,
                     ArrayRef<ArrayRef<int64_t>> shapes, std::string &error) {
  std::map<char, int64_t> sizes;
  for (auto [term, shape] : llvm::zip(subscripts.inputs, shapes))
    for (auto [ch, dim] : llvm::zip(term, shape)) {
      auto [it, inserted] = sizes.emplace(ch, dim);
      if (inserted || it->second == dim || dim == 1)
        continue;
      if (it->second == 1) {
        it->second = dim;
        continue;
      }
      error = "subscript '" + std::string(1, ch) + "' has sizes " +
              std::to_string(it->second) + " and " + std::to_string(dim);
      return failure();
    }
  for (char ch : subscripts.output)
    if (!sizes.count(ch)) {
      error = "output subscript '" + std::string(1, ch) + "' is not an input's";
      return failure();
    }
  return sizes;
}

LogicalResult EinsumOp::verify() {
  SmallVector<int64_t> ranks;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : getInputs()) {
    ranks.push_back(cast<RankedTensorType>(v.getType()).getRank());
    shapes.push_back(cast<RankedTensorType>(v.getType()).getShape());
  }
  std::string error;
  auto subscripts = parseEinsumEquation(getEquation(), ranks, error);
  if (failed(subscripts))
    return emitOpError(error);
  auto sizes = einsumDimSizes(*subscripts, shapes, error);
  if (failed(sizes))
    return emitOpError(error);
  SmallVector<int64_t> expected;
  for (char ch : subscripts->output)
    expected.push_back(sizes->at(ch));
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape does not match the equation");
  return success();
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static LogicalResult emitInferError(std::optional<Location> loc,
                                    const Twine &message) {
  if (loc)
    return emitError(*loc, message);
  return failure();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Unary, clip and softmax ops get inferReturnTypes from
// SameOperandsAndResultType.

LogicalResult ClipOp::verify() {
  if (getMin().convertToFloat() > getMax().convertToFloat())
    return emitOpError("min ")
           << getMin().convertToFloat() << " is greater than max "
           << getMax().convertToFloat();
  return success();
}

static LogicalResult inferBroadcast(std::optional<Location> loc, Value lhs,
                                    Value rhs, SmallVectorImpl<Type> &types) {
  auto lhsType = tensorType(lhs), rhsType = tensorType(rhs);
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitInferError(loc, "operands have different element types");
  auto shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape)
    return emitInferError(loc, "shapes do not broadcast");
  types.push_back(RankedTensorType::get(*shape, lhsType.getElementType()));
  return success();
}

#define KILN_BROADCAST_INFER(OP)                                               \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);     \
  }
KILN_BROADCAST_INFER(AddOp)
KILN_BROADCAST_INFER(SubOp)
KILN_BROADCAST_INFER(MulOp)
KILN_BROADCAST_INFER(DivOp)
KILN_BROADCAST_INFER(PowOp)
KILN_BROADCAST_INFER(MaxOp)
KILN_BROADCAST_INFER(MinOp)
#undef KILN_BROADCAST_INFER

#define KILN_BROADCAST_BOOL_INFER(OP)                                          \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,          \
      SmallVectorImpl<Type> &types) {                                          \
    if (failed(                                                                \
            inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types)))   \
      return failure();                                                        \
    types[0] =                                                                 \
        cast<RankedTensorType>(types[0]).clone(IntegerType::get(ctx, 1));      \
    return success();                                                          \
  }
KILN_BROADCAST_BOOL_INFER(EqualOp)
KILN_BROADCAST_BOOL_INFER(LessOp)
KILN_BROADCAST_BOOL_INFER(LessEqualOp)
KILN_BROADCAST_BOOL_INFER(GreaterOp)
KILN_BROADCAST_BOOL_INFER(GreaterEqualOp)
KILN_BROADCAST_BOOL_INFER(AndOp)
KILN_BROADCAST_BOOL_INFER(OrOp)
KILN_BROADCAST_BOOL_INFER(XorOp)
#undef KILN_BROADCAST_BOOL_INFER

LogicalResult ModOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);
}
LogicalResult ShiftLeftOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);
}
LogicalResult ShiftRightOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);
}
LogicalResult PReluOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);
}

LogicalResult IsNaNOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  types.push_back(
      tensorType(adaptor.getInput()).clone(IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto lhsType = tensorType(adaptor.getLhs()),
       rhsType = tensorType(adaptor.getRhs());
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitInferError(loc, "x and y have different element types");
  auto shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (shape)
    shape =
        broadcastShapes(*shape, tensorType(adaptor.getCondition()).getShape());
  if (!shape)
    return emitInferError(loc, "shapes do not broadcast");
  types.push_back(RankedTensorType::get(*shape, lhsType.getElementType()));
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("changes the shape");
  return success();
}

bool CastOp::isWidening() {
  Type from = getElementTypeOrSelf(getInput().getType());
  return getElementTypeOrSelf(getType()).isF32() &&
         (from.isF16() || from.isBF16());
}

//===----------------------------------------------------------------------===//
// MatMul / Gemm
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhsType = tensorType(adaptor.getLhs());
  auto rhsType = tensorType(adaptor.getRhs());
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitInferError(loc, "operands have different element types");
  SmallVector<int64_t> lhs(lhsType.getShape()), rhs(rhsType.getShape());
  if (lhs.empty() || rhs.empty())
    return emitInferError(loc, "matmul operands must have rank >= 1");
  bool lhsVector = lhs.size() == 1, rhsVector = rhs.size() == 1;
  if (lhsVector)
    lhs.insert(lhs.begin(), 1);
  if (rhsVector)
    rhs.push_back(1);
  int64_t m = lhs[lhs.size() - 2], k = lhs.back();
  int64_t k2 = rhs[rhs.size() - 2], n = rhs.back();
  if (k != k2)
    return emitInferError(loc, "contraction sizes differ: " + Twine(k) +
                                   " vs " + Twine(k2));
  auto batch = broadcastShapes(ArrayRef<int64_t>(lhs).drop_back(2),
                               ArrayRef<int64_t>(rhs).drop_back(2));
  if (!batch)
    return emitInferError(loc, "batch dims do not broadcast");
  SmallVector<int64_t> shape(*batch);
  if (!lhsVector)
    shape.push_back(m);
  if (!rhsVector)
    shape.push_back(n);
  types.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto aType = tensorType(adaptor.getA()), bType = tensorType(adaptor.getB());
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return emitInferError(loc, "gemm operands A and B must be 2-D");
  int64_t m = aType.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t n = bType.getDimSize(adaptor.getTransB() ? 0 : 1);
  types.push_back(RankedTensorType::get({m, n}, aType.getElementType()));
  return success();
}

LogicalResult GemmOp::verify() {
  int64_t k = getA().getType().getDimSize(getTransA() ? 0 : 1);
  int64_t k2 = getB().getType().getDimSize(getTransB() ? 1 : 0);
  if (k != k2)
    return emitOpError("contraction sizes differ: ") << k << " vs " << k2;
  if (getC()) {
    auto cShape = tensorType(getC()).getShape();
    auto shape = broadcastShapes(cShape, getType().getShape());
    if (!shape || ArrayRef<int64_t>(*shape) != getType().getShape())
      return emitOpError("C does not broadcast to the result shape");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Conv and pooling
//===----------------------------------------------------------------------===//

/// Whether every value is at least 1 (a window's strides and dilations;
/// type inference divides by the strides before the verifier runs).
static bool allPositive(ArrayRef<int64_t> values) {
  return llvm::all_of(values, [](int64_t v) { return v > 0; });
}

static LogicalResult verifyWindowAttrs(function_ref<InFlightDiagnostic()> emit,
                                       int64_t spatialRank,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> dilations,
                                       ArrayRef<int64_t> pads) {
  if ((int64_t)strides.size() != spatialRank ||
      (int64_t)dilations.size() != spatialRank ||
      (int64_t)pads.size() != 2 * spatialRank)
    return emit() << "expects " << spatialRank << " strides and dilations and "
                  << 2 * spatialRank << " pads";
  for (int64_t s : strides)
    if (s <= 0)
      return emit() << "strides must be positive";
  for (int64_t d : dilations)
    if (d <= 0)
      return emit() << "dilations must be positive";
  for (int64_t p : pads)
    if (p < 0)
      return emit() << "pads must be non-negative";
  return success();
}

/// Whether every window of a conv or pool op fits its padded input: a
/// window (dilated) wider than the padded input has no position, which
/// onnxruntime refuses; an empty output would be a silent wrong answer.
/// Empty and dynamic input dims are left to the rest of inference.
static LogicalResult checkWindowsFit(std::optional<Location> loc, StringRef op,
                                     RankedTensorType inType,
                                     int64_t firstSpatial,
                                     ArrayRef<int64_t> kernel,
                                     ArrayRef<int64_t> dilations,
                                     ArrayRef<int64_t> pads) {
  // Beyond any model's windows, and small enough that no size below
  // overflows (input dims stay under 2^40 bytes).
  constexpr int64_t kMaxWindowValue = int64_t(1) << 31;
  auto inRange = [&](int64_t v) { return v >= 0 && v <= kMaxWindowValue; };
  int64_t spatial = kernel.size();
  for (int64_t i = 0; i < spatial; ++i)
    if (!inRange(kernel[i]) || !inRange(dilations[i]) || !inRange(pads[i]) ||
        !inRange(pads[i + spatial]))
      return emitInferError(loc, op + " kernel, dilations and pads must be "
                                      "in [0, 2^31]");
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = inType.getDimSize(i + firstSpatial);
    int64_t padded = in + pads[i] + pads[i + spatial];
    int64_t window = dilations[i] * (kernel[i] - 1) + 1;
    if (in > 0 && window > padded)
      return emitInferError(
          loc, op + " window of " + Twine(window) + " (kernel " +
                   Twine(kernel[i]) + ", dilation " + Twine(dilations[i]) +
                   ") is larger than the padded input's " + Twine(padded) +
                   " along spatial dim " + Twine(i));
  }
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  auto wType = tensorType(adaptor.getWeight());
  int64_t spatial = inType.getRank() - 2;
  if (spatial < 1 || wType.getRank() != inType.getRank())
    return emitInferError(loc,
                          "conv expects input and weight of equal rank >= 3");
  auto strides = adaptor.getStrides(), dilations = adaptor.getDilations();
  auto pads = adaptor.getPads();
  if ((int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return emitInferError(loc, "conv window attributes have the wrong length");
  if (!allPositive(strides) || !allPositive(dilations))
    return emitInferError(loc, "conv strides and dilations must be positive");
  bool channelsLast = adaptor.getChannelsLast();
  int64_t firstSpatial = channelsLast ? 1 : 2;
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  if (failed(checkWindowsFit(loc, "conv", inType, firstSpatial, kernel,
                             dilations, pads)))
    return failure();
  SmallVector<int64_t> shape = {inType.getDimSize(0)};
  if (!channelsLast)
    shape.push_back(wType.getDimSize(0));
  for (int64_t i = 0; i < spatial; ++i)
    shape.push_back(windowOutputSize(inType.getDimSize(i + firstSpatial),
                                     wType.getDimSize(i + 2), strides[i],
                                     dilations[i], pads[i], pads[i + spatial],
                                     /*ceilMode=*/false));
  if (channelsLast)
    shape.push_back(wType.getDimSize(0));
  types.push_back(RankedTensorType::get(shape, inType.getElementType()));
  return success();
}

LogicalResult ConvOp::verify() {
  auto inType = getInput().getType(), wType = getWeight().getType();
  int64_t spatial = inType.getRank() - 2;
  if (failed(verifyWindowAttrs([&] { return emitOpError(); }, spatial,
                               getStrides(), getDilations(), getPads())))
    return failure();
  int64_t group = getGroup();
  int64_t channels = inType.getDimSize(getChannelDim());
  if (group <= 0 || channels % group != 0 || wType.getDimSize(0) % group != 0)
    return emitOpError("group ")
           << group << " does not divide the channel counts";
  if (wType.getDimSize(1) * group != channels)
    return emitOpError("weight has ")
           << wType.getDimSize(1) << " input channels per group, input has "
           << channels << " channels in " << group << " groups";
  if (getBias() && (tensorType(getBias()).getRank() != 1 ||
                    tensorType(getBias()).getDimSize(0) != wType.getDimSize(0)))
    return emitOpError("bias must be 1-D with one value per output channel");
  return success();
}

template <typename PoolOp>
static LogicalResult inferPool(std::optional<Location> loc,
                               typename PoolOp::Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  int64_t spatial = inType.getRank() - 2;
  auto kernel = adaptor.getKernelShape(), strides = adaptor.getStrides();
  auto pads = adaptor.getPads(), dilations = adaptor.getDilations();
  if (spatial < 1 || (int64_t)kernel.size() != spatial ||
      (int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return emitInferError(loc, "pool window attributes have the wrong length");
  if (!allPositive(strides) || !allPositive(dilations))
    return emitInferError(loc, "pool strides and dilations must be positive");
  bool channelsLast = adaptor.getChannelsLast();
  int64_t firstSpatial = channelsLast ? 1 : 2;
  if (failed(checkWindowsFit(loc, "pool", inType, firstSpatial, kernel,
                             dilations, pads)))
    return failure();
  SmallVector<int64_t> shape = {inType.getDimSize(0)};
  if (!channelsLast)
    shape.push_back(inType.getDimSize(1));
  for (int64_t i = 0; i < spatial; ++i)
    shape.push_back(windowOutputSize(
        inType.getDimSize(i + firstSpatial), kernel[i], strides[i],
        dilations[i], pads[i], pads[i + spatial], adaptor.getCeilMode()));
  if (channelsLast)
    shape.push_back(inType.getShape().back());
  types.push_back(RankedTensorType::get(shape, inType.getElementType()));
  return success();
}

template <typename PoolOp> static LogicalResult verifyPool(PoolOp op) {
  int64_t spatial = op.getInput().getType().getRank() - 2;
  if ((int64_t)op.getKernelShape().size() != spatial)
    return op.emitOpError("expects ") << spatial << " kernel dims";
  for (int64_t k : op.getKernelShape())
    if (k <= 0)
      return op.emitOpError("kernel dims must be positive");
  return verifyWindowAttrs([&] { return op.emitOpError(); }, spatial,
                           op.getStrides(), op.getDilations(), op.getPads());
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPool<MaxPoolOp>(loc, adaptor, types);
}
LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return inferPool<AveragePoolOp>(loc, adaptor, types);
}
LogicalResult AveragePoolOp::verify() { return verifyPool(*this); }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto inType = getInput().getType(), outType = getType();
  if (inType.getElementType() != outType.getElementType())
    return emitOpError("changes the element type");
  if (inType.getNumElements() != outType.getNumElements())
    return emitOpError("changes the element count from ")
           << inType.getNumElements() << " to " << outType.getNumElements();
  return success();
}

static LogicalResult
verifyPermutation(ArrayRef<int64_t> perm, int64_t rank,
                  function_ref<InFlightDiagnostic()> emit) {
  if ((int64_t)perm.size() != rank)
    return emit() << "perm has " << perm.size() << " entries for rank " << rank;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t p : perm)
    if (p < 0 || p >= rank || !seen.insert(p).second)
      return emit() << "perm is not a permutation of 0.." << rank - 1;
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  auto perm = adaptor.getPerm();
  if ((int64_t)perm.size() != inType.getRank())
    return emitInferError(loc, "perm length differs from the rank");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= inType.getRank())
      return emitInferError(loc, "perm entry out of range");
    shape.push_back(inType.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, inType.getElementType()));
  return success();
}

LogicalResult TransposeOp::verify() {
  return verifyPermutation(getPerm(), getInput().getType().getRank(),
                           [&] { return emitOpError(); });
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitInferError(loc, "concat needs at least one input");
  auto first = tensorType(adaptor.getInputs().front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitInferError(loc, "concat axis out of range");
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : adaptor.getInputs()) {
    // Checked here, before any dim is read: inference runs before verify().
    auto type = tensorType(input);
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return emitInferError(loc,
                            "concat inputs differ in rank or element type");
    shape[axis] += type.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult ConcatOp::verify() {
  auto first = tensorType(getInputs().front());
  for (Value input : getInputs()) {
    auto type = tensorType(input);
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != first.getRank())
      return emitOpError("inputs differ in element type or rank");
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != getAxis() && type.getDimSize(d) != first.getDimSize(d))
        return emitOpError("inputs differ in dim ") << d << " off the axis";
  }
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  auto indices = tensorType(adaptor.getIndices()).getShape();
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= inType.getRank())
    return emitInferError(loc, "gather axis out of range");
  SmallVector<int64_t> shape(inType.getShape().take_front(axis));
  shape.append(indices.begin(), indices.end());
  llvm::append_range(shape, inType.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, inType.getElementType()));
  return success();
}

LogicalResult GatherOp::verify() {
  if (getAxis() < 0 || getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  auto indexType = tensorType(adaptor.getIndices());
  if (indexType.getRank() != inType.getRank())
    return emitInferError(loc, "indices and input ranks differ");
  types.push_back(indexType.clone(inType.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::verify() {
  auto inType = getInput().getType();
  auto indexShape = getIndices().getType().getShape();
  if (getAxis() < 0 || getAxis() >= inType.getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  for (int64_t d = 0; d < inType.getRank(); ++d)
    if (d != getAxis() && indexShape[d] > inType.getDimSize(d))
      return emitOpError("indices dim ") << d << " exceeds the input's";
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto inType = getInput().getType();
  if (getType() != inType)
    return emitOpError("result type differs from the input's");
  if (getIndices().getType().getShape() != getUpdates().getType().getShape())
    return emitOpError("indices and updates have different shapes");
  if (getIndices().getType().getRank() != inType.getRank())
    return emitOpError("indices rank differs from the input's");
  if (getAxis() < 0 || getAxis() >= inType.getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, getReduction()))
    return emitOpError("reduction must be none, add, mul, max or min");
  return success();
}

LogicalResult ScatterNDOp::verify() {
  auto in = getInput().getType().getShape();
  auto idx = getIndices().getType().getShape();
  auto upd = getUpdates().getType().getShape();
  if (getType() != getInput().getType())
    return emitOpError("result type differs from the input's");
  if (idx.empty() || idx.back() < 1 || idx.back() > (int64_t)in.size())
    return emitOpError("the last indices dim must be in [1, input rank]");
  int64_t k = idx.back();
  SmallVector<int64_t> expected(idx.drop_back());
  expected.append(in.begin() + k, in.end());
  if (ArrayRef<int64_t>(expected) != upd)
    return emitOpError("updates must have shape indices[:-1] + input[k:]");
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, getReduction()))
    return emitOpError("reduction must be none, add, mul, max or min");
  return success();
}

LogicalResult SliceOp::verify() {
  auto inType = getInput().getType();
  auto outType = getType();
  int64_t rank = inType.getRank();
  if (outType.getRank() != rank || (int64_t)getStarts().size() != rank ||
      (int64_t)getSteps().size() != rank)
    return emitOpError("needs one start and one step per dim");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = getStarts()[d], step = getSteps()[d];
    int64_t size = outType.getDimSize(d);
    if (step == 0)
      return emitOpError("step of dim ") << d << " is zero";
    if (size == 0)
      continue;
    int64_t last = start + (size - 1) * step;
    if (start < 0 || start >= inType.getDimSize(d) || last < 0 ||
        last >= inType.getDimSize(d))
      return emitOpError("dim ") << d << " reads outside the input";
  }
  if (inType.getElementType() != outType.getElementType())
    return emitOpError("changes the element type");
  return success();
}

LogicalResult ExpandOp::verify() {
  auto shape =
      broadcastShapes(getInput().getType().getShape(), getType().getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != getType().getShape())
    return emitOpError("input does not broadcast to the result shape");
  return success();
}

// The importer keeps an expand to the input's own shape, so that a model
// imported at two batch sizes gives the same ops (--dynamic-batch).
LogicalResult TileOp::verify() {
  auto in = getInput().getType().getShape(), out = getType().getShape();
  if (in.size() != out.size())
    return emitOpError("changes the rank");
  for (size_t d = 0; d < in.size(); ++d)
    if ((in[d] == 0 && out[d] != 0) || (in[d] != 0 && out[d] % in[d] != 0))
      return emitOpError("dim ") << d << " is not a multiple of the input's";
  return success();
}

LogicalResult PadOp::verify() {
  auto in = getInput().getType().getShape(), out = getType().getShape();
  int64_t rank = in.size();
  if ((int64_t)getPads().size() != 2 * rank || (int64_t)out.size() != rank)
    return emitOpError("needs a begin and an end pad per dim");
  for (int64_t d = 0; d < rank; ++d) {
    if (getPads()[d] < 0 || getPads()[d + rank] < 0)
      return emitOpError("pads must be non-negative");
    if (in[d] + getPads()[d] + getPads()[d + rank] != out[d])
      return emitOpError("result dim ") << d << " is not the padded size";
  }
  if (getMode() != "constant" && getMode() != "edge" && getMode() != "reflect")
    return emitOpError("mode must be constant, edge or reflect");
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

template <typename ArgOp>
static LogicalResult
inferArgReduce(MLIRContext *ctx, std::optional<Location> loc,
               typename ArgOp::Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= inType.getRank())
    return emitInferError(loc, "axis out of range");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < inType.getRank(); ++d)
    if (d != axis)
      shape.push_back(inType.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  types.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}
LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce<ArgMaxOp>(ctx, loc, adaptor, types);
}
LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce<ArgMinOp>(ctx, loc, adaptor, types);
}
LogicalResult ArgMaxOp::verify() {
  if (getAxis() < 0 || getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}
LogicalResult ArgMinOp::verify() {
  if (getAxis() < 0 || getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

LogicalResult SoftmaxOp::verify() {
  if (getAxis() < 0 || getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}
LogicalResult LogSoftmaxOp::verify() {
  if (getAxis() < 0 || getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (getAxis() < 0 || getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

template <typename ReduceOp>
static LogicalResult inferReduce(std::optional<Location> loc,
                                 typename ReduceOp::Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  auto inType = tensorType(adaptor.getInput());
  auto axes = adaptor.getAxes();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < inType.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(inType.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  for (int64_t a : axes)
    if (a < 0 || a >= inType.getRank())
      return emitInferError(loc, "reduction axis out of range");
  types.push_back(RankedTensorType::get(shape, inType.getElementType()));
  return success();
}

template <typename ReduceOp> static LogicalResult verifyReduce(ReduceOp op) {
  auto axes = op.getAxes();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= op.getInput().getType().getRank())
      return op.emitOpError("axis ") << axes[i] << " out of range";
    if (i > 0 && axes[i] <= axes[i - 1])
      return op.emitOpError("axes must be sorted and unique");
  }
  return success();
}

#define KILN_REDUCE(OP)                                                        \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferReduce<OP>(loc, adaptor, types);                               \
  }                                                                            \
  LogicalResult OP::verify() { return verifyReduce(*this); }
KILN_REDUCE(ReduceSumOp)
KILN_REDUCE(ReduceMeanOp)
KILN_REDUCE(ReduceMaxOp)
KILN_REDUCE(ReduceMinOp)
KILN_REDUCE(ReduceProdOp)
KILN_REDUCE(ReduceSumSquareOp)
KILN_REDUCE(ReduceL1Op)
KILN_REDUCE(ReduceL2Op)
KILN_REDUCE(ReduceLogSumOp)
KILN_REDUCE(ReduceLogSumExpOp)
#undef KILN_REDUCE

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

void DispatchRegionOp::build(OpBuilder &builder, OperationState &state,
                             TypeRange resultTypes, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

LogicalResult DispatchRegionOp::verify() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("region has ")
           << block.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [arg, input] : llvm::zip(block.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError("region argument types differ from the inputs");
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("region must end in kiln.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types differ from the results");
  return success();
}

LogicalResult DispatchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // A func.func until lowering to LLVM, an llvm.func after.
  Operation *kernel =
      symbolTable.lookupNearestSymbolFrom(getOperation(), getKernelAttr());
  if (!kernel || !isa<FunctionOpInterface>(kernel))
    return emitOpError("kernel ") << getKernel() << " is not a function";
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/KilnOps.cpp.inc"
