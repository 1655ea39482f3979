//===- HipDriver.cpp - load AMD's HIP runtime at run time -----------------===//
#include "HipDriver.h"

#include <dlfcn.h>
#include <mutex>

using namespace kiln;
using cu::DevicePtr;
using cu::Result;

namespace {

// The HIP entry points whose shapes differ from the CUDA driver's.
struct HipOnly {
  Result (*malloc)(void **, size_t);
  Result (*free)(void *);
  Result (*hostMalloc)(void **, size_t, unsigned);
  Result (*memcpyHtoD)(void *, void *, size_t);
  Result (*memsetD32)(void *, int, size_t);
  Result (*memcpyHtoDAsync)(void *, void *, size_t, cu::Stream);
  Result (*memcpyDtoHAsync)(void *, void *, size_t, cu::Stream);
  Result (*memcpyDtoDAsync)(void *, void *, size_t, cu::Stream);
  Result (*moduleGetGlobal)(void **, size_t *, cu::Module, const char *);
  const char *(*errorName)(Result);
  const char *(*errorString)(Result);
};
HipOnly hipOnly;

void *pointer(DevicePtr p) { return reinterpret_cast<void *>(uintptr_t(p)); }

Result memAlloc(DevicePtr *p, size_t bytes) {
  void *v = nullptr;
  Result r = hipOnly.malloc(&v, bytes);
  *p = DevicePtr(uintptr_t(v));
  return r;
}
Result memFree(DevicePtr p) { return hipOnly.free(pointer(p)); }
Result memAllocHost(void **p, size_t bytes) {
  return hipOnly.hostMalloc(p, bytes, 0);
}
Result memcpyHtoD(DevicePtr dst, const void *src, size_t bytes) {
  return hipOnly.memcpyHtoD(pointer(dst), const_cast<void *>(src), bytes);
}
Result memsetD32(DevicePtr dst, unsigned value, size_t count) {
  return hipOnly.memsetD32(pointer(dst), int(value), count);
}
Result memcpyHtoDAsync(DevicePtr dst, const void *src, size_t bytes,
                       cu::Stream stream) {
  return hipOnly.memcpyHtoDAsync(pointer(dst), const_cast<void *>(src), bytes,
                                 stream);
}
Result memcpyDtoHAsync(void *dst, DevicePtr src, size_t bytes,
                       cu::Stream stream) {
  return hipOnly.memcpyDtoHAsync(dst, pointer(src), bytes, stream);
}
Result memcpyDtoDAsync(DevicePtr dst, DevicePtr src, size_t bytes,
                       cu::Stream stream) {
  return hipOnly.memcpyDtoDAsync(pointer(dst), pointer(src), bytes, stream);
}
Result moduleGetGlobal(DevicePtr *p, size_t *bytes, cu::Module module,
                       const char *name) {
  void *v = nullptr;
  Result r = hipOnly.moduleGetGlobal(&v, bytes, module, name);
  *p = DevicePtr(uintptr_t(v));
  return r;
}
Result getErrorName(Result r, const char **name) {
  *name = hipOnly.errorName(r);
  return 0;
}
Result getErrorString(Result r, const char **text) {
  *text = hipOnly.errorString(r);
  return 0;
}

struct Loaded {
  cu::Driver driver{};
  std::string error;
  bool ok = false;
};

template <typename Fn>
bool resolve(void *handle, const char *name, Fn &fn, std::string &missing) {
  fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (!fn)
    missing += missing.empty() ? name : std::string(", ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  void *handle = nullptr;
  std::string why;
  // The unversioned name needs the -dev package; ROCm 6 and 5 ship these.
  for (const char *name :
       {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
    if ((handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)))
      break;
    const char *e = ::dlerror();
    if (why.empty() && e)
      why = e;
  }
  if (!handle) {
    l.error = "no HIP runtime: cannot load libamdhip64.so (" +
              (why.empty() ? std::string("not found") : why) + ")";
    return l;
  }
  cu::Driver &d = l.driver;
  std::string missing;
  bool all = true;
#define KILN_RESOLVE(field, name) all &= resolve(handle, name, d.field, missing)
#define KILN_RESOLVE_HIP(field, name)                                          \
  all &= resolve(handle, name, hipOnly.field, missing)
  KILN_RESOLVE(init, "hipInit");
  KILN_RESOLVE(deviceGetCount, "hipGetDeviceCount");
  KILN_RESOLVE(deviceGet, "hipDeviceGet");
  KILN_RESOLVE(deviceGetAttribute, "hipDeviceGetAttribute");
  KILN_RESOLVE(deviceGetName, "hipDeviceGetName");
  KILN_RESOLVE(primaryCtxRetain, "hipDevicePrimaryCtxRetain");
  KILN_RESOLVE(primaryCtxRelease, "hipDevicePrimaryCtxRelease");
  KILN_RESOLVE(ctxSetCurrent, "hipCtxSetCurrent");
  KILN_RESOLVE(streamCreate, "hipStreamCreateWithFlags");
  KILN_RESOLVE(streamDestroy, "hipStreamDestroy");
  KILN_RESOLVE(streamSynchronize, "hipStreamSynchronize");
  KILN_RESOLVE(memGetInfo, "hipMemGetInfo");
  KILN_RESOLVE(memFreeHost, "hipHostFree");
  KILN_RESOLVE(moduleLoadData, "hipModuleLoadData");
  KILN_RESOLVE(moduleUnload, "hipModuleUnload");
  KILN_RESOLVE(moduleGetFunction, "hipModuleGetFunction");
  KILN_RESOLVE(launchKernel, "hipModuleLaunchKernel");
  KILN_RESOLVE(streamBeginCapture, "hipStreamBeginCapture");
  KILN_RESOLVE(streamEndCapture, "hipStreamEndCapture");
  KILN_RESOLVE(graphInstantiateWithFlags, "hipGraphInstantiateWithFlags");
  KILN_RESOLVE(graphLaunch, "hipGraphLaunch");
  KILN_RESOLVE(graphExecDestroy, "hipGraphExecDestroy");
  KILN_RESOLVE(graphDestroy, "hipGraphDestroy");
  KILN_RESOLVE(eventCreate, "hipEventCreateWithFlags");
  KILN_RESOLVE(eventRecord, "hipEventRecord");
  KILN_RESOLVE(eventSynchronize, "hipEventSynchronize");
  KILN_RESOLVE(eventElapsedTime, "hipEventElapsedTime");
  KILN_RESOLVE(eventDestroy, "hipEventDestroy");
  KILN_RESOLVE_HIP(malloc, "hipMalloc");
  KILN_RESOLVE_HIP(free, "hipFree");
  KILN_RESOLVE_HIP(hostMalloc, "hipHostMalloc");
  KILN_RESOLVE_HIP(memcpyHtoD, "hipMemcpyHtoD");
  KILN_RESOLVE_HIP(memsetD32, "hipMemsetD32");
  KILN_RESOLVE_HIP(memcpyHtoDAsync, "hipMemcpyHtoDAsync");
  KILN_RESOLVE_HIP(memcpyDtoHAsync, "hipMemcpyDtoHAsync");
  KILN_RESOLVE_HIP(memcpyDtoDAsync, "hipMemcpyDtoDAsync");
  KILN_RESOLVE_HIP(moduleGetGlobal, "hipModuleGetGlobal");
  KILN_RESOLVE_HIP(errorName, "hipGetErrorName");
  KILN_RESOLVE_HIP(errorString, "hipGetErrorString");
#undef KILN_RESOLVE
#undef KILN_RESOLVE_HIP
  // Optional: only kernel resources depend on them.
  std::string optionalMissing;
  resolve(handle, "hipFuncGetAttribute", d.funcGetAttribute, optionalMissing);
  resolve(handle, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
          d.occupancyMaxActiveBlocksPerMultiprocessor, optionalMissing);
  if (!all) {
    l.error = "HIP runtime too old: libamdhip64 lacks " + missing;
    return l;
  }
  d.memAlloc = memAlloc;
  d.memFree = memFree;
  d.memAllocHost = memAllocHost;
  d.memcpyHtoD = memcpyHtoD;
  d.memsetD32 = memsetD32;
  d.memcpyHtoDAsync = memcpyHtoDAsync;
  d.memcpyDtoHAsync = memcpyDtoHAsync;
  d.memcpyDtoDAsync = memcpyDtoDAsync;
  d.moduleGetGlobal = moduleGetGlobal;
  d.getErrorName = getErrorName;
  d.getErrorString = getErrorString;
  if (Result r = d.init(0)) {
    l.error = "no HIP runtime: hipInit failed with " + cu::describe(d, r);
    return l;
  }
  l.ok = true;
  return l;
}

} // namespace

const cu::Driver *hip::loadDriver(std::string &error) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}
