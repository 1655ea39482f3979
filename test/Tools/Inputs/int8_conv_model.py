"""Writes DIR/model.onnx, seven convolutions of a QDQ model on x [1, 18, 19,
19], with an input DIR/x.npy and onnxruntime's outputs DIR/y1.npy,
DIR/y2.npy and DIR/y3.npy, for test/Tools/int8-conv-dot-products.test. Activations are
quantized to uint8 and dequantized (QuantizeLinear, DequantizeLinear), the
weights are int8 dequantized with one scale per filter, as onnxruntime's
quantize_static writes them:

  h  = relu(conv3x3(x) + b)        18 channels (not a multiple of 4), 36
                                   filters (not a multiple of the register
                                   tile's 4), padded rows of 19 outputs
  y1 = conv1x1(h)                  36 -> 128 filters
  g  = conv3x3(h, stride 2)        36 -> 64 filters, 10 x 10
  r  = conv1x1(g)                  64 -> 128 filters
  y2 = conv1x1(g) + r              64 -> 128 filters (weights larger than
                                   g: each workgroup takes filters over
                                   the whole image, its rows as one), the
                                   residual read as r's bytes
  p  = relu(conv3x3(g, stride 2))  64 -> 32 filters, 5 x 5
  y3 = conv3x3(p)                  32 -> 80 filters, 5 x 5 (rows of 5:
                                   both as matmuls of patches)

each result quantized again; y1, y2 and y3 dequantized."""
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from model_files import write_arrays, write_model

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(13)
size = 19
array = numpy_helper.from_array
initializers, nodes = [], []


def constant(name, value):
    initializers.append(array(value, name))
    return name


def node(op, inputs, output, **attributes):
    nodes.append(helper.make_node(op, inputs, [output], **attributes))
    return output


def qdq(value, name, scale, zero):
    s = constant(name + "_s", np.float32(scale))
    z = constant(name + "_z", np.uint8(zero))
    q = node("QuantizeLinear", [value, s, z], name + "_q")
    return node("DequantizeLinear", [q, s, z], name + "_dq")


def conv(value, name, c, f, k, stride=1):
    w = rng.integers(-127, 128, (f, c, k, k)).astype(np.int8)
    w[:, 0, 0, 0] = 127  # each filter's largest magnitude, as symmetric scales give
    scales = rng.uniform(0.001, 0.004, f).astype(np.float32)
    dq = node("DequantizeLinear",
              [constant(name + "_w", w), constant(name + "_ws", scales),
               constant(name + "_wz", np.zeros(f, np.int8))], name + "_wd",
              axis=0)
    b = constant(name + "_b", rng.uniform(-0.5, 0.5, f).astype(np.float32))
    return node("Conv", [value, dq, b], name, kernel_shape=[k, k],
                strides=[stride, stride], pads=[k // 2] * 4)


x = qdq("x", "x", 0.02, 120)
h = qdq(node("Relu", [conv(x, "c1", 18, 36, 3)], "h"), "h", 0.05, 0)
y1 = qdq(conv(h, "c2", 36, 128, 1), "y1", 0.05, 128)
g = qdq(conv(h, "c3", 36, 64, 3, stride=2), "g", 0.05, 128)
r = qdq(conv(g, "c5", 64, 128, 1), "r", 0.05, 128)
y2 = qdq(node("Add", [conv(g, "c4", 64, 128, 1), r], "sum"), "y2", 0.05, 128)
p = qdq(node("Relu", [conv(g, "c6", 64, 32, 3, stride=2)], "p"), "p", 0.05, 0)
y3 = qdq(conv(p, "c7", 32, 80, 3), "y3", 0.05, 128)
graph = helper.make_graph(
    nodes + [helper.make_node("Identity", [y1], ["y1"]),
             helper.make_node("Identity", [y2], ["y2"]),
             helper.make_node("Identity", [y3], ["y3"])], "int8_convs",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 18, size, size])],
    [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 128, size, size]),
     helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 128, 10, 10]),
     helper.make_tensor_value_info("y3", TensorProto.FLOAT, [1, 80, 5, 5])],
    initializers)
model = write_model(folder, graph)
x_value = rng.uniform(-2, 2, (1, 18, size, size)).astype(np.float32)
session = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"])
write_arrays(folder, [("x", x_value)] +
             list(zip(("y1", "y2", "y3"), session.run(None, {"x": x_value}))))
