//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The runtime links neither libcuda nor the toolkit: a binary built on a
// machine without CUDA must load everywhere and report "no CUDA driver" when
// asked for a GPU. So the driver is dlopen'ed and its entry points resolved
// through cuGetProcAddress, and the few types and constants used are
// declared here (they are part of the driver's stable C ABI).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDADRIVER_H
#define KILN_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {
namespace cu {

using Result = int; // CUresult; 0 is CUDA_SUCCESS
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Stream = struct CUstream_st *;
using Event = struct CUevent_st *;
using Graph = struct CUgraph_st *;
using GraphExec = struct CUgraphExec_st *;

constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
/// CUfunction_attribute values read back after loading (HIP's
/// hipFunction_attribute mirrors them).
constexpr int kFuncAttrSharedSizeBytes = 1;
constexpr int kFuncAttrLocalSizeBytes = 3;
constexpr int kFuncAttrNumRegs = 4;
/// Shared memory a block may declare statically; more is dynamic shared
/// memory, which a kernel takes only after cuFuncSetAttribute raised its
/// maximum.
constexpr unsigned kStaticSharedMemoryBytes = 48 * 1024;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kCaptureModeThreadLocal = 1;
constexpr Result kErrorOutOfMemory = 2;

/// Entry points of the driver, resolved once per process.
struct Driver {
  Result (*init)(unsigned);
  Result (*deviceGetCount)(int *);
  Result (*deviceGet)(Device *, int);
  Result (*deviceGetAttribute)(int *, int, Device);
  Result (*deviceGetName)(char *, int, Device);
  Result (*primaryCtxRetain)(Context *, Device);
  Result (*primaryCtxRelease)(Device);
  Result (*ctxSetCurrent)(Context);
  Result (*streamCreate)(Stream *, unsigned);
  Result (*streamDestroy)(Stream);
  Result (*streamSynchronize)(Stream);
  Result (*memAlloc)(DevicePtr *, size_t);
  Result (*memFree)(DevicePtr);
  Result (*memGetInfo)(size_t *, size_t *);
  Result (*memAllocHost)(void **, size_t);
  Result (*memFreeHost)(void *);
  Result (*memcpyHtoD)(DevicePtr, const void *, size_t);
  Result (*memsetD32)(DevicePtr, unsigned, size_t);
  Result (*memcpyHtoDAsync)(DevicePtr, const void *, size_t, Stream);
  Result (*memcpyDtoHAsync)(void *, DevicePtr, size_t, Stream);
  Result (*memcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Stream);
  Result (*moduleLoadData)(Module *, const void *);
  Result (*moduleUnload)(Module);
  Result (*moduleGetFunction)(Function *, Module, const char *);
  /// A global of a loaded module: its device address and bytes.
  Result (*moduleGetGlobal)(DevicePtr *, size_t *, Module, const char *);
  /// Null for HIP, whose module kernels need no opt-in.
  Result (*funcSetAttribute)(Function, int, int);
  /// What a loaded kernel takes and how many of its blocks a
  /// multiprocessor holds. Optional: null where the driver lacks them
  /// (the session then reports those resources as unknown).
  Result (*funcGetAttribute)(int *, int, Function);
  Result (*occupancyMaxActiveBlocksPerMultiprocessor)(int *, Function, int,
                                                      size_t);
  Result (*launchKernel)(Function, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, unsigned, Stream, void **,
                         void **);
  Result (*streamBeginCapture)(Stream, int);
  Result (*streamEndCapture)(Stream, Graph *);
  Result (*graphInstantiateWithFlags)(GraphExec *, Graph, unsigned long long);
  Result (*graphLaunch)(GraphExec, Stream);
  Result (*graphExecDestroy)(GraphExec);
  Result (*graphDestroy)(Graph);
  Result (*eventCreate)(Event *, unsigned);
  Result (*eventRecord)(Event, Stream);
  Result (*eventSynchronize)(Event);
  Result (*eventElapsedTime)(float *, Event, Event);
  Result (*eventDestroy)(Event);
  Result (*getErrorName)(Result, const char **);
  Result (*getErrorString)(Result, const char **);
};

/// Loads libcuda.so.1 and calls cuInit once. Returns null and sets `error`
/// ("no CUDA driver: ...") when the driver is missing or cannot start.
const Driver *loadDriver(std::string &error);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
std::string describe(const Driver &driver, Result result);

} // namespace cu
} // namespace kiln

#endif
