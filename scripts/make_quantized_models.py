"""Quantizes models of the whole-model suite and of the real-model corpus
with onnxruntime's own tools and writes them, with onnxruntime's outputs as
references, to test/quantized-models:

    .venv/bin/python scripts/make_quantized_models.py [OUT_DIR]

Each entry names a model of test/whole-models or test/real-models and a
recipe:
  qdq              static QDQ, per-tensor int8 weights, uint8 activations,
                   calibrated (MinMax) on the model's data set and four
                   perturbed copies of it;
  qdq_per_channel  the same with one weight scale per output channel;
  qoperator        static quantization into onnxruntime's quantized
                   operators (QLinearConv, and the com.microsoft QGemm,
                   QLinearAdd, QLinearGlobalAveragePool), per-channel
                   weights;
  dynamic          dynamic quantization: weights int8 (uint8 for
                   convolutions, which onnxruntime's ConvInteger needs),
                   activations quantized at run time (DynamicQuantizeLinear,
                   MatMulInteger, ConvInteger);
  dynamic_fused    the same, then optimized by onnxruntime as it would run
                   it (the extended level's fusions into the com.microsoft
                   DynamicQuantizeMatMul and MatMulIntegerToFloat; its
                   transformer fusions, which are onnxruntime's own
                   kernels, left out);
  matmul_4bits     4-bit blocked weights (32 per block, with zero points)
                   for every MatMul: the com.microsoft MatMulNBits;
  matmul_4bits_qdq the same as opset 21's int4 DequantizeLinear before
                   each MatMul. Its references come from onnxruntime with
                   its graph optimizations off: optimized, it fuses the two
                   into its MatMulNBits kernel, which computes at a lower
                   precision than ONNX defines (4e-4 off here).
Runs are deterministic: the same onnxruntime gives byte-identical files.
"""
import glob
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_dynamic,
                                      quantize_static)
from onnxruntime.quantization.matmul_4bits_quantizer import \
    MatMul4BitsQuantizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WHOLE = os.path.join(ROOT, "test", "whole-models")
REAL = os.path.join(ROOT, "test", "real-models")

MODELS = [
    ("resnet18_opset17", "qdq"),
    ("resnet18_opset17", "qdq_per_channel"),
    ("resnet18_opset17", "dynamic"),
    ("resnet18_opset17", "qoperator"),
    ("mobilenet_v2_opset17", "qdq_per_channel"),
    ("mobilenet_v2_opset17", "qoperator"),
    ("bert_encoder_opset17", "qdq"),
    ("bert_encoder_opset17", "dynamic"),
    ("bert_encoder_opset17", "dynamic_fused"),
    ("bert_encoder_opset17", "matmul_4bits"),
    ("bert_encoder_opset21", "matmul_4bits_qdq"),
    ("gpt2_decoder_opset17", "dynamic"),
]

# Models of the real-model corpus (its first data set). Left out: MTCNN's
# RNet (static QDQ: its softmax one quantization step, 1/255, from
# onnxruntime's) and the PaddleOCR direction classifiers (dynamic, static
# per channel: up to four steps), where a float sum rounded in another
# order moves one value of a quantized activation by a step and the
# layers after carry it on.
REAL_MODELS = [
    ("attacut_c", "dynamic"),
    ("dynamo_convnext", "qdq"),
    ("dynamo_regnet", "qoperator"),
    ("dynamo_shufflenet", "qdq_per_channel"),
    ("dynamo_vit", "matmul_4bits"),
    ("mtcnn_onet", "dynamic"),
    ("silero_vad_v6", "dynamic"),
]

# onnxruntime's fusions into its own transformer kernels (FusedMatMul,
# BiasGelu, SkipLayerNormalization, Gelu), which are not quantization ops;
# the dynamic_fused recipe leaves them out.
TRANSFORMER_FUSIONS = ["MatMulScaleFusion", "BiasGeluFusion",
                       "SkipLayerNormFusion", "GeluFusion", "GeluFusionL1",
                       "GeluFusionL2", "TransposeOptimizer"]


def load_feeds(folder):
    model = onnx.load(os.path.join(folder, "model.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    files = sorted(glob.glob(os.path.join(folder, "test_data_set_0",
                                          "input_*.pb")))
    return {name: numpy_helper.to_array(onnx.load_tensor(path))
            for name, path in zip(names, files)}


class Calibration(CalibrationDataReader):
    """The data set, then four copies with float inputs perturbed."""

    def __init__(self, feeds):
        rng = np.random.default_rng(0)
        self.sets = [feeds] + [
            {name: (value + 0.1 * rng.standard_normal(value.shape)
                    ).astype(value.dtype) if value.dtype.kind == "f"
             else value for name, value in feeds.items()}
            for _ in range(4)]

    def get_next(self):
        return self.sets.pop(0) if self.sets else None


def quantize(source, target, recipe, feeds):
    model = onnx.load(source)
    has_conv = any(node.op_type == "Conv" for node in model.graph.node)
    if recipe in ("dynamic", "dynamic_fused"):
        quantize_dynamic(source, target, op_types_to_quantize=["MatMul",
                                                               "Conv"],
                         weight_type=QuantType.QUInt8 if has_conv
                         else QuantType.QInt8)
        if recipe == "dynamic_fused":
            options = ort.SessionOptions()
            options.graph_optimization_level = \
                ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            options.optimized_model_filepath = target
            ort.InferenceSession(target, options,
                                 providers=["CPUExecutionProvider"],
                                 disabled_optimizers=TRANSFORMER_FUSIONS)
    elif recipe in ("matmul_4bits", "matmul_4bits_qdq"):
        quantizer = MatMul4BitsQuantizer(
            model, block_size=32, is_symmetric=False,
            quant_format=QuantFormat.QDQ if recipe == "matmul_4bits_qdq"
            else QuantFormat.QOperator)
        quantizer.process()
        quantizer.model.save_model_to_file(target)
    else:
        quantize_static(source, target, Calibration(feeds),
                        quant_format=QuantFormat.QOperator
                        if recipe == "qoperator" else QuantFormat.QDQ,
                        per_channel=recipe != "qdq",
                        activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)


def write_tensor(path, value, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())


def main():
    out_root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        ROOT, "test", "quantized-models")
    os.makedirs(out_root, exist_ok=True)
    rows = []
    entries = [(WHOLE, name, recipe) for name, recipe in MODELS] + \
        [(REAL, name, recipe) for name, recipe in REAL_MODELS]
    for suite, name, recipe in entries:
        source = os.path.join(suite, name)
        folder = os.path.join(out_root, f"{name.split('_opset')[0]}_{recipe}")
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        feeds = load_feeds(source)
        target = os.path.join(folder, "model.onnx")
        quantize(os.path.join(source, "model.onnx"), target, recipe, feeds)
        model = onnx.load(target)
        options = ort.SessionOptions()
        if recipe == "matmul_4bits_qdq":
            options.graph_optimization_level = \
                ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        outputs = ort.InferenceSession(target, options).run(None, feeds)
        for i, (input_name, value) in enumerate(feeds.items()):
            write_tensor(os.path.join(data, f"input_{i}.pb"), value,
                         input_name)
        for i, (info, value) in enumerate(zip(model.graph.output, outputs)):
            write_tensor(os.path.join(data, f"output_{i}.pb"), value,
                         info.name)
        ops = sorted({node.op_type for node in model.graph.node
                      if "quantize" in node.op_type.lower()
                      or "Integer" in node.op_type or "NBits" in node.op_type
                      or node.op_type.startswith(("QLinear", "QGemm"))})
        rows.append(f"| `{os.path.basename(folder)}` | "
                    f"`{os.path.basename(suite)}/{name}` | {recipe} | "
                    f"{', '.join(ops)} |")
        print(os.path.basename(folder), ", ".join(ops))
    with open(os.path.join(out_root, "README.md"), "w") as f:
        f.write("# Quantized models\n\n"
                "Made by `scripts/make_quantized_models.py` with onnxruntime "
                f"{ort.__version__}'s quantization tools from the whole-model "
                "suite and the real-model corpus; the references are "
                "onnxruntime's outputs on the quantized models.\n\n"
                "| folder | from | recipe | quantization ops |\n"
                "| --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
