#!/usr/bin/env python3
"""Writes ResNet-50 (torchvision's v1.5 layout: Bottleneck x [3, 4, 6, 3],
stride on the 3x3 convolutions, batch norm folded into each convolution's
weights and bias, random weights, 224x224 input) and its int8 versions,
quantized with onnxruntime's own tools, as corpus folders for
bench/corpus.py:

    .venv/bin/python bench/make_int8_resnet50.py [OUT_DIR]
    .venv/bin/python bench/corpus.py --threads 2 OUT_DIR

OUT_DIR (default build/int8-resnet50) gets float/, qdq/ (quantize_static
in QDQ format, uint8 activations calibrated on random images, int8
weights with one scale per tensor), qdq_per_channel/ (one scale per
filter) and dynamic/ (quantize_dynamic: DynamicQuantizeLinear and
ConvInteger with uint8 weights, the only ones onnxruntime's ConvInteger
runs), each with model.onnx and test_data_set_0 (one random image,
[1, 3, 224, 224], and onnxruntime's output). No PyTorch: the graph is
written with onnx.helper.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (QuantFormat, QuantType,
                                      quantize_dynamic, quantize_static)

from make_int8_encoder import RandomInputs, write_folder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZE, CLASSES = 224, 1000


def resnet50(rng):
    nodes, inits = [], []

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def conv(x, name, c, f, k, stride=1, gain=1.0, relu=True):
        # He initialization; `gain` keeps the residual sums' scale bounded.
        std = gain * np.sqrt(2.0 / (c * k * k))
        w = (rng.standard_normal((f, c, k, k)) * std).astype(np.float32)
        b = (rng.standard_normal(f) * 0.01).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name + ".w"))
        inits.append(numpy_helper.from_array(b, name + ".b"))
        y = node("Conv", [x, name + ".w", name + ".b"], name,
                 kernel_shape=[k, k], strides=[stride, stride],
                 pads=[k // 2] * 4)
        return node("Relu", [y], name + ".relu") if relu else y

    x = conv("x", "stem", 3, 64, 7, stride=2)
    x = node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    channels = 64
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3],
                                                [64, 128, 256, 512])):
        for block in range(blocks):
            p = "s%d.b%d" % (stage, block)
            stride = 2 if block == 0 and stage > 0 else 1
            h = conv(x, p + ".c1", channels, width, 1)
            h = conv(h, p + ".c2", width, width, 3, stride=stride)
            h = conv(h, p + ".c3", width, width * 4, 1, gain=0.3, relu=False)
            shortcut = x
            if block == 0:
                shortcut = conv(x, p + ".down", channels, width * 4, 1,
                                stride=stride, relu=False)
            x = node("Relu", [node("Add", [h, shortcut], p + ".add")],
                     p + ".out")
            channels = width * 4
    x = node("GlobalAveragePool", [x], "gap")
    x = node("Flatten", [x], "flat", axis=1)
    w = (rng.standard_normal((CLASSES, channels)) * 0.02).astype(np.float32)
    inits.append(numpy_helper.from_array(w, "fc.w"))
    inits.append(numpy_helper.from_array(np.zeros(CLASSES, np.float32),
                                         "fc.b"))
    nodes.append(helper.make_node("Gemm", [x, "fc.w", "fc.b"], ["y"],
                                  transB=1))
    graph = helper.make_graph(
        nodes, "resnet50",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CLASSES])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?",
                        default=os.path.join(ROOT, "build", "int8-resnet50"))
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    model = resnet50(rng)
    x = rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)
    paths = {name: os.path.join(args.out, name, "model.onnx")
             for name in ("float", "qdq", "qdq_per_channel", "dynamic")}
    for path in paths.values():
        os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, paths["float"])
    for name in ("qdq", "qdq_per_channel"):
        quantize_static(paths["float"], paths[name],
                        RandomInputs(rng, (1, 3, SIZE, SIZE)),
                        quant_format=QuantFormat.QDQ,
                        per_channel=name == "qdq_per_channel",
                        activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
    quantize_dynamic(paths["float"], paths["dynamic"],
                     weight_type=QuantType.QUInt8)
    for name, path in paths.items():
        write_folder(os.path.dirname(path), path, x)
        print(os.path.dirname(path))


if __name__ == "__main__":
    main()
