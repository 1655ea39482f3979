//===- Device.h - where a session's buffers live and kernels run -*- C++
//-*-===//
//
// A session runs on one device: the CPU (CpuDevice.cpp) or a GPU, NVIDIA's
// through the CUDA driver or AMD's through HIP (GpuExecutor.cpp, one
// implementation over both drivers' tables). The session checks every
// argument and keeps the run's bookkeeping; a device only holds the
// buffers, moves bytes and runs the schedule.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace kiln {

/// Called with a dispatch's index right after it ran (observed runs).
using DispatchObserver = std::function<kiln_status(size_t dispatch)>;

class Device {
public:
  virtual ~Device() = default;

  /// Allocates the arena and whatever else running the model takes.
  virtual kiln_status init() = 0;
  /// Copies input `index` to where its kernels read it (the session has
  /// checked its dtype, shape and size).
  virtual void writeInput(int index, const void *data, size_t bytes) = 0;
  /// Runs every dispatch; with `dispatchMs`, writes each one's time there;
  /// with `observer`, calls it after each dispatch, whose results
  /// readBuffer then reads (a non-OK status from it stops the run).
  virtual kiln_status run(double *dispatchMs,
                          const DispatchObserver *observer) = 0;
  /// GPU devices: the kernels read input `index` in device memory at
  /// `pointer` instead of what writeInput wrote (until that is called
  /// again). The session refuses it for other devices.
  virtual void readInputFromDevice(int index, uint64_t pointer) {}
  /// GPU devices: output `index` of later runs goes to device memory at
  /// `pointer` (0: back to the arena only). The session refuses it for
  /// other devices.
  virtual void bindOutputToDevice(int index, uint64_t pointer) {}
  /// GPU devices: copies output `index` of the last run to device memory
  /// at `pointer`, waiting for the copy.
  virtual kiln_status writeOutputToDevice(int index, uint64_t pointer,
                                          size_t bytes) {
    return KILN_ERROR_UNSUPPORTED_DEVICE;
  }
  /// Copies output `index` out (sizes checked by the session).
  virtual void readOutput(int index, void *data, size_t bytes) const = 0;
  /// Copies the tensor of run-time check `index` out after a run.
  virtual void readCheck(int index, void *data, size_t bytes) const = 0;
  /// Copies `bytes` of buffer `index` out.
  virtual kiln_status readBuffer(uint32_t index, void *data, size_t bytes) = 0;
  /// What dispatch `index`'s kernel takes of the device; null where the
  /// device has no such thing to say (the CPU).
  virtual const kiln_kernel_resources *resources(size_t index) const {
    return nullptr;
  }
  /// Threads that run a dispatch's workgroups (the CPU); 0 elsewhere.
  virtual int numThreads() const { return 0; }
};

} // namespace kiln

#endif // KILN_RUNTIME_DEVICE_H
