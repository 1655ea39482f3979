//===- OnnxIfImporter.cpp - If, on a known or a run-time condition --------===//
//
// An If whose condition is known at compile time (a constant, or computed
// from shapes) is its taken branch, imported in place. One whose condition
// is known only at run time imports both branches and selects each output
// between them; each branch's run-time checks hold only when it is taken.
//
// A branch that does not import at the model's shapes while the other does
// is left out: a model may handle inputs in a branch written for another
// shape (Silero VAD's 8 kHz branch at the 16 kHz frame length, whose LSTM
// input is then not 3-D). The If is then the other branch, and a run whose
// condition takes the left-out one fails with a run-time check naming why,
// as onnxruntime's run would fail in that branch. Only a branch whose every
// op Kiln imports is left out: one with an op Kiln lacks keeps the model
// refused, so that --check lists it.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

void GraphImporter::importIf(const onnx::NodeProto &node, int index) {
  const std::string &condName = node.input_size() ? node.input(0) : "";
  const ConstTensor *cond = findConstant(condName);
  if (!cond) {
    importSelectedIf(node, index);
    return;
  }
  if (cond->bytes.empty()) {
    markUnsupported(node, index, "condition '" + condName + "' is empty");
    return;
  }
  bool taken = llvm::any_of(cond->bytes, [](char b) { return b != 0; });
  std::optional<std::vector<Value>> outputs =
      importBranch(node, index, taken ? "then_branch" : "else_branch",
                   /*scoped=*/false);
  if (!outputs)
    return;
  for (auto [output, value] : llvm::zip(node.output(), *outputs))
    if (!value)
      poisoned.insert(output);
    else
      values[output] = value;
}

/// The graph attribute `name` of `node`, or null.
static const onnx::GraphProto *branchGraph(const onnx::NodeProto &node,
                                           const std::string &name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name && attr.has_g())
      return &attr.g();
  return nullptr;
}

std::optional<std::vector<Value>>
GraphImporter::importBranch(const onnx::NodeProto &node, int index,
                            const std::string &branchName, bool scoped) {
  const onnx::GraphProto *branch = branchGraph(node, branchName);
  if (!branch || branch->output_size() != node.output_size()) {
    markUnsupported(node, index,
                    "the " + branchName +
                        (branch ? " does not produce one value per output"
                                : " is missing"));
    return std::nullopt;
  }
  auto outputs = importSubgraph(node, index, *branch, branchName, {}, scoped);
  // A branch output that is a constant stays one for later nodes.
  if (outputs && !scoped)
    for (auto [i, output] : llvm::enumerate(node.output())) {
      auto constant = constants.find(branch->output(i).name());
      if (constant != constants.end())
        constants[output] = constant->second;
    }
  return outputs;
}

Operation *GraphImporter::lastImportedOp() {
  Block::iterator at = builder.getInsertionPoint();
  return at == builder.getInsertionBlock()->begin() ? nullptr : &*std::prev(at);
}

GraphImporter::RunTimeBranch
GraphImporter::importRunTimeBranch(const onnx::NodeProto &node, int index,
                                   const std::string &branchName) {
  RunTimeBranch branch;
  branch.name = branchName;
  branch.opBefore = lastImportedOp();
  branch.unsupportedBegin = unsupported.size();
  branch.checksBegin = runtimeChecks.size();
  branch.guardsBegin = shapeGuards.size();
  branch.outputs = importBranch(node, index, branchName, /*scoped=*/true);
  branch.lastOp = lastImportedOp();
  branch.unsupportedEnd = unsupported.size();
  branch.checksEnd = runtimeChecks.size();
  branch.guardsEnd = shapeGuards.size();
  return branch;
}

bool GraphImporter::RunTimeBranch::imported() const {
  return outputs && unsupportedBegin == unsupportedEnd &&
         llvm::all_of(*outputs, [](Value v) { return bool(v); });
}

/// Whether Kiln imports the op type of every node of `graph` and of the
/// subgraphs within it: what keeps such a graph from importing is then the
/// shapes or values it meets, not an op Kiln lacks.
bool GraphImporter::importsEveryOpType(const onnx::GraphProto &graph) const {
  for (const onnx::NodeProto &node : graph.node()) {
    bool controlFlow = node.domain().empty() &&
                       llvm::is_contained({"If", "Loop", "Scan"},
                                          llvm::StringRef(node.op_type()));
    if (!controlFlow && !opTypeProblem(node).empty())
      return false;
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.has_g() && !importsEveryOpType(attr.g()))
        return false;
  }
  return true;
}

bool GraphImporter::takeBackBranch(const RunTimeBranch &branch) {
  // A shape-like input the branch read at run time stands for a constant
  // in the rest of the graph too; its guard cannot be taken back.
  if (branch.guardsBegin != branch.guardsEnd)
    return false;
  SmallVector<Operation *> ops;
  if (branch.lastOp != branch.opBefore) {
    Block *block = builder.getInsertionBlock();
    auto it = branch.opBefore ? std::next(branch.opBefore->getIterator())
                              : block->begin();
    for (; &*it != branch.lastOp; ++it)
      ops.push_back(&*it);
    ops.push_back(branch.lastOp);
  }
  llvm::SmallPtrSet<Operation *, 32> inBranch(ops.begin(), ops.end());
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (!inBranch.contains(user))
        return false;
  // A subgraph inlined within the branch (an If on a known condition)
  // leaves its names bound.
  for (auto it = values.begin(); it != values.end();)
    it = inBranch.contains(it->second.getDefiningOp()) ? values.erase(it)
                                                       : std::next(it);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  unsupported.erase(unsupported.begin() + branch.unsupportedBegin,
                    unsupported.begin() + branch.unsupportedEnd);
  runtimeChecks.erase(runtimeChecks.begin() + branch.checksBegin,
                      runtimeChecks.begin() + branch.checksEnd);
  return true;
}

bool GraphImporter::leaveOutBranch(NodeContext &ctx, int index,
                                   const RunTimeBranch &branch, Value takesIt) {
  const onnx::NodeProto &node = ctx.proto();
  const onnx::GraphProto *graph = branchGraph(node, branch.name);
  if (!graph || !importsEveryOpType(*graph) ||
      branch.unsupportedBegin == branch.unsupportedEnd)
    return false;
  // A failure of the If itself (a branch that redefines a name) is the
  // model's, and a node that needs a constant input lacks a value known
  // only at run time at any shape: neither is left out.
  std::string ifName =
      node.name().empty() ? "If_" + std::to_string(index) : node.name();
  for (size_t i = branch.unsupportedBegin; i < branch.unsupportedEnd; ++i)
    if (unsupported[i].nodeName == ifName ||
        !unsupported[i].needsConstant.empty())
      return false;
  // The first node that failed says why.
  UnsupportedNode first = unsupported[branch.unsupportedBegin];
  if (!takeBackBranch(branch))
    return false;
  std::string why = first.opType + " '" + first.nodeName + "': " + first.reason;
  ctx.addRuntimeCheck(takesIt, "its condition takes the " + branch.name +
                                   ", which does not compile at these "
                                   "shapes (" +
                                   why + ")");
  // MLIR drops warnings without a handler: straight to stderr.
  llvm::errs() << "warning: node '" << ifName << "' (If): the " << branch.name
               << " does not compile at these shapes (" << why
               << "); it is left out, and a run whose condition '"
               << node.input(0) << "' takes it fails\n";
  return true;
}

static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

void GraphImporter::importSelectedIf(const onnx::NodeProto &node, int index) {
  const std::string &condName = node.input_size() ? node.input(0) : "";
  auto cond = values.find(condName);
  auto condType = cond == values.end()
                      ? nullptr
                      : dyn_cast<RankedTensorType>(cond->second.getType());
  if (!condType || !condType.getElementType().isInteger(1) ||
      !condType.hasStaticShape() || condType.getNumElements() != 1) {
    markUnsupported(node, index,
                    "condition '" + condName + "' is not one boolean");
    return;
  }
  NodeContext ctx(*this, node, nodeLocation(node, index));
  Value taken = reshapeTo(ctx, cond->second, {});
  auto notTaken = ctx.create<NotOp>(taken);
  if (failed(notTaken)) {
    markUnsupported(node, index, "its condition cannot be negated");
    return;
  }
  RunTimeBranch thenBranch = importRunTimeBranch(node, index, "then_branch");
  RunTimeBranch elseBranch = importRunTimeBranch(node, index, "else_branch");
  if (thenBranch.imported() != elseBranch.imported()) {
    bool thenLeftOut = !thenBranch.imported();
    const RunTimeBranch &kept = thenLeftOut ? elseBranch : thenBranch;
    // The kept branch's checks are the If's own: it always runs.
    if (leaveOutBranch(ctx, index, thenLeftOut ? thenBranch : elseBranch,
                       thenLeftOut ? taken : *notTaken)) {
      for (auto [output, value] : llvm::zip(node.output(), *kept.outputs))
        values[output] = value;
      return;
    }
  }
  if (!thenBranch.outputs || !elseBranch.outputs)
    return;
  // Both branches run; the run-time checks of each hold only when it is
  // the one taken.
  for (size_t i = thenBranch.checksBegin; i < elseBranch.checksEnd; ++i) {
    auto gated = ctx.create<AndOp>(ValueRange{
        runtimeChecks[i].first, i < thenBranch.checksEnd ? taken : *notTaken});
    if (failed(gated)) {
      markUnsupported(node, index, "a branch's run-time check is malformed");
      return;
    }
    runtimeChecks[i].first = *gated;
  }
  for (auto [output, a, b] :
       llvm::zip(node.output(), *thenBranch.outputs, *elseBranch.outputs)) {
    if (!a || !b) {
      poisoned.insert(output);
      continue;
    }
    if (a.getType() != b.getType()) {
      markUnsupported(node, index,
                      "condition '" + condName +
                          "' is known only at run time, and the branches "
                          "give '" +
                          output + "' different types (" +
                          typeString(a.getType()) + ", " +
                          typeString(b.getType()) + ")");
      return;
    }
    auto selected = ctx.create<WhereOp>(ValueRange{taken, a, b});
    if (failed(selected)) {
      markUnsupported(node, index, "the branches' outputs cannot be selected");
      return;
    }
    values[output] = *selected;
  }
}
