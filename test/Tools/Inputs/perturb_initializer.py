"""Writes a copy of an ONNX model with one initializer changed (every
element plus 0.05): a reference that differs from the compiled model from
that weight's node on, for testing scripts/kiln-bisect.

    perturb_initializer.py MODEL.onnx INITIALIZER OUT.onnx
"""
import sys

import onnx
from onnx import numpy_helper

model_path, name, out_path = sys.argv[1:4]
model = onnx.load(model_path)
for i, init in enumerate(model.graph.initializer):
    if init.name == name:
        changed = numpy_helper.to_array(init) + 0.05
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(changed, name))
        break
else:
    sys.exit(f"no initializer '{name}' in {model_path}")
onnx.save(model, out_path)
