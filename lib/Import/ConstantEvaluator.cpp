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

template <typename T> void writeRaw(char *p, T v) { memcpy(p, &v, sizeof(T)); }

/// Whether an element is nonzero: a float whose bits other than the sign
/// are set (-0.0 is zero, NaN is not), an integer or bool with any bit set.
bool isNonZero(int type, const char *p) {
  size_t width = widthOf(type);
  for (size_t i = 0; i < width; ++i) {
    unsigned char byte = p[i];
    // Little-endian: the sign is the top bit of the last byte.
    if (isFloat(type) && i == width - 1)
      byte &= 0x7f;
    if (byte)
      return true;
  }
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
