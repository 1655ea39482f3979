"""Writes DIR/model.onnx, opset 21's blocked and 4-bit quantization, with an
input DIR/x.npy and onnxruntime's outputs DIR/y*.npy, for
test/Import/quantize.test:

  y_int4_weights  int4 weights (int32_data) dequantized per block of 32
                  along K with int4 zero points (raw_data), then a MatMul;
  y_int8_weights  int8 weights dequantized per block of 16 along N, no zero
                  point;
  y_uint4_weights uint4 weights dequantized per column (axis 1) with
                  uint4 zero points, then a MatMul;
  y_uint4         x quantized to uint4 per block of 4 along its rows (uint4
                  zero points) and dequantized back;
  y_int4          x quantized to int4 by output_dtype alone (no zero point)
                  and dequantized back.

The references come from onnxruntime with its graph optimizations off:
optimized, it fuses the int4 DequantizeLinear and the MatMul into its
MatMulNBits kernel, which computes at a lower precision than ONNX's
definition (0.018 off here).
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(21)


def packed_raw(name, dtype, values):
    """A 4-bit tensor in raw_data: two values a byte, the first low."""
    flat = (values.astype(np.int64) & 0xF).astype(np.uint8).flatten()
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    raw = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return helper.make_tensor(name, dtype, values.shape, raw, raw=True)


initializers = [
    helper.make_tensor("w4", TensorProto.INT4, [64, 24],
                       rng.integers(-8, 8, 64 * 24).tolist()),
    numpy_helper.from_array(
        rng.uniform(0.01, 0.05, (2, 24)).astype(np.float32), "w4_scale"),
    packed_raw("w4_zero", TensorProto.INT4, rng.integers(-2, 3, (2, 24))),
    numpy_helper.from_array(
        rng.integers(-128, 128, (64, 48)).astype(np.int8), "w8"),
    numpy_helper.from_array(
        rng.uniform(0.001, 0.01, (64, 3)).astype(np.float32), "w8_scale"),
    numpy_helper.from_array(
        rng.uniform(0.1, 0.3, (3, 16)).astype(np.float32), "x_scale"),
    packed_raw("x_zero", TensorProto.UINT4, np.full((3, 16), 8)),
    numpy_helper.from_array(np.float32(0.3), "x_scale4"),
    packed_raw("u4", TensorProto.UINT4, rng.integers(0, 16, (64, 20))),
    numpy_helper.from_array(
        rng.uniform(0.01, 0.05, 20).astype(np.float32), "u4_scale"),
    packed_raw("u4_zero", TensorProto.UINT4, rng.integers(0, 16, 20))]
nodes = [
    helper.make_node("DequantizeLinear", ["w4", "w4_scale", "w4_zero"],
                     ["w4f"], axis=0, block_size=32),
    helper.make_node("MatMul", ["x", "w4f"], ["y_int4_weights"]),
    helper.make_node("DequantizeLinear", ["w8", "w8_scale"], ["w8f"], axis=1,
                     block_size=16),
    helper.make_node("MatMul", ["x", "w8f"], ["y_int8_weights"]),
    helper.make_node("DequantizeLinear", ["u4", "u4_scale", "u4_zero"],
                     ["u4f"], axis=1),
    helper.make_node("MatMul", ["x", "u4f"], ["y_uint4_weights"]),
    helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["qx"],
                     axis=1, block_size=4),
    helper.make_node("DequantizeLinear", ["qx", "x_scale", "x_zero"],
                     ["y_uint4"], axis=1, block_size=4),
    helper.make_node("QuantizeLinear", ["x", "x_scale4"], ["q4"],
                     output_dtype=TensorProto.INT4),
    helper.make_node("DequantizeLinear", ["q4", "x_scale4"], ["y_int4"])]
outputs = ["y_int4_weights", "y_int8_weights", "y_uint4_weights", "y_uint4",
           "y_int4"]
graph = helper.make_graph(
    nodes, "blocked",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 64])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
     for n in outputs], initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
model.ir_version = 10
path = os.path.join(folder, "model.onnx")
onnx.save(model, path)
x = rng.uniform(-3, 3, (3, 64)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession(path, options,
                               providers=["CPUExecutionProvider"])
for name, value in zip(outputs, session.run(None, {"x": x})):
    np.save(os.path.join(folder, name + ".npy"), value)
