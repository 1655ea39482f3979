//===- KilnFolders.cpp - kiln ops computed on constant operands -----------===//
//
// The folders are the one place the ops' semantics are written for values
// known at compile time: the importer folds the shape subgraphs of exported
// models through them (Shape -> Gather -> Concat -> Reshape, Equal/Where
// masks, Range arithmetic), and canonicalization folds what passes leave.
// Elements are read into int64 (integers, bool; uint64 as its bit pattern)
// or double (floats) and stored back in the result's element type, as the
// kernels compute them.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace kiln;

namespace {

/// The most elements a folder reads from one operand or writes unless a
/// FoldLimitScope asks for more: a malformed model cannot make the
/// importer exhaust memory.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;
/// Results up to this many elements are plain dense attributes; larger ones
/// are resource blobs, as the importer stores weights.
constexpr int64_t kInlineElementLimit = 16;

using Shape = SmallVector<int64_t>;

/// The elements of a constant operand, row-major, `width` bytes each (a
/// bool one byte), with how to read and write one of them.
struct ConstantElements {
  Type elementType;
  Shape shape;
  size_t width = 0;
  /// The constant's own storage where it can be read in place; `owned`
  /// where it had to be expanded (a splat, bools).
  ArrayRef<char> bytes;
  std::vector<char> owned;

  bool isFloat() const { return isa<FloatType>(elementType); }
  bool isUnsigned() const { return elementType.isUnsignedInteger(); }
  int64_t count() const { return ShapedType::getNumElements(shape); }
  const char *at(int64_t i) const { return bytes.data() + i * width; }
};

size_t widthOf(Type element) {
  return std::max<size_t>(1, element.getIntOrFloatBitWidth() / 8);
}

const llvm::fltSemantics &semanticsOf(Type element) {
  return cast<FloatType>(element).getFloatSemantics();
}

/// The most elements a folder reads from one operand: kMaxFoldedElements,
/// or more where a FoldLimitScope raised the result limit past it
/// (kiln-packed-weights computing a whole model's 4-bit weights).
int64_t maxReadElements(MLIRContext *context) {
  auto *dialect = context->getLoadedDialect<KilnDialect>();
  return std::max(kMaxFoldedElements, dialect ? dialect->maxFoldedElements : 0);
}

/// The elements of `attr`, or nullopt when it is not a readable constant
/// (an external or elided blob) or has more than maxReadElements.
std::optional<ConstantElements> readElements(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  auto type = cast<ShapedType>(elements.getType());
  if (!type.hasStaticShape() ||
      type.getNumElements() > maxReadElements(attr.getContext()) ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  ConstantElements out;
  out.elementType = type.getElementType();
  out.shape = Shape(type.getShape());
  out.width = widthOf(out.elementType);
  size_t total = size_t(type.getNumElements()) * out.width;
  if (auto dense = dyn_cast<DenseElementsAttr>(elements)) {
    if (out.elementType.isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        out.owned.push_back(b);
      out.bytes = out.owned;
      return out;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      out.owned.resize(total);
      for (size_t i = 0; i < total; i += out.width)
        memcpy(out.owned.data() + i, raw.data(), out.width);
      out.bytes = out.owned;
      return out;
    }
    out.bytes = raw;
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(elements)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    out.bytes = blob->getData();
  } else {
    return std::nullopt;
  }
  if (out.bytes.size() != total)
    return std::nullopt;
  return out;
}

/// Integer and bool elements exactly (uint64 as its bit pattern); floating
/// elements truncated toward zero, saturating (NaN reads as 0).
int64_t saturatingToInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

double loadDouble(Type element, const char *p);

int64_t loadInt(Type element, const char *p) {
  if (isa<FloatType>(element))
    return saturatingToInt(loadDouble(element, p));
  unsigned bits = element.getIntOrFloatBitWidth();
  uint64_t raw = 0;
  memcpy(&raw, p, widthOf(element));
  if (bits == 1)
    return raw != 0;
  if (element.isUnsignedInteger() || bits == 64)
    return int64_t(raw);
  return llvm::SignExtend64(raw, bits);
}

double loadDouble(Type element, const char *p) {
  if (!isa<FloatType>(element))
    return element.isUnsignedInteger() ? double(uint64_t(loadInt(element, p)))
                                       : double(loadInt(element, p));
  if (element.isF32()) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  if (element.isF64()) {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  uint64_t raw = 0;
  memcpy(&raw, p, widthOf(element));
  llvm::APFloat value(semanticsOf(element),
                      llvm::APInt(element.getIntOrFloatBitWidth(), raw));
  bool lost;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
  return value.convertToDouble();
}

/// Integers wrap to the element's width (bool is `v != 0`).
void storeInt(Type element, char *p, int64_t v);

void storeDouble(Type element, char *p, double v) {
  if (!isa<FloatType>(element)) {
    if (element.isInteger(1))
      *p = v != 0; // NaN is true, as in numpy
    else
      storeInt(element, p, saturatingToInt(v));
    return;
  }
  if (element.isF64()) {
    memcpy(p, &v, 8);
    return;
  }
  llvm::APFloat value(v);
  bool lost;
  value.convert(semanticsOf(element), llvm::APFloat::rmNearestTiesToEven,
                &lost);
  uint64_t raw = value.bitcastToAPInt().getZExtValue();
  memcpy(p, &raw, widthOf(element));
}

void storeInt(Type element, char *p, int64_t v) {
  if (isa<FloatType>(element)) {
    storeDouble(element, p, double(v));
    return;
  }
  if (element.isInteger(1)) {
    *p = v != 0;
    return;
  }
  memcpy(p, &v, widthOf(element)); // little-endian: the low bytes
}

/// The folded result `bytes` of `type` as an attribute: dense when small, a
/// resource blob (as the importer keeps weights) when not.
Attribute makeAttribute(ShapedType type, std::vector<char> bytes) {
  auto tensorType = cast<RankedTensorType>(type);
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(bytes.begin(), bytes.end());
    return DenseElementsAttr::get(tensorType, bits);
  }
  if (type.getNumElements() <= kInlineElementLimit)
    return DenseElementsAttr::getFromRawBuffer(tensorType, bytes);
  auto owned = std::make_unique<std::vector<char>>(std::move(bytes));
  ArrayRef<char> data(owned->data(), owned->size());
  AsmResourceBlob blob(
      data, alignof(std::max_align_t),
      [owned = std::move(owned)](void *, size_t, size_t) mutable {
        owned.reset();
      },
      /*dataIsMutable=*/true);
  return DenseResourceElementsAttr::get(tensorType, "folded", std::move(blob));
}

/// An empty result buffer for `type`, or nullopt past the dialect's
/// maxFoldedElements.
std::optional<std::vector<char>> resultBuffer(ShapedType type) {
  auto *dialect = type.getContext()->getLoadedDialect<KilnDialect>();
  int64_t limit = dialect->maxFoldedElements;
  if (limit == 0 || !type.hasStaticShape() || type.getNumElements() > limit)
    return std::nullopt;
  return std::vector<char>(type.getNumElements() *
                           widthOf(type.getElementType()));
}

Shape contiguousStrides(ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Strides that read `shape` as broadcast to `outShape` (same or higher
/// rank): size-1 and missing leading dimensions get stride 0.
Shape broadcastStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> outShape) {
  Shape own = contiguousStrides(shape);
  Shape strides(outShape.size(), 0);
  size_t lead = outShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    strides[lead + d] = shape[d] == 1 ? 0 : own[d];
  return strides;
}

/// Calls fn(linear, offsets) for every index of `shape` in row-major order,
/// offsets[k] = base[k] + dot(index, strides[k]): slicing, transposing and
/// broadcasting are all a choice of strides (zero or negative ones too).
template <typename Fn>
void walk(ArrayRef<int64_t> shape, ArrayRef<Shape> strides, Shape offsets,
          Fn fn) {
  int64_t count = ShapedType::getNumElements(shape);
  size_t rank = shape.size();
  Shape index(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(linear, ArrayRef<int64_t>(offsets));
    for (size_t d = rank; d-- > 0;) {
      for (size_t k = 0; k < strides.size(); ++k)
        offsets[k] += strides[k][d];
      if (++index[d] < shape[d])
        break;
      for (size_t k = 0; k < strides.size(); ++k)
        offsets[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
  }
}

/// The operands' elements when every one is a constant.
std::optional<SmallVector<ConstantElements>>
readAll(ArrayRef<Attribute> operands) {
  SmallVector<ConstantElements> all;
  for (Attribute operand : operands) {
    std::optional<ConstantElements> elements = readElements(operand);
    if (!elements)
      return std::nullopt;
    all.push_back(std::move(*elements));
  }
  return all;
}

/// Fills the result of `type` element by element: fn(inputs' elements at
/// the broadcast position, result element). Null when an operand is not a
/// constant or fn fails (an integer division by zero).
template <typename Fn>
Attribute foldBroadcast(ShapedType type, ArrayRef<Attribute> operands, Fn fn) {
  auto out = resultBuffer(type);
  auto inputs = out ? readAll(operands) : std::nullopt;
  if (!inputs)
    return {};
  SmallVector<Shape> strides;
  for (const ConstantElements &input : *inputs)
    strides.push_back(broadcastStrides(input.shape, type.getShape()));
  size_t width = widthOf(type.getElementType());
  bool ok = true;
  SmallVector<const char *, 3> at(inputs->size());
  walk(type.getShape(), strides, Shape(inputs->size(), 0),
       [&](int64_t linear, ArrayRef<int64_t> offsets) {
         for (size_t k = 0; k < at.size(); ++k)
           at[k] = (*inputs)[k].at(offsets[k]);
         ok &= fn(ArrayRef<const char *>(at), out->data() + linear * width);
       });
  if (!ok)
    return {};
  return makeAttribute(type, std::move(*out));
}

/// Result element i of `type` reads input element offsets[0] of a walk
/// over `shape` with `strides` from `base` (the data-movement ops).
Attribute foldStrided(ShapedType type, Attribute operand,
                      ArrayRef<int64_t> shape, Shape strides, int64_t base) {
  auto out = resultBuffer(type);
  auto input = out ? readElements(operand) : std::nullopt;
  if (!input)
    return {};
  size_t width = input->width;
  walk(shape, {strides}, {base},
       [&](int64_t linear, ArrayRef<int64_t> offsets) {
         memcpy(out->data() + linear * width, input->at(offsets[0]), width);
       });
  return makeAttribute(type, std::move(*out));
}

// Integer arithmetic wraps through uint64 (no signed-overflow UB); the store
// then wraps to the element's width, as the kernels do.
using IntBinaryFn = bool (*)(int64_t, int64_t, bool, int64_t &);
using FloatBinaryFn = double (*)(double, double);

/// Elementwise `intFn` or `floatFn` (null: floats only) of two operands.
Attribute foldArithmetic(Operation *op, ArrayRef<Attribute> operands,
                         IntBinaryFn intFn, FloatBinaryFn floatFn) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  Type element = type.getElementType();
  if (!isa<FloatType>(element) && !intFn)
    return {};
  bool isUnsigned = element.isUnsignedInteger();
  return foldBroadcast(type, operands,
                       [&](ArrayRef<const char *> in, char *out) {
                         if (isa<FloatType>(element)) {
                           storeDouble(element, out,
                                       floatFn(loadDouble(element, in[0]),
                                               loadDouble(element, in[1])));
                           return true;
                         }
                         int64_t r = 0;
                         if (!intFn(loadInt(element, in[0]),
                                    loadInt(element, in[1]), isUnsigned, r))
                           return false;
                         storeInt(element, out, r);
                         return true;
                       });
}

bool addInt(int64_t a, int64_t b, bool, int64_t &r) {
  r = int64_t(uint64_t(a) + uint64_t(b));
  return true;
}
bool subInt(int64_t a, int64_t b, bool, int64_t &r) {
  r = int64_t(uint64_t(a) - uint64_t(b));
  return true;
}
bool mulInt(int64_t a, int64_t b, bool, int64_t &r) {
  r = int64_t(uint64_t(a) * uint64_t(b));
  return true;
}
/// Truncates toward zero, as ONNX integer Div does.
bool divInt(int64_t a, int64_t b, bool isUnsigned, int64_t &r) {
  if (b == 0)
    return false;
  if (isUnsigned)
    r = int64_t(uint64_t(a) / uint64_t(b));
  else
    r = b == -1 ? int64_t(0 - uint64_t(a)) : a / b;
  return true;
}
/// The result takes the divisor's sign (Python %).
bool modInt(int64_t a, int64_t b, bool isUnsigned, int64_t &r) {
  if (b == 0)
    return false;
  if (isUnsigned) {
    r = int64_t(uint64_t(a) % uint64_t(b));
    return true;
  }
  r = b == -1 ? 0 : a % b;
  if (r != 0 && (r < 0) != (b < 0))
    r += b;
  return true;
}
bool minInt(int64_t a, int64_t b, bool isUnsigned, int64_t &r) {
  r = isUnsigned ? int64_t(std::min(uint64_t(a), uint64_t(b))) : std::min(a, b);
  return true;
}
bool maxInt(int64_t a, int64_t b, bool isUnsigned, int64_t &r) {
  r = isUnsigned ? int64_t(std::max(uint64_t(a), uint64_t(b))) : std::max(a, b);
  return true;
}

// Min and max propagate NaN, as the kernels (and numpy) do.
double minFloat(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}
double maxFloat(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

enum class Comparison { Equal, Less, LessEqual, Greater, GreaterEqual };

template <typename T> bool compare(Comparison c, T a, T b) {
  switch (c) {
  case Comparison::Equal:
    return a == b;
  case Comparison::Less:
    return a < b;
  case Comparison::LessEqual:
    return a <= b;
  case Comparison::Greater:
    return a > b;
  case Comparison::GreaterEqual:
    return a >= b;
  }
  return false;
}

Attribute foldComparison(Operation *op, ArrayRef<Attribute> operands,
                         Comparison c) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  Type element = cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  return foldBroadcast(type, operands,
                       [&](ArrayRef<const char *> in, char *out) {
                         int64_t a = loadInt(element, in[0]);
                         int64_t b = loadInt(element, in[1]);
                         if (isa<FloatType>(element))
                           *out = compare(c, loadDouble(element, in[0]),
                                          loadDouble(element, in[1]));
                         else if (element.isUnsignedInteger())
                           *out = compare(c, uint64_t(a), uint64_t(b));
                         else
                           *out = compare(c, a, b);
                         return true;
                       });
}

Attribute foldLogic(Operation *op, ArrayRef<Attribute> operands,
                    bool (*fn)(bool, bool)) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  return foldBroadcast(type, operands,
                       [&](ArrayRef<const char *> in, char *out) {
                         *out = fn(*in[0] != 0, *in[1] != 0);
                         return true;
                       });
}

/// Elementwise `intFn` or `floatFn` (null: floats only) of one operand.
Attribute foldUnary(Operation *op, ArrayRef<Attribute> operands,
                    int64_t (*intFn)(int64_t), double (*floatFn)(double)) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  Type element = type.getElementType();
  if (!isa<FloatType>(element) && !intFn)
    return {};
  return foldBroadcast(
      type, operands, [&](ArrayRef<const char *> in, char *out) {
        if (isa<FloatType>(element))
          storeDouble(element, out, floatFn(loadDouble(element, in[0])));
        else
          storeInt(element, out, intFn(loadInt(element, in[0])));
        return true;
      });
}

int64_t negInt(int64_t v) { return int64_t(0 - uint64_t(v)); }
int64_t absInt(int64_t v) { return v < 0 ? negInt(v) : v; }
int64_t signInt(int64_t v) { return (v > 0) - (v < 0); }
double signFloat(double v) {
  return std::isnan(v) ? v : double((v > 0) - (v < 0));
}

enum class Reduction { Sum, Max, Min, Prod };

/// Reduces over the op's sorted `axes` (keepdims or not: the result holds
/// the same elements either way).
Attribute foldReduction(Operation *op, Attribute operand,
                        ArrayRef<int64_t> axes, Reduction kind) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  auto out = resultBuffer(type);
  auto input = out ? readElements(operand) : std::nullopt;
  if (!input)
    return {};
  Type element = type.getElementType();
  bool floating = isa<FloatType>(element);
  int64_t rank = input->shape.size();
  // Walk the kept dims outside and the reduced ones inside.
  Shape own = contiguousStrides(input->shape), keptShape, keptStrides,
        reducedShape, reducedStrides;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    (reduced ? reducedShape : keptShape).push_back(input->shape[d]);
    (reduced ? reducedStrides : keptStrides).push_back(own[d]);
  }
  size_t width = widthOf(element);
  walk(keptShape, {keptStrides}, {0},
       [&](int64_t linear, ArrayRef<int64_t> base) {
         double accF = kind == Reduction::Sum    ? 0.0
                       : kind == Reduction::Prod ? 1.0
                       : kind == Reduction::Max  ? -INFINITY
                                                 : INFINITY;
         int64_t accI = kind == Reduction::Prod ? 1 : 0;
         bool first = true;
         walk(reducedShape, {reducedStrides}, {base[0]},
              [&](int64_t, ArrayRef<int64_t> at) {
                const char *p = input->at(at[0]);
                if (floating) {
                  double v = loadDouble(element, p);
                  accF = kind == Reduction::Sum    ? accF + v
                         : kind == Reduction::Prod ? accF * v
                         : kind == Reduction::Max  ? maxFloat(accF, v)
                                                   : minFloat(accF, v);
                  return;
                }
                int64_t v = loadInt(element, p);
                if (kind == Reduction::Sum)
                  addInt(accI, v, false, accI);
                else if (kind == Reduction::Prod)
                  mulInt(accI, v, false, accI);
                else if (first)
                  accI = v;
                else
                  (kind == Reduction::Max ? maxInt : minInt)(
                      accI, v, element.isUnsignedInteger(), accI);
                first = false;
              });
         char *dst = out->data() + linear * width;
         if (floating)
           storeDouble(element, dst, accF);
         else
           storeInt(element, dst, accI);
       });
  return makeAttribute(type, std::move(*out));
}

} // namespace

kiln::FoldLimitScope::FoldLimitScope(MLIRContext *context, int64_t maxElements)
    : dialect(context->getOrLoadDialect<KilnDialect>()),
      saved(dialect->maxFoldedElements) {
  dialect->maxFoldedElements = maxElements;
}

kiln::FoldLimitScope::~FoldLimitScope() { dialect->maxFoldedElements = saved; }

bool kiln::withConstantElements(Attribute value,
                                function_ref<void(ArrayRef<char>)> use) {
  std::optional<ConstantElements> elements = readElements(value);
  if (!elements)
    return false;
  use(elements->bytes);
  return true;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Whether the constant operand `value` holds `identity` in every element,
/// to the bit for floats (x - 0.0 is x, but x - -0.0 turns -0.0 into 0.0).
static bool holdsOnly(Attribute value, double identity) {
  std::optional<ConstantElements> elements = readElements(value);
  if (!elements)
    return false;
  for (int64_t i = 0, n = elements->count(); i < n; ++i) {
    double v = loadDouble(elements->elementType, elements->at(i));
    if (v != identity || std::signbit(v) != std::signbit(identity))
      return false;
  }
  return true;
}

/// `x` when `op(x, y)` is x for every x: y a constant of only `identity`
/// that broadcasts nothing onto x. Folding a large constant weight through
/// it (an int8 weight minus its zero point 0) would otherwise be a copy
/// past the folding limit, made again on every run.
template <typename OpTy>
static Value identityOperand(OpTy op, ArrayRef<Attribute> operands,
                             double identity, bool commutes) {
  for (unsigned i : {1u, 0u}) {
    if (i == 0 && !commutes)
      break;
    Value x = op->getOperand(1 - i);
    if (operands[i] && x.getType() == op.getType() &&
        holdsOnly(operands[i], identity))
      return x;
  }
  return nullptr;
}

OpFoldResult AddOp::fold(FoldAdaptor a) {
  // Integer 0, or float -0.0 (0.0 would turn -0.0 into 0.0).
  bool isFloat = isa<FloatType>(getType().getElementType());
  if (Value x = identityOperand(*this, a.getOperands(), isFloat ? -0.0 : 0.0,
                                /*commutes=*/true))
    return x;
  return foldArithmetic(*this, a.getOperands(), addInt,
                        [](double x, double y) { return x + y; });
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  if (Value x = identityOperand(*this, a.getOperands(), 0.0,
                                /*commutes=*/false))
    return x;
  return foldArithmetic(*this, a.getOperands(), subInt,
                        [](double x, double y) { return x - y; });
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  if (Value x = identityOperand(*this, a.getOperands(), 1.0,
                                /*commutes=*/true))
    return x;
  return foldArithmetic(*this, a.getOperands(), mulInt,
                        [](double x, double y) { return x * y; });
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  if (Value x = identityOperand(*this, a.getOperands(), 1.0,
                                /*commutes=*/false))
    return x;
  return foldArithmetic(*this, a.getOperands(), divInt,
                        [](double x, double y) { return x / y; });
}
OpFoldResult ModOp::fold(FoldAdaptor a) {
  return foldArithmetic(*this, a.getOperands(), modInt,
                        [](double x, double y) { return std::fmod(x, y); });
}
/// x << y or x >> y on integers of `element`'s width, as the kernels shift:
/// logical right shifts of unsigned integers, arithmetic ones of signed;
/// a shift by the width or more (or a negative one) gives 0, or the sign
/// for a signed right shift.
static Attribute foldShift(Operation *op, ArrayRef<Attribute> operands,
                           bool left) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  Type element = type.getElementType();
  if (!isa<IntegerType>(element))
    return {};
  unsigned width = element.getIntOrFloatBitWidth();
  bool isUnsigned = element.isUnsignedInteger();
  uint64_t mask = width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  return foldBroadcast(type, operands,
                       [&](ArrayRef<const char *> in, char *out) {
                         int64_t x = loadInt(element, in[0]);
                         uint64_t y = uint64_t(loadInt(element, in[1])) & mask;
                         int64_t r;
                         if (y >= width)
                           r = left || isUnsigned || x >= 0 ? 0 : -1;
                         else if (left)
                           r = int64_t(uint64_t(x) << y);
                         else if (isUnsigned)
                           r = int64_t((uint64_t(x) & mask) >> y);
                         else
                           r = x >> y;
                         storeInt(element, out, r);
                         return true;
                       });
}
OpFoldResult ShiftLeftOp::fold(FoldAdaptor a) {
  return foldShift(*this, a.getOperands(), /*left=*/true);
}
OpFoldResult ShiftRightOp::fold(FoldAdaptor a) {
  return foldShift(*this, a.getOperands(), /*left=*/false);
}
/// Floats only: the importer computes an integer Pow in float64.
OpFoldResult PowOp::fold(FoldAdaptor a) {
  return foldArithmetic(*this, a.getOperands(), nullptr,
                        [](double x, double y) { return std::pow(x, y); });
}
OpFoldResult MinOp::fold(FoldAdaptor a) {
  return foldArithmetic(*this, a.getOperands(), minInt, minFloat);
}
OpFoldResult MaxOp::fold(FoldAdaptor a) {
  return foldArithmetic(*this, a.getOperands(), maxInt, maxFloat);
}

OpFoldResult EqualOp::fold(FoldAdaptor a) {
  return foldComparison(*this, a.getOperands(), Comparison::Equal);
}
OpFoldResult LessOp::fold(FoldAdaptor a) {
  return foldComparison(*this, a.getOperands(), Comparison::Less);
}
OpFoldResult LessEqualOp::fold(FoldAdaptor a) {
  return foldComparison(*this, a.getOperands(), Comparison::LessEqual);
}
OpFoldResult GreaterOp::fold(FoldAdaptor a) {
  return foldComparison(*this, a.getOperands(), Comparison::Greater);
}
OpFoldResult GreaterEqualOp::fold(FoldAdaptor a) {
  return foldComparison(*this, a.getOperands(), Comparison::GreaterEqual);
}

OpFoldResult AndOp::fold(FoldAdaptor a) {
  return foldLogic(*this, a.getOperands(),
                   [](bool x, bool y) { return x && y; });
}
OpFoldResult OrOp::fold(FoldAdaptor a) {
  return foldLogic(*this, a.getOperands(),
                   [](bool x, bool y) { return x || y; });
}
OpFoldResult XorOp::fold(FoldAdaptor a) {
  return foldLogic(*this, a.getOperands(),
                   [](bool x, bool y) { return x != y; });
}
OpFoldResult NotOp::fold(FoldAdaptor a) {
  return foldUnary(
      *this, a.getOperands(), [](int64_t v) -> int64_t { return v == 0; },
      nullptr);
}

OpFoldResult NegOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), negInt, [](double v) { return -v; });
}
OpFoldResult AbsOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), absInt,
                   [](double v) { return std::fabs(v); });
}
OpFoldResult SignOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), signInt, signFloat);
}
OpFoldResult SqrtOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), nullptr,
                   [](double v) { return std::sqrt(v); });
}
OpFoldResult FloorOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), nullptr,
                   [](double v) { return std::floor(v); });
}
OpFoldResult CeilOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), nullptr,
                   [](double v) { return std::ceil(v); });
}

/// Half to even, the default rounding mode's nearest.
OpFoldResult RoundOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getOperands(), nullptr,
                   [](double v) { return std::nearbyint(v); });
}

/// min(max(x, min), max) with the bounds in the element type, as the
/// lowering computes it; NaN stays NaN.
OpFoldResult ClipOp::fold(FoldAdaptor a) {
  Type element = getType().getElementType();
  auto inElementType = [&](double v) {
    char bytes[8];
    storeDouble(element, bytes, v);
    return loadDouble(element, bytes);
  };
  double lo = inElementType(getMin().convertToDouble());
  double hi = inElementType(getMax().convertToDouble());
  return foldBroadcast(getType(), a.getOperands(),
                       [&](ArrayRef<const char *> in, char *out) {
                         double v = loadDouble(element, in[0]);
                         if (!std::isnan(v))
                           v = std::min(std::max(v, lo), hi);
                         storeDouble(element, out, v);
                         return true;
                       });
}

OpFoldResult WhereOp::fold(FoldAdaptor a) {
  auto type = getType();
  // Both branches one value (a Loop's state that its body passes through,
  // kept where an iteration does not run): that value, when the condition
  // broadcasts nothing onto it.
  if (getLhs() == getRhs() && getLhs().getType() == type)
    return getLhs();
  size_t width = widthOf(type.getElementType());
  return foldBroadcast(type, a.getOperands(),
                       [&](ArrayRef<const char *> in, char *out) {
                         memcpy(out, *in[0] ? in[1] : in[2], width);
                         return true;
                       });
}

/// ONNX Cast: float to integer truncates toward zero (saturating; NaN is 0),
/// integers wrap to the result's width, anything to bool is `x != 0`.
OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  Type from = getInput().getType().getElementType();
  Type to = getType().getElementType();
  // Through double from a float (or a uint64 into a float, whose bit
  // pattern would read as negative); otherwise exactly in int64.
  bool viaDouble = isa<FloatType>(from) ||
                   (from.isUnsignedInteger(64) && isa<FloatType>(to));
  return foldBroadcast(getType(), adaptor.getOperands(),
                       [&](ArrayRef<const char *> in, char *out) {
                         if (viaDouble)
                           storeDouble(to, out, loadDouble(from, in[0]));
                         else
                           storeInt(to, out, loadInt(from, in[0]));
                         return true;
                       });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) == reshape(x).
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto value = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return value.reshape(getType());
  // The same row-major elements under the new shape.
  auto input =
      resultBuffer(getType()) ? readElements(adaptor.getInput()) : std::nullopt;
  if (!input)
    return {};
  return makeAttribute(
      getType(), std::vector<char>(input->bytes.begin(), input->bytes.end()));
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getInput();
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  Shape own = contiguousStrides(inShape), strides;
  for (int64_t p : getPerm())
    strides.push_back(own[p]);
  return foldStrided(getType(), adaptor.getInput(), getType().getShape(),
                     strides, 0);
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return foldStrided(
      getType(), adaptor.getInput(), getType().getShape(),
      broadcastStrides(getInput().getType().getShape(), getType().getShape()),
      0);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  Shape own = contiguousStrides(inShape), strides;
  int64_t base = 0;
  bool empty = getType().getNumElements() == 0;
  for (size_t d = 0; d < inShape.size(); ++d) {
    strides.push_back(own[d] * getSteps()[d]);
    if (!empty)
      base += getStarts()[d] * own[d];
  }
  return foldStrided(getType(), adaptor.getInput(), getType().getShape(),
                     strides, base);
}

OpFoldResult TileOp::fold(FoldAdaptor adaptor) {
  // Each result dim as (repeats, input dim), the repeat reading stride 0.
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  Shape own = contiguousStrides(inShape), view, strides;
  for (size_t d = 0; d < inShape.size(); ++d) {
    int64_t repeats = inShape[d] ? getType().getDimSize(d) / inShape[d] : 0;
    view.append({repeats, inShape[d]});
    strides.append({0, own[d]});
  }
  return foldStrided(getType(), adaptor.getInput(), view, strides, 0);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  auto out = resultBuffer(getType());
  auto inputs = out ? readAll(adaptor.getInputs()) : std::nullopt;
  if (!inputs)
    return {};
  int64_t axis = getAxis();
  int64_t outer =
      ShapedType::getNumElements(getType().getShape().take_front(axis));
  char *dst = out->data();
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstantElements &input : *inputs) {
      size_t chunk = input.bytes.size() / size_t(std::max<int64_t>(outer, 1));
      if (chunk) // an empty input or result may have no storage at all
        memcpy(dst, input.bytes.data() + o * chunk, chunk);
      dst += chunk;
    }
  return makeAttribute(getType(), std::move(*out));
}

namespace {
/// A gather's result buffer and its constant operands.
struct GatherOperands {
  std::vector<char> out;
  ConstantElements data, indices;
};
std::optional<GatherOperands> readGather(ShapedType type, Attribute data,
                                         Attribute indices) {
  auto out = resultBuffer(type);
  auto dataElements = out ? readElements(data) : std::nullopt;
  auto indexElements = out ? readElements(indices) : std::nullopt;
  if (!dataElements || !indexElements)
    return std::nullopt;
  return GatherOperands{std::move(*out), std::move(*dataElements),
                        std::move(*indexElements)};
}
} // namespace

/// Out-of-range indices clamp, as the kernel's do.
OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto operands =
      readGather(getType(), adaptor.getInput(), adaptor.getIndices());
  if (!operands)
    return {};
  auto &[out, data, indices] = *operands;
  int64_t axis = getAxis();
  ArrayRef<int64_t> dims(data.shape);
  int64_t dim = dims[axis];
  if (dim == 0)
    return {};
  int64_t outer = ShapedType::getNumElements(dims.take_front(axis));
  size_t chunk = size_t(ShapedType::getNumElements(dims.drop_front(axis + 1))) *
                 data.width;
  char *dst = out.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0, n = indices.count(); k < n; ++k, dst += chunk) {
      int64_t index = loadInt(indices.elementType, indices.at(k));
      index = std::clamp<int64_t>(index < 0 ? index + dim : index, 0, dim - 1);
      if (chunk)
        memcpy(dst, data.bytes.data() + (o * dim + index) * chunk, chunk);
    }
  return makeAttribute(getType(), std::move(out));
}

/// Element p reads the input at p with its `axis` coordinate replaced by
/// indices[p]. An index out of range is left to the kernel, whose check
/// reports it.
OpFoldResult GatherElementsOp::fold(FoldAdaptor adaptor) {
  auto operands =
      readGather(getType(), adaptor.getInput(), adaptor.getIndices());
  if (!operands)
    return {};
  auto &[out, data, indices] = *operands;
  int64_t axis = getAxis();
  ArrayRef<int64_t> dims(data.shape);
  Shape dataStrides = contiguousStrides(dims);
  ArrayRef<int64_t> outShape = getType().getShape();
  Shape strides = contiguousStrides(outShape);
  // The data offset of p without its axis coordinate.
  strides[axis] = 0;
  for (size_t d = 0; d < outShape.size(); ++d)
    if (int64_t(d) != axis)
      strides[d] = dataStrides[d];
  bool inRange = true;
  ::walk(outShape, {strides}, Shape{0},
         [&](int64_t linear, ArrayRef<int64_t> offsets) {
           int64_t index = loadInt(indices.elementType, indices.at(linear));
           if (index < 0)
             index += dims[axis];
           if (index < 0 || index >= dims[axis]) {
             inRange = false;
             return;
           }
           memcpy(out.data() + linear * data.width,
                  data.at(offsets[0] + index * dataStrides[axis]), data.width);
         });
  if (!inRange)
    return {};
  return makeAttribute(getType(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

OpFoldResult ReduceSumOp::fold(FoldAdaptor a) {
  return foldReduction(*this, a.getInput(), getAxes(), Reduction::Sum);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor a) {
  return foldReduction(*this, a.getInput(), getAxes(), Reduction::Max);
}
OpFoldResult ReduceMinOp::fold(FoldAdaptor a) {
  return foldReduction(*this, a.getInput(), getAxes(), Reduction::Min);
}
OpFoldResult ReduceProdOp::fold(FoldAdaptor a) {
  return foldReduction(*this, a.getInput(), getAxes(), Reduction::Prod);
}
