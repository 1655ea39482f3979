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
// varies along it. Graph outputs must carry the batch in dim 0 (they are
// marked kiln.batched) or not at all.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

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
  BatchDim at(Value v, int64_t dim) const { return {dim, of(v)->inner}; }
  std::string elementwise(Operation *op, std::optional<BatchDim> &result);
  std::string matmul(Value lhs, Value rhs, Value out,
                     std::optional<BatchDim> &result);
  std::string reshape(Value in, Value out, std::optional<BatchDim> &result);
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
    BatchDim aligned{d->dim + outRank - rank(operand), d->inner};
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
      (l->dim >= lRank - 2 || r->dim >= rRank - 2 || l->inner != r->inner ||
       l->dim + outRank - lRank != r->dim + outRank - rRank))
    return "both operands carry the batch, in dims it does not pair";
  if (l)
    result = BatchDim{l->dim + outRank - lRank, l->inner};
  else if (r->dim == rRank - 1)
    result = BatchDim{outRank - 1, r->inner};
  else
    result = BatchDim{r->dim + outRank - rRank, r->inner};
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
/// elements outside it (`outer`) and inside it (`inner` times the dims
/// after it); a dim that holds it is the batch times an inner factor.
std::string BatchRules::reshape(Value in, Value out,
                                std::optional<BatchDim> &result) {
  BatchDim d = *of(in);
  ArrayRef<int64_t> from = shape(in), to = shape(out);
  int64_t outer = product(from.take_front(d.dim));
  int64_t within = d.inner * product(from.drop_front(d.dim + 1));
  for (int64_t i = 0; i < int64_t(to.size()); ++i) {
    if (product(to.take_front(i)) != outer)
      continue;
    if (to[i] % batch == 0 &&
        (to[i] / batch) * product(to.drop_front(i + 1)) == within) {
      result = BatchDim{i, to[i] / batch};
      return "";
    }
  }
  return "it merges the batch dim with a dim outside it";
}

std::string BatchRules::reduce(Value in, ArrayRef<int64_t> reduced,
                               bool keepdims, std::optional<BatchDim> &result) {
  BatchDim d = *of(in);
  if (llvm::is_contained(reduced, d.dim))
    return "it reduces over the batch dim";
  int64_t dropped =
      keepdims ? 0
               : llvm::count_if(reduced, [&](int64_t a) { return a < d.dim; });
  result = BatchDim{d.dim - dropped, d.inner};
  return "";
}

std::string BatchRules::resultDim(Operation *op,
                                  std::optional<BatchDim> &result) {
  result = std::nullopt;
  if (llvm::none_of(op->getOperands(), [&](Value v) { return batched(v); }))
    return "";
  if (op->getNumResults() != 1)
    return "Kiln does not know how it treats the batch";
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
      return "both its data and its indices carry the batch";
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
          GreaterEqualOp, AndOp, OrOp, XorOp, WhereOp, CastOp>(op))
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
    if (!func.getArgAttr(arg.getArgNumber(), attrs::kBatched))
      continue;
    int64_t size = shape(arg)[0];
    if (batch && *batch != size)
      return func.emitError() << "--dynamic-batch: the batched inputs have "
                                 "different leading dims ("
                              << *batch << " and " << size << ")";
    batch = size;
    dims[arg] = BatchDim{0, 1};
  }
  if (!batch)
    return dims;
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
    if (result)
      dims[op->getResult(0)] = *result;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return dims;
}

LogicalResult kiln::checkBatchDimsAt(func::FuncOp chunk, func::FuncOp other,
                                     int64_t otherBatch) {
  auto dims = analyzeBatchDims(chunk);
  if (failed(dims))
    return failure();
  // The same graph, value for value; each type differs only in the batch.
  auto expected = [&](Value v) -> Type {
    auto type = cast<RankedTensorType>(v.getType());
    auto it = dims->find(v);
    if (it == dims->end())
      return type;
    SmallVector<int64_t> sizes(type.getShape());
    sizes[it->second.dim] = otherBatch * it->second.inner;
    return type.clone(sizes);
  };
  auto mismatch = [&](Operation *op, StringRef what) {
    op->emitError() << "--dynamic-batch: " << op->getName() << " " << what
                    << " with the batch size (compile with a fixed batch "
                       "instead)";
    return failure();
  };
  for (auto [a, b] : llvm::zip(chunk.getArguments(), other.getArguments()))
    if (expected(a) != b.getType())
      return chunk.emitError() << "--dynamic-batch: an input changes in "
                                  "more than its batch";
  Block &first = chunk.getBody().front(), &second = other.getBody().front();
  if (first.getOperations().size() != second.getOperations().size())
    return chunk.emitError() << "--dynamic-batch: the model imports to "
                                "another graph at another batch size "
                                "(compile with a fixed batch instead)";
  for (auto [x, y] : llvm::zip(first, second)) {
    if (x.getName() != y.getName() || x.getNumResults() != y.getNumResults())
      return mismatch(&x, "imports differently");
    if (isa<func::ReturnOp>(x))
      continue;
    // Attributes and constants may not depend on the batch size.
    bool same = isa<ConstantOp>(x)
                    ? sameConstant(cast<ConstantOp>(x).getValue(),
                                   cast<ConstantOp>(y).getValue())
                    : x.getAttrDictionary() == y.getAttrDictionary();
    if (!same)
      return mismatch(&x, isa<ConstantOp>(x) ? "holds a value that changes"
                                             : "takes attributes that change");
    for (auto [r, s] : llvm::zip(x.getResults(), y.getResults()))
      if (expected(r) != s.getType())
        return mismatch(&x, "gives a shape that changes in more than the "
                            "batch");
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
    // Results that carry the batch carry it in dim 0, whole.
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto it = dims->find(value);
      if (it == dims->end())
        continue;
      if (it->second.dim != 0 || it->second.inner != 1) {
        ret.emitError() << "--dynamic-batch: result " << i
                        << " does not carry the batch as its leading dim";
        return signalPassFailure();
      }
      func.setResultAttr(i, attrs::kBatched, UnitAttr::get(func.getContext()));
    }
  }
};

} // namespace
