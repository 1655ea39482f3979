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

TEST(ConstantEvaluator, KnowsItsOps) {
  for (const char *op : {"Shape", "Size", "NonZero"})
    EXPECT_TRUE(canEvaluateConstant(op)) << op;
  // What kiln ops compute is computed by their folders instead.
  for (const char *op : {"Gather", "Range", "ConstantOfShape", "Add", "Conv"})
    EXPECT_FALSE(canEvaluateConstant(op)) << op;
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

TEST(ConstantEvaluator, NonZero) {
  ConstTensor m = i64({2, 3}, {0, 1, 0, 2, 0, 3});
  auto nz = eval(Node("NonZero"), 13, {&m});
  EXPECT_EQ(nz[0].shape, (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(nz[0]), (Shape{0, 1, 1, 1, 0, 2}));
}

TEST(ConstantEvaluator, RejectsMalformedInputs) {
  ConstTensor truncated = i64({4}, {1, 2}); // 2 values for 4 elements
  EXPECT_NE(evalError(Node("NonZero"), 13, {&truncated}).find("bytes"),
            std::string::npos);
  EXPECT_FALSE(
      evalError(Node("Range"), 13, {nullptr, nullptr, nullptr}).empty());
  Node custom("Range");
  custom.proto.set_domain("com.microsoft");
  ConstTensor x = i64({}, {1});
  EXPECT_FALSE(evalError(custom, 13, {&x, &x, &x}).empty());
  EXPECT_FALSE(evalError(Node("Conv"), 13, {&x}).empty());
  // A node declaring more outputs than the op computes is refused.
  EXPECT_FALSE(evalError(Node("NonZero", 2), 13, {&x}).empty());
}

TEST(ConstantEvaluator, NonZeroEdgeCases) {
  // -0.0 is zero, NaN is not; a scalar reads as a 1-element vector.
  ConstTensor f = f32({3}, {-0.0f, NAN, 2});
  EXPECT_EQ(values<int64_t>(eval(Node("NonZero"), 13, {&f})[0]), (Shape{1, 2}));
  ConstTensor scalar = i64({}, {5});
  EXPECT_EQ(eval(Node("NonZero"), 13, {&scalar})[0].shape, (Shape{1, 1}));
}

} // namespace
