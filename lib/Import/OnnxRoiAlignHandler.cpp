//===- OnnxRoiAlignHandler.cpp - RoiAlign as weighted gathers -------------===//
//
// RoiAlign pools each region of interest (read at run time) into an
// output_height x output_width grid: every bin averages (or takes the
// largest of) sampling_ratio x sampling_ratio bilinear samples, as the ONNX
// reference (op_roi_align.py) computes them. The sample coordinates and
// bilinear weights are separable: per region, the rows' and the columns'
// are computed on their own ([R, OH * g] and [R, OW * g]), and each of the
// four corners of every sample is one GatherElements from the region's
// image, flattened to [R, C, H * W], at row * W + column, times the product
// of the two weights. Samples outside [-1, H] x [-1, W] weigh nothing.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// One axis's samples of every region: the two neighbours each reads and
/// their weights, [R, bins * g] each.
struct AxisSamples {
  Value low, high; // int64 positions in the axis
  Value lowWeight, highWeight;
};

/// Float arithmetic in the regions' type on top of IndexOps.
class RoiOps : public FloatOps {
public:
  RoiOps(NodeContext &ctx, Value like)
      : FloatOps(ctx, getElementTypeOrSelf(like.getType())), ctx(ctx) {}
  /// Column `i` of the [R, 4] regions as [R, 1].
  Value column(Value rois, int64_t i) {
    auto &b = ctx.b();
    int64_t count = shapeOf(rois)[0];
    return SliceOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get({count, 1}, getElementTypeOrSelf(rois.getType())),
        rois, b.getDenseI64ArrayAttr({0, i}), b.getDenseI64ArrayAttr({1, 1}));
  }

private:
  NodeContext &ctx;
};

} // namespace

/// The samples along one axis of `size` pixels for regions starting at
/// `start` ([R, 1]) with bins of `bin` ([R, 1]).
static AxisSamples axisSamples(RoiOps &m, Value start, Value bin, int64_t bins,
                               int64_t grid, int64_t size) {
  std::vector<double> offsets;
  for (int64_t p = 0; p < bins; ++p)
    for (int64_t i = 0; i < grid; ++i)
      offsets.push_back(double(p) + (double(i) + 0.5) / double(grid));
  Value at =
      m.op<AddOp>(start, m.op<MulOp>(m.reals(offsets, {1, bins * grid}), bin));
  Value outside = m.op<OrOp>(m.op<LessOp>(at, m.real(-1)),
                             m.op<GreaterOp>(at, m.real(double(size))));
  at = m.op<MaxOp>(at, m.real(0));
  Value last = m.real(double(size - 1));
  // At or past the last pixel both neighbours are the last pixel.
  Value atEnd = m.op<GreaterEqualOp>(m.unary<FloorOp>(at), last);
  Value low = m.select(atEnd, last, m.unary<FloorOp>(at));
  Value high = m.select(atEnd, last, m.op<AddOp>(low, m.real(1)));
  Value pos = m.select(atEnd, last, at);
  Value frac = m.op<SubOp>(pos, low);
  Value zero = m.real(0);
  return {m.castTo(low, m.i64()), m.castTo(high, m.i64()),
          m.select(outside, zero, m.op<SubOp>(m.real(1), frac)),
          m.select(outside, zero, frac)};
}

static LogicalResult importRoiAlign(NodeContext &ctx) {
  Value x = ctx.input(0), rois = ctx.input(1), batchIndices = ctx.input(2);
  if (!x || !rois || !batchIndices || failed(ctx.requireFloat({x, rois})) ||
      failed(ctx.requireSameDtype({x, rois})) ||
      failed(ctx.requireIndices(batchIndices)))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() != 4 || rankOf(rois) != 2 || shapeOf(rois)[1] != 4 ||
      rankOf(batchIndices) != 1 || shapeOf(batchIndices)[0] != shapeOf(rois)[0])
    return ctx.fail("X must be [N, C, H, W], rois [R, 4] and batch_indices "
                    "[R]");
  int64_t regions = shapeOf(rois)[0], channels = xs[1], height = xs[2],
          width = xs[3];
  int64_t oh = ctx.intAttr("output_height", 1),
          ow = ctx.intAttr("output_width", 1);
  int64_t grid = ctx.intAttr("sampling_ratio", 0);
  if (oh < 1 || ow < 1 || regions < 1 || llvm::is_contained(xs, 0))
    return ctx.fail("empty inputs or outputs are not supported");
  if (grid < 1)
    return ctx.fail("sampling_ratio 0 (as many samples as each region "
                    "needs, known only at run time) is not supported");
  std::string mode = ctx.stringAttr("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.fail("mode '" + mode + "' is not supported");
  // Opset 10 has output_half_pixel behaviour and no attribute for it.
  std::string transform =
      ctx.stringAttr("coordinate_transformation_mode",
                     ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return ctx.fail("coordinate_transformation_mode '" + transform +
                    "' is not supported");
  bool halfPixel = transform == "half_pixel";
  if (failed(ctx.requireIndicesInRange(2, {0}, xs)))
    return failure();

  RoiOps m(ctx, rois);
  Value scale = m.real(ctx.floatAttr("spatial_scale", 1.0f));
  Value offset = m.real(halfPixel ? 0.5 : 0.0);
  auto corner = [&](int64_t i) {
    return m.op<SubOp>(m.op<MulOp>(m.column(rois, i), scale), offset);
  };
  Value startW = corner(0), startH = corner(1);
  Value sizeW = m.op<SubOp>(corner(2), startW);
  Value sizeH = m.op<SubOp>(corner(3), startH);
  if (!halfPixel) {
    sizeW = m.op<MaxOp>(sizeW, m.real(1));
    sizeH = m.op<MaxOp>(sizeH, m.real(1));
  }
  AxisSamples rows =
      axisSamples(m, startH, m.op<DivOp>(sizeH, m.real(oh)), oh, grid, height);
  AxisSamples cols =
      axisSamples(m, startW, m.op<DivOp>(sizeW, m.real(ow)), ow, grid, width);

  // Each region's image, [R, C, H * W].
  Value images = m.reshape(m.gather(x, m.widen(batchIndices), 0),
                           {regions, channels, height * width});
  int64_t samples = oh * grid * ow * grid;
  auto outer = [&](Value r, Value c, auto combine) {
    return m.reshape(combine(m.reshape(r, {regions, oh * grid, 1}),
                             m.reshape(c, {regions, 1, ow * grid})),
                     {regions, 1, samples});
  };
  Value pooled;
  for (auto [rowIndex, rowWeight] :
       {std::pair{rows.low, rows.lowWeight}, {rows.high, rows.highWeight}})
    for (auto [colIndex, colWeight] :
         {std::pair{cols.low, cols.lowWeight}, {cols.high, cols.highWeight}}) {
      Value index = outer(rowIndex, colIndex, [&](Value r, Value c) {
        return m.op<AddOp>(m.op<MulOp>(r, m.scalar(width)), c);
      });
      Value weight = outer(rowWeight, colWeight,
                           [&](Value r, Value c) { return m.op<MulOp>(r, c); });
      auto &b = ctx.b();
      Value spread =
          index ? ExpandOp::create(b, ctx.getLoc(),
                                   RankedTensorType::get(
                                       {regions, channels, samples}, m.i64()),
                                   index)
                : Value();
      Value term =
          m.op<MulOp>(m.gatherElements(images, spread, 2),
                      m.castTo(weight, getElementTypeOrSelf(x.getType())));
      pooled = !pooled         ? term
               : mode == "avg" ? m.op<AddOp>(pooled, term)
                               : m.op<MaxOp>(pooled, term);
    }
  // Each bin's samples: average them, or take the largest.
  Value bins = m.reshape(pooled, {regions, channels, oh, grid, ow, grid});
  Value y = mode == "avg"
                ? m.op<DivOp>(m.sum(m.sum(bins, 5), 3),
                              ctx.scalar(x, double(grid * grid)))
                : m.reduce<ReduceMaxOp>(m.reduce<ReduceMaxOp>(bins, 5), 3);
  if (m.failed() || !y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

void onnx_import::registerRoiAlignOps(OpRegistry &registry) {
  registry.add("RoiAlign", 10, kMaxOpset,
               "avg and max; regions read at run time; a positive "
               "sampling_ratio (0, adaptive, is not supported)",
               importRoiAlign);
}
