//===- GpuExecutor.h - run a model's schedule on a GPU ----------*- C++ -*-===//
#ifndef KILN_RUNTIME_GPUEXECUTOR_H
#define KILN_RUNTIME_GPUEXECUTOR_H

#include "CudaDriver.h"
#include "Device.h"
#include "Model.h"

namespace kiln {

/// The GPU APIs a session can drive. Both go through the cu::Driver table:
/// HIP's module API mirrors the CUDA driver's (HipDriver.h).
enum class GpuApi { Cuda, Hip };

/// The GPU device of one session (Device.h): the arena and the weights in
/// device memory, the model's kernels loaded from the image for this GPU,
/// kernel arguments built once, and the whole schedule captured into a graph on
/// the first run and replayed afterwards. Inputs and outputs pass through one
/// pinned staging buffer. The same code drives NVIDIA GPUs through the CUDA
/// driver and AMD GPUs through HIP.
class GpuExecutor final : public Device {
public:
  /// A batch variant whose weights are its carrier's (weightsInCarrier)
  /// reads them from `carrier`'s device memory, which must outlive it.
  GpuExecutor(const Model &model, GpuApi api,
              const GpuExecutor *carrier = nullptr)
      : model_(model), api_(api), carrier_(carrier) {}
  GpuExecutor(const GpuExecutor &) = delete;
  GpuExecutor &operator=(const GpuExecutor &) = delete;
  ~GpuExecutor() override;

  kiln_status init() override;
  /// Copies an input into its staging slot (sizes checked by the caller).
  void writeInput(int index, const void *data, size_t bytes) override;
  void readInputFromDevice(int index, uint64_t pointer) override;
  void bindOutputToDevice(int index, uint64_t pointer) override;
  kiln_status writeOutputToDevice(int index, uint64_t pointer,
                                  size_t bytes) override;
  /// Uploads the inputs, runs every dispatch, downloads the outputs. With
  /// `dispatchMs`, kernels are launched one by one between events and each
  /// one's device time is written there.
  /// With `observer`, kernels are launched one by one too and the observer
  /// is called after each, once it finished (see Session::run).
  kiln_status run(double *dispatchMs,
                  const DispatchObserver *observer) override;
  void readOutput(int index, void *data, size_t bytes) const override;
  void readCheck(int index, void *data, size_t bytes) const override;
  /// Copies `bytes` of buffer `index` from the device (synchronously).
  kiln_status readBuffer(uint32_t index, void *data, size_t bytes) override;
  /// What dispatch `index`'s kernel takes of the device, read from the
  /// driver once at load (-1 where it cannot say).
  const kiln_kernel_resources *resources(size_t index) const override {
    return &resources_[index];
  }

private:
  kiln_status check(cu::Result result, const std::string &what);
  kiln_status allocate(cu::DevicePtr &ptr, uint64_t bytes, const char *what);
  /// CUDA: the image for this GPU's compute capability.
  kiln_status selectImage(const GpuImageDesc *&image);
  /// Loads the module: the selected CUDA image, or for HIP the first code
  /// object the runtime accepts for this GPU (it checks the chip).
  kiln_status loadModule(const GpuImageDesc *&loaded);
  const char *apiName() const { return api_ == GpuApi::Cuda ? "CUDA" : "HIP"; }
  kiln_status loadKernels();
  /// Reads the signature the compiler put beside `dispatch`'s kernel in
  /// the loaded image and checks the dispatch against it (Model's checks,
  /// and the block size and dynamic shared memory).
  kiln_status checkSignature(const DispatchDesc &dispatch,
                             const GpuImageDesc &image);
  /// Lets `fn` take the dynamic shared memory `dispatch` launches with
  /// (cuda, over 48 KiB); an error naming the kernel when the device
  /// allows a block less.
  kiln_status allowDynamicSharedMemory(cu::Function fn,
                                       const DispatchDesc &dispatch);
  /// Reads what `fn`, launched as `dispatch`, takes of the device.
  kiln_kernel_resources queryResources(cu::Function fn,
                                       const DispatchDesc &dispatch) const;
  kiln_status launch(size_t index);
  kiln_status captureGraph();
  /// Checks a synchronization: a failure there is a fault in a kernel or a
  /// copy, after which the device state is unknown (and CUDA's context
  /// usually dead), so the session refuses further runs with that error.
  kiln_status checkExecution(cu::Result result, const std::string &what);
  cu::DevicePtr devicePointer(const BufferDesc &buffer) const;
  /// Buffer `index`'s device memory: an input's or an output's own device
  /// memory when the kernels read or write it there (readInputFromDevice,
  /// bindOutputToDevice), else devicePointer's.
  cu::DevicePtr bufferPointer(uint32_t index) const;
  /// Points every kernel binding of an input or output in device memory at
  /// that memory (and back at the arena when it is not), before a run;
  /// a change drops the captured graph, which holds the old parameters.
  void bindInputPointers();

  const Model &model_;
  const GpuApi api_;
  const GpuExecutor *carrier_;
  const cu::Driver *driver_ = nullptr;
  cu::Device device_ = 0;
  cu::Context context_ = nullptr;
  cu::Stream stream_ = nullptr;
  cu::Module module_ = nullptr;
  cu::DevicePtr arena_ = 0, weights_ = 0, splat_ = 0;
  uint8_t *staging_ = nullptr;
  std::vector<uint64_t> inputSlots_, outputSlots_, checkSlots_; // in staging_
  /// Per input: the device memory its kernels read it from
  /// (readInputFromDevice), 0 for its arena buffer, copied from its
  /// staging slot at each run.
  std::vector<cu::DevicePtr> deviceInputs_;
  /// Per output: the device memory it goes to (bindOutputToDevice), 0 for
  /// none; and whether the kernels can write it there in place (an arena
  /// buffer of its own, not an input's or another output's), else the run
  /// copies it there.
  std::vector<cu::DevicePtr> deviceOutputs_;
  std::vector<bool> outputInPlace_;
  std::vector<cu::Function> functions_;              // per dispatch
  std::vector<kiln_kernel_resources> resources_;     // per dispatch
  std::vector<std::vector<cu::DevicePtr>> pointers_; // per dispatch
  std::vector<std::vector<void *>> params_;          // -> pointers_
  cu::GraphExec graph_ = nullptr;
  std::string deviceName_;
  std::string deadReason_; // set once a run faulted on the device
};

} // namespace kiln

#endif
