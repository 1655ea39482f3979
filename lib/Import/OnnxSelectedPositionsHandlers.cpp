//===- OnnxSelectedPositionsHandlers.cpp - NonZero, Compress, NMS ---------===//
//
// NonZero and Compress return as many elements as their input holds true
// ones, and NonMaxSuppression as many boxes as it selects: a count known
// only at run time. Kiln fixes shapes at compile time: where the model
// declares the result's shape, that count is fixed, a run-time check fails
// a run whose data holds another, and the kernels find
// the positions of the true elements (the k-th true element is the one
// whose running count of trues is k + 1). That search costs the square of
// the element count, so it is limited to kMaxSearchedElements. (A constant
// input is folded at import instead.)
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// The most elements whose true ones are searched.
constexpr int64_t kMaxSearchedElements = 4096;

/// The positions (int64 [count]) of the first `count` true elements of the
/// 1-D boolean `mask`, and a run-time check that it holds exactly `count`.
Value truePositions(NodeContext &ctx, IndexOps &ops, Value mask,
                    int64_t count) {
  int64_t n = shapeOf(mask)[0];
  Value zero = ops.scalar(0), one = ops.scalar(1);
  // running[e]: the trues among elements 0..e.
  Value at = ops.iota(n, {n, 1}), before = ops.iota(n, {1, n});
  Value counted =
      ops.op<AndOp>(ops.reshape(mask, {1, n}), ops.op<LessEqualOp>(before, at));
  Value running = ops.sum(ops.select(counted, one, zero), 1);
  // The k-th true element: true, with a running count of k + 1.
  Value kth = ops.op<AndOp>(ops.reshape(mask, {1, n}),
                            ops.op<EqualOp>(ops.reshape(running, {1, n}),
                                            ops.iota(count, {count, 1}, 1)));
  Value positions = ops.sum(ops.select(kth, ops.iota(n, {1, n}), zero), 1);
  Value total = ops.sum(ops.select(mask, one, zero), 0);
  ctx.addRuntimeCheck(ops.differs(total, ops.scalar(count)),
                      "the data holds another count of selected elements "
                      "than the " +
                          Twine(count) +
                          " the model's declared result shape has (and "
                          "the artifact was compiled for)");
  return positions;
}

/// The declared result shape, refused when absent or when the search would
/// cover more than kMaxSearchedElements.
FailureOr<std::vector<int64_t>> declaredResult(NodeContext &ctx,
                                               int64_t elements) {
  std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
  if (!declared)
    return ctx.fail("the result's shape depends on the data: supported "
                    "where the model declares it (graph output or "
                    "value_info)"),
           failure();
  if (llvm::is_contained(*declared, 0))
    return ctx.fail("a declared result with no elements is not supported"),
           failure();
  if (elements > kMaxSearchedElements)
    return ctx.fail("searching " + Twine(elements) +
                    " elements for the selected ones is more than the " +
                    Twine(kMaxSearchedElements) + " Kiln searches"),
           failure();
  return *declared;
}

} // namespace

/// NonZero: the coordinates of the declared count of nonzero elements, row
/// by row of the result.
static LogicalResult importNonZero(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = rankOf(x), elements = ShapedType::getNumElements(shapeOf(x));
  auto declared = declaredResult(ctx, elements);
  if (failed(declared))
    return failure();
  if (declared->size() != 2 || (*declared)[0] != std::max<int64_t>(rank, 1))
    return ctx.fail("the declared result is not [rank, count]");
  int64_t count = (*declared)[1];
  IndexOps ops(ctx);
  Value flat = ops.reshape(x, {elements});
  Value zero = ctx.scalar(x, 0);
  Value mask = ops.differs(flat, reshapeTo(ctx, zero, {}));
  Value positions = truePositions(ctx, ops, mask, count);
  // Coordinate d of flat position p: (p / stride_d) % size_d.
  SmallVector<Value> rows;
  int64_t stride = 1;
  SmallVector<int64_t> strides(rank);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shapeOf(x)[d];
  }
  for (int64_t d = 0; d < rank; ++d) {
    Value coordinate =
        ops.op<ModOp>(ops.op<DivOp>(positions, ops.scalar(strides[d])),
                      ops.scalar(std::max<int64_t>(shapeOf(x)[d], 1)));
    rows.push_back(ops.reshape(coordinate, {1, count}));
  }
  if (rank == 0)
    rows.push_back(ops.reshape(positions, {1, count}));
  if (ops.failed())
    return failure();
  if (rows.size() == 1) {
    ctx.setOutput(0, rows.front());
    return success();
  }
  auto &b = ctx.b();
  return setResult(ctx,
                   ctx.create<ConcatOp>(
                       rows, {b.getNamedAttr("axis", b.getI64IntegerAttr(0))}));
}

/// Compress: the slices along `axis` (or elements of the flattened input)
/// where the condition is true, as many as the declared result has.
static LogicalResult importCompress(NodeContext &ctx) {
  Value x = ctx.input(0), condition = ctx.input(1);
  if (!x || !condition ||
      failed(ctx.requireDtypes(condition, NodeContext::Bool)))
    return failure();
  if (rankOf(condition) != 1)
    return ctx.fail("condition must be 1-D");
  const onnx::AttributeProto *axisAttr = ctx.attr("axis");
  Value data = x;
  int64_t axis = 0;
  if (axisAttr) {
    auto normalized = ctx.axisAttr(0, rankOf(x));
    if (failed(normalized))
      return failure();
    axis = *normalized;
  } else {
    data = reshapeTo(ctx, x, {ShapedType::getNumElements(shapeOf(x))});
  }
  int64_t length = shapeOf(condition)[0];
  if (length > shapeOf(data)[axis])
    return ctx.fail("condition is longer than the input along the axis");
  auto declared = declaredResult(ctx, length);
  if (failed(declared))
    return failure();
  if (int64_t(declared->size()) != rankOf(data))
    return ctx.fail("the declared result has another rank than the input");
  IndexOps ops(ctx);
  Value positions = truePositions(ctx, ops, condition, (*declared)[axis]);
  if (ops.failed())
    return failure();
  auto &b = ctx.b();
  return setResult(ctx,
                   ctx.create<GatherOp>(
                       ValueRange{data, positions},
                       {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//
//
// Greedy suppression as rounds of ArgMax over each (batch, class)'s boxes
// still in play: the best-scoring one is selected (while fewer than
// max_output_boxes_per_class are), and it and every box it overlaps by more
// than iou_threshold leave play. One round per box that can be selected
// (the box count, or a constant max_output_boxes_per_class when smaller);
// the selections, in (batch, class, round) order as the reference lists
// them, are then found as NonZero's true elements are.

/// The most rounds NonMaxSuppression unrolls.
constexpr int64_t kMaxSuppressionRounds = 256;

namespace {

/// Each box's corners and area as [B, C, S] tensors (broadcast over classes).
struct BoxCorners {
  Value xMin, xMax, yMin, yMax, area;
};

/// Float arithmetic in the boxes' type on top of IndexOps.
class BoxOps : public FloatOps {
public:
  BoxOps(NodeContext &ctx, Value like)
      : FloatOps(ctx, getElementTypeOrSelf(like.getType())), ctx(ctx) {}
  /// Column `i` of [B, S, 4] boxes as [B, 1, S].
  Value column(Value boxes, int64_t i) {
    auto &b = ctx.b();
    ArrayRef<int64_t> shape = shapeOf(boxes);
    Value one = SliceOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get({shape[0], shape[1], 1},
                              getElementTypeOrSelf(boxes.getType())),
        boxes, b.getDenseI64ArrayAttr({0, 0, i}),
        b.getDenseI64ArrayAttr({1, 1, 1}));
    return reshape(one, {shape[0], 1, shape[1]});
  }
  Value expand(Value v, ArrayRef<int64_t> shape) {
    if (!v)
      return fail();
    return ExpandOp::create(
        ctx.b(), ctx.getLoc(),
        RankedTensorType::get(shape, getElementTypeOrSelf(v.getType())), v);
  }
  /// The scalar value of an optional [1] or [] input `i`.
  Value optionalScalar(size_t i, Value absent) {
    if (!ctx.hasInput(i))
      return absent;
    Value v = ctx.input(i);
    if (!v || ShapedType::getNumElements(shapeOf(v)) != 1)
      return fail();
    return reshape(v, {});
  }

private:
  NodeContext &ctx;
};

} // namespace

/// The corners of every box, min and max sorted as the reference does.
static BoxCorners boxCorners(BoxOps &m, Value boxes, bool centerPoint,
                             ArrayRef<int64_t> shape) {
  Value c0 = m.column(boxes, 0), c1 = m.column(boxes, 1);
  Value c2 = m.column(boxes, 2), c3 = m.column(boxes, 3);
  BoxCorners corners;
  if (centerPoint) { // [x_center, y_center, width, height]
    Value halfWidth = m.op<DivOp>(c2, m.real(2));
    Value halfHeight = m.op<DivOp>(c3, m.real(2));
    corners = {m.op<SubOp>(c0, halfWidth),
               m.op<AddOp>(c0, halfWidth),
               m.op<SubOp>(c1, halfHeight),
               m.op<AddOp>(c1, halfHeight),
               {}};
  } else { // [y1, x1, y2, x2], either diagonal
    corners = {m.op<MinOp>(c1, c3),
               m.op<MaxOp>(c1, c3),
               m.op<MinOp>(c0, c2),
               m.op<MaxOp>(c0, c2),
               {}};
  }
  corners.area = m.op<MulOp>(m.op<SubOp>(corners.xMax, corners.xMin),
                             m.op<SubOp>(corners.yMax, corners.yMin));
  for (Value *v : {&corners.xMin, &corners.xMax, &corners.yMin, &corners.yMax,
                   &corners.area})
    *v = m.expand(*v, shape);
  return corners;
}

/// Whether each box is suppressed by the box at `best` ([B, C, 1]): the
/// reference's suppress_by_iou.
static Value suppressedBy(BoxOps &m, const BoxCorners &boxes, Value best,
                          Value iouThreshold) {
  auto at = [&](Value v) { return m.gatherElements(v, best, 2); };
  Value width = m.op<SubOp>(m.op<MinOp>(at(boxes.xMax), boxes.xMax),
                            m.op<MaxOp>(at(boxes.xMin), boxes.xMin));
  Value height = m.op<SubOp>(m.op<MinOp>(at(boxes.yMax), boxes.yMax),
                             m.op<MaxOp>(at(boxes.yMin), boxes.yMin));
  Value intersection = m.op<MulOp>(width, height);
  Value bestArea = at(boxes.area);
  Value unionArea =
      m.op<SubOp>(m.op<AddOp>(bestArea, boxes.area), intersection);
  Value zero = m.real(0);
  Value valid = m.op<AndOp>(
      m.op<AndOp>(m.op<GreaterOp>(width, zero), m.op<GreaterOp>(height, zero)),
      m.op<AndOp>(m.op<AndOp>(m.op<GreaterOp>(intersection, zero),
                              m.op<GreaterOp>(unionArea, zero)),
                  m.op<AndOp>(m.op<GreaterOp>(bestArea, zero),
                              m.op<GreaterOp>(boxes.area, zero))));
  Value iou = m.op<DivOp>(intersection, m.select(valid, unionArea, m.real(1)));
  return m.op<AndOp>(valid, m.op<GreaterOp>(iou, iouThreshold));
}

static LogicalResult importNonMaxSuppression(NodeContext &ctx) {
  Value boxes = ctx.input(0), scores = ctx.input(1);
  if (!boxes || !scores || failed(ctx.requireFloat({boxes, scores})) ||
      failed(ctx.requireSameDtype({boxes, scores})))
    return failure();
  ArrayRef<int64_t> boxShape = shapeOf(boxes), scoreShape = shapeOf(scores);
  if (boxShape.size() != 3 || boxShape[2] != 4 || scoreShape.size() != 3 ||
      scoreShape[0] != boxShape[0] || scoreShape[2] != boxShape[1])
    return ctx.fail("boxes must be [batches, boxes, 4] and scores [batches, "
                    "classes, boxes]");
  int64_t batches = boxShape[0], classes = scoreShape[1], count = boxShape[1];
  if (ctx.hasInput(2) && failed(ctx.requireIndices(ctx.input(2))))
    return failure();
  int64_t rounds = count;
  if (const ConstTensor *limit = ctx.hasInput(2) ? ctx.constInput(2) : nullptr)
    rounds = std::min(rounds, std::max<int64_t>(limit->asInts().front(), 0));
  else if (!ctx.hasInput(2))
    rounds = 0;
  if (rounds == 0)
    return ctx.fail("max_output_boxes_per_class is absent or 0: no box is "
                    "selected, and empty results are not supported");
  if (rounds > kMaxSuppressionRounds)
    return ctx.fail("selecting up to " + Twine(rounds) +
                    " boxes per class is more than the " +
                    Twine(kMaxSuppressionRounds) +
                    " rounds Kiln unrolls (a constant "
                    "max_output_boxes_per_class bounds them)");
  auto declared = declaredResult(ctx, batches * classes * rounds);
  if (failed(declared))
    return failure();
  if (declared->size() != 2 || (*declared)[1] != 3)
    return ctx.fail("the declared result is not [count, 3]");

  BoxOps m(ctx, scores);
  SmallVector<int64_t> shape = {batches, classes, count};
  BoxCorners corners =
      boxCorners(m, boxes, ctx.intAttr("center_point_box", 0) != 0, shape);
  Value limit = m.widen(m.optionalScalar(2, m.scalar(0)));
  Value iouThreshold = m.optionalScalar(3, m.real(0));
  ctx.addRuntimeCheck(m.op<OrOp>(m.op<LessOp>(iouThreshold, m.real(0)),
                                 m.op<GreaterOp>(iouThreshold, m.real(1))),
                      "iou_threshold is outside [0, 1]");
  // Boxes in play hold their score (at least the lowest finite one, so
  // that a score of -inf still plays), the others -inf.
  bool isF32 = isa<Float32Type>(getElementTypeOrSelf(scores.getType()));
  Value gone = m.real(-INFINITY);
  Value inPlay =
      m.op<MaxOp>(scores, m.real(isF32 ? -std::numeric_limits<float>::max()
                                       : -std::numeric_limits<double>::max()));
  if (ctx.hasInput(4)) {
    Value scoreThreshold = m.optionalScalar(4, Value());
    inPlay = m.select(m.op<GreaterOp>(scores, scoreThreshold), inPlay, gone);
  }
  Value positions = m.expand(m.iota(count, {1, 1, count}), shape);
  SmallVector<Value> selected, chosenBoxes;
  for (int64_t round = 0; round < rounds; ++round) {
    Value best = m.argMax(inPlay, 2);
    Value bestScore = m.gatherElements(inPlay, best, 2);
    selected.push_back(m.op<AndOp>(m.op<GreaterOp>(bestScore, gone),
                                   m.op<GreaterOp>(limit, m.scalar(round))));
    chosenBoxes.push_back(best);
    if (round + 1 == rounds)
      break;
    Value leaves = m.op<OrOp>(m.op<EqualOp>(positions, best),
                              suppressedBy(m, corners, best, iouThreshold));
    inPlay = m.select(leaves, gone, inPlay);
  }
  // The selections in (batch, class, round) order.
  int64_t total = batches * classes * rounds, found = (*declared)[0];
  Value mask = m.reshape(m.concat(selected, 2), {total});
  Value chosen = m.reshape(m.concat(chosenBoxes, 2), {total});
  if (m.failed())
    return failure();
  Value at = truePositions(ctx, m, mask, found);
  Value batch = m.op<DivOp>(at, m.scalar(classes * rounds));
  Value cls = m.op<ModOp>(m.op<DivOp>(at, m.scalar(rounds)), m.scalar(classes));
  Value box = m.gather(chosen, at, 0);
  Value result =
      m.concat({m.reshape(batch, {found, 1}), m.reshape(cls, {found, 1}),
                m.reshape(box, {found, 1})},
               1);
  if (m.failed() || !result)
    return failure();
  ctx.setOutput(0, result);
  return success();
}

void onnx_import::registerSelectedPositionsOps(OpRegistry &registry) {
  registry.add(
      "NonZero", 9, kMaxOpset,
      "a constant input is folded at import; else the declared result shape "
      "fixes the count (checked at run time), up to 4096 elements",
      importNonZero);
  registry.add("Compress", 9, kMaxOpset,
               "the declared result shape fixes the count (checked at run "
               "time); conditions of up to 4096 elements",
               importCompress);
  registry.add("NonMaxSuppression", 10, kMaxOpset,
               "greedy, one ArgMax round per box that can be selected (up to "
               "256); the declared result shape fixes the count (checked at "
               "run time)",
               importNonMaxSuppression);
}
