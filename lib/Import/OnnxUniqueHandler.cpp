//===- OnnxUniqueHandler.cpp - Unique by pairwise comparison --------------===//
//
// Unique returns as many values (or slices along an axis) as the input
// holds distinct ones, a count known only at run time: where the model
// declares the result's shape, the count is fixed and a run-time check
// fails a run whose data holds another. The kernels compare every pair of
// slices (rows of the input with the axis moved first and the rest
// flattened): a row is the first of its kind when no earlier row equals it,
// and its rank among the first rows orders the result (by position, or
// lexicographically when sorted). That costs the square of the row count,
// so it is limited to kMaxUniqueRows.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

/// The most rows Unique compares pairwise.
constexpr int64_t kMaxUniqueRows = 4096;

namespace {

/// Pairwise relations of the rows as [n, n] tensors.
struct RowRelations {
  Value equal; // bool: row i equals row j
  Value less;  // bool: row i sorts before row j (lexicographically)
};

class UniqueOps : public IndexOps {
public:
  explicit UniqueOps(NodeContext &ctx) : IndexOps(ctx), ctx(ctx) {}

  Value count(Value mask, int64_t axis) {
    return sum(select(mask, scalar(1), scalar(0)), axis);
  }

private:
  NodeContext &ctx;
};

} // namespace

/// Equality and lexicographic order of the rows of `rows` ([n, w]).
static RowRelations compareRows(UniqueOps &m, Value rows) {
  int64_t n = shapeOf(rows)[0], w = shapeOf(rows)[1];
  Value a = m.reshape(rows, {n, 1, w}), b = m.reshape(rows, {1, n, w});
  Value differs = m.differs(a, b); // [n, n, w]
  Value same = m.op<EqualOp>(m.count(differs, 2), m.scalar(0));
  // Row i sorts first where it is smaller at the first element that differs.
  Value firstDiffering = m.argMax(m.castTo(differs, m.i64()), 2); // [n, n, 1]
  Value atFirst = m.op<EqualOp>(m.iota(w, {1, 1, w}), firstDiffering);
  Value smaller = m.op<AndOp>(m.op<LessOp>(a, b), atFirst);
  Value less = m.op<GreaterOp>(m.count(smaller, 2), m.scalar(0));
  return {same, less};
}

static LogicalResult importUnique(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Float | NodeContext::Int)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  std::optional<int64_t> axis;
  if (ctx.attr("axis")) {
    auto normalized = ctx.axisAttr(0, rank);
    if (failed(normalized))
      return failure();
    axis = *normalized;
  }
  bool sorted = ctx.intAttr("sorted", 1) != 0;
  int64_t elements = ShapedType::getNumElements(shape);
  int64_t n = axis ? shape[*axis] : elements;
  int64_t width = n ? elements / n : 0;
  if (n < 1 || n > kMaxUniqueRows)
    return ctx.fail("comparing " + Twine(n) +
                    " values or slices pairwise "
                    "is outside the 1 to " +
                    Twine(kMaxUniqueRows) + " Kiln compares");
  std::optional<std::vector<int64_t>> declared = ctx.declaredOutputShape(0);
  if (!declared)
    return ctx.fail("the result's shape depends on the data: supported "
                    "where the model declares it (graph output or "
                    "value_info)");
  int64_t resultAxis = axis.value_or(0);
  if (int64_t(declared->size()) != (axis ? rank : 1) ||
      (*declared)[resultAxis] < 1)
    return ctx.fail("the declared result shape does not fit the input");
  int64_t found = (*declared)[resultAxis];

  UniqueOps m(ctx);
  // Rows: the axis first, the rest flattened.
  Value rows;
  if (!axis) {
    rows = m.reshape(x, {n, 1});
  } else {
    SmallVector<int64_t> perm = {*axis};
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis)
        perm.push_back(d);
    rows = m.reshape(m.transpose(x, perm), {n, width});
  }
  RowRelations relations = compareRows(m, rows);
  Value earlier = m.op<LessOp>(m.iota(n, {1, n}), m.iota(n, {n, 1})); // j < i
  Value first = m.unary<NotOp>(
      m.op<GreaterOp>(m.count(m.op<AndOp>(relations.equal, earlier), 1),
                      m.scalar(0))); // [n]
  Value firstRow = m.reshape(first, {n, 1});
  // rank[i]: the first rows before row i, in the result's order.
  // before[j, i]: row j comes before row i.
  Value before = sorted ? relations.less
                        : m.op<LessOp>(m.iota(n, {n, 1}), m.iota(n, {1, n}));
  Value rankOfRow = m.count(m.op<AndOp>(firstRow, before), 0); // [n]
  // The row of result k: the first row of rank k.
  Value isK = m.op<AndOp>(
      m.reshape(first, {1, n}),
      m.op<EqualOp>(m.reshape(rankOfRow, {1, n}), m.iota(found, {found, 1})));
  Value indices = m.sum(m.select(isK, m.iota(n, {1, n}), m.scalar(0)), 1);
  Value flat = axis ? x : m.reshape(x, {elements});
  Value values = m.gather(flat, indices, resultAxis);
  // inverse[i]: the rank of the first row equal to row i.
  Value inverse =
      m.sum(m.select(m.op<AndOp>(relations.equal, m.reshape(first, {1, n})),
                     m.reshape(rankOfRow, {1, n}), m.scalar(0)),
            1);
  Value counts = m.count(m.gather(relations.equal, indices, 0), 1);
  ctx.addRuntimeCheck(m.differs(m.count(first, 0), m.scalar(found)),
                      "the data holds another count of distinct values than "
                      "the " +
                          Twine(found) +
                          " the model's declared result shape has (and the "
                          "artifact was compiled for)");
  if (m.failed())
    return failure();
  Value outputs[] = {values, indices, inverse, counts};
  for (auto [k, v] : llvm::enumerate(outputs))
    if (int64_t(k) < ctx.proto().output_size())
      ctx.setOutput(k, v);
  return success();
}

void onnx_import::registerUniqueOps(OpRegistry &registry) {
  registry.add("Unique", 11, kMaxOpset,
               "the declared result shape fixes the count (checked at run "
               "time); up to 4096 values or slices, compared pairwise",
               importUnique);
}
