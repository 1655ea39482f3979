"""Writes a weightless ONNX model whose kernels show each target's kernel
config: a large and a small MatMul of graph inputs, a Softmax over rows and
an elementwise Add. Usage: config_model.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto, helper

M, K, N = 4096, 1024, 4096
ROWS, COLS = 64, 1000

graph = helper.make_graph(
    [
        helper.make_node("MatMul", ["a", "b"], ["product"], name="matmul"),
        helper.make_node("MatMul", ["c", "d"], ["small_product"], name="small_matmul"),
        helper.make_node("Softmax", ["x"], ["probabilities"], name="softmax", axis=1),
        helper.make_node("Add", ["y", "z"], ["sum"], name="add"),
    ],
    "kernel_configs",
    [
        helper.make_tensor_value_info("a", TensorProto.FLOAT, [M, K]),
        helper.make_tensor_value_info("b", TensorProto.FLOAT, [K, N]),
        helper.make_tensor_value_info("c", TensorProto.FLOAT, [64, 96]),
        helper.make_tensor_value_info("d", TensorProto.FLOAT, [96, 64]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, COLS]),
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, COLS]),
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [ROWS, COLS]),
    ],
    [
        helper.make_tensor_value_info("product", TensorProto.FLOAT, [M, N]),
        helper.make_tensor_value_info("small_product", TensorProto.FLOAT, [64, 64]),
        helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [ROWS, COLS]),
        helper.make_tensor_value_info("sum", TensorProto.FLOAT, [ROWS, COLS]),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
