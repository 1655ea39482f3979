//===- OnnxSelectedPositionsHandlers.cpp - NonZero and Compress -----------===//
//
// NonZero and Compress return as many elements as their input holds true
// ones, a count known only at run time. Kiln fixes shapes at compile time:
// where the model declares the result's shape, that count is fixed, a
// run-time check fails a run whose data holds another, and the kernels find
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
}
