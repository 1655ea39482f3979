//===- ConstantEvaluator.cpp - import-time ONNX constant folding ----------===//
//
// Evaluates the ONNX ops whose results' shapes are their values (Shape,
// Size, NonZero) when their inputs are known at import time. Elements load as
// int64 (integer and bool dtypes) or double (floating dtypes) and store back in
// the output dtype. Every output goes through makeOutput, which refuses results
// over kMaxConstantElements, and every value read from the model is
// range-checked before use: the model is untrusted input.
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
// The op table
//===----------------------------------------------------------------------===//

struct OpEvaluator {
  const char *opType;
  LogicalResult (*eval)(EvalContext &);
};

// Captureless lambdas bind shared implementations to their kernels.
const OpEvaluator kEvaluators[] = {
    {"NonZero", evalNonZero},
    {"Shape", evalShape},
    {"Size", evalSize},
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
