//===- CpuDevice.h - run a model's schedule on the CPU ----------*- C++ -*-===//
#ifndef KILN_RUNTIME_CPUDEVICE_H
#define KILN_RUNTIME_CPUDEVICE_H

#include "Device.h"
#include "Memory.h"
#include "Model.h"

#include <exception>
#include <memory>

namespace kiln {

class ThreadPool;

/// The arena in host memory and each dispatch's workgroups on a thread
/// pool, calling the kernel object's functions.
class CpuDevice final : public Device {
public:
  /// `numThreads` 0: one per hardware thread.
  CpuDevice(const Model &model, int numThreads);
  ~CpuDevice() override;

  kiln_status init() override;
  void writeInput(int index, const void *data, size_t bytes) override;
  kiln_status run(double *dispatchMs,
                  const DispatchObserver *observer) override;
  void readOutput(int index, void *data, size_t bytes) const override;
  void readCheck(int index, void *data, size_t bytes) const override;
  kiln_status readBuffer(uint32_t index, void *data, size_t bytes) override;
  int numThreads() const override;

private:
  void *bufferData(uint32_t index) const;
  /// The error for dispatch `index` having thrown `error` on a worker.
  kiln_status dispatchFailed(size_t index, std::exception_ptr error) const;

  const Model &model_;
  int requestedThreads_;
  ArenaMemory arena_;
  AlignedBytes splat_; // filled splat weights, when the model has any
  std::unique_ptr<ThreadPool> pool_;
};

} // namespace kiln

#endif // KILN_RUNTIME_CPUDEVICE_H
