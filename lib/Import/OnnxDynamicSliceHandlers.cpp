//===- OnnxDynamicSliceHandlers.cpp - Slice and Pad offsets at run time ---===//
//
// A Slice whose starts, ends, axes or steps are not constants (model inputs,
// or computed) is XLA's dynamic-slice: its size is the result shape the
// model declares, fixed at compile time, and its offsets are read at run
// time. Each dim it may slice becomes a Gather of the data along that dim
// at start + i * step (i below the declared size), with start and step
// resolved in the kernel by ONNX's rules (negative values count from the
// end, then clamp). Run-time checks fail the run when the values give
// another shape than the declared one, name an axis out of range or twice,
// or a step of 0; the gathers clamp what they read meanwhile.
//
// A Pad whose pads are read at run time is the same: each padded dim is a
// Gather at i - begin, mapped into the data by the mode (clamped for edge,
// folded back for reflect; outside elements take the constant value).
//
// ReverseSequence reverses each batch element's first sequence_lens[b]
// steps, lengths read at run time: a GatherElements along the time axis at
// len - 1 - t for t < len, t past it.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

using Shape = std::vector<int64_t>;

/// One Slice entry per listed axis, resolved in the kernel: where each
/// slice starts, its step and its size.
struct ResolvedSlices {
  Value starts, steps, sizes; // int64 [n]
  Value zeroStep;             // bool [n]: a step of 0
};

/// ONNX's resolution of starts and ends against dims `dims` (int64 [n]).
ResolvedSlices resolveSlices(IndexOps &m, Value starts, Value ends, Value steps,
                             Value dims) {
  Value zero = m.scalar(0), one = m.scalar(1), minusOne = m.scalar(-1);
  Value forward = m.op<GreaterOp>(steps, zero);
  Value last = m.op<SubOp>(dims, one);
  // Negative values count from the end; then forward slices clamp to
  // [0, dim], backward ones to [-1, dim - 1].
  auto resolve = [&](Value v) {
    Value fromEnd = m.select(m.op<LessOp>(v, zero), m.op<AddOp>(v, dims), v);
    return m.clamp(fromEnd, m.select(forward, zero, minusOne),
                   m.select(forward, dims, last));
  };
  Value start = resolve(starts), end = resolve(ends);
  // ceil(span / |step|) for a positive span, without overflowing.
  Value span =
      m.select(forward, m.op<SubOp>(end, start), m.op<SubOp>(start, end));
  Value stride =
      m.op<MaxOp>(m.select(forward, steps, m.op<SubOp>(zero, steps)), one);
  Value count = m.op<AddOp>(m.op<DivOp>(m.op<SubOp>(span, one), stride), one);
  Value size = m.select(m.op<GreaterOp>(span, zero), count, zero);
  return {start, steps, size, m.op<EqualOp>(steps, zero)};
}

/// The error of a run whose values (`what`) give another result shape than
/// the `declared` one.
std::string otherShape(StringRef what, const Shape &declared) {
  std::string shape;
  for (int64_t d : declared)
    shape += (shape.empty() ? "" : ",") + std::to_string(d);
  return (what + " give another shape than the [" + shape +
          "] the model declares and the artifact was compiled for")
      .str();
}

/// The data gathered along dim `d` at start + i * step, i < `size`.
Value gatherAlong(IndexOps &m, Value data, int64_t d, int64_t size, Value start,
                  Value step) {
  return m.gather(
      data, m.op<AddOp>(start, m.op<MulOp>(m.iota(size, {size}), step)), d);
}

} // namespace

LogicalResult onnx_import::importSliceAtRunTime(NodeContext &ctx) {
  Value data = ctx.input(0);
  if (!data)
    return failure();
  std::optional<Shape> declared = ctx.declaredOutputShape(0);
  if (!declared)
    return ctx.failNotConstant(
        1, "and ends, axes and steps must be constants unless the model "
           "declares the Slice's result shape");
  ArrayRef<int64_t> dataShape = shapeOf(data);
  int64_t rank = dataShape.size();
  if (int64_t(declared->size()) != rank)
    return ctx.fail("the declared result shape has another rank than the data");
  SmallVector<Value> lists;
  for (size_t i = 1; i <= 4; ++i) {
    Value v = ctx.hasInput(i) ? ctx.input(i) : Value();
    if (ctx.hasInput(i) && (!v || failed(ctx.requireIndices(v))))
      return failure();
    lists.push_back(v);
  }
  if (!lists[0] || !lists[1])
    return ctx.fail("starts and ends are required");
  int64_t count = ShapedType::getNumElements(shapeOf(lists[0]));
  for (Value v : lists)
    if (v && (rankOf(v) != 1 || shapeOf(v)[0] != count))
      return ctx.fail("starts, ends, axes and steps must be 1-D, with one "
                      "entry per sliced axis");
  IndexOps m(ctx);
  Value starts = m.widen(lists[0]), ends = m.widen(lists[1]);
  Value steps =
      lists[3] ? m.widen(lists[3]) : m.constant(Shape(count, 1), {count});

  // Constant axes (the usual case) slice only their dims.
  std::optional<Shape> axes;
  if (!lists[2])
    axes = Shape(llvm::seq<int64_t>(0, std::min(count, rank)).begin(),
                 llvm::seq<int64_t>(0, std::min(count, rank)).end());
  else if (ctx.constInput(3))
    axes = ctx.constInput(3)->asInts();
  if (axes) {
    auto normalized = normalizeAxes(ctx, *axes, rank);
    if (failed(normalized) || int64_t(normalized->size()) != count)
      return ctx.fail("axes must be distinct dims of the data");
    for (int64_t &a : *axes)
      a = a < 0 ? a + rank : a;
  }
  Value axisList =
      axes ? m.constant(*axes, {count})
           : m.select(m.op<LessOp>(m.widen(lists[2]), m.scalar(0)),
                      m.op<AddOp>(m.widen(lists[2]), m.scalar(rank)),
                      m.widen(lists[2]));
  // Each listed axis's dim: a gather from the data's (constant) shape.
  Value shapeVector = m.constant(dataShape, {rank});
  Value dims = axes ? m.constant(
                          [&] {
                            Shape d;
                            for (int64_t a : *axes)
                              d.push_back(dataShape[a]);
                            return d;
                          }(),
                          {count})
                    : m.gather(shapeVector, axisList, 0);
  ResolvedSlices slices = resolveSlices(m, starts, ends, steps, dims);

  // Per data dim: start, step and size. Listed axes take their entry;
  // the others keep the whole dim.
  Value perDimStart, perDimStep, perDimSize;
  if (!axes) {
    Value listed = m.op<EqualOp>(reshapeTo(ctx, axisList, {count, 1}),
                                 m.iota(rank, {1, rank}));
    auto spread = [&](Value perAxis, Value otherwise) {
      Value column = reshapeTo(ctx, perAxis, {count, 1});
      Value summed = m.sum(m.select(listed, column, m.scalar(0)));
      Value covered = m.op<GreaterOp>(
          m.sum(m.select(listed, m.scalar(1), m.scalar(0))), m.scalar(0));
      return m.select(covered, summed, otherwise);
    };
    perDimStart = spread(slices.starts, m.scalar(0));
    perDimStep = spread(slices.steps, m.scalar(1));
    perDimSize = spread(slices.sizes, shapeVector);
    Value timesListed = m.sum(m.select(listed, m.scalar(1), m.scalar(0)));
    Value outside = m.op<OrOp>(m.op<LessOp>(axisList, m.scalar(0)),
                               m.op<GreaterEqualOp>(axisList, m.scalar(rank)));
    ctx.addRuntimeCheck(m.op<GreaterOp>(timesListed, m.scalar(1)),
                        "its axes name a dim twice");
    ctx.addRuntimeCheck(outside, "an axis is out of range for the data's " +
                                     Twine(rank) + " dims");
  }
  // Steps read at run time are checked there; constant ones here.
  if (lists[3] && !ctx.constInput(4))
    ctx.addRuntimeCheck(slices.zeroStep, "a step is 0");
  else if (lists[3] && llvm::is_contained(ctx.constInput(4)->asInts(), 0))
    return ctx.fail("slice step is 0");

  // The values must give the declared shape.
  Value mismatch;
  if (axes) {
    Shape expected;
    for (int64_t a : *axes)
      expected.push_back((*declared)[a]);
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(*axes, d) && (*declared)[d] != dataShape[d])
        return ctx.fail("the declared result shape differs from the data in "
                        "dim " +
                        Twine(d) + ", which the Slice does not slice");
    mismatch = m.differs(slices.sizes, m.constant(expected, {count}));
  } else {
    mismatch = m.differs(perDimSize, m.constant(*declared, {rank}));
  }
  ctx.addRuntimeCheck(
      mismatch, otherShape("its starts, ends, axes and steps", *declared));

  Value result = data;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> entry;
    if (axes) {
      auto it = llvm::find(*axes, d);
      if (it == axes->end())
        continue;
      entry = it - axes->begin();
    }
    Value start =
        entry ? m.element(slices.starts, *entry) : m.element(perDimStart, d);
    Value step =
        entry ? m.element(slices.steps, *entry) : m.element(perDimStep, d);
    result = gatherAlong(m, result, d, (*declared)[d], start, step);
  }
  if (m.failed() || !result)
    return failure();
  ctx.setOutput(0, result);
  return success();
}

/// Where output element i of a dim of `size` reads the data's dim of
/// `dim` elements, for pads beginning with `begin` (int64 scalar): i - begin
/// mapped into the data by the mode.
static Value padSource(IndexOps &m, int64_t size, int64_t dim, Value begin,
                       StringRef mode) {
  Value i = m.op<SubOp>(m.iota(size, {size}), begin);
  if (mode == "reflect" && dim > 1) {
    // Reflection has period 2 (dim - 1): fold into it, then back.
    Value period = m.scalar(2 * (dim - 1));
    Value folded = m.op<ModOp>(i, period);
    return m.select(m.op<LessOp>(folded, m.scalar(dim)), folded,
                    m.op<SubOp>(period, folded));
  }
  return m.clamp(i, m.scalar(0), m.scalar(dim - 1));
}

LogicalResult onnx_import::importPadAtRunTime(NodeContext &ctx) {
  Value data = ctx.input(0);
  Value pads = ctx.input(1);
  if (!data || !pads || failed(ctx.requireIndices(pads)))
    return failure();
  std::optional<Shape> declared = ctx.declaredOutputShape(0);
  if (!declared)
    return ctx.failNotConstant(
        1, "must be a constant unless the model declares the Pad's result "
           "shape");
  ArrayRef<int64_t> dataShape = shapeOf(data);
  int64_t rank = dataShape.size();
  std::string mode = ctx.stringAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return ctx.fail("mode '" + mode + "' is not supported");
  // Opset 18 pads only the listed axes, which must then be constants.
  Shape axes;
  if (ctx.opset() >= 18 && ctx.hasInput(3)) {
    auto given = ctx.constInts(3);
    if (failed(given))
      return failure();
    auto normalized = normalizeAxes(ctx, *given, rank);
    if (failed(normalized) || normalized->size() != given->size())
      return ctx.fail("axes must be distinct dims of the data");
    for (int64_t a : *given)
      axes.push_back(a < 0 ? a + rank : a);
  } else {
    axes.assign(llvm::seq<int64_t>(0, rank).begin(),
                llvm::seq<int64_t>(0, rank).end());
  }
  int64_t count = axes.size();
  if (int64_t(declared->size()) != rank || rankOf(pads) != 1 ||
      shapeOf(pads)[0] != 2 * count)
    return ctx.fail("pads must have 2 entries per padded dim, and the "
                    "declared result the data's rank");
  for (int64_t d = 0; d < rank; ++d) {
    bool padded = llvm::is_contained(axes, d);
    if (!padded && (*declared)[d] != dataShape[d])
      return ctx.fail("the declared result differs from the data in dim " +
                      Twine(d) + ", which the Pad does not pad");
    if (padded && dataShape[d] == 0)
      return ctx.fail("pads read at run time need non-empty dims");
    if (padded && mode == "reflect" && dataShape[d] == 1 && (*declared)[d] != 1)
      return ctx.fail("reflect pads need dims of 2 or more elements");
  }

  IndexOps m(ctx);
  Value padList = m.widen(pads);
  Shape dims, expected;
  for (int64_t a : axes) {
    dims.push_back(dataShape[a]);
    expected.push_back((*declared)[a]);
  }
  auto &b = ctx.b();
  auto half = [&](int64_t from) -> Value {
    return SliceOp::create(
        b, ctx.getLoc(), RankedTensorType::get({count}, m.i64()), padList,
        b.getDenseI64ArrayAttr({from}), b.getDenseI64ArrayAttr({1}));
  };
  Value sizes =
      m.op<AddOp>(m.constant(dims, {count}), m.op<AddOp>(half(0), half(count)));
  ctx.addRuntimeCheck(m.differs(sizes, m.constant(expected, {count})),
                      otherShape("its pads", *declared));

  Value result = data, inside;
  for (auto [entry, d] : llvm::enumerate(axes)) {
    int64_t size = (*declared)[d], dim = dataShape[d];
    Value begin = m.element(padList, entry);
    result = m.gather(result, padSource(m, size, dim, begin, mode), d);
    if (mode != "constant")
      continue;
    // Which outputs along d lie inside the data, broadcast along the rest.
    Value i = m.op<SubOp>(m.iota(size, {size}), begin);
    Value in = m.op<AndOp>(m.op<GreaterEqualOp>(i, m.scalar(0)),
                           m.op<LessOp>(i, m.scalar(dim)));
    Shape along(rank, 1);
    along[d] = size;
    in = m.reshape(in, along);
    inside = inside ? m.op<AndOp>(inside, in) : in;
  }
  if (mode == "constant" && inside) {
    Value value = ctx.hasInput(2) ? ctx.input(2) : ctx.scalar(data, 0);
    if (!value || ShapedType::getNumElements(shapeOf(value)) != 1 ||
        failed(ctx.requireSameDtype({data, value})))
      return ctx.fail("constant_value must be a scalar of the data's dtype");
    result = m.select(inside, result, reshapeTo(ctx, value, {}));
  }
  if (m.failed() || !result)
    return failure();
  ctx.setOutput(0, result);
  return success();
}

LogicalResult onnx_import::importReverseSequence(NodeContext &ctx) {
  Value data = ctx.input(0), lengths = ctx.input(1);
  if (!data || !lengths || failed(ctx.requireIndices(lengths)))
    return failure();
  int64_t rank = rankOf(data);
  int64_t batchAxis = ctx.intAttr("batch_axis", 1),
          timeAxis = ctx.intAttr("time_axis", 0);
  if (rank < 2 || batchAxis < 0 || timeAxis < 0 || batchAxis > 1 ||
      timeAxis > 1 || batchAxis == timeAxis)
    return ctx.fail("batch_axis and time_axis must be 0 and 1 of a tensor "
                    "of rank 2 or more");
  int64_t batch = shapeOf(data)[batchAxis], steps = shapeOf(data)[timeAxis];
  if (rankOf(lengths) != 1 || shapeOf(lengths)[0] != batch)
    return ctx.fail("sequence_lens must hold one length per batch element");
  IndexOps m(ctx);
  // [steps, batch] or [batch, steps], as the data's first two dims.
  Shape timeShape(2, 1), batchShape(2, 1);
  timeShape[timeAxis] = steps;
  batchShape[batchAxis] = batch;
  Value t = m.iota(steps, timeShape);
  Value length = m.reshape(m.widen(lengths), batchShape);
  Value reversed = m.op<SubOp>(m.op<SubOp>(length, m.scalar(1)), t);
  Value source = m.select(m.op<LessOp>(t, length), reversed, t);
  ctx.addRuntimeCheck(
      m.op<OrOp>(m.op<LessOp>(m.widen(lengths), m.scalar(0)),
                 m.op<GreaterOp>(m.widen(lengths), m.scalar(steps))),
      "sequence_lens holds a length outside [0, " + Twine(steps) + "]");
  // Along the other dims the same source step.
  Shape expanded(shapeOf(data)), leading{shapeOf(data)[0], shapeOf(data)[1]};
  for (int64_t d = 2; d < rank; ++d)
    leading.push_back(1);
  Value indices = m.reshape(source, leading);
  if (m.failed())
    return failure();
  auto &b = ctx.b();
  Value full = ExpandOp::create(
      b, ctx.getLoc(), RankedTensorType::get(expanded, m.i64()), indices);
  return setResult(
      ctx, ctx.create<GatherElementsOp>(
               ValueRange{data, full},
               {b.getNamedAttr("axis", b.getI64IntegerAttr(timeAxis))}));
}
