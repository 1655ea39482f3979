#!/usr/bin/env python3
"""Writes a BERT-base-sized encoder (hidden 768, 12 heads, FFN 3072, random
weights) and its int8 versions, quantized with onnxruntime's own tools, as
corpus folders for bench/corpus.py:

    .venv/bin/python bench/make_int8_encoder.py [OUT_DIR] [--layers L]
    .venv/bin/python bench/corpus.py --threads 2 OUT_DIR

OUT_DIR (default build/int8-encoder) gets float/, dynamic/ (quantize_dynamic:
DynamicQuantizeLinear and MatMulInteger, int8 weights), qdq/
(quantize_static in QDQ format, uint8 activations calibrated on random
inputs, int8 weights with one scale per tensor), matmul_4bits/
(MatMul4BitsQuantizer: com.microsoft MatMulNBits, 4-bit weights in blocks
of 32 with zero points) and matmul_4bits_qdq/ (the same as opset 21's
int4 DequantizeLinear before each MatMul), each with model.onnx and test_data_set_0 (one
sequence of --tokens tokens' embeddings, [1, 128, 768] by default, and
onnxruntime's output). The layers are BertLayer's: Q, K, V and output
projections, softmax attention, GELU feed-forward, LayerNorm after each
residual add.
"""
import argparse
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_dynamic,
                                      quantize_static)
from onnxruntime.quantization.matmul_4bits_quantizer import \
    MatMul4BitsQuantizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIDDEN, HEADS, FFN = 768, 12, 3072


def encoder(layers, seq, rng):
    nodes, inits = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(value, name))
        return name

    def weight(name, shape):
        return const(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def linear(x, name, k, n):
        y = node("MatMul", [x, weight(name + ".w", (k, n))], name + ".mm")
        return node("Add", [y, weight(name + ".b", (n,))], name)

    def layer_norm(x, name):
        return node("LayerNormalization",
                    [x, const(name + ".g", np.ones(HIDDEN, np.float32)),
                     const(name + ".b", np.zeros(HIDDEN, np.float32))],
                    name, axis=-1, epsilon=1e-12)

    heads = const("heads_shape", np.array([1, seq, HEADS, HIDDEN // HEADS],
                                          np.int64))
    flat = const("flat_shape", np.array([1, seq, HIDDEN], np.int64))
    scale = const("scale", np.float32(1 / np.sqrt(HIDDEN // HEADS)))
    half = const("half", np.float32(0.5))
    one = const("one", np.float32(1.0))
    sqrt2 = const("sqrt2", np.float32(np.sqrt(2.0)))
    x = "x"
    for i in range(layers):
        p = "l%d" % i

        def split(name, perm):
            r = node("Reshape", [linear(x, p + name, HIDDEN, HIDDEN), heads],
                     p + name + ".r")
            return node("Transpose", [r], p + name + ".t", perm=perm)

        q = split(".q", [0, 2, 1, 3])
        k = split(".k", [0, 2, 3, 1])
        v = split(".v", [0, 2, 1, 3])
        s = node("Mul", [node("MatMul", [q, k], p + ".qk"), scale], p + ".s")
        a = node("Softmax", [s], p + ".p", axis=-1)
        c = node("MatMul", [a, v], p + ".ctx")
        c = node("Transpose", [c], p + ".ct", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, flat], p + ".cr")
        o = linear(c, p + ".o", HIDDEN, HIDDEN)
        x1 = layer_norm(node("Add", [x, o], p + ".res1"), p + ".ln1")
        h = linear(x1, p + ".ffn1", HIDDEN, FFN)
        e = node("Erf", [node("Div", [h, sqrt2], p + ".hs")], p + ".erf")
        g = node("Mul", [node("Mul", [h, half], p + ".hh"),
                         node("Add", [e, one], p + ".e1")], p + ".gelu")
        y = linear(g, p + ".ffn2", FFN, HIDDEN)
        x = layer_norm(node("Add", [x1, y], p + ".res2"), p + ".ln2")
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(
        nodes, "int8_encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, HIDDEN])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


class RandomInputs(CalibrationDataReader):
    """`count` standard normal inputs x of `shape`, for calibration."""

    def __init__(self, rng, shape, count=4):
        self.inputs = iter([{"x": rng.standard_normal(shape)
                             .astype(np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self.inputs, None)


def write_folder(folder, model_path, x):
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    for name, value, file in (("x", x, "input_0.pb"), ("y", y, "output_0.pb")):
        with open(os.path.join(data, file), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?",
                        default=os.path.join(ROOT, "build", "int8-encoder"))
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=128,
                        help="the sequence length (1: a decoder step's "
                        "matmuls, bound by loading the weights)")
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    seq = args.tokens
    model = encoder(args.layers, seq, rng)
    x = rng.standard_normal((1, seq, HIDDEN)).astype(np.float32)
    paths = {name: os.path.join(args.out, name, "model.onnx")
             for name in ("float", "dynamic", "qdq", "matmul_4bits",
                          "matmul_4bits_qdq")}
    for path in paths.values():
        os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, paths["float"])
    quantize_dynamic(paths["float"], paths["dynamic"],
                     weight_type=QuantType.QInt8)
    quantize_static(paths["float"], paths["qdq"],
                    RandomInputs(rng, (1, seq, HIDDEN)),
                    quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    for name, form in (("matmul_4bits", QuantFormat.QOperator),
                       ("matmul_4bits_qdq", QuantFormat.QDQ)):
        quantizer = MatMul4BitsQuantizer(onnx.load(paths["float"]),
                                         block_size=32, is_symmetric=False,
                                         quant_format=form)
        quantizer.process()
        quantizer.model.save_model_to_file(paths[name])
    for name, path in paths.items():
        write_folder(os.path.dirname(path), path, x)
        print(os.path.dirname(path))


if __name__ == "__main__":
    main()
