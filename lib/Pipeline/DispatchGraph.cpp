//===- DispatchGraph.cpp - the model graph with its kernels, as DOT -------===//
#include "kiln/Pipeline/DispatchGraph.h"

#include "kiln/Dialect/KilnDialect.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace kiln;

namespace {

std::string nodeName(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto name = nodeName(inner); !name.empty())
        return name;
  return "";
}

std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

class GraphWriter {
public:
  explicit GraphWriter(llvm::raw_ostream &os) : os(os) {}

  void write(func::FuncOp main) {
    os << "digraph model {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
    for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
      auto name = main.getArgAttrOfType<StringAttr>(i, kiln::attrs::kName);
      std::string id = "input" + std::to_string(i);
      os << "  " << id << " [shape=ellipse, label=\""
         << escape(name ? name.getValue() : id) << "\"];\n";
      nodeOf[arg] = id;
    }
    unsigned kernel = 0;
    for (Operation &op : main.getBody().front()) {
      if (auto region = dyn_cast<DispatchRegionOp>(op))
        writeRegion(region, kernel++);
      else if (auto ret = dyn_cast<func::ReturnOp>(op))
        writeOutputs(main, ret);
      else if (!isa<ConstantOp>(op))
        writeOp(&op, "  ");
    }
    os << "}\n";
  }

private:
  void writeOp(Operation *op, StringRef indent) {
    std::string id = "op" + std::to_string(next++);
    StringRef opName = op->getName().stripDialect();
    std::string node = nodeName(op->getLoc());
    os << indent << id << " [label=\"" << escape(opName)
       << (node.empty() ? "" : "\\n" + escape(node)) << "\"];\n";
    for (Value operand : op->getOperands())
      if (auto it = nodeOf.find(operand); it != nodeOf.end())
        edges.push_back(it->second + " -> " + id);
    for (Value result : op->getResults())
      nodeOf[result] = id;
  }

  void writeRegion(DispatchRegionOp region, unsigned index) {
    Block &body = region.getBody().front();
    for (auto [arg, input] : llvm::zip(body.getArguments(), region.getInputs()))
      if (auto it = nodeOf.find(input); it != nodeOf.end())
        nodeOf[arg] = it->second;
    os << "  subgraph cluster_" << index << " {\n    label=\"kernel " << index
       << "\";\n    style=rounded; color=steelblue;\n";
    for (Operation &op : body.without_terminator())
      if (!isa<ConstantOp>(op))
        writeOp(&op, "    ");
    os << "  }\n";
    auto yield = cast<YieldOp>(body.getTerminator());
    for (auto [result, value] :
         llvm::zip(region.getResults(), yield.getValues()))
      if (auto it = nodeOf.find(value); it != nodeOf.end())
        nodeOf[result] = it->second;
  }

  void writeOutputs(func::FuncOp main, func::ReturnOp ret) {
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto name = main.getResultAttrOfType<StringAttr>(i, kiln::attrs::kName);
      std::string id = "output" + std::to_string(i);
      os << "  " << id << " [shape=ellipse, label=\""
         << escape(name ? name.getValue() : id) << "\"];\n";
      if (auto it = nodeOf.find(value); it != nodeOf.end())
        edges.push_back(it->second + " -> " + id);
    }
    for (const std::string &edge : edges)
      os << "  " << edge << ";\n";
  }

  llvm::raw_ostream &os;
  DenseMap<Value, std::string> nodeOf;
  std::vector<std::string> edges;
  unsigned next = 0;
};

} // namespace

LogicalResult kiln::writeDispatchGraph(ModuleOp module, llvm::raw_ostream &os) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("no @main to draw");
  GraphWriter(os).write(main);
  return success();
}
