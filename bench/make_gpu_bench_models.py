#!/usr/bin/env python3
"""Makes the ONNX models of the GPU micro-benchmarks (scripts/gpu-check).

Each model is one fused pattern at a size that moves hundreds of megabytes or
does billions of multiply-adds, so that the GPU's bandwidth or tensor rate
decides its time. Weights are initializers (a splat-weight artifact leaves
the large ones out); activations are graph inputs.

  bench/make_gpu_bench_models.py OUT_DIR

writes OUT_DIR/<name>.onnx and OUT_DIR/bench-models.json, which records for
each model its kind (bandwidth or flops), the minimum bytes it must move and
its FLOPs, and the PyTorch expression gpu-check times beside it.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, COLS = 8192, 4096  # 128 MiB of float32 per activation


def tensor_input(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def weight(name, shape, dtype=np.float32):
    rng = np.random.default_rng(0)
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.02).astype(dtype), name)


def save(out_dir, name, nodes, inputs, outputs, initializers, opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="kiln-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    f32 = 4
    act = ROWS * COLS * f32
    shape = [ROWS, COLS]
    specs = {}

    # bias + GELU (erf form, as PyTorch exports it at opset 17).
    save(out_dir, "bias_gelu", [
        helper.make_node("Add", ["x", "b"], ["y"]),
        helper.make_node("Mul", ["y", "inv_sqrt2"], ["t"]),
        helper.make_node("Erf", ["t"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["y", "e1"], ["p"]),
        helper.make_node("Mul", ["p", "half"], ["out"]),
    ], [tensor_input("x", shape)], [tensor_input("out", shape)], [
        weight("b", [COLS]),
        numpy_helper.from_array(np.array(1 / np.sqrt(2), np.float32), "inv_sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ])
    specs["bias_gelu"] = dict(kind="bandwidth", bytes=2 * act + COLS * f32,
                              torch="gelu(x + b)", shape=shape)

    save(out_dir, "layernorm", [
        helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["out"],
                         axis=-1, epsilon=1e-5),
    ], [tensor_input("x", shape)], [tensor_input("out", shape)],
        [weight("scale", [COLS]), weight("bias", [COLS])])
    specs["layernorm"] = dict(kind="bandwidth", bytes=2 * act + 2 * COLS * f32,
                              torch="layer_norm(x)", shape=shape)

    save(out_dir, "softmax", [
        helper.make_node("Softmax", ["x"], ["out"], axis=-1),
    ], [tensor_input("x", shape)], [tensor_input("out", shape)], [])
    specs["softmax"] = dict(kind="bandwidth", bytes=2 * act,
                            torch="softmax(x, -1)", shape=shape)

    save(out_dir, "residual_chain", [
        helper.make_node("Add", ["a", "b"], ["ab"]),
        helper.make_node("Add", ["ab", "c"], ["abc"]),
        helper.make_node("Add", ["abc", "d"], ["out"]),
    ], [tensor_input(n, shape) for n in "abcd"], [tensor_input("out", shape)], [])
    specs["residual_chain"] = dict(kind="bandwidth", bytes=5 * act,
                                   torch="a + b + c + d", shape=shape)

    def matmul(name, m, k, n, dtype, np_dtype, width, bias):
        nodes = [helper.make_node("MatMul", ["x", "w"], ["mm" if bias else "out"])]
        inits = [weight("w", [k, n], np_dtype)]
        if bias:
            nodes.append(helper.make_node("Add", ["mm", "b"], ["out"]))
            inits.append(weight("b", [n], np_dtype))
        save(out_dir, name, nodes, [tensor_input("x", [m, k], dtype)],
             [tensor_input("out", [m, n], dtype)], inits)
        specs[name] = dict(kind="flops", flops=2 * m * k * n,
                           bytes=(m * k + k * n + m * n) * width,
                           torch="x @ w" + (" + b" if bias else ""),
                           m=m, k=k, n=n,
                           dtype="float16" if width == 2 else "float32")

    matmul("matmul_f32_4096", 4096, 4096, 4096, TensorProto.FLOAT, np.float32, 4, False)
    matmul("matmul_f16_4096", 4096, 4096, 4096, TensorProto.FLOAT16, np.float16, 2, False)
    # The BERT-base encoder's MatMuls at batch 32, sequence 128.
    matmul("bert_qkv_f32", 4096, 768, 768, TensorProto.FLOAT, np.float32, 4, True)
    matmul("bert_ffn1_f32", 4096, 768, 3072, TensorProto.FLOAT, np.float32, 4, True)
    matmul("bert_ffn2_f32", 4096, 3072, 768, TensorProto.FLOAT, np.float32, 4, True)

    with open(os.path.join(out_dir, "bench-models.json"), "w") as f:
        json.dump(specs, f, indent=1)


if __name__ == "__main__":
    main()
