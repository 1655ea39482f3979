//===- RuntimeShapeInputs.cpp - shape-like inputs read at run time --------===//
//
// Kiln fixes shapes at compile time. A node whose shape-like input (a
// Reshape's shape, a TopK's k, a reduction's axes) is a model input rather
// than a constant is compiled for the result shape the model declares for
// it (graph outputs and value_info): the values that give that shape stand
// in for the constant, and a guard (kiln.shape_guards on @main, checked by
// runtime/src/ShapeGuards.cpp before each run) refuses a run whose values
// give another result. The importer finds the values with the runtime's own
// rules, so the two agree on what every value means.
//
// A reduction whose declared result several sets of axes give (over
// either of two dims of the same size) is compiled for each, and the axes'
// values choose among them at run time (NodeContext::axisAlternatives).
// Where the declared shapes do not determine the result otherwise (a
// Slice's starts), the input must still be a constant.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "kiln/shape_guards.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cstring>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

using Shape = std::vector<int64_t>;

/// The guard a derivation builds and the values it found for the input;
/// for a reduction, every set of axes that gives a different result.
struct Derivation {
  ShapeGuardDesc guard;
  Shape values;
  std::vector<Shape> alternatives;
};

/// The most sets of axes a reduction is compiled for.
constexpr size_t kMaxAxisAlternatives = 4;

/// What a deriver sees: the node, its static input shapes, the shapes the
/// model declares for its outputs, and the shape-like input's element count.
struct DeriveContext {
  const NodeContext &ctx;
  std::vector<std::optional<Shape>> inputShapes, declared;
  int64_t count; // elements of the shape-like input

  const onnx::NodeProto &node() const { return ctx.proto(); }
  int64_t intAttr(StringRef name, int64_t dflt) const {
    return ctx.intAttr(name, dflt);
  }
};

/// "" when `values` satisfy the guard (the runtime's check).
bool satisfies(const ShapeGuardDesc &guard, const Shape &values) {
  return checkShapeGuard(guard, values, "").empty();
}

/// Calls `visit` with each set of `count` distinct dims of [0, rank), in
/// increasing order, until it returns false; false when there are too many
/// sets to try (each try checks a shape of `rank` dims), or more dims than
/// a guard holds.
bool forEachAxisSet(int64_t rank, int64_t count,
                    const std::function<bool(const Shape &)> &visit) {
  if (rank > int64_t(kMaxGuardRank))
    return false;
  if (count < 0 || count > rank)
    return true; // there is no such set
  double sets = 1;
  for (int64_t k = 0; k < count; ++k)
    sets = sets * double(rank - k) / double(k + 1);
  if (sets > 4096)
    return false;
  // Iteratively, in lexicographic order: a recursion would try every
  // prefix, and nest as deep as `count`.
  Shape chosen(count);
  std::iota(chosen.begin(), chosen.end(), 0);
  while (visit(chosen)) {
    int64_t i = count - 1;
    while (i >= 0 && chosen[i] == rank - count + i)
      --i;
    if (i < 0)
      break;
    ++chosen[i];
    for (int64_t j = i + 1; j < count; ++j)
      chosen[j] = chosen[j - 1] + 1;
  }
  return true;
}

/// The dims of `axes` that change data: reducing over a dim of size 1 does
/// not.
Shape effectiveAxes(const Shape &axes, const Shape &data) {
  Shape effective;
  for (int64_t a : axes)
    if (data[a] != 1)
      effective.push_back(a);
  return effective;
}

/// Squeeze, Unsqueeze and the reductions: axes whose result is the declared
/// shape. Any such set gives the same data for Squeeze and Unsqueeze (they
/// only reshape); for a reduction, each set that reduces other dims is an
/// alternative (`reduces`).
std::string deriveAxes(const DeriveContext &c, Derivation &d, int64_t rank,
                       bool reduces) {
  const Shape &data = d.guard.dataShape;
  std::optional<Shape> found;
  std::vector<Shape> effective;
  bool tooMany = false;
  bool tried = forEachAxisSet(rank, c.count, [&](const Shape &axes) {
    if (!satisfies(d.guard, axes))
      return true;
    if (!found)
      found = axes;
    // Unsqueeze's axes are dims of its result, not of `data`.
    if (!reduces)
      return false;
    if (!llvm::is_contained(effective, effectiveAxes(axes, data))) {
      effective.push_back(effectiveAxes(axes, data));
      d.alternatives.push_back(axes);
    }
    tooMany = d.alternatives.size() > kMaxAxisAlternatives;
    return !tooMany;
  });
  if (!tried)
    return "too many axis sets to try, or more than " +
           std::to_string(kMaxGuardRank) + " dims";
  if (!found)
    return "no " + std::to_string(c.count) + " axes give the declared shape";
  if (tooMany)
    return "more than " + std::to_string(kMaxAxisAlternatives) +
           " sets of axes give the declared shape";
  d.values = *found;
  return "";
}

/// One integer (k, depth, a window's size) that the declared shape holds at
/// `dim`.
std::string deriveScalar(const DeriveContext &c, Derivation &d,
                         const Shape &declared, int64_t dim) {
  if (c.count != 1)
    return "it is not a single value";
  if (dim < 0 || dim >= int64_t(declared.size()))
    return "the declared shape has no dim " + std::to_string(dim);
  d.guard.rule = ShapeGuardDesc::Equals;
  d.values = d.guard.expected = {declared[dim]};
  return "";
}

int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

using Deriver = std::string (*)(const DeriveContext &, Derivation &);

std::string deriveReshape(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Reshape;
  d.guard.params = {c.intAttr("allowzero", 0) != 0};
  d.values = *c.declared[0];
  return int64_t(d.values.size()) == c.count ? ""
                                             : "its length is not the "
                                               "declared rank";
}

std::string deriveExpand(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Expand;
  const Shape &out = *c.declared[0];
  if (c.count > int64_t(out.size()))
    return "it is longer than the declared rank";
  d.values.assign(out.end() - c.count, out.end());
  return "";
}

std::string deriveTile(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Tile;
  const Shape &in = d.guard.dataShape, &out = *c.declared[0];
  if (in.size() != out.size() || c.count != int64_t(in.size()))
    return "the ranks differ";
  for (size_t i = 0; i < in.size(); ++i)
    d.values.push_back(in[i] ? out[i] / in[i] : 1);
  return "";
}

std::string deriveSqueeze(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Squeeze;
  return deriveAxes(c, d, d.guard.dataShape.size(), /*reduces=*/false);
}

std::string deriveUnsqueeze(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Unsqueeze;
  return deriveAxes(c, d, d.guard.dataShape.size() + c.count,
                    /*reduces=*/false);
}

std::string deriveReduceAxes(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Reduce;
  d.guard.params = {c.intAttr("keepdims", 1) != 0,
                    c.intAttr("noop_with_empty_axes", 0) != 0};
  return deriveAxes(c, d, d.guard.dataShape.size(), /*reduces=*/true);
}

std::string deriveTopK(const DeriveContext &c, Derivation &d) {
  int64_t axis =
      normalizedAxis(c.intAttr("axis", -1), d.guard.dataShape.size());
  return deriveScalar(c, d, *c.declared[0], axis);
}

std::string deriveOneHot(const DeriveContext &c, Derivation &d) {
  const Shape &out = *c.declared[0];
  return deriveScalar(
      c, d, out, normalizedAxis(c.intAttr("axis", -1), int64_t(out.size())));
}

std::string deriveWindowSize(const DeriveContext &c, Derivation &d) {
  if (c.declared[0]->size() != 1)
    return "the declared shape is not 1-D";
  return deriveScalar(c, d, *c.declared[0], 0);
}

std::string deriveSplit(const DeriveContext &c, Derivation &d) {
  int64_t axis = normalizedAxis(c.intAttr("axis", 0), d.guard.dataShape.size());
  d.guard.rule = ShapeGuardDesc::Equals;
  for (const std::optional<Shape> &out : c.declared) {
    if (!out)
      return "the model declares no shape for every output";
    if (axis < 0 || axis >= int64_t(out->size()))
      return "the declared shapes have no dim " + std::to_string(axis);
    d.values.push_back((*out)[axis]);
  }
  d.guard.expected = d.values;
  return int64_t(d.values.size()) == c.count ? ""
                                             : "it has no entry per output";
}

/// ConstantOfShape's shape: the declared shape itself.
std::string deriveShapeValues(const DeriveContext &c, Derivation &d) {
  d.guard.rule = ShapeGuardDesc::Equals;
  d.values = d.guard.expected = *c.declared[0];
  return int64_t(d.values.size()) == c.count ? ""
                                             : "its length is not the "
                                               "declared rank";
}

std::string deriveResizeSizes(const DeriveContext &c, Derivation &d) {
  if (c.ctx.stringAttr("keep_aspect_ratio_policy", "stretch") != "stretch")
    return "keep_aspect_ratio_policy makes the result differ from the sizes";
  const Shape &out = *c.declared[0];
  Shape axes;
  if (auto given = c.ctx.intsAttr("axes"))
    for (int64_t a : *given)
      axes.push_back(normalizedAxis(a, out.size()));
  else
    for (size_t a = 0; a < out.size(); ++a)
      axes.push_back(a);
  d.guard.rule = ShapeGuardDesc::Equals;
  for (int64_t a : axes) {
    if (a < 0 || a >= int64_t(out.size()))
      return "an axis is out of range";
    d.values.push_back(out[a]);
  }
  d.guard.expected = d.values;
  return int64_t(d.values.size()) == c.count ? "" : "it has no entry per axis";
}

/// The shape-like inputs that may be read at run time: op type, input
/// index, whether a float tensor may hold the value, and the deriver.
struct RuntimeShapeInput {
  const char *opType;
  size_t input;
  bool floatAllowed;
  Deriver derive;
};

const RuntimeShapeInput kRuntimeShapeInputs[] = {
    {"Reshape", 1, false, deriveReshape},
    {"Expand", 1, false, deriveExpand},
    {"Tile", 1, false, deriveTile},
    {"Squeeze", 1, false, deriveSqueeze},
    {"Unsqueeze", 1, false, deriveUnsqueeze},
    {"ReduceSum", 1, false, deriveReduceAxes},
    {"ReduceMean", 1, false, deriveReduceAxes},
    {"ReduceMax", 1, false, deriveReduceAxes},
    {"ReduceMin", 1, false, deriveReduceAxes},
    {"ReduceProd", 1, false, deriveReduceAxes},
    {"ReduceL1", 1, false, deriveReduceAxes},
    {"ReduceL2", 1, false, deriveReduceAxes},
    {"ReduceLogSum", 1, false, deriveReduceAxes},
    {"ReduceLogSumExp", 1, false, deriveReduceAxes},
    {"ReduceSumSquare", 1, false, deriveReduceAxes},
    {"TopK", 1, false, deriveTopK},
    {"OneHot", 1, true, deriveOneHot},
    {"Split", 1, false, deriveSplit},
    {"HannWindow", 0, false, deriveWindowSize},
    {"HammingWindow", 0, false, deriveWindowSize},
    {"BlackmanWindow", 0, false, deriveWindowSize},
    {"Resize", 3, false, deriveResizeSizes},
    {"ConstantOfShape", 0, false, deriveShapeValues},
};

const RuntimeShapeInput *runtimeShapeInput(StringRef opType, size_t input) {
  for (const RuntimeShapeInput &r : kRuntimeShapeInputs)
    if (opType == r.opType && input == r.input)
      return &r;
  return nullptr;
}

bool isIntegerType(Type t) { return t.isInteger(32) || t.isInteger(64); }

std::optional<Shape> staticShape(Value v) {
  auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return Shape(type.getShape().begin(), type.getShape().end());
}

} // namespace

const ConstTensor *NodeContext::deriveFromDeclaredShapes(size_t i) const {
  if (auto it = derivedInputs.find(i); it != derivedInputs.end())
    return &it->second;
  if (derivationProblems.count(i))
    return nullptr;
  std::string &problem = derivationProblems[i];
  const RuntimeShapeInput *rule = runtimeShapeInput(node.op_type(), i);
  auto value = importer.values.find(node.input(i));
  if (!rule || value == importer.values.end()) {
    problem = "";
    return nullptr;
  }
  auto arg = dyn_cast<BlockArgument>(value->second);
  auto type = cast<RankedTensorType>(value->second.getType());
  Type element = type.getElementType();
  if (!arg || !type.hasStaticShape()) {
    problem = "it is computed, not a model input";
    return nullptr;
  }
  if (type.getNumElements() > int64_t(kMaxShapeGuardValues)) {
    problem =
        "it has more than " + std::to_string(kMaxShapeGuardValues) + " values";
    return nullptr;
  }
  if (!isIntegerType(element) &&
      !(rule->floatAllowed && (element.isF32() || element.isF64()))) {
    problem = "its dtype is not int32 or int64";
    return nullptr;
  }
  DeriveContext c{*this, {}, {}, type.getNumElements()};
  for (const std::string &name : node.input())
    c.inputShapes.push_back(name.empty() || !importer.values.count(name)
                                ? std::nullopt
                                : staticShape(importer.values.at(name)));
  for (const std::string &name : node.output()) {
    auto declared = importer.declaredShapes.find(name);
    c.declared.push_back(declared == importer.declaredShapes.end()
                             ? std::nullopt
                             : std::optional<Shape>(declared->second));
  }
  if (c.declared.empty() || !c.declared[0]) {
    problem = "the model declares no shape for output '" +
              (node.output_size() ? node.output(0) : std::string()) + "'";
    return nullptr;
  }
  std::string name = node.name();
  if (auto named = dyn_cast<NameLoc>(loc))
    name = named.getName().str();
  Derivation d;
  d.guard.node = name;
  d.guard.opType = node.op_type();
  if (!c.inputShapes.empty() && c.inputShapes[0])
    d.guard.dataShape = *c.inputShapes[0];
  d.guard.expected = *c.declared[0];
  problem = rule->derive(c, d);
  if (problem.empty() && !satisfies(d.guard, d.values))
    problem = "no values give the declared shape";
  if (!problem.empty())
    return nullptr;
  derivationProblems.erase(i);
  importer.recordShapeGuard(node.input(i), d.guard);

  if (d.alternatives.size() > 1)
    derivedAlternatives[i] = d.alternatives;
  ConstTensor &tensor = derivedInputs[i];
  tensor.onnxType = onnx::TensorProto::INT64;
  tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  tensor.bytes.resize(d.values.size() * sizeof(int64_t));
  if (!d.values.empty())
    std::memcpy(tensor.bytes.data(), d.values.data(), tensor.bytes.size());
  return &tensor;
}

void GraphImporter::recordShapeGuard(const std::string &input,
                                     const ShapeGuardDesc &guard) {
  // The names of runtime/schema/artifact.fbs's ShapeRule, in its order.
  static const char *const kRuleNames[] = {
      "Equals", "Reshape", "Expand", "Tile", "Squeeze", "Unsqueeze", "Reduce"};
  Builder b(&context);
  shapeGuards.push_back(b.getDictionaryAttr({
      b.getNamedAttr("rule", b.getStringAttr(kRuleNames[guard.rule])),
      b.getNamedAttr("node", b.getStringAttr(guard.node)),
      b.getNamedAttr("op_type", b.getStringAttr(guard.opType)),
      b.getNamedAttr("input", b.getStringAttr(input)),
      b.getNamedAttr("data_shape", b.getDenseI64ArrayAttr(guard.dataShape)),
      b.getNamedAttr("params", b.getDenseI64ArrayAttr(guard.params)),
      b.getNamedAttr("expected", b.getDenseI64ArrayAttr(guard.expected)),
  }));
}
