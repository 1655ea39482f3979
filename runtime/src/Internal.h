//===- Internal.h - Kiln runtime internals ----------------------*- C++ -*-===//
//
// Types shared by the runtime's source files. Nothing here crosses the C API:
// the C handles wrap these classes and Api.cpp catches every exception.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_INTERNAL_H
#define KILN_RUNTIME_INTERNAL_H

#include "kiln/runtime.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace fb {
struct Model;
struct TensorInfo;
} // namespace fb

/// Records `message` as the calling thread's last error and returns `code`.
kiln_status fail(kiln_status code, std::string message);

/// Frees memory obtained from std::aligned_alloc.
struct FreeDeleter {
  void operator()(void *p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;

/// Allocates `size` bytes (at least 1) aligned to KILN_ARTIFACT_ALIGNMENT.
/// Returns null when out of memory.
AlignedBytes allocateAligned(uint64_t size);

/// Zero-filled, page-aligned memory from mmap: pages cost nothing until a
/// kernel touches them, so large arenas are cheap to create.
class ArenaMemory {
public:
  ArenaMemory() = default;
  ArenaMemory(const ArenaMemory &) = delete;
  ArenaMemory &operator=(const ArenaMemory &) = delete;
  ~ArenaMemory();
  bool allocate(uint64_t size);
  uint8_t *get() const { return data; }

private:
  uint8_t *data = nullptr;
  size_t size = 0;
};

/// Joins names for error messages: "'a', 'b'".
std::string quoteList(const std::vector<std::string> &names);

/// A shared object loaded from memory; dlclose'd on destruction.
class KernelObject {
public:
  using KernelFn = void (*)(void **, int64_t, int64_t);

  KernelObject() = default;
  KernelObject(const KernelObject &) = delete;
  KernelObject &operator=(const KernelObject &) = delete;
  ~KernelObject();

  kiln_status load(const uint8_t *bytes, size_t size);
  /// Returns null if the symbol is missing.
  KernelFn lookup(const char *symbol) const;

private:
  void *handle = nullptr;
  int memfd = -1; // kept open so no other object reuses its /proc path
};

struct TensorDesc {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
  uint32_t buffer;
};

struct BufferDesc {
  enum Kind { Arena, Weight, Splat };
  Kind kind;
  uint64_t offset;
  uint64_t size;
  uint32_t splatBits; // kind Splat: the value repeated over its bytes
  bool isWeight() const { return kind != Arena; }
};

struct DispatchDesc {
  std::string kernel;
  KernelObject::KernelFn fn;
  std::vector<uint32_t> bindings;
  uint32_t workgroups;
  std::vector<std::string> nodes;
  std::vector<const char *> nodePtrs; // for kiln_dispatch_info
  uint64_t flops;
  uint32_t threads; // per block, GPU targets
  /// Bytes of dynamic shared memory per block (cuda kernels over 48 KiB).
  uint32_t dynamicWorkgroupMemory;
  /// What the kernel writes; name: the ONNX value it holds, or "".
  std::vector<TensorDesc> results;
};

/// Device code for one GPU chip; the bytes live in the artifact.
struct GpuImageDesc {
  std::string chip;   // "sm_90"
  std::string format; // "cubin" or "ptx" (cuda), "hsaco" (rocm)
  const uint8_t *data;
  size_t size;
};

/// A loaded and fully validated artifact. Immutable after load().
class Model {
public:
  /// Takes ownership of `bytes` (64-byte aligned) and validates them.
  kiln_status load(AlignedBytes bytes, size_t size);

  const std::string &producer() const { return producer_; }
  const std::string &target() const { return target_; }
  uint64_t arenaSize() const { return arenaSize_; }
  const uint8_t *weights() const { return weights_; }
  uint64_t weightsSize() const { return weightsSize_; }
  /// Bytes of the area holding splat weights (benchmark artifacts).
  uint64_t splatSize() const { return splatSize_; }
  /// True for artifacts compiled for an NVIDIA GPU ("cuda:...").
  bool isCuda() const { return target_.rfind("cuda", 0) == 0; }
  /// True for artifacts compiled for an AMD GPU ("rocm:...").
  bool isRocm() const { return target_.rfind("rocm", 0) == 0; }
  bool isGpu() const { return isCuda() || isRocm(); }
  const std::vector<GpuImageDesc> &gpuImages() const { return gpuImages_; }
  const std::vector<BufferDesc> &buffers() const { return buffers_; }
  const std::vector<TensorDesc> &inputs() const { return inputs_; }
  const std::vector<TensorDesc> &outputs() const { return outputs_; }
  const std::vector<DispatchDesc> &dispatches() const { return dispatches_; }

  /// Index of the input/output called `name`, or -1.
  int findInput(const std::string &name) const;
  int findOutput(const std::string &name) const;

private:
  kiln_status verify(const uint8_t *data, size_t size);
  kiln_status readBuffers(const fb::Model &m, uint64_t weightsSize);
  kiln_status readTensor(const fb::TensorInfo *t, const std::string &label,
                         TensorDesc &d);
  kiln_status readTensors(const fb::Model &m, bool isInput);
  kiln_status readDispatches(const fb::Model &m);
  kiln_status readGpuImages(const fb::Model &m);

  AlignedBytes bytes_;
  std::string producer_, target_;
  uint64_t arenaSize_ = 0;
  const uint8_t *weights_ = nullptr;
  uint64_t weightsSize_ = 0;
  uint64_t splatSize_ = 0;
  std::vector<GpuImageDesc> gpuImages_;
  std::vector<BufferDesc> buffers_;
  std::vector<TensorDesc> inputs_, outputs_;
  std::vector<DispatchDesc> dispatches_;
  KernelObject kernels_;
};

class ThreadPool;
class GpuExecutor;

/// Called with a dispatch's index right after it ran (observed runs).
using DispatchObserver = std::function<kiln_status(size_t dispatch)>;

/// One execution context: an arena, a thread pool and input bookkeeping.
class Session {
public:
  explicit Session(std::shared_ptr<const Model> model);
  ~Session();

  kiln_status init(const std::string &device, int numThreads);
  kiln_status setInput(const char *name, kiln_dtype dtype, const int64_t *shape,
                       int32_t rank, const void *data, size_t bytes);
  /// Runs every dispatch; with `dispatchMs`, writes each one's time there;
  /// with `observer`, calls it after each dispatch, while that dispatch's
  /// results can be read with getDispatchResult (a non-OK status from it
  /// stops the run and is returned).
  kiln_status run(double *dispatchMs, const DispatchObserver *observer = nullptr);
  kiln_status getOutput(int index, void *data, size_t bytes);
  kiln_status getDispatchResult(int dispatch, int result, void *data,
                                size_t bytes);
  /// What dispatch `dispatch`'s GPU kernel takes of the device (GPU
  /// sessions only).
  kiln_status dispatchResources(int dispatch,
                                kiln_kernel_resources *resources) const;

  const Model &model() const { return *model_; }
  int numThreads() const;

private:
  void *bufferData(uint32_t index) const;
  /// KILN_OK, or the error for a dispatch index out of range.
  kiln_status checkDispatchIndex(int dispatch) const;
  /// Calls `observer` for `dispatch`, whose results it may read meanwhile.
  kiln_status observe(const DispatchObserver &observer, size_t dispatch);
  /// The error for dispatch `index` having thrown `error` on a worker.
  kiln_status dispatchFailed(size_t index, std::exception_ptr error) const;

  std::shared_ptr<const Model> model_;
  ArenaMemory arena_;
  AlignedBytes splat_; // filled splat weights, when the model has any
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<GpuExecutor> gpu_; // set for devices "cuda" and "rocm"
  std::vector<bool> inputSet_;
  bool hasRun_ = false;
  int observedDispatch_ = -1; // whose results the observer may read now
};

} // namespace kiln

#endif // KILN_RUNTIME_INTERNAL_H
