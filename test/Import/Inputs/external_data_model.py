"""Writes a model whose weights are ONNX external data, for
test/Import/external-data.test:

    external_data_model.py DIR [VARIANT]

DIR/model.onnx keeps its weights in DIR/weights.bin; DIR/x.npy is an input
and DIR/y.npy what onnxruntime computes from it. A VARIANT breaks the
external data as a hostile or damaged model would: `absolute` and `parent`
point outside the folder, `symlink` makes weights.bin a link out of it,
`beyond` claims bytes past the file's end, `length` a length that is not
the tensor's, `missing` names a file that is not there.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
variant = sys.argv[2] if len(sys.argv) > 2 else ""
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(7)
w = rng.standard_normal((8, 4)).astype(np.float32)
b = rng.standard_normal((4,)).astype(np.float32)
scale = rng.standard_normal((1, 4)).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["xw"], "matmul"),
     helper.make_node("Add", ["xw", "b"], ["xwb"], "bias"),
     # A Constant node's value may be external data too.
     helper.make_node("Constant", [], ["scale"], "scale_constant",
                      value=numpy_helper.from_array(scale, "scale_value")),
     helper.make_node("Mul", ["xwb", "scale"], ["y"], "scale")],
    "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(folder, "model.onnx")
onnx.save(model, path, save_as_external_data=True,
          all_tensors_to_one_file=True, location="weights.bin",
          size_threshold=0, convert_attribute=True)

x = rng.standard_normal((2, 8)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
[y] = ort.InferenceSession(path).run(None, {"x": x})
np.save(os.path.join(folder, "y.npy"), y)

if variant:
    model = onnx.load(path, load_external_data=False)
    w_entry = {e.key: e for e in model.graph.initializer[0].external_data}
    if variant == "absolute":
        w_entry["location"].value = "/etc/hostname"
    elif variant == "parent":
        w_entry["location"].value = "../weights.bin"
    elif variant == "symlink":
        outside = os.path.join(os.path.dirname(os.path.abspath(folder)),
                               os.path.basename(folder) + "-outside.bin")
        os.replace(os.path.join(folder, "weights.bin"), outside)
        os.symlink(outside, os.path.join(folder, "weights.bin"))
    elif variant == "beyond":
        w_entry["offset"].value = "1000000"
    elif variant == "length":
        w_entry["length"].value = "12"
    elif variant == "missing":
        w_entry["location"].value = "no_such_weights.bin"
    else:
        sys.exit(f"unknown variant {variant}")
    onnx.save(model, path)
