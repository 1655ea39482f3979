"""The kiln Python package: compile, run, compare with onnxruntime, errors."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from onnxruntime.capi.onnxruntime_pybind11_state import \
    NotImplemented as OrtNotImplemented

import kiln

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITES = [ROOT / "test" / "whole-models", ROOT / "test" / "quantized-models",
          ROOT / "test" / "models",
          ROOT / "examples"]
TINY_CNN = ROOT / "examples" / "tiny_cnn" / "model.onnx"


def model_dirs():
    return sorted(d for suite in SUITES for d in suite.iterdir()
                  if (d / "model.onnx").exists()
                  and (d / "test_data_set_0").exists())


def feeds_of(model_dir):
    """The first data set's inputs by name, as onnxruntime takes them."""
    model = onnx.load(model_dir / "model.onnx", load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    files = sorted((model_dir / "test_data_set_0").glob("input_*.pb"))
    return {name: numpy_helper.to_array(onnx.load_tensor(str(path)))
            for name, path in zip(names, files)}


def dequantizes_4bit_weights(model):
    """Whether a DequantizeLinear reads 4-bit weights: onnxruntime's graph
    optimizations fuse it and its MatMul into MatMulNBits, which computes
    at a lower precision than ONNX defines, so such a model's reference
    comes from onnxruntime unoptimized (as scripts/make_quantized_models.py
    makes it)."""
    four_bit = {t.name for t in model.graph.initializer
                if t.data_type in (onnx.TensorProto.INT4,
                                   onnx.TensorProto.UINT4)}
    return any(node.op_type == "DequantizeLinear" and
               node.input[0] in four_bit for node in model.graph.node)


def reference_outputs(model_dir, feeds):
    """onnxruntime's outputs; for a model with an op onnxruntime lacks
    (tree_ensemble_v5's TreeEnsemble of ai.onnx.ml 5), the first data set's
    stored outputs, which onnx's reference evaluator computed."""
    path = str(model_dir / "model.onnx")
    options = ort.SessionOptions()
    if dequantizes_4bit_weights(onnx.load(path, load_external_data=False)):
        options.graph_optimization_level = \
            ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        return ort.InferenceSession(path, options).run(None, feeds)
    except OrtNotImplemented:
        files = sorted((model_dir / "test_data_set_0").glob("output_*.pb"))
        return [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in files]


def assert_close(got, want):
    """Kiln's tolerance rule (kiln-run, kiln-onnx-test)."""
    half = want.dtype == np.float16
    np.testing.assert_allclose(got, want, rtol=4e-3 if half else 1e-3,
                               atol=1e-3 if half else 1e-7)


@pytest.mark.parametrize("model_dir", model_dirs(), ids=lambda d: d.name)
def test_whole_model_matches_onnxruntime(model_dir):
    path = str(model_dir / "model.onnx")
    feeds = feeds_of(model_dir)
    shapes = {name: value.shape for name, value in feeds.items()}
    # The three lines:
    got = kiln.InferenceSession(kiln.compile(path, input_shapes=shapes)).run(
        None, feeds)
    want = reference_outputs(model_dir, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert_close(g, w)


@pytest.mark.parametrize("batch_chunks", [(), (1, 4)])
def test_dynamic_batch_runs_any_batch(batch_chunks):
    """One artifact, compiled for chunks of 2 (and of 1 and 4), at batches
    1, 3, 5 and 7."""
    path = str(ROOT / "test" / "models" / "cnn_symbolic" / "model.onnx")
    session = kiln.InferenceSession(kiln.compile(
        path, input_shapes={"image": (2, 3, 16, 16)}, dynamic_batch=True,
        batch_chunks=batch_chunks))
    reference = ort.InferenceSession(path)
    rng = np.random.default_rng(3)
    for batch in (1, 3, 5, 7):
        feeds = {"image": rng.standard_normal((batch, 3, 16, 16),
                                              dtype=np.float32)}
        got, = session.run(None, feeds)
        want, = reference.run(None, feeds)
        assert got.shape == want.shape == (batch, 10)
        assert_close(got, want)


@pytest.fixture(scope="module")
def tiny():
    return kiln.compile(TINY_CNN)


def test_versions_agree():
    line = kiln.runtime_version()
    assert re.fullmatch(r"kiln \d+\.\d+\.\d+ \(commit [0-9a-z-]+\)", line)
    assert line.split()[1] == kiln.__version__
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert f"project(kiln VERSION {kiln.__version__} " in cmake


def test_inputs_outputs_and_metadata(tiny):
    session = kiln.InferenceSession(tiny)
    [x] = session.get_inputs()
    assert (x.name, x.dtype, x.shape) == ("input", "float32", (1, 1, 28, 28))
    [y] = session.get_outputs()
    assert (y.name, y.dtype, y.shape) == ("probabilities", "float32", (1, 10))
    assert session.target == "cpu" == tiny.target
    assert tiny.producer.startswith(f"kiln {kiln.__version__} (commit ")


def test_save_load_and_open_by_path(tiny, tmp_path):
    path = tmp_path / "tiny.kiln"
    tiny.save(path)
    assert kiln.Artifact.load(path).data == tiny.data
    x = np.ones((1, 1, 28, 28), np.float32)
    a = kiln.InferenceSession(path).run(["probabilities"], {"input": x})
    b = kiln.InferenceSession(tiny, threads=1).run(None, {"input": x})
    np.testing.assert_array_equal(a[0], b[0])


def test_compile_a_model_proto_with_frozen_input():
    # CumSum's axis must be known at compile time: frozen from an array.
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    axis = helper.make_tensor_value_info("axis", onnx.TensorProto.INT32, [])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("CumSum", ["x", "axis"],
                                                ["y"])], "g", [x, axis], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    artifact = kiln.compile(model, freeze_inputs={"axis": np.int32(1)})
    session = kiln.InferenceSession(artifact)
    assert [i.name for i in session.get_inputs()] == ["x"]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    [got] = session.run(None, {"x": data})
    np.testing.assert_array_equal(got, np.cumsum(data, axis=1))


def test_dlpack_input(tiny):
    class DLPackOnly:
        """An array that is not NumPy's, handed over through DLPack."""

        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    x = np.random.default_rng(0).random((1, 1, 28, 28), dtype=np.float32)
    session = kiln.InferenceSession(tiny)
    [a] = session.run(None, {"input": DLPackOnly(x)})
    [b] = session.run(None, {"input": x})
    np.testing.assert_array_equal(a, b)


def test_gpu_tensors_through_dlpack(tmp_path):
    """GPU tensors in and out of a cuda session, on the fake CUDA driver in
    a process of its own (gpu_dlpack_child.py)."""
    build = pathlib.Path(kiln.compiler_path()).resolve().parents[1]
    fake = build / "runtime" / "test" / "kiln_fake_cuda" / "libcuda.so.1"
    if not fake.exists():
        pytest.skip(f"no fake CUDA driver at {fake}")
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "identity",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    kiln.compile(model, target="cuda:sm_90",
                 options=["--cuda-toolkit=none"]).save(tmp_path / "cuda.kiln")
    kiln.compile(model).save(tmp_path / "cpu.kiln")
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake.parent))
    child = pathlib.Path(__file__).with_name("gpu_dlpack_child.py")
    result = subprocess.run(
        [sys.executable, str(child), str(tmp_path / "cuda.kiln"),
         str(tmp_path / "cpu.kiln")], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gpu dlpack: ok" in result.stdout


def test_profile_names_every_kernel(tiny):
    x = np.zeros((1, 1, 28, 28), np.float32)
    profile = kiln.InferenceSession(tiny).profile({"input": x})
    assert profile and all(p.milliseconds >= 0 for p in profile)
    assert {n for p in profile for n in p.nodes} >= {"conv1"}


@pytest.mark.parametrize("feed, message", [
    ({"input": np.zeros((1, 1, 28, 27), np.float32)}, "shape"),
    ({"input": np.zeros((1, 1, 28, 28), np.float64)}, "must be float32"),
    ({"image": np.zeros((1, 1, 28, 28), np.float32)}, "no input 'image'"),
    ({}, "input"),
])
def test_bad_feeds_raise(tiny, feed, message):
    with pytest.raises(kiln.KilnError, match=message):
        kiln.InferenceSession(tiny).run(None, feed)


def test_bad_artifacts_and_devices_raise(tiny, tmp_path):
    with pytest.raises(kiln.KilnError, match="not a Kiln artifact"):
        kiln.Artifact(b"not an artifact at all")
    with pytest.raises(kiln.KilnError, match="cannot open"):
        kiln.InferenceSession(tmp_path / "missing.kiln")
    with pytest.raises(kiln.KilnError, match="--device cpu"):
        kiln.InferenceSession(tiny, device="cuda")
    with pytest.raises(kiln.KilnError, match="no output 'logits'"):
        x = np.zeros((1, 1, 28, 28), np.float32)
        kiln.InferenceSession(tiny).run(["logits"], {"input": x})
    with pytest.raises(kiln.KilnError, match="more than the session's 1024-byte budget"):
        kiln.InferenceSession(tiny, max_memory=1024)


def test_compile_errors_name_the_node():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])
    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="odd_node",
                          domain="com.example")], "g", [x],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    with pytest.raises(kiln.KilnError, match="odd_node"):
        kiln.compile(model)
    with pytest.raises(TypeError, match="path or an onnx.ModelProto"):
        kiln.compile(42)


def test_without_a_compiler_only_compile_refuses(tiny, monkeypatch):
    monkeypatch.setenv("KILN_COMPILE", "")
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(kiln._build_config, "KILN_COMPILE_TOOL", "")
    assert kiln.compiler_path() is None
    with pytest.raises(kiln.KilnError, match="needs the kiln-compile tool"):
        kiln.compile(TINY_CNN)
    x = np.zeros((1, 1, 28, 28), np.float32)
    assert kiln.InferenceSession(tiny).run(None, {"input": x})[0].shape == (1, 10)


def test_type_stubs_are_installed():
    package = pathlib.Path(kiln.__file__).parent
    stub = (package / "_runtime.pyi").read_text()
    assert "class InferenceSession" not in stub  # the extension's own names
    assert "class Session" in stub and "def version() -> str" in stub
    assert (package / "py.typed").exists()


def test_example_script_compares_with_onnxruntime():
    import subprocess
    import sys
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "compare_with_onnxruntime.py"),
         str(TINY_CNN), "--repeats", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "probabilities: float32 (1, 10), max abs err" in done.stdout
    assert "onnxruntime" in done.stdout.splitlines()[-1]
