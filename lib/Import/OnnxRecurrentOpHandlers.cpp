//===- OnnxRecurrentOpHandlers.cpp - LSTM, GRU and RNN --------------------===//
//
// With static shapes the sequence length is known, so recurrent ops unroll
// into one step of kiln ops per time step: the input projection of every
// step is one Gemm up front, then each step is a Gemm of the hidden state
// and the gate math, which fusion groups into few kernels per step.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

enum class Cell { LSTM, GRU, RNN };

/// Builds kiln ops for one node, remembering the first failure.
class Builder : public ChainedOps {
public:
  explicit Builder(NodeContext &ctx) : ctx(ctx) {}

  Value slice(Value x, int64_t axis, int64_t start, int64_t size) {
    if (!x)
      return nullptr;
    SmallVector<int64_t> shape(shapeOf(x)), starts(shape.size(), 0),
        steps(shape.size(), 1);
    if (start == 0 && size == shape[axis])
      return x;
    starts[axis] = start;
    shape[axis] = size;
    auto type = RankedTensorType::get(shape, getElementTypeOrSelf(x.getType()));
    auto &b = ctx.b();
    return SliceOp::create(b, ctx.getLoc(), type, x,
                           b.getDenseI64ArrayAttr(starts),
                           b.getDenseI64ArrayAttr(steps));
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return x ? reshapeTo(ctx, x, shape) : nullptr;
  }
  template <typename OpTy> Value binary(Value x, Value y) {
    return x && y ? check(ctx.create<OpTy>(ValueRange{x, y})) : fail();
  }
  Value select(Value c, Value x, Value y) {
    return c && x && y ? check(ctx.create<WhereOp>(ValueRange{c, x, y}))
                       : fail();
  }
  template <typename OpTy> Value unary(Value x) {
    return x ? check(ctx.create<OpTy>(x)) : fail();
  }
  Value activation(StringRef name, Value x) {
    if (name == "Sigmoid")
      return unary<SigmoidOp>(x);
    if (name == "Tanh")
      return unary<TanhOp>(x);
    if (name == "Relu")
      return unary<ReluOp>(x);
    return fail();
  }
  /// x * w^T (+ bias).
  Value linear(Value x, Value w, Value bias) {
    if (!x || !w)
      return nullptr;
    SmallVector<Value> operands = {x, w};
    if (bias)
      operands.push_back(bias);
    auto &b = ctx.b();
    return check(ctx.create<GemmOp>(
        operands, {b.getNamedAttr("transB", b.getBoolAttr(true))}));
  }
  Value clip(Value x, float limit) {
    if (!x || limit <= 0)
      return x;
    auto &b = ctx.b();
    return check(ctx.create<ClipOp>(
        x, {b.getNamedAttr("min", b.getF32FloatAttr(-limit)),
            b.getNamedAttr("max", b.getF32FloatAttr(limit))}));
  }
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    if (llvm::any_of(parts, [](Value v) { return !v; }))
      return nullptr;
    if (parts.size() == 1)
      return parts.front();
    auto &b = ctx.b();
    return check(ctx.create<ConcatOp>(
        parts, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
  }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    auto &b = ctx.b();
    if (!x)
      return fail();
    return check(ctx.create<TransposeOp>(
        x, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
  }

private:
  NodeContext &ctx;
};

struct RecurrentSpec {
  Cell cell;
  int64_t gates;                        // 4 LSTM, 3 GRU, 1 RNN
  std::vector<std::string> activations; // per direction, in ONNX order
};

/// The per-direction weights, sliced out of [D, ...] tensors.
struct DirectionWeights {
  Value w, r, wBias, rBias, h0, c0;
  Value peepholeI, peepholeO, peepholeF; // LSTM
  Value rz, rh, rzBias, rhBias; // GRU: R's update/reset and hidden rows
};

/// Elements [offset, offset + product(shape)) of input `i`, as a value of
/// `shape`: one direction's (or one gate's) weights are contiguous in W, R,
/// B, P and the initial states. A constant input (the weights, nearly
/// always) is split at import time, so no kernel copies it on every run; a
/// computed one is sliced from its flattened value.
Value part(Builder &bld, NodeContext &ctx, size_t i, int64_t offset,
           ArrayRef<int64_t> shape, const Twine &what) {
  int64_t count = ShapedType::getNumElements(shape);
  if (const ConstTensor *tensor = ctx.constInput(i)) {
    int64_t total = ShapedType::getNumElements(tensor->shape);
    size_t elementBytes = total ? tensor->bytes.size() / total : 0;
    ConstTensor piece;
    piece.onnxType = tensor->onnxType;
    piece.shape.assign(shape.begin(), shape.end());
    piece.bytes =
        tensor->bytes.substr(offset * elementBytes, count * elementBytes);
    std::string error;
    Value v = ctx.createConstant((ctx.proto().input(i) + "." + what).str(),
                                 std::move(piece), error);
    if (!v)
      (void)ctx.fail(error);
    return v;
  }
  Value flat = bld.reshape(ctx.input(i),
                           {ShapedType::getNumElements(shapeOf(ctx.input(i)))});
  return bld.reshape(bld.slice(flat, 0, offset, count), shape);
}

DirectionWeights weightsFor(Builder &bld, NodeContext &ctx, int64_t d,
                            int64_t gates, int64_t hidden, int64_t batch,
                            int64_t inputSize) {
  DirectionWeights dw;
  std::string dir = "direction" + std::to_string(d) + ".";
  int64_t rows = gates * hidden;
  dw.w = part(bld, ctx, 1, d * rows * inputSize, {rows, inputSize}, dir + "W");
  dw.r = part(bld, ctx, 2, d * rows * hidden, {rows, hidden}, dir + "R");
  if (gates == 3) {
    dw.rz =
        part(bld, ctx, 2, d * rows * hidden, {2 * hidden, hidden}, dir + "Rzr");
    dw.rh = part(bld, ctx, 2, (d * rows + 2 * hidden) * hidden,
                 {hidden, hidden}, dir + "Rh");
  }
  if (ctx.hasInput(3)) {
    int64_t base = d * 2 * rows;
    dw.wBias = part(bld, ctx, 3, base, {rows}, dir + "Wb");
    dw.rBias = part(bld, ctx, 3, base + rows, {rows}, dir + "Rb");
    if (gates == 3) {
      dw.rzBias = part(bld, ctx, 3, base + rows, {2 * hidden}, dir + "Rbzr");
      dw.rhBias =
          part(bld, ctx, 3, base + rows + 2 * hidden, {hidden}, dir + "Rbh");
    }
  }
  if (ctx.hasInput(5))
    dw.h0 = part(bld, ctx, 5, d * batch * hidden, {batch, hidden}, dir + "h0");
  if (ctx.hasInput(6))
    dw.c0 = part(bld, ctx, 6, d * batch * hidden, {batch, hidden}, dir + "c0");
  if (ctx.hasInput(7)) {
    // P holds the input, output and forget gates' peepholes, in that order.
    dw.peepholeI = part(bld, ctx, 7, d * 3 * hidden, {hidden}, dir + "Pi");
    dw.peepholeO =
        part(bld, ctx, 7, (d * 3 + 1) * hidden, {hidden}, dir + "Po");
    dw.peepholeF =
        part(bld, ctx, 7, (d * 3 + 2) * hidden, {hidden}, dir + "Pf");
  }
  return dw;
}

/// One time step; updates `h` (and `c` for LSTM).
void step(Builder &bld, NodeContext &ctx, const RecurrentSpec &spec,
          const DirectionWeights &dw, ArrayRef<std::string> act, Value xt,
          int64_t hidden, float clipLimit, bool inputForget,
          bool linearBeforeReset, Value &h, Value &c) {
  auto gate = [&](Value v, int64_t k) {
    return bld.slice(v, 1, k * hidden, hidden);
  };
  if (spec.cell == Cell::RNN) {
    Value pre = bld.clip(bld.binary<AddOp>(xt, bld.linear(h, dw.r, dw.rBias)),
                         clipLimit);
    h = bld.activation(act[0], pre);
    return;
  }
  if (spec.cell == Cell::LSTM) {
    Value g = bld.binary<AddOp>(xt, bld.linear(h, dw.r, dw.rBias));
    Value iPre = gate(g, 0), oPre = gate(g, 1), fPre = gate(g, 2),
          cPre = gate(g, 3);
    if (dw.peepholeI) {
      iPre = bld.binary<AddOp>(iPre, bld.binary<MulOp>(dw.peepholeI, c));
      fPre = bld.binary<AddOp>(fPre, bld.binary<MulOp>(dw.peepholeF, c));
    }
    Value i = bld.activation(act[0], bld.clip(iPre, clipLimit));
    Value f = inputForget ? bld.binary<SubOp>(ctx.scalar(i, 1.0), i)
                          : bld.activation(act[0], bld.clip(fPre, clipLimit));
    Value candidate = bld.activation(act[1], bld.clip(cPre, clipLimit));
    c = bld.binary<AddOp>(bld.binary<MulOp>(f, c),
                          bld.binary<MulOp>(i, candidate));
    if (dw.peepholeO)
      oPre = bld.binary<AddOp>(oPre, bld.binary<MulOp>(dw.peepholeO, c));
    Value o = bld.activation(act[0], bld.clip(oPre, clipLimit));
    h = bld.binary<MulOp>(o, bld.activation(act[2], c));
    return;
  }
  // GRU, gates z, r, h.
  Value zr = bld.binary<AddOp>(bld.slice(xt, 1, 0, 2 * hidden),
                               bld.linear(h, dw.rz, dw.rzBias));
  Value z = bld.activation(act[0], bld.clip(gate(zr, 0), clipLimit));
  Value r = bld.activation(act[0], bld.clip(gate(zr, 1), clipLimit));
  Value recurrent = linearBeforeReset
                        ? bld.binary<MulOp>(r, bld.linear(h, dw.rh, dw.rhBias))
                        : bld.linear(bld.binary<MulOp>(r, h), dw.rh, dw.rhBias);
  Value candidate = bld.activation(
      act[1], bld.clip(bld.binary<AddOp>(gate(xt, 2), recurrent), clipLimit));
  // h = (1 - z) * candidate + z * h
  Value keep = bld.binary<MulOp>(z, h);
  Value update =
      bld.binary<MulOp>(bld.binary<SubOp>(ctx.scalar(z, 1.0), z), candidate);
  h = bld.binary<AddOp>(update, keep);
}

/// Fails unless input `i`, when present, has `shape`: a weight of another
/// shape would be split at the wrong places or read past its end.
LogicalResult requireShape(NodeContext &ctx, size_t i, ArrayRef<int64_t> shape,
                           StringRef name) {
  if (!ctx.hasInput(i))
    return success();
  Value v = ctx.input(i);
  if (!v)
    return failure();
  if (shapeOf(v) == shape)
    return success();
  auto text = [](ArrayRef<int64_t> dims) {
    std::string out = "[";
    llvm::interleave(
        dims, [&](int64_t d) { out += std::to_string(d); },
        [&] { out += ", "; });
    return out + "]";
  };
  return ctx.fail(name + " has shape " + text(shapeOf(v)) + ", expected " +
                  text(shape));
}

LogicalResult importRecurrent(NodeContext &ctx, RecurrentSpec spec) {
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  if (!x || !w || !r || failed(ctx.requireFloat({x, w, r})))
    return failure();
  if (rankOf(x) != 3 || rankOf(r) != 3)
    return ctx.fail("X and R must be 3-D");
  // sequence_lens: each batch element's steps; a constant one holding the
  // whole sequence everywhere changes nothing.
  Value lengths;
  if (ctx.hasInput(4)) {
    lengths = ctx.input(4);
    if (!lengths || failed(ctx.requireIndices(lengths)))
      return failure();
    int64_t seq = shapeOf(x)[ctx.intAttr("layout", 0) ? 1 : 0];
    const ConstTensor *lens = ctx.constInput(4);
    if (lens &&
        llvm::all_of(lens->asInts(), [&](int64_t len) { return len == seq; }))
      lengths = nullptr;
  }
  std::string direction = ctx.stringAttr("direction", "forward");
  int64_t numDirections = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && numDirections != 2)
    return ctx.fail("direction '" + direction + "' is not valid");
  bool batchFirst = ctx.intAttr("layout", 0) != 0;
  if (batchFirst) {
    Builder pre(ctx);
    x = pre.transpose(x, {1, 0, 2});
    if (pre.failed())
      return failure();
  }
  int64_t seq = shapeOf(x)[0], batch = shapeOf(x)[1], inputSize = shapeOf(x)[2];
  int64_t hidden = ctx.intAttr("hidden_size", shapeOf(r).back());
  if (shapeOf(r).back() != hidden)
    return ctx.fail("hidden_size differs from R's shape");

  int64_t rows = spec.gates * hidden;
  if (failed(requireShape(ctx, 1, {numDirections, rows, inputSize}, "W")) ||
      failed(requireShape(ctx, 2, {numDirections, rows, hidden}, "R")) ||
      failed(requireShape(ctx, 3, {numDirections, 2 * rows}, "B")) ||
      failed(
          requireShape(ctx, 5, {numDirections, batch, hidden}, "initial_h")) ||
      (spec.cell == Cell::LSTM &&
       (failed(requireShape(ctx, 6, {numDirections, batch, hidden},
                            "initial_c")) ||
        failed(requireShape(ctx, 7, {numDirections, 3 * hidden}, "P")))))
    return failure();

  // Activations: per direction, in ONNX order; defaults per cell type.
  std::vector<std::string> defaults =
      spec.cell == Cell::LSTM
          ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : spec.cell == Cell::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                               : std::vector<std::string>{"Tanh"};
  std::vector<std::string> activations;
  if (const auto *a = ctx.attr("activations"))
    activations.assign(a->strings().begin(), a->strings().end());
  else
    for (int64_t d = 0; d < numDirections; ++d)
      activations.insert(activations.end(), defaults.begin(), defaults.end());
  if (activations.size() != defaults.size() * numDirections)
    return ctx.fail("expected " + Twine(defaults.size() * numDirections) +
                    " activations");
  for (const std::string &name : activations)
    if (name != "Sigmoid" && name != "Tanh" && name != "Relu")
      return ctx.fail("activation '" + name + "' is not supported yet");
  float clipLimit = ctx.floatAttr("clip", 0.0f);
  bool inputForget = ctx.intAttr("input_forget", 0) != 0;
  bool linearBeforeReset = ctx.intAttr("linear_before_reset", 0) != 0;

  Builder bld(ctx);
  Value zeros = ctx.constant(
      RankedTensorType::get({batch, hidden}, getElementTypeOrSelf(x.getType())),
      {0.0});
  // With sequence_lens, step t runs for the batch elements longer than t
  // (mask [batch, 1]); the others keep their state and output zeros.
  Value lengthColumn;
  if (lengths) {
    if (rankOf(lengths) != 1 || shapeOf(lengths)[0] != batch)
      return ctx.fail("sequence_lens must hold one length per batch element");
    auto i64 = RankedTensorType::get({batch}, ctx.b().getI64Type());
    Value wide = getElementTypeOrSelf(lengths.getType()).isInteger(64)
                     ? lengths
                     : CastOp::create(ctx.b(), ctx.getLoc(), i64, lengths);
    lengthColumn = bld.reshape(wide, {batch, 1});
    auto bound = [&](double v) {
      return ctx.constant(RankedTensorType::get({}, ctx.b().getI64Type()), {v});
    };
    ctx.addRuntimeCheck(
        bld.binary<OrOp>(bld.binary<LessOp>(wide, bound(0)),
                         bld.binary<GreaterOp>(wide, bound(double(seq)))),
        "sequence_lens holds a length outside [0, " + Twine(seq) + "]");
  }
  auto stepRuns = [&](int64_t t) -> Value {
    return bld.binary<LessOp>(
        ctx.constant(RankedTensorType::get({}, ctx.b().getI64Type()),
                     {double(t)}),
        lengthColumn);
  };
  SmallVector<Value> ys, lastH, lastC;
  for (int64_t d = 0; d < numDirections; ++d) {
    DirectionWeights dw =
        weightsFor(bld, ctx, d, spec.gates, hidden, batch, inputSize);
    ArrayRef<std::string> act =
        ArrayRef<std::string>(activations)
            .slice(d * defaults.size(), defaults.size());
    // The input projection of every step at once.
    Value projected = bld.reshape(
        bld.linear(bld.reshape(x, {seq * batch, inputSize}), dw.w, dw.wBias),
        {seq, batch, spec.gates * hidden});
    Value h = dw.h0 ? dw.h0 : zeros, c = dw.c0 ? dw.c0 : zeros;
    bool reverse = direction == "reverse" || d == 1;
    SmallVector<Value> steps(seq);
    for (int64_t k = 0; k < seq; ++k) {
      int64_t t = reverse ? seq - 1 - k : k;
      Value xt = bld.reshape(bld.slice(projected, 0, t, 1),
                             {batch, spec.gates * hidden});
      Value hBefore = h, cBefore = c;
      step(bld, ctx, spec, dw, act, xt, hidden, clipLimit, inputForget,
           linearBeforeReset, h, c);
      Value output = h;
      if (lengthColumn) {
        Value runs = stepRuns(t);
        output = bld.select(runs, h, zeros);
        h = bld.select(runs, h, hBefore);
        c = bld.select(runs, c, cBefore);
      }
      steps[t] = bld.reshape(output, {1, 1, batch, hidden});
      if (bld.failed())
        return ctx.fail("could not build the unrolled recurrence");
    }
    ys.push_back(bld.concat(steps, 0));
    lastH.push_back(bld.reshape(h, {1, batch, hidden}));
    lastC.push_back(bld.reshape(c, {1, batch, hidden}));
  }
  Value y = bld.concat(ys, 1), yh = bld.concat(lastH, 0),
        yc = bld.concat(lastC, 0);
  if (batchFirst) {
    y = bld.transpose(y, {2, 0, 1, 3});
    yh = bld.transpose(yh, {1, 0, 2});
    yc = bld.transpose(yc, {1, 0, 2});
  }
  if (bld.failed())
    return ctx.fail("could not build the unrolled recurrence");
  ctx.setOutput(0, y);
  ctx.setOutput(1, yh);
  if (spec.cell == Cell::LSTM)
    ctx.setOutput(2, yc);
  return success();
}

} // namespace

static LogicalResult importLSTM(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::LSTM, 4, {}});
}
static LogicalResult importGRU(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::GRU, 3, {}});
}
static LogicalResult importRNN(NodeContext &ctx) {
  return importRecurrent(ctx, {Cell::RNN, 1, {}});
}

static LogicalResult importGatherElements(NodeContext &ctx) {
  return importIndexedAlongAxis<GatherElementsOp>(ctx);
}

static LogicalResult importScatterElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!data || !indices || !updates || failed(ctx.requireIndices(indices)) ||
      failed(ctx.requireSameDtype({data, updates})))
    return failure();
  auto axis = ctx.axisAttr(0, rankOf(data));
  if (failed(axis) ||
      failed(ctx.requireIndicesInRange(1, {*axis}, shapeOf(data))))
    return failure();
  std::string reduction = ctx.stringAttr("reduction", "none");
  auto &b = ctx.b();
  auto scatter = ScatterElementsOp::create(
      b, ctx.getLoc(), data.getType(), data, indices, updates,
      b.getI64IntegerAttr(*axis), b.getStringAttr(reduction));
  if (failed(mlir::verify(scatter))) {
    scatter.erase();
    return ctx.fail("invalid ScatterElements (shapes, axis or reduction)");
  }
  ctx.setOutput(0, scatter);
  return success();
}

static LogicalResult importScatterND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!data || !indices || !updates || failed(ctx.requireIndices(indices)) ||
      failed(ctx.requireSameDtype({data, updates})))
    return failure();
  ArrayRef<int64_t> indexShape = shapeOf(indices);
  if (!indexShape.empty() && indexShape.back() >= 1 &&
      indexShape.back() <= rankOf(data) &&
      failed(ctx.requireIndicesInRange(
          1, llvm::to_vector(llvm::seq<int64_t>(0, indexShape.back())),
          shapeOf(data))))
    return failure();
  auto &b = ctx.b();
  auto scatter = ScatterNDOp::create(
      b, ctx.getLoc(), data.getType(), data, indices, updates,
      b.getStringAttr(ctx.stringAttr("reduction", "none")));
  if (failed(mlir::verify(scatter))) {
    scatter.erase();
    return ctx.fail("invalid ScatterND (shapes or reduction)");
  }
  ctx.setOutput(0, scatter);
  return success();
}

void onnx_import::registerRecurrentOps(OpRegistry &registry) {
  // clang-format off
  registry.add("GatherElements", 11, kMaxOpset, "negative indices", importGatherElements);
  registry.add("GRU", 7, kMaxOpset, "unrolled; Sigmoid/Tanh/Relu; sequence_lens (read at run time)", importGRU);
  registry.add("LSTM", 7, kMaxOpset, "unrolled; peepholes, clip, layout; sequence_lens (read at run time)", importLSTM);
  registry.add("RNN", 7, kMaxOpset, "unrolled; sequence_lens (read at run time)", importRNN);
  registry.add("Scatter", 9, 10, "as ScatterElements", importScatterElements);
  registry.add("ScatterElements", 11, kMaxOpset, "reductions add/mul/max/min (O(n*m) kernel)", importScatterElements);
  registry.add("ScatterND", 11, kMaxOpset, "reductions add/mul/max/min (O(n*m) kernel)", importScatterND);
  // clang-format on
}
