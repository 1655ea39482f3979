"""Writes DIR/model.onnx, three ConvIntegers of dynamically quantized
activations as onnxruntime's quantize_dynamic writes them (uint8 weights
with a zero point; DynamicQuantizeLinear's zero point known only at run
time), with an input DIR/x.npy and the outputs DIR/y1.npy, DIR/y2.npy and
DIR/y3.npy, for test/Tools/int8-conv-integer.test:

  y1 = ConvInteger(q(x), w1)      3x3, padded, 18 -> 256 filters on 12 x 12,
                                  one weight zero point (97): int32 sums
                                  whose partial sums stay below 2^24
  h  = relu(float(y1) * scale)
  y2 = ConvInteger(q(h), w2)      3x3, stride 2, 256 -> 32 filters, 6 x 6,
                                  a zero point per filter: partial sums
                                  past 2^24 (the importer sums in float64)
  y3 = ConvInteger(q(h), w3)      1x1, 256 -> 40 filters on 12 x 12, a zero
                                  point per filter (AMX tiles where the CPU
                                  has them: two blocks of 16 filters, 8
                                  more on vectors)

y1, y2 and y3 are the int32 results themselves: they must match exactly.
onnxruntime's ConvInteger takes one weight zero point only: y2's and y3's
references are computed here in int64 from onnxruntime's quantized inputs
to them."""
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from model_files import write_arrays, write_model

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(29)
size = 12
initializers, nodes = [], []


def constant(name, value):
    initializers.append(numpy_helper.from_array(value, name))
    return name


def node(op, inputs, outputs, **attributes):
    nodes.append(helper.make_node(op, inputs, outputs, **attributes))
    return outputs[0]


def conv_integer(value, name, c, f, zero, stride=1, size=3):
    q, s, z = (name + "_xq", name + "_xs", name + "_xz")
    node("DynamicQuantizeLinear", [value], [q, s, z])
    w = rng.integers(0, 256, (f, c, size, size)).astype(np.uint8)
    flat = w.reshape(f, -1)
    flat[:, 0], flat[:, 1] = 0, 255  # each filter spans all of uint8
    pad = size // 2
    return node("ConvInteger",
                [q, constant(name + "_w", w), z, constant(name + "_wz", zero)],
                [name], kernel_shape=[size, size], strides=[stride, stride],
                pads=[pad] * 4)


y1 = conv_integer("x", "y1", 18, 256, np.uint8(97))
scaled = node("Mul", [node("Cast", [y1], ["y1_f"], to=TensorProto.FLOAT),
                      constant("y1_scale", np.float32(1e-5))], ["y1_scaled"])
h = node("Relu", [scaled], ["h"])
y2 = conv_integer(h, "y2", 256, 32,
                  rng.integers(90, 160, 32).astype(np.uint8), stride=2)
y3 = conv_integer(h, "y3", 256, 40,
                  rng.integers(90, 160, 40).astype(np.uint8), size=1)
graph = helper.make_graph(
    nodes, "conv_integers",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 18, size, size])],
    [helper.make_tensor_value_info("y1", TensorProto.INT32, [1, 256, size, size]),
     helper.make_tensor_value_info("y2", TensorProto.INT32, [1, 32, 6, 6]),
     helper.make_tensor_value_info("y3", TensorProto.INT32, [1, 40, size, size])],
    initializers)
write_model(folder, graph)
x_value = rng.uniform(-2, 2, (1, 18, size, size)).astype(np.float32)
# onnxruntime runs the graph up to y2's and y3's quantized inputs.
quantized = ["y2_xq", "y2_xz", "y3_xq", "y3_xz"]
reference = helper.make_model(
    helper.make_graph(
        [n for n in nodes if n.op_type != "ConvInteger" or n.output[0] == "y1"],
        "conv_integer_inputs", graph.input,
        [graph.output[0]] +
        [helper.make_tensor_value_info(name, TensorProto.UINT8, None)
         for name in quantized],
        initializers),
    opset_imports=[helper.make_opsetid("", 13)])
reference.ir_version = 8
options = ort.SessionOptions()
options.log_severity_level = 3  # y2's and y3's weights are left unused
session = ort.InferenceSession(reference.SerializeToString(), options,
                               providers=["CPUExecutionProvider"])
y1_value, xq2, xz2, xq3, xz3 = session.run(None, {"x": x_value})
weights = {t.name: numpy_helper.to_array(t).astype(np.int64)
           for t in initializers}


def centered(name, f):
    w, wz = weights[name + "_w"], weights[name + "_wz"]
    return (w - wz.reshape(f, 1, 1, 1)).reshape(f, w.shape[1], -1)


xp = np.pad(xq2.astype(np.int64) - np.int64(xz2), [(0, 0), (0, 0), (1, 1), (1, 1)])
windows = np.stack([xp[:, :, i:i + 11:2, j:j + 11:2]
                    for i in range(3) for j in range(3)], axis=-1)
y2_value = np.einsum("ncyxt,fct->nfyx", windows,
                     centered("y2", 32)).astype(np.int32)
x3 = xq3.astype(np.int64) - np.int64(xz3)
y3_value = np.einsum("ncyx,fc->nfyx", x3,
                     centered("y3", 40)[:, :, 0]).astype(np.int32)
write_arrays(folder, [("x", x_value), ("y1", y1_value), ("y2", y2_value),
                      ("y3", y3_value)])
