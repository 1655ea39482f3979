//===- ConstantEvaluatorTest.cpp - tests for import-time folding ----------===//

#include "ConstantEvaluator.h"

#include "OnnxImporterImpl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace kiln::onnx_import;
using Shape = std::vector<int64_t>;
using TP = onnx::TensorProto;

namespace {

template <typename T>
ConstTensor tensor(int type, Shape shape, const std::vector<T> &values) {
  ConstTensor t;
  t.onnxType = type;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}
ConstTensor i64(Shape shape, const std::vector<int64_t> &v) {
  return tensor(TP::INT64, std::move(shape), v);
}
ConstTensor f32(Shape shape, const std::vector<float> &v) {
  return tensor(TP::FLOAT, std::move(shape), v);
}
ConstTensor boolean(Shape shape, const std::vector<uint8_t> &v) {
  return tensor(TP::BOOL, std::move(shape), v);
}

template <typename T> std::vector<T> values(const ConstTensor &t) {
  std::vector<T> out(t.bytes.size() / sizeof(T));
  if (!out.empty())
    memcpy(out.data(), t.bytes.data(), t.bytes.size());
  return out;
}

/// Builds a node with `numOutputs` outputs; attributes are added by callers.
struct Node {
  onnx::NodeProto proto;
  explicit Node(const std::string &op, int numOutputs = 1) {
    proto.set_op_type(op);
    proto.set_name(op + "_0");
    for (int i = 0; i < numOutputs; ++i)
      proto.add_output("out" + std::to_string(i));
  }
  Node &i(const std::string &name, int64_t v) {
    auto *a = proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  Node &ints(const std::string &name, const Shape &v) {
    auto *a = proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
    return *this;
  }
};

/// Evaluates and expects success; returns the outputs.
std::vector<ConstTensor> eval(const Node &node, int64_t opset,
                              std::vector<const ConstTensor *> inputs) {
  std::vector<ConstTensor> outputs;
  std::string error;
  EXPECT_TRUE(mlir::succeeded(
      evaluateConstantNode(node.proto, opset, inputs, outputs, error)))
      << error;
  return outputs;
}

/// Evaluates and expects failure; returns the error.
std::string evalError(const Node &node, int64_t opset,
                      std::vector<const ConstTensor *> inputs) {
  std::vector<ConstTensor> outputs;
  std::string error;
  EXPECT_TRUE(mlir::failed(
      evaluateConstantNode(node.proto, opset, inputs, outputs, error)));
  EXPECT_TRUE(outputs.empty());
  return error;
}

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();

TEST(ConstantEvaluator, KnowsItsOps) {
  for (const char *op :
       {"Shape", "Gather", "Unsqueeze", "Concat", "Slice", "Cast", "Where",
        "Range", "Expand", "Split", "NonZero", "ReduceProd", "ConstantOfShape"})
    EXPECT_TRUE(canEvaluateConstant(op)) << op;
  EXPECT_FALSE(canEvaluateConstant("Conv"));
  EXPECT_FALSE(canEvaluateConstant("MatMul"));
}

// The shape subgraph every PyTorch export carries:
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(ConstantEvaluator, ShapeGatherUnsqueezeConcatReshape) {
  std::vector<float> data(24);
  for (int k = 0; k < 24; ++k)
    data[k] = float(k);
  ConstTensor x = f32({2, 3, 4}, data);

  auto shape = eval(Node("Shape"), 13, {&x});
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_EQ(shape[0].shape, Shape{3});
  EXPECT_EQ(values<int64_t>(shape[0]), (Shape{2, 3, 4}));

  ConstTensor index = i64({}, {-2}); // scalar index, negative
  auto dim = eval(Node("Gather").i("axis", 0), 13, {&shape[0], &index});
  EXPECT_EQ(dim[0].shape, Shape{});
  EXPECT_EQ(values<int64_t>(dim[0]), Shape{3});

  ConstTensor axes = i64({1}, {0});
  auto unsq = eval(Node("Unsqueeze"), 13, {&dim[0], &axes});
  EXPECT_EQ(unsq[0].shape, Shape{1});
  // Before opset 13 the axes were an attribute.
  auto unsq11 = eval(Node("Unsqueeze").ints("axes", {0}), 11, {&dim[0]});
  EXPECT_EQ(unsq11[0].shape, Shape{1});

  ConstTensor minusOne = i64({1}, {-1});
  auto target = eval(Node("Concat").i("axis", 0), 13, {&unsq[0], &minusOne});
  EXPECT_EQ(values<int64_t>(target[0]), (Shape{3, -1}));

  auto reshaped = eval(Node("Reshape"), 13, {&x, &target[0]});
  EXPECT_EQ(reshaped[0].shape, (Shape{3, 8}));
  EXPECT_EQ(values<float>(reshaped[0]), data);
}

TEST(ConstantEvaluator, ShapeStartEnd) {
  Shape dims = {2, 3, 4, 5};
  EXPECT_EQ(values<int64_t>(shapeOf(dims, 1, -1)), (Shape{3, 4}));
  EXPECT_EQ(values<int64_t>(shapeOf(dims, -10, 100)), dims);
  EXPECT_EQ(values<int64_t>(shapeOf(dims, -1, std::nullopt)), Shape{5});
  ConstTensor empty = shapeOf(dims, 3, 1);
  EXPECT_EQ(empty.shape, Shape{0});
  EXPECT_TRUE(empty.bytes.empty());

  ConstTensor x = f32({2, 3, 4, 5}, std::vector<float>(120));
  auto out = eval(Node("Shape").i("start", 2), 15, {&x});
  EXPECT_EQ(values<int64_t>(out[0]), (Shape{4, 5}));
  // start/end are opset-15 attributes; earlier opsets ignore them.
  auto old = eval(Node("Shape").i("start", 2), 13, {&x});
  EXPECT_EQ(values<int64_t>(old[0]), dims);
}

TEST(ConstantEvaluator, SliceBoundsAndSteps) {
  ConstTensor x = i64({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  ConstTensor start = i64({1}, {-3}), end = i64({1}, {kMaxI64});
  EXPECT_EQ(values<int64_t>(eval(Node("Slice"), 13, {&x, &start, &end})[0]),
            (Shape{7, 8, 9}));

  // Reverse the whole axis: start -1, end INT64_MIN, step -1.
  ConstTensor rs = i64({1}, {-1}), re = i64({1}, {kMinI64});
  ConstTensor ax = i64({1}, {0}), st = i64({1}, {-1});
  EXPECT_EQ(
      values<int64_t>(eval(Node("Slice"), 13, {&x, &rs, &re, &ax, &st})[0]),
      (Shape{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));

  // Step 3 from 1 with an end past the dim (clamped).
  ConstTensor s3 = i64({1}, {1}), e3 = i64({1}, {100}), step3 = i64({1}, {3});
  EXPECT_EQ(
      values<int64_t>(eval(Node("Slice"), 13, {&x, &s3, &e3, &ax, &step3})[0]),
      (Shape{1, 4, 7}));

  // Start past the end gives an empty result, not an error.
  ConstTensor s9 = i64({1}, {20}), e9 = i64({1}, {30});
  auto empty = eval(Node("Slice"), 13, {&x, &s9, &e9});
  EXPECT_EQ(empty[0].shape, Shape{0});

  // 2-D, negative axis, step 2, absent optional inputs as nullptr.
  ConstTensor m = i64({2, 4}, {0, 1, 2, 3, 10, 11, 12, 13});
  ConstTensor s0 = i64({1}, {0}), eEnd = i64({1}, {kMaxI64});
  ConstTensor axLast = i64({1}, {-1}), step2 = i64({1}, {2});
  auto cols = eval(Node("Slice"), 13, {&m, &s0, &eEnd, &axLast, &step2});
  EXPECT_EQ(cols[0].shape, (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(cols[0]), (Shape{0, 2, 10, 12}));

  // Opset 9 takes starts/ends/axes as attributes.
  auto v9 = eval(
      Node("Slice").ints("starts", {1}).ints("ends", {-1}).ints("axes", {1}), 9,
      {&m});
  EXPECT_EQ(values<int64_t>(v9[0]), (Shape{1, 2, 11, 12}));

  ConstTensor zero = i64({1}, {0});
  EXPECT_NE(
      evalError(Node("Slice"), 13, {&x, &s0, &eEnd, &ax, &zero}).find("zero"),
      std::string::npos);
}

TEST(ConstantEvaluator, Cast) {
  ConstTensor f = f32({4}, {1.7f, -1.7f, 0.0f, 3e9f});
  auto ints = eval(Node("Cast").i("to", TP::INT32), 13, {&f});
  EXPECT_EQ(ints[0].onnxType, TP::INT32);
  EXPECT_EQ(values<int32_t>(ints[0]),
            (std::vector<int32_t>{1, -1, 0, int32_t(int64_t(3e9))}));

  ConstTensor i = i64({3}, {0, 5, -1});
  auto b = eval(Node("Cast").i("to", TP::BOOL), 13, {&i});
  EXPECT_EQ(values<uint8_t>(b[0]), (std::vector<uint8_t>{0, 1, 1}));

  ConstTensor big = i64({2}, {300, -1});
  auto u8 = eval(Node("Cast").i("to", TP::UINT8), 13, {&big});
  EXPECT_EQ(values<uint8_t>(u8[0]), (std::vector<uint8_t>{44, 255}));

  // float16: exact values, overflow to inf, a subnormal, round trip.
  ConstTensor h = f32({4}, {1.0f, -2.5f, 70000.0f, 5.9604645e-8f});
  auto half = eval(Node("Cast").i("to", TP::FLOAT16), 13, {&h});
  EXPECT_EQ(values<uint16_t>(half[0]),
            (std::vector<uint16_t>{0x3c00, 0xc100, 0x7c00, 0x0001}));
  auto back = eval(Node("Cast").i("to", TP::FLOAT), 13, {&half[0]});
  auto fb = values<float>(back[0]);
  EXPECT_EQ(fb[0], 1.0f);
  EXPECT_EQ(fb[1], -2.5f);
  EXPECT_TRUE(std::isinf(fb[2]));
  EXPECT_EQ(fb[3], 5.9604645e-8f);

  auto d = eval(Node("Cast").i("to", TP::DOUBLE), 13, {&i});
  EXPECT_EQ(values<double>(d[0]), (std::vector<double>{0, 5, -1}));

  EXPECT_NE(evalError(Node("Cast").i("to", TP::STRING), 13, {&i})
                .find("cannot cast to"),
            std::string::npos);
}

TEST(ConstantEvaluator, WhereBroadcasts) {
  ConstTensor cond = boolean({2, 1}, {1, 0});
  ConstTensor x = f32({3}, {1, 2, 3});
  ConstTensor y = f32({}, {-1});
  auto out = eval(Node("Where"), 16, {&cond, &x, &y});
  EXPECT_EQ(out[0].shape, (Shape{2, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3, -1, -1, -1}));

  ConstTensor notBool = f32({2, 1}, {1, 0});
  EXPECT_FALSE(evalError(Node("Where"), 16, {&notBool, &x, &y}).empty());
}

TEST(ConstantEvaluator, Range) {
  ConstTensor s = i64({}, {10}), l = i64({}, {1}), d = i64({}, {-3});
  EXPECT_EQ(values<int64_t>(eval(Node("Range"), 11, {&s, &l, &d})[0]),
            (Shape{10, 7, 4}));
  ConstTensor s0 = i64({}, {0}), l5 = i64({}, {5}), d1 = i64({}, {1});
  EXPECT_EQ(values<int64_t>(eval(Node("Range"), 11, {&s0, &l5, &d1})[0]),
            (Shape{0, 1, 2, 3, 4}));
  // Empty when delta points away from limit.
  auto empty = eval(Node("Range"), 11, {&s0, &l5, &d});
  EXPECT_EQ(empty[0].shape, Shape{0});

  ConstTensor fs = f32({}, {1}), fl = f32({}, {2}), fd = f32({}, {0.25f});
  EXPECT_EQ(values<float>(eval(Node("Range"), 11, {&fs, &fl, &fd})[0]),
            (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));

  ConstTensor d0 = i64({}, {0});
  EXPECT_FALSE(evalError(Node("Range"), 11, {&s0, &l5, &d0}).empty());
  // A range longer than the folding limit is refused, not allocated.
  ConstTensor hugeLimit = i64({}, {kMaxI64});
  EXPECT_NE(evalError(Node("Range"), 11, {&s0, &hugeLimit, &d1})
                .find("constant-folding limit"),
            std::string::npos);
}

TEST(ConstantEvaluator, Expand) {
  ConstTensor x = i64({3, 1}, {1, 2, 3});
  ConstTensor shape = i64({3}, {2, 1, 4});
  auto out = eval(Node("Expand"), 13, {&x, &shape});
  EXPECT_EQ(out[0].shape, (Shape{2, 3, 4}));
  auto v = values<int64_t>(out[0]);
  ASSERT_EQ(v.size(), 24u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[4], 2);
  EXPECT_EQ(v[23], 3);

  // Expand is bidirectional: [3, 1] with [2] is fine ([3, 2]); [2, 1] is not.
  ConstTensor two = i64({1}, {2});
  EXPECT_EQ(eval(Node("Expand"), 13, {&x, &two})[0].shape, (Shape{3, 2}));
  ConstTensor bad = i64({2}, {2, 1});
  EXPECT_NE(evalError(Node("Expand"), 13, {&x, &bad}).find("broadcastable"),
            std::string::npos);
}

TEST(ConstantEvaluator, SplitByOpset) {
  ConstTensor x = i64({7}, {0, 1, 2, 3, 4, 5, 6});

  // Opset 11: sizes in the attribute.
  auto a = eval(Node("Split", 2).ints("split", {3, 4}), 11, {&x});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(values<int64_t>(a[0]), (Shape{0, 1, 2}));
  EXPECT_EQ(values<int64_t>(a[1]), (Shape{3, 4, 5, 6}));

  // Opset 13: sizes in the input.
  ConstTensor sizes = i64({3}, {1, 1, 5});
  auto b = eval(Node("Split", 3), 13, {&x, &sizes});
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[2].shape, Shape{5});

  // Opset 18: num_outputs, last chunk smaller (ceil(7/3) = 3 -> 3, 3, 1).
  auto c = eval(Node("Split", 3).i("num_outputs", 3), 18, {&x});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(values<int64_t>(c[2]), Shape{6});
  EXPECT_EQ(c[1].shape, Shape{3});

  // No sizes: equal parts across the outputs, which must divide evenly.
  ConstTensor m = i64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto d = eval(Node("Split", 2).i("axis", -1), 13, {&m});
  EXPECT_EQ(values<int64_t>(d[1]), (Shape{2, 3, 6, 7}));
  EXPECT_NE(evalError(Node("Split", 2), 13, {&x}).find("evenly"),
            std::string::npos);

  ConstTensor wrong = i64({2}, {3, 3});
  EXPECT_NE(evalError(Node("Split", 2), 13, {&x, &wrong}).find("add up"),
            std::string::npos);
}

TEST(ConstantEvaluator, GatherChecksIndices) {
  ConstTensor data = i64({2, 3}, {0, 1, 2, 10, 11, 12});
  ConstTensor idx = i64({2}, {2, -3});
  auto cols = eval(Node("Gather").i("axis", 1), 13, {&data, &idx});
  EXPECT_EQ(cols[0].shape, (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(cols[0]), (Shape{2, 0, 12, 10}));

  ConstTensor bad = i64({1}, {3});
  std::string error = evalError(Node("Gather").i("axis", 1), 13, {&data, &bad});
  EXPECT_NE(error.find("index 3 is out of range for axis 1 of size 3"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("Gather 'Gather_0'"), std::string::npos) << error;

  EXPECT_NE(evalError(Node("Gather").i("axis", 2), 13, {&data, &idx})
                .find("axis 2 is out of range"),
            std::string::npos);
}

TEST(ConstantEvaluator, IntegerDivAndMod) {
  ConstTensor a = i64({4}, {7, -7, 7, -7}), b = i64({4}, {2, 2, -2, -2});
  // ONNX integer Div truncates toward zero.
  EXPECT_EQ(values<int64_t>(eval(Node("Div"), 14, {&a, &b})[0]),
            (Shape{3, -3, -3, 3}));
  ConstTensor three = i64({}, {3});
  EXPECT_EQ(values<int64_t>(eval(Node("Mod"), 13, {&a, &three})[0]),
            (Shape{1, 2, 1, 2}));
  auto fmod = eval(Node("Mod").i("fmod", 1), 13, {&a, &three});
  EXPECT_EQ(values<int64_t>(fmod[0]), (Shape{1, -1, 1, -1}));
  ConstTensor zero = i64({}, {0});
  EXPECT_NE(evalError(Node("Div"), 14, {&a, &zero}).find("division by zero"),
            std::string::npos);
  ConstTensor f = f32({1}, {1});
  EXPECT_FALSE(evalError(Node("Mod"), 13, {&f, &f}).empty());
}

TEST(ConstantEvaluator, ArithmeticAndMasks) {
  ConstTensor a = i64({2, 1}, {1, 2}), b = i64({3}, {10, 20, 30});
  EXPECT_EQ(values<int64_t>(eval(Node("Add"), 14, {&a, &b})[0]),
            (Shape{11, 21, 31, 12, 22, 32}));
  EXPECT_EQ(values<int64_t>(eval(Node("Sub"), 14, {&a, &b})[0]),
            (Shape{-9, -19, -29, -8, -18, -28}));
  ConstTensor f = f32({2}, {1.5f, -2}), g = f32({}, {2});
  EXPECT_EQ(values<float>(eval(Node("Mul"), 14, {&f, &g})[0]),
            (std::vector<float>{3, -4}));
  EXPECT_EQ(values<float>(eval(Node("Div"), 14, {&f, &g})[0]),
            (std::vector<float>{0.75f, -1}));
  EXPECT_EQ(values<float>(eval(Node("Neg"), 13, {&f})[0]),
            (std::vector<float>{-1.5f, 2}));
  EXPECT_EQ(values<float>(eval(Node("Abs"), 13, {&f})[0]),
            (std::vector<float>{1.5f, 2}));
  EXPECT_EQ(values<float>(eval(Node("Floor"), 13, {&f})[0]),
            (std::vector<float>{1, -2}));
  EXPECT_EQ(values<float>(eval(Node("Ceil"), 13, {&f})[0]),
            (std::vector<float>{2, -2}));
  ConstTensor four = f32({}, {4});
  EXPECT_EQ(values<float>(eval(Node("Sqrt"), 13, {&four})[0]),
            (std::vector<float>{2}));
  EXPECT_FALSE(evalError(Node("Sqrt"), 13, {&a}).empty());

  ConstTensor x = i64({3}, {1, 5, 3}), y = i64({}, {3});
  auto eq = eval(Node("Equal"), 13, {&x, &y});
  EXPECT_EQ(eq[0].onnxType, TP::BOOL);
  EXPECT_EQ(values<uint8_t>(eq[0]), (std::vector<uint8_t>{0, 0, 1}));
  auto lt = eval(Node("Less"), 13, {&x, &y});
  EXPECT_EQ(values<uint8_t>(lt[0]), (std::vector<uint8_t>{1, 0, 0}));
  auto ge = eval(Node("GreaterOrEqual"), 16, {&x, &y});
  EXPECT_EQ(values<uint8_t>(ge[0]), (std::vector<uint8_t>{0, 1, 1}));
  auto notLt = eval(Node("Not"), 1, {&lt[0]});
  EXPECT_EQ(values<uint8_t>(notLt[0]), (std::vector<uint8_t>{0, 1, 1}));
  auto both = eval(Node("And"), 7, {&notLt[0], &eq[0]});
  EXPECT_EQ(values<uint8_t>(both[0]), (std::vector<uint8_t>{0, 0, 1}));
  auto either = eval(Node("Or"), 7, {&lt[0], &eq[0]});
  EXPECT_EQ(values<uint8_t>(either[0]), (std::vector<uint8_t>{1, 0, 1}));

  ConstTensor z = i64({3}, {2, 2, 2});
  EXPECT_EQ(values<int64_t>(eval(Node("Max"), 13, {&x, &y, &z})[0]),
            (Shape{3, 5, 3}));
  EXPECT_EQ(values<int64_t>(eval(Node("Min"), 13, {&x, &y, &z})[0]),
            (Shape{1, 2, 2}));

  ConstTensor i32 = tensor<int32_t>(TP::INT32, {1}, {1});
  EXPECT_NE(evalError(Node("Add"), 14, {&x, &i32}).find("different dtypes"),
            std::string::npos);
}

TEST(ConstantEvaluator, ReshapeZeroAndAllowZero) {
  ConstTensor x = i64({2, 3, 4}, std::vector<int64_t>(24, 1));
  ConstTensor s = i64({2}, {0, -1});
  EXPECT_EQ(eval(Node("Reshape"), 13, {&x, &s})[0].shape, (Shape{2, 12}));
  ConstTensor zeroShape = i64({2}, {0, 4});
  ConstTensor empty = i64({0, 4}, {});
  // allowzero=1: 0 is a literal zero-size dim.
  EXPECT_EQ(eval(Node("Reshape").i("allowzero", 1), 14, {&empty, &zeroShape})[0]
                .shape,
            (Shape{0, 4}));
  ConstTensor bad = i64({2}, {5, -1});
  EXPECT_NE(evalError(Node("Reshape"), 13, {&x, &bad}).find("cannot infer"),
            std::string::npos);
  ConstTensor two = i64({2}, {-1, -1});
  EXPECT_FALSE(evalError(Node("Reshape"), 13, {&x, &two}).empty());
}

TEST(ConstantEvaluator, ViewsAndMovement) {
  ConstTensor m = i64({2, 3}, {0, 1, 2, 3, 4, 5});
  auto t = eval(Node("Transpose"), 13, {&m});
  EXPECT_EQ(t[0].shape, (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(t[0]), (Shape{0, 3, 1, 4, 2, 5}));

  ConstTensor reps = i64({2}, {2, 1});
  auto tiled = eval(Node("Tile"), 13, {&m, &reps});
  EXPECT_EQ(tiled[0].shape, (Shape{4, 3}));
  EXPECT_EQ(values<int64_t>(tiled[0]),
            (Shape{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  ConstTensor reps2 = i64({2}, {1, 2});
  EXPECT_EQ(values<int64_t>(eval(Node("Tile"), 13, {&m, &reps2})[0]),
            (Shape{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));

  ConstTensor c = i64({1, 2, 1, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(eval(Node("Flatten").i("axis", 2), 13, {&c})[0].shape,
            (Shape{2, 3}));
  EXPECT_EQ(eval(Node("Flatten").i("axis", -1), 13, {&c})[0].shape,
            (Shape{2, 3}));
  EXPECT_EQ(eval(Node("Squeeze"), 13, {&c})[0].shape, (Shape{2, 3}));
  ConstTensor axes = i64({1}, {-2});
  EXPECT_EQ(eval(Node("Squeeze"), 13, {&c, &axes})[0].shape, (Shape{1, 2, 3}));
  EXPECT_EQ(eval(Node("Squeeze").ints("axes", {0}), 11, {&c})[0].shape,
            (Shape{2, 1, 3}));
  ConstTensor axis1 = i64({1}, {1});
  EXPECT_NE(evalError(Node("Squeeze"), 13, {&c, &axis1}).find("cannot squeeze"),
            std::string::npos);

  auto size = eval(Node("Size"), 13, {&c});
  EXPECT_EQ(size[0].shape, Shape{});
  EXPECT_EQ(values<int64_t>(size[0]), Shape{6});
  EXPECT_EQ(values<int64_t>(eval(Node("Identity"), 13, {&m})[0]),
            values<int64_t>(m));
}

TEST(ConstantEvaluator, Reductions) {
  ConstTensor m = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  // ReduceSum: axes attribute before 13, input from 13.
  auto s11 =
      eval(Node("ReduceSum").ints("axes", {1}).i("keepdims", 0), 11, {&m});
  EXPECT_EQ(s11[0].shape, Shape{2});
  EXPECT_EQ(values<int64_t>(s11[0]), (Shape{6, 15}));
  ConstTensor axis0 = i64({1}, {0});
  auto s13 = eval(Node("ReduceSum"), 13, {&m, &axis0});
  EXPECT_EQ(s13[0].shape, (Shape{1, 3}));
  EXPECT_EQ(values<int64_t>(s13[0]), (Shape{5, 7, 9}));
  auto all = eval(Node("ReduceSum").i("keepdims", 0), 13, {&m});
  EXPECT_EQ(all[0].shape, Shape{});
  EXPECT_EQ(values<int64_t>(all[0]), Shape{21});
  auto noop = eval(Node("ReduceSum").i("noop_with_empty_axes", 1), 13, {&m});
  EXPECT_EQ(noop[0].shape, (Shape{2, 3}));

  // ReduceProd keeps axes as an attribute until opset 18.
  auto p13 = eval(Node("ReduceProd").ints("axes", {-1}), 13, {&m});
  EXPECT_EQ(values<int64_t>(p13[0]), (Shape{6, 120}));
  ConstTensor lastAxis = i64({1}, {-1});
  auto p18 = eval(Node("ReduceProd").i("keepdims", 0), 18, {&m, &lastAxis});
  EXPECT_EQ(values<int64_t>(p18[0]), (Shape{6, 120}));
}

TEST(ConstantEvaluator, ConstantOfShapeAndNonZero) {
  ConstTensor shape = i64({2}, {2, 3});
  auto zeros = eval(Node("ConstantOfShape"), 9, {&shape});
  EXPECT_EQ(zeros[0].onnxType, TP::FLOAT);
  EXPECT_EQ(values<float>(zeros[0]), std::vector<float>(6, 0));

  Node withValue("ConstantOfShape");
  auto *a = withValue.proto.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TP::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(7);
  auto sevens = eval(withValue, 9, {&shape});
  EXPECT_EQ(sevens[0].onnxType, TP::INT64);
  EXPECT_EQ(values<int64_t>(sevens[0]), Shape(6, 7));

  ConstTensor scalarShape = i64({0}, {});
  EXPECT_EQ(eval(Node("ConstantOfShape"), 9, {&scalarShape})[0].shape, Shape{});

  ConstTensor huge = i64({2}, {1 << 13, 1 << 12});
  std::string error = evalError(Node("ConstantOfShape"), 9, {&huge});
  EXPECT_NE(error.find("33554432 elements"), std::string::npos) << error;

  ConstTensor m = i64({2, 3}, {0, 1, 0, 2, 0, 3});
  auto nz = eval(Node("NonZero"), 13, {&m});
  EXPECT_EQ(nz[0].shape, (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(nz[0]), (Shape{0, 1, 1, 1, 0, 2}));
}

TEST(ConstantEvaluator, RejectsMalformedInputs) {
  ConstTensor truncated = i64({4}, {1, 2}); // 2 values for 4 elements
  EXPECT_NE(evalError(Node("Identity"), 13, {&truncated}).find("bytes"),
            std::string::npos);
  EXPECT_FALSE(evalError(Node("Add"), 13, {nullptr, nullptr}).empty());
  Node custom("Add");
  custom.proto.set_domain("com.microsoft");
  ConstTensor x = i64({1}, {1});
  EXPECT_FALSE(evalError(custom, 13, {&x, &x}).empty());
  EXPECT_FALSE(evalError(Node("Conv"), 13, {&x}).empty());
  // A node declaring more outputs than the op computes is refused.
  EXPECT_FALSE(evalError(Node("Identity", 2), 13, {&x}).empty());
}

TEST(ConstantEvaluator, EdgeCases) {
  // Negative step over an empty axis selects nothing.
  ConstTensor empty = i64({0}, {});
  ConstTensor s = i64({1}, {-1}), e = i64({1}, {kMinI64});
  ConstTensor ax = i64({1}, {0}), st = i64({1}, {-1});
  EXPECT_EQ(eval(Node("Slice"), 13, {&empty, &s, &e, &ax, &st})[0].shape,
            Shape{0});

  // Split-18 follows the spec literally: 9 into 4 is 3, 3, 3, 0.
  ConstTensor nine = i64({9}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  auto parts = eval(Node("Split", 4).i("num_outputs", 4), 18, {&nine});
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[3].shape, Shape{0});
  ConstTensor negative = i64({2}, {10, -1});
  EXPECT_NE(evalError(Node("Split", 2), 13, {&nine, &negative})
                .find("negative or exceed"),
            std::string::npos);
  ConstTensor overflow = i64({2}, {kMaxI64, kMaxI64});
  EXPECT_FALSE(evalError(Node("Split", 2), 13, {&nine, &overflow}).empty());

  // Tiling an empty tensor by a huge factor must not overflow the shape.
  ConstTensor emptyRow = i64({0, 1}, {});
  ConstTensor reps = i64({2}, {1, kMaxI64 / 2});
  EXPECT_EQ(eval(Node("Tile"), 13, {&emptyRow, &reps})[0].shape,
            (Shape{0, kMaxI64 / 2}));
  ConstTensor one = i64({1, 4}, {1, 2, 3, 4});
  ConstTensor bigReps = i64({2}, {4096, 4096});
  EXPECT_NE(evalError(Node("Tile"), 13, {&one, &bigReps})
                .find("constant-folding limit"),
            std::string::npos);

  // NonZero: -0.0 is zero, NaN is not; a scalar reads as a 1-element vector.
  ConstTensor f = f32({3}, {-0.0f, NAN, 2});
  EXPECT_EQ(values<int64_t>(eval(Node("NonZero"), 13, {&f})[0]), (Shape{1, 2}));
  ConstTensor scalar = i64({}, {5});
  EXPECT_EQ(eval(Node("NonZero"), 13, {&scalar})[0].shape, (Shape{1, 1}));

  // Unsqueeze rejects repeated axes; Concat rejects rank mismatches.
  ConstTensor v = i64({2}, {1, 2});
  ConstTensor twice = i64({2}, {0, -3});
  EXPECT_NE(evalError(Node("Unsqueeze"), 13, {&v, &twice}).find("repeated"),
            std::string::npos);
  ConstTensor m = i64({1, 2}, {1, 2});
  EXPECT_NE(evalError(Node("Concat").i("axis", 0), 13, {&v, &m})
                .find("cannot concatenate"),
            std::string::npos);
}

} // namespace
