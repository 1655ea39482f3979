//===- OnnxTfIdfVectorizerHandler.cpp - n-gram counts by comparison -------===//
//
// TfIdfVectorizer counts, per row of integer tokens, the occurrences of the
// n-grams of its pool, including n-grams whose items lie `skip + 1` apart
// (one-grams counted once), then weighs the counts (TF, IDF or TFIDF). For
// each skip distance d and n-gram length n the kernels gather every window
// (x[i], x[i + d], ..., x[i + (n - 1) d]) as [rows, windows, n], compare
// it with the pool's n-grams of that length, and count the windows that
// match all n items; a constant one-hot matmul then puts each pool n-gram's
// count in its output column (ngram_indexes).
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// The pool n-grams of one length and the pool ids they count for.
struct GramsOfLength {
  int64_t length = 0;
  std::vector<int64_t> items; // grams.size() * length tokens
  std::vector<int64_t> ids;   // pool order, 0-based
};

/// The pool's n-grams of the lengths counted, by length; a gram listed
/// twice is refused, as onnxruntime refuses it.
FailureOr<std::vector<GramsOfLength>>
poolGrams(NodeContext &ctx, int64_t minLength, int64_t maxLength) {
  auto pool = ctx.intsAttr("pool_int64s");
  auto starts = ctx.intsAttr("ngram_counts");
  if (!pool || !starts)
    return ctx.fail("pool_int64s and ngram_counts are required (string "
                    "pools are not supported)"),
           failure();
  std::vector<GramsOfLength> byLength;
  std::set<std::vector<int64_t>> listed;
  int64_t id = 0;
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t length = i + 1, begin = (*starts)[i];
    int64_t end = i + 1 < starts->size() ? (*starts)[i + 1] : pool->size();
    if (begin < 0 || end < begin || end > int64_t(pool->size()) ||
        (end - begin) % length != 0)
      return ctx.fail("ngram_counts does not split the pool into n-grams"),
             failure();
    GramsOfLength grams;
    grams.length = length;
    for (int64_t at = begin; at < end; at += length, ++id) {
      if (length < minLength || length > maxLength)
        continue;
      std::vector<int64_t> gram(pool->begin() + at,
                                pool->begin() + at + length);
      if (!listed.insert(gram).second)
        return ctx.fail("the pool lists an n-gram twice"), failure();
      grams.items.insert(grams.items.end(), gram.begin(), gram.end());
      grams.ids.push_back(id);
    }
    if (!grams.ids.empty())
      byLength.push_back(std::move(grams));
  }
  return byLength;
}

} // namespace

/// How often each gram of `grams` occurs in each row of `tokens` ([rows,
/// columns] int64) with items `distance` apart: int64 [rows, grams].
static Value countGrams(IndexOps &m, Value tokens, const GramsOfLength &grams,
                        int64_t distance) {
  int64_t rows = shapeOf(tokens)[0], columns = shapeOf(tokens)[1];
  int64_t n = grams.length, count = grams.ids.size();
  int64_t windows = columns - distance * (n - 1);
  if (windows < 1)
    return m.constant(std::vector<int64_t>(rows * count, 0), {rows, count});
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < windows; ++i)
    for (int64_t k = 0; k < n; ++k)
      positions.push_back(i + k * distance);
  Value window =
      m.reshape(m.gather(tokens, m.constant(positions, {windows, n}), 1),
                {rows, windows, 1, n});
  Value pool = m.constant(grams.items, {1, 1, count, n});
  Value itemsEqual =
      m.select(m.op<EqualOp>(window, pool), m.scalar(1), m.scalar(0));
  Value matches = m.op<EqualOp>(m.sum(itemsEqual, 3), m.scalar(n));
  return m.sum(m.select(matches, m.scalar(1), m.scalar(0)), 1);
}

static LogicalResult importTfIdfVectorizer(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(ctx.requireDtypes(x, NodeContext::Int)))
    return failure();
  int64_t rank = rankOf(x);
  if (rank != 1 && rank != 2)
    return ctx.fail("the input must be [C] or [N, C]");
  int64_t minLength = ctx.intAttr("min_gram_length", 1);
  int64_t maxLength = ctx.intAttr("max_gram_length", 1);
  int64_t maxSkip = ctx.intAttr("max_skip_count", 0);
  if (minLength < 1 || maxLength < minLength || maxSkip < 0)
    return ctx.fail("the gram lengths and skip count are out of range");
  std::string mode = ctx.stringAttr("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.fail("mode '" + mode + "' is not supported");
  auto grams = poolGrams(ctx, minLength, maxLength);
  auto indexes = ctx.intsAttr("ngram_indexes");
  if (failed(grams))
    return failure();
  if (!indexes || indexes->empty())
    return ctx.fail("ngram_indexes is required");
  int64_t outputs = *llvm::max_element(*indexes) + 1;
  if (llvm::any_of(*indexes, [](int64_t i) { return i < 0; }))
    return ctx.fail("ngram_indexes must not be negative");
  int64_t poolSize = indexes->size();

  IndexOps m(ctx);
  int64_t columns = shapeOf(x).back(), rows = rank == 2 ? shapeOf(x)[0] : 1;
  Value tokens = m.reshape(m.widen(x), {rows, columns});
  // Counts per pool id: each length at every skip distance, one-grams at
  // the first only.
  std::vector<double> oneHot;
  SmallVector<Value> perGram;
  for (const GramsOfLength &g : *grams) {
    Value total;
    for (int64_t d = 1; d <= (g.length == 1 ? 1 : maxSkip + 1); ++d) {
      Value c = countGrams(m, tokens, g, d);
      total = total ? m.op<AddOp>(total, c) : c;
    }
    perGram.push_back(total);
    for (int64_t id : g.ids) {
      if (id >= poolSize)
        return ctx.fail("ngram_indexes has fewer entries than the pool");
      std::vector<double> row(outputs, 0.0);
      row[(*indexes)[id]] = 1.0;
      oneHot.insert(oneHot.end(), row.begin(), row.end());
    }
  }
  auto f32 = ctx.b().getF32Type();
  SmallVector<int64_t> outShape = {rows, outputs};
  Value y;
  if (perGram.empty()) {
    y = ctx.constant(RankedTensorType::get(outShape, f32), {0.0});
  } else {
    int64_t listed = oneHot.size() / outputs;
    Value asFloat = m.castTo(m.concat(perGram, 1), f32);
    y = m.op<MatMulOp>(
        asFloat,
        ctx.constant(RankedTensorType::get({listed, outputs}, f32), oneHot));
  }
  // Weighting: IDF marks presence, TFIDF scales counts, both by weights.
  if (mode != "TF") {
    Value one = ctx.constant(RankedTensorType::get({}, f32), {1.0});
    Value weights = one;
    const onnx::AttributeProto *given = ctx.attr("weights");
    if (given && given->floats_size() > 0) {
      if (given->floats_size() != outputs)
        return ctx.fail("weights must have one entry per output column");
      weights = ctx.constant(
          RankedTensorType::get({outputs}, f32),
          std::vector<double>(given->floats().begin(), given->floats().end()));
    }
    if (mode == "IDF")
      y = m.select(m.op<GreaterOp>(
                       y, ctx.constant(RankedTensorType::get({}, f32), {0.0})),
                   m.op<MulOp>(one, weights),
                   ctx.constant(RankedTensorType::get({}, f32), {0.0}));
    else
      y = m.op<MulOp>(y, weights);
  }
  if (rank == 1)
    y = m.reshape(y, {outputs});
  if (m.failed() || !y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

void onnx_import::registerTfIdfVectorizerOps(OpRegistry &registry) {
  registry.add("TfIdfVectorizer", 9, kMaxOpset,
               "integer tokens (no string pools); n-grams counted by "
               "comparing every window with the pool",
               importTfIdfVectorizer);
}
