//===- CpuDevice.cpp - run a model's schedule on the CPU ------------------===//
#include "CpuDevice.h"

#include "Status.h"
#include "ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

using namespace kiln;

CpuDevice::CpuDevice(const Model &model, int numThreads)
    : model_(model), requestedThreads_(numThreads) {}

CpuDevice::~CpuDevice() = default;

int CpuDevice::numThreads() const { return pool_ ? int(pool_->size()) : 0; }

kiln_status CpuDevice::init() {
  int threads = requestedThreads_;
  if (threads < 0)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "num_threads must be >= 0, got " + std::to_string(threads));
  if (threads == 0)
    threads = int(std::max(1u, std::thread::hardware_concurrency()));
  if (!arena_.allocate(model_.arenaSize()))
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot allocate the " + std::to_string(model_.arenaSize()) +
                    "-byte arena");
  if (model_.splatSize() > 0) {
    splat_ = allocateAligned(model_.splatSize());
    if (!splat_)
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "cannot allocate the " + std::to_string(model_.splatSize()) +
                      "-byte splat weight area");
    for (const BufferDesc &b : model_.buffers())
      if (b.kind == BufferDesc::Splat)
        std::fill_n(reinterpret_cast<uint32_t *>(splat_.get() + b.offset),
                    b.size / 4, b.splatBits);
  }
  pool_ = std::make_unique<ThreadPool>(unsigned(threads));
  return KILN_OK;
}

void *CpuDevice::bufferData(uint32_t index) const {
  const BufferDesc &b = model_.buffers()[index];
  // Kernels never write weight buffers; the cast only serves the ABI.
  const uint8_t *base = b.kind == BufferDesc::Weight  ? model_.weights()
                        : b.kind == BufferDesc::Splat ? splat_.get()
                                                      : arena_.get();
  return const_cast<uint8_t *>(base + b.offset);
}

// Empty tensors copy nothing: their pointers may be null (an empty arena,
// an empty vector's data()), which memcpy may not be given even for 0 bytes.

void CpuDevice::writeInput(int index, const void *data, size_t bytes) {
  if (bytes)
    std::memcpy(bufferData(model_.inputs()[index].buffer), data, bytes);
}

void CpuDevice::readOutput(int index, void *data, size_t bytes) const {
  if (bytes)
    std::memcpy(data, bufferData(model_.outputs()[index].buffer), bytes);
}

void CpuDevice::readCheck(int index, void *data, size_t bytes) const {
  if (bytes)
    std::memcpy(data, bufferData(model_.checks()[index].tensor.buffer), bytes);
}

kiln_status CpuDevice::readBuffer(uint32_t index, void *data, size_t bytes) {
  if (bytes)
    std::memcpy(data, bufferData(index), bytes);
  return KILN_OK;
}

kiln_status CpuDevice::run(double *dispatchMs,
                           const DispatchObserver *observer) {
  std::vector<void *> bindings;
  for (size_t i = 0; i < model_.dispatches().size(); ++i) {
    const DispatchDesc &d = model_.dispatches()[i];
    bindings.clear();
    for (uint32_t b : d.bindings)
      bindings.push_back(bufferData(b));
    void **args = bindings.data();
    auto fn = d.fn;
    int64_t count = d.workgroups;
    auto start = std::chrono::steady_clock::now();
    try {
      pool_->parallelFor(count, [=](int64_t id) { fn(args, id, count); });
    } catch (...) {
      return dispatchFailed(i, std::current_exception());
    }
    if (dispatchMs)
      dispatchMs[i] = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (observer)
      if (kiln_status s = (*observer)(i))
        return s;
  }
  return KILN_OK;
}

kiln_status CpuDevice::dispatchFailed(size_t index,
                                      std::exception_ptr error) const {
  const DispatchDesc &d = model_.dispatches()[index];
  std::string what = "unknown exception";
  kiln_status code = KILN_ERROR_INTERNAL;
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc &) {
    what = "out of memory";
    code = KILN_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
  }
  // Every dispatch recomputes its outputs from the inputs, which no kernel
  // writes, so the next run starts clean: the session stays usable.
  return fail(code, "dispatch " + std::to_string(index) + " (kernel '" +
                        d.kernel + "', nodes " + quoteList(d.nodes) +
                        ") failed: " + what +
                        "; its outputs are undefined until a run succeeds");
}
