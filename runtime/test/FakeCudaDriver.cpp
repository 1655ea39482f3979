//===- FakeCudaDriver.cpp - a stand-in libcuda.so.1 for the runtime tests -===//
//
// Built as libcuda.so.1 in its own folder (and, with KILN_FAKE_HIP, as
// libamdhip64.so in another); tests that load it before the runtime looks
// for a driver run the runtime's GPU device on a machine without a GPU. It
// implements the driver entry points the runtime resolves, with device memory
// in host memory, and lets a test make any entry point fail (once or "sticky",
// like a context that faulted) to check that every driver failure becomes a
// clear error. Kernels are not executed: a launch is only counted.
//
// Control functions for the tests (found with dlsym):
//   kiln_fake_cuda_reset()                      forget faults and counters
//   kiln_fake_cuda_fail(entry, nth, code, sticky)
//       the nth next call of `entry` ("cuMemAlloc") returns `code`; with
//       `sticky`, so does every call after it, to any entry point
//   kiln_fake_cuda_set_memory(bytes)           device memory size
//   kiln_fake_cuda_set_shared_memory_optin(bytes)
//       the shared memory a block may opt in to (sm_90's 227 KiB by
//       default); launches with more dynamic shared memory than a kernel
//       was allowed (cuFuncSetAttribute) fail as the driver's do
//   kiln_fake_cuda_first_argument(kernel)      the device pointer the last
//                                              launch (or capture) of
//                                              `kernel` passed first
//   kiln_fake_cuda_count(what)                 "launches", "graph-launches",
//                                              "live-allocations",
//                                              "live-modules", "live-graphs",
//                                              "live-events", "live-streams"
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// The opaque handle types the runtime declares. Entry points use the
// runtime's exact signatures: UBSan checks the type of every indirect call.
namespace kiln::cu {
struct CUctx_st {};
struct CUmod_st {
  std::string image;
  /// The globals cuModuleGetGlobal handed out, by name.
  std::map<std::string, std::vector<uint8_t>> globals;
};
struct CUfunc_st {
  std::string name;
};
struct CUgraph_st {
  int launches = 0;
};
struct CUgraphExec_st {
  int launches = 0;
};
struct CUstream_st {
  CUgraph_st *capturing = nullptr; // launches go here while capturing
};
struct CUevent_st {};
} // namespace kiln::cu

namespace {

using namespace kiln::cu;

constexpr Result kSuccess = 0;
constexpr Result kInvalidValue = 1;
constexpr Result kOutOfMemory = 2;
constexpr Result kInvalidImage = 200;
constexpr Result kNotFound = 500;

struct State {
  std::mutex mu;
  struct Fault {
    int countdown;
    Result code;
    bool sticky;
  };
  std::map<std::string, Fault> faults;
  Result stickyError = kSuccess;
  uint64_t memory = uint64_t(1) << 30;
  uint64_t used = 0;
  std::map<DevicePtr, uint64_t> allocations;
  int launches = 0, graphLaunches = 0, liveModules = 0, liveGraphs = 0,
      liveEvents = 0, liveStreams = 0;
  int sharedMemoryOptin = 227 * 1024;
  /// Per kernel name: the dynamic shared memory cuFuncSetAttribute allowed.
  std::map<std::string, int> dynamicSharedAllowed;
  /// Per kernel name: its first argument at its last launch or capture.
  std::map<std::string, DevicePtr> firstArgument;
};

constexpr int kStaticSharedBytes = 48 * 1024;

State &state() {
  static State s;
  return s;
}

/// Every entry point starts here: a sticky error, or an armed fault.
Result enter(const char *entry) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.stickyError)
    return s.stickyError;
  auto it = s.faults.find(entry);
  if (it == s.faults.end() || --it->second.countdown > 0)
    return kSuccess;
  State::Fault fault = it->second;
  s.faults.erase(it);
  if (fault.sticky)
    s.stickyError = fault.code;
  return fault.code;
}

#define ENTER(name)                                                            \
  if (Result r = enter(name))                                                  \
  return r

Result cuInit(unsigned) { return enter("cuInit"); }

Result cuDeviceGetCount(int *count) {
  ENTER("cuDeviceGetCount");
  *count = 1;
  return kSuccess;
}

Result cuDeviceGet(Device *device, int ordinal) {
  ENTER("cuDeviceGet");
  if (ordinal != 0)
    return kInvalidValue;
  *device = 0;
  return kSuccess;
}

Result cuDeviceGetAttribute(int *value, int attribute, Device) {
  ENTER("cuDeviceGetAttribute");
  if (attribute == kiln::cu::kAttrMaxSharedMemoryPerBlockOptin) {
    std::lock_guard<std::mutex> lock(state().mu);
    *value = state().sharedMemoryOptin;
    return kSuccess;
  }
  *value = attribute == 75 ? 9 : attribute == 76 ? 0 : 1; // sm_90
  return kSuccess;
}

Result cuDeviceGetName(char *name, int length, Device) {
  ENTER("cuDeviceGetName");
  std::strncpy(name, "Fake GPU", size_t(length));
  return kSuccess;
}

CUctx_st primaryContext;
Result cuDevicePrimaryCtxRetain(Context *context, Device) {
  ENTER("cuDevicePrimaryCtxRetain");
  *context = &primaryContext;
  return kSuccess;
}
Result cuDevicePrimaryCtxRelease(Device) {
  return enter("cuDevicePrimaryCtxRelease");
}
Result cuCtxSetCurrent(Context) { return enter("cuCtxSetCurrent"); }

Result cuStreamCreate(Stream *stream, unsigned) {
  ENTER("cuStreamCreate");
  *stream = new CUstream_st;
  std::lock_guard<std::mutex> lock(state().mu);
  ++state().liveStreams;
  return kSuccess;
}
Result cuStreamDestroy(Stream stream) {
  Result r = enter("cuStreamDestroy");
  delete stream->capturing;
  delete stream;
  std::lock_guard<std::mutex> lock(state().mu);
  --state().liveStreams;
  return r;
}
Result cuStreamSynchronize(Stream) { return enter("cuStreamSynchronize"); }

Result allocate(DevicePtr *pointer, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (bytes == 0)
    return kInvalidValue;
  if (bytes > s.memory - s.used)
    return kOutOfMemory;
  void *p = std::calloc(1, bytes);
  if (!p)
    return kOutOfMemory;
  s.used += bytes;
  s.allocations[DevicePtr(uintptr_t(p))] = bytes;
  *pointer = DevicePtr(uintptr_t(p));
  return kSuccess;
}

Result release(DevicePtr pointer) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.allocations.find(pointer);
  if (it == s.allocations.end())
    return kInvalidValue;
  s.used -= it->second;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void *>(uintptr_t(pointer)));
  return kSuccess;
}

Result cuMemAlloc(DevicePtr *pointer, size_t bytes) {
  ENTER("cuMemAlloc");
  return allocate(pointer, bytes);
}
// Frees even with a sticky error, as the real driver does at teardown, so
// that the live-allocation count tells whether the runtime released all.
Result cuMemFree(DevicePtr pointer) {
  Result r = enter("cuMemFree");
  Result freed = release(pointer);
  return r ? r : freed;
}
Result cuMemGetInfo(size_t *free, size_t *total) {
  ENTER("cuMemGetInfo");
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  *free = size_t(s.memory - s.used);
  *total = size_t(s.memory);
  return kSuccess;
}
Result cuMemAllocHost(void **pointer, size_t bytes) {
  ENTER("cuMemAllocHost");
  DevicePtr p = 0;
  Result r = allocate(&p, bytes);
  *pointer = reinterpret_cast<void *>(p);
  return r;
}
Result cuMemFreeHost(void *pointer) {
  Result r = enter("cuMemFreeHost");
  Result freed = release(DevicePtr(uintptr_t(pointer)));
  return r ? r : freed;
}
Result cuMemcpyHtoD(DevicePtr dst, const void *src, size_t bytes) {
  ENTER("cuMemcpyHtoD");
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return kSuccess;
}
Result cuMemsetD32(DevicePtr dst, unsigned value, size_t count) {
  ENTER("cuMemsetD32");
  auto *p = reinterpret_cast<uint32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return kSuccess;
}
Result cuMemcpyHtoDAsync(DevicePtr dst, const void *src, size_t bytes, Stream) {
  ENTER("cuMemcpyHtoDAsync");
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return kSuccess;
}
Result cuMemcpyDtoHAsync(void *dst, DevicePtr src, size_t bytes, Stream) {
  ENTER("cuMemcpyDtoHAsync");
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return kSuccess;
}
Result cuMemcpyDtoDAsync(DevicePtr dst, DevicePtr src, size_t bytes, Stream) {
  ENTER("cuMemcpyDtoDAsync");
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), bytes);
  return kSuccess;
}

bool isElf(const char *image) {
  return std::strncmp(image,
                      "\x7f"
                      "ELF",
                      4) == 0;
}

/// PTX text: its `.version` directive after comment lines (as LLVM's NVPTX
/// back end prints it) or first (the tests' stand-ins).
bool isPtx(const char *image) {
  while (std::strncmp(image, "//", 2) == 0 || *image == '\n') {
    const char *next = std::strchr(image, '\n');
    if (!next)
      return false;
    image = next + 1;
  }
  return std::strncmp(image, ".version", 8) == 0;
}

/// Accepts PTX text and ELF cubins, like the driver.
Result cuModuleLoadData(Module *module, const void *image) {
  ENTER("cuModuleLoadData");
  const char *text = static_cast<const char *>(image);
  if (!isPtx(text) && !isElf(text))
    return kInvalidImage;
  *module = new CUmod_st{text};
  std::lock_guard<std::mutex> lock(state().mu);
  ++state().liveModules;
  return kSuccess;
}
Result cuModuleUnload(Module module) {
  Result r = enter("cuModuleUnload");
  delete module;
  std::lock_guard<std::mutex> lock(state().mu);
  --state().liveModules;
  return r;
}
/// Finds `.entry name` in PTX images; cubins are not inspected.
Result cuModuleGetFunction(Function *function, Module module,
                           const char *name) {
  ENTER("cuModuleGetFunction");
  if (!isElf(module->image.c_str()) &&
      module->image.find(std::string(".entry ") + name + "(") ==
          std::string::npos)
    return kNotFound;
  static std::mutex mu;
  static std::map<std::string, CUfunc_st> functions; // live as long as us
  std::lock_guard<std::mutex> lock(mu);
  *function = &functions.emplace(name, CUfunc_st{name}).first->second;
  return kSuccess;
}

/// Finds an initialized array global in a PTX image (or the tests' fake
/// code objects, which carry the same text) and hands out its bytes, kept
/// in host memory as all device memory here. NVPTX prints it as bytes,
/// `.b8 name[48] = {2, 0, ...}` with trailing zeros left out; the tests'
/// stand-ins as words, `.u64 name[6] = {2, 7, ...}`.
Result cuModuleGetGlobal(DevicePtr *global, size_t *bytes, Module module,
                         const char *name) {
  ENTER("cuModuleGetGlobal");
  const std::string &image = module->image;
  size_t at = image.find(std::string(" ") + name + "[");
  if (at == std::string::npos)
    return kNotFound;
  size_t lineStart = image.rfind('\n', at);
  lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
  std::string declaration = image.substr(lineStart, at - lineStart);
  size_t width = declaration.find(".b8") != std::string::npos ? 1 : 8;
  size_t count =
      std::strtoull(image.c_str() + at + std::strlen(name) + 2, nullptr, 10);
  size_t open = image.find("= {", at);
  size_t close = image.find('}', open);
  if (open == std::string::npos || close == std::string::npos)
    return kNotFound;
  std::vector<uint8_t> &kept = module->globals[name];
  kept.assign(count * width, 0);
  const char *p = image.c_str() + open + 3;
  const char *end = image.c_str() + close;
  for (size_t i = 0; p < end && i < count; ++i) {
    char *next = nullptr;
    uint64_t value = std::strtoull(p, &next, 10);
    if (next == p)
      return kInvalidImage;
    std::memcpy(kept.data() + i * width, &value, width);
    p = next;
    while (p < end && (*p == ',' || *p == ' '))
      ++p;
  }
  *global = DevicePtr(uintptr_t(kept.data()));
  *bytes = kept.size();
  return kSuccess;
}

/// Only the attribute the runtime sets: a kernel's dynamic shared memory,
/// up to what the device lets a block opt in to.
Result cuFuncSetAttribute(Function function, int attribute, int value) {
  ENTER("cuFuncSetAttribute");
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (attribute != kiln::cu::kFuncAttrMaxDynamicSharedSizeBytes || value < 0 ||
      value > s.sharedMemoryOptin)
    return kInvalidValue;
  s.dynamicSharedAllowed[function->name] = value;
  return kSuccess;
}

/// Registers a thread of every fake kernel takes (what a query reports).
constexpr int kFakeRegisters = 40;

/// Registers (kFakeRegisters), local and static shared memory (none: the
/// fake reads no kernel's code) of a loaded kernel.
Result cuFuncGetAttribute(int *value, int attribute, Function) {
  ENTER("cuFuncGetAttribute");
  switch (attribute) {
  case kiln::cu::kFuncAttrNumRegs:
    *value = kFakeRegisters;
    return kSuccess;
  case kiln::cu::kFuncAttrLocalSizeBytes:
  case kiln::cu::kFuncAttrSharedSizeBytes:
    *value = 0;
    return kSuccess;
  default:
    return kInvalidValue;
  }
}

/// Resident blocks of an H200-like multiprocessor: 2048 threads, 64 Ki
/// registers, 228 KiB of shared memory with 1 KiB reserved per block, at
/// most 32 blocks.
Result cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, Function,
                                                   int threads,
                                                   size_t dynamicShared) {
  ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (threads <= 0 || threads > 1024)
    return kInvalidValue;
  int byThreads = 2048 / threads;
  int byRegisters = 65536 / (threads * kFakeRegisters);
  int byShared = int(233472 / (dynamicShared + 1024));
  *blocks = std::min({32, byThreads, byRegisters, byShared});
  return kSuccess;
}

Result cuLaunchKernel(Function function, unsigned gridX, unsigned, unsigned,
                      unsigned blockX, unsigned, unsigned, unsigned shared,
                      Stream stream, void **params, void **) {
  ENTER("cuLaunchKernel");
  if (gridX == 0 || blockX == 0 || blockX > 1024 || !params)
    return kInvalidValue;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  // More than 48 KiB only after cuFuncSetAttribute allowed it.
  if (shared > unsigned(kStaticSharedBytes) &&
      int(shared) > s.dynamicSharedAllowed[function->name])
    return kInvalidValue;
  // Every kernel of the tests takes a buffer first.
  if (params[0])
    s.firstArgument[function->name] = *static_cast<DevicePtr *>(params[0]);
  if (stream->capturing)
    ++stream->capturing->launches;
  else
    ++s.launches;
  return kSuccess;
}

Result cuStreamBeginCapture(Stream stream, int) {
  ENTER("cuStreamBeginCapture");
  if (stream->capturing)
    return kInvalidValue;
  stream->capturing = new CUgraph_st;
  return kSuccess;
}
// Ends the capture even when failing, as the driver does, and hands back
// no graph then.
Result cuStreamEndCapture(Stream stream, Graph *graph) {
  Result r = enter("cuStreamEndCapture");
  if (!stream->capturing)
    r = kInvalidValue;
  if (r) {
    delete stream->capturing;
    *graph = nullptr;
  } else {
    *graph = stream->capturing;
    std::lock_guard<std::mutex> lock(state().mu);
    ++state().liveGraphs;
  }
  stream->capturing = nullptr;
  return r;
}
Result cuGraphInstantiateWithFlags(GraphExec *exec, Graph graph,
                                   unsigned long long) {
  ENTER("cuGraphInstantiateWithFlags");
  *exec = new CUgraphExec_st{graph->launches};
  std::lock_guard<std::mutex> lock(state().mu);
  ++state().liveGraphs;
  return kSuccess;
}
Result cuGraphLaunch(GraphExec exec, Stream) {
  ENTER("cuGraphLaunch");
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.graphLaunches;
  s.launches += exec->launches;
  return kSuccess;
}
template <typename GraphType>
Result destroyGraph(const char *entry, GraphType *graph) {
  Result r = enter(entry);
  delete graph;
  std::lock_guard<std::mutex> lock(state().mu);
  --state().liveGraphs;
  return r;
}
Result cuGraphExecDestroy(GraphExec exec) {
  return destroyGraph("cuGraphExecDestroy", exec);
}
Result cuGraphDestroy(Graph graph) {
  return destroyGraph("cuGraphDestroy", graph);
}

Result cuEventCreate(Event *event, unsigned) {
  ENTER("cuEventCreate");
  *event = new CUevent_st;
  std::lock_guard<std::mutex> lock(state().mu);
  ++state().liveEvents;
  return kSuccess;
}
Result cuEventRecord(Event, Stream) { return enter("cuEventRecord"); }
Result cuEventSynchronize(Event) { return enter("cuEventSynchronize"); }
Result cuEventElapsedTime(float *ms, Event, Event) {
  ENTER("cuEventElapsedTime");
  *ms = 0.001f;
  return kSuccess;
}
Result cuEventDestroy(Event event) {
  delete event;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    --state().liveEvents;
  }
  return enter("cuEventDestroy");
}

const char *errorName(Result r) {
  switch (r) {
  case 0:
    return "CUDA_SUCCESS";
  case 1:
    return "CUDA_ERROR_INVALID_VALUE";
  case 2:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  case 200:
    return "CUDA_ERROR_INVALID_IMAGE";
  case 500:
    return "CUDA_ERROR_NOT_FOUND";
  case 700:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case 719:
    return "CUDA_ERROR_LAUNCH_FAILED";
  }
  return nullptr;
}
Result cuGetErrorName(Result r, const char **name) {
  *name = errorName(r);
  return *name ? kSuccess : kInvalidValue;
}
Result cuGetErrorString(Result r, const char **text) {
  *text = errorName(r) ? "fake driver error" : nullptr;
  return *text ? kSuccess : kInvalidValue;
}

const std::map<std::string, void *> &entryPoints() {
  static const std::map<std::string, void *> table = {
#define ENTRY(name) {#name, reinterpret_cast<void *>(&name)}
      ENTRY(cuInit),
      ENTRY(cuDeviceGetCount),
      ENTRY(cuDeviceGet),
      ENTRY(cuDeviceGetAttribute),
      ENTRY(cuDeviceGetName),
      ENTRY(cuDevicePrimaryCtxRetain),
      ENTRY(cuDevicePrimaryCtxRelease),
      ENTRY(cuCtxSetCurrent),
      ENTRY(cuStreamCreate),
      ENTRY(cuStreamDestroy),
      ENTRY(cuStreamSynchronize),
      ENTRY(cuMemAlloc),
      ENTRY(cuMemFree),
      ENTRY(cuMemGetInfo),
      ENTRY(cuMemAllocHost),
      ENTRY(cuMemFreeHost),
      ENTRY(cuMemcpyHtoD),
      ENTRY(cuMemsetD32),
      ENTRY(cuMemcpyHtoDAsync),
      ENTRY(cuMemcpyDtoHAsync),
      ENTRY(cuMemcpyDtoDAsync),
      ENTRY(cuModuleLoadData),
      ENTRY(cuModuleUnload),
      ENTRY(cuModuleGetFunction),
      ENTRY(cuModuleGetGlobal),
      ENTRY(cuFuncSetAttribute),
      ENTRY(cuFuncGetAttribute),
      ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor),
      ENTRY(cuLaunchKernel),
      ENTRY(cuStreamBeginCapture),
      ENTRY(cuStreamEndCapture),
      ENTRY(cuGraphInstantiateWithFlags),
      ENTRY(cuGraphLaunch),
      ENTRY(cuGraphExecDestroy),
      ENTRY(cuGraphDestroy),
      ENTRY(cuEventCreate),
      ENTRY(cuEventRecord),
      ENTRY(cuEventSynchronize),
      ENTRY(cuEventElapsedTime),
      ENTRY(cuEventDestroy),
      ENTRY(cuGetErrorName),
      ENTRY(cuGetErrorString),
#undef ENTRY
  };
  return table;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) Result cuGetProcAddress_v2(
    const char *name, void **pointer, int, uint64_t, int *status) {
  auto it = entryPoints().find(name);
  *pointer = it == entryPoints().end() ? nullptr : it->second;
  if (status)
    *status = *pointer ? 0 : 1;
  return *pointer ? kSuccess : kNotFound;
}

#ifdef KILN_FAKE_HIP
// Built a second time as libamdhip64.so: the HIP names of the same
// implementations (faults are still armed by their CUDA names). Code
// objects load only when built for the fake GPU's chip, gfx942, as HIP
// refuses a code object for another chip.
#define HIP_EXPORT __attribute__((visibility("default")))
constexpr Result kNoBinaryForGpu = 209;
HIP_EXPORT Result hipInit(unsigned flags) { return cuInit(flags); }
HIP_EXPORT Result hipGetDeviceCount(int *count) {
  return cuDeviceGetCount(count);
}
HIP_EXPORT Result hipDeviceGet(Device *device, int ordinal) {
  return cuDeviceGet(device, ordinal);
}
HIP_EXPORT Result hipDeviceGetAttribute(int *value, int attribute,
                                        Device device) {
  return cuDeviceGetAttribute(value, attribute, device);
}
HIP_EXPORT Result hipDeviceGetName(char *name, int length, Device device) {
  return cuDeviceGetName(name, length, device);
}
HIP_EXPORT Result hipDevicePrimaryCtxRetain(Context *context, Device device) {
  return cuDevicePrimaryCtxRetain(context, device);
}
HIP_EXPORT Result hipDevicePrimaryCtxRelease(Device device) {
  return cuDevicePrimaryCtxRelease(device);
}
HIP_EXPORT Result hipCtxSetCurrent(Context context) {
  return cuCtxSetCurrent(context);
}
HIP_EXPORT Result hipStreamCreateWithFlags(Stream *stream, unsigned flags) {
  return cuStreamCreate(stream, flags);
}
HIP_EXPORT Result hipStreamDestroy(Stream stream) {
  return cuStreamDestroy(stream);
}
HIP_EXPORT Result hipStreamSynchronize(Stream stream) {
  return cuStreamSynchronize(stream);
}
HIP_EXPORT Result hipMemGetInfo(size_t *free, size_t *total) {
  return cuMemGetInfo(free, total);
}
HIP_EXPORT Result hipMalloc(void **pointer, size_t bytes) {
  DevicePtr p = 0;
  Result r = cuMemAlloc(&p, bytes);
  *pointer = reinterpret_cast<void *>(uintptr_t(p));
  return r;
}
HIP_EXPORT Result hipFree(void *pointer) {
  return cuMemFree(DevicePtr(uintptr_t(pointer)));
}
HIP_EXPORT Result hipHostMalloc(void **pointer, size_t bytes, unsigned) {
  return cuMemAllocHost(pointer, bytes);
}
HIP_EXPORT Result hipHostFree(void *pointer) { return cuMemFreeHost(pointer); }
HIP_EXPORT Result hipMemcpyHtoD(void *dst, void *src, size_t bytes) {
  return cuMemcpyHtoD(DevicePtr(uintptr_t(dst)), src, bytes);
}
HIP_EXPORT Result hipMemsetD32(void *dst, int value, size_t count) {
  return cuMemsetD32(DevicePtr(uintptr_t(dst)), unsigned(value), count);
}
HIP_EXPORT Result hipMemcpyHtoDAsync(void *dst, void *src, size_t bytes,
                                     Stream stream) {
  return cuMemcpyHtoDAsync(DevicePtr(uintptr_t(dst)), src, bytes, stream);
}
HIP_EXPORT Result hipMemcpyDtoHAsync(void *dst, void *src, size_t bytes,
                                     Stream stream) {
  return cuMemcpyDtoHAsync(dst, DevicePtr(uintptr_t(src)), bytes, stream);
}
HIP_EXPORT Result hipMemcpyDtoDAsync(void *dst, void *src, size_t bytes,
                                     Stream stream) {
  return cuMemcpyDtoDAsync(DevicePtr(uintptr_t(dst)), DevicePtr(uintptr_t(src)),
                           bytes, stream);
}
HIP_EXPORT Result hipModuleLoadData(Module *module, const void *image) {
  const char *bytes = static_cast<const char *>(image);
  // The test's code objects are "\x7fELF" and the chip's name.
  if (std::strncmp(bytes,
                   "\x7f"
                   "ELF",
                   4) == 0 &&
      std::strncmp(bytes + 4, "gfx942", 6) != 0)
    return kNoBinaryForGpu;
  return cuModuleLoadData(module, image);
}
HIP_EXPORT Result hipModuleUnload(Module module) {
  return cuModuleUnload(module);
}
HIP_EXPORT Result hipModuleGetFunction(Function *function, Module module,
                                       const char *name) {
  return cuModuleGetFunction(function, module, name);
}
HIP_EXPORT Result hipModuleGetGlobal(void **global, size_t *bytes,
                                     Module module, const char *name) {
  DevicePtr p = 0;
  Result r = cuModuleGetGlobal(&p, bytes, module, name);
  *global = reinterpret_cast<void *>(uintptr_t(p));
  return r;
}
HIP_EXPORT Result hipFuncGetAttribute(int *value, int attribute,
                                      Function function) {
  return cuFuncGetAttribute(value, attribute, function);
}
HIP_EXPORT Result hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    int *blocks, Function function, int threads, size_t dynamicShared) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, function, threads,
                                                     dynamicShared);
}
HIP_EXPORT Result hipModuleLaunchKernel(Function f, unsigned gx, unsigned gy,
                                        unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned shared,
                                        Stream stream, void **params,
                                        void **extra) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params,
                        extra);
}
HIP_EXPORT Result hipStreamBeginCapture(Stream stream, int mode) {
  return cuStreamBeginCapture(stream, mode);
}
HIP_EXPORT Result hipStreamEndCapture(Stream stream, Graph *graph) {
  return cuStreamEndCapture(stream, graph);
}
HIP_EXPORT Result hipGraphInstantiateWithFlags(GraphExec *exec, Graph graph,
                                               unsigned long long flags) {
  return cuGraphInstantiateWithFlags(exec, graph, flags);
}
HIP_EXPORT Result hipGraphLaunch(GraphExec exec, Stream stream) {
  return cuGraphLaunch(exec, stream);
}
HIP_EXPORT Result hipGraphExecDestroy(GraphExec exec) {
  return cuGraphExecDestroy(exec);
}
HIP_EXPORT Result hipGraphDestroy(Graph graph) { return cuGraphDestroy(graph); }
HIP_EXPORT Result hipEventCreateWithFlags(Event *event, unsigned flags) {
  return cuEventCreate(event, flags);
}
HIP_EXPORT Result hipEventRecord(Event event, Stream stream) {
  return cuEventRecord(event, stream);
}
HIP_EXPORT Result hipEventSynchronize(Event event) {
  return cuEventSynchronize(event);
}
HIP_EXPORT Result hipEventElapsedTime(float *ms, Event start, Event end) {
  return cuEventElapsedTime(ms, start, end);
}
HIP_EXPORT Result hipEventDestroy(Event event) { return cuEventDestroy(event); }
HIP_EXPORT const char *hipGetErrorName(Result r) {
  return r == kNoBinaryForGpu ? "hipErrorNoBinaryForGpu" : errorName(r);
}
HIP_EXPORT const char *hipGetErrorString(Result r) { return "fake HIP error"; }
#endif

__attribute__((visibility("default"))) void kiln_fake_cuda_reset() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.faults.clear();
  s.stickyError = kSuccess;
  s.memory = uint64_t(1) << 30;
  s.launches = s.graphLaunches = 0;
  s.sharedMemoryOptin = 227 * 1024;
  s.dynamicSharedAllowed.clear();
}

__attribute__((visibility("default"))) void
kiln_fake_cuda_set_shared_memory_optin(int bytes) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().sharedMemoryOptin = bytes;
}

__attribute__((visibility("default"))) void
kiln_fake_cuda_fail(const char *entry, int nth, int code, int sticky) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.faults[entry] = {nth, code, sticky != 0};
}

__attribute__((visibility("default"))) void
kiln_fake_cuda_set_memory(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().memory = bytes;
}

__attribute__((visibility("default"))) uint64_t
kiln_fake_cuda_first_argument(const char *kernel) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.firstArgument.find(kernel);
  return it == s.firstArgument.end() ? 0 : it->second;
}

__attribute__((visibility("default"))) long
kiln_fake_cuda_count(const char *what) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::string w = what;
  return w == "launches"           ? s.launches
         : w == "graph-launches"   ? s.graphLaunches
         : w == "live-allocations" ? long(s.allocations.size())
         : w == "live-modules"     ? s.liveModules
         : w == "live-graphs"      ? s.liveGraphs
         : w == "live-events"      ? s.liveEvents
         : w == "live-streams"     ? s.liveStreams
                                   : -1;
}

} // extern "C"
