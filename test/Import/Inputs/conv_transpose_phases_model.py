"""Writes DIR/model.onnx, strided transposed convolutions (a decoder's 4x4
stride-2 upsampling with padding, 2x2 stride 2 with a bias,
output_padding, output_shape, a stride of 1 along one dim, 1-D and 3-D,
and kernels that are not a multiple of the stride: 3x3 and 1), which Kiln
computes by output phases, and one with groups, which it does not; with
an input DIR/x*.npy each and onnxruntime's outputs DIR/y*.npy, for
test/Import/conv-transpose.test."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(5)
cases = [
    # name, input shape, weight shape, attributes, bias
    ("k4s2p1", [1, 6, 5, 7], [6, 4, 4, 4], dict(strides=[2, 2], pads=[1, 1, 1, 1]), True),
    ("k2s2", [2, 3, 4, 4], [3, 5, 2, 2], dict(strides=[2, 2]), True),
    ("outpad", [1, 4, 3, 5], [4, 3, 4, 4], dict(strides=[2, 2], pads=[1, 2, 1, 0], output_padding=[1, 1]), False),
    ("shape", [1, 4, 3, 3], [4, 2, 4, 2], dict(strides=[2, 1], output_shape=[7, 4]), True),
    ("k4s2_1d", [1, 3, 10], [3, 2, 4], dict(strides=[2], pads=[1, 1]), True),
    ("k2s2_3d", [1, 2, 3, 2, 4], [2, 3, 2, 2, 2], dict(strides=[2, 2, 2]), False),
    ("k3s2p1", [1, 4, 5, 5], [4, 3, 3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]), True),
    ("k1s2_1d", [1, 2, 4], [2, 3, 1], dict(strides=[2]), False),
    ("groups", [1, 4, 4, 4], [4, 2, 4, 4], dict(strides=[2, 2], pads=[1, 1, 1, 1], group=2), True),
]
nodes, inputs, outputs, initializers, feeds = [], [], [], [], {}
for name, xs, ws, attrs, bias in cases:
    names = ["x_" + name, "w_" + name]
    initializers.append(numpy_helper.from_array(
        rng.standard_normal(ws).astype(np.float32), "w_" + name))
    if bias:
        filters = ws[1] * attrs.get("group", 1)
        initializers.append(numpy_helper.from_array(
            rng.standard_normal(filters).astype(np.float32), "b_" + name))
        names.append("b_" + name)
    nodes.append(helper.make_node("ConvTranspose", names, ["y_" + name],
                                  kernel_shape=ws[2:], **attrs))
    inputs.append(helper.make_tensor_value_info("x_" + name, TensorProto.FLOAT, xs))
    outputs.append(helper.make_tensor_value_info("y_" + name, TensorProto.FLOAT, None))
    feeds["x_" + name] = rng.standard_normal(xs).astype(np.float32)
graph = helper.make_graph(nodes, "conv_transpose_phases", inputs, outputs,
                          initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(folder, "model.onnx")
onnx.save(model, path)
results = ort.InferenceSession(path).run(None, feeds)
for (name, *_), result in zip(cases, results):
    np.save(os.path.join(folder, "x_" + name + ".npy"), feeds["x_" + name])
    np.save(os.path.join(folder, "y_" + name + ".npy"), result)
