//===- OnnxShapeOpHandlers.cpp - Gather, Slice, Split, Expand, Tile, Pad --===//
//
// Data-movement ops whose shape arguments (starts, splits, repeats, pads)
// must be known at compile time; each resolves ONNX's opset-dependent
// attribute-or-input forms and negative/clamped values into static kiln ops.
//
//===----------------------------------------------------------------------===//
#include "ConstantEvaluator.h"
#include "NodeContext.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

/// An attribute before `inputSince`, an optional constant input after.
static FailureOr<std::optional<std::vector<int64_t>>>
intsAttrOrInput(NodeContext &ctx, StringRef attr, size_t input,
                int64_t inputSince) {
  if (ctx.opset() < inputSince)
    return ctx.intsAttr(attr);
  if (!ctx.hasInput(input))
    return std::optional<std::vector<int64_t>>();
  auto values = ctx.constInts(input);
  if (failed(values))
    return failure();
  return std::optional<std::vector<int64_t>>(*values);
}

static LogicalResult importGather(NodeContext &ctx) {
  return importIndexedAlongAxis<GatherOp>(ctx);
}

/// One dim of an ONNX slice, resolved to (start, size, step).
struct DimSlice {
  int64_t start, size, step;
};

static DimSlice resolveSlice(int64_t dim, int64_t start, int64_t end,
                             int64_t step) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, std::max<int64_t>(0, (end - start + step - 1) / step), step};
  }
  start = std::clamp<int64_t>(start, -1, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, std::max<int64_t>(0, (start - end + (-step) - 1) / (-step)),
          step};
}

/// A kiln.slice from per-dim (start, size, step); empty dims start at 0.
static Value createSlice(NodeContext &ctx, Value x, ArrayRef<DimSlice> dims) {
  SmallVector<int64_t> starts, steps, shape;
  for (const DimSlice &d : dims) {
    starts.push_back(d.size == 0 ? 0 : d.start);
    steps.push_back(d.step);
    shape.push_back(d.size);
  }
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(x.getType()));
  if (type == x.getType() && llvm::all_of(dims, [](const DimSlice &d) {
        return d.start == 0 && d.step == 1;
      }))
    return x;
  auto &b = ctx.b();
  return SliceOp::create(b, ctx.getLoc(), type, x,
                         b.getDenseI64ArrayAttr(starts),
                         b.getDenseI64ArrayAttr(steps));
}

static LogicalResult importSlice(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (ctx.opset() >= 10)
    for (size_t i = 1; i <= 4; ++i)
      if (ctx.hasInput(i) && !ctx.constInput(i))
        return importSliceAtRunTime(ctx);
  auto starts = intsAttrOrInput(ctx, "starts", 1, 10);
  auto ends = intsAttrOrInput(ctx, "ends", 2, 10);
  auto axes = intsAttrOrInput(ctx, "axes", 3, 10);
  auto steps = intsAttrOrInput(ctx, "steps", 4, 10);
  if (failed(starts) || failed(ends) || failed(axes) || failed(steps))
    return failure();
  if (!*starts || !*ends || (*starts)->size() != (*ends)->size())
    return ctx.fail("starts and ends must be given, with one entry per axis");
  int64_t rank = rankOf(x);
  size_t count = (*starts)->size();
  std::vector<int64_t> axisList = axes->value_or(std::vector<int64_t>());
  if (axisList.empty())
    for (size_t i = 0; i < count; ++i)
      axisList.push_back(i);
  std::vector<int64_t> stepList =
      steps->value_or(std::vector<int64_t>(count, 1));
  if (axisList.size() != count || stepList.size() != count)
    return ctx.fail("axes and steps must have one entry per start");
  SmallVector<DimSlice> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back({0, shapeOf(x)[d], 1});
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axisList[i] < 0 ? axisList[i] + rank : axisList[i];
    if (axis < 0 || axis >= rank)
      return ctx.fail("axis " + Twine(axisList[i]) + " out of range");
    if (stepList[i] == 0)
      return ctx.fail("slice step is 0");
    dims[axis] =
        resolveSlice(shapeOf(x)[axis], (**starts)[i], (**ends)[i], stepList[i]);
  }
  ctx.setOutput(0, createSlice(ctx, x, dims));
  return success();
}

static LogicalResult importSplit(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = rankOf(x);
  auto axisOrFailure = ctx.axisAttr(0, rank);
  if (failed(axisOrFailure))
    return failure();
  int64_t axis = *axisOrFailure;
  int64_t dim = shapeOf(x)[axis];
  size_t outputs = ctx.proto().output_size();
  auto given = intsAttrOrInput(ctx, "split", 1, 13);
  if (failed(given))
    return failure();
  std::vector<int64_t> sizes;
  if (*given && !(*given)->empty()) {
    sizes = **given;
  } else {
    // Equal parts; with num_outputs (opset 18) the last may be smaller.
    int64_t parts = ctx.opset() >= 18 ? ctx.intAttr("num_outputs", outputs)
                                      : (int64_t)outputs;
    if (parts <= 0)
      return ctx.fail("cannot split into " + Twine(parts) + " parts");
    int64_t chunk = dim / parts + (dim % parts != 0);
    if (ctx.opset() < 18 && dim % parts != 0)
      return ctx.fail("dim " + Twine(dim) + " does not split evenly into " +
                      Twine(parts));
    for (int64_t start = 0; start < dim; start += chunk)
      sizes.push_back(std::min(chunk, dim - start));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim - total)
      return ctx.fail("split sizes do not add up to the dim");
    total += s;
  }
  if (total != dim || sizes.size() != outputs)
    return ctx.fail("split sizes do not add up to the dim or do not match "
                    "the outputs");
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    SmallVector<DimSlice> dims;
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back({0, shapeOf(x)[d], 1});
    dims[axis] = {offset, sizes[i], 1};
    ctx.setOutput(i, createSlice(ctx, x, dims));
    offset += sizes[i];
  }
  return success();
}

static LogicalResult importExpand(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto shape = ctx.constInts(1);
  if (failed(shape))
    return failure();
  auto result = broadcastShapes(shapeOf(x), *shape);
  if (!result)
    return ctx.fail("input does not broadcast to the shape");
  auto type = RankedTensorType::get(*result, getElementTypeOrSelf(x.getType()));
  // Even to x's own shape (the op folds away): at another batch size it
  // may broadcast, and the graph must have the same ops (--dynamic-batch).
  ctx.setOutput(0, ExpandOp::create(ctx.b(), ctx.getLoc(), type, x));
  return success();
}

static LogicalResult importTile(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto repeats = ctx.constInts(1);
  if (failed(repeats))
    return failure();
  if ((int64_t)repeats->size() != rankOf(x))
    return ctx.fail("repeats must have one entry per dim");
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(shapeOf(x), *repeats)) {
    int64_t size;
    if (r < 0 || __builtin_mul_overflow(d, r, &size))
      return ctx.fail("repeats must be non-negative and not huge");
    shape.push_back(size);
  }
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(x.getType()));
  ctx.setOutput(0, type == x.getType()
                       ? x
                       : (Value)TileOp::create(ctx.b(), ctx.getLoc(), type, x));
  return success();
}

/// `padded` (`inner` padded by `before`/`after` pads per dim, with zeros)
/// where the input lies, `value` (one element, read at run time) in the
/// padding: the padding's positions are known at compile time, its value
/// is not.
static FailureOr<Value> selectOutsidePadding(NodeContext &ctx, Value padded,
                                             ArrayRef<int64_t> inner,
                                             ArrayRef<int64_t> pads,
                                             Value value) {
  ArrayRef<int64_t> shape = shapeOf(padded);
  int64_t rank = shape.size();
  // The mask is a constant: its size is checked dim by dim, before any
  // product of (fuzzed, huge) dims can overflow.
  int64_t elements = 1;
  for (int64_t d : shape)
    if (d < 0 || (d > 0 && elements > kMaxConstantElements / d))
      return ctx.fail("a computed constant_value on more than " +
                      Twine(kMaxConstantElements) +
                      " padded elements is not supported yet");
    else
      elements *= d;
  SmallVector<bool> inside(elements);
  SmallVector<int64_t> index(rank, 0);
  for (size_t flat = 0; flat < inside.size(); ++flat) {
    bool in = true;
    for (int64_t d = 0; d < rank; ++d)
      in &= index[d] >= pads[d] && index[d] < pads[d] + inner[d];
    inside[flat] = in;
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
  }
  auto maskType = RankedTensorType::get(shape, ctx.b().getI1Type());
  Value mask = ConstantOp::create(ctx.b(), ctx.getLoc(),
                                  DenseElementsAttr::get(maskType, inside));
  Value scalar = reshapeTo(ctx, value, {});
  return ctx.create<WhereOp>(ValueRange{mask, padded, scalar});
}

static LogicalResult importPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = rankOf(x);
  std::vector<int64_t> pads;
  double value = 0.0;
  // A constant_value computed at run time: padded with 0, then selected.
  Value computedValue;
  if (ctx.opset() < 11) {
    pads = ctx.intsAttr(ctx.opset() < 2 ? "paddings" : "pads")
               .value_or(std::vector<int64_t>());
    value = ctx.floatAttr("value", 0.0f);
  } else {
    if (ctx.hasInput(1) && !ctx.constInput(1))
      return importPadAtRunTime(ctx);
    auto given = ctx.constInts(1);
    if (failed(given))
      return failure();
    pads = *given;
    if (ctx.hasInput(2)) {
      const ConstTensor *v = ctx.constInput(2);
      if (!v) {
        computedValue = ctx.input(2);
        if (!computedValue ||
            ShapedType::getNumElements(shapeOf(computedValue)) != 1)
          return ctx.fail("constant_value must be a scalar");
        if (failed(ctx.requireSameDtype({x, computedValue})))
          return failure();
      } else if (auto f = v->asScalarFloat())
        value = *f;
      else if (v->asInts().size() == 1)
        value = double(v->asInts().front());
      else
        return ctx.fail("constant_value must be a scalar");
    }
  }
  // Opset 18 pads only the listed axes.
  if (ctx.opset() >= 18 && ctx.hasInput(3)) {
    auto axes = ctx.constInts(3);
    if (failed(axes))
      return failure();
    auto normalized = normalizeAxes(ctx, *axes, rank);
    if (failed(normalized) || normalized->size() != axes->size() ||
        pads.size() != 2 * axes->size())
      return ctx.fail("pads and axes do not match");
    std::vector<int64_t> full(2 * rank, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      full[a] = pads[i];
      full[a + rank] = pads[i + axes->size()];
    }
    pads = full;
  }
  if ((int64_t)pads.size() != 2 * rank)
    return ctx.fail("pads must have 2 entries per dim");
  std::string mode = ctx.stringAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return ctx.fail("mode '" + mode + "' is not supported");
  // Negative pads crop: slice first, then pad with what is left.
  SmallVector<DimSlice> crop;
  SmallVector<int64_t> positive(2 * rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = pads[d], hi = pads[d + rank];
    // No tensor has 2^40 elements along a dim (--max-tensor-bytes).
    constexpr int64_t kMaxPad = int64_t(1) << 40;
    if (lo < -kMaxPad || lo > kMaxPad || hi < -kMaxPad || hi > kMaxPad)
      return ctx.fail("pads must be within 2^40 of the dim");
    int64_t start = std::max<int64_t>(0, -lo);
    int64_t size = shapeOf(x)[d] - start - std::max<int64_t>(0, -hi);
    if (size < 0)
      return ctx.fail("negative pads remove more than the dim");
    crop.push_back({start, size, 1});
    positive[d] = std::max<int64_t>(0, lo);
    positive[d + rank] = std::max<int64_t>(0, hi);
  }
  Value cropped = createSlice(ctx, x, crop);
  if (mode == "reflect")
    for (int64_t d = 0; d < rank; ++d)
      if (positive[d] >= shapeOf(cropped)[d] ||
          positive[d + rank] >= shapeOf(cropped)[d])
        return ctx.fail("reflect pads must be smaller than the dim");
  if (llvm::all_of(positive, [](int64_t p) { return p == 0; })) {
    ctx.setOutput(0, cropped);
    return success();
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size;
    if (__builtin_add_overflow(shapeOf(cropped)[d], positive[d], &size) ||
        __builtin_add_overflow(size, positive[d + rank], &size))
      return ctx.fail("pads make a dim larger than 64 bits hold");
    shape.push_back(size);
  }
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(x.getType()));
  auto &b = ctx.b();
  Value padded = PadOp::create(b, ctx.getLoc(), type, cropped,
                               b.getDenseI64ArrayAttr(positive),
                               b.getStringAttr(mode), b.getF64FloatAttr(value));
  if (computedValue && mode == "constant")
    return setResult(ctx, selectOutsidePadding(ctx, padded, shapeOf(cropped),
                                               positive, computedValue));
  ctx.setOutput(0, padded);
  return success();
}

/// reshape → transpose → reshape, the two ops' shared form.
static LogicalResult rearrange(NodeContext &ctx, Value x,
                               ArrayRef<int64_t> split, ArrayRef<int64_t> perm,
                               ArrayRef<int64_t> result) {
  Value expanded = reshapeTo(ctx, x, split);
  auto &b = ctx.b();
  auto transposed = ctx.create<TransposeOp>(
      expanded, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  if (failed(transposed))
    return failure();
  ctx.setOutput(0, reshapeTo(ctx, *transposed, result));
  return success();
}

/// The largest blocksize DepthToSpace and SpaceToDepth take: far past any
/// model's (2 to 8), and small enough that no size they compute overflows.
constexpr int64_t kMaxBlockSize = 1024;

static LogicalResult importDepthToSpace(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (rankOf(x) != 4)
    return ctx.fail("input must be 4-D");
  int64_t bs = ctx.intAttr("blocksize", 0);
  auto s = shapeOf(x);
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (bs <= 0 || bs > kMaxBlockSize || c % (bs * bs) != 0)
    return ctx.fail("blocksize must divide the channels");
  int64_t oc = c / (bs * bs);
  SmallVector<int64_t> result = {n, oc, h * bs, w * bs};
  if (ctx.stringAttr("mode", "DCR") == "CRD")
    return rearrange(ctx, x, {n, oc, bs, bs, h, w}, {0, 1, 4, 2, 5, 3}, result);
  return rearrange(ctx, x, {n, bs, bs, oc, h, w}, {0, 3, 4, 1, 5, 2}, result);
}

static LogicalResult importSpaceToDepth(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (rankOf(x) != 4)
    return ctx.fail("input must be 4-D");
  int64_t bs = ctx.intAttr("blocksize", 0);
  auto s = shapeOf(x);
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (bs <= 0 || bs > kMaxBlockSize || h % bs != 0 || w % bs != 0)
    return ctx.fail("blocksize must divide the spatial dims");
  return rearrange(ctx, x, {n, c, h / bs, bs, w / bs, bs}, {0, 3, 5, 1, 2, 4},
                   {n, c * bs * bs, h / bs, w / bs});
}

void onnx_import::registerShapeOps(OpRegistry &registry) {
  // clang-format off
  registry.add("DepthToSpace", 1, kMaxOpset, "DCR and CRD", importDepthToSpace);
  registry.add("Expand", 8, kMaxOpset, "constant or guarded shape", importExpand);
  registry.add("Gather", 1, kMaxOpset, "any axis; negative indices", importGather);
  registry.add("Pad", 2, kMaxOpset, "constant, edge, reflect; pads constant, or read at run time where the result shape is declared; a computed constant_value is read at run time", importPad);
  registry.add("ReverseSequence", 10, kMaxOpset, "lengths read at run time (a gather along the time axis)", importReverseSequence);
  registry.add("Slice", 1, kMaxOpset, "starts/ends/axes/steps constant, or read at run time where the result shape is declared", importSlice);
  registry.add("SpaceToDepth", 1, kMaxOpset, "", importSpaceToDepth);
  registry.add("Split", 2, kMaxOpset, "split attr/input (constant or guarded), num_outputs", importSplit);
  registry.add("Tile", 6, kMaxOpset, "constant or guarded repeats", importTile);
  // clang-format on
}
