"""Packs a folder the way `scripts/gpu-check --prepare` does and unpacks it
the way the check on the GPU machine does; prints what it finds.

    python gpu_check_pack.py SCRIPTS_DIR WORK_DIR
"""
import importlib.machinery
import importlib.util
import os
import sys

scripts, work = sys.argv[1], sys.argv[2]
loader = importlib.machinery.SourceFileLoader("gpu_check", os.path.join(scripts, "gpu-check"))
spec = importlib.util.spec_from_loader("gpu_check", loader)
gpu_check = importlib.util.module_from_spec(spec)
loader.exec_module(gpu_check)

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
