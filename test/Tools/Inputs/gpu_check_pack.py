"""Packs a folder the way `scripts/gpu-check --prepare` does and unpacks it
the way the check on the GPU machine does; prints what it finds.

    python gpu_check_pack.py SCRIPTS_DIR WORK_DIR
"""
import os
import sys

from gpu_check_module import load

scripts, work = sys.argv[1], sys.argv[2]
gpu_check = load(scripts)

folder = os.path.join(work, "prepared")
os.makedirs(os.path.join(folder, "suites", "node", "data"))
files = {
    "manifest.json": b'{"target": "cuda", "suites": {}, "bench": []}',
    "bin/kiln-run": bytes(range(256)) * 64,
    "suites/node/data/input_0.pb": b"\x08\x01" * 5000,
}
for name, data in files.items():
    os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)

print("loose folder runs from itself:", gpu_check.unpacked(folder) == folder)
size = gpu_check.pack_folder(folder)
print("after packing:", sorted(os.listdir(folder)))
print("packed smaller:", size < sum(len(d) for d in files.values()))
run_from = gpu_check.unpacked(folder)
print("runs from another folder:", run_from != folder)
same = all(open(os.path.join(run_from, n), "rb").read() == d for n, d in files.items())
print("same files:", same)
