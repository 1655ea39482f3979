//===- DeclaredShapes.cpp - result shapes the model declares --------------===//
//
// A node whose result shape depends on values known only at run time (a
// Range's limit, a Slice's ends) imports when the model declares that
// shape. Exporters and ONNX's expanded functions often declare only the
// graph output at the end of an elementwise chain (a window function:
// y[10] = A0 - A1 * Cos(Range(0, size) * step)); the chain keeps the shape,
// so its inputs have it too.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporterImpl.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Ops whose result has the shape their inputs broadcast to.
bool isElementwiseOnnxOp(llvm::StringRef op) {
  static const llvm::StringSet<> ops = {
      "Abs",   "Acos",    "Add",      "And",  "Asin",  "Atan", "Cast",
      "Ceil",  "Cos",     "Cosh",     "Div",  "Equal", "Erf",  "Exp",
      "Floor", "Greater", "Identity", "Less", "Log",   "Max",  "Min",
      "Mod",   "Mul",     "Neg",      "Not",  "Or",    "Pow",  "Reciprocal",
      "Relu",  "Round",   "Sigmoid",  "Sign", "Sin",   "Sinh", "Softplus",
      "Sqrt",  "Sub",     "Tan",      "Tanh", "Where", "Xor"};
  return ops.contains(op);
}

/// The rank of a one-element tensor of `dims` (0 or 1), or -1.
int64_t singleElementRank(llvm::ArrayRef<int64_t> dims) {
  if (dims.size() > 1 || (dims.size() == 1 && dims[0] != 1))
    return -1;
  return int64_t(dims.size());
}

/// The rank of a Constant node's one-element value, or -1.
int64_t constantNodeRank(const onnx::NodeProto &node) {
  for (const auto &attr : node.attribute()) {
    if (attr.name() == "value")
      return singleElementRank(llvm::to_vector(attr.t().dims()));
    if (attr.name() == "value_float" || attr.name() == "value_int")
      return 0;
  }
  return -1;
}

} // namespace

void GraphImporter::propagateDeclaredShapes(const onnx::GraphProto &graph) {
  // Values of one element, with their rank: inputs, weights, constants and
  // elementwise results of those.
  std::map<std::string, int64_t> single;
  for (const auto &[name, value] : values)
    if (auto type = dyn_cast<RankedTensorType>(value.getType()))
      if (int64_t r = singleElementRank(type.getShape()); r >= 0)
        single[name] = r;
  for (const auto &[name, tensor] : constants)
    if (int64_t r = singleElementRank(tensor.shape); r >= 0)
      single[name] = r;
  // Each elementwise result of values of one shape (the same root) and of
  // single elements has that shape too, once it has more than one element
  // (single elements of rank 0 or 1 cannot broadcast it further).
  std::map<std::string, std::string> root;
  for (const onnx::NodeProto &node : graph.node()) {
    if (node.output_size() != 1)
      continue;
    const std::string &out = node.output(0);
    if (node.op_type() == "Constant") {
      if (int64_t r = constantNodeRank(node); r >= 0)
        single[out] = r;
      continue;
    }
    if (!isElementwiseOnnxOp(node.op_type()))
      continue;
    std::optional<std::string> shared;
    int64_t singleRank = 0;
    bool sameRoot = true;
    for (const std::string &input : node.input()) {
      if (auto it = single.find(input); it != single.end()) {
        singleRank = std::max(singleRank, it->second);
        continue;
      }
      auto found = root.find(input);
      const std::string &of = found == root.end() ? input : found->second;
      sameRoot = sameRoot && (!shared || *shared == of);
      shared = of;
    }
    if (!shared)
      single[out] = singleRank;
    else if (sameRoot)
      root[out] = *shared;
  }
  // A declared shape of more than one element is its root's shape.
  std::vector<std::pair<std::string, std::vector<int64_t>>> found;
  for (const auto &[name, shape] : declaredShapes) {
    // More than one element: no dim of 0 and one over 1 (no product, which
    // a hostile shape could overflow).
    bool several = llvm::none_of(shape, [](int64_t d) { return d == 0; }) &&
                   llvm::any_of(shape, [](int64_t d) { return d > 1; });
    if (auto it = root.find(name); it != root.end() && several)
      found.push_back({it->second, shape});
  }
  for (auto &[name, shape] : found)
    declaredShapes.emplace(name, std::move(shape));
}
