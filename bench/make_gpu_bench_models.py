#!/usr/bin/env python3
"""Makes the ONNX models of the GPU micro-benchmarks (scripts/gpu-check).

Each model is one fused pattern at a size that moves hundreds of megabytes or
does billions of multiply-adds, so that the GPU's bandwidth or tensor rate
decides its time. Weights are initializers (a splat-weight artifact leaves
the large ones out); activations are graph inputs.

  bench/make_gpu_bench_models.py OUT_DIR
  bench/make_gpu_bench_models.py --tests OUT_DIR

The first writes OUT_DIR/<name>.onnx and OUT_DIR/bench-models.json, which
records for each model its kind (bandwidth or flops), the minimum bytes it
must move and its FLOPs, and the PyTorch expression gpu-check times beside it.

The second writes the same patterns at test size (rows long enough for the
GPU's warp-per-row code), with random inputs and onnxruntime's outputs, in
the ONNX backend-test layout: OUT_DIR/test_gpu_<name>/{model.onnx,
test_data_set_0/}. gpu-check runs them as the suite "gpu-patterns".
"""
import argparse
import json
import os

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
    model.ir_version = 8 if opset <= 17 else 9
    # Output shapes come from shape inference, which also checks the model.
    model = onnx.shape_inference.infer_shapes(model, check_type=True,
                                              strict_mode=True)
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def make_pattern_tests(out_dir):
    import onnxruntime as ort

    rng = np.random.default_rng(1)
    os.makedirs(out_dir, exist_ok=True)

    def test(name, nodes, inputs, outputs, initializers=(), opset=17,
             out_type=TensorProto.FLOAT, in_type=TensorProto.FLOAT):
        folder = os.path.join(out_dir, "test_gpu_" + name)
        os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
        save(folder, "model", nodes,
             [tensor_input(n, list(shape), in_type) for n, shape in inputs],
             [helper.make_tensor_value_info(n, out_type, None) for n in outputs],
             list(initializers), opset)
        np_type = np.float16 if in_type == TensorProto.FLOAT16 else np.float32
        feeds = {n: rng.standard_normal(shape).astype(np_type)
                 for n, shape in inputs}
        session = ort.InferenceSession(os.path.join(folder, "model.onnx"),
                                       providers=["CPUExecutionProvider"])
        results = session.run(outputs, feeds)
        for k, (n, _) in enumerate(inputs):
            onnx.save_tensor(numpy_helper.from_array(feeds[n], n), os.path.join(
                folder, "test_data_set_0", f"input_{k}.pb"))
        for k, (n, value) in enumerate(zip(outputs, results)):
            onnx.save_tensor(numpy_helper.from_array(value, n), os.path.join(
                folder, "test_data_set_0", f"output_{k}.pb"))

    x = [("x", (64, 1000))]
    test("softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], x, ["y"])
    test("log_softmax", [helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1)], x, ["y"])
    test("layernorm", [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"],
                                        axis=-1, epsilon=1e-5)],
         [("x", (2, 50, 768))], ["y"], [weight("s", [768]), weight("b", [768])])
    test("reduce_mean_keepdims",
         [helper.make_node("ReduceMean", ["x"], ["y"], axes=[-1], keepdims=1)], x, ["y"])
    test("reduce_sum_square", [helper.make_node("ReduceSumSquare", ["x"], ["y"],
                                                axes=[-1], keepdims=0)], x, ["y"])
    test("reduce_max", [helper.make_node("ReduceMax", ["x"], ["y"], axes=[-1],
                                         keepdims=0)], x, ["y"])
    test("reduce_min_axis0", [helper.make_node("ReduceMin", ["x"], ["y"], axes=[0],
                                               keepdims=1)], x, ["y"])
    test("argmax", [helper.make_node("ArgMax", ["x"], ["y"], axis=-1)], x, ["y"],
         out_type=TensorProto.INT64)
    test("attention_scores", [
        helper.make_node("MatMul", ["q", "k"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["t"]),
        helper.make_node("Add", ["t", "mask"], ["u"]),
        helper.make_node("Softmax", ["u"], ["y"], axis=-1),
    ], [("q", (2, 4, 40, 16)), ("k", (2, 4, 16, 40)), ("mask", (2, 1, 1, 40))], ["y"],
        [numpy_helper.from_array(np.array(0.25, np.float32), "scale")])
    test("bias_gelu", [
        helper.make_node("Add", ["x", "b"], ["h"]),
        helper.make_node("Gelu", ["h"], ["y"]),
    ], x, ["y"], [weight("b", [1000])], opset=20)
    # float16 matmuls: 16x16 output tiles on tensor cores (mma.sync) or
    # MFMA; the epilogue runs on each lane's accumulator fragment.
    f16 = dict(in_type=TensorProto.FLOAT16, out_type=TensorProto.FLOAT16)
    test("matmul_f16_bias_relu", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
    ], [("x", (64, 256))], ["y"],
        [weight("w", [256, 128], np.float16), weight("b", [128], np.float16)], **f16)
    test("matmul_f16_batched", [helper.make_node("MatMul", ["a", "b"], ["y"])],
         [("a", (3, 32, 64)), ("b", (3, 64, 48))], ["y"], **f16)
    test("gemm_f16_transb", [
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5),
    ], [("x", (32, 80))], ["y"],
        [weight("w", [48, 80], np.float16), weight("c", [48], np.float16)], **f16)
    test("conv_f16_relu", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
    ], [("x", (1, 16, 32, 32))], ["y"],
        [weight("w", [32, 16, 3, 3], np.float16), weight("b", [32], np.float16)], **f16)
    test("matmul_bias", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["y"]),
    ], x, ["y"], [weight("w", [1000, 200]), weight("b", [200])])
    # Outputs large enough that the matrix blocks grow (kiln-tile-and-
    # distribute keeps at least 264 blocks): operands staged through shared
    # memory. 1024 x 1152 makes 288 blocks of 64x64 (four warps of 32x32,
    # two stages of 32 along K); the transposed weight (staged along K) at
    # 512 x 1024 makes 512 one-warp blocks of 32x32; the convolution's 264
    # output rows of 32 columns x 32 filters make 264 one-warp blocks
    # (stages of 16 channels, the 3x3 window around them). After the older
    # tests, whose random data stays as it was.
    test("matmul_f16_staged", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
    ], [("x", (1024, 64))], ["y"],
        [weight("w", [64, 1152], np.float16), weight("b", [1152], np.float16)], **f16)
    test("gemm_f16_transb_staged", [
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1),
    ], [("x", (512, 64))], ["y"],
        [weight("w", [1024, 64], np.float16), weight("c", [1024], np.float16)], **f16)
    test("conv_f16_staged", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        helper.make_node("Relu", ["c"], ["y"]),
    ], [("x", (1, 16, 266, 34))], ["y"],
        [weight("w", [32, 16, 3, 3], np.float16), weight("b", [32], np.float16)], **f16)
    # float32 contractions in thread-tile blocks (kiln-contract-with-thread-
    # tiles): a stride-2 3x3 convolution onto 28-pixel rows (blocks of 14
    # pixels x 32 filters, 56 threads of 2x4; 24 channels in stages of 8)
    # and a Gemm with alpha and a transposed weight (32 threads of 4x4; K =
    # 72 in stages of 8).
    test("conv_f32_stride2_blocks", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["y"]),
    ], [("x", (1, 24, 56, 56))], ["y"], [weight("w", [32, 24, 3, 3]), weight("b", [32])])
    test("gemm_f32_transb_blocks", [
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5),
    ], [("x", (256, 72))], ["y"], [weight("w", [128, 72]), weight("c", [128])])
    # A block of 64 rows, which sm_90a computes with warpgroup matrix
    # instructions (wgmma m64nNk16; scripts/test.sh emulates them at
    # f16@sm_90a, as it does matmul_f16_staged's): a 1x1 convolution over
    # a 96x96 image, 288 blocks of 64 pixels x 64 filters whose A (the
    # NCHW input) is contiguous along the pixels (M-major: wgmma's
    # transposed A).
    test("conv1x1_f16_warpgroups", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        helper.make_node("Relu", ["c"], ["y"]),
    ], [("x", (1, 64, 96, 96))], ["y"],
        [weight("w", [128, 64, 1, 1], np.float16), weight("b", [128], np.float16)], **f16)


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", action="store_true",
                        help="write the patterns at test size with references")
    parser.add_argument("out_dir", help="folder to write into (created)")
    return parser.parse_args()


def main():
    args = parse_args()
    if args.tests:
        make_pattern_tests(args.out_dir)
        return
    out_dir = args.out_dir
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
    # The same in float16 (tensor cores: mma.sync).
    matmul("bert_qkv_f16", 4096, 768, 768, TensorProto.FLOAT16, np.float16, 2, True)
    matmul("bert_ffn1_f16", 4096, 768, 3072, TensorProto.FLOAT16, np.float16, 2, True)
    matmul("bert_ffn2_f16", 4096, 3072, 768, TensorProto.FLOAT16, np.float16, 2, True)

    with open(os.path.join(out_dir, "bench-models.json"), "w") as f:
        json.dump(specs, f, indent=1)


if __name__ == "__main__":
    main()
