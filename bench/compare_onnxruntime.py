#!/usr/bin/env python3
"""Compile time, latency and memory of Kiln beside onnxruntime (and IREE),
on this machine's CPU.

For each model: times `kiln-compile`, runs `kiln-bench` (median over repeats
after warm-up) and onnxruntime's CPU provider with the same thread count and
the same random inputs' shapes, and prints a Markdown table. With `--iree
BIN` (the bin folder of a venv with PyPI's iree-base-compiler and
iree-base-runtime), the model with its batch dims fixed is also imported
(`iree-import-onnx`), compiled for this CPU (`iree-compile`, llvm-cpu,
host) and timed (`iree-benchmark-module`, local-task with as many workers
as threads). Memory: Kiln's arena plus weights; the bound of the
fusion/tiling issue, the two largest intermediate tensors plus the weights
(from ONNX shape inference); and onnxruntime's peak, measured in a child
process as the growth of its peak resident memory (VmHWM, reset after
imports and input generation) while it loads the model and runs it three
times.

Usage: .venv/bin/python bench/compare_onnxruntime.py [--threads N] [--repeats R]
           [--iree .venv-iree/bin] MODEL.onnx...
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def graph_inputs(model_path, batch):
    """(name, shape with symbolic dims set to `batch`, numpy dtype) per input."""
    model = onnx.load(model_path)
    inits = {i.name for i in model.graph.initializer}
    result = []
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else batch
                for d in inp.type.tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
        result.append((inp.name, dims, dtype))
    return result


def random_inputs(model_path, batch):
    rng = np.random.default_rng(0)
    feeds = {}
    for name, dims, dtype in graph_inputs(model_path, batch):
        if np.issubdtype(dtype, np.integer):
            # Token ids and masks: small non-negative values are valid for both.
            feeds[name] = rng.integers(0, 2, dims).astype(dtype)
        else:
            feeds[name] = rng.uniform(-1, 1, dims).astype(dtype)
    return feeds


def kiln(model_path, threads, repeats, batch, workdir):
    artifact = os.path.join(workdir, "model.kiln")
    shapes = [f"--input-shape={name}={'x'.join(map(str, dims))}"
              for name, dims, _ in graph_inputs(model_path, batch)]
    start = time.perf_counter()
    subprocess.run([os.path.join(BIN, "kiln-compile"), model_path, "-o", artifact]
                   + shapes, check=True)
    compile_s = time.perf_counter() - start
    inputs = []
    for name, array in random_inputs(model_path, batch).items():
        path = os.path.join(workdir, name.replace("/", "_") + ".npy")
        np.save(path, array)
        inputs += ["--input", f"{name}=@{path}"]
    out = subprocess.run([os.path.join(BIN, "kiln-bench"), artifact,
                          "--threads", str(threads), "--repeats", str(repeats),
                          "--warmup", "10"] + inputs,
                         check=True, capture_output=True, text=True).stdout
    median = float(re.search(r"median: ([0-9.]+) ms", out).group(1))
    kernels = int(re.search(r"\((\d+) dispatches", out).group(1))
    summary = subprocess.run([os.path.join(BIN, "kiln-compile"), model_path, "-o",
                              artifact, "--summary"] + shapes, check=True,
                             capture_output=True, text=True).stdout
    arena = int(re.search(r"arena: (\d+) bytes", summary).group(1))
    return compile_s, median, kernels, arena


def fixed_shape_model(model_path, batch, out_path):
    """The model with its symbolic input dims set to `batch`, shapes inferred."""
    model = onnx.load(model_path)
    for inp in model.graph.input:
        for d in inp.type.tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                d.dim_value = batch
    model = onnx.shape_inference.infer_shapes(model)
    onnx.save(model, out_path)
    return model


def memory_bound(model):
    """Bytes of the two largest tensors (inputs, intermediates, outputs)
    plus the weights."""
    def nbytes(type_proto):
        t = type_proto.tensor_type
        if not t.HasField("shape") or not t.elem_type:
            return 0
        n = 1
        for d in t.shape.dim:
            if not d.HasField("dim_value"):
                return 0
            n *= d.dim_value
        return n * np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)).itemsize
    values = list(model.graph.value_info) + list(model.graph.input) + list(
        model.graph.output)
    sizes = sorted((nbytes(v.type) for v in values), reverse=True)
    weights = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    return sum(sizes[:2]) + weights, weights


def iree(model_path, fixed_path, threads, repeats, batch, workdir, bin_dir):
    """IREE's median latency in ms, or the reason it has none."""
    mlir = os.path.join(workdir, "model.mlir")
    vmfb = os.path.join(workdir, "model.vmfb")
    steps = [
        [os.path.join(bin_dir, "iree-import-onnx"), fixed_path, "-o", mlir],
        [os.path.join(bin_dir, "iree-compile"), mlir, "-o", vmfb,
         "--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host"],
    ]
    for step in steps:
        r = subprocess.run(step, capture_output=True, text=True)
        if r.returncode != 0:
            lines = [l for l in r.stderr.splitlines() if "error" in l] or [r.stderr]
            return f"{os.path.basename(step[0])} failed: {lines[0].strip()[:120]}"
    function = re.search(r"func\.func @([\w$.-]+)\(", open(mlir).read()).group(1)
    inputs = []
    for name, array in random_inputs(model_path, batch).items():
        path = os.path.join(workdir, "iree_" + name.replace("/", "_") + ".npy")
        np.save(path, array)
        inputs.append(f"--input=@{path}")
    r = subprocess.run([os.path.join(bin_dir, "iree-benchmark-module"),
                        f"--module={vmfb}", "--device=local-task",
                        f"--task_topology_max_group_count={threads}",
                        f"--function={function}",
                        f"--benchmark_repetitions={max(3, min(repeats, 20))}"]
                       + inputs, capture_output=True, text=True)
    m = re.search(r"real_time_median\s+([0-9.]+) ms", r.stdout)
    if r.returncode != 0 or not m:
        return "iree-benchmark-module failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:120]
    return float(m.group(1))


def onnxruntime(model_path, threads, repeats, batch):
    return onnxruntime_median_ms(model_path, random_inputs(model_path, batch),
                                 threads, repeats)


def onnxruntime_median_ms(model_path, feeds, threads, repeats):
    """Median ms of onnxruntime's CPU provider on `feeds`, after 10 warm-up
    runs, with `threads` intra-op threads (bench/corpus.py uses it too)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options,
                                   providers=["CPUExecutionProvider"])
    for _ in range(10):
        session.run(None, feeds)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def rss_kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def onnxruntime_peak(model_path, threads, batch):
    """Run in a child process: how far onnxruntime raises the process's peak
    resident memory above what it was once Python, numpy, onnxruntime and
    the inputs were loaded (weights, arena, workspace; bytes)."""
    feeds = random_inputs(model_path, batch)
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current resident size
    before = rss_kb("VmRSS")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options,
                                   providers=["CPUExecutionProvider"])
    for _ in range(3):
        session.run(None, feeds)
    return (rss_kb("VmHWM") - before) * 1024


def onnxruntime_peak_in_child(model_path, threads, batch):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "import compare_onnxruntime as c; "
            "print(c.onnxruntime_peak(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))")
    r = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__),
                        model_path, str(threads), str(batch)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return int(r.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1,
                        help="value of symbolic (batch) dims")
    parser.add_argument("--iree", metavar="BIN",
                        help="folder with iree-import-onnx, iree-compile and "
                             "iree-benchmark-module: add an IREE column")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    print(f"threads: {args.threads}, repeats: {args.repeats}, batch: {args.batch}, "
          f"onnxruntime {ort.__version__}")
    print()
    iree_head = " IREE median (ms) | Kiln / IREE |" if args.iree else ""
    print("| model | ONNX nodes | Kiln kernels | Kiln compile (s) | Kiln median (ms) "
          "| onnxruntime median (ms) | Kiln / ORT |" + iree_head +
          " Kiln arena + weights (MB) | 2 largest tensors + weights (MB) "
          "| onnxruntime peak RSS growth (MB) |")
    print("| --- " * (10 + (2 if args.iree else 0)) + "|")
    ratios = {"ort": [], "iree": []}
    for model_path in args.models:
        nodes = len(onnx.load(model_path).graph.node)
        with tempfile.TemporaryDirectory() as workdir:
            fixed_path = os.path.join(workdir, "fixed.onnx")
            bound, weights = memory_bound(
                fixed_shape_model(model_path, args.batch, fixed_path))
            compile_s, kiln_ms, kernels, arena = kiln(
                model_path, args.threads, args.repeats, args.batch, workdir)
            iree_cells = ""
            if args.iree:
                iree_ms = iree(model_path, fixed_path, args.threads, args.repeats,
                               args.batch, workdir, args.iree)
                if isinstance(iree_ms, float):
                    ratios["iree"].append(kiln_ms / iree_ms)
                    iree_cells = f" {iree_ms:.4f} | {kiln_ms / iree_ms:.2f} |"
                else:
                    iree_cells = f" {iree_ms} | |"
        ort_ms = onnxruntime(model_path, args.threads, args.repeats, args.batch)
        ort_peak = onnxruntime_peak_in_child(model_path, args.threads, args.batch)
        ratios["ort"].append(kiln_ms / ort_ms)
        name = os.path.relpath(model_path, ROOT)
        peak_cell = f"{ort_peak / 1e6:.2f}" if ort_peak is not None else "failed"
        print(f"| {name} | {nodes} | {kernels} | {compile_s:.2f} | {kiln_ms:.4f} "
              f"| {ort_ms:.4f} | {kiln_ms / ort_ms:.2f} |{iree_cells} "
              f"{(arena + weights) / 1e6:.2f} | {bound / 1e6:.2f} | {peak_cell} |")
        sys.stdout.flush()
    for key, values in ratios.items():
        if values:
            print(f"\ngeometric mean of Kiln / {key}: "
                  f"{statistics.geometric_mean(values):.2f} over {len(values)} models")


if __name__ == "__main__":
    main()
