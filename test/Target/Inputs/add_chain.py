"""Writes a chain of N Adds, y = x + x + ... + x, as an ONNX test folder:
DIR/model.onnx and DIR/test_data_set_0 with x and onnxruntime's y.
Usage: add_chain.py N DIR"""
import os
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

count, folder = int(sys.argv[1]), sys.argv[2]
nodes, previous = [], "x"
for i in range(count):
    output = "y" if i == count - 1 else f"sum{i}"
    nodes.append(helper.make_node("Add", [previous, "x"], [output], name=f"add{i}"))
    previous = output
graph = helper.make_graph(
    nodes, "add_chain",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
data = os.path.join(folder, "test_data_set_0")
os.makedirs(data, exist_ok=True)
onnx.save(model, os.path.join(folder, "model.onnx"))
x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
session = onnxruntime.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
(y,) = session.run(None, {"x": x})
for name, array in (("input_0", x), ("output_0", y)):
    tensor = numpy_helper.from_array(array, name="x" if name == "input_0" else "y")
    with open(os.path.join(data, name + ".pb"), "wb") as f:
        f.write(tensor.SerializeToString())
