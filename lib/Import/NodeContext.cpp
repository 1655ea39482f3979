//===- NodeContext.cpp - what an op handler sees of its node --------------===//
#include "NodeContext.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

Value NodeContext::input(size_t i) {
  if (!hasInput(i)) {
    fail("input " + Twine(i) + " is missing");
    return nullptr;
  }
  auto it = importer.values.find(node.input(i));
  if (it == importer.values.end()) {
    fail("input '" + node.input(i) + "' is not defined before this node");
    return nullptr;
  }
  return it->second;
}

bool NodeContext::outputReadOnceAs(size_t i, StringRef opType,
                                   int input) const {
  if (int(i) >= node.output_size())
    return false;
  auto it = importer.readers.find(node.output(int(i)));
  return it != importer.readers.end() && it->second.size() == 1 &&
         it->second.front().first == opType &&
         it->second.front().second == input;
}

const ConstTensor *NodeContext::constInput(size_t i) const {
  if (!hasInput(i))
    return nullptr;
  if (const ConstTensor *constant = importer.findConstant(node.input(i)))
    return constant;
  return deriveFromDeclaredShapes(i);
}

std::vector<std::vector<int64_t>>
NodeContext::axisAlternatives(size_t i) const {
  if (!constInput(i))
    return {};
  auto it = derivedAlternatives.find(i);
  return it == derivedAlternatives.end() ? std::vector<std::vector<int64_t>>{}
                                         : it->second;
}

FailureOr<std::vector<int64_t>> NodeContext::constInts(size_t i) {
  const ConstTensor *tensor = constInput(i);
  if (!tensor) {
    (void)failNotConstant(i, "must be a constant: shapes computed at run "
                             "time are not supported yet");
    return failure();
  }
  if (tensor->onnxType != onnx::TensorProto::INT64 &&
      tensor->onnxType != onnx::TensorProto::INT32) {
    fail("input " + Twine(i) + " must be an integer tensor");
    return failure();
  }
  return tensor->asInts();
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::intAttr(StringRef name, int64_t dflt) const {
  const auto *a = attr(name);
  return a ? a->i() : dflt;
}

float NodeContext::floatAttr(StringRef name, float dflt) const {
  const auto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string NodeContext::stringAttr(StringRef name, StringRef dflt) const {
  const auto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<std::vector<int64_t>>
NodeContext::intsAttr(StringRef name) const {
  const auto *a = attr(name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

void NodeContext::setOutput(size_t i, Value value) {
  if (i < (size_t)node.output_size() && !node.output(i).empty())
    importer.values[node.output(i)] = value;
}

bool NodeContext::allOutputsSet() const {
  for (const auto &output : node.output())
    if (!output.empty() && !importer.values.count(output)) {
      return false;
    }
  return true;
}

LogicalResult NodeContext::checkOutputSizes() {
  for (const std::string &name : node.output()) {
    auto it = importer.values.find(name);
    if (name.empty() || it == importer.values.end())
      continue;
    auto type = dyn_cast<RankedTensorType>(it->second.getType());
    if (!type || !type.hasStaticShape())
      continue;
    std::optional<uint64_t> bytes = tensorBytes(type);
    if (!bytes || *bytes > importer.maxTensorBytes)
      return fail("output '" + name + "' would have more than the " +
                  Twine(importer.maxTensorBytes) +
                  " bytes a tensor may have (--max-tensor-bytes)");
  }
  return success();
}

LogicalResult NodeContext::fail(const Twine &reason) {
  if (errorMessage.empty())
    errorMessage = reason.str();
  return failure();
}

LogicalResult NodeContext::failNotConstant(size_t i, const Twine &reason) {
  std::string name = hasInput(i) ? node.input(i) : "";
  if (nonConstantInput.empty())
    nonConstantInput = name;
  auto problem = derivationProblems.find(i);
  std::string atRunTime =
      problem == derivationProblems.end() || problem->second.empty()
          ? ""
          : "; a model input may stand in where the model's declared "
            "shapes determine its values, but " +
                problem->second;
  return fail("input " + Twine(i) + " ('" + name + "') " + reason + atRunTime +
              " (freeze it with --freeze-input " + name + "=@value.pb)");
}

static std::string typeName(Type t) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << t;
  return name;
}

LogicalResult NodeContext::requireDtypes(ValueRange values, unsigned classes) {
  for (Value v : values) {
    Type t = cast<ShapedType>(v.getType()).getElementType();
    bool ok = ((classes & Float) && (t.isF16() || t.isF32() || t.isF64())) ||
              ((classes & Int) && t.isSignlessInteger() &&
               t.getIntOrFloatBitWidth() >= 8) ||
              ((classes & Unsigned) && t.isUnsignedInteger() &&
               t.getIntOrFloatBitWidth() >= 8) ||
              ((classes & Bool) && t.isInteger(1));
    if (!ok)
      return fail("dtype " + typeName(t) + " not supported yet for " +
                  node.op_type());
  }
  return success();
}

FailureOr<int64_t> NodeContext::axisAttr(int64_t dflt, int64_t rank) {
  int64_t axis = intAttr("axis", dflt);
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    (void)fail("axis " + Twine(axis) + " out of range for rank " + Twine(rank));
    return failure();
  }
  return normalized;
}

LogicalResult NodeContext::requireIndices(Value indices) {
  Type t = getElementTypeOrSelf(indices.getType());
  if (!t.isInteger(32) && !t.isInteger(64))
    return fail("indices must be int32 or int64");
  return success();
}

LogicalResult NodeContext::requireIndicesInRange(size_t i,
                                                 ArrayRef<int64_t> dims,
                                                 ArrayRef<int64_t> dataShape) {
  if (dims.empty())
    return success();
  for (int64_t dim : dims)
    if (dim < 0 || dim >= int64_t(dataShape.size()))
      return fail("indices address dim " + Twine(dim) + " of a rank-" +
                  Twine(dataShape.size()) + " input");
  const ConstTensor *indices = constInput(i);
  if (!indices) {
    Value value = input(i);
    if (!value)
      return failure();
    return checkIndicesAtRunTime(value, node.input(i), dims, dataShape);
  }
  std::vector<int64_t> values = indices->asInts();
  for (size_t e = 0; e < values.size(); ++e) {
    int64_t dim = dims[e % dims.size()], size = dataShape[dim];
    if (ShapedType::isDynamic(size) || (values[e] >= -size && values[e] < size))
      continue;
    return fail("indices element " + Twine(e) + " is " + Twine(values[e]) +
                ", out of range for data dim " + Twine(dim) + " of size " +
                Twine(size) + " (an index is in [" + Twine(-size) + ", " +
                Twine(size - 1) + "])");
  }
  return success();
}

/// `indices < -size || indices >= size`, one size per position along the
/// last dim when `dims` has several, kept as a check of the run.
LogicalResult NodeContext::checkIndicesAtRunTime(Value indices,
                                                 StringRef inputName,
                                                 ArrayRef<int64_t> dims,
                                                 ArrayRef<int64_t> dataShape) {
  auto type = cast<RankedTensorType>(indices.getType());
  if (!type.hasStaticShape() || type.getNumElements() == 0)
    return success();
  std::vector<double> lowest, end;
  std::string sizes;
  for (int64_t dim : dims) {
    if (ShapedType::isDynamic(dataShape[dim]))
      return success();
    lowest.push_back(double(-dataShape[dim]));
    end.push_back(double(dataShape[dim]));
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(dataShape[dim]);
  }
  SmallVector<int64_t> boundShape;
  if (dims.size() > 1)
    boundShape.push_back(int64_t(dims.size()));
  auto boundType = RankedTensorType::get(boundShape, type.getElementType());
  auto below = create<LessOp>({indices, constant(boundType, lowest)});
  auto past = create<GreaterEqualOp>({indices, constant(boundType, end)});
  if (failed(below) || failed(past))
    return failure();
  auto outside = create<OrOp>({*below, *past});
  if (failed(outside))
    return failure();
  std::string what =
      dims.size() == 1
          ? "data dim " + std::to_string(dims[0]) + " of size " + sizes
          : "the data dims of sizes [" + sizes + "]";
  std::string name = node.name();
  if (auto named = dyn_cast<NameLoc>(loc))
    name = named.getName().str();
  // Its own name: the check's kernel is not the node's.
  Location checkLoc = NameLoc::get(b().getStringAttr(name + " index check"));
  for (Value v : {*below, *past, *outside}) {
    Operation *op = v.getDefiningOp();
    op->setLoc(checkLoc);
    for (Value operand : op->getOperands())
      if (Operation *bound = operand.getDefiningOp<ConstantOp>())
        bound->setLoc(checkLoc);
  }
  addRuntimeCheck(*outside, "input '" + inputName.str() +
                                "' holds an index out of range for " + what);
  return success();
}

std::optional<std::vector<int64_t>>
NodeContext::declaredOutputShape(size_t k) const {
  if (k >= size_t(node.output_size()))
    return std::nullopt;
  auto it = importer.declaredShapes.find(node.output(k));
  if (it == importer.declaredShapes.end())
    return std::nullopt;
  return it->second;
}

void NodeContext::addRuntimeCheck(Value failed, const Twine &what) {
  if (!failed)
    return;
  std::string name = node.name();
  if (auto named = dyn_cast<NameLoc>(loc))
    name = named.getName().str();
  importer.runtimeChecks.push_back(
      {failed, "node '" + name + "' (" + node.op_type() + "): " + what.str()});
}

LogicalResult NodeContext::requireSameDtype(ValueRange values) {
  for (Value v : values)
    if (getElementTypeOrSelf(v.getType()) !=
        getElementTypeOrSelf(values.front().getType()))
      return fail("inputs have different dtypes (" +
                  typeName(getElementTypeOrSelf(values.front().getType())) +
                  " and " + typeName(getElementTypeOrSelf(v.getType())) + ")");
  return success();
}

/// `v` as an int64, saturated (NaN is 0): an attribute's float given to an
/// integer tensor may be anything.
static int64_t saturatingInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (v < -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

Value NodeContext::constant(RankedTensorType type, ArrayRef<double> values) {
  Type e = type.getElementType();
  SmallVector<Attribute> attrs;
  for (double v : values)
    attrs.push_back(isa<FloatType>(e)
                        ? (Attribute)b().getFloatAttr(e, v)
                        : (Attribute)b().getIntegerAttr(e, saturatingInt(v)));
  DenseElementsAttr value = values.size() == 1
                                ? DenseElementsAttr::get(type, attrs.front())
                                : DenseElementsAttr::get(type, attrs);
  return ConstantOp::create(b(), loc, value);
}

bool NodeContext::tryReserveConstant(int64_t elements, Type type) {
  uint64_t bytes = 0;
  uint64_t each = llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
  uint64_t left = importer.foldBudget - importer.foldedBytes;
  if (elements < 0 ||
      __builtin_mul_overflow(uint64_t(elements), each, &bytes) || bytes > left)
    return false;
  importer.foldedBytes += bytes;
  return true;
}

LogicalResult NodeContext::reserveConstant(int64_t elements, Type type) {
  if (tryReserveConstant(elements, type))
    return success();
  return fail("its constant of " + Twine(elements) +
              " elements does not fit the " +
              Twine(importer.foldBudget - importer.foldedBytes) +
              " bytes left of the folding budget (--max-folded-bytes)");
}

Value NodeContext::scalar(Value like, double value) {
  return constant(
      RankedTensorType::get({}, getElementTypeOrSelf(like.getType())), {value});
}

FailureOr<Value> NodeContext::createInferred(StringRef opName,
                                             ValueRange operands,
                                             ArrayRef<NamedAttribute> attrs) {
  // A null operand is an earlier op of a chain that failed (and said why).
  if (operands.empty() || llvm::is_contained(operands, Value()))
    return failure();
  OperationState state(loc, opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  // A placeholder result type; the op's own inference replaces it below.
  state.addTypes(operands.front().getType());
  Operation *op = b().create(state);
  auto infer = cast<InferTypeOpInterface>(op);
  SmallVector<Type> types;
  // The op's inference says why it rejects the operands; that reason goes
  // into the unsupported-node list instead of a separate diagnostic.
  std::string reason;
  LogicalResult inferred = failure();
  {
    ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &d) {
      reason = d.str();
      return success();
    });
    inferred = infer.inferReturnTypes(
        op->getContext(), loc, op->getOperands(), op->getRawDictionaryAttrs(),
        op->getPropertiesStorage(), op->getRegions(), types);
  }
  if (failed(inferred) || types.size() != 1) {
    op->erase();
    return fail("shape inference failed" +
                (reason.empty() ? "" : ": " + reason));
  }
  op->getResult(0).setType(types[0]);
  if (failed(mlir::verify(op))) {
    op->erase();
    return fail("invalid attributes or operand shapes");
  }
  return op->getResult(0);
}

Value NodeContext::createConstant(StringRef name, ConstTensor tensor,
                                  std::string &error) {
  return importer.createConstant(name, std::move(tensor), loc, error);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t onnx_import::rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}
ArrayRef<int64_t> onnx_import::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Normalizes possibly negative axes against `rank`; fails when out of range.
FailureOr<SmallVector<int64_t>>
onnx_import::normalizeAxes(NodeContext &ctx, ArrayRef<int64_t> axes,
                           int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t a : axes) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      (void)ctx.fail("axis " + Twine(a) + " out of range for rank " +
                     Twine(rank));
      return failure();
    }
    if (!llvm::is_contained(result, axis))
      result.push_back(axis);
  }
  llvm::sort(result);
  return result;
}

Value onnx_import::castElements(NodeContext &ctx, Value v, Type elementType) {
  if (getElementTypeOrSelf(v.getType()) == elementType)
    return v;
  return CastOp::create(ctx.b(), ctx.getLoc(),
                        RankedTensorType::get(shapeOf(v), elementType), v);
}

Value onnx_import::reshapeTo(NodeContext &ctx, Value v,
                             ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  if (type == v.getType())
    return v;
  return ReshapeOp::create(ctx.b(), ctx.getLoc(), type, v);
}

LogicalResult onnx_import::setResult(NodeContext &ctx, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  ctx.setOutput(0, *value);
  return success();
}
