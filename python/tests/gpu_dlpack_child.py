"""Run by test_kiln.py's GPU DLPack test in a process of its own whose
library path holds the fake CUDA driver (runtime/test/FakeCudaDriver.cpp):
GPU tensors in and out of a cuda session through DLPack. The fake driver's
device memory is host memory, so a "CUDA" tensor here is a NumPy array's
memory described to DLPack as device memory (kDLCUDA, GPU 0)."""
import ctypes
import sys

import numpy as np

import kiln


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype = ctypes.py_object
_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class CudaTensor:
    """A float32 array's memory presented through DLPack as CUDA memory."""

    def __init__(self, array, device_id=0):
        self.array = np.ascontiguousarray(array, dtype=np.float32)
        self.device_id = device_id
        self._kept = []

    def __dlpack_device__(self):
        return (2, self.device_id)  # kDLCUDA

    def __dlpack__(self, **kwargs):
        shape = (ctypes.c_int64 * self.array.ndim)(*self.array.shape)
        managed = DLManagedTensor()
        managed.dl_tensor = DLTensor(
            self.array.ctypes.data, DLDevice(2, self.device_id),
            self.array.ndim, DLDataType(2, 32, 1), shape, None, 0)
        self._kept += [shape, managed]
        return _capsule(ctypes.addressof(managed), b"dltensor", None)


artifact, cpu_artifact = sys.argv[1], sys.argv[2]
x = np.arange(32, dtype=np.float32).reshape(4, 8)
session = kiln.InferenceSession(artifact, device="cuda")

# In from GPU memory, out to the host.
[y] = session.run(None, {"x": CudaTensor(x)})
np.testing.assert_array_equal(y, x)

# In and out in GPU memory; the input is read again at each run.
out = CudaTensor(np.zeros((4, 8), np.float32))
source = CudaTensor(x)
session.run_into({"y": out}, {"x": source})
np.testing.assert_array_equal(out.array, x)
source.array[1, 2] = -5.0
session.run_into({"y": out}, {"x": source})
assert out.array[1, 2] == -5.0

# Misuse: another GPU, another shape, a CPU session, a host destination.
for bad, message in [
        (lambda: session.run(None, {"x": CudaTensor(x, device_id=1)}),
         "input 'x' is on GPU 1; sessions run on GPU 0"),
        (lambda: session.run(None, {"x": CudaTensor(x[:2])}),
         "input 'x' expects shape [4,8], got [2,8]"),
        (lambda: kiln.InferenceSession(cpu_artifact).run(None, {"x": CudaTensor(x)}),
         "device memory needs a model compiled for a GPU; this model runs on "
         "the CPU"),
        (lambda: session.run_into({"y": np.zeros((4, 8), np.float32)}, {"x": x}),
         "output 'y''s destination is not in CUDA or ROCm memory")]:
    try:
        bad()
    except kiln.KilnError as e:
        assert message in str(e), (message, str(e))
    else:
        raise AssertionError("no error: " + message)
print("gpu dlpack: ok")
