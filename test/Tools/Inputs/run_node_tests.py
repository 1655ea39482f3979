#!/usr/bin/env python3
"""Compiles ONNX backend node tests with extra kiln-compile flags and runs
each against its reference outputs (kiln-run --expected), one line per
test: `NAME: OK` or `NAME: FAILED` with kiln's message.

usage: run_node_tests.py NODE_DIR WORK_DIR --flags="..." TEST...
"""
import argparse
import os
import shlex
import subprocess
import sys


def run(node_dir, work_dir, flags, name):
    test_dir = os.path.join(node_dir, name)
    data = os.path.join(test_dir, "test_data_set_0")
    artifact = os.path.join(work_dir, name + ".kiln")
    compile_cmd = ["kiln-compile", os.path.join(test_dir, "model.onnx"),
                   "-o", artifact] + flags
    result = subprocess.run(compile_cmd, capture_output=True, text=True)
    if result.returncode != 0:
        return "FAILED to compile: " + result.stderr.strip()
    run_cmd = ["kiln-run", artifact]
    for kind, prefix in (("--input", "input_"), ("--expected", "output_")):
        files = sorted(f for f in os.listdir(data) if f.startswith(prefix))
        for f in files:
            run_cmd += [kind, "@" + os.path.join(data, f)]
    result = subprocess.run(run_cmd, capture_output=True, text=True)
    if result.returncode != 0:
        return "FAILED: " + (result.stderr + result.stdout).strip()
    return "OK"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("node_dir")
    parser.add_argument("work_dir")
    parser.add_argument("--flags", default="")
    parser.add_argument("tests", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    failed = 0
    for name in args.tests:
        status = run(args.node_dir, args.work_dir, shlex.split(args.flags), name)
        failed += status != "OK"
        print(f"{name}: {status}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
