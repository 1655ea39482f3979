# Lit configuration for Kiln: dialect, importer, pass and target tests.
import os
import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["models", "Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root)

config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%models", os.path.join(config.kiln_source_dir, "test", "models")))
config.substitutions.append(("%import_models", os.path.join(config.kiln_source_dir, "test", "Import", "models")))
config.substitutions.append(("%examples", os.path.join(config.kiln_source_dir, "examples")))
config.substitutions.append(("%onnx_node", "/usr/share/libonnx-testdata/data/node"))

# GPU tests: "cuda-driver" when this machine can load the CUDA driver (tests
# that need a GPU REQUIRES it; the no-driver error test is UNSUPPORTED on it).
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
# "hip-runtime" likewise for AMD GPUs (libamdhip64, as the runtime loads it).
for hip in ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"):
    try:
        ctypes.CDLL(hip)
        config.available_features.add("hip-runtime")
        break
    except OSError:
        pass

# "cpu-avx2", "cpu-avx-vnni": this machine runs artifacts built for
# --cpu=x86-64-v3 and --cpu=alderlake (the int8 dot products of each ISA).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((line.split(":", 1)[1].split() for line in cpuinfo
                      if line.startswith("flags")), [])
except OSError:
    flags = []
if "avx2" in flags and "fma" in flags:
    config.available_features.add("cpu-avx2")
    if "avx_vnni" in flags:
        config.available_features.add("cpu-avx-vnni")

# "onnxruntime": the project's Python venv (scripts/setup.sh) has onnx and
# onnxruntime, which tests of the Python tools (scripts/kiln-bisect) need;
# %python runs that venv's interpreter and %scripts names scripts/.
import subprocess
venv_python = os.path.join(config.kiln_source_dir, ".venv", "bin", "python")
config.substitutions.append(("%python", venv_python))
config.substitutions.append(("%scripts", os.path.join(config.kiln_source_dir, "scripts")))
if os.path.exists(venv_python) and subprocess.run(
        [venv_python, "-c", "import onnx, onnxruntime"],
        capture_output=True).returncode == 0:
    config.available_features.add("onnxruntime")

# "sass": ptxas from the CUDA toolkit and nvdisasm (nvidia-cuda-nvdisasm in
# the venv), which scripts/sass-survey needs to count a kernel's SASS.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
if os.access(os.path.join(cuda_home, "bin", "ptxas"), os.X_OK) and \
        os.path.exists(venv_python) and subprocess.run(
            [venv_python, "-c", "import nvidia, os, sys; sys.exit(not any("
             "os.access(os.path.join(p, 'cu13', 'bin', 'nvdisasm'), os.X_OK) "
             "for p in nvidia.__path__))"], capture_output=True).returncode == 0:
    config.available_features.add("sass")
