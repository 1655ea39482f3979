//===- FuzzOnnxGraph.cpp - libFuzzer target: hostile ONNX graphs ----------===//
//
// A graph fuzzer: the fuzzer's bytes build a valid protobuf ONNX model of a
// few nodes, each an op the importer registers, with its inputs drawn from
// graph inputs, earlier outputs, missing optional inputs and small constant
// initializers of hostile values (negative, huge, NaN, empty), and its
// attributes from libonnx's schema for the op with hostile values (and now
// and then a wrong type). The model is imported as the tools import it
// (ImportCheck.h says what must hold), so the op handlers, shape inference
// and constant folding meet what the byte-level importer fuzzer rarely
// reaches: well-formed graphs that lie.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Import/OpRegistry.h"
#include "ImportCheck.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <limits>

namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

int64_t hostileInt(FuzzedDataProvider &in) {
  static const int64_t kEdges[] = {
      std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
      int64_t(1) << 40, -(int64_t(1) << 31), 65536};
  if (in.ConsumeIntegralInRange(0, 7) == 0)
    return kEdges[in.ConsumeIntegralInRange<size_t>(0, 4)];
  return in.ConsumeIntegralInRange<int64_t>(-3, 8);
}

float hostileFloat(FuzzedDataProvider &in) {
  static const float kValues[] = {0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  2.0f,
                                  1e-30f,
                                  1e30f,
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity()};
  return kValues[in.ConsumeIntegralInRange<size_t>(0, 9)];
}

int32_t hostileDtype(FuzzedDataProvider &in) {
  static const int32_t kTypes[] = {
      TensorProto::FLOAT,  TensorProto::FLOAT,   TensorProto::INT64,
      TensorProto::INT64,  TensorProto::INT32,   TensorProto::BOOL,
      TensorProto::UINT8,  TensorProto::INT8,    TensorProto::FLOAT16,
      TensorProto::DOUBLE, TensorProto::BFLOAT16};
  // Strings (which Kiln refuses) rarely: they end the whole import.
  if (in.ConsumeIntegralInRange(0, 63) == 0)
    return TensorProto::STRING;
  return kTypes[in.ConsumeIntegralInRange<size_t>(0, 10)];
}

/// A small shape (at most 4 dims, 0 to 7 each): sizes ops must handle,
/// empty tensors included.
std::vector<int64_t> smallShape(FuzzedDataProvider &in) {
  std::vector<int64_t> shape(in.ConsumeIntegralInRange<size_t>(0, 4));
  for (int64_t &dim : shape)
    dim = in.ConsumeIntegralInRange<int64_t>(0, 7);
  return shape;
}

/// A constant of hostile values, at most 64 elements.
TensorProto hostileTensor(FuzzedDataProvider &in, const std::string &name) {
  TensorProto t;
  t.set_name(name);
  int32_t dtype = hostileDtype(in);
  t.set_data_type(dtype);
  std::vector<int64_t> shape = smallShape(in);
  int64_t elements = 1;
  for (int64_t dim : shape) {
    t.add_dims(dim);
    elements *= dim;
  }
  if (elements > 64) {
    t.clear_dims();
    t.add_dims(elements = in.ConsumeIntegralInRange<int64_t>(0, 8));
  }
  for (int64_t i = 0; i < elements; ++i) {
    switch (dtype) {
    case TensorProto::FLOAT:
      t.add_float_data(hostileFloat(in));
      break;
    case TensorProto::DOUBLE:
      t.add_double_data(hostileFloat(in));
      break;
    case TensorProto::INT64:
      t.add_int64_data(hostileInt(in));
      break;
    case TensorProto::STRING:
      t.add_string_data(in.ConsumeRandomLengthString(4));
      break;
    default: // INT32 and narrower types are stored widened to int32
      t.add_int32_data(int32_t(hostileInt(in)));
      break;
    }
  }
  return t;
}

void setHostileAttribute(FuzzedDataProvider &in, AttributeProto &a,
                         AttributeProto::AttributeType type) {
  static const char *kStrings[] = {
      "",       "NOTSET",   "SAME_UPPER",        "VALID",
      "linear", "nearest",  "constant",          "edge",
      "ij,jk",  "...,k->k", "tf_crop_and_resize"};
  // Now and then a type the schema does not give the attribute.
  if (in.ConsumeIntegralInRange(0, 15) == 0)
    type = AttributeProto::AttributeType(in.ConsumeIntegralInRange(1, 7));
  a.set_type(type);
  switch (type) {
  case AttributeProto::FLOAT:
    a.set_f(hostileFloat(in));
    break;
  case AttributeProto::INT:
    a.set_i(hostileInt(in));
    break;
  case AttributeProto::STRING:
    a.set_s(kStrings[in.ConsumeIntegralInRange<size_t>(0, 10)]);
    break;
  case AttributeProto::TENSOR:
    *a.mutable_t() = hostileTensor(in, "");
    break;
  case AttributeProto::GRAPH:
    a.mutable_g()->set_name("empty");
    break;
  case AttributeProto::FLOATS:
    for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 4); n > 0; --n)
      a.add_floats(hostileFloat(in));
    break;
  case AttributeProto::INTS:
    for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 6); n > 0; --n)
      a.add_ints(hostileInt(in));
    break;
  default:
    a.set_type(AttributeProto::STRINGS);
    a.add_strings(kStrings[in.ConsumeIntegralInRange<size_t>(0, 10)]);
    break;
  }
}

class GraphBuilder {
public:
  explicit GraphBuilder(FuzzedDataProvider &in) : in(in) {}

  onnx::ModelProto build() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    onnx::GraphProto &graph = *model.mutable_graph();
    graph.set_name("fuzzed");
    for (size_t n = in.ConsumeIntegralInRange<size_t>(1, 2); n > 0; --n)
      addGraphInput(graph);
    // Mostly the opsets exporters write today, where most handlers apply.
    int64_t opset = in.ConsumeIntegralInRange<int64_t>(
        in.ConsumeBool() ? 13 : 7, kiln::onnx_import::kMaxOpset);
    const auto &ops = kiln::onnx_import::opRegistry().all();
    std::set<std::string> domains = {""};
    for (size_t n = in.ConsumeIntegralInRange<size_t>(1, 5); n > 0; --n) {
      const kiln::onnx_import::OpHandler &op =
          ops[in.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
      domains.insert(op.domain);
      addNode(graph, op, op.domain.empty() ? opset : op.maxOpset);
    }
    for (const std::string &domain : domains) {
      onnx::OperatorSetIdProto &id = *model.add_opset_import();
      id.set_domain(domain);
      id.set_version(domain.empty() ? opset : 3);
    }
    // The last value, and now and then another.
    graph.add_output()->set_name(values.back());
    if (values.size() > 1 && in.ConsumeBool())
      graph.add_output()->set_name(
          values[in.ConsumeIntegralInRange<size_t>(0, values.size() - 2)]);
    return model;
  }

private:
  void addGraphInput(onnx::GraphProto &graph) {
    onnx::ValueInfoProto &input = *graph.add_input();
    input.set_name("in" + std::to_string(values.size()));
    auto &tensor = *input.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(hostileDtype(in));
    auto &shape = *tensor.mutable_shape();
    for (int64_t dim : smallShape(in))
      shape.add_dim()->set_dim_value(dim);
    values.push_back(input.name());
  }

  /// An input of a node: an existing value, a missing input (rarely where
  /// the schema requires one), or a new constant initializer.
  std::string pickInput(onnx::GraphProto &graph, bool required) {
    switch (in.ConsumeIntegralInRange(0, 5)) {
    case 0:
      if (!required || in.ConsumeIntegralInRange(0, 7) == 0)
        return "";
      [[fallthrough]];
    case 1:
    case 2: {
      std::string name = "c" + std::to_string(constants++);
      *graph.add_initializer() = hostileTensor(in, name);
      return name;
    }
    default:
      return values[in.ConsumeIntegralInRange<size_t>(0, values.size() - 1)];
    }
  }

  void addNode(onnx::GraphProto &graph, const kiln::onnx_import::OpHandler &op,
               int64_t opset) {
    onnx::NodeProto &node = *graph.add_node();
    node.set_op_type(op.opType);
    node.set_domain(op.domain);
    node.set_name("n" + std::to_string(graph.node_size()));
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        op.opType, int(opset),
        op.domain.empty() ? onnx::ONNX_DOMAIN : op.domain);
    int minInputs = schema ? schema->min_input() : 1;
    int maxInputs = schema ? std::min(schema->max_input(), 6) : 4;
    int inputs =
        in.ConsumeIntegralInRange(minInputs, std::max(minInputs, maxInputs));
    for (int i = 0; i < inputs; ++i)
      node.add_input(pickInput(graph, i < minInputs));
    int outputs = schema ? std::max(1, schema->min_output()) : 1;
    if (schema && schema->max_output() > outputs && in.ConsumeBool())
      ++outputs;
    for (int i = 0; i < outputs; ++i) {
      std::string name = "v" + std::to_string(values.size());
      node.add_output(name);
      values.push_back(name);
      // A declared shape, now and then: a shape-like graph input may then
      // be read at run time, its values derived from it.
      if (in.ConsumeIntegralInRange(0, 3) == 0) {
        onnx::ValueInfoProto &info = *graph.add_value_info();
        info.set_name(name);
        auto &shape =
            *info.mutable_type()->mutable_tensor_type()->mutable_shape();
        for (int64_t dim : smallShape(in))
          shape.add_dim()->set_dim_value(dim);
      }
    }
    if (!schema)
      return;
    for (const auto &[name, attribute] : schema->attributes())
      if (in.ConsumeIntegralInRange(0, 9) < (attribute.required ? 9 : 4)) {
        AttributeProto &a = *node.add_attribute();
        a.set_name(name);
        setHostileAttribute(in, a, attribute.type);
      }
  }

  FuzzedDataProvider &in;
  std::vector<std::string> values;
  int constants = 0;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::string bytes = GraphBuilder(in).build().SerializeAsString();
  kiln_fuzz::importAndCheck(reinterpret_cast<const uint8_t *>(bytes.data()),
                            bytes.size());
  return 0;
}
