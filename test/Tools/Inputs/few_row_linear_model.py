"""Writes DIR/model.onnx, two linear layers of a batch of 2 x 4 tokens
(x [2, 4, 256] by constant weights 256 x 512 and 512 x 256, each with a
bias; a GELU between them, a residual add after), large enough for
kiln-pack-matmul-weights, with an input DIR/x.npy and onnxruntime's output
DIR/y.npy, for test/Tools/pack-matmul-weights.test. The second weight holds
integers in int8's range (as a dynamically quantized model's weights minus
their zero point), which kiln-narrow-integer-weights stores as int8."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(7)
e, f = 256, 512
array = numpy_helper.from_array
initializers = [
    array((rng.standard_normal((e, f)) * 0.05).astype(np.float32), "w1"),
    array(rng.standard_normal(f).astype(np.float32), "b1"),
    array(rng.integers(-127, 128, (f, e)).astype(np.float32), "w2"),
    array(rng.standard_normal(e).astype(np.float32), "b2"),
    array(np.float32(0.001), "s2")]
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h"]),
    helper.make_node("Add", ["h", "b1"], ["hb"]),
    helper.make_node("Gelu", ["hb"], ["g"]),
    helper.make_node("MatMul", ["g", "w2"], ["o"]),
    helper.make_node("Mul", ["o", "s2"], ["os"]),
    helper.make_node("Add", ["os", "b2"], ["ob"]),
    helper.make_node("Add", ["ob", "x"], ["y"])]
graph = helper.make_graph(
    nodes, "few_row_linear",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, e])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, e])],
    initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
model.ir_version = 9
path = os.path.join(folder, "model.onnx")
onnx.save(model, path)
x = rng.standard_normal((2, 4, e)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
np.save(os.path.join(folder, "y.npy"),
        ort.InferenceSession(path).run(None, {"x": x})[0])
