"""scripts/gpu-check (a script without a .py suffix) loaded as a module, for
the test inputs beside this file:

    from gpu_check_module import load
    gpu_check = load(SCRIPTS_DIR)
"""
import importlib.machinery
import importlib.util
import os


def load(scripts):
    loader = importlib.machinery.SourceFileLoader(
        "gpu_check", os.path.join(scripts, "gpu-check"))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
