"""Kiln: compile ONNX models into artifacts and run them.

    import kiln
    artifact = kiln.compile("model.onnx")              # or an onnx.ModelProto
    outputs = kiln.InferenceSession(artifact).run(None, {"x": x})

`InferenceSession` has onnxruntime's shape of API (`get_inputs`,
`get_outputs`, `run`). Running needs only the runtime, which this package
carries (`kiln._runtime`, no MLIR or LLVM); `compile` runs the `kiln-compile`
tool: `$KILN_COMPILE`, else `kiln-compile` on `$PATH`, else the one the
package was built with.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _build_config
from ._runtime import DispatchInfo, KilnError, Model, Session, TensorInfo
from ._runtime import version as runtime_version

try:
    __version__ = metadata.version("kiln")
except metadata.PackageNotFoundError:  # installed by the Debian package
    __version__ = runtime_version().split()[1]

__all__ = [
    "Artifact",
    "InferenceSession",
    "KernelProfile",
    "KilnError",
    "TensorInfo",
    "compile",
    "compiler_path",
    "runtime_version",
]

PathLike = Union[str, "os.PathLike[str]"]


class Artifact:
    """A compiled model: the bytes of a .kiln file."""

    def __init__(self, data: bytes):
        self.data = bytes(data)
        # Opening checks the file (digests, schema) and reads its metadata.
        self._model = Model.from_bytes(self.data)

    @classmethod
    def load(cls, path: PathLike) -> "Artifact":
        with open(path, "rb") as f:
            return cls(f.read())

    def save(self, path: PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self.data)

    @property
    def target(self) -> str:
        """'cpu', 'cuda:sm_90', 'rocm:gfx942', ..."""
        return self._model.target

    @property
    def producer(self) -> str:
        """The kiln-compile that made it: 'kiln X.Y.Z (commit ...)'."""
        return self._model.producer

    def __repr__(self) -> str:
        return f"Artifact(target={self.target!r}, {len(self.data)} bytes)"


# DLPack's device types of GPU memory: kDLCUDA, kDLROCM.
_GPU_DLPACK_DEVICES = (2, 10)


def _on_gpu(value: Any) -> bool:
    """Whether value is a DLPack tensor in CUDA or ROCm memory."""
    device = getattr(value, "__dlpack_device__", None)
    return device is not None and int(device()[0]) in _GPU_DLPACK_DEVICES


def compiler_path() -> Optional[str]:
    """The kiln-compile that `compile` runs, or None when there is none."""
    for candidate in (os.environ.get("KILN_COMPILE"),
                      shutil.which("kiln-compile"),
                      _build_config.KILN_COMPILE_TOOL):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def compile(model: Any, target: str = "cpu",
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
            precision: Optional[str] = None, cpu: Optional[str] = None,
            freeze_inputs: Optional[Mapping[str, Any]] = None,
            dynamic_batch: bool = False,
            batch_chunks: Sequence[int] = (),
            options: Sequence[str] = ()) -> Artifact:
    """Compiles an ONNX model (a path or an onnx.ModelProto).

    target: 'cpu', 'cuda[:sm_80,sm_90,...]' or 'rocm[:gfx90a,gfx942]'.
    input_shapes: concrete shapes for inputs with symbolic dims.
    precision: 'f32' (default), 'f16' or 'bf16' between ops.
    cpu: the LLVM CPU for target 'cpu' ('native' by default; 'x86-64-v3'
      runs on any AVX2 machine).
    freeze_inputs: input values fixed at compile time (arrays).
    dynamic_batch: inputs whose leading dim is symbolic take any batch at
      run time, run in chunks of the batch input_shapes gives (1 without);
      KilnError when a node mixes batch elements.
    batch_chunks: with dynamic_batch, more chunks to compile the kernels for
      (e.g. (1, 8, 32)); a run takes its batch in pieces of the chunks.
    options: any other kiln-compile flags, e.g. ['--max-workgroups=8'].
    Raises KilnError with the compiler's messages when it fails.
    """
    tool = compiler_path()
    if tool is None:
        raise KilnError(
            "kiln.compile needs the kiln-compile tool, and none was found: "
            "set $KILN_COMPILE or put kiln-compile on $PATH (this package "
            "alone runs compiled artifacts)")
    with tempfile.TemporaryDirectory(prefix="kiln-") as work:
        path = _model_path(model, work)
        out = os.path.join(work, "model.kiln")
        command = [tool, path, f"--target={target}", "-o", out]
        for name, shape in (input_shapes or {}).items():
            dims = "x".join(str(int(d)) for d in shape)
            command.append(f"--input-shape={name}={dims}")
        if precision:
            command.append(f"--precision={precision}")
        if cpu:
            command.append(f"--cpu={cpu}")
        if dynamic_batch:
            command.append("--dynamic-batch")
        if batch_chunks:
            command.append("--batch-chunks=" +
                           ",".join(str(int(c)) for c in batch_chunks))
        for i, (name, value) in enumerate((freeze_inputs or {}).items()):
            frozen = os.path.join(work, f"frozen_{i}.npy")
            np.save(frozen, np.asarray(value))
            command.append(f"--freeze-input={name}=@{frozen}")
        command.extend(options)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise KilnError(f"kiln-compile failed (exit {done.returncode}):\n"
                            + (done.stderr or done.stdout).strip())
        return Artifact.load(out)


def _model_path(model: Any, work: str) -> str:
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        path = os.path.join(work, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        return path
    raise TypeError("model must be a path or an onnx.ModelProto, not "
                    f"{type(model).__name__}")


@dataclass
class KernelProfile:
    """One kernel launch of a profiled run."""
    kernel: str
    nodes: List[str]
    milliseconds: float
    flops: int
    bytes: int


class InferenceSession:
    """A compiled model on a device, with onnxruntime's shape of API."""

    def __init__(self, artifact: Union[Artifact, PathLike],
                 device: str = "cpu", threads: int = 0, max_memory: int = 0):
        """artifact: an Artifact or the path of a .kiln file.
        device: 'cpu', 'cuda' or 'rocm' (what it was compiled for).
        threads: CPU worker threads; 0 is one per core.
        max_memory: the most bytes the model's buffers may take (KilnError
        when they need more); 0 is no limit."""
        if isinstance(artifact, Artifact):
            self._model = Model.from_bytes(artifact.data)
        else:
            self._model = Model.open(os.fspath(artifact))
        self._session = Session(self._model, device, threads, max_memory)
        self._inputs = self._model.inputs
        self._outputs = self._model.outputs

    def get_inputs(self) -> List[TensorInfo]:
        return list(self._inputs)

    def get_outputs(self) -> List[TensorInfo]:
        return list(self._outputs)

    @property
    def target(self) -> str:
        return self._model.target

    def run(self, output_names: Optional[Sequence[str]],
            input_feed: Mapping[str, Any]) -> List[np.ndarray]:
        """Runs once; returns the outputs named (all when None) as arrays.
        input_feed maps every input's name to an array of its dtype and
        shape: NumPy, any object with __dlpack__ on the CPU, or on a GPU
        session a GPU tensor (PyTorch, CuPy: __dlpack__ in CUDA or ROCm
        memory), which the kernels read in place, without a copy."""
        self._set_inputs(input_feed)
        self._session.run()
        return self._collect(output_names)

    def run_into(self, outputs: Mapping[str, Any],
                 input_feed: Mapping[str, Any]) -> None:
        """Runs once (inputs as for run) with each output named in outputs
        written into the GPU tensor given for it (__dlpack__ in CUDA or
        ROCm memory, of the output's dtype and shape) by its kernel, or
        copied there device to device when it is also an input or a
        constant: with GPU tensors in and out, nothing goes through the
        host."""
        index: Dict[str, int] = {o.name: i for i, o in enumerate(self._outputs)}
        for name in outputs:
            if name not in index:
                raise KilnError(f"the model has no output '{name}' (outputs: "
                                + ", ".join(index) + ")")
        bound = []
        try:
            for name, tensor in outputs.items():
                self._session.bind_output_device(index[name], tensor)
                bound.append(index[name])
            self._set_inputs(input_feed)
            self._session.run()
        finally:
            for i in bound:
                self._session.bind_output_device(i, None)

    def profile(self, input_feed: Mapping[str, Any]) -> List[KernelProfile]:
        """Runs once and times each kernel launch."""
        self._set_inputs(input_feed)
        times = self._session.run_profiled()
        return [KernelProfile(d.kernel, list(d.nodes), ms, d.flops, d.bytes)
                for d, ms in zip(self._model.dispatches, times)]

    def _set_inputs(self, input_feed: Mapping[str, Any]) -> None:
        known = {info.name for info in self._inputs}
        for name, value in input_feed.items():
            if name not in known:
                raise KilnError(f"the model has no input '{name}' (inputs: "
                                + ", ".join(sorted(known)) + ")")
            if _on_gpu(value):
                self._session.set_input_device(name, value)
                continue
            if isinstance(value, np.ndarray) or not hasattr(value,
                                                            "__dlpack__"):
                # C order; unlike ascontiguousarray, keeps a scalar 0-d.
                value = np.asarray(value, order="C")
            self._session.set_input(name, value)

    def _collect(self, output_names: Optional[Sequence[str]]
                 ) -> List[np.ndarray]:
        index: Dict[str, int] = {o.name: i for i, o in enumerate(self._outputs)}
        names = list(output_names) if output_names else list(index)
        for name in names:
            if name not in index:
                raise KilnError(f"the model has no output '{name}' (outputs: "
                                + ", ".join(index) + ")")
        return [self._session.output(index[name]) for name in names]
