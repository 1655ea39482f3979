"""Writes DIR/model.onnx, an Add with a 2200 MiB float32 weight kept in
external data (DIR/weights.bin, a sparse file of zeros that takes no disk
space), for test/Tools/artifact-size-limit.test."""
import os
import sys

import onnx
from onnx import TensorProto, helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
count = (2200 << 20) // 4
w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[count],
                data_location=TensorProto.EXTERNAL)
for key, value in (("location", "weights.bin"), ("offset", "0"),
                   ("length", str(count * 4))):
    w.external_data.add(key=key, value=value)
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"], "add")], "large",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [count])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(folder, "model.onnx"))
with open(os.path.join(folder, "weights.bin"), "wb") as f:
    f.truncate(count * 4)
