"""Writes two models of onnxruntime's com.microsoft quantized ops, each with
inputs DIR/<model>/x*.npy and onnxruntime's outputs DIR/<model>/y*.npy, for
test/Import/quantize.test:

  matmuls/   MatMulIntegerToFloat (uint8 A, int8 B with per-column scales
             and zero points, a bias), DynamicQuantizeMatMul (uint8 B), and
             MatMulNBits (4-bit blocks with packed zero points; 4-bit blocks
             with the default zero point and a bias; 4-bit blocks with
             float zero points; 20 rows of A; K not whole blocks): float32
             outputs.
  qlinear/   QLinearAveragePool (channels first, and channels last) and
             QLinearConcat between QuantizeLinear and DequantizeLinear.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
rng = np.random.default_rng(11)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def pack(values, bits):
    """Rows of `bits`-bit values packed into bytes, low bits first."""
    rows, count = values.shape
    per_byte = 8 // bits
    padded = np.zeros((rows, -(-count // per_byte) * per_byte), np.uint8)
    padded[:, :count] = values
    grouped = padded.reshape(rows, -1, per_byte).astype(np.uint32)
    shifts = np.arange(per_byte, dtype=np.uint32) * bits
    return (grouped << shifts).sum(axis=2).astype(np.uint8)


def nbits(name, k, n, bits, block, zeros):
    """MatMulNBits' B, scales and zero points (None, "packed" or "float")."""
    blocks = -(-k // block)
    q = rng.integers(0, 2**bits, (n, blocks * block)).astype(np.uint8)
    b = pack(q, bits).reshape(n, blocks, block * bits // 8)
    scales = rng.uniform(0.01, 0.05, n * blocks).astype(np.float32)
    inits = [const(name + "_b", b), const(name + "_s", scales)]
    inputs = [name + "_b", name + "_s"]
    if zeros == "packed":
        z = rng.integers(0, 2**bits, (n, blocks)).astype(np.uint8)
        inits.append(const(name + "_z", pack(z, bits).reshape(-1)))
        inputs.append(name + "_z")
    elif zeros == "float":
        z = rng.uniform(0, 2**bits - 1, n * blocks).astype(np.float32)
        inits.append(const(name + "_z", z))
        inputs.append(name + "_z")
    return inits, inputs


def save(folder, name, nodes, inputs, outputs, inits, feeds):
    path = os.path.join(folder, name)
    os.makedirs(path, exist_ok=True)
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    onnx.save(model, os.path.join(path, "model.onnx"))
    for key, value in feeds.items():
        np.save(os.path.join(path, key + ".npy"), value)
    session = ort.InferenceSession(os.path.join(path, "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    for info, value in zip(outputs, session.run(None, feeds)):
        np.save(os.path.join(path, info.name + ".npy"), value)


def matmuls(folder):
    f = TensorProto.FLOAT
    inits = [
        const("s_x", np.float32(0.04)), const("z_x", np.uint8(120)),
        const("w_i8", rng.integers(-128, 128, (32, 16)).astype(np.int8)),
        const("s_w", rng.uniform(0.005, 0.02, 16).astype(np.float32)),
        const("z_w", rng.integers(-3, 4, 16).astype(np.int8)),
        const("bias", rng.uniform(-1, 1, 16).astype(np.float32)),
        const("w_u8", rng.integers(0, 256, (32, 16)).astype(np.uint8)),
        const("s_u8", np.float32(0.01)), const("z_u8", np.uint8(130))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["qx"]),
        helper.make_node("MatMulIntegerToFloat",
                         ["qx", "w_i8", "s_x", "s_w", "z_x", "z_w", "bias"],
                         ["y_integer"], domain=MS),
        helper.make_node("DynamicQuantizeMatMul",
                         ["x", "w_u8", "s_u8", "z_u8"], ["y_dynamic"],
                         domain=MS)]
    for name, bits, block, zeros, bias in [("y_nbits", 4, 16, "packed", False),
                                           ("y_nbits_bias", 4, 32, None, True),
                                           ("y_nbits_float_zeros", 4, 16, "float",
                                            False)]:
        more, names = nbits(name, 64, 24, bits, block, zeros)
        inits += more
        if bias:
            inits.append(const(name + "_bias",
                               rng.uniform(-1, 1, 24).astype(np.float32)))
            names += [""] * (4 - len(names)) + [name + "_bias"]
        nodes.append(helper.make_node("MatMulNBits", ["x2"] + names, [name],
                                      domain=MS, K=64, N=24, bits=bits,
                                      block_size=block))
    # 20 rows of A (more than a register tile's), and K = 40, not whole
    # blocks of 16.
    for name, a, k in [("y_nbits_rows", "x3", 64), ("y_nbits_partial", "x4", 40)]:
        more, names = nbits(name, k, 24, 4, 16, "packed")
        inits += more
        nodes.append(helper.make_node("MatMulNBits", [a] + names, [name],
                                      domain=MS, K=k, N=24, bits=4,
                                      block_size=16))
    outputs = [helper.make_tensor_value_info(n, f, None) for n in
               ["y_integer", "y_dynamic", "y_nbits", "y_nbits_bias",
                "y_nbits_float_zeros", "y_nbits_rows", "y_nbits_partial"]]
    shapes = {"x": [4, 32], "x2": [2, 3, 64], "x3": [20, 64], "x4": [2, 40]}
    feeds = {name: rng.uniform(-2, 2, shape).astype(np.float32)
             for name, shape in shapes.items()}
    save(folder, "matmuls", nodes,
         [helper.make_tensor_value_info(name, f, shape)
          for name, shape in shapes.items()],
         outputs, inits, feeds)


def qlinear(folder):
    f = TensorProto.FLOAT
    inits = [const("s", np.float32(0.05)), const("z", np.uint8(128)),
             const("s_p", np.float32(0.03)), const("z_p", np.uint8(100)),
             const("s_c", np.float32(0.06)), const("z_c", np.uint8(110))]
    pool = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1],
                count_include_pad=0)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["qx"]),
        helper.make_node("QLinearAveragePool", ["qx", "s", "z", "s_p", "z_p"],
                         ["qp"], domain=MS, **pool),
        helper.make_node("QLinearConcat",
                         ["s_c", "z_c", "qx", "s", "z", "qp", "s_p", "z_p"],
                         ["qc"], domain=MS, axis=1),
        helper.make_node("DequantizeLinear", ["qc", "s_c", "z_c"], ["y"]),
        helper.make_node("QuantizeLinear", ["x_nhwc", "s", "z"], ["qn"]),
        helper.make_node("QLinearAveragePool", ["qn", "s", "z", "s_p", "z_p"],
                         ["qpn"], domain=MS, channels_last=1,
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("DequantizeLinear", ["qpn", "s_p", "z_p"],
                         ["y_nhwc"])]
    feeds = {"x": rng.uniform(-6, 6, (1, 4, 8, 8)).astype(np.float32),
             "x_nhwc": rng.uniform(-6, 6, (1, 8, 8, 4)).astype(np.float32)}
    save(folder, "qlinear", nodes,
         [helper.make_tensor_value_info("x", f, [1, 4, 8, 8]),
          helper.make_tensor_value_info("x_nhwc", f, [1, 8, 8, 4])],
         [helper.make_tensor_value_info("y", f, None),
          helper.make_tensor_value_info("y_nhwc", f, None)], inits, feeds)


matmuls(sys.argv[1])
qlinear(sys.argv[1])
