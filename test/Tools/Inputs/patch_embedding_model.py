"""Writes DIR/model.onnx, two patch embeddings of one image x [2, 3, 36, 36]
(convolutions whose stride is their kernel, with a bias): 8x8 windows made
tokens by a reshape and a transpose (ViT's flatten(2).transpose(1, 2)) as
`tokens`, and 6x6 windows kept in the convolution's layout as `patches`
(the rows and columns past the last whole window unread); and a 1-D one,
frames of 5 of a signal s [2, 4, 43] as `frames`; with inputs DIR/x.npy
and DIR/s.npy and onnxruntime's outputs DIR/tokens.npy, DIR/patches.npy
and DIR/frames.npy, for test/Tools/patch-embedding.test."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(11)
array = numpy_helper.from_array
initializers = [
    array((rng.standard_normal((48, 3, 8, 8)) * 0.1).astype(np.float32), "w8"),
    array(rng.standard_normal(48).astype(np.float32), "b8"),
    array((rng.standard_normal((40, 3, 6, 6)) * 0.1).astype(np.float32), "w6"),
    array(rng.standard_normal(40).astype(np.float32), "b6"),
    array(np.array([2, 48, 16], np.int64), "flat"),
    array((rng.standard_normal((24, 4, 5)) * 0.1).astype(np.float32), "w5"),
    array(rng.standard_normal(24).astype(np.float32), "b5")]
nodes = [
    helper.make_node("Conv", ["x", "w8", "b8"], ["c8"], kernel_shape=[8, 8],
                     strides=[8, 8]),
    helper.make_node("Reshape", ["c8", "flat"], ["f8"]),
    helper.make_node("Transpose", ["f8"], ["tokens"], perm=[0, 2, 1]),
    helper.make_node("Conv", ["x", "w6", "b6"], ["patches"],
                     kernel_shape=[6, 6], strides=[6, 6]),
    helper.make_node("Conv", ["s", "w5", "b5"], ["frames"], kernel_shape=[5],
                     strides=[5])]
graph = helper.make_graph(
    nodes, "patch_embedding",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 36, 36]),
     helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 4, 43])],
    [helper.make_tensor_value_info("tokens", TensorProto.FLOAT, [2, 16, 48]),
     helper.make_tensor_value_info("patches", TensorProto.FLOAT,
                                   [2, 40, 6, 6]),
     helper.make_tensor_value_info("frames", TensorProto.FLOAT, [2, 24, 8])],
    initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(folder, "model.onnx")
onnx.save(model, path)
x = rng.standard_normal((2, 3, 36, 36)).astype(np.float32)
signal = rng.standard_normal((2, 4, 43)).astype(np.float32)
np.save(os.path.join(folder, "x.npy"), x)
np.save(os.path.join(folder, "s.npy"), signal)
tokens, patches, frames = ort.InferenceSession(path).run(
    None, {"x": x, "s": signal})
np.save(os.path.join(folder, "tokens.npy"), tokens)
np.save(os.path.join(folder, "patches.npy"), patches)
np.save(os.path.join(folder, "frames.npy"), frames)
