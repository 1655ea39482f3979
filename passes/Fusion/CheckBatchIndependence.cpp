//===- CheckBatchIndependence.cpp - may the batch run in chunks? ----------===//
//
// A dynamic-batch artifact runs a batch of any size as chunks of the size
// it was compiled for, one run of the kernels per chunk. That gives the
// batch's answer only when no value mixes batch elements: each element of
// the batch must flow through the graph on its own. This pass tracks, for
// every value, which of its dims carries the batch of the arguments marked
// kiln.batched (or that it has none, like a weight), and refuses any op that
// would combine elements of that dim: a reduction or softmax over it, a
// reshape merging it with another dim, a concat along it, a matmul
// contracting it, a gather across it, a broadcast against a constant that
// varies along it. Graph outputs must carry the batch whole in one dim
// (they are marked kiln.batched with it) or not at all. Where the driver
// imported the model at a second batch size (checkBatchDimsAt), the batch dim
// of each op it recorded (kiln.batch_dim) is taken as given: at a batch of 1 a
// reshape cannot tell where the batch went, and a constant made for the batch
// (a mask of ones, indices b*S + s into a flattened [B*S]) has no operand to
// derive it from.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_CHECKBATCHINDEPENDENCE
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

ArrayRef<int64_t> shape(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
int64_t rank(Value v) { return shape(v).size(); }
int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// The batch dim recorded on `op`'s one result (kiln.batch_dim), if any.
std::optional<BatchDim> recordedBatchDim(Operation *op) {
  auto d = op->getAttrOfType<DenseI64ArrayAttr>(attrs::kBatchDim);
  if (!d || d.size() != 4 || op->getNumResults() != 1)
    return std::nullopt;
  return BatchDim{d[0], d[1], d[2], d[3]};
}

/// The dim of argument `arg` that is the batch (kiln.batched), if any.
std::optional<int64_t> argBatchDim(func::FuncOp func, BlockArgument arg) {
  auto dim =
      func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), attrs::kBatched);
  if (!dim || dim.getInt() < 0 || dim.getInt() >= rank(arg))
    return std::nullopt;
  return dim.getInt();
}

/// `d` at another dim.
BatchDim moved(BatchDim d, int64_t dim) {
  d.dim = dim;
  return d;
}

/// A constant's elements as integers (a float's bits), row-major, a splat
/// expanded; none when they cannot be read.
std::optional<SmallVector<int64_t>> elementsAsIntegers(Attribute value) {
  auto type = cast<ShapedType>(cast<TypedAttr>(value).getType());
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return std::nullopt;
  SmallVector<int64_t> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (element.isInteger())
      for (const APInt &v : dense.getValues<APInt>())
        out.push_back(v.getSExtValue());
    else
      for (const APFloat &v : dense.getValues<APFloat>())
        out.push_back(int64_t(v.bitcastToAPInt().getZExtValue()));
    return out;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> raw = blob->getData();
  size_t width = std::max<size_t>(1, element.getIntOrFloatBitWidth() / 8);
  if (width > 8 || raw.size() != size_t(type.getNumElements()) * width)
    return std::nullopt;
  for (size_t i = 0; i < raw.size(); i += width) {
    uint64_t bits = 0;
    std::memcpy(&bits, raw.data() + i, width);
    // Integers sign-extended, as DenseElementsAttr's are read.
    if (element.isInteger() && width < 8 && (bits >> (8 * width - 1)) & 1)
      bits |= ~uint64_t(0) << (8 * width);
    out.push_back(int64_t(bits));
  }
  return out;
}

/// Where batch element b's slice of a value with batch dim `d` lies in its
/// row-major elements: `outer` blocks (the dims before the batch dim), each
/// of `batch` slices of `slice` elements.
struct SliceLayout {
  SliceLayout(ArrayRef<int64_t> sizes, BatchDim d, int64_t batch)
      : batch(batch), outer(product(sizes.take_front(d.dim))),
        slice(d.inner * product(sizes.drop_front(d.dim + 1))) {}
  int64_t at(int64_t o, int64_t b, int64_t j) const {
    return (o * batch + b) * slice + j;
  }
  int64_t batch, outer, slice;
};

/// Whether `values` hold, for each batch element b, element 0's slice plus
/// b * step.
bool slicesStep(ArrayRef<int64_t> values, const SliceLayout &layout,
                int64_t step) {
  for (int64_t o = 0; o < layout.outer; ++o)
    for (int64_t b = 1; b < layout.batch; ++b)
      for (int64_t j = 0; j < layout.slice; ++j)
        if (uint64_t(values[layout.at(o, b, j)]) !=
            uint64_t(values[layout.at(o, 0, j)]) + uint64_t(b) * uint64_t(step))
          return false;
  return true;
}

/// The batch slices of constant `x` of a graph imported at a batch of
/// `batch`, from `y`, the same constant imported at `otherBatch` (at least
/// 2): the one dim whose size changes with the batch, and the step between
/// slices (0 unless they are integers counting batch elements). None when
/// the constant depends on the batch size in another way.
std::optional<BatchDim> batchSlices(ConstantOp x, int64_t batch, ConstantOp y,
                                    int64_t otherBatch) {
  ArrayRef<int64_t> a = shape(x.getResult()), b = shape(y.getResult());
  if (a.size() != b.size())
    return std::nullopt;
  std::optional<int64_t> dim;
  for (auto [i, sizes] : llvm::enumerate(llvm::zip(a, b)))
    if (std::get<0>(sizes) != std::get<1>(sizes)) {
      if (dim)
        return std::nullopt;
      dim = i;
    }
  if (!dim || a[*dim] % batch != 0 || b[*dim] != otherBatch * (a[*dim] / batch))
    return std::nullopt;
  BatchDim d{*dim, a[*dim] / batch, 1, 0};
  auto xs = elementsAsIntegers(x.getValue());
  auto ys = elementsAsIntegers(y.getValue());
  SliceLayout xl(a, d, batch), yl(b, d, otherBatch);
  if (!xs || !ys || xl.outer * xl.slice == 0)
    return std::nullopt;
  if (getElementTypeOrSelf(x.getType()).isInteger())
    d.step = int64_t(uint64_t((*ys)[yl.at(0, 1, 0)]) -
                     uint64_t((*ys)[yl.at(0, 0, 0)]));
  for (int64_t o = 0; o < xl.outer; ++o)
    for (int64_t j = 0; j < xl.slice; ++j)
      if ((*xs)[xl.at(o, 0, j)] != (*ys)[yl.at(o, 0, j)])
        return std::nullopt;
  if (!slicesStep(*xs, xl, d.step) || !slicesStep(*ys, yl, d.step))
    return std::nullopt;
  return d;
}

/// The batch slices of `x`, an expand in a graph imported at a batch of
/// `batch`, given `y`, the same expand at `otherBatch`, where it broadcasts
/// the same input (one without the batch) along the batch: every batch
/// element's slice is the same. None where it is not such an expand.
std::optional<BatchDim> broadcastSlices(ExpandOp x, int64_t batch, ExpandOp y,
                                        int64_t otherBatch) {
  ArrayRef<int64_t> a = shape(x.getResult()), b = shape(y.getResult());
  if (x.getInput().getType() != y.getInput().getType() ||
      a.size() != b.size() || a == b)
    return std::nullopt;
  int64_t dim = 0;
  while (a[dim] == b[dim])
    ++dim;
  int64_t inputDim = dim - (int64_t(a.size()) - rank(x.getInput()));
  if (a.drop_front(dim + 1) != b.drop_front(dim + 1) || a[dim] % batch != 0 ||
      b[dim] != otherBatch * (a[dim] / batch) ||
      (inputDim >= 0 && shape(x.getInput())[inputDim] != 1))
    return std::nullopt;
  return BatchDim{dim, a[dim] / batch, 1, 0};
}

/// Why batch elements would mix, or "" when they do not; sets `result`.
class BatchRules {
public:
  BatchRules(DenseMap<Value, BatchDim> &dims, int64_t batch)
      : dims(dims), batch(batch) {}

  std::string resultDim(Operation *op, std::optional<BatchDim> &result);

private:
  std::optional<BatchDim> of(Value v) const {
    auto it = dims.find(v);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }
  bool batched(Value v) const { return dims.count(v); }
  /// `v`'s batch dim moved to `dim`.
  BatchDim at(Value v, int64_t dim) const { return moved(*of(v), dim); }
  std::string elementwise(Operation *op, std::optional<BatchDim> &result);
  std::string matmul(Value lhs, Value rhs, Value out,
                     std::optional<BatchDim> &result);
  std::string reshape(Value in, Value out, std::optional<BatchDim> &result);
  std::string gatherWithinElements(GatherOp gather,
                                   std::optional<BatchDim> &result);
  /// A reduction-like op over `reduced` dims of its input.
  std::string reduce(Value in, ArrayRef<int64_t> reduced, bool keepdims,
                     std::optional<BatchDim> &result);

  DenseMap<Value, BatchDim> &dims;
  int64_t batch;
};

std::string BatchRules::elementwise(Operation *op,
                                    std::optional<BatchDim> &result) {
  Value out = op->getResult(0);
  int64_t outRank = rank(out);
  for (Value operand : op->getOperands()) {
    std::optional<BatchDim> d = of(operand);
    if (!d)
      continue;
    BatchDim aligned = moved(*d, d->dim + outRank - rank(operand));
    if (result && *result != aligned)
      return "its operands carry the batch in different dims";
    if (shape(operand)[d->dim] != shape(out)[aligned.dim])
      return "it broadcasts the batch dim";
    result = aligned;
  }
  // An operand without the batch must not vary along it.
  for (Value operand : op->getOperands()) {
    if (batched(operand))
      continue;
    int64_t dim = result->dim - (outRank - rank(operand));
    if (dim >= 0 && shape(operand)[dim] != 1)
      return "an operand that is the same for every run (a weight) varies "
             "along the batch dim";
  }
  return "";
}

std::string BatchRules::matmul(Value lhs, Value rhs, Value out,
                               std::optional<BatchDim> &result) {
  std::optional<BatchDim> l = of(lhs), r = of(rhs);
  int64_t outRank = rank(out), lRank = rank(lhs), rRank = rank(rhs);
  if ((l && l->dim == lRank - 1) || (r && r->dim == rRank - 2))
    return "it contracts the batch dim";
  if (l && r &&
      (l->dim >= lRank - 2 || r->dim >= rRank - 2 ||
       moved(*l, 0) != moved(*r, 0) ||
       l->dim + outRank - lRank != r->dim + outRank - rRank))
    return "both operands carry the batch, in dims it does not pair";
  if (l)
    result = moved(*l, l->dim + outRank - lRank);
  else if (r->dim == rRank - 1)
    result = moved(*r, outRank - 1);
  else
    result = moved(*r, r->dim + outRank - rRank);
  // The other operand's matching batch dim must broadcast.
  Value other = l ? rhs : lhs;
  if (!batched(other) && result->dim < outRank - 2) {
    int64_t dim = result->dim - (outRank - rank(other));
    if (dim >= 0 && shape(other)[dim] != 1)
      return "a weight varies along the batch dim";
  }
  return "";
}

/// The batch keeps its place in the flattened elements: the same count of
/// elements outside it (`outer` runs of it, after the dims before it) and
/// inside it (`inner` times the dims after it). The first dim of the result
/// that can hold it that way does (at a batch of 1 several can; the check
/// at a larger batch refuses a wrong choice).
std::string BatchRules::reshape(Value in, Value out,
                                std::optional<BatchDim> &result) {
  BatchDim d = *of(in);
  ArrayRef<int64_t> from = shape(in), to = shape(out);
  int64_t outside = product(from.take_front(d.dim)) * d.outer;
  int64_t within = d.inner * product(from.drop_front(d.dim + 1));
  for (int64_t i = 0; i < int64_t(to.size()); ++i) {
    int64_t before = product(to.take_front(i));
    if (before == 0 || outside % before != 0)
      continue;
    int64_t outer = outside / before, after = product(to.drop_front(i + 1));
    if (to[i] % (outer * batch) == 0 &&
        (to[i] / (outer * batch)) * after == within) {
      result = BatchDim{i, to[i] / (outer * batch), outer, 0};
      return "";
    }
  }
  return "it merges the batch dim with a dim outside it";
}

/// A gather whose constant indices count batch elements (kiln.batch_dim)
/// from data whose batch was merged with the dims after it, as a flattened
/// index into [batch, ...] is: each element's indices must stay within its
/// own rows.
std::string BatchRules::gatherWithinElements(GatherOp gather,
                                             std::optional<BatchDim> &result) {
  BatchDim data = *of(gather.getInput()), indices = *of(gather.getIndices());
  if (indices.step == 0 || data.dim != int64_t(gather.getAxis()) ||
      data.outer != 1 || indices.step != data.inner)
    return "both its data and its indices carry the batch";
  auto constant = gather.getIndices().getDefiningOp<ConstantOp>();
  std::optional<SmallVector<int64_t>> values =
      constant ? elementsAsIntegers(constant.getValue()) : std::nullopt;
  if (!values)
    return "both its data and its indices carry the batch";
  SliceLayout layout(shape(gather.getIndices()), indices, batch);
  for (int64_t o = 0; o < layout.outer; ++o)
    for (int64_t j = 0; j < layout.slice; ++j) {
      int64_t index = (*values)[layout.at(o, 0, j)];
      if (index < 0 || index >= data.inner)
        return "its indices reach the rows of another batch element";
    }
  result = moved(indices, int64_t(gather.getAxis()) + indices.dim);
  result->step = 0;
  return "";
}

std::string BatchRules::reduce(Value in, ArrayRef<int64_t> reduced,
                               bool keepdims, std::optional<BatchDim> &result) {
  BatchDim d = *of(in);
  if (llvm::is_contained(reduced, d.dim))
    return "it reduces over the batch dim";
  int64_t dropped =
      keepdims ? 0
               : llvm::count_if(reduced, [&](int64_t a) { return a < d.dim; });
  result = moved(d, d.dim - dropped);
  return "";
}

std::string BatchRules::resultDim(Operation *op,
                                  std::optional<BatchDim> &result) {
  result = std::nullopt;
  if (llvm::none_of(op->getOperands(), [&](Value v) { return batched(v); }))
    return "";
  if (op->getNumResults() != 1)
    return "Kiln does not know how it treats the batch";
  for (OpOperand &operand : op->getOpOperands())
    if (std::optional<BatchDim> d = of(operand.get());
        d && d->step != 0 &&
        !(isa<GatherOp>(op) && operand.getOperandNumber() == 1))
      return "it computes with a constant that counts batch elements";
  Value out = op->getResult(0);
  auto onlyFirstBatched = [&] {
    return llvm::none_of(op->getOperands().drop_front(),
                         [&](Value v) { return batched(v); });
  };
  if (auto t = dyn_cast<TransposeOp>(op)) {
    int64_t d = of(t.getInput())->dim;
    result = at(t.getInput(), llvm::find(t.getPerm(), d) - t.getPerm().begin());
    return "";
  }
  if (auto r = dyn_cast<ReshapeOp>(op))
    return reshape(r.getInput(), out, result);
  if (auto m = dyn_cast<MatMulOp>(op))
    return matmul(m.getLhs(), m.getRhs(), out, result);
  if (auto g = dyn_cast<GemmOp>(op)) {
    if (!onlyFirstBatched() || of(g.getA())->dim != 0 || g.getTransA())
      return "it contracts or transposes the batch dim";
    if (g.getC() && rank(g.getC()) == 2 && shape(g.getC())[0] != 1)
      return "its bias varies along the batch dim";
    result = of(g.getA());
    return "";
  }
  if (isa<ConvOp, MaxPoolOp, AveragePoolOp>(op)) {
    // Every image of [N, C, ...] on its own.
    if (of(op->getOperand(0))->dim != 0 || !onlyFirstBatched())
      return "its weights or channels carry the batch";
    result = of(op->getOperand(0));
    return "";
  }
  if (auto s = dyn_cast<SliceOp>(op)) {
    int64_t d = of(s.getInput())->dim;
    if (s.getStarts()[d] != 0 || s.getSteps()[d] != 1 ||
        shape(out)[d] != shape(s.getInput())[d])
      return "it slices the batch dim";
    result = of(s.getInput());
    return "";
  }
  if (auto p = dyn_cast<PadOp>(op)) {
    int64_t d = of(p.getInput())->dim;
    if (p.getPads()[d] != 0 || p.getPads()[d + rank(out)] != 0 ||
        !onlyFirstBatched())
      return "it pads the batch dim";
    result = of(p.getInput());
    return "";
  }
  if (isa<ExpandOp, TileOp>(op)) {
    Value in = op->getOperand(0);
    int64_t d = of(in)->dim, dim = d + rank(out) - rank(in);
    if (shape(out)[dim] != shape(in)[d])
      return "it repeats along the batch dim";
    result = at(in, dim);
    return "";
  }
  if (auto c = dyn_cast<ConcatOp>(op)) {
    std::optional<BatchDim> first = of(c.getInputs().front());
    if (!first || first->dim == int64_t(c.getAxis()) ||
        llvm::any_of(c.getInputs(), [&](Value v) { return of(v) != first; }))
      return "it joins values along the batch dim, or joins a weight to "
             "batched values";
    result = first;
    return "";
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    std::optional<BatchDim> data = of(g.getInput()),
                            indices = of(g.getIndices());
    int64_t axis = g.getAxis();
    if (data && indices)
      return gatherWithinElements(g, result);
    if (data && data->dim == axis)
      return "it gathers along the batch dim";
    if (data)
      result = at(g.getInput(), data->dim < axis
                                    ? data->dim
                                    : data->dim + rank(g.getIndices()) - 1);
    else
      result = at(g.getIndices(), axis + indices->dim);
    return "";
  }
  if (isa<GatherElementsOp, ScatterElementsOp>(op)) {
    std::optional<BatchDim> first = of(op->getOperand(0));
    int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
    if (!first || first->dim == axis ||
        llvm::any_of(op->getOperands(), [&](Value v) {
          return of(v) != first && shape(v)[first->dim] != 1;
        }))
      return "it indexes across the batch dim";
    result = first;
    return "";
  }
  if (auto s = dyn_cast<SoftmaxOp>(op))
    return reduce(s.getInput(), {int64_t(s.getAxis())}, true, result);
  if (auto s = dyn_cast<LogSoftmaxOp>(op))
    return reduce(s.getInput(), {int64_t(s.getAxis())}, true, result);
  if (auto n = dyn_cast<LayerNormOp>(op)) {
    auto normalized =
        llvm::to_vector(llvm::seq<int64_t>(n.getAxis(), rank(n.getInput())));
    return reduce(n.getInput(), normalized, true, result);
  }
  if (isa<ArgMaxOp, ArgMinOp>(op)) {
    int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
    bool keep = cast<BoolAttr>(op->getAttr("keepdims")).getValue();
    return reduce(op->getOperand(0), {axis}, keep, result);
  }
  if (auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
      axes && op->getNumOperands() == 1 && op->hasAttr("keepdims"))
    return reduce(op->getOperand(0), axes.asArrayRef(),
                  cast<BoolAttr>(op->getAttr("keepdims")).getValue(), result);
  // Elementwise ops: those whose operands broadcast to the result.
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
      isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, PReluOp,
          ShiftLeftOp, ShiftRightOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
          GreaterEqualOp, AndOp, OrOp, XorOp, WhereOp, CastOp, IsNaNOp>(op))
    return elementwise(op, result);
  return "Kiln does not know how it treats the batch";
}

/// Whether two constants hold the same values: weights imported twice are
/// blobs of different names.
bool sameConstant(Attribute a, Attribute b) {
  auto blobA = dyn_cast<DenseResourceElementsAttr>(a);
  auto blobB = dyn_cast<DenseResourceElementsAttr>(b);
  if (!blobA || !blobB)
    return a == b;
  AsmResourceBlob *dataA = blobA.getRawHandle().getBlob();
  AsmResourceBlob *dataB = blobB.getRawHandle().getBlob();
  return blobA.getType() == blobB.getType() && dataA && dataB &&
         dataA->getData() == dataB->getData();
}

} // namespace

FailureOr<DenseMap<Value, BatchDim>> kiln::analyzeBatchDims(func::FuncOp func) {
  DenseMap<Value, BatchDim> dims;
  std::optional<int64_t> batch;
  for (BlockArgument arg : func.getArguments()) {
    std::optional<int64_t> dim = argBatchDim(func, arg);
    if (!dim)
      continue;
    int64_t size = shape(arg)[*dim];
    if (batch && *batch != size)
      return func.emitError() << "--dynamic-batch: the batched inputs have "
                                 "different batch dims ("
                              << *batch << " and " << size << ")";
    batch = size;
    dims[arg] = BatchDim{*dim, 1, 1, 0};
  }
  if (!batch)
    return dims;
  // Where the imports at two batch sizes placed the batch, no rule guesses.
  DenseSet<Operation *> recorded;
  func.walk([&](Operation *op) {
    if (std::optional<BatchDim> d = recordedBatchDim(op)) {
      dims[op->getResult(0)] = *d;
      recorded.insert(op);
    }
  });
  BatchRules rules(dims, *batch);
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<func::ReturnOp>(op))
      return WalkResult::advance();
    std::optional<BatchDim> result;
    std::string problem = rules.resultDim(op, result);
    if (!problem.empty()) {
      op->emitError() << "--dynamic-batch: " << op->getName()
                      << " mixes elements of the batch: " << problem
                      << " (compile with a fixed batch instead)";
      return WalkResult::interrupt();
    }
    if (result && !recorded.contains(op))
      dims[op->getResult(0)] = *result;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return dims;
}

static void recordBatchDim(Operation *op, const BatchDim &d) {
  op->setAttr(attrs::kBatchDim,
              DenseI64ArrayAttr::get(op->getContext(),
                                     {d.dim, d.inner, d.outer, d.step}));
}

/// The error for op `op`, which `what` with the batch size.
static LogicalResult refuseChangeWithBatch(Operation *op, const Twine &what) {
  op->emitError() << "--dynamic-batch: " << op->getName() << " " << what
                  << " with the batch size (compile with a fixed batch "
                     "instead)";
  return failure();
}

/// Records, on the constants of `chunk` that differ from their counterparts
/// in `other` and on its expands of values without the batch to it, and on
/// those counterparts, the batch slices they hold, which no rule derives
/// from operands; fails, naming the op, where the two graphs differ in
/// another way.
static LogicalResult recordBatchSlices(func::FuncOp chunk, int64_t chunkBatch,
                                       func::FuncOp other, int64_t otherBatch) {
  Block &first = chunk.getBody().front(), &second = other.getBody().front();
  if (first.getOperations().size() != second.getOperations().size())
    return chunk.emitError() << "--dynamic-batch: the model imports to "
                                "another graph at another batch size "
                                "(compile with a fixed batch instead)";
  for (auto [x, y] : llvm::zip(first, second)) {
    if (x.getName() != y.getName() || x.getNumResults() != y.getNumResults())
      return refuseChangeWithBatch(&x, "imports differently");
    if (isa<func::ReturnOp>(x))
      continue;
    std::optional<BatchDim> slices;
    if (auto constant = dyn_cast<ConstantOp>(x)) {
      auto counterpart = cast<ConstantOp>(y);
      if (constant.use_empty() ||
          sameConstant(constant.getValue(), counterpart.getValue()))
        continue;
      slices = batchSlices(constant, chunkBatch, counterpart, otherBatch);
      if (!slices)
        return refuseChangeWithBatch(&x, "holds a value that changes");
    } else if (x.getAttrDictionary() != y.getAttrDictionary()) {
      return refuseChangeWithBatch(&x, "takes attributes that change");
    } else if (auto expand = dyn_cast<ExpandOp>(x)) {
      slices =
          broadcastSlices(expand, chunkBatch, cast<ExpandOp>(y), otherBatch);
    }
    if (slices) {
      recordBatchDim(&x, *slices);
      recordBatchDim(&y, *slices);
    }
  }
  return success();
}

LogicalResult kiln::checkBatchDimsAt(func::FuncOp chunk, func::FuncOp other,
                                     int64_t otherBatch) {
  int64_t chunkBatch = 0;
  for (BlockArgument arg : chunk.getArguments())
    if (std::optional<int64_t> dim = argBatchDim(chunk, arg))
      chunkBatch = shape(arg)[*dim];
  if (chunkBatch == 0)
    return success();
  if (failed(recordBatchSlices(chunk, chunkBatch, other, otherBatch)))
    return failure();
  // At the larger batch no reshape is ambiguous (at a batch of 1, a dim of
  // size 1 could be the batch anywhere).
  auto dims = analyzeBatchDims(other);
  if (failed(dims))
    return failure();
  // The same graph, value for value; each type differs only in the batch.
  auto matches = [&](Value r, Value s) {
    auto type = cast<RankedTensorType>(s.getType());
    auto it = dims->find(s);
    if (it == dims->end())
      return r.getType() == type;
    SmallVector<int64_t> sizes(type.getShape());
    const BatchDim &d = it->second;
    sizes[d.dim] = d.outer * chunkBatch * d.inner;
    return r.getType() == type.clone(sizes);
  };
  for (auto [a, b] : llvm::zip(chunk.getArguments(), other.getArguments()))
    if (!matches(a, b))
      return chunk.emitError() << "--dynamic-batch: an input changes in "
                                  "more than its batch";
  Block &first = chunk.getBody().front(), &second = other.getBody().front();
  for (auto [x, y] : llvm::zip(first, second)) {
    if (isa<ConstantOp>(x) && x.use_empty())
      continue;
    for (auto [r, s] : llvm::zip(x.getResults(), y.getResults()))
      if (!matches(r, s))
        return refuseChangeWithBatch(
            &x, "gives a shape that changes in more than the batch");
    if (x.getNumResults() == 1)
      if (auto it = dims->find(y.getResult(0)); it != dims->end())
        recordBatchDim(&x, it->second);
  }
  return success();
}

namespace {

struct CheckBatchIndependence
    : kiln::impl::CheckBatchIndependenceBase<CheckBatchIndependence> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto dims = analyzeBatchDims(func);
    if (failed(dims))
      return signalPassFailure();
    if (dims->empty())
      return;
    // Results that carry the batch carry it whole, in one dim (the
    // runtime puts each chunk's rows in place along it).
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto it = dims->find(value);
      if (it == dims->end())
        continue;
      if (it->second != BatchDim{it->second.dim, 1, 1, 0}) {
        ret.emitError() << "--dynamic-batch: result " << i
                        << " does not carry the batch as a dim of its own";
        return signalPassFailure();
      }
      func.setResultAttr(
          i, attrs::kBatched,
          IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                           it->second.dim));
    }
  }
};

} // namespace
