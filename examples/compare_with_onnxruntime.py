"""Compiles an ONNX model with Kiln, checks it against onnxruntime on the
same inputs, and times both.

    .venv/bin/python examples/compare_with_onnxruntime.py examples/tiny_cnn/model.onnx

Inputs are random (integers in [0, 4) for integer inputs); symbolic dims
are 1 unless given as NAME=1x3x224x224.
"""
import argparse
import time

import numpy as np
import onnxruntime as ort

import kiln


def random_feeds(session, shapes):
    rng = np.random.default_rng(0)
    feeds = {}
    for info in session.get_inputs():
        shape = shapes.get(info.name) or [d if isinstance(d, int) else 1
                                          for d in info.shape]
        dtype = {"tensor(float)": np.float32, "tensor(int64)": np.int64,
                 "tensor(int32)": np.int32, "tensor(bool)": np.bool_,
                 "tensor(float16)": np.float16}[info.type]
        if np.issubdtype(dtype, np.floating):
            feeds[info.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[info.name] = rng.integers(0, 4, shape).astype(dtype)
    return feeds


def best_ms(run, repeats):
    run()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("shapes", nargs="*", help="NAME=1x3x224x224")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    shapes = {s.split("=")[0]: [int(d) for d in s.split("=")[1].split("x")]
              for s in args.shapes}

    reference = ort.InferenceSession(args.model)
    feeds = random_feeds(reference, shapes)
    start = time.perf_counter()
    artifact = kiln.compile(args.model, input_shapes={
        name: value.shape for name, value in feeds.items()})
    print(f"compiled in {time.perf_counter() - start:.2f} s: {artifact}")
    session = kiln.InferenceSession(artifact)

    got = session.run(None, feeds)
    want = reference.run(None, feeds)
    for info, g, w in zip(session.get_outputs(), got, want):
        err = float(np.max(np.abs(g.astype(np.float64) - w))) if g.size else 0
        print(f"{info.name}: {g.dtype} {g.shape}, max abs err {err:.3g}")
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5)

    kiln_ms = best_ms(lambda: session.run(None, feeds), args.repeats)
    ort_ms = best_ms(lambda: reference.run(None, feeds), args.repeats)
    print(f"kiln {kiln_ms:.3f} ms, onnxruntime {ort_ms:.3f} ms "
          f"(best of {args.repeats}, this machine's default threads)")


if __name__ == "__main__":
    main()
