//===- OnnxScanImporter.cpp - Scan, unrolled over its static steps --------===//
//
// A Scan's step count is the length of its scan inputs along the scan axis,
// which Kiln knows at compile time, so the body is imported once per step:
// each step's body reads the states the previous one produced and the
// scan inputs' slice at that step, and the scan outputs are the steps'
// outputs stacked along the output axis. Opset 8's Scan has a leading batch
// dim, each batch element scanned on its own. Bodies too long to unroll
// (kMaxUnrolledBodyNodes) are refused by name.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Element `i` of `v` along `axis`, with that dim removed.
Value sliceAt(NodeContext &ctx, Value v, int64_t axis, int64_t i) {
  SmallVector<int64_t> shape(shapeOf(v)), starts(shape.size(), 0),
      steps(shape.size(), 1);
  shape[axis] = 1;
  starts[axis] = i;
  auto &b = ctx.b();
  Value one = SliceOp::create(
      b, ctx.getLoc(),
      RankedTensorType::get(shape, getElementTypeOrSelf(v.getType())), v,
      b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(steps));
  shape.erase(shape.begin() + axis);
  return reshapeTo(ctx, one, shape);
}

/// An int-list attribute, or `count` copies of `dflt`.
SmallVector<int64_t> intsOr(NodeContext &ctx, StringRef name, size_t count,
                            int64_t dflt) {
  auto given = ctx.intsAttr(name);
  if (!given)
    return SmallVector<int64_t>(count, dflt);
  return SmallVector<int64_t>(given->begin(), given->end());
}

} // namespace

FailureOr<Value> onnx_import::stackAlong(NodeContext &ctx,
                                         ArrayRef<Value> parts, int64_t axis) {
  SmallVector<Value> expanded;
  for (Value part : parts) {
    if (part.getType() != parts.front().getType())
      return ctx.fail("the steps give a scan output different types"),
             failure();
    SmallVector<int64_t> shape(shapeOf(part));
    if (axis < 0 || axis > int64_t(shape.size()))
      return ctx.fail("a scan axis is out of range"), failure();
    shape.insert(shape.begin() + axis, 1);
    expanded.push_back(reshapeTo(ctx, part, shape));
  }
  if (expanded.size() == 1)
    return expanded.front();
  auto &b = ctx.b();
  return ctx.create<ConcatOp>(
      expanded, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

const onnx::GraphProto *GraphImporter::bodyOf(const onnx::NodeProto &node) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == "body" && attr.has_g())
      return &attr.g();
  return nullptr;
}

bool GraphImporter::fitsUnrolled(const onnx::GraphProto &body, int64_t copies) {
  int64_t nodes;
  return !__builtin_mul_overflow(copies, std::max(body.node_size(), 1),
                                 &nodes) &&
         nodes <= kMaxUnrolledBodyNodes;
}

std::optional<std::vector<Value>>
GraphImporter::importUnrolledBody(const onnx::NodeProto &node, int index,
                                  const onnx::GraphProto &body,
                                  ArrayRef<Value> inputs) {
  auto outputs = importSubgraph(node, index, body, "body", inputs,
                                /*scoped=*/true);
  if (outputs && llvm::is_contained(*outputs, Value())) {
    for (const std::string &output : node.output())
      poisoned.insert(output);
    return std::nullopt;
  }
  return outputs;
}

void GraphImporter::importScan(const onnx::NodeProto &node, int index) {
  NodeContext ctx(*this, node, nodeLocation(node, index));
  auto unsupported = [&](const Twine &why) {
    markUnsupported(node, index, why.str());
  };
  const onnx::GraphProto *body = bodyOf(node);
  // Opset 8: sequence_lens first, and a leading batch dim on every input.
  bool batched = defaultOpset < 9;
  size_t first = batched ? 1 : 0;
  int64_t numScans = ctx.intAttr("num_scan_inputs", -1);
  int64_t numInputs = node.input_size() - int64_t(first);
  if (!body || numScans < 1 || numScans > numInputs)
    return unsupported("needs a body and num_scan_inputs in [1, inputs]");
  if (batched && !node.input(0).empty())
    return unsupported("sequence_lens is not supported");
  size_t numStates = numInputs - numScans;
  if (size_t(body->input_size()) != numStates + numScans ||
      body->output_size() < int(numStates) ||
      node.output_size() != body->output_size())
    return unsupported("the body's inputs and outputs do not match the "
                       "Scan's");
  size_t numScanOutputs = body->output_size() - numStates;
  SmallVector<Value> inputs;
  for (size_t i = first; i < size_t(node.input_size()); ++i) {
    Value v = ctx.input(i);
    if (!v)
      return unsupported(ctx.error());
    if (batched && rankOf(v) < 1)
      return unsupported("opset 8 inputs need a batch dim");
    inputs.push_back(v);
  }
  SmallVector<int64_t> inAxes = intsOr(ctx, "scan_input_axes", numScans, 0),
                       outAxes =
                           intsOr(ctx, "scan_output_axes", numScanOutputs, 0),
                       inDirections = intsOr(ctx,
                                             batched ? "directions"
                                                     : "scan_input_directions",
                                             numScans, 0),
                       outDirections = intsOr(ctx, "scan_output_directions",
                                              numScanOutputs, 0);
  if (inAxes.size() != size_t(numScans) || outAxes.size() != numScanOutputs ||
      inDirections.size() != size_t(numScans) ||
      outDirections.size() != numScanOutputs)
    return unsupported("an axes or directions attribute has the wrong length");

  // Per batch element (opset 8) or once: the states and scan inputs.
  int64_t batch = batched ? shapeOf(inputs.front())[0] : 1;
  if (batch < 1 ||
      llvm::any_of(
          inputs, [&](Value v) { return batched && shapeOf(v)[0] != batch; }))
    return unsupported("the inputs' batch dims differ or are empty");
  int64_t steps = -1;
  for (int64_t j = 0; j < numScans; ++j) {
    Value scan = inputs[numStates + j];
    int64_t rank = rankOf(scan) - (batched ? 1 : 0);
    int64_t &axis = inAxes[j];
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank)
      return unsupported("scan_input_axes names no dim of scan input " +
                         Twine(j));
    int64_t length = shapeOf(scan)[axis + (batched ? 1 : 0)];
    if (steps >= 0 && length != steps)
      return unsupported("the scan inputs have different lengths");
    steps = length;
  }
  if (steps < 1)
    return unsupported("a Scan of no steps is not supported");
  int64_t copies;
  if (__builtin_mul_overflow(batch, steps, &copies) ||
      !fitsUnrolled(*body, copies))
    return unsupported("unrolling " + Twine(steps) + " steps of a " +
                       Twine(body->node_size()) + "-node body" +
                       (batched ? " per batch element" : "") +
                       " is more than the " + Twine(kMaxUnrolledBodyNodes) +
                       " nodes Kiln unrolls");

  // results[b][o]: the final states, then the stacked scan outputs.
  SmallVector<SmallVector<Value>> results;
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> states, scans;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value v = batched ? sliceAt(ctx, inputs[i], 0, b) : inputs[i];
      (i < numStates ? states : scans).push_back(v);
    }
    SmallVector<SmallVector<Value>> perStep(numScanOutputs);
    for (int64_t t = 0; t < steps; ++t) {
      SmallVector<Value> bodyInputs(states);
      for (int64_t j = 0; j < numScans; ++j)
        bodyInputs.push_back(sliceAt(ctx, scans[j], inAxes[j],
                                     inDirections[j] ? steps - 1 - t : t));
      auto outputs = importUnrolledBody(node, index, *body, bodyInputs);
      if (!outputs)
        return;
      states.assign(outputs->begin(), outputs->begin() + numStates);
      for (size_t o = 0; o < numScanOutputs; ++o)
        perStep[o].push_back((*outputs)[numStates + o]);
    }
    SmallVector<Value> result(states);
    for (size_t o = 0; o < numScanOutputs; ++o) {
      if (outDirections[o])
        std::reverse(perStep[o].begin(), perStep[o].end());
      int64_t rank = rankOf(perStep[o].front()) + 1;
      int64_t axis = outAxes[o] < 0 ? outAxes[o] + rank : outAxes[o];
      auto stacked = stackAlong(ctx, perStep[o], axis);
      if (failed(stacked))
        return unsupported(ctx.error());
      result.push_back(*stacked);
    }
    results.push_back(result);
  }
  for (auto [o, output] : llvm::enumerate(node.output())) {
    Value value = results.front()[o];
    if (batched) {
      SmallVector<Value> perBatch;
      for (const SmallVector<Value> &r : results)
        perBatch.push_back(r[o]);
      auto stacked = stackAlong(ctx, perBatch, 0);
      if (failed(stacked))
        return unsupported(ctx.error());
      value = *stacked;
    }
    if (!output.empty())
      values[output] = value;
  }
}
