"""Writes DIR/model.onnx, two int8 matmuls of x [2, 5, 256] by 256 x 88
weights, with an input DIR/x.npy and onnxruntime's outputs DIR/dynamic.npy
and DIR/qdq.npy, for test/Tools/int8-dot-products.test: `dynamic` as
onnxruntime's quantize_dynamic writes a MatMul (DynamicQuantizeLinear,
MatMulInteger, the int32 sums cast to float and scaled), `qdq` as
quantize_static does (x quantized to uint8 and dequantized, int8 weights
with one scale per column dequantized, a float MatMul)."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(11)
k, n = 256, 88  # N past a multiple of 16: the last panel padded
array = numpy_helper.from_array
weights = rng.integers(-127, 128, (k, n)).astype(np.int8)
weights[0] = 127  # each column's largest magnitude, as symmetric scales give
initializers = [
    array(weights, "w"),
    array(np.float32(0.003), "w_scale"),
    array(rng.uniform(0.001, 0.01, n).astype(np.float32), "w_scales"),
    array(np.zeros(n, np.int8), "w_zeros"),
    array(np.float32(0.02), "x_scale"),
    array(np.uint8(120), "x_zero")]
nodes = [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
    helper.make_node("MatMulInteger", ["xq", "w", "xz"], ["sums"]),
    helper.make_node("Cast", ["sums"], ["sumsf"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["xs", "w_scale"], ["scale"]),
    helper.make_node("Mul", ["sumsf", "scale"], ["dynamic"]),
    helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["q"]),
    helper.make_node("DequantizeLinear", ["q", "x_scale", "x_zero"], ["dq"]),
    helper.make_node("DequantizeLinear", ["w", "w_scales", "w_zeros"], ["wd"],
                     axis=1),
    helper.make_node("MatMul", ["dq", "wd"], ["qdq"])]
graph = helper.make_graph(
    nodes, "int8_matmuls",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, k])],
    [helper.make_tensor_value_info("dynamic", TensorProto.FLOAT, [2, 5, n]),
     helper.make_tensor_value_info("qdq", TensorProto.FLOAT, [2, 5, n])],
    initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, os.path.join(folder, "model.onnx"))
x = rng.uniform(-2, 2, (2, 5, k)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
session = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"])
dynamic, qdq = session.run(None, {"x": x})
np.save(os.path.join(folder, "dynamic.npy"), dynamic)
np.save(os.path.join(folder, "qdq.npy"), qdq)
