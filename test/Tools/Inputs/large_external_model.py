"""Writes DIR/model.onnx, a Gather from a 2200 MiB float32 weight kept in
external data (DIR/weights.bin, a sparse file of zeros that takes no disk
space, but for 7.5 at its last element and 3.25 at element 2^29 + 5, past
2 GiB), for test/Tools/large-weights.test."""
import os
import struct
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
    [helper.make_node("Gather", ["w", "i"], ["y"], "read", axis=0)], "large",
    [helper.make_tensor_value_info("i", TensorProto.INT64, [3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(folder, "model.onnx"))
with open(os.path.join(folder, "weights.bin"), "wb") as f:
    f.truncate(count * 4)
    for index, value in ((count - 1, 7.5), ((1 << 29) + 5, 3.25)):
        f.seek(index * 4)
        f.write(struct.pack("<f", value))
