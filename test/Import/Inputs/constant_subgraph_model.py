"""A model whose outputs are all computed from initializers: each node is
one op the importer computes at compile time through the kiln ops' folders
(test/Import/constant-folding.test checks the values).

usage: constant_subgraph_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def main(path):
    inits = {
        "x": np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        "a": np.array([7, -7, 7, -7], dtype=np.int64),
        "b": np.array([2, 2, -2, -2], dtype=np.int64),
        "f": np.array([1.5, -2.7, 300.0, np.nan], dtype=np.float32),
        "u": np.array([250, 3], dtype=np.uint8),
        "v": np.array([10, 200], dtype=np.uint8),
        "cond": np.array([[True], [False]]),
        "axes0": np.array([0], dtype=np.int64),
        "axes1": np.array([1], dtype=np.int64),
        "index": np.array(-2, dtype=np.int64),
        "minus_one": np.array([-1], dtype=np.int64),
        "starts": np.array([-1], dtype=np.int64),
        "ends": np.array([-100], dtype=np.int64),
        "steps": np.array([-2], dtype=np.int64),
        "reps": np.array([2, 1], dtype=np.int64),
        "row": np.array([[1, 2]], dtype=np.int64),
        "shape3x2": np.array([3, 2], dtype=np.int64),
        "two": np.array([2], dtype=np.int64),
        "ten": np.array(10, dtype=np.int64),
        "one": np.array(1, dtype=np.int64),
        "minus_three": np.array(-3, dtype=np.int64),
        "fstart": np.array(1.0, dtype=np.float32),
        "flimit": np.array(2.0, dtype=np.float32),
        "fdelta": np.array(0.25, dtype=np.float32),
        "positions": np.array(1369.0, dtype=np.float32),
        "half": np.array(0.5, dtype=np.float32),
        "three": np.array(3, dtype=np.int64),
        "exponents": np.array([0, 1, 2, 3], dtype=np.int64),
        "halves": np.array([0.5, 1.5, 2.5, -0.5], dtype=np.float32),
        "unclipped": np.array([-3.0, 0.5, np.nan, 9.0], dtype=np.float32),
        "clip_lo": np.array(-1.0, dtype=np.float32),
        "clip_hi": np.array(2.0, dtype=np.float32),
        "picks": np.array([[1, 0], [0, -1]], dtype=np.int64),
        "table": np.array([[1, 2], [3, 4]], dtype=np.int64),
        "q_scale": np.array(0.5, dtype=np.float32),
        "q_zero": np.array(10, dtype=np.uint8),
        "bits": np.array([1, 255, 16, 200], dtype=np.uint8),
        "bit_shifts": np.array([1, 1, 8, 4], dtype=np.uint8),
    }
    nodes = [
        # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters
        # write it: x reshaped to [3, 8].
        h.make_node("Shape", ["x"], ["dims"]),
        h.make_node("Gather", ["dims", "index"], ["dim"], axis=0),
        h.make_node("Unsqueeze", ["dim", "axes0"], ["dim1"]),
        h.make_node("Concat", ["dim1", "minus_one"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["reshaped"]),
        h.make_node("ReduceSum", ["reshaped", "axes1"], ["row_sums"], keepdims=0),
        # Integer Div truncates toward zero; Mod takes the divisor's sign.
        h.make_node("Div", ["a", "b"], ["quotient"]),
        h.make_node("Mod", ["a", "b"], ["remainder"]),
        h.make_node("Mod", ["a", "b"], ["fremainder"], fmod=1),
        # Float to int64 truncates; NaN casts to 0 here.
        h.make_node("Cast", ["f"], ["truncated"], to=T.INT64),
        # uint8 arithmetic wraps.
        h.make_node("Add", ["u", "v"], ["wrapped"]),
        h.make_node("Greater", ["a", "b"], ["greater"]),
        h.make_node("Not", ["greater"], ["not_greater"]),
        h.make_node("Where", ["cond", "a", "b"], ["selected"]),
        h.make_node("Slice", ["a", "starts", "ends", "axes0", "steps"], ["reversed"]),
        h.make_node("Tile", ["row", "reps"], ["tiled"]),
        h.make_node("Expand", ["row", "shape3x2"], ["expanded"]),
        h.make_node("ReduceProd", ["shape3x2"], ["product"], keepdims=0),
        h.make_node("ReduceMax", ["a"], ["largest"], keepdims=0),
        h.make_node("Transpose", ["expanded"], ["transposed"], perm=[1, 0]),
        h.make_node("Range", ["ten", "one", "minus_three"], ["range"]),
        h.make_node("Range", ["fstart", "flimit", "fdelta"], ["float_range"]),
        h.make_node("ConstantOfShape", ["shape3x2"], ["sevens"],
                    value=numpy_helper.from_array(np.array([7], dtype=np.int64))),
        h.make_node("ConstantOfShape", ["two"], ["zeros"]),
        h.make_node("Greater", ["u", "v"], ["unsigned_greater"]),
        # A ViT's position-grid side, int(num_positions ** 0.5), as
        # DINOv2's export computes it.
        h.make_node("Pow", ["positions", "half"], ["side_f"]),
        h.make_node("Cast", ["side_f"], ["side"], to=T.INT64),
        h.make_node("Pow", ["three", "exponents"], ["powers"]),
        h.make_node("Round", ["halves"], ["rounded"]),
        # Clip keeps NaN; GatherElements picks along axis 1; QuantizeLinear
        # (round half to even, then saturate) of a constant is one too.
        h.make_node("Clip", ["unclipped", "clip_lo", "clip_hi"], ["clipped"]),
        h.make_node("GatherElements", ["table", "picks"], ["picked"], axis=1),
        h.make_node("QuantizeLinear", ["unclipped", "q_scale", "q_zero"],
                    ["quantized"]),
        # BitShift of uint8 wraps left and is logical right; a shift by the
        # width or more gives 0.
        h.make_node("BitShift", ["bits", "bit_shifts"], ["shifted_left"],
                    direction="LEFT"),
        h.make_node("BitShift", ["bits", "bit_shifts"], ["shifted_right"],
                    direction="RIGHT"),
    ]
    outputs = ["reshaped", "row_sums", "quotient", "remainder", "fremainder",
               "truncated", "wrapped", "greater", "not_greater",
               "selected", "reversed", "tiled", "expanded", "product",
               "largest", "transposed", "range", "float_range", "sevens",
               "zeros", "unsigned_greater", "side", "powers", "rounded",
               "clipped", "picked", "quantized", "shifted_left",
               "shifted_right"]
    graph = h.make_graph(
        nodes, "constant_subgraphs", [],
        [h.make_tensor_value_info(name, T.UNDEFINED, None) for name in outputs],
        [numpy_helper.from_array(value, name) for name, value in inits.items()])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
