//===- OnnxGridSampleHandler.cpp - GridSample as weighted gathers ---------===//
//
// GridSample reads its input at the positions a grid (a tensor of the run)
// holds. For each output position and spatial dim, the normalized
// coordinate is mapped into the dim (align_corners), moved inside by the
// padding mode (border clamps, reflection folds back), and the input is
// read at 1 (nearest), 2 (linear) or 4 (cubic) neighbours per dim with
// separable weights, as the ONNX reference (op_grid_sample.py) does. Every
// combination of neighbours is one GatherElements from the input flattened
// to [N, C, pixels] at the combination's flat index, times the product of
// its weights; with zeros padding a neighbour outside the input reads 0.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

enum class SampleMode { Nearest, Linear, Cubic };

struct GridSampleParams {
  SampleMode mode = SampleMode::Linear;
  std::string padding = "zeros";
  bool alignCorners = false;
};

/// One neighbour along one spatial dim, for every output position: its
/// index inside the dim (int64 [N, O]), its weight ([N, O], null for 1) and
/// whether it lies inside the input (bool [N, O], null when it always does).
struct Tap {
  Value index, weight, inside;
};

/// Arithmetic in the grid's float type on top of IndexOps.
class GridOps : public FloatOps {
public:
  GridOps(NodeContext &ctx, Type floatType)
      : FloatOps(ctx, floatType), ctx(ctx) {}

  /// Rounds toward zero, as C's int() does.
  Value truncate(Value v) {
    return select(op<LessOp>(v, real(0)), unary<CeilOp>(v), unary<FloorOp>(v));
  }

private:
  NodeContext &ctx;
};

} // namespace

/// The reference's _gs_reflect: folds `v` back into [low, high] off the
/// nearer border until it lies inside.
static Value reflect(GridOps &m, Value v, double low, double high) {
  double range = high - low;
  if (range <= 0) // a single pixel with align_corners
    return m.clamp(v, m.real(low), m.real(low));
  Value below = m.op<LessOp>(v, m.real(low));
  Value distance = m.select(below, m.op<SubOp>(m.real(low), v),
                            m.op<SubOp>(v, m.real(high)));
  Value folds = m.unary<FloorOp>(m.op<DivOp>(distance, m.real(range)));
  Value rest = m.op<SubOp>(distance, m.op<MulOp>(folds, m.real(range)));
  Value half = m.unary<FloorOp>(m.op<DivOp>(folds, m.real(2)));
  Value even = m.op<EqualOp>(m.op<MulOp>(half, m.real(2)), folds);
  Value fromLow = m.op<AddOp>(m.real(low), rest);
  Value fromHigh = m.op<SubOp>(m.real(high), rest);
  // An even number of folds lands off the border it left by.
  Value folded = m.select(m.op<XorOp>(even, below), fromHigh, fromLow);
  Value outside = m.op<OrOp>(below, m.op<GreaterOp>(v, m.real(high)));
  return m.select(outside, folded, v);
}

/// The reference's _pixel_at_array for neighbour positions `i` (integral
/// floats) along a dim of `dim` pixels whose borders are [low, high].
static Tap pixelAt(GridOps &m, const GridSampleParams &p, Value i, int64_t dim,
                   double low, double high, Value weight) {
  Value last = m.real(double(dim - 1));
  Tap tap;
  tap.weight = weight;
  if (p.padding == "zeros")
    tap.inside = m.op<AndOp>(m.op<GreaterEqualOp>(i, m.real(0)),
                             m.op<LessEqualOp>(i, last));
  else if (p.padding == "reflection")
    i = m.truncate(reflect(m, i, low, high));
  tap.index = m.castTo(m.clamp(i, m.real(0), last), m.i64());
  return tap;
}

/// Keys' cubic weights (A = -0.75) of the neighbours x0 - 1 .. x0 + 2 at
/// distance `t` = x - x0 from the left one.
static SmallVector<Value> cubicWeights(GridOps &m, Value t) {
  const double A = -0.75;
  auto poly = [&](Value s, ArrayRef<double> c) { // ((c0 s + c1) s + c2) s + c3
    Value v = m.real(c[0]);
    for (double k : c.drop_front())
      v = m.op<AddOp>(m.op<MulOp>(v, s), m.real(k));
    return v;
  };
  auto far = [&](Value s) { return poly(s, {A, -5 * A, 8 * A, -4 * A}); };
  auto near = [&](Value s) { return poly(s, {A + 2, -(A + 3), 0, 1}); };
  Value one = m.real(1), two = m.real(2);
  return {far(m.op<AddOp>(t, one)), near(t), near(m.op<SubOp>(one, t)),
          far(m.op<SubOp>(two, t))};
}

/// The neighbours along one spatial dim of `dim` pixels for the normalized
/// coordinates `n` ([N, O]).
static SmallVector<Tap> dimTaps(GridOps &m, const GridSampleParams &p, Value n,
                                int64_t dim) {
  double size = double(dim);
  // Denormalize: [-1, 1] spans the corner pixels' centres (align_corners)
  // or their outer edges.
  Value x = p.alignCorners
                ? m.op<MulOp>(m.op<AddOp>(n, m.real(1)), m.real((size - 1) / 2))
                : m.op<DivOp>(m.op<SubOp>(m.op<MulOp>(m.op<AddOp>(n, m.real(1)),
                                                      m.real(size)),
                                          m.real(1)),
                              m.real(2));
  double low = p.alignCorners ? 0.0 : -0.5;
  double high = p.alignCorners ? size - 1 : size - 0.5;
  if (p.mode == SampleMode::Nearest)
    x = m.unary<RoundOp>(x); // half to even, as PyTorch rounds
  if (p.padding == "border") {
    Value outside = m.op<OrOp>(m.op<LessOp>(x, m.real(low)),
                               m.op<GreaterOp>(x, m.real(high)));
    x = m.select(outside, m.clamp(x, m.real(0), m.real(size - 1)), x);
  } else if (p.padding == "reflection") {
    x = reflect(m, x, low, high);
  }
  if (p.mode == SampleMode::Nearest)
    return {pixelAt(m, p, m.truncate(x), dim, low, high, Value())};
  Value x0 = m.unary<FloorOp>(x);
  Value t = m.op<SubOp>(x, x0);
  SmallVector<Value> weights;
  int64_t first = 0;
  if (p.mode == SampleMode::Linear) {
    weights = {m.op<SubOp>(m.real(1), t), t};
  } else {
    weights = cubicWeights(m, t);
    first = -1;
  }
  SmallVector<Tap> taps;
  for (auto [k, w] : llvm::enumerate(weights))
    taps.push_back(pixelAt(m, p,
                           m.op<AddOp>(x0, m.real(double(first + int64_t(k)))),
                           dim, low, high, w));
  return taps;
}

static LogicalResult importGridSample(NodeContext &ctx) {
  Value x = ctx.input(0), grid = ctx.input(1);
  if (!x || !grid || failed(ctx.requireFloat({x, grid})))
    return failure();
  ArrayRef<int64_t> xShape = shapeOf(x), gridShape = shapeOf(grid);
  int64_t rank = xShape.size(), spatial = rank - 2;
  if (spatial < 1 || spatial > 3)
    return ctx.fail("the input must have 1 to 3 spatial dims");
  if (ctx.opset() < 20 && spatial != 2)
    return ctx.fail("GridSample before opset 20 takes 4-D inputs");
  if (int64_t(gridShape.size()) != rank || gridShape[0] != xShape[0] ||
      gridShape.back() != spatial)
    return ctx.fail("the grid must be [N, spatial output dims..., " +
                    Twine(spatial) + "] for this input");
  if (llvm::is_contained(xShape, 0) || llvm::is_contained(gridShape, 0))
    return ctx.fail("empty inputs are not supported");

  GridSampleParams p;
  std::string mode =
      ctx.stringAttr("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "nearest")
    p.mode = SampleMode::Nearest;
  else if (mode == "linear" || mode == "bilinear")
    p.mode = SampleMode::Linear;
  else if (mode == "cubic" || mode == "bicubic")
    p.mode = SampleMode::Cubic;
  else
    return ctx.fail("mode '" + mode + "' is not supported");
  p.padding = ctx.stringAttr("padding_mode", "zeros");
  if (p.padding != "zeros" && p.padding != "border" &&
      p.padding != "reflection")
    return ctx.fail("padding_mode '" + p.padding + "' is not supported");
  p.alignCorners = ctx.intAttr("align_corners", 0) != 0;

  int64_t batch = xShape[0], channels = xShape[1];
  int64_t outputs = 1, pixels = 1;
  for (int64_t d = 1; d <= spatial; ++d) {
    outputs *= gridShape[d];
    pixels *= xShape[d + 1];
  }
  GridOps m(ctx, getElementTypeOrSelf(grid.getType()));
  Value flatGrid = m.reshape(grid, {batch, outputs, spatial});
  // The grid lists coordinates innermost dim first.
  SmallVector<SmallVector<Tap>> taps;
  for (int64_t d = 0; d < spatial; ++d) {
    auto &b = ctx.b();
    Value column = SliceOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get({batch, outputs, 1},
                              getElementTypeOrSelf(grid.getType())),
        flatGrid, b.getDenseI64ArrayAttr({0, 0, spatial - 1 - d}),
        b.getDenseI64ArrayAttr({1, 1, 1}));
    taps.push_back(
        dimTaps(m, p, m.reshape(column, {batch, outputs}), xShape[d + 2]));
  }

  // Every combination of one tap per dim: gather, mask, weigh, sum.
  Type elementType = getElementTypeOrSelf(x.getType());
  Value flatX = m.reshape(x, {batch, channels, pixels});
  Value zero = ctx.scalar(x, 0.0);
  Value sum;
  SmallVector<size_t> choice(spatial, 0);
  while (true) {
    Value index, weight, inside;
    int64_t stride = 1;
    for (int64_t d = spatial - 1; d >= 0; --d) {
      const Tap &tap = taps[d][choice[d]];
      Value scaled = m.op<MulOp>(tap.index, m.scalar(stride));
      index = index ? m.op<AddOp>(index, scaled) : scaled;
      if (tap.weight)
        weight = weight ? m.op<MulOp>(weight, tap.weight) : tap.weight;
      if (tap.inside)
        inside = inside ? m.op<AndOp>(inside, tap.inside) : tap.inside;
      stride *= xShape[d + 2];
    }
    auto &b = ctx.b();
    Value indices = ExpandOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get({batch, channels, outputs}, m.i64()),
        m.reshape(index, {batch, 1, outputs}));
    Value term = m.gatherElements(flatX, indices, 2);
    if (inside)
      term = m.select(m.reshape(inside, {batch, 1, outputs}), term, zero);
    if (weight)
      term = m.op<MulOp>(
          term, m.reshape(m.castTo(weight, elementType), {batch, 1, outputs}));
    sum = sum ? m.op<AddOp>(sum, term) : term;
    // Next combination, innermost dim fastest.
    int64_t d = spatial - 1;
    while (d >= 0 && ++choice[d] == taps[d].size())
      choice[d--] = 0;
    if (d < 0)
      break;
  }
  SmallVector<int64_t> outShape = {batch, channels};
  outShape.append(gridShape.begin() + 1, gridShape.end() - 1);
  Value y = m.reshape(sum, outShape);
  if (m.failed() || !y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

void onnx_import::registerGridSampleOps(OpRegistry &registry) {
  // clang-format off
  registry.add("GridSample", 16, kMaxOpset, "nearest, linear, cubic; zeros, border, reflection padding; 1-3 spatial dims (2 before opset 20); grid read at run time", importGridSample);
  // clang-format on
}
