"""What the test model scripts write: DIR/model.onnx of a graph, and
inputs and outputs as DIR/NAME.npy."""
import os

import numpy as np
import onnx
from onnx import helper


def write_model(folder, graph, opset=13):
    """Saves `graph` as DIR/model.onnx at `opset` (IR version 8, which
    onnxruntime 1.20 reads); returns the model."""
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(folder, "model.onnx"))
    return model


def write_arrays(folder, arrays):
    """Saves each (name, array) as DIR/NAME.npy."""
    for name, value in arrays:
        np.save(os.path.join(folder, name + ".npy"), value)
