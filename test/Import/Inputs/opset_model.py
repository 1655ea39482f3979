"""Writes one small model at a given default-domain opset, for
test/Import/newer-opsets.test:

    opset_model.py OPSET OUT.onnx [X.npy]

The model uses ops that opsets 22 and 23 re-declared (Conv, Relu is
unchanged, MaxPool, Reshape, Transpose, Cast, Softmax), so that the same
graph can be compiled at 21, 22 and 23 and compared. With X.npy, also
writes an input for it.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

opset, out = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(21)
w = numpy_helper.from_array(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "w")
shape = numpy_helper.from_array(np.array([1, 4, 9], np.int64), "shape")
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], "relu"),
    helper.make_node("MaxPool", ["r"], ["p"], "pool", kernel_shape=[2, 2],
                     strides=[2, 2]),
    helper.make_node("Reshape", ["p", "shape"], ["flat"], "flatten"),
    helper.make_node("Transpose", ["flat"], ["t"], "transpose", perm=[0, 2, 1]),
    helper.make_node("Softmax", ["t"], ["s"], "softmax", axis=-1),
    helper.make_node("Cast", ["s"], ["h"], "to_half", to=TensorProto.FLOAT16),
    helper.make_node("Cast", ["h"], ["y"], "to_float", to=TensorProto.FLOAT),
]
if opset >= 23 and "rms" in out:
    # New at opset 23, and not one Kiln takes.
    scale = numpy_helper.from_array(np.ones(4, np.float32), "scale")
    nodes.append(helper.make_node("RMSNormalization", ["y", "scale"], ["z"],
                                  "rms_norm"))
    outputs = [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 9, 4])]
    initializers = [w, shape, scale]
else:
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 9, 4])]
    initializers = [w, shape]
graph = helper.make_graph(
    nodes, "opsets",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
    outputs, initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
model.ir_version = 10 if opset >= 22 else 8
onnx.save(model, out)
if len(sys.argv) > 3:
    np.save(sys.argv[3], rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
