//===- OnnxClassicMLOpHandlers.cpp - ai.onnx.ml: trees, linear models -----===//
//
// The ai.onnx.ml ops that scikit-learn exports (skl2onnx) write, built from
// kiln ops so that every target runs them with no kernel of their own:
//
// - Tree ensembles walk all trees of all rows at once, one level per step:
//   the node index of each (row, tree) gathers the node's feature, the row's
//   value of it and the node's threshold, and a select takes the true or the
//   false child. Leaves point at themselves, so the walk runs the deepest
//   tree's depth for every tree. The reached leaves gather their weights,
//   which are summed over the trees. TreeEnsemble (opset 5), which lists
//   leaves apart from the nodes and reads its attributes from tensors (X's
//   own type: LightGBM exports in float64), is read into the same table.
// - Linear models are a Gemm with the post transform and an ArgMax.
// - Scaler, Normalizer and ArrayFeatureExtractor are elementwise ops,
//   reductions and a Gather.
//
// Two classes scored by one value s follow onnxruntime's special case:
// label 1 where s passes a threshold, scores [1 - s, s], [-s, s] or the
// logistic of both (see setBinaryClassifierOutputs). What onnxruntime computes
// by rules of its own beyond that is refused by name: two classes that both
// carry tree weights, string labels, and the SOFTMAX_ZERO and PROBIT
// transforms.
//
//===----------------------------------------------------------------------===//
#include "ConstantEvaluator.h"
#include "NodeContext.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

static constexpr const char *kMLDomain = "ai.onnx.ml";

namespace {

std::vector<int64_t> intsOf(NodeContext &ctx, StringRef name) {
  return ctx.intsAttr(name).value_or(std::vector<int64_t>{});
}

/// A tensor attribute's values (floating-point or integer); none when it
/// is absent or holds another type.
std::optional<std::vector<double>> tensorValuesOf(NodeContext &ctx,
                                                  StringRef name) {
  const onnx::AttributeProto *a = ctx.attr(name);
  if (!a || !a->has_t())
    return std::nullopt;
  ConstTensor tensor;
  std::string error;
  if (failed(readTensorBytes(a->t(), tensor, error)))
    return std::nullopt;
  std::vector<double> values;
  size_t width = bytesPerElement(tensor.onnxType);
  const char *bytes = tensor.bytes.data();
  for (size_t at = 0; width && at + width <= tensor.bytes.size(); at += width) {
    switch (tensor.onnxType) {
    case onnx::TensorProto::FLOAT:
      values.push_back(
          llvm::bit_cast<float>(llvm::support::endian::read32le(bytes + at)));
      break;
    case onnx::TensorProto::DOUBLE:
      values.push_back(
          llvm::bit_cast<double>(llvm::support::endian::read64le(bytes + at)));
      break;
    case onnx::TensorProto::FLOAT16: {
      APFloat half(APFloat::IEEEhalf(),
                   APInt(16, llvm::support::endian::read16le(bytes + at)));
      bool losesInfo = false;
      (void)half.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                         &losesInfo);
      values.push_back(half.convertToDouble());
      break;
    }
    case onnx::TensorProto::UINT8:
      values.push_back(uint8_t(bytes[at]));
      break;
    case onnx::TensorProto::INT32:
      values.push_back(int32_t(llvm::support::endian::read32le(bytes + at)));
      break;
    case onnx::TensorProto::INT64:
      values.push_back(int64_t(llvm::support::endian::read64le(bytes + at)));
      break;
    default:
      return std::nullopt;
    }
  }
  return values;
}

/// A float list attribute, or its `_as_tensor` (double) form.
std::vector<double> floatsOf(NodeContext &ctx, StringRef name) {
  std::vector<double> values;
  if (const auto *a = ctx.attr(name))
    values.assign(a->floats().begin(), a->floats().end());
  if (std::optional<std::vector<double>> tensor =
          tensorValuesOf(ctx, (name + "_as_tensor").str());
      tensor && !tensor->empty())
    values = std::move(*tensor);
  return values;
}

std::vector<std::string> stringsOf(NodeContext &ctx, StringRef name) {
  std::vector<std::string> values;
  if (const auto *a = ctx.attr(name))
    values.assign(a->strings().begin(), a->strings().end());
  return values;
}

Value constantOf(NodeContext &ctx, ArrayRef<int64_t> shape, Type element,
                 ArrayRef<double> values) {
  return ctx.constant(RankedTensorType::get(shape, element), values);
}

/// The model's features as a float tensor of rank 2 (integers converted).
FailureOr<Value> featuresOf(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  if (rankOf(x) == 1)
    x = reshapeTo(ctx, x, {1, shapeOf(x)[0]});
  if (rankOf(x) != 2)
    return ctx.fail("X must have rank 1 or 2");
  if (!isa<FloatType>(getElementTypeOrSelf(x.getType())))
    x = CastOp::create(ctx.b(), ctx.getLoc(),
                       RankedTensorType::get(shapeOf(x), ctx.b().getF32Type()),
                       x);
  return x;
}

/// post_transform applied to scores [N, C].
FailureOr<Value> postTransform(NodeContext &ctx, Value scores) {
  std::string transform = ctx.stringAttr("post_transform", "NONE");
  auto &b = ctx.b();
  if (transform == "NONE")
    return scores;
  if (transform == "SOFTMAX")
    return ctx.create<SoftmaxOp>(
        scores, {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
  if (transform == "LOGISTIC")
    return ctx.create<SigmoidOp>(scores);
  return ctx.fail("post_transform '" + transform + "' is not supported yet");
}

/// Labels: the class of the largest score among `candidates` (scores,
/// masked where a class has no score), as `labels[class]`.
FailureOr<Value> labelsOf(NodeContext &ctx, Value candidates,
                          ArrayRef<int64_t> labels) {
  auto &b = ctx.b();
  auto index = ctx.create<ArgMaxOp>(
      candidates, {b.getNamedAttr("axis", b.getI64IntegerAttr(1)),
                   b.getNamedAttr("keepdims", b.getBoolAttr(false)),
                   b.getNamedAttr("select_last_index", b.getBoolAttr(false))});
  if (failed(index))
    return failure();
  std::vector<double> table(labels.begin(), labels.end());
  Value labelTable =
      constantOf(ctx, {int64_t(labels.size())}, b.getIntegerType(64), table);
  return ctx.create<GatherOp>(ValueRange{labelTable, *index},
                              {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
}

/// A classifier's outputs: the labels of the best `candidates` and the
/// post-transformed scores.
LogicalResult setClassifierOutputs(NodeContext &ctx, Value candidates,
                                   Value scores, ArrayRef<int64_t> labels) {
  auto label = labelsOf(ctx, candidates, labels);
  auto transformed = postTransform(ctx, scores);
  if (failed(label) || failed(transformed))
    return failure();
  ctx.setOutput(0, *label);
  ctx.setOutput(1, *transformed);
  return success();
}

/// How onnxruntime scores two classes from one value s per row ([N, 1]).
enum class BinaryScores {
  Complement, ///< [1 - s, s]
  Negation,   ///< [-s, s]
  Logistic,   ///< [sigmoid(-s), sigmoid(s)]
};

/// The label (labels[1] where s > threshold) and the two scores of a
/// two-class model from its one score.
LogicalResult setBinaryClassifierOutputs(NodeContext &ctx, Value s,
                                         ArrayRef<int64_t> labels,
                                         double threshold, BinaryScores rule) {
  auto &b = ctx.b();
  Type i64 = b.getIntegerType(64);
  auto positive =
      ctx.create<GreaterOp>(ValueRange{s, ctx.scalar(s, threshold)});
  if (failed(positive))
    return failure();
  auto label = ctx.create<WhereOp>(
      ValueRange{*positive, constantOf(ctx, {1}, i64, {double(labels[1])}),
                 constantOf(ctx, {1}, i64, {double(labels[0])})});
  FailureOr<Value> first = failure(), second = s;
  switch (rule) {
  case BinaryScores::Complement:
    first = ctx.create<SubOp>(ValueRange{ctx.scalar(s, 1.0), s});
    break;
  case BinaryScores::Negation:
    first = ctx.create<NegOp>(s);
    break;
  case BinaryScores::Logistic:
    if (auto negated = ctx.create<NegOp>(s); succeeded(negated))
      first = ctx.create<SigmoidOp>(*negated);
    second = ctx.create<SigmoidOp>(s);
    break;
  }
  if (failed(label) || failed(first) || failed(second))
    return failure();
  auto scores =
      ctx.create<ConcatOp>(ValueRange{*first, *second},
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
  if (failed(scores))
    return failure();
  ctx.setOutput(0, reshapeTo(ctx, *label, {shapeOf(s)[0]}));
  ctx.setOutput(1, *scores);
  return success();
}

//===----------------------------------------------------------------------===//
// Tree ensembles
//===----------------------------------------------------------------------===//

enum class Branch { Leaf, Leq, Lt, Gte, Gt, Eq, Neq };

std::optional<Branch> branchOf(StringRef mode) {
  return llvm::StringSwitch<std::optional<Branch>>(mode)
      .Case("LEAF", Branch::Leaf)
      .Case("BRANCH_LEQ", Branch::Leq)
      .Case("BRANCH_LT", Branch::Lt)
      .Case("BRANCH_GTE", Branch::Gte)
      .Case("BRANCH_GT", Branch::Gt)
      .Case("BRANCH_EQ", Branch::Eq)
      .Case("BRANCH_NEQ", Branch::Neq)
      .Default(std::nullopt);
}

/// Every tree's nodes in one table, indexed 0..size-1 across trees.
struct Forest {
  std::vector<Branch> modes;
  std::vector<double> features, thresholds, trueChild, falseChild, missingTrue;
  std::vector<double> roots; ///< per tree, in order of tree id
  std::map<std::pair<int64_t, int64_t>, int64_t> indexOf; ///< (tree, node)
  int64_t depth = 0; ///< most branch decisions from a root to a leaf
  int64_t numFeatures = 0;
};

LogicalResult measureDepth(NodeContext &ctx, Forest &forest);

/// Reads and checks the nodes_* attributes; leaves point at themselves.
FailureOr<Forest> readForest(NodeContext &ctx) {
  std::vector<int64_t> treeIds = intsOf(ctx, "nodes_treeids"),
                       nodeIds = intsOf(ctx, "nodes_nodeids"),
                       featureIds = intsOf(ctx, "nodes_featureids"),
                       trueIds = intsOf(ctx, "nodes_truenodeids"),
                       falseIds = intsOf(ctx, "nodes_falsenodeids"),
                       missing = intsOf(ctx, "nodes_missing_value_tracks_true");
  std::vector<std::string> modes = stringsOf(ctx, "nodes_modes");
  std::vector<double> values = floatsOf(ctx, "nodes_values");
  size_t n = treeIds.size();
  if (n == 0)
    return ctx.fail("the ensemble has no nodes");
  if (nodeIds.size() != n || featureIds.size() != n || modes.size() != n ||
      trueIds.size() != n || falseIds.size() != n || values.size() != n ||
      (!missing.empty() && missing.size() != n))
    return ctx.fail("the nodes_* attributes differ in length");
  Forest forest;
  std::map<int64_t, int64_t> rootOf; // tree id -> its first node's index
  for (size_t i = 0; i < n; ++i) {
    if (!forest.indexOf.emplace(std::make_pair(treeIds[i], nodeIds[i]), i)
             .second)
      return ctx.fail("node " + Twine(nodeIds[i]) + " of tree " +
                      Twine(treeIds[i]) + " is listed twice");
    rootOf.emplace(treeIds[i], int64_t(i));
  }
  for (auto [tree, root] : rootOf)
    forest.roots.push_back(double(root));
  for (size_t i = 0; i < n; ++i) {
    std::optional<Branch> mode = branchOf(modes[i]);
    if (!mode)
      return ctx.fail("node mode '" + modes[i] + "' is not valid");
    forest.modes.push_back(*mode);
    int64_t self = int64_t(i), onTrue = self, onFalse = self;
    if (*mode != Branch::Leaf) {
      auto t = forest.indexOf.find({treeIds[i], trueIds[i]});
      auto f = forest.indexOf.find({treeIds[i], falseIds[i]});
      if (t == forest.indexOf.end() || f == forest.indexOf.end())
        return ctx.fail("node " + Twine(nodeIds[i]) + " of tree " +
                        Twine(treeIds[i]) + " has a child that is not a node");
      if (featureIds[i] < 0)
        return ctx.fail("node " + Twine(nodeIds[i]) + " of tree " +
                        Twine(treeIds[i]) + " reads a negative feature");
      onTrue = t->second;
      onFalse = f->second;
      forest.numFeatures = std::max(forest.numFeatures, featureIds[i] + 1);
    }
    forest.features.push_back(*mode == Branch::Leaf ? 0 : featureIds[i]);
    forest.thresholds.push_back(values[i]);
    forest.trueChild.push_back(double(onTrue));
    forest.falseChild.push_back(double(onFalse));
    forest.missingTrue.push_back(missing.empty() ? 0 : double(missing[i] != 0));
  }
  if (failed(measureDepth(ctx, forest)))
    return failure();
  return forest;
}

/// Sets the forest's depth: the longest path from a root to a leaf, each
/// node's computed once (nodes may share children); a child that leads
/// back to an ancestor (a cycle) would never reach a leaf.
LogicalResult measureDepth(NodeContext &ctx, Forest &forest) {
  size_t n = forest.modes.size();
  enum State : char { Unseen, Open, Done };
  std::vector<State> state(n, Unseen);
  std::vector<int64_t> height(n, 0);
  for (double root : forest.roots) {
    SmallVector<int64_t> stack = {int64_t(root)};
    while (!stack.empty()) {
      int64_t node = stack.back();
      if (state[node] == Done) {
        stack.pop_back();
        continue;
      }
      int64_t children[2] = {int64_t(forest.trueChild[node]),
                             int64_t(forest.falseChild[node])};
      if (forest.modes[node] == Branch::Leaf) {
        state[node] = Done;
        stack.pop_back();
        continue;
      }
      if (state[node] == Open) {
        height[node] = 1 + std::max(height[children[0]], height[children[1]]);
        state[node] = Done;
        stack.pop_back();
        continue;
      }
      state[node] = Open;
      for (int64_t child : children) {
        if (state[child] == Open)
          return ctx.fail("a tree's nodes form a cycle");
        if (state[child] == Unseen)
          stack.push_back(child);
      }
    }
    forest.depth = std::max(forest.depth, height[int64_t(root)]);
  }
  return success();
}

/// Builds one walk step's ops; remembers the first failure.
class WalkBuilder : public ChainedOps {
public:
  WalkBuilder(NodeContext &ctx) : ctx(ctx), b(ctx.b()) {}

  Value gather(Value table, Value indices) {
    return check(
        ctx.create<GatherOp>(ValueRange{table, indices},
                             {b.getNamedAttr("axis", b.getI64IntegerAttr(0))}));
  }
  Value gatherElements(Value x, Value indices) {
    return check(ctx.create<GatherElementsOp>(
        ValueRange{x, indices},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(1))}));
  }
  template <typename OpTy> Value op(ValueRange operands) {
    return check(ctx.create<OpTy>(operands));
  }
  Value compare(Branch mode, Value x, Value threshold) {
    switch (mode) {
    case Branch::Leq:
      return op<LessEqualOp>({x, threshold});
    case Branch::Lt:
      return op<LessOp>({x, threshold});
    case Branch::Gte:
      return op<GreaterEqualOp>({x, threshold});
    case Branch::Gt:
      return op<GreaterOp>({x, threshold});
    case Branch::Eq:
      return op<EqualOp>({x, threshold});
    case Branch::Neq:
      return op<NotOp>({op<EqualOp>({x, threshold})});
    case Branch::Leaf:
      break;
    }
    return op<LessEqualOp>({x, threshold});
  }

private:
  NodeContext &ctx;
  OpBuilder &b;
};

/// The leaf each (row, tree) reaches: [N, trees] int64 node indices.
FailureOr<Value> walkTrees(NodeContext &ctx, const Forest &forest, Value x) {
  auto &b = ctx.b();
  Type i64 = b.getIntegerType(64), i1 = b.getI1Type();
  Type element = getElementTypeOrSelf(x.getType());
  int64_t rows = shapeOf(x)[0], trees = forest.roots.size();
  int64_t nodes = forest.modes.size();
  if (forest.numFeatures > shapeOf(x)[1])
    return ctx.fail("the trees read feature " + Twine(forest.numFeatures - 1) +
                    " of " + Twine(shapeOf(x)[1]));
  SmallVector<Branch> branchModes;
  for (Branch mode : forest.modes)
    if (mode != Branch::Leaf && !llvm::is_contained(branchModes, mode))
      branchModes.push_back(mode);
  bool tracksMissing = llvm::is_contained(forest.missingTrue, 1.0);

  Value features = constantOf(ctx, {nodes}, i64, forest.features);
  Value thresholds = constantOf(ctx, {nodes}, element, forest.thresholds);
  Value onTrue = constantOf(ctx, {nodes}, i64, forest.trueChild);
  Value onFalse = constantOf(ctx, {nodes}, i64, forest.falseChild);
  Value missingTrue = constantOf(ctx, {nodes}, i1, forest.missingTrue);
  std::vector<double> modeCodes;
  for (Branch mode : forest.modes)
    modeCodes.push_back(double(mode));
  Value modes = constantOf(ctx, {nodes}, i64, modeCodes);

  WalkBuilder w(ctx);
  Value node = ExpandOp::create(b, ctx.getLoc(),
                                RankedTensorType::get({rows, trees}, i64),
                                constantOf(ctx, {1, trees}, i64, forest.roots));
  for (int64_t level = 0; level < forest.depth && !w.failed(); ++level) {
    Value value = w.gatherElements(x, w.gather(features, node));
    Value threshold = w.gather(thresholds, node);
    Value goesTrue = w.compare(branchModes.front(), value, threshold);
    if (branchModes.size() > 1) {
      // Mixed modes: each node's own comparison.
      Value mode = w.gather(modes, node);
      for (Branch other : ArrayRef<Branch>(branchModes).drop_front()) {
        Value isOther = w.op<EqualOp>({mode, ctx.scalar(mode, double(other))});
        goesTrue = w.op<WhereOp>(
            {isOther, w.compare(other, value, threshold), goesTrue});
      }
    }
    // A missing value (NaN) fails every comparison but NEQ; where the node
    // says so it goes to the true child, as onnxruntime decides.
    if (tracksMissing)
      goesTrue = w.op<OrOp>(
          {goesTrue,
           w.op<AndOp>({w.op<IsNaNOp>({value}), w.gather(missingTrue, node)})});
    node = w.op<WhereOp>(
        {goesTrue, w.gather(onTrue, node), w.gather(onFalse, node)});
  }
  if (w.failed())
    return ctx.fail("could not build the tree walk");
  return node;
}

/// Per node, the weight of each of `outputs` classes or targets (zero where
/// none), and whether the node gives that output any weight.
struct LeafWeights {
  std::vector<double> weights, hasWeight;
};

FailureOr<LeafWeights> readLeafWeights(NodeContext &ctx, const Forest &forest,
                                       StringRef prefix, int64_t outputs) {
  std::string p = prefix.str();
  std::vector<int64_t> treeIds = intsOf(ctx, p + "_treeids"),
                       nodeIds = intsOf(ctx, p + "_nodeids"),
                       ids = intsOf(ctx, p + "_ids");
  std::vector<double> weights = floatsOf(ctx, p + "_weights");
  size_t n = treeIds.size();
  if (nodeIds.size() != n || ids.size() != n || weights.size() != n)
    return ctx.fail("the " + p + "_* attributes differ in length");
  int64_t nodes = forest.modes.size();
  if (outputs > kMaxConstantElements / nodes)
    return ctx.fail(Twine(nodes) + " nodes x " + Twine(outputs) +
                    " outputs make too large a weight table");
  LeafWeights leaves{std::vector<double>(nodes * outputs, 0.0),
                     std::vector<double>(nodes * outputs, 0.0)};
  for (size_t i = 0; i < n; ++i) {
    auto it = forest.indexOf.find({treeIds[i], nodeIds[i]});
    if (it == forest.indexOf.end())
      return ctx.fail(p + " weight " + Twine(i) + " names no node");
    if (ids[i] < 0 || ids[i] >= outputs)
      return ctx.fail(p + "_ids[" + Twine(i) + "] = " + Twine(ids[i]) +
                      " is not below " + Twine(outputs));
    leaves.weights[it->second * outputs + ids[i]] += weights[i];
    leaves.hasWeight[it->second * outputs + ids[i]] = 1;
  }
  return leaves;
}

/// Sums (or averages) the leaves' weights over the trees, plus base_values:
/// [N, outputs].
FailureOr<Value> aggregate(NodeContext &ctx, Value leafNodes,
                           ArrayRef<double> table, int64_t outputs,
                           Type element, bool average) {
  auto &b = ctx.b();
  int64_t nodes = table.size() / outputs;
  int64_t trees = shapeOf(leafNodes)[1];
  Value weights = constantOf(ctx, {nodes, outputs}, element, table);
  auto reached =
      ctx.create<GatherOp>(ValueRange{weights, leafNodes},
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  if (failed(reached))
    return failure();
  auto sum = ctx.create<ReduceSumOp>(
      *reached, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({1})),
                 b.getNamedAttr("keepdims", b.getBoolAttr(false))});
  if (failed(sum))
    return failure();
  Value total = *sum;
  if (average) {
    auto mean =
        ctx.create<DivOp>(ValueRange{total, ctx.scalar(total, double(trees))});
    if (failed(mean))
      return failure();
    total = *mean;
  }
  std::vector<double> base = floatsOf(ctx, "base_values");
  if (base.empty())
    return total;
  if (int64_t(base.size()) != outputs)
    return ctx.fail("base_values has " + Twine(base.size()) + " values for " +
                    Twine(outputs) + " outputs");
  return ctx.create<AddOp>(
      ValueRange{total, constantOf(ctx, {outputs}, element, base)});
}

/// Regressors: only the identity transform, and a positive output count
/// from attribute `countName`.
FailureOr<int64_t> regressionTargets(NodeContext &ctx, StringRef countName) {
  std::string transform = ctx.stringAttr("post_transform", "NONE");
  if (transform != "NONE")
    return ctx.fail("post_transform '" + transform + "' is not supported yet");
  int64_t targets = ctx.intAttr(countName, 1);
  if (targets < 1)
    return ctx.fail(countName + " must be positive");
  return targets;
}

LogicalResult importTreeEnsembleRegressor(NodeContext &ctx) {
  auto x = featuresOf(ctx);
  if (failed(x))
    return failure();
  std::string function = ctx.stringAttr("aggregate_function", "SUM");
  if (function != "SUM" && function != "AVERAGE")
    return ctx.fail("aggregate_function '" + function +
                    "' is not supported yet");
  auto targets = regressionTargets(ctx, "n_targets");
  if (failed(targets))
    return failure();
  auto forest = readForest(ctx);
  if (failed(forest))
    return failure();
  auto leaves = readLeafWeights(ctx, *forest, "target", *targets);
  if (failed(leaves))
    return failure();
  // A target that no reached leaf weighs is scored by onnxruntime's rules
  // of its own (0, whatever the base value): refused, not guessed.
  for (size_t node = 0; node < forest->modes.size(); ++node)
    for (int64_t target = 0; target < *targets; ++target)
      if (forest->modes[node] == Branch::Leaf &&
          !leaves->hasWeight[node * *targets + target])
        return ctx.fail("leaf " + Twine(node) + " has no weight for target " +
                        Twine(target) + ", which is not supported yet");
  auto leafNodes = walkTrees(ctx, *forest, *x);
  if (failed(leafNodes))
    return failure();
  auto y = aggregate(ctx, *leafNodes, leaves->weights, *targets,
                     ctx.b().getF32Type(), function == "AVERAGE");
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// TreeEnsemble's nodes_modes codes, in order (BRANCH_MEMBER, 6, tests
/// set membership, which the walk does not).
constexpr Branch kTreeEnsembleModes[] = {Branch::Leq, Branch::Lt, Branch::Gte,
                                         Branch::Gt,  Branch::Eq, Branch::Neq};

/// TreeEnsemble (ai.onnx.ml 5) lists interior nodes and leaves apart, each
/// child a node or a leaf by its *_leafs flag: read into the table the
/// older ensembles use, the leaves after the nodes, and each leaf's weight
/// for its target.
FailureOr<Forest> readTreeEnsemble(NodeContext &ctx, int64_t targets,
                                   std::vector<double> &leafWeights) {
  std::vector<int64_t> features = intsOf(ctx, "nodes_featureids"),
                       trueIds = intsOf(ctx, "nodes_truenodeids"),
                       trueLeafs = intsOf(ctx, "nodes_trueleafs"),
                       falseIds = intsOf(ctx, "nodes_falsenodeids"),
                       falseLeafs = intsOf(ctx, "nodes_falseleafs"),
                       missing = intsOf(ctx, "nodes_missing_value_tracks_true"),
                       leafTargets = intsOf(ctx, "leaf_targetids"),
                       roots = intsOf(ctx, "tree_roots");
  std::optional<std::vector<double>> modes = tensorValuesOf(ctx, "nodes_modes"),
                                     splits =
                                         tensorValuesOf(ctx, "nodes_splits"),
                                     weights =
                                         tensorValuesOf(ctx, "leaf_weights");
  if (!modes || !splits || !weights)
    return ctx.fail("nodes_modes, nodes_splits and leaf_weights must be "
                    "numeric tensors");
  size_t n = features.size(), leaves = leafTargets.size();
  if (n == 0 || leaves == 0 || roots.empty())
    return ctx.fail("the ensemble has no nodes, leaves or trees");
  if (trueIds.size() != n || trueLeafs.size() != n || falseIds.size() != n ||
      falseLeafs.size() != n || modes->size() != n || splits->size() != n ||
      (!missing.empty() && missing.size() != n))
    return ctx.fail("the nodes_* attributes differ in length");
  if (weights->size() != leaves)
    return ctx.fail("leaf_weights and leaf_targetids differ in length");
  if (int64_t(n + leaves) > kMaxConstantElements / targets)
    return ctx.fail(Twine(n + leaves) + " nodes and leaves x " +
                    Twine(targets) + " targets make too large a weight table");
  Forest forest;
  auto child = [&](int64_t id, int64_t isLeaf) -> std::optional<double> {
    if (id < 0 || id >= int64_t(isLeaf ? leaves : n))
      return std::nullopt;
    return double(isLeaf ? int64_t(n) + id : id);
  };
  for (size_t i = 0; i < n; ++i) {
    double code = (*modes)[i];
    if (code == 6)
      return ctx.fail(
          "node " + Twine(i) +
          " has mode 6 (BRANCH_MEMBER), which is not supported yet");
    if (code < 0 || code >= std::size(kTreeEnsembleModes) ||
        code != double(int64_t(code)))
      return ctx.fail("node " + Twine(i) + " has mode " + std::to_string(code) +
                      ", which is not a valid one");
    std::optional<double> onTrue = child(trueIds[i], trueLeafs[i]),
                          onFalse = child(falseIds[i], falseLeafs[i]);
    if (!onTrue || !onFalse)
      return ctx.fail("node " + Twine(i) +
                      " has a child that is not a node "
                      "or leaf");
    if (features[i] < 0)
      return ctx.fail("node " + Twine(i) + " reads a negative feature");
    forest.modes.push_back(kTreeEnsembleModes[int(code)]);
    forest.features.push_back(features[i]);
    forest.thresholds.push_back((*splits)[i]);
    forest.trueChild.push_back(*onTrue);
    forest.falseChild.push_back(*onFalse);
    forest.missingTrue.push_back(missing.empty() ? 0 : double(missing[i] != 0));
    forest.numFeatures = std::max(forest.numFeatures, features[i] + 1);
  }
  leafWeights.assign((n + leaves) * targets, 0.0);
  for (size_t j = 0; j < leaves; ++j) {
    double self = double(n + j);
    forest.modes.push_back(Branch::Leaf);
    forest.features.push_back(0);
    forest.thresholds.push_back(0);
    forest.trueChild.push_back(self);
    forest.falseChild.push_back(self);
    forest.missingTrue.push_back(0);
    if (leafTargets[j] < 0 || leafTargets[j] >= targets)
      return ctx.fail("leaf_targetids[" + Twine(j) +
                      "] = " + Twine(leafTargets[j]) +
                      " is not below n_targets " + Twine(targets));
    leafWeights[(n + j) * targets + leafTargets[j]] += (*weights)[j];
  }
  for (int64_t root : roots) {
    if (root < 0 || root >= int64_t(n))
      return ctx.fail("tree root " + Twine(root) + " is not a node");
    forest.roots.push_back(double(root));
  }
  if (failed(measureDepth(ctx, forest)))
    return failure();
  return forest;
}

LogicalResult importTreeEnsemble(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float)))
    return failure();
  if (rankOf(x) == 1)
    x = reshapeTo(ctx, x, {1, shapeOf(x)[0]});
  if (rankOf(x) != 2)
    return ctx.fail("X must have rank 1 or 2");
  // aggregate_function: 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX; post_transform: 0
  // NONE, then SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT.
  int64_t function = ctx.intAttr("aggregate_function", 1);
  if (function != 0 && function != 1)
    return ctx.fail("aggregate_function " + Twine(function) +
                    (function == 2 || function == 3 ? " (MIN, MAX)" : "") +
                    " is not supported yet");
  if (int64_t transform = ctx.intAttr("post_transform", 0))
    return ctx.fail("post_transform " + Twine(transform) +
                    " is not supported yet");
  int64_t targets = ctx.intAttr("n_targets", 0);
  if (targets < 1)
    return ctx.fail("n_targets must be positive");
  std::vector<double> leafWeights;
  auto forest = readTreeEnsemble(ctx, targets, leafWeights);
  if (failed(forest))
    return failure();
  auto leafNodes = walkTrees(ctx, *forest, x);
  if (failed(leafNodes))
    return failure();
  auto y = aggregate(ctx, *leafNodes, leafWeights, targets,
                     getElementTypeOrSelf(x.getType()), function == 0);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// Class labels (int64 only); fails for strings and for two classes.
FailureOr<std::vector<int64_t>>
classLabels(NodeContext &ctx, StringRef intsName, StringRef stringsName) {
  if (!stringsOf(ctx, stringsName).empty())
    return ctx.fail("string class labels are not supported (tensors of "
                    "strings); export integer labels");
  std::vector<int64_t> labels = intsOf(ctx, intsName);
  if (labels.size() < 2)
    return ctx.fail(Twine(labels.size()) +
                    " class labels: a classifier needs two or more");
  return labels;
}

/// A two-class tree ensemble whose weights all score class 0 (what skl2onnx
/// writes): s is their sum plus the one base value.
LogicalResult importBinaryTreeClassifier(NodeContext &ctx, Value x,
                                         ArrayRef<int64_t> labels) {
  if (llvm::any_of(intsOf(ctx, "class_ids"), [](int64_t id) { return id; }))
    return ctx.fail("two classes with weights for class 1: onnxruntime "
                    "scores them by rules of its own, which are not "
                    "supported yet");
  std::vector<double> base = floatsOf(ctx, "base_values");
  if (base.size() > 1)
    return ctx.fail("two classes scored by one weight take at most one "
                    "base value, not " +
                    Twine(base.size()));
  std::string transform = ctx.stringAttr("post_transform", "NONE");
  if (transform == "PROBIT")
    return ctx.fail("post_transform 'PROBIT' is not supported yet");
  auto forest = readForest(ctx);
  if (failed(forest))
    return failure();
  auto leaves = readLeafWeights(ctx, *forest, "class", 1);
  if (failed(leaves))
    return failure();
  // onnxruntime ignores the base value of a row no leaf weighs: refused.
  for (size_t node = 0; node < forest->modes.size(); ++node)
    if (forest->modes[node] == Branch::Leaf && !leaves->hasWeight[node])
      return ctx.fail("leaf " + Twine(node) +
                      " has no weight, which is not supported yet");
  auto leafNodes = walkTrees(ctx, *forest, x);
  if (failed(leafNodes))
    return failure();
  auto s = aggregate(ctx, *leafNodes, leaves->weights, 1, ctx.b().getF32Type(),
                     false);
  if (failed(s))
    return failure();
  // Weights that are all probabilities (no negative one) put the decision
  // at 0.5, others at 0.
  bool allPositive = llvm::all_of(floatsOf(ctx, "class_weights"),
                                  [](double w) { return w >= 0; });
  BinaryScores rule = transform == "LOGISTIC" ? BinaryScores::Logistic
                      : allPositive           ? BinaryScores::Complement
                                              : BinaryScores::Negation;
  return setBinaryClassifierOutputs(ctx, *s, labels, allPositive ? 0.5 : 0.0,
                                    rule);
}

LogicalResult importTreeEnsembleClassifier(NodeContext &ctx) {
  auto x = featuresOf(ctx);
  if (failed(x))
    return failure();
  auto labels = classLabels(ctx, "classlabels_int64s", "classlabels_strings");
  if (failed(labels))
    return failure();
  if (labels->size() == 2)
    return importBinaryTreeClassifier(ctx, *x, *labels);
  int64_t classes = labels->size();
  auto forest = readForest(ctx);
  if (failed(forest))
    return failure();
  auto leaves = readLeafWeights(ctx, *forest, "class", classes);
  if (failed(leaves))
    return failure();
  auto leafNodes = walkTrees(ctx, *forest, *x);
  if (failed(leafNodes))
    return failure();
  Type f32 = ctx.b().getF32Type();
  auto scores =
      aggregate(ctx, *leafNodes, leaves->weights, classes, f32, false);
  if (failed(scores))
    return failure();
  // The label is the best class among those some reached leaf (or a base
  // value) scores, before the transform, as onnxruntime picks it.
  Value candidates = *scores;
  if (floatsOf(ctx, "base_values").empty()) {
    auto scored =
        aggregate(ctx, *leafNodes, leaves->hasWeight, classes, f32, false);
    if (failed(scored))
      return failure();
    auto isScored =
        ctx.create<GreaterOp>(ValueRange{*scored, ctx.scalar(*scored, 0)});
    if (failed(isScored))
      return failure();
    auto masked = ctx.create<WhereOp>(ValueRange{
        *isScored, *scores,
        ctx.scalar(*scores, -std::numeric_limits<double>::infinity())});
    if (failed(masked))
      return failure();
    candidates = *masked;
  }
  return setClassifierOutputs(ctx, candidates, *scores, *labels);
}

//===----------------------------------------------------------------------===//
// Linear models and preprocessing
//===----------------------------------------------------------------------===//

/// X · coefficientsᵀ + intercepts, with `outputs` rows of coefficients.
FailureOr<Value> linearScores(NodeContext &ctx, Value x, int64_t outputs) {
  std::vector<double> coefficients = floatsOf(ctx, "coefficients");
  std::vector<double> intercepts = floatsOf(ctx, "intercepts");
  int64_t features = shapeOf(x)[1], expected;
  if (__builtin_mul_overflow(outputs, features, &expected) ||
      int64_t(coefficients.size()) != expected)
    return ctx.fail("coefficients has " + Twine(coefficients.size()) +
                    " values, expected " + Twine(outputs) + " x " +
                    Twine(features));
  if (!intercepts.empty() && int64_t(intercepts.size()) != outputs)
    return ctx.fail("intercepts has " + Twine(intercepts.size()) +
                    " values, expected " + Twine(outputs));
  Type element = getElementTypeOrSelf(x.getType());
  SmallVector<Value> operands = {
      x, constantOf(ctx, {outputs, features}, element, coefficients)};
  if (!intercepts.empty())
    operands.push_back(constantOf(ctx, {outputs}, element, intercepts));
  auto &b = ctx.b();
  return ctx.create<GemmOp>(operands,
                            {b.getNamedAttr("transB", b.getBoolAttr(true))});
}

LogicalResult importLinearClassifier(NodeContext &ctx) {
  auto x = featuresOf(ctx);
  if (failed(x))
    return failure();
  auto labels = classLabels(ctx, "classlabels_ints", "classlabels_strings");
  if (failed(labels))
    return failure();
  // onnxruntime scores as many classes as there are intercepts; one score
  // for two labels is the binary case.
  int64_t scored = floatsOf(ctx, "intercepts").size();
  bool binary = labels->size() == 2 && scored == 1;
  if (!binary && scored != int64_t(labels->size()))
    return ctx.fail(Twine(scored) + " intercepts for " + Twine(labels->size()) +
                    " class labels");
  auto scores = linearScores(ctx, *x, scored);
  if (failed(scores))
    return failure();
  if (!binary)
    return setClassifierOutputs(ctx, *scores, *scores, *labels);
  std::string transform = ctx.stringAttr("post_transform", "NONE");
  if (transform == "PROBIT")
    return ctx.fail("post_transform 'PROBIT' is not supported yet");
  // onnxruntime writes [1 - s, s] for every other transform.
  return setBinaryClassifierOutputs(ctx, *scores, *labels, 0.0,
                                    transform == "LOGISTIC"
                                        ? BinaryScores::Logistic
                                        : BinaryScores::Complement);
}

LogicalResult importLinearRegressor(NodeContext &ctx) {
  auto x = featuresOf(ctx);
  if (failed(x))
    return failure();
  auto targets = regressionTargets(ctx, "targets");
  if (failed(targets))
    return failure();
  return setResult(ctx, linearScores(ctx, *x, *targets));
}

/// (x - offset) * scale, each one value or one per feature.
LogicalResult importScaler(NodeContext &ctx) {
  auto x = featuresOf(ctx);
  if (failed(x))
    return failure();
  int64_t features = shapeOf(*x)[1];
  Type element = getElementTypeOrSelf(x->getType());
  auto vector = [&](StringRef name, double dflt) -> FailureOr<Value> {
    std::vector<double> values = floatsOf(ctx, name);
    if (values.empty())
      values.push_back(dflt);
    if (values.size() != 1 && int64_t(values.size()) != features)
      return ctx.fail(name + " has " + Twine(values.size()) + " values for " +
                      Twine(features) + " features");
    return constantOf(ctx, {int64_t(values.size())}, element, values);
  };
  auto offset = vector("offset", 0.0), scale = vector("scale", 1.0);
  if (failed(offset) || failed(scale))
    return failure();
  auto shifted = ctx.create<SubOp>(ValueRange{*x, *offset});
  if (failed(shifted))
    return failure();
  return setResult(ctx, ctx.create<MulOp>(ValueRange{*shifted, *scale}));
}

/// Each row divided by its largest value, its L1 or its L2 norm.
LogicalResult importNormalizer(NodeContext &ctx) {
  auto x = featuresOf(ctx);
  if (failed(x))
    return failure();
  std::string norm = ctx.stringAttr("norm", "MAX");
  auto &b = ctx.b();
  SmallVector<NamedAttribute> rows = {
      b.getNamedAttr("axes", b.getDenseI64ArrayAttr({1})),
      b.getNamedAttr("keepdims", b.getBoolAttr(true))};
  FailureOr<Value> divisor = failure();
  if (norm == "MAX")
    divisor = ctx.create<ReduceMaxOp>(*x, rows);
  else if (norm == "L1")
    divisor = ctx.create<ReduceL1Op>(*x, rows);
  else if (norm == "L2")
    divisor = ctx.create<ReduceL2Op>(*x, rows);
  else
    return ctx.fail("norm '" + norm + "' is not valid");
  if (failed(divisor))
    return failure();
  return setResult(ctx, ctx.create<DivOp>(ValueRange{*x, *divisor}));
}

/// X's last axis at the given indices: X[..., indices] (a rank-1 X gives a
/// row, [1, n]).
LogicalResult importArrayFeatureExtractor(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  if (!x || !indices || failed(ctx.requireIndices(indices)))
    return failure();
  if (rankOf(x) == 0)
    return ctx.fail("X must have rank >= 1");
  int64_t count = ShapedType::getNumElements(shapeOf(indices));
  Value flat = reshapeTo(ctx, indices, {count});
  SmallVector<int64_t> dims(shapeOf(x));
  if (failed(ctx.requireIndicesInRange(1, {rankOf(x) - 1}, dims)))
    return failure();
  auto &b = ctx.b();
  auto taken = ctx.create<GatherOp>(
      ValueRange{x, flat},
      {b.getNamedAttr("axis", b.getI64IntegerAttr(rankOf(x) - 1))});
  if (failed(taken))
    return failure();
  dims.back() = count;
  if (dims.size() == 1)
    dims.insert(dims.begin(), 1);
  ctx.setOutput(0, reshapeTo(ctx, *taken, dims));
  return success();
}

} // namespace

// clang-format off
void onnx_import::registerClassicMLOps(OpRegistry &registry) {
  registry.addInDomain(kMLDomain, "ArrayFeatureExtractor", 1, 1, "domain ai.onnx.ml", importArrayFeatureExtractor);
  registry.addInDomain(kMLDomain, "LinearClassifier", 1, 1, "domain ai.onnx.ml; two or more integer classes; post_transform NONE, SOFTMAX, LOGISTIC", importLinearClassifier);
  registry.addInDomain(kMLDomain, "LinearRegressor", 1, 1, "domain ai.onnx.ml; post_transform NONE", importLinearRegressor);
  registry.addInDomain(kMLDomain, "Normalizer", 1, 1, "domain ai.onnx.ml; MAX, L1, L2", importNormalizer);
  registry.addInDomain(kMLDomain, "Scaler", 1, 1, "domain ai.onnx.ml", importScaler);
  registry.addInDomain(kMLDomain, "TreeEnsembleClassifier", 1, 3, "domain ai.onnx.ml; two or more integer classes (two: weights for class 0 only); post_transform NONE, SOFTMAX, LOGISTIC; all branch modes, missing values", importTreeEnsembleClassifier);
  registry.addInDomain(kMLDomain, "TreeEnsemble", 5, 5, "domain ai.onnx.ml; float, double or float16 X; aggregate SUM, AVERAGE; post_transform NONE; modes LEQ, LT, GTE, GT, EQ, NEQ (not MEMBER), missing values", importTreeEnsemble);
  registry.addInDomain(kMLDomain, "TreeEnsembleRegressor", 1, 3, "domain ai.onnx.ml; aggregate SUM, AVERAGE; post_transform NONE; all branch modes, missing values", importTreeEnsembleRegressor);
}
// clang-format on
