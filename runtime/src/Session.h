//===- Session.h - one execution context of a model -------------*- C++ -*-===//
#ifndef KILN_RUNTIME_SESSION_H
#define KILN_RUNTIME_SESSION_H

#include "Device.h"
#include "Model.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// One execution context: the device it runs on (Device.h) and the run's
/// bookkeeping (which inputs are set, whether outputs are readable). Every
/// argument of the C API is checked here, the same for every device.
class Session {
public:
  explicit Session(std::shared_ptr<const Model> model);
  ~Session();

  /// Creates the device's state; `maxMemory` (0: none) caps the bytes the
  /// model's buffers may take.
  kiln_status init(const std::string &device, int numThreads,
                   uint64_t maxMemory = 0);
  kiln_status setInput(const char *name, kiln_dtype dtype, const int64_t *shape,
                       int32_t rank, const void *data, size_t bytes);
  /// Runs every dispatch; with `dispatchMs`, writes each one's time there;
  /// with `observer`, calls it after each dispatch, while that dispatch's
  /// results can be read with getDispatchResult (a non-OK status from it
  /// stops the run and is returned).
  kiln_status run(double *dispatchMs,
                  const DispatchObserver *observer = nullptr);
  kiln_status getOutput(int index, void *data, size_t bytes);
  /// kiln_session_set_input_device and kiln_session_get_output_device.
  kiln_status setInputOnDevice(const char *name, kiln_dtype dtype,
                               const int64_t *shape, int32_t rank,
                               uint64_t pointer, size_t bytes);
  kiln_status getOutputOnDevice(int index, uint64_t pointer, size_t bytes);
  /// kiln_session_bind_output_device.
  kiln_status bindOutputOnDevice(int index, uint64_t pointer, size_t bytes);
  kiln_status getDispatchResult(int dispatch, int result, void *data,
                                size_t bytes);
  /// What dispatch `dispatch`'s GPU kernel takes of the device (GPU
  /// sessions only).
  kiln_status dispatchResources(int dispatch,
                                kiln_kernel_resources *resources) const;

  const Model &model() const { return *model_; }
  int numThreads() const;
  /// Output `index` as the last run gave it: a batched output's leading
  /// dim is the run's batch.
  const TensorDesc &outputAsRun(int index) const {
    return outputsAsRun_[index];
  }

private:
  /// Refuses a model whose buffers need more than `maxMemory` bytes
  /// (0: no limit) on `device`.
  kiln_status checkMemoryBudget(const std::string &device,
                                uint64_t maxMemory) const;
  /// Fails with the message of the first run-time check that a run's
  /// inputs did not pass.
  kiln_status verifyChecks(const Model &kernels, Device &device);
  /// Fails, naming the node and the input, when a shape-like input's
  /// values do not give the shape the artifact was compiled for.
  kiln_status checkShapeGuards() const;
  /// The device called `device` ("cpu", "cuda" or "rocm") for `kernels`;
  /// a batch variant's reads the weights of its `carrier`'s.
  static std::unique_ptr<Device> createDevice(const Model &kernels,
                                              const std::string &device,
                                              int numThreads,
                                              const Device *carrier = nullptr);
  /// KILN_OK, or the error for a dispatch index out of range.
  kiln_status checkDispatchIndex(int dispatch) const;
  /// Calls `observer` for `dispatch`, whose results it may read meanwhile.
  kiln_status observe(const DispatchObserver &observer, size_t dispatch);
  /// Dynamic batch: takes a batched input's rows (any count) into the
  /// session.
  /// Input `name` and its index, its dtype checked.
  kiln_status findInput(const char *name, kiln_dtype dtype, int &index) const;
  /// An unbatched input's shape and size against the model's.
  kiln_status checkInputShape(const TensorDesc &t, const int64_t *shape,
                              int32_t rank, size_t bytes) const;
  /// Why tensor `t` (called `label`) cannot be read from or written to
  /// device memory: a CPU session, or a dynamic batch; OK otherwise.
  kiln_status refuseDeviceMemory(const TensorDesc &t,
                                 const std::string &label) const;
  kiln_status setBatchedInput(int index, const int64_t *shape, int32_t rank,
                              const void *data, size_t bytes);
  /// Dynamic batch: the run's batch, which every batched input must share.
  kiln_status runBatch(int64_t &batch) const;
  /// Dynamic batch: runs the batch as pieces (BatchPieces.h), each by the
  /// kernels of one chunk, and gathers the batched outputs. Profiled and
  /// observed runs use the model's own chunk alone, whose dispatches they
  /// name.
  kiln_status runChunks(double *dispatchMs, const DispatchObserver *observer);
  /// Runs elements [first, first + rows) of the run's `batch` with the
  /// kernels of one chunk (of at least `rows`), the missing elements filled
  /// up with copies of the last one, and puts back their outputs' rows.
  kiln_status runPiece(const Model &kernels, Device &device, int64_t batch,
                       int64_t first, int64_t rows, double *dispatchMs,
                       const DispatchObserver *observer);
  /// The device run of one chunk, then its checks.
  kiln_status runOnce(const Model &kernels, Device &device, double *dispatchMs,
                      const DispatchObserver *observer);

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Device> device_;
  /// Dynamic batch: a device for each of the model's batch variants.
  std::vector<std::unique_ptr<Device>> variantDevices_;
  /// The device of the last run's last piece, which holds the outputs not
  /// batched.
  Device *lastDevice_ = nullptr;
  std::vector<bool> inputSet_;
  /// Per output: bound to device memory (bindOutputOnDevice), so not
  /// copied to the host.
  std::vector<bool> outputOnDevice_;
  /// The values of each input a shape guard reads (as int64), kept at
  /// setInput; `validGuardValues_` is false for one with a value that is
  /// no integer in range.
  std::vector<std::vector<int64_t>> guardValues_;
  std::vector<bool> validGuardValues_;
  bool hasRun_ = false;
  /// Dynamic batch: the batched inputs' rows as set, and the batched
  /// outputs' rows of the last run; each with its batch.
  std::vector<std::vector<uint8_t>> batchedInputs_, batchedOutputs_;
  std::vector<int64_t> inputBatch_;
  std::vector<TensorDesc> outputsAsRun_;
  int observedDispatch_ = -1; // whose results the observer may read now
};

} // namespace kiln

#endif // KILN_RUNTIME_SESSION_H
