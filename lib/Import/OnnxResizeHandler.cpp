//===- OnnxResizeHandler.cpp - Resize and Upsample as gathers and weights -===//
//
// ONNX Resize (and its predecessor Upsample) is separable: every output
// element is a weighted sum of input elements along each resized axis in
// turn. With scales, sizes and roi known at import time, the source indices
// and weights of each axis are computed here, following the ONNX reference
// implementation (onnx/reference/ops/op_resize.py), and the op becomes, per
// resized axis:
//
//   nearest        y = gather(x, idx, axis)
//   linear, cubic  y = sum_k gather(x, idx_k, axis) * w_k
//
// where idx/idx_k are constant int64 tensors [out] and w_k are constant
// weights shaped [out, 1, ..., 1] to broadcast along that axis. Positions
// that tf_crop_and_resize puts outside the input take extrapolation_value
// through a kiln.where with a constant mask.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

enum class InterpolationMode { Nearest, Linear, Cubic };

/// Everything that decides how one axis is resampled, except its sizes.
struct ResizeParams {
  InterpolationMode mode = InterpolationMode::Nearest;
  /// coordinate_transformation_mode.
  std::string coordinateMode = "half_pixel";
  /// nearest_mode; "simple" is the pre-opset-11 rule (Upsample, Resize-10):
  /// floor when upsampling, ceil when downsampling.
  std::string nearestMode = "round_prefer_floor";
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
};

/// How one axis is resampled: output position j is
/// sum_k weight[j * taps + k] * input[index[j * taps + k]], or the
/// extrapolation value where outside[j].
struct AxisResampling {
  int64_t inDim = 0, outDim = 0, taps = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> outside;

  bool anyOutside() const { return llvm::is_contained(outside, true); }
  /// One tap whose weight is 1 everywhere: a plain gather.
  bool isGather() const {
    if (taps != 1)
      return false;
    for (int64_t j = 0; j < outDim; ++j)
      if (!outside[j] && weight[j] != 1.0)
        return false;
    return true;
  }
  /// Leaves the axis as it is.
  bool isIdentity() const {
    if (!isGather() || anyOutside() || inDim != outDim)
      return false;
    for (int64_t j = 0; j < outDim; ++j)
      if (index[j] != j)
        return false;
    return true;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Index and weight computation (one axis, one output position)
//===----------------------------------------------------------------------===//

/// Maps output coordinate `x` to a coordinate in the input, per
/// coordinate_transformation_mode. `outWidth` is scale * inDim as a real
/// number (as the reference uses it), `outDim` the integer output size.
/// Sets `outside` when tf_crop_and_resize samples outside the input.
static double originalCoordinate(const ResizeParams &p, double x, double scale,
                                 int64_t inDim, int64_t outDim, double roiStart,
                                 double roiEnd, bool &outside) {
  outside = false;
  double in = double(inDim);
  double outWidth = scale * in;
  // The reference compares the real output width with 1; sizes turned into
  // scales (size / in * in) may miss 1 by an ulp.
  bool singleOutput = std::abs(outWidth - 1.0) < 1e-9;
  const std::string &mode = p.coordinateMode;
  if (mode == "align_corners")
    return singleOutput ? 0.0 : x * (in - 1) / (outWidth - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "tf_crop_and_resize") {
    double xOri = singleOutput
                      ? (roiEnd - roiStart) * (in - 1) / 2
                      : x * (roiEnd - roiStart) * (in - 1) / (outWidth - 1);
    xOri += roiStart * (in - 1);
    // TF's CropAndResize returns the extrapolation value outside the input.
    outside = xOri < 0 || xOri > in - 1;
    return xOri;
  }
  if (mode == "pytorch_half_pixel")
    return singleOutput ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "half_pixel_symmetric") {
    // Maps the centre of the input to the centre of the output canvas; only
    // differs from half_pixel when outDim != scale * inDim.
    double adjustment = double(outDim) / outWidth;
    double offset = in / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  // tf_half_pixel_for_nn (opset 11 only).
  return (x + 0.5) / scale;
}

/// Nearest as two taps (left, right neighbour) at `ratio` in (0, 1]; an
/// integral coordinate (ratio 1) always takes the right one, i.e. itself.
static std::vector<double> nearestCoeffs(double ratio, bool integral,
                                         const std::string &nearestMode) {
  auto pick = [](bool right) {
    return std::vector<double>{right ? 0.0 : 1.0, right ? 1.0 : 0.0};
  };
  if (integral)
    return pick(true);
  if (nearestMode == "round_prefer_floor")
    return pick(ratio > 0.5);
  if (nearestMode == "round_prefer_ceil")
    return pick(ratio >= 0.5);
  if (nearestMode == "floor")
    return pick(false);
  return pick(true); // ceil
}

/// Linear interpolation between the left and right neighbours.
static std::vector<double> linearCoeffs(double ratio) {
  return {1 - ratio, ratio};
}

/// Keys' cubic convolution with parameter A over the four neighbours
/// x0-1, x0, x0+1, x0+2 where ratio = x - x0.
static std::vector<double> cubicCoeffs(double ratio, double A) {
  auto far = [A](double t) { // 1 < |t| < 2
    return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  };
  auto near = [A](double t) { // |t| <= 1
    return ((A + 2) * t - (A + 3)) * t * t + 1;
  };
  return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
}

/// The input index of the first of the `n` neighbours of `xOri` that the
/// reference takes: the n integers nearest to xOri (ties to the smaller),
/// searched in the input padded by ceil(n/2) on each side. May be negative
/// or past the end; such indices read the edge value.
static int64_t firstNeighbour(double xOri, double ratio, int64_t n,
                              int64_t inDim) {
  int64_t pad = (n + 1) / 2;
  // Left neighbour: floor(xOri), or xOri - 1 when integral (ratio is 1).
  int64_t left = int64_t(std::llround(xOri - ratio));
  int64_t start = left - n / 2 + 1 + pad; // in padded coordinates
  int64_t limit = inDim + 2 * pad;
  start = std::clamp<int64_t>(start, 0, limit - n);
  return start - pad;
}

/// Computes the taps of one axis of size `inDim` resized to `outDim` with
/// `scale` (output / input, per ONNX), following _interpolate_1d_with_x.
static AxisResampling planAxis(const ResizeParams &p, int64_t inDim,
                               int64_t outDim, double scale, double roiStart,
                               double roiEnd) {
  AxisResampling plan;
  plan.inDim = inDim;
  plan.outDim = outDim;
  plan.outside.assign(outDim, false);
  // Per output position, (clamped input index, weight) pairs.
  std::vector<std::vector<std::pair<int64_t, double>>> rows(outDim);
  for (int64_t j = 0; j < outDim; ++j) {
    bool outside;
    double xOri = originalCoordinate(p, double(j), scale, inDim, outDim,
                                     roiStart, roiEnd, outside);
    if (outside) {
      plan.outside[j] = true;
      continue;
    }
    if (p.mode == InterpolationMode::Nearest && p.nearestMode == "simple") {
      int64_t i = int64_t(scale < 1 ? std::ceil(xOri) : std::floor(xOri));
      rows[j].push_back({std::clamp<int64_t>(i, 0, inDim - 1), 1.0});
      continue;
    }
    // The ratio is in (0, 1]: the reference prefers the left pixel.
    double floorX = std::floor(xOri);
    bool integral = xOri == floorX;
    double ratio = integral ? 1.0 : xOri - floorX;
    std::vector<double> coeffs;
    switch (p.mode) {
    case InterpolationMode::Nearest:
      coeffs = nearestCoeffs(ratio, integral, p.nearestMode);
      break;
    case InterpolationMode::Linear:
      coeffs = linearCoeffs(ratio);
      break;
    case InterpolationMode::Cubic:
      coeffs = cubicCoeffs(ratio, p.cubicCoeffA);
      break;
    }
    int64_t n = coeffs.size();
    int64_t first = firstNeighbour(xOri, ratio, n, inDim);
    if (p.excludeOutside) {
      // Neighbours outside the input get no weight; the rest renormalize.
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        int64_t i = first + k;
        if (i < 0 || i >= inDim)
          coeffs[k] = 0;
        sum += coeffs[k];
      }
      if (sum != 0)
        for (double &c : coeffs)
          c /= sum;
    }
    // Edge padding: clamp, then merge taps that read the same element.
    for (int64_t k = 0; k < n; ++k) {
      int64_t i = std::clamp<int64_t>(first + k, 0, inDim - 1);
      auto it = llvm::find_if(rows[j], [&](auto &t) { return t.first == i; });
      if (it != rows[j].end())
        it->second += coeffs[k];
      else
        rows[j].push_back({i, coeffs[k]});
    }
    // Drop zero weights and snap weights within rounding of 1.
    llvm::erase_if(rows[j], [](auto &t) { return std::abs(t.second) < 1e-12; });
    if (rows[j].size() == 1 && std::abs(rows[j][0].second - 1) < 1e-12)
      rows[j][0].second = 1.0;
  }
  plan.taps = 1;
  for (auto &row : rows)
    plan.taps = std::max<int64_t>(plan.taps, row.size());
  plan.index.assign(outDim * plan.taps, 0);
  plan.weight.assign(outDim * plan.taps, 0.0);
  for (int64_t j = 0; j < outDim; ++j)
    for (auto [k, tap] : llvm::enumerate(rows[j])) {
      plan.index[j * plan.taps + k] = tap.first;
      plan.weight[j * plan.taps + k] = tap.second;
    }
  return plan;
}

//===----------------------------------------------------------------------===//
// IR emission
//===----------------------------------------------------------------------===//

/// Applies one axis' resampling to `x`.
static FailureOr<Value> resampleAxis(NodeContext &ctx, Value x, int64_t axis,
                                     const AxisResampling &plan,
                                     double extrapolationValue) {
  if (plan.isIdentity())
    return x;
  auto &b = ctx.b();
  Type elementType = getElementTypeOrSelf(x.getType());
  int64_t rank = rankOf(x);
  auto indexType = RankedTensorType::get({plan.outDim}, b.getI64Type());
  // Constants broadcast along `axis`: [out, 1, ..., 1].
  SmallVector<int64_t> columnShape = {plan.outDim};
  columnShape.append(rank - axis - 1, 1);
  NamedAttribute axisAttr = b.getNamedAttr("axis", b.getI64IntegerAttr(axis));

  auto gatherTap = [&](int64_t k) -> FailureOr<Value> {
    std::vector<double> idx(plan.outDim);
    for (int64_t j = 0; j < plan.outDim; ++j)
      idx[j] = double(plan.index[j * plan.taps + k]);
    return ctx.create<GatherOp>(ValueRange{x, ctx.constant(indexType, idx)},
                                {axisAttr});
  };

  FailureOr<Value> result = failure();
  if (plan.isGather()) {
    result = gatherTap(0);
  } else {
    auto weightType = RankedTensorType::get(columnShape, elementType);
    Value sum;
    for (int64_t k = 0; k < plan.taps; ++k) {
      std::vector<double> w(plan.outDim);
      bool allZero = true;
      for (int64_t j = 0; j < plan.outDim; ++j) {
        w[j] = plan.outside[j] ? 0.0 : plan.weight[j * plan.taps + k];
        allZero &= w[j] == 0.0;
      }
      if (allZero)
        continue;
      auto gathered = gatherTap(k);
      if (failed(gathered))
        return failure();
      auto term =
          ctx.create<MulOp>(ValueRange{*gathered, ctx.constant(weightType, w)});
      if (failed(term))
        return failure();
      if (!sum) {
        sum = *term;
        continue;
      }
      auto added = ctx.create<AddOp>(ValueRange{sum, *term});
      if (failed(added))
        return failure();
      sum = *added;
    }
    if (!sum) {
      // Every position extrapolates; the where below fills them all.
      SmallVector<int64_t> shape(shapeOf(x));
      shape[axis] = plan.outDim;
      sum = ctx.constant(RankedTensorType::get(shape, elementType), {0.0});
    }
    result = sum;
  }
  if (failed(result) || !plan.anyOutside())
    return result;
  // tf_crop_and_resize: positions outside the input take the extrapolation
  // value.
  std::vector<double> mask(plan.outDim);
  for (int64_t j = 0; j < plan.outDim; ++j)
    mask[j] = plan.outside[j] ? 1.0 : 0.0;
  Value cond =
      ctx.constant(RankedTensorType::get(columnShape, b.getI1Type()), mask);
  return ctx.create<WhereOp>(
      ValueRange{cond, ctx.scalar(x, extrapolationValue), *result});
}

/// Resizes every axis of `x` to `outSizes` with per-axis `scales`.
static LogicalResult emitResize(NodeContext &ctx, Value x,
                                const ResizeParams &params,
                                ArrayRef<int64_t> outSizes,
                                ArrayRef<double> scales, ArrayRef<double> roi) {
  int64_t rank = rankOf(x);
  auto inShape = llvm::to_vector(shapeOf(x));
  Value y = x;
  // Innermost axis first, as the reference's recursion evaluates them.
  for (int64_t axis = rank - 1; axis >= 0; --axis) {
    if (inShape[axis] == 0 || outSizes[axis] == 0)
      return ctx.fail("empty input or output dims are not supported");
    double roiStart = roi.empty() ? 0.0 : roi[axis];
    double roiEnd = roi.empty() ? 1.0 : roi[rank + axis];
    AxisResampling plan = planAxis(params, inShape[axis], outSizes[axis],
                                   scales[axis], roiStart, roiEnd);
    auto resampled =
        resampleAxis(ctx, y, axis, plan, params.extrapolationValue);
    if (failed(resampled))
      return failure();
    y = *resampled;
  }
  ctx.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes and constant inputs
//===----------------------------------------------------------------------===//

/// The values of a float or double constant; nullopt for other dtypes.
static std::optional<std::vector<double>> floatValues(const ConstTensor &t) {
  std::vector<double> values;
  if (t.onnxType == onnx::TensorProto::FLOAT) {
    for (size_t i = 0; i + 4 <= t.bytes.size(); i += 4) {
      float v;
      memcpy(&v, t.bytes.data() + i, 4);
      values.push_back(v);
    }
  } else if (t.onnxType == onnx::TensorProto::DOUBLE) {
    for (size_t i = 0; i + 8 <= t.bytes.size(); i += 8) {
      double v;
      memcpy(&v, t.bytes.data() + i, 8);
      values.push_back(v);
    }
  } else {
    return std::nullopt;
  }
  return values;
}

/// Input `i` as constant floats; absent (or empty) gives an empty list.
static FailureOr<std::vector<double>> constFloats(NodeContext &ctx, size_t i,
                                                  StringRef what) {
  if (!ctx.hasInput(i))
    return std::vector<double>();
  const ConstTensor *tensor = ctx.constInput(i);
  if (!tensor) {
    (void)ctx.failNotConstant(i, "(" + what + ") must be a constant");
    return failure();
  }
  auto values = floatValues(*tensor);
  if (!values) {
    (void)ctx.fail(what + " must be a float or double tensor");
    return failure();
  }
  return *values;
}

/// Input `i` as constant integers; absent (or empty) gives an empty list.
static FailureOr<std::vector<int64_t>> constSizes(NodeContext &ctx, size_t i) {
  if (!ctx.hasInput(i))
    return std::vector<int64_t>();
  if (!ctx.constInput(i)) {
    (void)ctx.failNotConstant(i, "(sizes) must be a constant");
    return failure();
  }
  return ctx.constInts(i);
}

/// The output size of a dim resized by `scale`: floor(in * scale), per ONNX;
/// -1 when that is not an int64 (a huge scale).
static int64_t scaledSize(int64_t in, double scale) {
  double size = std::floor(double(in) * scale);
  return size >= 0 && size < 0x1p62 ? int64_t(size) : -1;
}

/// Checks the input and its dtype for `mode`.
static FailureOr<Value> resizeInput(NodeContext &ctx, InterpolationMode mode) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.hasStaticShape())
    return ctx.fail("the input shape must be static");
  if (llvm::is_contained(type.getShape(), 0))
    return ctx.fail("empty inputs are not supported");
  // Nearest only moves elements; interpolation needs arithmetic.
  unsigned classes = mode == InterpolationMode::Nearest ? NodeContext::Any
                                                        : NodeContext::Float;
  if (failed(ctx.requireDtypes(x, classes)))
    return failure();
  return x;
}

static FailureOr<InterpolationMode> parseMode(NodeContext &ctx,
                                              bool allowCubic) {
  std::string mode = ctx.stringAttr("mode", "nearest");
  if (mode == "nearest")
    return InterpolationMode::Nearest;
  if (mode == "linear" || mode == "bilinear")
    return InterpolationMode::Linear;
  if (mode == "cubic" && allowCubic)
    return InterpolationMode::Cubic;
  return ctx.fail("mode '" + mode + "' is not supported");
}

/// The per-dim scales and output sizes of a Resize-11+ whose scales (input
/// 2) or sizes (input 3) are constants, for the resized `axes`.
static LogicalResult resolveSizes(NodeContext &ctx, ArrayRef<int64_t> inShape,
                                  ArrayRef<int64_t> axes, StringRef policy,
                                  SmallVector<double> &scales,
                                  SmallVector<int64_t> &outSizes) {
  int64_t rank = inShape.size(), count = axes.size();
  auto scalesIn = constFloats(ctx, 2, "scales");
  if (failed(scalesIn))
    return failure();
  std::vector<int64_t> sizesIn;
  if (scalesIn->empty()) {
    auto given = constSizes(ctx, 3);
    if (failed(given))
      return failure();
    sizesIn = *given;
  } else if (const ConstTensor *sizes = ctx.constInput(3)) {
    if (!sizes->bytes.empty())
      return ctx.fail("only one of scales and sizes may be given");
  }

  scales.assign(rank, 1.0);
  outSizes.assign(inShape.begin(), inShape.end());
  if (!scalesIn->empty()) {
    if ((int64_t)scalesIn->size() != count)
      return ctx.fail("scales must have one entry per resized axis");
    for (int64_t i = 0; i < count; ++i) {
      double s = (*scalesIn)[i];
      if (!(s > 0) || !std::isfinite(s) || scaledSize(inShape[axes[i]], s) < 0)
        return ctx.fail("scales must be positive, finite and not huge");
      scales[axes[i]] = s;
      outSizes[axes[i]] = scaledSize(inShape[axes[i]], s);
    }
  } else if (!sizesIn.empty()) {
    if ((int64_t)sizesIn.size() != count)
      return ctx.fail("sizes must have one entry per resized axis");
    for (int64_t i = 0; i < count; ++i) {
      if (sizesIn[i] <= 0)
        return ctx.fail("sizes must be positive");
      scales[axes[i]] = double(sizesIn[i]) / double(inShape[axes[i]]);
      outSizes[axes[i]] = sizesIn[i];
    }
    if (policy != "stretch") {
      // One scale for all resized axes: the smallest (not_larger) or the
      // largest (not_smaller); sizes round half up.
      double s = scales[axes.front()];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, scales[a])
                                   : std::max(s, scales[a]);
      for (int64_t a : axes) {
        scales[a] = s;
        outSizes[a] = int64_t(s * double(inShape[a]) + 0.5);
      }
    }
  } else {
    return ctx.fail("one of scales and sizes must be given");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Scales and roi read at run time
//===----------------------------------------------------------------------===//
//
// When scales (or tf_crop_and_resize's roi) is not a constant, each output
// size is the one the model declares and the taps of planAxis are computed
// in the kernel, in float64 as the reference computes them: the source
// coordinate of every output position, its neighbours (clamped into the
// input) and their weights. A run-time check fails the run when
// floor(in * scale) is not the declared size.

namespace {

/// float64 coordinate arithmetic on top of IndexOps.
class CoordinateOps : public FloatOps {
public:
  explicit CoordinateOps(NodeContext &ctx)
      : FloatOps(ctx, ctx.b().getF64Type()), ctx(ctx) {}

  /// 0, 1, ..., n - 1 as float64 [n].
  Value realIota(int64_t n) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = double(i);
    return reals(values, {n});
  }
  /// Element `i` of a 1-D tensor, as a scalar of its element type.
  Value at(Value v, int64_t i) {
    if (!v)
      return fail();
    auto &b = ctx.b();
    Value one = SliceOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get({1}, getElementTypeOrSelf(v.getType())), v,
        b.getDenseI64ArrayAttr({i}), b.getDenseI64ArrayAttr({1}));
    return reshape(one, {});
  }

private:
  NodeContext &ctx;
};

/// Per data dim, how a Resize with values read at run time resamples it.
struct RuntimeResize {
  explicit RuntimeResize(ArrayRef<int64_t> inShape)
      : scale(inShape.size()), roiStart(inShape.size()), roiEnd(inShape.size()),
        outSizes(inShape) {}
  SmallVector<Value> scale;            // float64 scalars; null: dim kept
  SmallVector<Value> roiStart, roiEnd; // tf_crop_and_resize only
  SmallVector<int64_t> outSizes;
};

} // namespace

/// originalCoordinate for the output positions `j` (float64 [out]).
static Value sourceCoordinates(CoordinateOps &m, const ResizeParams &p, Value j,
                               Value scale, int64_t inDim, int64_t outDim,
                               Value roiStart, Value roiEnd, Value &outside) {
  Value in = m.real(double(inDim));
  Value outWidth = m.op<MulOp>(scale, in);
  Value singleOutput = m.op<LessOp>(
      m.unary<AbsOp>(m.op<SubOp>(outWidth, m.real(1))), m.real(1e-9));
  Value halfPixel =
      m.op<DivOp>(m.op<AddOp>(j, m.real(0.5)), scale); // (x + 0.5) / scale
  const std::string &mode = p.coordinateMode;
  if (mode == "align_corners")
    return m.select(singleOutput, m.real(0),
                    m.op<DivOp>(m.op<MulOp>(j, m.real(double(inDim - 1))),
                                m.op<SubOp>(outWidth, m.real(1))));
  if (mode == "asymmetric")
    return m.op<DivOp>(j, scale);
  if (mode == "tf_crop_and_resize") {
    Value span =
        m.op<MulOp>(m.op<SubOp>(roiEnd, roiStart), m.real(double(inDim - 1)));
    Value spread = m.select(
        singleOutput, m.op<DivOp>(span, m.real(2)),
        m.op<DivOp>(m.op<MulOp>(j, span), m.op<SubOp>(outWidth, m.real(1))));
    Value x =
        m.op<AddOp>(spread, m.op<MulOp>(roiStart, m.real(double(inDim - 1))));
    outside = m.op<OrOp>(m.op<LessOp>(x, m.real(0)),
                         m.op<GreaterOp>(x, m.real(double(inDim - 1))));
    return x;
  }
  if (mode == "pytorch_half_pixel")
    return m.select(singleOutput, m.real(-0.5),
                    m.op<SubOp>(halfPixel, m.real(0.5)));
  if (mode == "half_pixel")
    return m.op<SubOp>(halfPixel, m.real(0.5));
  if (mode == "half_pixel_symmetric") {
    Value adjustment = m.op<DivOp>(m.real(double(outDim)), outWidth);
    Value offset = m.op<MulOp>(m.real(double(inDim) / 2),
                               m.op<SubOp>(m.real(1), adjustment));
    return m.op<AddOp>(offset, m.op<SubOp>(halfPixel, m.real(0.5)));
  }
  return halfPixel; // tf_half_pixel_for_nn
}

/// The taps' weights at `ratio` (float64 [out]), as planAxis takes them.
static SmallVector<Value> tapWeights(CoordinateOps &m, const ResizeParams &p,
                                     Value ratio, Value integral) {
  if (p.mode == InterpolationMode::Linear)
    return {m.op<SubOp>(m.real(1), ratio), ratio};
  if (p.mode == InterpolationMode::Cubic) {
    double A = p.cubicCoeffA;
    auto poly = [&](Value t,
                    ArrayRef<double> c) { // ((c0 t + c1) t + c2) t + c3
      Value v = m.real(c[0]);
      for (double k : c.drop_front())
        v = m.op<AddOp>(m.op<MulOp>(v, t), m.real(k));
      return v;
    };
    auto far = [&](Value t) { return poly(t, {A, -5 * A, 8 * A, -4 * A}); };
    auto near = [&](Value t) { return poly(t, {A + 2, -(A + 3), 0, 1}); };
    Value one = m.real(1), two = m.real(2);
    return {far(m.op<AddOp>(ratio, one)), near(ratio),
            near(m.op<SubOp>(one, ratio)), far(m.op<SubOp>(two, ratio))};
  }
  // Nearest: the right neighbour or the left one.
  Value half = m.real(0.5);
  Value right;
  if (p.nearestMode == "round_prefer_floor")
    right = m.op<GreaterOp>(ratio, half);
  else if (p.nearestMode == "round_prefer_ceil")
    right = m.op<GreaterEqualOp>(ratio, half);
  else if (p.nearestMode == "floor")
    right = integral;
  else // ceil
    right = m.op<GreaterOp>(ratio, m.real(0));
  right = m.op<OrOp>(right, integral);
  Value wRight = m.select(right, m.real(1), m.real(0));
  return {m.op<SubOp>(m.real(1), wRight), wRight};
}

/// Resamples dim `axis` of `x` to `outDim` with the coordinates computed in
/// the kernel.
static Value resampleAxisAtRunTime(CoordinateOps &m, NodeContext &ctx,
                                   const ResizeParams &p, Value x, int64_t axis,
                                   int64_t outDim, Value scale, Value roiStart,
                                   Value roiEnd) {
  int64_t inDim = shapeOf(x)[axis];
  Value outside;
  Value xOri = sourceCoordinates(m, p, m.realIota(outDim), scale, inDim, outDim,
                                 roiStart, roiEnd, outside);
  Value lastIndex = m.real(double(inDim - 1));
  auto toIndex = [&](Value v) {
    return m.castTo(m.clamp(v, m.real(0), lastIndex), m.i64());
  };
  SmallVector<int64_t> columnShape = {outDim};
  columnShape.append(rankOf(x) - axis - 1, 1);
  Type elementType = getElementTypeOrSelf(x.getType());

  Value y;
  if (p.mode == InterpolationMode::Nearest && p.nearestMode == "simple") {
    Value i = m.select(m.op<LessOp>(scale, m.real(1)), m.unary<CeilOp>(xOri),
                       m.unary<FloorOp>(xOri));
    y = m.gather(x, toIndex(i), axis);
  } else {
    Value floorX = m.unary<FloorOp>(xOri);
    Value integral = m.op<EqualOp>(xOri, floorX);
    Value ratio =
        m.select(integral, m.real(1), m.op<SubOp>(xOri, floorX)); // (0, 1]
    SmallVector<Value> weights = tapWeights(m, p, ratio, integral);
    int64_t n = weights.size(), pad = (n + 1) / 2;
    // firstNeighbour: the left neighbour is xOri - 1 when integral.
    Value left = m.select(integral, m.op<SubOp>(xOri, m.real(1)), floorX);
    Value first =
        m.op<SubOp>(m.clamp(m.op<AddOp>(left, m.real(double(1 - n / 2 + pad))),
                            m.real(0), m.real(double(inDim + 2 * pad - n))),
                    m.real(double(pad)));
    SmallVector<Value> positions;
    for (int64_t k = 0; k < n; ++k)
      positions.push_back(m.op<AddOp>(first, m.real(double(k))));
    if (p.excludeOutside) {
      Value sum = m.real(0);
      for (int64_t k = 0; k < n; ++k) {
        Value out = m.op<OrOp>(m.op<LessOp>(positions[k], m.real(0)),
                               m.op<GreaterOp>(positions[k], lastIndex));
        weights[k] = m.select(out, m.real(0), weights[k]);
        sum = m.op<AddOp>(sum, weights[k]);
      }
      Value divisor = m.select(m.op<EqualOp>(sum, m.real(0)), m.real(1), sum);
      for (Value &w : weights)
        w = m.op<DivOp>(w, divisor);
    }
    if (p.mode == InterpolationMode::Nearest) {
      // One of two neighbours: gather it, which keeps integer data exact.
      Value pick = m.op<GreaterOp>(weights[1], m.real(0.5));
      y = m.gather(x, toIndex(m.select(pick, positions[1], positions[0])),
                   axis);
    } else {
      for (int64_t k = 0; k < n; ++k) {
        Value w = m.reshape(m.castTo(weights[k], elementType), columnShape);
        Value term = m.op<MulOp>(m.gather(x, toIndex(positions[k]), axis), w);
        y = y ? m.op<AddOp>(y, term) : term;
      }
    }
  }
  if (!outside)
    return y;
  Value fill = ctx.scalar(x, p.extrapolationValue);
  return m.select(m.reshape(outside, columnShape), fill, y);
}

/// Resizes `x` as `resize` says; the result shape must be the declared one.
static LogicalResult emitResizeAtRunTime(NodeContext &ctx, CoordinateOps &m,
                                         Value x, const ResizeParams &params,
                                         const RuntimeResize &resize) {
  std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
  if (declared &&
      ArrayRef<int64_t>(*declared) != ArrayRef<int64_t>(resize.outSizes))
    return ctx.fail("the declared result shape differs from the one the "
                    "constant scales or sizes give");
  Value y = x;
  for (int64_t axis = rankOf(x) - 1; axis >= 0; --axis)
    if (resize.scale[axis])
      y = resampleAxisAtRunTime(m, ctx, params, y, axis, resize.outSizes[axis],
                                resize.scale[axis], resize.roiStart[axis],
                                resize.roiEnd[axis]);
  if (m.failed() || !y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

/// Whether input `i` is given, not a constant, and holds elements (an
/// empty scales input stands for an absent one).
static bool readAtRunTime(NodeContext &ctx, size_t i) {
  if (!ctx.hasInput(i) || ctx.constInput(i))
    return false;
  Value v = ctx.input(i);
  return v && ShapedType::getNumElements(shapeOf(v)) != 0;
}

/// Takes the scales of the resized `axes` from input `i` at run time: each
/// output size is the declared one, checked against floor(in * scale).
static LogicalResult scalesAtRunTime(NodeContext &ctx, CoordinateOps &m,
                                     size_t i, ArrayRef<int64_t> inShape,
                                     ArrayRef<int64_t> axes,
                                     RuntimeResize &resize) {
  std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
  if (!declared)
    return ctx.failNotConstant(i, "(scales) must be a constant unless the "
                                  "model declares the Resize's result shape");
  if (declared->size() != inShape.size())
    return ctx.fail("the declared result shape has another rank than the "
                    "input");
  Value scales = ctx.input(i);
  if (!scales || failed(ctx.requireFloat(scales)))
    return failure();
  if (rankOf(scales) != 1 || shapeOf(scales)[0] != int64_t(axes.size()))
    return ctx.fail("scales must have one entry per resized axis");
  scales = m.castTo(scales, m.floatType());
  Value mismatch;
  for (auto [k, axis] : llvm::enumerate(axes)) {
    int64_t size = (*declared)[axis];
    resize.scale[axis] = m.at(scales, k);
    resize.outSizes[axis] = size;
    Value scaled = m.unary<FloorOp>(
        m.op<MulOp>(m.real(double(inShape[axis])), resize.scale[axis]));
    Value differs = m.differs(scaled, m.real(double(size)));
    mismatch = mismatch ? m.op<OrOp>(mismatch, differs) : differs;
  }
  std::string shape;
  for (int64_t d : *declared)
    shape += (shape.empty() ? "" : ",") + std::to_string(d);
  ctx.addRuntimeCheck(mismatch, "its scales give another shape than the [" +
                                    shape +
                                    "] the model declares and the artifact "
                                    "was compiled for");
  return success();
}

/// Upsample-9 and Resize-10: every dim's scale (input 1) read at run time.
static LogicalResult allScalesAtRunTime(NodeContext &ctx, Value x,
                                        const ResizeParams &params) {
  CoordinateOps m(ctx);
  RuntimeResize resize(shapeOf(x));
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, rankOf(x)));
  if (failed(scalesAtRunTime(ctx, m, 1, shapeOf(x), axes, resize)))
    return failure();
  return emitResizeAtRunTime(ctx, m, x, params, resize);
}

/// Resize-11+ whose scales, or tf_crop_and_resize's roi, are read at run
/// time.
static LogicalResult resizeAtRunTime(NodeContext &ctx, Value x,
                                     const ResizeParams &params,
                                     ArrayRef<int64_t> axes, StringRef policy) {
  CoordinateOps m(ctx);
  ArrayRef<int64_t> inShape = shapeOf(x);
  RuntimeResize resize(inShape);
  if (readAtRunTime(ctx, 2)) {
    if (failed(scalesAtRunTime(ctx, m, 2, inShape, axes, resize)))
      return failure();
  } else {
    SmallVector<double> scales;
    if (failed(
            resolveSizes(ctx, inShape, axes, policy, scales, resize.outSizes)))
      return failure();
    for (int64_t axis : axes)
      resize.scale[axis] = m.real(scales[axis]);
  }
  if (params.coordinateMode == "tf_crop_and_resize") {
    // roi is [starts..., ends...] over the resized axes.
    int64_t count = axes.size();
    Value roi;
    if (const ConstTensor *given = ctx.constInput(1)) {
      auto values = floatValues(*given);
      if (!values || int64_t(values->size()) != 2 * count)
        return ctx.fail("roi must be float with 2 entries per resized axis");
      roi = ctx.constant(RankedTensorType::get({2 * count}, m.floatType()),
                         *values);
    } else {
      roi = ctx.input(1);
      if (!roi || failed(ctx.requireFloat(roi)))
        return failure();
      if (rankOf(roi) != 1 || shapeOf(roi)[0] != 2 * count)
        return ctx.fail("roi must have 2 entries per resized axis");
      roi = m.castTo(roi, m.floatType());
    }
    for (auto [k, axis] : llvm::enumerate(axes)) {
      resize.roiStart[axis] = m.at(roi, k);
      resize.roiEnd[axis] = m.at(roi, count + k);
    }
  }
  return emitResizeAtRunTime(ctx, m, x, params, resize);
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

static LogicalResult importResize(NodeContext &ctx) {
  ResizeParams params;
  auto mode = parseMode(ctx, /*allowCubic=*/ctx.opset() >= 11);
  if (failed(mode))
    return failure();
  params.mode = *mode;
  auto input = resizeInput(ctx, params.mode);
  if (failed(input))
    return failure();
  Value x = *input;
  int64_t rank = rankOf(x);
  auto inShape = shapeOf(x);

  // Resize-10 is Upsample generalized to downsampling: inputs (X, scales),
  // asymmetric coordinates.
  if (ctx.opset() < 11) {
    params.coordinateMode = "asymmetric";
    params.nearestMode = "simple";
    if (readAtRunTime(ctx, 1))
      return allScalesAtRunTime(ctx, x, params);
    auto scales = constFloats(ctx, 1, "scales");
    if (failed(scales))
      return failure();
    if ((int64_t)scales->size() != rank)
      return ctx.fail("scales must have one entry per dim");
    SmallVector<int64_t> outSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!((*scales)[d] > 0) || !std::isfinite((*scales)[d]) ||
          scaledSize(inShape[d], (*scales)[d]) < 0)
        return ctx.fail("scales must be positive, finite and not huge");
      outSizes.push_back(scaledSize(inShape[d], (*scales)[d]));
    }
    return emitResize(ctx, x, params, outSizes, *scales, {});
  }

  if (ctx.intAttr("antialias", 0) != 0)
    return ctx.fail("antialias=1 is not supported (only plain resampling "
                    "decomposes into gathers)");
  params.coordinateMode =
      ctx.stringAttr("coordinate_transformation_mode", "half_pixel");
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_crop_and_resize", "tf_half_pixel_for_nn"},
                          params.coordinateMode))
    return ctx.fail("coordinate_transformation_mode '" + params.coordinateMode +
                    "' is not supported");
  params.nearestMode = ctx.stringAttr("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          params.nearestMode))
    return ctx.fail("nearest_mode '" + params.nearestMode +
                    "' is not supported");
  params.cubicCoeffA = ctx.floatAttr("cubic_coeff_a", -0.75f);
  params.excludeOutside = ctx.intAttr("exclude_outside", 0) != 0;
  params.extrapolationValue = ctx.floatAttr("extrapolation_value", 0.0f);
  std::string policy = ctx.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return ctx.fail("keep_aspect_ratio_policy '" + policy +
                    "' is not supported");

  // Axes (opset 18) in the order that scales, sizes and roi list them.
  std::vector<int64_t> axes;
  if (auto given = ctx.intsAttr("axes")) {
    for (int64_t a : *given) {
      int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank || llvm::is_contained(axes, axis))
        return ctx.fail("axes must be distinct and in range");
      axes.push_back(axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t count = axes.size();

  if (readAtRunTime(ctx, 2) ||
      (params.coordinateMode == "tf_crop_and_resize" && readAtRunTime(ctx, 1)))
    return resizeAtRunTime(ctx, x, params, axes, policy);
  // roi matters only to tf_crop_and_resize; it is [starts..., ends...].
  std::vector<double> roi;
  if (params.coordinateMode == "tf_crop_and_resize") {
    auto given = constFloats(ctx, 1, "roi");
    if (failed(given))
      return failure();
    if ((int64_t)given->size() != 2 * count)
      return ctx.fail("roi must have 2 entries per resized axis");
    roi.assign(rank, 0.0);
    roi.resize(2 * rank, 1.0);
    for (int64_t i = 0; i < count; ++i) {
      roi[axes[i]] = (*given)[i];
      roi[rank + axes[i]] = (*given)[count + i];
    }
  }
  SmallVector<double> scales;
  SmallVector<int64_t> outSizes;
  if (failed(resolveSizes(ctx, inShape, axes, policy, scales, outSizes)))
    return failure();
  return emitResize(ctx, x, params, outSizes, scales, roi);
}

static LogicalResult importUpsample(NodeContext &ctx) {
  ResizeParams params;
  auto mode = parseMode(ctx, /*allowCubic=*/false);
  if (failed(mode))
    return failure();
  params.mode = *mode;
  // Upsample: asymmetric coordinates, nearest takes floor(x / scale).
  params.coordinateMode = "asymmetric";
  params.nearestMode = "simple";
  auto input = resizeInput(ctx, params.mode);
  if (failed(input))
    return failure();
  Value x = *input;
  int64_t rank = rankOf(x);
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    const onnx::AttributeProto *attr = ctx.attr("scales");
    if (!attr)
      return ctx.fail("the scales attribute is missing");
    scales.assign(attr->floats().begin(), attr->floats().end());
  } else {
    if (readAtRunTime(ctx, 1))
      return allScalesAtRunTime(ctx, x, params);
    auto given = constFloats(ctx, 1, "scales");
    if (failed(given))
      return failure();
    scales = *given;
  }
  if ((int64_t)scales.size() != rank)
    return ctx.fail("scales must have one entry per dim");
  SmallVector<int64_t> outSizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!(scales[d] > 0) || !std::isfinite(scales[d]) ||
        scaledSize(shapeOf(x)[d], scales[d]) < 0)
      return ctx.fail("scales must be positive, finite and not huge");
    outSizes.push_back(scaledSize(shapeOf(x)[d], scales[d]));
  }
  return emitResize(ctx, x, params, outSizes, scales, {});
}

void onnx_import::registerResizeOps(OpRegistry &registry) {
  // clang-format off
  registry.add("Resize", 10, kMaxOpset, "nearest, linear, cubic as gathers; scales and roi constant or read at run time; constant or guarded sizes; no antialias", importResize);
  registry.add("Upsample", 7, 9, "nearest, linear as gathers; scales constant or read at run time", importUpsample);
  // clang-format on
}
