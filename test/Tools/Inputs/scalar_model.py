"""Writes a model whose kernels compute 0-d (scalar) tensors: the sum of
relu(x) over every axis, then that sum times 2. For testing that
scripts/kiln-bisect compares scalar results.

    scalar_model.py OUT.onnx
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("Relu", ["x"], ["r"], name="relu"),
    helper.make_node("ReduceSum", ["r"], ["s"], name="sum", keepdims=0),
    helper.make_node("Mul", ["s", "two"], ["y"], name="double"),
]
graph = helper.make_graph(
    nodes, "scalar",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
    [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
