"""Writes DIR/model.onnx, a bidirectional com.microsoft DynamicQuantizeLSTM
(int8 W and R, per-column scales for W, per-direction ones for R, a bias)
over 4 steps of a batch of 2, with an input DIR/x.npy and onnxruntime's
outputs DIR/y.npy, DIR/y_h.npy and DIR/y_c.npy, for
test/Import/quantize.test. Usage: DIR [HIDDEN] (5 by default)."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(3)
steps, batch, inputs, directions = 4, 2, 3, 2
hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 5
rows = 4 * hidden
array = numpy_helper.from_array
initializers = [
    array(rng.integers(-127, 128, (directions, inputs, rows)).astype(np.int8),
          "W"),
    array(rng.integers(-127, 128, (directions, hidden, rows)).astype(np.int8),
          "R"),
    array(rng.standard_normal((directions, 2 * rows)).astype(np.float32), "B"),
    array(rng.uniform(0.005, 0.02, (directions, rows)).astype(np.float32),
          "W_scale"),
    array(np.zeros((directions, rows), np.int8), "W_zero_point"),
    array(np.array([0.01, 0.015], np.float32), "R_scale"),
    array(np.zeros(directions, np.int8), "R_zero_point")]
if hidden > 5:
    # onnxruntime's packed kernels for larger layers read R's scales and
    # zero points per column.
    initializers[-2:] = [
        array(rng.uniform(0.005, 0.02, (directions, rows)).astype(np.float32),
              "R_scale"),
        array(np.zeros((directions, rows), np.int8), "R_zero_point")]
node = helper.make_node(
    "DynamicQuantizeLSTM",
    ["x", "W", "R", "B", "", "", "", "", "W_scale", "W_zero_point", "R_scale",
     "R_zero_point"], ["y", "y_h", "y_c"], "lstm", domain="com.microsoft",
    hidden_size=hidden, direction="bidirectional")
graph = helper.make_graph(
    [node], "dynamic_quantize_lstm",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                   [steps, batch, inputs])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                   [steps, directions, batch, hidden]),
     helper.make_tensor_value_info("y_h", TensorProto.FLOAT,
                                   [directions, batch, hidden]),
     helper.make_tensor_value_info("y_c", TensorProto.FLOAT,
                                   [directions, batch, hidden])],
    initializers)
model = helper.make_model(graph, opset_imports=[
    helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 8
path = os.path.join(folder, "model.onnx")
onnx.save(model, path)
x = rng.standard_normal((steps, batch, inputs)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
for name, value in zip(("y", "y_h", "y_c"),
                       ort.InferenceSession(path).run(None, {"x": x})):
    np.save(os.path.join(folder, name + ".npy"), value)
