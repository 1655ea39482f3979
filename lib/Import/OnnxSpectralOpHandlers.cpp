//===- OnnxSpectralOpHandlers.cpp - DFT and STFT as matmuls ---------------===//
//
// A discrete Fourier transform of length N over M <= N samples (the rest
// zero) is a matmul with the [M, K] matrices cos(2 pi n k / N) and
// sin(2 pi n k / N), K bins (N, or N / 2 + 1 one-sided):
//
//   forward  re' = re C + im S,  im' = im C - re S
//   inverse  re' = (re C - im S) / N,  im' = (im C + re S) / N
//
// With N known at compile time the matrices are constants. STFT's frame
// length and step may be read at run time: its output shape is the declared
// one, the frames are gathered at f * step + n, and the matrices are
// computed in the kernel from N, with run-time checks that the values give
// the declared frame and bin counts.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Float arithmetic in the signal's type on top of IndexOps.
class SpectralOps : public FloatOps {
public:
  SpectralOps(NodeContext &ctx, Value like)
      : FloatOps(ctx, getElementTypeOrSelf(like.getType())), ctx(ctx) {}

  Value typed(ArrayRef<double> values, ArrayRef<int64_t> shape, Type type) {
    return ctx.constant(RankedTensorType::get(shape, type), values);
  }
  Value matmul(Value a, Value b) { return op<MatMulOp>(a, b); }
  /// `v` sliced to [start, start + size) along `axis`, unit steps.
  Value slice(Value v, int64_t axis, int64_t start, int64_t size) {
    if (!v)
      return fail();
    SmallVector<int64_t> shape(shapeOf(v)), starts(shape.size(), 0),
        steps(shape.size(), 1);
    shape[axis] = size;
    starts[axis] = start;
    auto &b = ctx.b();
    return SliceOp::create(
        b, ctx.getLoc(),
        RankedTensorType::get(shape, getElementTypeOrSelf(v.getType())), v,
        b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(steps));
  }

private:
  NodeContext &ctx;
};

/// The real and imaginary parts of a transform.
struct Complex {
  Value re, im;
};

/// The transform's length: a constant, or a float scalar read at run time.
struct TransformLength {
  std::optional<int64_t> known;
  Value atRunTime;
};

} // namespace

/// cos and sin of 2 pi n k / N for n < `samples`, k < `bins`.
static std::pair<Value, Value> twiddles(SpectralOps &m,
                                        const TransformLength &length,
                                        int64_t samples, int64_t bins) {
  SmallVector<int64_t> shape = {samples, bins};
  if (length.known) {
    int64_t n = *length.known;
    std::vector<double> cosines, sines;
    for (int64_t i = 0; i < samples; ++i)
      for (int64_t k = 0; k < bins; ++k) {
        double angle = 2 * M_PI * double((i * k) % n) / double(n);
        cosines.push_back(std::cos(angle));
        sines.push_back(std::sin(angle));
      }
    return {m.reals(cosines, shape), m.reals(sines, shape)};
  }
  // In float64, as the constant path computes them: n k mod N keeps the
  // angles small.
  Type f64 = Float64Type::get(length.atRunTime.getContext());
  std::vector<double> products;
  for (int64_t i = 0; i < samples; ++i)
    for (int64_t k = 0; k < bins; ++k)
      products.push_back(double(i * k));
  Value n = m.castTo(length.atRunTime, f64);
  Value angle = m.op<MulOp>(m.op<ModOp>(m.typed(products, shape, f64), n),
                            m.op<DivOp>(m.typed({2 * M_PI}, {}, f64), n));
  Type type = m.floatType();
  return {m.castTo(m.unary<CosOp>(angle), type),
          m.castTo(m.unary<SinOp>(angle), type)};
}

/// The transform of `x` ([..., M] parts, `x.im` null for a real signal)
/// along its last dim: [..., bins].
static Complex transform(SpectralOps &m, Complex x,
                         const TransformLength &length, int64_t bins,
                         bool inverse) {
  int64_t samples = shapeOf(x.re).back();
  auto [c, s] = twiddles(m, length, samples, bins);
  Value reC = m.matmul(x.re, c), reS = m.matmul(x.re, s);
  Value imC = x.im ? m.matmul(x.im, c) : Value();
  Value imS = x.im ? m.matmul(x.im, s) : Value();
  Value zero = m.real(0);
  if (!x.im)
    imC = imS = zero;
  if (!inverse)
    return {m.op<AddOp>(reC, imS), m.op<SubOp>(imC, reS)};
  Value n = length.known ? m.real(double(*length.known)) : length.atRunTime;
  return {m.op<DivOp>(m.op<SubOp>(reC, imS), n),
          m.op<DivOp>(m.op<AddOp>(imC, reS), n)};
}

/// The real and imaginary parts of `x` ([..., 1 or 2]) as [...] tensors.
static Complex splitComplex(SpectralOps &m, Value x) {
  SmallVector<int64_t> shape(shapeOf(x).drop_back());
  int64_t last = rankOf(x) - 1;
  Complex parts{m.reshape(m.slice(x, last, 0, 1), shape), Value()};
  if (shapeOf(x).back() == 2)
    parts.im = m.reshape(m.slice(x, last, 1, 1), shape);
  return parts;
}

/// [...] parts joined as [..., 2].
static Value joinComplex(SpectralOps &m, Complex y) {
  SmallVector<int64_t> shape(shapeOf(y.re));
  shape.push_back(1);
  return m.concat({m.reshape(y.re, shape), m.reshape(y.im, shape)},
                  shape.size() - 1);
}

static LogicalResult importDFT(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = rankOf(x);
  if (rank < 2 || (shapeOf(x).back() != 1 && shapeOf(x).back() != 2))
    return ctx.fail("the input must end in a dim of 1 (real) or 2 (complex)");
  int64_t axis = ctx.intAttr("axis", 1);
  if (ctx.opset() >= 20) {
    axis = -2;
    if (ctx.hasInput(2)) {
      auto given = ctx.constInts(2);
      if (failed(given) || given->size() != 1)
        return ctx.fail("axis must be a constant scalar");
      axis = given->front();
    }
  }
  if (axis < -rank || axis >= rank || (axis + rank) % rank == rank - 1)
    return ctx.fail("axis must name a signal dim, not the last one");
  axis = (axis + rank) % rank;
  int64_t samples = shapeOf(x)[axis], length = samples;
  if (ctx.hasInput(1)) {
    auto given = ctx.constInts(1);
    if (failed(given) || given->size() != 1 || given->front() < 1)
      return ctx.fail("dft_length must be a positive constant");
    length = given->front();
  }
  bool inverse = ctx.intAttr("inverse", 0) != 0;
  int64_t bins = ctx.intAttr("onesided", 0) ? length / 2 + 1 : length;

  SpectralOps m(ctx, x);
  Complex parts = splitComplex(m, x);
  // The transformed dim goes last for the matmul, and back after it.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> back(perm.size());
  for (auto [i, d] : llvm::enumerate(perm))
    back[d] = i;
  int64_t used = std::min(samples, length); // zero past the signal
  for (Value *part : {&parts.re, &parts.im})
    if (*part)
      *part = m.slice(m.transpose(*part, perm), rank - 2, 0, used);
  Complex y = transform(m, parts, TransformLength{length, {}}, bins, inverse);
  Value result =
      joinComplex(m, {m.transpose(y.re, back), m.transpose(y.im, back)});
  if (m.failed() || !result)
    return failure();
  ctx.setOutput(0, result);
  return success();
}

/// A scalar int input `i` as its constant value, or null with `value` set
/// to the run-time value as a float.
static std::optional<int64_t> scalarInput(NodeContext &ctx, SpectralOps &m,
                                          size_t i, Value &value) {
  if (const ConstTensor *given = ctx.constInput(i))
    if (given->asInts().size() == 1)
      return given->asInts().front();
  Value v = ctx.input(i);
  if (v && ShapedType::getNumElements(shapeOf(v)) == 1)
    value = m.reshape(v, {});
  return std::nullopt;
}

static LogicalResult importSTFT(NodeContext &ctx) {
  Value signal = ctx.input(0);
  if (!signal || failed(ctx.requireFloat(signal)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(signal);
  if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2))
    return ctx.fail("the signal must be [batch, length, 1 or 2]");
  int64_t batch = shape[0], samples = shape[1];
  SpectralOps m(ctx, signal);
  Value window = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (window &&
      (rankOf(window) != 1 || failed(ctx.requireSameDtype({signal, window}))))
    return ctx.fail("the window must be 1-D, of the signal's type");
  Value stepValue, lengthValue;
  std::optional<int64_t> step = scalarInput(ctx, m, 1, stepValue);
  std::optional<int64_t> length;
  if (window)
    length = shapeOf(window)[0];
  else if (ctx.hasInput(3))
    length = scalarInput(ctx, m, 3, lengthValue);
  else
    length = samples;
  if ((!step && !stepValue) || (!length && !lengthValue))
    return ctx.fail("frame_step and frame_length must be int scalars");
  bool onesided = ctx.intAttr("onesided", 1) != 0;

  // Frames and bins: from constants, or the declared output [B, F, K, 2].
  std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
  int64_t frames, bins, longest;
  if (step && length) {
    if (*step < 1 || *length < 1 || *length > samples)
      return ctx.fail("frame_step and frame_length must be positive, the "
                      "frame no longer than the signal");
    frames = (samples - *length) / *step + 1;
    bins = onesided ? *length / 2 + 1 : *length;
    longest = *length;
  } else {
    if (!declared || declared->size() != 4)
      return ctx.failNotConstant(
          step ? 3 : 1, "(with frame_length) must be a constant unless the "
                        "model declares the STFT's result shape");
    frames = (*declared)[1];
    bins = (*declared)[2];
    longest = length ? *length : onesided ? 2 * bins - 1 : bins;
    longest = std::min(longest, samples);
  }
  if (frames < 1 || bins < 1 || longest < 1)
    return ctx.fail("the STFT has no frames or bins");

  // Frame f holds samples f * step + n, n < N; positions past N read 0.
  Value stepIndex = step ? m.scalar(*step) : m.widen(stepValue);
  Value lengthIndex = length ? m.scalar(*length) : m.widen(lengthValue);
  Value positions =
      m.op<AddOp>(m.op<MulOp>(m.iota(frames, {frames, 1}), stepIndex),
                  m.iota(longest, {1, longest}));
  Value inFrame = m.op<LessOp>(m.iota(longest, {1, longest}), lengthIndex);
  Value clamped = m.clamp(positions, m.scalar(0), m.scalar(samples - 1));
  Complex parts = splitComplex(m, signal);
  Value zero = m.real(0);
  for (Value *part : {&parts.re, &parts.im}) {
    if (!*part)
      continue;
    Value framed = m.gather(*part, clamped, 1); // [B, F, N]
    *part = m.select(inFrame, framed, zero);
    if (window)
      *part = m.op<MulOp>(*part, window);
  }
  TransformLength transformLength{length, {}};
  if (!length)
    transformLength.atRunTime = m.toFloat(lengthValue);
  Complex y = transform(m, parts, transformLength, bins, /*inverse=*/false);

  if (!step || !length) {
    // The values must give the compiled frame and bin counts.
    Value gotFrames = m.op<AddOp>(
        m.op<DivOp>(m.op<SubOp>(m.scalar(samples), lengthIndex), stepIndex),
        m.scalar(1));
    Value gotBins =
        onesided
            ? m.op<AddOp>(m.op<DivOp>(lengthIndex, m.scalar(2)), m.scalar(1))
            : lengthIndex;
    Value invalid =
        m.op<OrOp>(m.op<OrOp>(m.op<LessOp>(stepIndex, m.scalar(1)),
                              m.op<LessOp>(lengthIndex, m.scalar(1))),
                   m.op<GreaterOp>(lengthIndex, m.scalar(longest)));
    Value other = m.op<OrOp>(m.differs(gotFrames, m.scalar(frames)),
                             m.differs(gotBins, m.scalar(bins)));
    ctx.addRuntimeCheck(m.op<OrOp>(invalid, other),
                        "its frame_step and frame_length give another shape "
                        "than the [" +
                            Twine(batch) + "," + Twine(frames) + "," +
                            Twine(bins) +
                            ",2] the model declares and the artifact was "
                            "compiled for");
  }
  Value result = joinComplex(m, y);
  if (m.failed() || !result)
    return failure();
  ctx.setOutput(0, result);
  return success();
}

void onnx_import::registerSpectralOps(OpRegistry &registry) {
  // clang-format off
  registry.add("DFT", 17, kMaxOpset, "as matmuls with cos/sin matrices; constant dft_length and axis", importDFT);
  registry.add("STFT", 17, kMaxOpset, "frames gathered, then a DFT matmul; frame_step and frame_length constant or read at run time", importSTFT);
  // clang-format on
}
