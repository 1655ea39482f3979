#!/usr/bin/env python3
"""A dynamic-batch artifact against fixed-batch ones and onnxruntime.

For each model (its first input's leading dim symbolic) and batch N: the
median latency of an artifact compiled for batch N (`kiln-compile
--input-shape`), of dynamic-batch artifacts (`--dynamic-batch`) running N in
chunks of 1, of 8, and in pieces of chunks 8, 4, 2 and 1 (`--batch-chunks`),
and of onnxruntime's CPU provider, all with the same
thread count, printed as a Markdown table with the dynamic/fixed ratios.
Inputs: where the model's folder holds test_data_set_0, its inputs, each
one with a symbolic leading dim repeated or cut to N along it (token ids
and masks stay valid); else the first input, random.

Usage: .venv/bin/python bench/dynamic_batch.py [--threads N] [--repeats R]
           [--batches 1,5,8] MODEL.onnx...
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
import onnx.numpy_helper
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def batched_inputs(model_path):
    """The graph inputs whose leading dim is symbolic, and the first input."""
    model = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    batched = [i.name for i in inputs
               if i.type.tensor_type.shape.dim
               and not i.type.tensor_type.shape.dim[0].HasField("dim_value")]
    first = inputs[0]
    dims = [d.dim_value for d in first.type.tensor_type.shape.dim][1:]
    return [i.name for i in inputs], batched, first.name, dims


def feeds_for(model_path, batch, work):
    """{name: array} for a run at `batch`, and the .npy file of each."""
    names, batched, first, dims = batched_inputs(model_path)
    data = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    feeds = {}
    if os.path.isdir(data):
        for i, name in enumerate(names):
            tensor = onnx.TensorProto()
            with open(os.path.join(data, f"input_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            value = onnx.numpy_helper.to_array(tensor)
            if name in batched:
                value = np.take(value, np.arange(batch) % value.shape[0], axis=0)
            feeds[name] = np.ascontiguousarray(value)
    else:
        feeds[first] = np.random.default_rng(0).uniform(
            -1, 1, [batch] + dims).astype(np.float32)
    files = {}
    for name, value in feeds.items():
        files[name] = os.path.join(work, f"b{batch}.{len(files)}.npy")
        np.save(files[name], value)
    return feeds, files, batched or [first]


# The dynamic-batch artifacts: their label, chunk and --batch-chunks.
DYNAMIC = [("chunks of 1", 1, ""), ("chunks of 8", 8, ""),
           ("chunks of 8, 4, 2, 1", 8, "1,2,4")]


def compile_kiln(model, out, feeds, batched, batch, dynamic, chunks=""):
    command = [os.path.join(BIN, "kiln-compile"), model, "-o", out]
    for name in batched:
        shape = [batch] + list(feeds[name].shape[1:])
        command.append(f"--input-shape={name}=" + "x".join(map(str, shape)))
    if dynamic:
        command.append("--dynamic-batch")
    if chunks:
        command.append("--batch-chunks=" + chunks)
    subprocess.run(command, check=True)


def bench_kiln(artifact, files, threads, repeats):
    """kiln-bench's median, in milliseconds."""
    done = subprocess.run(
        [os.path.join(BIN, "kiln-bench"), artifact, f"--threads={threads}",
         f"--repeats={repeats}", "--warmup=3"] +
        [f"--input={name}=@{path}" for name, path in files.items()],
        check=True, capture_output=True, text=True)
    match = re.search(r"median: ([0-9.]+) ms", done.stdout)
    if not match:
        sys.exit("no median in kiln-bench's output:\n" + done.stdout)
    return float(match.group(1))


def bench_onnxruntime(model, feeds, threads, repeats):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model, options,
                                   providers=["CPUExecutionProvider"])
    for _ in range(3):
        session.run(None, feeds)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--batches", default="1,5,8")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    print("| model | batch | fixed batch | " +
          " | ".join("dynamic, " + label for label, _, _ in DYNAMIC) +
          " | onnxruntime |")
    print("| --- " * (len(DYNAMIC) + 4) + "|")
    with tempfile.TemporaryDirectory(prefix="kiln-dynamic-") as work:
        for model in args.models:
            name = os.path.basename(os.path.dirname(model))
            dynamic = []
            for i, (_, chunk, chunks) in enumerate(DYNAMIC):
                feeds, _, batched = feeds_for(model, chunk, work)
                dynamic.append(os.path.join(work, f"{name}.dynamic{i}.kiln"))
                compile_kiln(model, dynamic[-1], feeds, batched, chunk, True,
                             chunks)
            for batch in batches:
                feeds, files, batched = feeds_for(model, batch, work)
                fixed = os.path.join(work, f"{name}.b{batch}.kiln")
                compile_kiln(model, fixed, feeds, batched, batch, False)
                t_fixed = bench_kiln(fixed, files, args.threads, args.repeats)
                cells = []
                for artifact in dynamic:
                    t = bench_kiln(artifact, files, args.threads, args.repeats)
                    cells.append(f"{t:.3f} ms ({t / t_fixed:.2f}x)")
                t_ort = bench_onnxruntime(model, feeds, args.threads,
                                          args.repeats)
                print(f"| {name} | {batch} | {t_fixed:.3f} ms | " +
                      " | ".join(cells) + f" | {t_ort:.3f} ms |", flush=True)


if __name__ == "__main__":
    main()
