//===- CudaDriver.cpp - load the CUDA driver API at run time --------------===//
#include "CudaDriver.h"

#include <dlfcn.h>
#include <mutex>

using namespace kiln;
using namespace kiln::cu;

namespace {

// cuGetProcAddress_v2 (CUDA 12+); the last argument reports why a symbol
// was not found.
using GetProcAddressV2 = Result (*)(const char *, void **, int, uint64_t,
                                    int *);
using GetProcAddressV1 = Result (*)(const char *, void **, int, uint64_t);

// The ABI version the entry points are requested at: CUDA 12.0 names (so
// "cuMemAlloc" resolves to cuMemAlloc_v2, and so on).
constexpr int kApiVersion = 12000;

struct Loaded {
  Driver driver{};
  std::string error;
  bool ok = false;
};

template <typename Fn>
bool resolve(GetProcAddressV2 v2, GetProcAddressV1 v1, const char *name, Fn &fn,
             std::string &missing) {
  void *p = nullptr;
  Result r =
      v2 ? v2(name, &p, kApiVersion, 0, nullptr) : v1(name, &p, kApiVersion, 0);
  if (r != 0 || !p) {
    missing += missing.empty() ? name : std::string(", ") + name;
    return false;
  }
  fn = reinterpret_cast<Fn>(p);
  return true;
}

Loaded load() {
  Loaded l;
  void *handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    l.error = std::string("no CUDA driver: cannot load libcuda.so.1 (") +
              (why ? why : "not found") + ")";
    return l;
  }
  auto v2 = reinterpret_cast<GetProcAddressV2>(
      ::dlsym(handle, "cuGetProcAddress_v2"));
  auto v1 =
      reinterpret_cast<GetProcAddressV1>(::dlsym(handle, "cuGetProcAddress"));
  if (!v2 && !v1) {
    l.error = "no CUDA driver: libcuda.so.1 has no cuGetProcAddress (driver "
              "older than CUDA 11.3)";
    return l;
  }
  Driver &d = l.driver;
  std::string missing;
  bool all = true;
#define KILN_RESOLVE(field, name) all &= resolve(v2, v1, name, d.field, missing)
  KILN_RESOLVE(init, "cuInit");
  KILN_RESOLVE(deviceGetCount, "cuDeviceGetCount");
  KILN_RESOLVE(deviceGet, "cuDeviceGet");
  KILN_RESOLVE(deviceGetAttribute, "cuDeviceGetAttribute");
  KILN_RESOLVE(deviceGetName, "cuDeviceGetName");
  KILN_RESOLVE(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  KILN_RESOLVE(primaryCtxRelease, "cuDevicePrimaryCtxRelease");
  KILN_RESOLVE(ctxSetCurrent, "cuCtxSetCurrent");
  KILN_RESOLVE(streamCreate, "cuStreamCreate");
  KILN_RESOLVE(streamDestroy, "cuStreamDestroy");
  KILN_RESOLVE(streamSynchronize, "cuStreamSynchronize");
  KILN_RESOLVE(memAlloc, "cuMemAlloc");
  KILN_RESOLVE(memFree, "cuMemFree");
  KILN_RESOLVE(memGetInfo, "cuMemGetInfo");
  KILN_RESOLVE(memAllocHost, "cuMemAllocHost");
  KILN_RESOLVE(memFreeHost, "cuMemFreeHost");
  KILN_RESOLVE(memcpyHtoD, "cuMemcpyHtoD");
  KILN_RESOLVE(memsetD32, "cuMemsetD32");
  KILN_RESOLVE(memcpyHtoDAsync, "cuMemcpyHtoDAsync");
  KILN_RESOLVE(memcpyDtoHAsync, "cuMemcpyDtoHAsync");
  KILN_RESOLVE(memcpyDtoDAsync, "cuMemcpyDtoDAsync");
  KILN_RESOLVE(moduleLoadData, "cuModuleLoadData");
  KILN_RESOLVE(moduleUnload, "cuModuleUnload");
  KILN_RESOLVE(moduleGetFunction, "cuModuleGetFunction");
  KILN_RESOLVE(moduleGetGlobal, "cuModuleGetGlobal");
  KILN_RESOLVE(funcSetAttribute, "cuFuncSetAttribute");
  KILN_RESOLVE(launchKernel, "cuLaunchKernel");
  KILN_RESOLVE(streamBeginCapture, "cuStreamBeginCapture");
  KILN_RESOLVE(streamEndCapture, "cuStreamEndCapture");
  KILN_RESOLVE(graphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  KILN_RESOLVE(graphLaunch, "cuGraphLaunch");
  KILN_RESOLVE(graphExecDestroy, "cuGraphExecDestroy");
  KILN_RESOLVE(graphDestroy, "cuGraphDestroy");
  KILN_RESOLVE(eventCreate, "cuEventCreate");
  KILN_RESOLVE(eventRecord, "cuEventRecord");
  KILN_RESOLVE(eventSynchronize, "cuEventSynchronize");
  KILN_RESOLVE(eventElapsedTime, "cuEventElapsedTime");
  KILN_RESOLVE(eventDestroy, "cuEventDestroy");
  KILN_RESOLVE(getErrorName, "cuGetErrorName");
  KILN_RESOLVE(getErrorString, "cuGetErrorString");
#undef KILN_RESOLVE
  // Optional: only kernel resources depend on them.
  std::string optionalMissing;
  resolve(v2, v1, "cuFuncGetAttribute", d.funcGetAttribute, optionalMissing);
  resolve(v2, v1, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
          d.occupancyMaxActiveBlocksPerMultiprocessor, optionalMissing);
  if (!all) {
    l.error = "CUDA driver too old: libcuda.so.1 lacks " + missing;
    return l;
  }
  if (Result r = d.init(0)) {
    l.error = "no CUDA driver: cuInit failed with " + describe(d, r);
    return l;
  }
  l.ok = true;
  return l;
}

} // namespace

const Driver *cu::loadDriver(std::string &error) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

std::string cu::describe(const Driver &driver, Result result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.getErrorName)
    driver.getErrorName(result, &name);
  if (driver.getErrorString)
    driver.getErrorString(result, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}
