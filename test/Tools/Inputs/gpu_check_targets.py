"""Judges one made-up run against the NVIDIA issue's targets the way
`scripts/gpu-check` does at the end of a GPU check; prints the rows.

    python gpu_check_targets.py SCRIPTS_DIR
"""
import sys

from gpu_check_module import load

gpu_check = load(sys.argv[1])

manifest = {"bench": [
    {"name": "softmax", "group": "micro", "kind": "bandwidth"},
    {"name": "layernorm", "group": "micro", "kind": "bandwidth"},
    {"name": "matmul_f16_4096", "group": "micro", "kind": "flops", "dtype": "float16"},
    {"name": "matmul_f16_4096_wgmma", "group": "micro-variant", "kind": "flops",
     "dtype": "float16", "variant_of": "matmul_f16_4096"},
    {"name": "matmul_f32_4096", "group": "micro", "kind": "flops", "dtype": "float32"},
    {"name": "resnet50_b1", "group": "model"},
    {"name": "bert_encoder_b32", "group": "model"},
]}
kiln = {
    "softmax": {"gb_per_s": 3400.0},
    "layernorm": {"gb_per_s": 2000.0},
    "matmul_f16_4096": {"tflop_per_s": 400.0},
    "matmul_f16_4096_wgmma": {"tflop_per_s": 600.0},
    "matmul_f32_4096": {"tflop_per_s": 30.0},
    "resnet50_b1": {"median_ms": 3.0, "overhead_per_dispatch_us": 2.1},
    "bert_encoder_b32": {"error": "timed out after 180 s"},
}
torch_res = {"copy_gb_per_s": 4000.0,
             "micro": {"matmul_f16_4096": {"tflop_per_s": 700.0}},
             "models": {"resnet50_b1": {"eager_ms": 3.5, "compiled_ms": 2.9},
                        "bert_encoder_b32": {"eager_ms": 20.0}}}
for r in gpu_check.issue_targets(manifest, kiln, torch_res):
    print(f"{r['benchmark']}: {r['verdict']}: {r['measured']} ({r['goal']})")
# On the CPU dry run nothing is judged, not even Kiln's own overhead.
print(sorted({r["verdict"] for r in gpu_check.issue_targets(
    manifest, kiln, {"error": "PyTorch comparison runs on device cuda only"},
    on_gpu=False)}))
