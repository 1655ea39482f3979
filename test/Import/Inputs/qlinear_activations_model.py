"""Writes DIR/model.onnx, a chain of onnxruntime's com.microsoft quantized
elementwise ops (QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearAdd)
between a QuantizeLinear and a DequantizeLinear, with an input DIR/x.npy
and onnxruntime's output DIR/y.npy, for test/Import/quantize.test."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
scalar = lambda name, value, dtype: numpy_helper.from_array(
    np.array(value, dtype), name)
initializers = [
    scalar("s_x", 0.05, np.float32), scalar("z_x", 128, np.uint8),
    scalar("s_m", 0.08, np.float32), scalar("z_m", 120, np.uint8),
    scalar("s_s", 1 / 255, np.float32), scalar("z_s", 0, np.uint8),
    scalar("s_l", 0.02, np.float32), scalar("z_l", 100, np.uint8),
    scalar("s_a", 0.1, np.float32), scalar("z_a", 110, np.uint8)]
ms = "com.microsoft"
nodes = [
    helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["qx"], "quantize"),
    helper.make_node("QLinearMul", ["qx", "s_x", "z_x", "qx", "s_x", "z_x",
                                    "s_m", "z_m"], ["qm"], "square",
                     domain=ms),
    helper.make_node("QLinearSigmoid", ["qm", "s_m", "z_m", "s_s", "z_s"],
                     ["qs"], "sigmoid", domain=ms),
    helper.make_node("QLinearLeakyRelu", ["qx", "s_x", "z_x", "s_l", "z_l"],
                     ["ql"], "leaky", domain=ms, alpha=0.2),
    helper.make_node("QLinearAdd", ["qs", "s_s", "z_s", "ql", "s_l", "z_l",
                                    "s_a", "z_a"], ["qa"], "add", domain=ms),
    helper.make_node("DequantizeLinear", ["qa", "s_a", "z_a"], ["y"],
                     "dequantize")]
graph = helper.make_graph(
    nodes, "qlinear",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])],
    initializers)
model = helper.make_model(graph, opset_imports=[
    helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
model.ir_version = 8
path = os.path.join(folder, "model.onnx")
onnx.save(model, path)
x = np.random.default_rng(5).uniform(-6, 6, (4, 64)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
[y] = ort.InferenceSession(path).run(None, {"x": x})
np.save(os.path.join(folder, "y.npy"), y)
