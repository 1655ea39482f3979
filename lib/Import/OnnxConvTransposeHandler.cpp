//===- OnnxConvTransposeHandler.cpp - ConvTranspose as a Conv -------------===//
//
// A transposed convolution is a convolution, with stride 1, of the input with
// (stride - 1) zeros inserted between its elements and (k - 1) * dilation -
// pad of padding around it, by the kernel flipped in space and with its
// input and output channels swapped (per group). All of that is reshapes,
// pads and slices, so the Conv kernel and its fusion are reused. A strided
// one without groups or dilation (a decoder's upsampling) is instead one
// convolution of the input itself by every output phase's taps,
// interleaved after: the products with the inserted zeros, 1 - 1/s^d of
// the work, are never computed.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

Value slice(NodeContext &ctx, Value x, ArrayRef<int64_t> starts,
            ArrayRef<int64_t> sizes, ArrayRef<int64_t> steps) {
  auto type = RankedTensorType::get(sizes, getElementTypeOrSelf(x.getType()));
  auto &b = ctx.b();
  return SliceOp::create(b, ctx.getLoc(), type, x,
                         b.getDenseI64ArrayAttr(starts),
                         b.getDenseI64ArrayAttr(steps));
}

/// Pads (zero) or crops each dim by `low`/`high`, which may be negative.
Value padOrCrop(NodeContext &ctx, Value x, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high) {
  int64_t rank = rankOf(x);
  SmallVector<int64_t> starts, sizes, steps(rank, 1), pads(2 * rank, 0);
  bool crop = false, pad = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = std::max<int64_t>(0, -low[d]);
    int64_t size = shapeOf(x)[d] - start - std::max<int64_t>(0, -high[d]);
    starts.push_back(start);
    sizes.push_back(size);
    crop |= start != 0 || size != shapeOf(x)[d];
    pads[d] = std::max<int64_t>(0, low[d]);
    pads[d + rank] = std::max<int64_t>(0, high[d]);
    pad |= pads[d] != 0 || pads[d + rank] != 0;
  }
  if (crop)
    x = slice(ctx, x, starts, sizes, steps);
  if (!pad)
    return x;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(shapeOf(x)[d] + pads[d] + pads[d + rank]);
  auto &b = ctx.b();
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(x.getType()));
  return PadOp::create(b, ctx.getLoc(), type, x, b.getDenseI64ArrayAttr(pads),
                       b.getStringAttr("constant"), b.getF64FloatAttr(0.0));
}

/// Inserts `stride - 1` zeros between the elements of dim `dim`:
/// [.., n, ..] → [.., n, 1, ..] → pad → [.., n, s, ..] → [.., n*s, ..] → crop.
Value insertZeros(NodeContext &ctx, Value x, int64_t dim, int64_t stride) {
  if (stride == 1)
    return x;
  SmallVector<int64_t> shape(shapeOf(x));
  int64_t n = shape[dim];
  SmallVector<int64_t> split(shape);
  split.insert(split.begin() + dim + 1, 1);
  Value expanded = reshapeTo(ctx, x, split);
  SmallVector<int64_t> low(split.size(), 0), high(split.size(), 0);
  high[dim + 1] = stride - 1;
  Value padded = padOrCrop(ctx, expanded, low, high);
  shape[dim] = n * stride;
  Value merged = reshapeTo(ctx, padded, shape);
  SmallVector<int64_t> cropLow(shape.size(), 0), cropHigh(shape.size(), 0);
  cropHigh[dim] = -(stride - 1);
  return padOrCrop(ctx, merged, cropLow, cropHigh);
}

/// Whether the phase form below computes a transposed convolution: one
/// group, no dilation, a stride past 1 along some dim.
bool convolvesByPhases(int64_t group, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations) {
  return group == 1 &&
         llvm::all_of(dilations, [](int64_t d) { return d == 1; }) &&
         llvm::any_of(strides, [](int64_t s) { return s > 1; });
}

/// The flipped kernel `weight` ([F, C, k..]) extended at the front of each
/// spatial dim by zero taps to a multiple of that dim's stride (`kernel`
/// becomes the extended extents): the taps of w past its end, which add
/// nothing, so that every phase takes as many taps. A constant weight
/// stays one (the concatenation folds at import).
Value extendToStrides(NodeContext &ctx, Value weight,
                      SmallVectorImpl<int64_t> &kernel,
                      ArrayRef<int64_t> strides) {
  auto &b = ctx.b();
  for (size_t d = 0; d < kernel.size(); ++d) {
    int64_t extra = llvm::alignTo(kernel[d], strides[d]) - kernel[d];
    if (extra == 0)
      continue;
    SmallVector<int64_t> zerosShape(shapeOf(weight));
    zerosShape[d + 2] = extra;
    auto zerosType = RankedTensorType::get(
        zerosShape, getElementTypeOrSelf(weight.getType()));
    Value zeros = ConstantOp::create(
        b, ctx.getLoc(),
        DenseElementsAttr::get(zerosType,
                               b.getZeroAttr(zerosType.getElementType())));
    auto extended = ctx.create<ConcatOp>(
        ValueRange{zeros, weight},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(d + 2))});
    if (failed(extended))
      return nullptr;
    weight = *extended;
    kernel[d] += extra;
  }
  return weight;
}

/// The transposed convolution by stride-1 phases: full output position
/// t = q * s + r (per dim) sums x[q - j] * w[r + s * j] over j < K / s, a
/// convolution of x itself by the phase's taps of the flipped kernel
/// (`weight`, [F, C, k..], each extent a multiple of its stride: start
/// s - 1 - r, step s), padded by K / s - 1 on both sides. The phases' taps
/// are stacked as one convolution's filters, [phases x F], whose result is
/// interleaved into [N, F, q, s, ..] and cropped (or padded) to `outShape`
/// by the pads: the s^d-fold work on inserted zeros is never done.
Value convolveByPhases(NodeContext &ctx, Value x, Value weight,
                       ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> pads, ArrayRef<int64_t> outShape) {
  int64_t spatial = kernel.size(), rank = spatial + 2;
  int64_t filters = shapeOf(weight)[0], channels = shapeOf(weight)[1];
  SmallVector<int64_t> taps, phase(spatial, 0);
  for (auto [k, s] : llvm::zip(kernel, strides))
    taps.push_back(k / s);
  SmallVector<Value> phaseWeights;
  while (true) {
    SmallVector<int64_t> starts(rank, 0), sizes = {filters, channels},
                                          steps(rank, 1);
    for (int64_t d = 0; d < spatial; ++d) {
      starts[d + 2] = strides[d] - 1 - phase[d];
      steps[d + 2] = strides[d];
      sizes.push_back(taps[d]);
    }
    phaseWeights.push_back(slice(ctx, weight, starts, sizes, steps));
    // The next phase, the last dim fastest.
    int64_t d = spatial - 1;
    while (d >= 0 && ++phase[d] == strides[d])
      phase[d--] = 0;
    if (d < 0)
      break;
  }
  auto &b = ctx.b();
  Value stacked = phaseWeights.front();
  if (phaseWeights.size() > 1) {
    auto concat = ctx.create<ConcatOp>(
        phaseWeights, {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
    if (failed(concat))
      return nullptr;
    stacked = *concat;
  }
  SmallVector<int64_t> convPads;
  for (int64_t side = 0; side < 2; ++side)
    for (int64_t d = 0; d < spatial; ++d)
      convPads.push_back(taps[d] - 1);
  auto conv = ctx.create<ConvOp>(
      ValueRange{x, stacked},
      {b.getNamedAttr("pads", b.getDenseI64ArrayAttr(convPads)),
       b.getNamedAttr("strides",
                      b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1))),
       b.getNamedAttr("dilations",
                      b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1))),
       b.getNamedAttr("group", b.getI64IntegerAttr(1))});
  if (failed(conv))
    return nullptr;
  // [N, s.., F, q..] -> [N, F, q_1, s_1, ..] -> [N, F, q_1 * s_1, ..].
  int64_t n = shapeOf(x)[0];
  ArrayRef<int64_t> q = shapeOf(*conv).drop_front(2);
  SmallVector<int64_t> split = {n};
  split.append(strides.begin(), strides.end());
  split.push_back(filters);
  split.append(q.begin(), q.end());
  SmallVector<int64_t> perm = {0, spatial + 1}, full = {n, filters};
  for (int64_t d = 0; d < spatial; ++d) {
    perm.push_back(spatial + 2 + d);
    perm.push_back(1 + d);
    full.push_back(q[d] * strides[d]);
  }
  auto interleaved = ctx.create<TransposeOp>(
      reshapeTo(ctx, *conv, split),
      {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  if (failed(interleaved))
    return nullptr;
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    low[d + 2] = -pads[d];
    high[d + 2] = outShape[d] + pads[d] - full[d + 2];
  }
  return padOrCrop(ctx, reshapeTo(ctx, *interleaved, full), low, high);
}

} // namespace

static LogicalResult importConvTranspose(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  if (!x || !w || failed(ctx.requireFloat({x, w})))
    return failure();
  int64_t rank = rankOf(x), spatial = rank - 2;
  if (spatial < 1 || rankOf(w) != rank)
    return ctx.fail("input and weight must have equal rank >= 3");
  int64_t group = ctx.intAttr("group", 1);
  int64_t channels = shapeOf(x)[1];
  if (group <= 0 || channels % group != 0 || shapeOf(w)[0] != channels)
    return ctx.fail("weight's first dim must be the input channels, "
                    "divisible by group");
  int64_t filtersPerGroup = shapeOf(w)[1];
  auto ints = [&](StringRef name, int64_t count, int64_t dflt) {
    auto given = ctx.intsAttr(name);
    return given ? SmallVector<int64_t>(given->begin(), given->end())
                 : SmallVector<int64_t>(count, dflt);
  };
  SmallVector<int64_t> kernel(shapeOf(w).drop_front(2));
  SmallVector<int64_t> strides = ints("strides", spatial, 1);
  SmallVector<int64_t> dilations = ints("dilations", spatial, 1);
  SmallVector<int64_t> pads = ints("pads", 2 * spatial, 0);
  SmallVector<int64_t> outputPadding = ints("output_padding", spatial, 0);
  if ((int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial ||
      (int64_t)outputPadding.size() != spatial)
    return ctx.fail("attribute lengths do not match the input rank");
  // Ranges far past any model's, in which no size below overflows.
  constexpr int64_t kMaxAttribute = int64_t(1) << 31;
  auto inRange = [&](ArrayRef<int64_t> values, int64_t least) {
    return llvm::all_of(
        values, [&](int64_t v) { return v >= least && v <= kMaxAttribute; });
  };
  if (!inRange(strides, 1) || !inRange(dilations, 1) || !inRange(pads, 0) ||
      !inRange(outputPadding, 0) || !inRange(kernel, 1))
    return ctx.fail("strides, dilations, pads, output_padding and the kernel "
                    "must be in range (at most 2^31)");
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  auto outputShape = ctx.intsAttr("output_shape");
  if (outputShape &&
      (outputShape->size() < size_t(spatial) || !inRange(*outputShape, 0)))
    return ctx.fail("output_shape must give every spatial dim, each in range");
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = shapeOf(x)[i + 2];
    int64_t full = strides[i] * (in - 1) + outputPadding[i] +
                   (kernel[i] - 1) * dilations[i] + 1;
    std::optional<int64_t> wanted;
    if (outputShape)
      wanted = (*outputShape)[outputShape->size() - spatial + i];
    else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
      wanted = in * strides[i];
    if (!wanted)
      continue;
    // A negative total (output_shape past the full size) pads the end.
    int64_t total = full - *wanted;
    bool upper = autoPad == "SAME_UPPER";
    // Floor division, as in the ONNX reference, also for negative totals.
    int64_t half = llvm::divideFloorSigned(total, 2);
    pads[i] = upper ? half : total - half;
    pads[i + spatial] = upper ? total - half : half;
  }

  // The kernel flipped in space, channels swapped within each group:
  // [C, F/g, k..] → [g, C/g, F/g, k..] → [g, F/g, C/g, k..] → [F, C/g, k..].
  SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
  for (int64_t i = 0; i < spatial; ++i) {
    starts[i + 2] = kernel[i] - 1;
    steps[i + 2] = -1;
  }
  Value flipped = slice(ctx, w, starts, shapeOf(w), steps);
  int64_t perGroup = channels / group;
  SmallVector<int64_t> grouped = {group, perGroup, filtersPerGroup};
  grouped.append(kernel.begin(), kernel.end());
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i)
    perm.push_back(i + 3);
  auto &b = ctx.b();
  auto swapped = ctx.create<TransposeOp>(
      reshapeTo(ctx, flipped, grouped),
      {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  if (failed(swapped))
    return failure();
  SmallVector<int64_t> convWeightShape = {group * filtersPerGroup, perGroup};
  convWeightShape.append(kernel.begin(), kernel.end());
  Value weight = reshapeTo(ctx, *swapped, convWeightShape);
  Value bias;
  if (ctx.hasInput(2) && !(bias = ctx.input(2)))
    return failure();

  if (convolvesByPhases(group, strides, dilations)) {
    SmallVector<int64_t> outShape;
    for (int64_t i = 0; i < spatial; ++i)
      outShape.push_back(strides[i] * (shapeOf(x)[i + 2] - 1) +
                         outputPadding[i] + kernel[i] - pads[i] -
                         pads[i + spatial]);
    SmallVector<int64_t> extendedKernel(kernel);
    Value extended = extendToStrides(ctx, weight, extendedKernel, strides);
    Value result = extended ? convolveByPhases(ctx, x, extended, extendedKernel,
                                               strides, pads, outShape)
                            : nullptr;
    if (!result)
      return failure();
    if (bias) {
      SmallVector<int64_t> biasShape(rank, 1);
      biasShape[1] = shapeOf(bias)[0];
      return setResult(ctx, ctx.create<AddOp>(ValueRange{
                                result, reshapeTo(ctx, bias, biasShape)}));
    }
    ctx.setOutput(0, result);
    return success();
  }

  // Else a convolution of the input with zeros between elements and the
  // padding around it.
  Value input = x;
  for (int64_t i = 0; i < spatial; ++i)
    input = insertZeros(ctx, input, i + 2, strides[i]);
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t edge = (kernel[i] - 1) * dilations[i];
    low[i + 2] = edge - pads[i];
    high[i + 2] = edge - pads[i + spatial] + outputPadding[i];
  }
  input = padOrCrop(ctx, input, low, high);
  SmallVector<Value> operands = {input, weight};
  if (bias)
    operands.push_back(bias);
  return setResult(
      ctx,
      ctx.create<ConvOp>(
          operands,
          {b.getNamedAttr("pads", b.getDenseI64ArrayAttr(
                                      SmallVector<int64_t>(2 * spatial, 0))),
           b.getNamedAttr("strides", b.getDenseI64ArrayAttr(
                                         SmallVector<int64_t>(spatial, 1))),
           b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(dilations)),
           b.getNamedAttr("group", b.getI64IntegerAttr(group))}));
}

void onnx_import::registerConvTransposeOps(OpRegistry &registry) {
  // clang-format off
  registry.add("ConvTranspose", 1, kMaxOpset, "1-D/2-D/3-D; groups, output_padding, output_shape, auto_pad", importConvTranspose);
  // clang-format on
}
