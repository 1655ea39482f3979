//===- OnnxLoopImporter.cpp - Loop, unrolled over a compile-time bound ----===//
//
// A Loop runs its body while the iteration number is below the trip count
// M and the condition holds; both may be known only at run time. Kiln
// unrolls the body over a bound known at compile time: a constant M, or,
// where the Loop has scan outputs, their declared length (the scan outputs'
// shape is the iteration count). Iteration i is imported with i as a
// constant, and whether it runs (i < M and every condition so far true) is
// computed in the kernels: an iteration that does not run leaves the loop
// state as it was, and its run-time checks do not apply. With scan outputs,
// a run-time check fails a run that iterates another number of times than
// their declared length. Bodies too long to unroll (kMaxUnrolledBodyNodes)
// are refused by name.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

void GraphImporter::importLoop(const onnx::NodeProto &node, int index) {
  NodeContext ctx(*this, node, nodeLocation(node, index));
  auto unsupported = [&](const Twine &why) {
    markUnsupported(node, index, why.str());
  };
  const onnx::GraphProto *body = bodyOf(node);
  int64_t numStates = node.input_size() - 2;
  if (!body || numStates < 0 || body->input_size() != numStates + 2 ||
      body->output_size() < numStates + 1 ||
      node.output_size() != body->output_size() - 1)
    return unsupported("the body's inputs and outputs do not match the "
                       "Loop's (iteration number, condition, then the loop "
                       "state)");
  int64_t numScans = body->output_size() - 1 - numStates;
  const std::string &tripName = node.input(0), &condName = node.input(1);
  const ConstTensor *trip = tripName.empty() ? nullptr : findConstant(tripName);
  std::optional<int64_t> tripCount;
  if (trip && trip->asInts().size() == 1)
    tripCount = std::max<int64_t>(trip->asInts().front(), 0);

  // The bound: the scan outputs' declared length, else a constant trip
  // count.
  std::optional<int64_t> bound;
  for (int64_t k = 0; k < numScans; ++k) {
    auto declared = declaredShapes.find(node.output(numStates + k));
    if (declared == declaredShapes.end() || declared->second.empty())
      continue;
    int64_t length = declared->second.front();
    if (bound && *bound != length)
      return unsupported("the scan outputs declare different lengths");
    bound = length;
  }
  if (!bound)
    bound = tripCount;
  if (!bound)
    return unsupported(
        "the trip count '" + tripName +
        "' is not a constant and no scan output declares its length: the "
        "iterations have no bound known at compile time");
  if (tripCount && *bound > *tripCount)
    return unsupported("the scan outputs declare more iterations than the "
                       "trip count");
  if (numScans > 0 && *bound < 1)
    return unsupported("a Loop with scan outputs and no iterations is not "
                       "supported");
  if (!fitsUnrolled(*body, *bound))
    return unsupported("unrolling " + Twine(*bound) + " iterations of a " +
                       Twine(body->node_size()) +
                       "-node body is more than "
                       "the " +
                       Twine(kMaxUnrolledBodyNodes) + " nodes Kiln unrolls");

  IndexOps m(ctx);
  SmallVector<Value> states;
  for (int64_t i = 0; i < numStates; ++i) {
    Value v = ctx.input(2 + i);
    if (!v)
      return unsupported(ctx.error());
    states.push_back(v);
  }
  auto boolType = RankedTensorType::get({}, ctx.b().getI1Type());
  Value yes = ctx.constant(boolType, {1.0}), no = ctx.constant(boolType, {0.0});
  Value cond = yes;
  if (!condName.empty()) {
    Value given = ctx.input(1);
    if (!given || ShapedType::getNumElements(shapeOf(given)) != 1 ||
        !getElementTypeOrSelf(given.getType()).isInteger(1))
      return unsupported("the condition must be one boolean");
    cond = m.reshape(given, {});
  }
  Value tripValue;
  if (!tripName.empty() && !tripCount) {
    Value given = ctx.input(0);
    if (!given || ShapedType::getNumElements(shapeOf(given)) != 1 ||
        failed(ctx.requireIndices(given)))
      return unsupported("the trip count must be one integer");
    tripValue = m.widen(m.reshape(given, {}));
  }
  auto below = [&](int64_t i) { // i < M
    if (tripName.empty())
      return yes;
    if (tripCount)
      return i < *tripCount ? yes : no;
    return m.op<LessOp>(m.scalar(i), tripValue);
  };

  Value runs = m.op<AndOp>(cond, below(0));
  Value iterations = m.scalar(0);
  SmallVector<SmallVector<Value>> scanned(numScans);
  for (int64_t i = 0; i < *bound; ++i) {
    ConstTensor number{onnx::TensorProto::INT64, {}, std::string(8, '\0'), {}};
    memcpy(number.bytes.data(), &i, 8);
    std::string error;
    Value iteration =
        createConstant(body->input(0).name(), number, ctx.getLoc(), error);
    if (!iteration)
      return unsupported(error);
    SmallVector<Value> bodyInputs = {iteration, cond};
    bodyInputs.append(states);
    size_t checksBefore = runtimeChecks.size();
    auto outputs = importUnrolledBody(node, index, *body, bodyInputs);
    if (!outputs)
      return;
    // An iteration that does not run changes nothing and checks nothing.
    for (size_t c = checksBefore; c < runtimeChecks.size(); ++c)
      runtimeChecks[c].first = m.op<AndOp>(runtimeChecks[c].first, runs);
    for (int64_t s = 0; s < numStates; ++s) {
      Value next = (*outputs)[1 + s];
      if (next.getType() != states[s].getType())
        return unsupported("the body changes the type of loop state " +
                           Twine(s));
      states[s] = m.select(runs, next, states[s]);
    }
    for (int64_t k = 0; k < numScans; ++k)
      scanned[k].push_back((*outputs)[1 + numStates + k]);
    Value condOut = (*outputs)[0];
    if (ShapedType::getNumElements(shapeOf(condOut)) != 1)
      return unsupported("the body's condition must be one boolean");
    cond = m.select(runs, m.reshape(condOut, {}), cond);
    iterations =
        m.op<AddOp>(iterations, m.select(runs, m.scalar(1), m.scalar(0)));
    runs = m.op<AndOp>(m.op<AndOp>(runs, cond), below(i + 1));
  }
  if (numScans > 0)
    ctx.addRuntimeCheck(
        m.op<OrOp>(runs, m.differs(iterations, m.scalar(*bound))),
        "it iterates another number of times than the " + Twine(*bound) +
            " its declared scan outputs hold (and the artifact was compiled "
            "for)");
  else if (!tripCount)
    ctx.addRuntimeCheck(runs, "it iterates more than the " + Twine(*bound) +
                                  " times the artifact was compiled for");
  if (m.failed())
    return unsupported(ctx.error().empty() ? "the loop state cannot be "
                                             "selected"
                                           : ctx.error());
  for (int64_t s = 0; s < numStates; ++s)
    if (!node.output(s).empty())
      values[node.output(s)] = states[s];
  for (int64_t k = 0; k < numScans; ++k) {
    auto stacked = stackAlong(ctx, scanned[k], 0);
    if (failed(stacked))
      return unsupported(ctx.error());
    if (!node.output(numStates + k).empty())
      values[node.output(numStates + k)] = *stacked;
  }
}
