//===- ConstantEvaluator.cpp - import-time ONNX constant folding ----------===//
//
// Evaluates ONNX nodes whose inputs are all known at import time. The design:
//
// - Data movement (Gather, Slice, Transpose, Expand, Concat, ...) copies raw
//   element bytes, so it is exact for every fixed-width dtype.
// - Arithmetic loads each element as int64 (integer and bool dtypes) or double
//   (floating dtypes), computes there, and stores back in the output dtype.
//   For f16/bf16/f32 the double result rounds to the same value as computing
//   in the narrow type for +, -, *, / and sqrt, so folding is bit-faithful.
// - Every output goes through makeOutput, which refuses results over
//   kMaxConstantElements, and every index or axis read from the model is
//   range-checked before use: the model is untrusted input.
//
// Tensors are little-endian C-order; this file assumes a little-endian host,
// as the rest of the importer does.
//
//===----------------------------------------------------------------------===//

#include "ConstantEvaluator.h"

#include "OnnxImporterImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using llvm::ArrayRef;
using llvm::StringRef;
using llvm::Twine;
using mlir::failed;
using mlir::failure;
using mlir::LogicalResult;
using mlir::success;

namespace kiln::onnx_import {
namespace {

using Shape = std::vector<int64_t>;
using TP = onnx::TensorProto;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

enum class Kind { Float, Signed, Unsigned, Bool };

struct DType {
  int type;
  const char *name;
  unsigned width;
  Kind kind;
};

constexpr DType kDTypes[] = {
    {TP::FLOAT, "float32", 4, Kind::Float},
    {TP::DOUBLE, "float64", 8, Kind::Float},
    {TP::FLOAT16, "float16", 2, Kind::Float},
    {TP::BFLOAT16, "bfloat16", 2, Kind::Float},
    {TP::INT8, "int8", 1, Kind::Signed},
    {TP::INT16, "int16", 2, Kind::Signed},
    {TP::INT32, "int32", 4, Kind::Signed},
    {TP::INT64, "int64", 8, Kind::Signed},
    {TP::UINT8, "uint8", 1, Kind::Unsigned},
    {TP::UINT16, "uint16", 2, Kind::Unsigned},
    {TP::UINT32, "uint32", 4, Kind::Unsigned},
    {TP::UINT64, "uint64", 8, Kind::Unsigned},
    {TP::BOOL, "bool", 1, Kind::Bool},
};

const DType *lookupDType(int type) {
  for (const DType &d : kDTypes)
    if (d.type == type)
      return &d;
  return nullptr;
}

std::string typeName(int type) {
  if (const DType *d = lookupDType(type))
    return d->name;
  return "dtype#" + std::to_string(type);
}

size_t widthOf(int type) { return lookupDType(type)->width; }
bool isFloat(int type) { return lookupDType(type)->kind == Kind::Float; }

//===----------------------------------------------------------------------===//
// 16-bit float conversions
//===----------------------------------------------------------------------===//

template <typename T> T readRaw(const char *p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void writeRaw(char *p, T v) { memcpy(p, &v, sizeof(T)); }

/// memcpy that accepts the null data() of empty vectors (memcpy does not).
void copyBytes(char *dst, const char *src, size_t n) {
  if (n)
    memcpy(dst, src, n);
}

float bitsToFloat(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return bits;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f)
    return bitsToFloat(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    float f = std::ldexp(float(mant), -24);
    return sign ? -f : f;
  }
  return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// Round-to-nearest-even float -> IEEE half, with overflow to infinity.
uint16_t floatToHalf(float f) {
  uint32_t x = floatToBits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) // inf or NaN (keep NaN quiet)
    return sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0);
  if (absx >= 0x477ff000) // >= 65520 rounds to infinity
    return sign | 0x7c00;
  if (absx < 0x38800000) {
    // Below the smallest normal half: count units of 2^-24, rounding to even
    // (the default FP rounding mode). 1024 units encode the smallest normal.
    float units = bitsToFloat(absx) * 16777216.0f;
    return sign | uint16_t(std::nearbyint(units));
  }
  uint32_t h = ((absx >> 23) - 112) << 10 | ((absx >> 13) & 0x3ff);
  uint32_t rest = absx & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h; // a carry into the exponent is the correct rounding
  return sign | uint16_t(h);
}

float bf16ToFloat(uint16_t b) { return bitsToFloat(uint32_t(b) << 16); }

uint16_t floatToBf16(float f) {
  uint32_t x = floatToBits(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40);
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

//===----------------------------------------------------------------------===//
// Element loads and stores
//===----------------------------------------------------------------------===//

/// NaN becomes 0 and out-of-range values saturate: ONNX leaves these casts
/// undefined, and the C++ conversion would be undefined behaviour.
int64_t saturatingToInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

double loadDouble(int type, const char *p);

/// Integer and bool elements exactly (uint64 as its bit pattern); floating
/// elements truncated toward zero.
int64_t loadInt(int type, const char *p) {
  switch (type) {
  case TP::INT8:
    return readRaw<int8_t>(p);
  case TP::INT16:
    return readRaw<int16_t>(p);
  case TP::INT32:
    return readRaw<int32_t>(p);
  case TP::INT64:
    return readRaw<int64_t>(p);
  case TP::UINT8:
    return readRaw<uint8_t>(p);
  case TP::UINT16:
    return readRaw<uint16_t>(p);
  case TP::UINT32:
    return readRaw<uint32_t>(p);
  case TP::UINT64:
    return int64_t(readRaw<uint64_t>(p));
  case TP::BOOL:
    return *p != 0;
  default:
    return saturatingToInt(loadDouble(type, p));
  }
}

double loadDouble(int type, const char *p) {
  switch (type) {
  case TP::FLOAT:
    return readRaw<float>(p);
  case TP::DOUBLE:
    return readRaw<double>(p);
  case TP::FLOAT16:
    return halfToFloat(readRaw<uint16_t>(p));
  case TP::BFLOAT16:
    return bf16ToFloat(readRaw<uint16_t>(p));
  case TP::UINT64:
    return double(readRaw<uint64_t>(p));
  default:
    return double(loadInt(type, p));
  }
}

void storeDouble(int type, char *p, double v);

/// Integer stores wrap to the dtype's width (numpy astype semantics).
void storeInt(int type, char *p, int64_t v) {
  switch (type) {
  case TP::INT8:
  case TP::UINT8:
    writeRaw<uint8_t>(p, uint8_t(v));
    return;
  case TP::INT16:
  case TP::UINT16:
    writeRaw<uint16_t>(p, uint16_t(v));
    return;
  case TP::INT32:
  case TP::UINT32:
    writeRaw<uint32_t>(p, uint32_t(v));
    return;
  case TP::INT64:
  case TP::UINT64:
    writeRaw<uint64_t>(p, uint64_t(v));
    return;
  case TP::BOOL:
    *p = v != 0;
    return;
  default:
    storeDouble(type, p, double(v));
  }
}

void storeDouble(int type, char *p, double v) {
  switch (type) {
  case TP::FLOAT:
    writeRaw<float>(p, float(v));
    return;
  case TP::DOUBLE:
    writeRaw<double>(p, v);
    return;
  case TP::FLOAT16:
    writeRaw<uint16_t>(p, floatToHalf(float(v)));
    return;
  case TP::BFLOAT16:
    writeRaw<uint16_t>(p, floatToBf16(float(v)));
    return;
  case TP::BOOL:
    *p = v != 0; // NaN is true, as in numpy
    return;
  default:
    storeInt(type, p, saturatingToInt(v));
  }
}

bool isNonZero(int type, const char *p) {
  if (isFloat(type))
    return loadDouble(type, p) != 0; // -0.0 is zero, NaN is not
  for (size_t i = 0, w = widthOf(type); i < w; ++i)
    if (p[i])
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Element count of an already validated shape.
int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape contiguousStrides(ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Strides that read `shape` as if broadcast to `outShape` (same or higher
/// rank): size-1 and missing leading dimensions get stride 0.
Shape broadcastStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> outShape) {
  Shape own = contiguousStrides(shape);
  Shape strides(outShape.size(), 0);
  size_t lead = outShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    strides[lead + d] = shape[d] == 1 ? 0 : own[d];
  return strides;
}

/// Visits every index of `shape` in C order and calls fn(linear, offsets)
/// where offsets[k] = base[k] + dot(index, strides[k]). The offsets update
/// incrementally, so slicing, transposing and broadcasting all reduce to
/// choosing strides (possibly negative or zero).
template <typename Fn>
void walk(ArrayRef<int64_t> shape, ArrayRef<Shape> strides, Shape offsets,
          Fn fn) {
  int64_t count = numElements(shape);
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

ConstTensor int64Tensor(Shape shape, ArrayRef<int64_t> values) {
  ConstTensor t;
  t.onnxType = TP::INT64;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * 8);
  if (!values.empty())
    memcpy(t.bytes.data(), values.data(), values.size() * 8);
  return t;
}

//===----------------------------------------------------------------------===//
// Evaluation context
//===----------------------------------------------------------------------===//

struct EvalContext {
  const onnx::NodeProto &node;
  int64_t opset;
  ArrayRef<const ConstTensor *> inputs;
  std::vector<ConstTensor> &outputs;
  std::string &error;

  LogicalResult fail(const Twine &message) {
    error =
        (Twine(node.op_type()) + " '" + node.name() + "': " + message).str();
    return failure();
  }

  const ConstTensor *input(size_t i) const {
    return i < inputs.size() ? inputs[i] : nullptr;
  }

  /// Input `i`, or null with the error set when it is absent.
  const ConstTensor *required(size_t i) {
    if (const ConstTensor *t = input(i))
      return t;
    (void)fail("input " + Twine(i) + " is required");
    return nullptr;
  }

  const onnx::AttributeProto *attr(StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }

  int64_t intAttr(StringRef name, int64_t dflt) const {
    const auto *a = attr(name);
    return a ? a->i() : dflt;
  }

  std::optional<Shape> intsAttr(StringRef name) const {
    const auto *a = attr(name);
    if (!a)
      return std::nullopt;
    return Shape(a->ints().begin(), a->ints().end());
  }

  /// Fills `out` with a zeroed tensor, refusing shapes with negative
  /// dimensions or more than kMaxConstantElements elements.
  LogicalResult makeOutput(int type, Shape shape, ConstTensor &out) {
    double count = 1;
    bool empty = false;
    for (int64_t d : shape) {
      if (d < 0)
        return fail("output shape " + shapeStr(shape) +
                    " has a negative dimension");
      empty |= d == 0;
      count *= double(d);
    }
    if (!empty && count > double(kMaxConstantElements)) {
      char buf[32];
      snprintf(buf, sizeof(buf), "%.0f", count);
      return fail("output of shape " + shapeStr(shape) + " would have " + buf +
                  " elements, more than the constant-folding limit of " +
                  Twine(kMaxConstantElements));
    }
    out.onnxType = type;
    out.bytes.assign(size_t(numElements(shape)) * widthOf(type), 0);
    out.shape = std::move(shape);
    return success();
  }

  LogicalResult emit(ConstTensor tensor) {
    outputs.push_back(std::move(tensor));
    return success();
  }
};

/// Reads an integer list (axes, shapes, starts) from an int32/int64 tensor.
LogicalResult readInts(EvalContext &ctx, const ConstTensor &t, StringRef what,
                       Shape &out) {
  if (t.onnxType != TP::INT64 && t.onnxType != TP::INT32)
    return ctx.fail(what + " must be int32 or int64, got " +
                    typeName(t.onnxType));
  if (t.shape.size() > 1)
    return ctx.fail(what + " must be a scalar or 1-D tensor");
  size_t width = widthOf(t.onnxType);
  out.clear();
  for (size_t i = 0; i < t.bytes.size(); i += width)
    out.push_back(loadInt(t.onnxType, t.bytes.data() + i));
  return success();
}

/// Integer list from attribute `name` before `inputSince`, from input
/// `index` from then on. Absent in both cases gives nullopt.
LogicalResult intsAttrOrInput(EvalContext &ctx, StringRef name,
                              int64_t inputSince, size_t index,
                              std::optional<Shape> &out) {
  out.reset();
  if (ctx.opset < inputSince) {
    out = ctx.intsAttr(name);
    return success();
  }
  const ConstTensor *t = ctx.input(index);
  if (!t)
    return success();
  out.emplace();
  return readInts(ctx, *t, name, *out);
}

/// Maps `axis` in [-rank, rank) to [0, rank).
LogicalResult normalizeAxis(EvalContext &ctx, int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range for rank " +
                    Twine(rank));
  if (axis < 0)
    axis += rank;
  return success();
}

/// Normalizes a list of distinct axes and returns a per-dimension mask.
LogicalResult axesMask(EvalContext &ctx, ArrayRef<int64_t> axes, int64_t rank,
                       std::vector<bool> &mask) {
  mask.assign(rank, false);
  for (int64_t axis : axes) {
    if (failed(normalizeAxis(ctx, axis, rank)))
      return failure();
    if (mask[axis])
      return ctx.fail("axis " + Twine(axis) + " is repeated");
    mask[axis] = true;
  }
  return success();
}

LogicalResult sameType(EvalContext &ctx, ArrayRef<const ConstTensor *> ts) {
  for (const ConstTensor *t : ts)
    if (t->onnxType != ts[0]->onnxType)
      return ctx.fail("inputs have different dtypes " +
                      typeName(ts[0]->onnxType) + " and " +
                      typeName(t->onnxType));
  return success();
}

/// Numeric ops compute uint64 as int64 bit patterns, which would give wrong
/// comparisons and quotients, so they refuse it (and bool) outright.
LogicalResult requireNumeric(EvalContext &ctx, int type) {
  if (type == TP::UINT64 || type == TP::BOOL)
    return ctx.fail("cannot evaluate on " + typeName(type) + " values");
  return success();
}

LogicalResult requireFloat(EvalContext &ctx, int type) {
  if (!isFloat(type))
    return ctx.fail("needs a floating-point input, got " + typeName(type));
  return success();
}

LogicalResult requireBool(EvalContext &ctx, const ConstTensor &t) {
  if (t.onnxType != TP::BOOL)
    return ctx.fail("needs bool inputs, got " + typeName(t.onnxType));
  return success();
}

LogicalResult broadcastShape(EvalContext &ctx, ArrayRef<const ConstTensor *> ts,
                             Shape &out) {
  out.clear();
  for (const ConstTensor *t : ts) {
    const Shape &s = t->shape;
    if (s.size() > out.size())
      out.insert(out.begin(), s.size() - out.size(), 1);
    size_t lead = out.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &o = out[lead + d];
      if (s[d] == o || s[d] == 1)
        continue;
      if (o != 1)
        return ctx.fail("shapes " + shapeStr(out) + " and " + shapeStr(s) +
                        " are not broadcastable");
      o = s[d];
    }
  }
  return success();
}

/// Broadcasts `ins` together and calls fn(inputPointers, outputPointer) for
/// each output element.
template <typename Fn>
LogicalResult broadcastMap(EvalContext &ctx, ArrayRef<const ConstTensor *> ins,
                           int outType, ConstTensor &out, Fn fn) {
  Shape shape;
  if (failed(broadcastShape(ctx, ins, shape)) ||
      failed(ctx.makeOutput(outType, shape, out)))
    return failure();
  std::vector<Shape> strides;
  for (const ConstTensor *t : ins)
    strides.push_back(broadcastStrides(t->shape, shape));
  size_t outWidth = widthOf(outType);
  llvm::SmallVector<const char *, 3> ptrs(ins.size());
  walk(shape, strides, Shape(ins.size(), 0),
       [&](int64_t linear, ArrayRef<int64_t> offsets) {
         for (size_t k = 0; k < ins.size(); ++k)
           ptrs[k] = ins[k]->bytes.data() +
                     offsets[k] * int64_t(widthOf(ins[k]->onnxType));
         fn(ArrayRef<const char *>(ptrs), out.bytes.data() + linear * outWidth);
       });
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic, comparison and logic
//===----------------------------------------------------------------------===//

/// Integer kernels return false on a domain error (division by zero).
using IntBinFn = bool (*)(int64_t, int64_t, int64_t &);
using FloatBinFn = double (*)(double, double);

// Integer arithmetic wraps through uint64 to avoid signed-overflow UB; the
// store then wraps to the dtype's width like the runtime kernels do.
bool addI(int64_t a, int64_t b, int64_t &r) {
  r = int64_t(uint64_t(a) + uint64_t(b));
  return true;
}
bool subI(int64_t a, int64_t b, int64_t &r) {
  r = int64_t(uint64_t(a) - uint64_t(b));
  return true;
}
bool mulI(int64_t a, int64_t b, int64_t &r) {
  r = int64_t(uint64_t(a) * uint64_t(b));
  return true;
}
/// ONNX integer Div truncates toward zero (C semantics; the ONNX reference
/// implementation adjusts numpy's floor division to match).
bool divI(int64_t a, int64_t b, int64_t &r) {
  if (b == 0)
    return false;
  r = (b == -1) ? int64_t(0 - uint64_t(a)) : a / b;
  return true;
}
/// Mod with fmod=0: the result takes the divisor's sign (Python %).
bool modI(int64_t a, int64_t b, int64_t &r) {
  if (b == 0)
    return false;
  r = (b == -1) ? 0 : a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return true;
}
/// Mod with fmod=1: the result takes the dividend's sign (C fmod).
bool fmodI(int64_t a, int64_t b, int64_t &r) {
  if (b == 0)
    return false;
  r = (b == -1) ? 0 : a % b;
  return true;
}
bool minI(int64_t a, int64_t b, int64_t &r) {
  r = std::min(a, b);
  return true;
}
bool maxI(int64_t a, int64_t b, int64_t &r) {
  r = std::max(a, b);
  return true;
}

double addF(double a, double b) { return a + b; }
double subF(double a, double b) { return a - b; }
double mulF(double a, double b) { return a * b; }
double divF(double a, double b) { return a / b; }
double fmodF(double a, double b) { return std::fmod(a, b); }
// Min/Max propagate NaN, like numpy.minimum/maximum.
double minF(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}
double maxF(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

LogicalResult binaryInto(EvalContext &ctx, const ConstTensor &a,
                         const ConstTensor &b, IntBinFn intFn,
                         FloatBinFn floatFn, ConstTensor &out) {
  const ConstTensor *ins[] = {&a, &b};
  if (failed(sameType(ctx, ins)) || failed(requireNumeric(ctx, a.onnxType)))
    return failure();
  int type = a.onnxType;
  if (isFloat(type))
    return broadcastMap(
        ctx, ins, type, out, [&](ArrayRef<const char *> p, char *o) {
          storeDouble(type, o,
                      floatFn(loadDouble(type, p[0]), loadDouble(type, p[1])));
        });
  bool ok = true;
  if (failed(broadcastMap(
          ctx, ins, type, out, [&](ArrayRef<const char *> p, char *o) {
            int64_t r = 0;
            ok &= intFn(loadInt(type, p[0]), loadInt(type, p[1]), r);
            storeInt(type, o, r);
          })))
    return failure();
  if (!ok)
    return ctx.fail("integer division by zero");
  return success();
}

LogicalResult evalBinary(EvalContext &ctx, IntBinFn intFn, FloatBinFn floatFn) {
  const ConstTensor *a = ctx.required(0);
  const ConstTensor *b = a ? ctx.required(1) : nullptr;
  ConstTensor out;
  if (!b || failed(binaryInto(ctx, *a, *b, intFn, floatFn, out)))
    return failure();
  return ctx.emit(std::move(out));
}

LogicalResult evalMod(EvalContext &ctx) {
  bool fmod = ctx.intAttr("fmod", 0) != 0;
  const ConstTensor *a = ctx.input(0);
  if (a && isFloat(a->onnxType) && !fmod)
    return ctx.fail("floating-point Mod requires fmod=1");
  return evalBinary(ctx, fmod ? fmodI : modI, fmodF);
}

/// Variadic Min/Max: fold pairwise, broadcasting as we go.
LogicalResult evalVariadic(EvalContext &ctx, IntBinFn intFn,
                           FloatBinFn floatFn) {
  if (ctx.inputs.empty() || !ctx.required(0))
    return ctx.fail("needs at least one input");
  ConstTensor acc = *ctx.inputs[0];
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    const ConstTensor *next = ctx.required(i);
    ConstTensor out;
    if (!next || failed(binaryInto(ctx, acc, *next, intFn, floatFn, out)))
      return failure();
    acc = std::move(out);
  }
  if (failed(requireNumeric(ctx, acc.onnxType)))
    return failure();
  return ctx.emit(std::move(acc));
}

using IntCmpFn = bool (*)(int64_t, int64_t);
using FloatCmpFn = bool (*)(double, double);

LogicalResult evalCompare(EvalContext &ctx, IntCmpFn intFn,
                          FloatCmpFn floatFn) {
  const ConstTensor *a = ctx.required(0);
  const ConstTensor *b = a ? ctx.required(1) : nullptr;
  if (!b)
    return failure();
  const ConstTensor *ins[] = {a, b};
  // uint64 compares wrongly as int64 bit patterns; bool is fine (Equal).
  if (failed(sameType(ctx, ins)) ||
      (a->onnxType == TP::UINT64 && failed(requireNumeric(ctx, TP::UINT64))))
    return failure();
  int type = a->onnxType;
  bool floating = isFloat(type);
  ConstTensor out;
  if (failed(broadcastMap(
          ctx, ins, TP::BOOL, out, [&](ArrayRef<const char *> p, char *o) {
            *o = floating
                     ? floatFn(loadDouble(type, p[0]), loadDouble(type, p[1]))
                     : intFn(loadInt(type, p[0]), loadInt(type, p[1]));
          })))
    return failure();
  return ctx.emit(std::move(out));
}

using BoolBinFn = bool (*)(bool, bool);

LogicalResult evalLogic(EvalContext &ctx, BoolBinFn fn) {
  const ConstTensor *a = ctx.required(0);
  const ConstTensor *b = a ? ctx.required(1) : nullptr;
  if (!b || failed(requireBool(ctx, *a)) || failed(requireBool(ctx, *b)))
    return failure();
  const ConstTensor *ins[] = {a, b};
  ConstTensor out;
  if (failed(broadcastMap(ctx, ins, TP::BOOL, out,
                          [&](ArrayRef<const char *> p, char *o) {
                            *o = fn(*p[0] != 0, *p[1] != 0);
                          })))
    return failure();
  return ctx.emit(std::move(out));
}

LogicalResult evalNot(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x || failed(requireBool(ctx, *x)))
    return failure();
  ConstTensor out = *x;
  for (char &c : out.bytes)
    c = c == 0;
  return ctx.emit(std::move(out));
}

using IntUnaryFn = int64_t (*)(int64_t);
using FloatUnaryFn = double (*)(double);

/// Applies a unary function in place on a copy; `intFn` null means the op
/// is defined for floating-point inputs only.
LogicalResult evalUnary(EvalContext &ctx, IntUnaryFn intFn,
                        FloatUnaryFn floatFn) {
  const ConstTensor *x = ctx.required(0);
  if (!x || failed(requireNumeric(ctx, x->onnxType)) ||
      (!intFn && failed(requireFloat(ctx, x->onnxType))))
    return failure();
  ConstTensor out = *x;
  int type = x->onnxType;
  size_t width = widthOf(type);
  for (size_t i = 0; i < out.bytes.size(); i += width) {
    char *p = out.bytes.data() + i;
    if (isFloat(type))
      storeDouble(type, p, floatFn(loadDouble(type, p)));
    else
      storeInt(type, p, intFn(loadInt(type, p)));
  }
  return ctx.emit(std::move(out));
}

int64_t negI(int64_t v) { return int64_t(0 - uint64_t(v)); }
int64_t absI(int64_t v) { return v < 0 ? negI(v) : v; }

LogicalResult evalWhere(EvalContext &ctx) {
  const ConstTensor *cond = ctx.required(0);
  const ConstTensor *x = cond ? ctx.required(1) : nullptr;
  const ConstTensor *y = x ? ctx.required(2) : nullptr;
  const ConstTensor *values[] = {x, y};
  if (!y || failed(requireBool(ctx, *cond)) || failed(sameType(ctx, values)))
    return failure();
  const ConstTensor *ins[] = {cond, x, y};
  size_t width = widthOf(x->onnxType);
  ConstTensor out;
  if (failed(broadcastMap(ctx, ins, x->onnxType, out,
                          [&](ArrayRef<const char *> p, char *o) {
                            memcpy(o, *p[0] ? p[1] : p[2], width);
                          })))
    return failure();
  return ctx.emit(std::move(out));
}

//===----------------------------------------------------------------------===//
// Casts and constants
//===----------------------------------------------------------------------===//

LogicalResult castTo(EvalContext &ctx, const ConstTensor &x, int to) {
  if (!lookupDType(to))
    return ctx.fail("cannot cast to " + typeName(to));
  ConstTensor out;
  if (failed(ctx.makeOutput(to, x.shape, out)))
    return failure();
  int from = x.onnxType;
  size_t inWidth = widthOf(from), outWidth = widthOf(to);
  // Go through double when the source is floating (or uint64 into a float,
  // whose bit pattern would read as negative); otherwise stay exact in int64.
  bool viaDouble = isFloat(from) || (from == TP::UINT64 && isFloat(to));
  for (int64_t i = 0, n = numElements(x.shape); i < n; ++i) {
    const char *src = x.bytes.data() + i * inWidth;
    char *dst = out.bytes.data() + i * outWidth;
    if (viaDouble)
      storeDouble(to, dst, loadDouble(from, src));
    else
      storeInt(to, dst, loadInt(from, src));
  }
  return ctx.emit(std::move(out));
}

LogicalResult evalCast(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  if (!ctx.attr("to"))
    return ctx.fail("attribute 'to' is required");
  return castTo(ctx, *x, int(ctx.intAttr("to", 0)));
}

LogicalResult evalCastLike(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  const ConstTensor *like = x ? ctx.required(1) : nullptr;
  if (!like)
    return failure();
  return castTo(ctx, *x, like->onnxType);
}

/// Reads the one-element `value` tensor of ConstantOfShape into `out`.
LogicalResult readScalarValue(EvalContext &ctx, const onnx::TensorProto &t,
                              ConstTensor &out) {
  int type = t.data_type();
  if (!lookupDType(type))
    return ctx.fail("value has unsupported dtype " + typeName(type));
  for (int64_t d : t.dims())
    if (d != 1)
      return ctx.fail("value must hold exactly one element");
  if (t.data_location() == TP::EXTERNAL)
    return ctx.fail("value must not use external data");
  size_t width = widthOf(type);
  out.onnxType = type;
  out.bytes.assign(width, 0);
  char *p = out.bytes.data();
  if (t.has_raw_data()) {
    if (t.raw_data().size() != width)
      return ctx.fail("value has " + Twine(t.raw_data().size()) +
                      " bytes of raw data, expected " + Twine(width));
    memcpy(p, t.raw_data().data(), width);
    return success();
  }
  auto missing = [&] { return ctx.fail("value holds no data"); };
  switch (type) {
  case TP::FLOAT:
    if (t.float_data_size() != 1)
      return missing();
    writeRaw<float>(p, t.float_data(0));
    return success();
  case TP::DOUBLE:
    if (t.double_data_size() != 1)
      return missing();
    writeRaw<double>(p, t.double_data(0));
    return success();
  case TP::INT64:
    if (t.int64_data_size() != 1)
      return missing();
    writeRaw<int64_t>(p, t.int64_data(0));
    return success();
  case TP::UINT32:
  case TP::UINT64:
    if (t.uint64_data_size() != 1)
      return missing();
    storeInt(type, p, int64_t(t.uint64_data(0)));
    return success();
  default:
    // int8..int32, uint8, uint16, bool and the 16-bit float bit patterns all
    // live in int32_data.
    if (t.int32_data_size() != 1)
      return missing();
    storeInt(isFloat(type) ? TP::UINT16 : type, p, t.int32_data(0));
    return success();
  }
}

LogicalResult evalConstantOfShape(EvalContext &ctx) {
  const ConstTensor *shapeT = ctx.required(0);
  Shape shape;
  if (!shapeT || failed(readInts(ctx, *shapeT, "shape", shape)))
    return failure();
  ConstTensor value;
  value.onnxType = TP::FLOAT;
  value.bytes.assign(4, 0); // default: float32 zero
  if (const auto *a = ctx.attr("value"))
    if (failed(readScalarValue(ctx, a->t(), value)))
      return failure();
  ConstTensor out;
  if (failed(ctx.makeOutput(value.onnxType, shape, out)))
    return failure();
  for (size_t i = 0; i < out.bytes.size(); i += value.bytes.size())
    memcpy(out.bytes.data() + i, value.bytes.data(), value.bytes.size());
  return ctx.emit(std::move(out));
}

LogicalResult readScalarInput(EvalContext &ctx, size_t i,
                              const ConstTensor *&t) {
  t = ctx.required(i);
  if (!t)
    return failure();
  if (numElements(t->shape) != 1)
    return ctx.fail("input " + Twine(i) + " must be a scalar");
  return success();
}

LogicalResult evalRange(EvalContext &ctx) {
  const ConstTensor *start, *limit, *delta;
  if (failed(readScalarInput(ctx, 0, start)) ||
      failed(readScalarInput(ctx, 1, limit)) ||
      failed(readScalarInput(ctx, 2, delta)))
    return failure();
  const ConstTensor *ins[] = {start, limit, delta};
  int type = start->onnxType;
  if (failed(sameType(ctx, ins)) || failed(requireNumeric(ctx, type)))
    return failure();
  ConstTensor out;
  size_t width = widthOf(type);
  if (isFloat(type)) {
    double s = loadDouble(type, start->bytes.data());
    double l = loadDouble(type, limit->bytes.data());
    double d = loadDouble(type, delta->bytes.data());
    double n = std::ceil((l - s) / d);
    if (d == 0 || !std::isfinite(n))
      return ctx.fail("delta must be nonzero and the range finite");
    n = std::max(n, 0.0);
    int64_t count = n > 9e18 ? std::numeric_limits<int64_t>::max() : int64_t(n);
    if (failed(ctx.makeOutput(type, {count}, out)))
      return failure();
    for (int64_t i = 0; i < count; ++i)
      storeDouble(type, out.bytes.data() + i * width, s + double(i) * d);
    return ctx.emit(std::move(out));
  }
  // 128-bit math so extreme int64 bounds cannot overflow the count.
  __int128 s = loadInt(type, start->bytes.data());
  __int128 l = loadInt(type, limit->bytes.data());
  __int128 d = loadInt(type, delta->bytes.data());
  if (d == 0)
    return ctx.fail("delta must be nonzero");
  __int128 n = d > 0 ? (l - s + d - 1) / d : (s - l - d - 1) / -d;
  n = std::max<__int128>(n, 0);
  int64_t count = n > std::numeric_limits<int64_t>::max()
                      ? std::numeric_limits<int64_t>::max()
                      : int64_t(n);
  if (failed(ctx.makeOutput(type, {count}, out)))
    return failure();
  for (int64_t i = 0; i < count; ++i)
    storeInt(type, out.bytes.data() + i * width, int64_t(s + i * d));
  return ctx.emit(std::move(out));
}

//===----------------------------------------------------------------------===//
// Shape queries and views
//===----------------------------------------------------------------------===//

LogicalResult evalShape(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  // start/end exist from opset 15; before that Shape returns every dim.
  int64_t start = ctx.opset >= 15 ? ctx.intAttr("start", 0) : 0;
  std::optional<int64_t> end;
  if (ctx.opset >= 15 && ctx.attr("end"))
    end = ctx.intAttr("end", 0);
  return ctx.emit(shapeOf(x->shape, start, end));
}

LogicalResult evalSize(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  return ctx.emit(int64Tensor({}, {numElements(x->shape)}));
}

LogicalResult evalIdentity(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  return ctx.emit(*x);
}

/// Emits `x`'s bytes under a new shape (the element counts already match).
LogicalResult emitReshaped(EvalContext &ctx, const ConstTensor &x,
                           Shape shape) {
  ConstTensor out = x;
  out.shape = std::move(shape);
  return ctx.emit(std::move(out));
}

LogicalResult evalReshape(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  std::optional<Shape> requested;
  if (failed(intsAttrOrInput(ctx, "shape", 5, 1, requested)))
    return failure();
  if (!requested)
    return ctx.fail("the target shape is required");
  // allowzero (opset 14) makes 0 a real zero-size dim instead of "copy".
  bool allowZero = ctx.opset >= 14 && ctx.intAttr("allowzero", 0) != 0;
  Shape shape = *requested;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= x->shape.size())
        return ctx.fail("0 at position " + Twine(i) +
                        " has no input dimension to copy");
      shape[i] = x->shape[i];
    } else if (shape[i] == -1) {
      if (inferred >= 0)
        return ctx.fail("more than one -1 in shape " + shapeStr(*requested));
      inferred = int64_t(i);
      continue;
    } else if (shape[i] < 0) {
      return ctx.fail("invalid dimension in shape " + shapeStr(*requested));
    }
    if (shape[i] != 0 && known > kMaxConstantElements / shape[i])
      known = kMaxConstantElements + 1;
    else
      known *= shape[i];
  }
  int64_t count = numElements(x->shape);
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return ctx.fail("cannot infer -1 reshaping " + shapeStr(x->shape) +
                      " to " + shapeStr(*requested));
    shape[inferred] = count / known;
    known = count;
  }
  if (known != count)
    return ctx.fail("cannot reshape " + shapeStr(x->shape) + " to " +
                    shapeStr(shape));
  return emitReshaped(ctx, *x, std::move(shape));
}

LogicalResult evalFlatten(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  int64_t rank = x->shape.size();
  int64_t axis = ctx.intAttr("axis", 1);
  // Negative axes arrived in opset 11; axis == rank is allowed.
  int64_t lowest = ctx.opset >= 11 ? -rank : 0;
  if (axis < lowest || axis > rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range for rank " +
                    Twine(rank));
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> dims(x->shape);
  return emitReshaped(
      ctx, *x,
      {numElements(dims.take_front(axis)), numElements(dims.drop_front(axis))});
}

LogicalResult evalUnsqueeze(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  std::optional<Shape> axes;
  if (failed(intsAttrOrInput(ctx, "axes", 13, 1, axes)))
    return failure();
  if (!axes)
    return ctx.fail("axes are required");
  int64_t outRank = int64_t(x->shape.size() + axes->size());
  std::vector<bool> mask;
  if (failed(axesMask(ctx, *axes, outRank, mask)))
    return failure();
  Shape shape;
  auto next = x->shape.begin();
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(mask[d] ? 1 : *next++);
  return emitReshaped(ctx, *x, std::move(shape));
}

LogicalResult evalSqueeze(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  std::optional<Shape> axes;
  if (failed(intsAttrOrInput(ctx, "axes", 13, 1, axes)))
    return failure();
  int64_t rank = x->shape.size();
  std::vector<bool> mask(rank, false);
  if (!axes) {
    // No axes: drop every size-1 dimension.
    for (int64_t d = 0; d < rank; ++d)
      mask[d] = x->shape[d] == 1;
  } else if (failed(axesMask(ctx, *axes, rank, mask))) {
    return failure();
  }
  Shape shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!mask[d]) {
      shape.push_back(x->shape[d]);
      continue;
    }
    if (x->shape[d] != 1)
      return ctx.fail("cannot squeeze axis " + Twine(d) + " of size " +
                      Twine(x->shape[d]));
  }
  return emitReshaped(ctx, *x, std::move(shape));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Copies `x` viewed through (shape, strides, base offset) into a new tensor.
LogicalResult copyStrided(EvalContext &ctx, const ConstTensor &x, Shape shape,
                          Shape strides, int64_t base, ConstTensor &out) {
  if (failed(ctx.makeOutput(x.onnxType, shape, out)))
    return failure();
  size_t width = widthOf(x.onnxType);
  walk(out.shape, {strides}, {base},
       [&](int64_t linear, ArrayRef<int64_t> offsets) {
         memcpy(out.bytes.data() + linear * width,
                x.bytes.data() + offsets[0] * int64_t(width), width);
       });
  return success();
}

LogicalResult evalTranspose(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  int64_t rank = x->shape.size();
  Shape perm(rank);
  for (int64_t d = 0; d < rank; ++d)
    perm[d] = rank - 1 - d; // default: reverse the dimensions
  if (auto given = ctx.intsAttr("perm"))
    perm = *given;
  std::vector<bool> seen;
  if (int64_t(perm.size()) != rank || failed(axesMask(ctx, perm, rank, seen)))
    return ctx.fail("perm " + shapeStr(perm) + " is not a permutation of " +
                    Twine(rank) + " dimensions");
  Shape own = contiguousStrides(x->shape), shape, strides;
  for (int64_t p : perm) {
    p = p < 0 ? p + rank : p;
    shape.push_back(x->shape[p]);
    strides.push_back(own[p]);
  }
  ConstTensor out;
  if (failed(copyStrided(ctx, *x, shape, strides, 0, out)))
    return failure();
  return ctx.emit(std::move(out));
}

LogicalResult evalExpand(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  const ConstTensor *shapeT = x ? ctx.required(1) : nullptr;
  Shape target;
  if (!shapeT || failed(readInts(ctx, *shapeT, "shape", target)))
    return failure();
  for (int64_t d : target)
    if (d < 0)
      return ctx.fail("invalid dimension in shape " + shapeStr(target));
  // Expand broadcasts both ways: target dims of 1 keep the input's dim.
  ConstTensor targetView;
  targetView.shape = target;
  const ConstTensor *both[] = {x, &targetView};
  Shape shape;
  ConstTensor out;
  if (failed(broadcastShape(ctx, both, shape)) ||
      failed(copyStrided(ctx, *x, shape, broadcastStrides(x->shape, shape), 0,
                         out)))
    return failure();
  return ctx.emit(std::move(out));
}

LogicalResult evalTile(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  const ConstTensor *repeatsT = x ? ctx.required(1) : nullptr;
  Shape repeats;
  if (!repeatsT || failed(readInts(ctx, *repeatsT, "repeats", repeats)))
    return failure();
  if (ctx.opset < 6)
    return ctx.fail("Tile before opset 6 (tiles/axis inputs) is not handled");
  if (repeats.size() != x->shape.size())
    return ctx.fail("repeats has " + Twine(repeats.size()) +
                    " values for rank " + Twine(x->shape.size()));
  // View the output as [r0, d0, r1, d1, ...] where each r dim has stride 0:
  // walking that view in C order visits the output in its own C order.
  Shape own = contiguousStrides(x->shape), view, strides, outShape;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0)
      return ctx.fail("repeats must be non-negative");
    view.insert(view.end(), {repeats[d], x->shape[d]});
    strides.insert(strides.end(), {0, own[d]});
  }
  for (size_t d = 0; d < repeats.size(); ++d) {
    int64_t dim = 0;
    // An empty result may still name huge dimensions; do not overflow.
    if (__builtin_mul_overflow(repeats[d], x->shape[d], &dim))
      return ctx.fail("tiled dimension " + Twine(d) + " overflows int64");
    outShape.push_back(dim);
  }
  ConstTensor out;
  if (failed(copyStrided(ctx, *x, view, strides, 0, out)))
    return failure();
  out.shape = std::move(outShape);
  return ctx.emit(std::move(out));
}

/// Normalized Slice parameters for one axis.
struct SliceAxis {
  int64_t start = 0, count = 0, step = 1;
};

/// ONNX Slice clamping: negative bounds count from the back, then positive
/// steps clamp to [0, dim] and negative steps to [0, dim-1] / [-1, dim-1].
SliceAxis clampSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  SliceAxis s;
  s.step = step;
  if (dim == 0)
    return s; // nothing to select (and the clamp ranges below would be empty)
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    s.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    s.count = start > end ? (start - end - step - 1) / -step : 0;
  }
  s.start = start;
  return s;
}

LogicalResult sliceParams(EvalContext &ctx, Shape &starts, Shape &ends,
                          std::optional<Shape> &axes, Shape &steps) {
  if (ctx.opset < 10) {
    // Before opset 10 the bounds were attributes and there were no steps.
    auto s = ctx.intsAttr("starts"), e = ctx.intsAttr("ends");
    if (!s || !e)
      return ctx.fail("attributes 'starts' and 'ends' are required");
    starts = *s;
    ends = *e;
    axes = ctx.intsAttr("axes");
    steps.assign(starts.size(), 1);
    return success();
  }
  const ConstTensor *s = ctx.required(1);
  const ConstTensor *e = s ? ctx.required(2) : nullptr;
  if (!e || failed(readInts(ctx, *s, "starts", starts)) ||
      failed(readInts(ctx, *e, "ends", ends)) ||
      failed(intsAttrOrInput(ctx, "axes", 10, 3, axes)))
    return failure();
  steps.assign(starts.size(), 1);
  if (const ConstTensor *st = ctx.input(4))
    return readInts(ctx, *st, "steps", steps);
  return success();
}

LogicalResult evalSlice(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  Shape starts, ends, steps;
  std::optional<Shape> axes;
  if (!x || failed(sliceParams(ctx, starts, ends, axes, steps)))
    return failure();
  int64_t rank = x->shape.size();
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts.size(); ++i)
      axes->push_back(int64_t(i));
  }
  if (ends.size() != starts.size() || axes->size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.fail("starts, ends, axes and steps differ in length");
  std::vector<bool> seen;
  if (failed(axesMask(ctx, *axes, rank, seen)))
    return failure();
  Shape own = contiguousStrides(x->shape), shape = x->shape, strides = own;
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (steps[i] == 0)
      return ctx.fail("step for axis " + Twine(axis) + " is zero");
    SliceAxis s = clampSlice(starts[i], ends[i], steps[i], x->shape[axis]);
    shape[axis] = s.count;
    strides[axis] = own[axis] * s.step;
    if (s.count > 0)
      base += s.start * own[axis];
  }
  ConstTensor out;
  if (failed(copyStrided(ctx, *x, shape, strides, base, out)))
    return failure();
  return ctx.emit(std::move(out));
}

LogicalResult evalGather(EvalContext &ctx) {
  const ConstTensor *data = ctx.required(0);
  const ConstTensor *indicesT = data ? ctx.required(1) : nullptr;
  if (!indicesT)
    return failure();
  if (indicesT->onnxType != TP::INT64 && indicesT->onnxType != TP::INT32)
    return ctx.fail("indices must be int32 or int64");
  int64_t rank = data->shape.size();
  int64_t axis = ctx.intAttr("axis", 0);
  if (rank == 0)
    return ctx.fail("data must have rank >= 1");
  if (failed(normalizeAxis(ctx, axis, rank)))
    return failure();
  int64_t dim = data->shape[axis];
  ArrayRef<int64_t> dims(data->shape);
  Shape shape(dims.begin(), dims.begin() + axis);
  shape.insert(shape.end(), indicesT->shape.begin(), indicesT->shape.end());
  shape.insert(shape.end(), dims.begin() + axis + 1, dims.end());
  ConstTensor out;
  if (failed(ctx.makeOutput(data->onnxType, shape, out)))
    return failure();
  int64_t outer = numElements(dims.take_front(axis));
  size_t chunk =
      size_t(numElements(dims.drop_front(axis + 1))) * widthOf(data->onnxType);
  int64_t count = numElements(indicesT->shape);
  size_t iw = widthOf(indicesT->onnxType);
  char *dst = out.bytes.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < count; ++k, dst += chunk) {
      int64_t idx =
          loadInt(indicesT->onnxType, indicesT->bytes.data() + k * iw);
      if (idx < -dim || idx >= dim)
        return ctx.fail("index " + Twine(idx) + " is out of range for axis " +
                        Twine(axis) + " of size " + Twine(dim));
      if (idx < 0)
        idx += dim;
      copyBytes(dst, data->bytes.data() + (o * dim + idx) * chunk, chunk);
    }
  }
  return ctx.emit(std::move(out));
}

LogicalResult evalConcat(EvalContext &ctx) {
  if (ctx.inputs.empty())
    return ctx.fail("needs at least one input");
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (!ctx.required(i))
      return failure();
  const ConstTensor &first = *ctx.inputs[0];
  if (!ctx.attr("axis"))
    return ctx.fail("attribute 'axis' is required");
  int64_t rank = first.shape.size(), axis = ctx.intAttr("axis", 0);
  if (failed(sameType(ctx, ctx.inputs)) ||
      failed(normalizeAxis(ctx, axis, rank)))
    return failure();
  Shape shape = first.shape;
  shape[axis] = 0;
  for (const ConstTensor *t : ctx.inputs) {
    for (int64_t d = 0; d < rank; ++d)
      if (int64_t(t->shape.size()) != rank ||
          (d != axis && t->shape[d] != first.shape[d]))
        return ctx.fail("cannot concatenate " + shapeStr(first.shape) +
                        " and " + shapeStr(t->shape) + " on axis " +
                        Twine(axis));
    shape[axis] += t->shape[axis];
  }
  ConstTensor out;
  if (failed(ctx.makeOutput(first.onnxType, shape, out)))
    return failure();
  int64_t outer = numElements(ArrayRef<int64_t>(shape).take_front(axis));
  char *dst = out.bytes.data();
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstTensor *t : ctx.inputs) {
      size_t chunk = t->bytes.size() / size_t(std::max<int64_t>(outer, 1));
      copyBytes(dst, t->bytes.data() + o * chunk, chunk);
      dst += chunk;
    }
  return ctx.emit(std::move(out));
}

/// Split sizes by opset: the `split` attribute (< 13) or input (>= 13),
/// else `num_outputs` (>= 18, last chunk smaller), else equal parts.
LogicalResult splitSizes(EvalContext &ctx, int64_t dim, Shape &sizes) {
  std::optional<Shape> given;
  if (failed(intsAttrOrInput(ctx, "split", 13, 1, given)))
    return failure();
  if (given) {
    sizes = *given;
    return success();
  }
  int64_t parts = ctx.node.output_size();
  bool hasNumOutputs = ctx.opset >= 18 && ctx.attr("num_outputs");
  if (hasNumOutputs)
    parts = ctx.intAttr("num_outputs", 0);
  if (parts <= 0)
    return ctx.fail("cannot tell how many parts to split into");
  if (!hasNumOutputs && dim % parts != 0)
    return ctx.fail("axis of size " + Twine(dim) +
                    " does not split evenly into " + Twine(parts) + " parts");
  // ONNX-18: every chunk is ceil(dim / n); the last takes what is left.
  int64_t chunk = (dim + parts - 1) / parts, left = dim;
  sizes.clear();
  for (int64_t i = 0; i < parts; ++i) {
    sizes.push_back(std::min(chunk, left));
    left -= sizes.back();
  }
  return success();
}

LogicalResult evalSplit(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  int64_t rank = x->shape.size(), axis = ctx.intAttr("axis", 0);
  if (failed(normalizeAxis(ctx, axis, rank)))
    return failure();
  int64_t dim = x->shape[axis];
  Shape sizes;
  if (failed(splitSizes(ctx, dim, sizes)))
    return failure();
  int64_t total = 0;
  for (int64_t s : sizes) {
    // Comparing against what is left keeps the total from overflowing.
    if (s < 0 || s > dim - total)
      return ctx.fail("split sizes " + shapeStr(sizes) +
                      " are negative or exceed the axis size " + Twine(dim));
    total += s;
  }
  if (total != dim)
    return ctx.fail("split sizes " + shapeStr(sizes) + " do not add up to " +
                    Twine(dim));
  if (ctx.node.output_size() > 0 &&
      int64_t(sizes.size()) != ctx.node.output_size())
    return ctx.fail(Twine(sizes.size()) + " split sizes for " +
                    Twine(ctx.node.output_size()) + " outputs");
  ArrayRef<int64_t> dims(x->shape);
  int64_t outer = numElements(dims.take_front(axis));
  size_t inner =
      size_t(numElements(dims.drop_front(axis + 1))) * widthOf(x->onnxType);
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Shape shape = x->shape;
    shape[axis] = size;
    ConstTensor out;
    if (failed(ctx.makeOutput(x->onnxType, shape, out)))
      return failure();
    for (int64_t o = 0; o < outer; ++o)
      copyBytes(out.bytes.data() + o * size * inner,
                x->bytes.data() + (o * dim + offset) * inner, size * inner);
    offset += size;
    (void)ctx.emit(std::move(out));
  }
  return success();
}

LogicalResult evalNonZero(EvalContext &ctx) {
  const ConstTensor *x = ctx.required(0);
  if (!x)
    return failure();
  // A scalar reads as a 1-element vector (what onnxruntime does).
  Shape shape = x->shape.empty() ? Shape{1} : x->shape;
  int64_t rank = shape.size(), count = numElements(shape), found = 0;
  size_t width = widthOf(x->onnxType);
  auto nonZero = [&](int64_t i) {
    return isNonZero(x->onnxType, x->bytes.data() + i * width);
  };
  // Count first so the size check happens before anything is allocated.
  for (int64_t i = 0; i < count; ++i)
    found += nonZero(i);
  ConstTensor out;
  if (failed(ctx.makeOutput(TP::INT64, {rank, found}, out)))
    return failure();
  Shape strides = contiguousStrides(shape);
  char *dst = out.bytes.data();
  for (int64_t i = 0, hit = 0; i < count; ++i) {
    if (!nonZero(i))
      continue;
    // Row d of the output holds the d-th coordinate of every hit.
    for (int64_t d = 0; d < rank; ++d)
      writeRaw<int64_t>(dst + (d * found + hit) * 8,
                        (i / strides[d]) % shape[d]);
    ++hit;
  }
  return ctx.emit(std::move(out));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduction { Sum, Prod, Min, Max };

template <typename T> T reduceInit(Reduction r) {
  switch (r) {
  case Reduction::Sum:
    return T(0);
  case Reduction::Prod:
    return T(1);
  case Reduction::Min:
    return std::numeric_limits<T>::has_infinity
               ? std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::max();
  case Reduction::Max:
    return std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  }
  return T(0);
}

int64_t reduceStep(Reduction r, int64_t acc, int64_t v) {
  int64_t out = 0;
  switch (r) {
  case Reduction::Sum:
    addI(acc, v, out);
    return out;
  case Reduction::Prod:
    mulI(acc, v, out);
    return out;
  case Reduction::Min:
    return std::min(acc, v);
  case Reduction::Max:
    return std::max(acc, v);
  }
  return out;
}

double reduceStep(Reduction r, double acc, double v) {
  switch (r) {
  case Reduction::Sum:
    return acc + v;
  case Reduction::Prod:
    return acc * v;
  case Reduction::Min:
    return minF(acc, v);
  case Reduction::Max:
    return maxF(acc, v);
  }
  return acc;
}

/// Accumulates every input element into its output slot, then stores.
template <typename T, typename Load, typename Store>
void reduceInto(const ConstTensor &x, Reduction r, ArrayRef<int64_t> outStrides,
                ConstTensor &out, Load load, Store store) {
  size_t inWidth = widthOf(x.onnxType), outWidth = widthOf(out.onnxType);
  std::vector<T> acc(numElements(out.shape), reduceInit<T>(r));
  walk(x.shape, {Shape(outStrides.begin(), outStrides.end())}, {0},
       [&](int64_t linear, ArrayRef<int64_t> offsets) {
         T v = load(x.onnxType, x.bytes.data() + linear * inWidth);
         acc[offsets[0]] = reduceStep(r, acc[offsets[0]], v);
       });
  for (size_t i = 0; i < acc.size(); ++i)
    store(out.onnxType, out.bytes.data() + i * outWidth, acc[i]);
}

LogicalResult evalReduce(EvalContext &ctx, Reduction r) {
  const ConstTensor *x = ctx.required(0);
  if (!x || failed(requireNumeric(ctx, x->onnxType)))
    return failure();
  // Axes moved from attribute to input in opset 13 for ReduceSum and in
  // opset 18 for the other reductions.
  int64_t inputSince = ctx.node.op_type() == "ReduceSum" ? 13 : 18;
  std::optional<Shape> axes;
  if (failed(intsAttrOrInput(ctx, "axes", inputSince, 1, axes)))
    return failure();
  bool noopWhenEmpty =
      ctx.opset >= inputSince && ctx.intAttr("noop_with_empty_axes", 0) != 0;
  if ((!axes || axes->empty()) && noopWhenEmpty)
    return ctx.emit(*x);
  int64_t rank = x->shape.size();
  std::vector<bool> mask(rank, true);
  if (axes && !axes->empty() && failed(axesMask(ctx, *axes, rank, mask)))
    return failure();
  Shape kept, outShape;
  for (int64_t d = 0; d < rank; ++d) {
    kept.push_back(mask[d] ? 1 : x->shape[d]);
    if (!mask[d] || ctx.intAttr("keepdims", 1) != 0)
      outShape.push_back(kept.back());
    if (mask[d] && x->shape[d] == 0 &&
        (r == Reduction::Min || r == Reduction::Max))
      return ctx.fail("cannot take the min/max of an empty axis");
  }
  Shape outStrides = contiguousStrides(kept);
  for (int64_t d = 0; d < rank; ++d)
    if (mask[d])
      outStrides[d] = 0;
  ConstTensor out;
  if (failed(ctx.makeOutput(x->onnxType, outShape, out)))
    return failure();
  if (isFloat(x->onnxType))
    reduceInto<double>(*x, r, outStrides, out, loadDouble, storeDouble);
  else
    reduceInto<int64_t>(*x, r, outStrides, out, loadInt, storeInt);
  return ctx.emit(std::move(out));
}

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

struct OpEvaluator {
  const char *opType;
  LogicalResult (*eval)(EvalContext &);
};

// Captureless lambdas bind shared implementations to their kernels.
const OpEvaluator kEvaluators[] = {
    {"Abs", [](EvalContext &c) { return evalUnary(c, absI, fabs); }},
    {"Add", [](EvalContext &c) { return evalBinary(c, addI, addF); }},
    {"And",
     [](EvalContext &c) {
       return evalLogic(c, [](bool a, bool b) { return a && b; });
     }},
    {"Cast", evalCast},
    {"CastLike", evalCastLike},
    {"Ceil", [](EvalContext &c) { return evalUnary(c, nullptr, ceil); }},
    {"Concat", evalConcat},
    {"ConstantOfShape", evalConstantOfShape},
    {"Div", [](EvalContext &c) { return evalBinary(c, divI, divF); }},
    {"Equal",
     [](EvalContext &c) {
       return evalCompare(
           c, [](int64_t a, int64_t b) { return a == b; },
           [](double a, double b) { return a == b; });
     }},
    {"Expand", evalExpand},
    {"Flatten", evalFlatten},
    {"Floor", [](EvalContext &c) { return evalUnary(c, nullptr, floor); }},
    {"Gather", evalGather},
    {"Greater",
     [](EvalContext &c) {
       return evalCompare(
           c, [](int64_t a, int64_t b) { return a > b; },
           [](double a, double b) { return a > b; });
     }},
    {"GreaterOrEqual",
     [](EvalContext &c) {
       return evalCompare(
           c, [](int64_t a, int64_t b) { return a >= b; },
           [](double a, double b) { return a >= b; });
     }},
    {"Identity", evalIdentity},
    {"Less",
     [](EvalContext &c) {
       return evalCompare(
           c, [](int64_t a, int64_t b) { return a < b; },
           [](double a, double b) { return a < b; });
     }},
    {"LessOrEqual",
     [](EvalContext &c) {
       return evalCompare(
           c, [](int64_t a, int64_t b) { return a <= b; },
           [](double a, double b) { return a <= b; });
     }},
    {"Max", [](EvalContext &c) { return evalVariadic(c, maxI, maxF); }},
    {"Min", [](EvalContext &c) { return evalVariadic(c, minI, minF); }},
    {"Mod", evalMod},
    {"Mul", [](EvalContext &c) { return evalBinary(c, mulI, mulF); }},
    {"Neg",
     [](EvalContext &c) {
       return evalUnary(c, negI, [](double v) { return -v; });
     }},
    {"NonZero", evalNonZero},
    {"Not", evalNot},
    {"Or",
     [](EvalContext &c) {
       return evalLogic(c, [](bool a, bool b) { return a || b; });
     }},
    {"Range", evalRange},
    {"ReduceMax", [](EvalContext &c) { return evalReduce(c, Reduction::Max); }},
    {"ReduceMin", [](EvalContext &c) { return evalReduce(c, Reduction::Min); }},
    {"ReduceProd",
     [](EvalContext &c) { return evalReduce(c, Reduction::Prod); }},
    {"ReduceSum", [](EvalContext &c) { return evalReduce(c, Reduction::Sum); }},
    {"Reshape", evalReshape},
    {"Shape", evalShape},
    {"Size", evalSize},
    {"Slice", evalSlice},
    {"Split", evalSplit},
    {"Sqrt", [](EvalContext &c) { return evalUnary(c, nullptr, sqrt); }},
    {"Squeeze", evalSqueeze},
    {"Sub", [](EvalContext &c) { return evalBinary(c, subI, subF); }},
    {"Tile", evalTile},
    {"Transpose", evalTranspose},
    {"Unsqueeze", evalUnsqueeze},
    {"Where", evalWhere},
    {"Xor",
     [](EvalContext &c) {
       return evalLogic(c, [](bool a, bool b) { return a != b; });
     }},
};

const OpEvaluator *findEvaluator(StringRef opType) {
  for (const OpEvaluator &e : kEvaluators)
    if (opType == e.opType)
      return &e;
  return nullptr;
}

/// Inputs come from the model: check dtype and byte count before any op
/// indexes into them.
LogicalResult validateInputs(EvalContext &ctx) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const ConstTensor *t = ctx.inputs[i];
    if (!t)
      continue;
    if (!lookupDType(t->onnxType))
      return ctx.fail("input " + Twine(i) + " has unsupported dtype " +
                      typeName(t->onnxType));
    double count = 1;
    for (int64_t d : t->shape) {
      if (d < 0)
        return ctx.fail("input " + Twine(i) + " has a negative dimension");
      count *= double(d);
    }
    if (count > double(int64_t(1) << 40) ||
        t->bytes.size() != size_t(count) * widthOf(t->onnxType))
      return ctx.fail("input " + Twine(i) + " of shape " + shapeStr(t->shape) +
                      " has " + Twine(t->bytes.size()) + " bytes of data");
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

bool canEvaluateConstant(StringRef opType) {
  return findEvaluator(opType) != nullptr;
}

std::vector<std::string> constantEvaluableOps() {
  std::vector<std::string> ops;
  for (const OpEvaluator &e : kEvaluators)
    ops.push_back(e.opType);
  return ops;
}

ConstTensor shapeOf(ArrayRef<int64_t> shape, int64_t start,
                    std::optional<int64_t> end) {
  int64_t rank = shape.size();
  auto clampDim = [rank](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t first = clampDim(start), last = end ? clampDim(*end) : rank;
  if (last < first)
    last = first;
  return int64Tensor({last - first}, shape.slice(first, last - first));
}

LogicalResult evaluateConstantNode(const onnx::NodeProto &node, int64_t opset,
                                   ArrayRef<const ConstTensor *> inputs,
                                   std::vector<ConstTensor> &outputs,
                                   std::string &error) {
  outputs.clear();
  EvalContext ctx{node, opset, inputs, outputs, error};
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return ctx.fail("domain '" + node.domain() + "' has no constant evaluator");
  const OpEvaluator *evaluator = findEvaluator(node.op_type());
  if (!evaluator)
    return ctx.fail("op has no constant evaluator");
  if (failed(validateInputs(ctx)) || failed(evaluator->eval(ctx))) {
    outputs.clear();
    return failure();
  }
  // Outputs the node names but we did not compute (optional extras) would
  // leave the importer with dangling values; refuse instead.
  if (int64_t(outputs.size()) < node.output_size()) {
    size_t computed = outputs.size();
    outputs.clear();
    return ctx.fail("computes " + Twine(computed) + " outputs, the node has " +
                    Twine(node.output_size()));
  }
  return success();
}

} // namespace kiln::onnx_import
