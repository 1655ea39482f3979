#!/usr/bin/env python3
"""Kiln beside onnxruntime over a model corpus, on this machine's CPU.

For each folder of the corpus (model.onnx and test_data_set_0, as
scripts/make_real_models.py writes them): compiles the model for the
input shapes of data set 0, times it with `kiln-bench` on those inputs and
onnxruntime's CPU provider on the same inputs with the same thread count
(medians after warm-up, Kiln and onnxruntime back to back per model), and
prints a Markdown table with Kiln / onnxruntime per model and their
geometric mean. Then each kernel's achieved GFLOP/s and GB/s (kiln-bench's
per-kernel report) against this machine's peaks, measured here (a float32
matmul with numpy's BLAS, a large array copy), and the ten kernels that
lose the most time: time x (1 - the larger of their two roofline
fractions).

Usage: .venv/bin/python bench/corpus.py [--threads N] [--repeats R] CORPUS_DIR...
  (CORPUS_DIR: build/real-models, test/real-models, or single model folders)
"""
import argparse
import glob
import math
import os
import re
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

from compare_onnxruntime import onnxruntime_median_ms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def model_folders(paths):
    folders = []
    for path in paths:
        if os.path.isfile(os.path.join(path, "model.onnx")):
            folders.append(path)
        else:
            folders += sorted(os.path.dirname(p) for p in
                              glob.glob(os.path.join(path, "*", "model.onnx")))
    return folders


def data_set(folder):
    """[(name, array)] of test_data_set_0's inputs, in order."""
    inputs = []
    for path in sorted(glob.glob(os.path.join(folder, "test_data_set_0", "input_*.pb")),
                       key=lambda p: int(re.search(r"input_(\d+)", p).group(1))):
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        inputs.append((tensor.name, path, numpy_helper.to_array(tensor)))
    return inputs


def kiln(folder, inputs, threads, repeats, workdir):
    """(median ms, [(kernel, ms, GFLOP/s, GB/s)]) or an error string."""
    artifact = os.path.join(workdir, "model.kiln")
    shapes = ["--input-shape=%s=%s" % (name, "x".join(map(str, array.shape)))
              for name, _, array in inputs]
    r = subprocess.run([os.path.join(BIN, "kiln-compile"), os.path.join(folder, "model.onnx"),
                        "-o", artifact] + shapes, capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["compile failed"])[0]
    args = [os.path.join(BIN, "kiln-bench"), artifact, "--threads", str(threads),
            "--repeats", str(repeats), "--warmup", "10"]
    for name, path, _ in inputs:
        args += ["--input", "%s=@%s" % (name, path)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["run failed"])[0]
    median = float(re.search(r"median: ([0-9.]+) ms", r.stdout).group(1))
    kernels = []
    for line in r.stdout.splitlines():
        m = re.match(r"(dispatch_\S+)\s+\d+\s+([0-9.]+)\s+[0-9.]+%\s+(\S+)\s+(\S+)", line)
        if m:
            rate = lambda s: float(s) if s != "-" else 0.0
            kernels.append((m.group(1), float(m.group(2)), rate(m.group(3)), rate(m.group(4))))
    return median, kernels


def onnxruntime(folder, inputs, threads, repeats):
    feeds = {name: array for name, _, array in inputs}
    return onnxruntime_median_ms(os.path.join(folder, "model.onnx"), feeds,
                                 threads, repeats)


def machine_peaks(threads):
    """(GFLOP/s of a float32 matmul, GB/s of a copy), measured here."""
    n = 1024
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    a @ a
    start = time.perf_counter()
    for _ in range(5):
        a @ a
    flops = 5 * 2 * n ** 3 / (time.perf_counter() - start) / 1e9
    src = np.ones(64 * 1024 * 1024 // 4, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    start = time.perf_counter()
    for _ in range(5):
        np.copyto(dst, src)
    bandwidth = 5 * 2 * src.nbytes / (time.perf_counter() - start) / 1e9
    return flops, bandwidth


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", nargs="+")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    peak_flops, peak_bandwidth = machine_peaks(args.threads)
    print("Machine peaks (measured here): %.1f GFLOP/s (numpy float32 matmul), "
          "%.1f GB/s (copy); %d threads\n" % (peak_flops, peak_bandwidth, args.threads))
    print("| model | Kiln ms | onnxruntime ms | Kiln / onnxruntime |")
    print("| --- | ---: | ---: | ---: |")
    ratios, losses = [], []
    for folder in model_folders(args.corpus):
        name = os.path.basename(os.path.normpath(folder))
        inputs = data_set(folder)
        if not inputs:
            continue
        with tempfile.TemporaryDirectory() as workdir:
            result = kiln(folder, inputs, args.threads, args.repeats, workdir)
        if isinstance(result, str):
            print("| %s | %s | | |" % (name, result.replace("|", "/")[:80]))
            continue
        median, kernels = result
        try:
            reference = onnxruntime(folder, inputs, args.threads, args.repeats)
        except Exception as error:  # an op this onnxruntime lacks
            print("| %s | %.3f | onnxruntime cannot run it: %s | |"
                  % (name, median, str(error).replace("|", "/")[:80]), flush=True)
            continue
        ratios.append(median / reference)
        print("| %s | %.3f | %.3f | %.2f |" % (name, median, reference, median / reference),
              flush=True)
        for kernel, ms, gflops, gbs in kernels:
            fraction = max(gflops / peak_flops, gbs / peak_bandwidth)
            losses.append((ms * (1 - min(fraction, 1)), name, kernel, ms, gflops, gbs, fraction))
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print("\nGeometric mean of Kiln / onnxruntime over %d models: %.2f; worst %.2f"
              % (len(ratios), geomean, max(ratios)))
    print("\nThe ten kernels that lose the most time (time x (1 - roofline fraction)):\n")
    print("| model | kernel | ms | GFLOP/s | GB/s | of roofline |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for _, name, kernel, ms, gflops, gbs, fraction in sorted(losses, reverse=True)[:10]:
        print("| %s | %s | %.3f | %.1f | %.1f | %.1f%% |" % (name, kernel, ms, gflops, gbs,
                                                          100 * fraction))


if __name__ == "__main__":
    main()
