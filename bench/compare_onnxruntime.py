#!/usr/bin/env python3
"""Compile time and latency of Kiln beside onnxruntime, on this machine's CPU.

For each model: times `kiln-compile`, runs `kiln-bench` (median over repeats
after warm-up) and onnxruntime's CPU provider with the same thread count and
the same random inputs' shapes, and prints a Markdown table.

Usage: .venv/bin/python bench/compare_onnxruntime.py [--threads N] [--repeats R] MODEL.onnx...
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
    return compile_s, median, kernels


def onnxruntime(model_path, threads, repeats, batch):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options,
                                   providers=["CPUExecutionProvider"])
    feeds = random_inputs(model_path, batch)
    for _ in range(10):
        session.run(None, feeds)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1,
                        help="value of symbolic (batch) dims")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    print(f"threads: {args.threads}, repeats: {args.repeats}, batch: {args.batch}, "
          f"onnxruntime {ort.__version__}")
    print()
    print("| model | ONNX nodes | Kiln kernels | Kiln compile (s) | Kiln median (ms) "
          "| onnxruntime median (ms) | Kiln / ORT |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for model_path in args.models:
        nodes = len(onnx.load(model_path).graph.node)
        with tempfile.TemporaryDirectory() as workdir:
            compile_s, kiln_ms, kernels = kiln(model_path, args.threads,
                                               args.repeats, args.batch, workdir)
        ort_ms = onnxruntime(model_path, args.threads, args.repeats, args.batch)
        name = os.path.relpath(model_path, ROOT)
        print(f"| {name} | {nodes} | {kernels} | {compile_s:.2f} | {kiln_ms:.4f} "
              f"| {ort_ms:.4f} | {kiln_ms / ort_ms:.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
