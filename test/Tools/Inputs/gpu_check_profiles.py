"""How `scripts/gpu-check` profiles kernels with Nsight Compute: with a
stand-in `ncu` that refuses the counters (as under gVisor), the first
profile fails with its message and the rest are not tried; with one that
works, each benchmark's report lands in the report file; with none on
the machine, nothing is run.

    python gpu_check_profiles.py SCRIPTS_DIR WORK_DIR
"""
import io
import os
import stat
import sys
import time

from gpu_check_module import load

gpu_check = load(sys.argv[1])

work = sys.argv[2]
manifest = {"bench": [{"name": bench, "artifact": f"bench/{bench}.kiln"}
                      for _, bench, _, _ in gpu_check.PROFILES]}


def stand_in(body):
    path = os.path.join(work, "ncu")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


deadline = time.time() + 600
for body in ('echo "==ERROR== Failed to initialize the profiler"; exit 1',
             'echo "Section: GPU Speed Of Light Throughput for $*"'):
    gpu_check.find_ncu = lambda path=stand_in(body): path
    report = io.StringIO()
    results = gpu_check.run_profiles(work, manifest, {}, report, deadline)
    print(sorted(results.items()))
    print("report mentions", [name for name, _, _, _ in gpu_check.PROFILES
                              if f"==== {name}: " in report.getvalue()])
gpu_check.find_ncu = lambda: None
print(sorted(gpu_check.run_profiles(work, manifest, {}, io.StringIO(), deadline).items()))
