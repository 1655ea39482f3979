//===- Session.cpp - one execution context of a model ---------------------===//
#include "Session.h"

#include "BatchPieces.h"
#include "CpuDevice.h"
#include "GpuExecutor.h"
#include "Status.h"

#include <algorithm>
#include <cstring>

using namespace kiln;

namespace {

std::string shapeString(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Copies `rows` batch rows of every block of batched tensor `t`: from
/// row `fromRow` of `from`, which holds `fromBatch` rows per block, to row
/// `toRow` of `to`, which holds `toBatch`.
void copyBatchRows(const TensorDesc &t, const uint8_t *from, int64_t fromBatch,
                   int64_t fromRow, uint8_t *to, int64_t toBatch, int64_t toRow,
                   int64_t rows) {
  uint64_t row = t.batchRowBytes();
  for (uint64_t b = 0, blocks = t.batchBlocks(); b < blocks; ++b)
    std::memcpy(to + (b * toBatch + toRow) * row,
                from + (b * fromBatch + fromRow) * row, rows * row);
}

/// Sizes `bytes` to `size`, or fails naming `what` and the bytes asked.
kiln_status resizeHostBytes(std::vector<uint8_t> &bytes, uint64_t size,
                            const std::string &what) {
  try {
    bytes.resize(size_t(size));
  } catch (const std::exception &) { // bad_alloc, or length_error
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of host memory for " + what +
                                              ": asked " +
                                              std::to_string(size) + " bytes");
  }
  return KILN_OK;
}

std::vector<std::string> inputNames(const Model &m) {
  std::vector<std::string> names;
  for (const TensorDesc &t : m.inputs())
    names.push_back(t.name);
  return names;
}

} // namespace

Session::Session(std::shared_ptr<const Model> model)
    : model_(std::move(model)), inputSet_(model_->inputs().size(), false),
      outputOnDevice_(model_->outputs().size(), false),
      guardValues_(model_->inputs().size()),
      validGuardValues_(model_->inputs().size(), false),
      batchedInputs_(model_->inputs().size()),
      batchedOutputs_(model_->outputs().size()),
      inputBatch_(model_->inputs().size(), 0),
      outputsAsRun_(model_->outputs()) {}

Session::~Session() = default;

int Session::numThreads() const { return device_ ? device_->numThreads() : 0; }

std::unique_ptr<Device> Session::createDevice(const Model &kernels,
                                              const std::string &device,
                                              int numThreads,
                                              const Device *carrier) {
  // On a GPU device every device of the session is a GpuExecutor.
  auto *gpuCarrier = static_cast<const GpuExecutor *>(carrier);
  if (device == "cuda")
    return std::make_unique<GpuExecutor>(kernels, GpuApi::Cuda, gpuCarrier);
  if (device == "rocm")
    return std::make_unique<GpuExecutor>(kernels, GpuApi::Hip, gpuCarrier);
  return std::make_unique<CpuDevice>(kernels, numThreads);
}

kiln_status Session::init(const std::string &device, int numThreads,
                          uint64_t maxMemory) {
  if (device != "cpu" && device != "cuda" && device != "rocm")
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                "unknown device '" + device +
                    "' (expected 'cpu', 'cuda' or 'rocm')");
  std::string compiledFor = model_->isCuda()   ? "cuda"
                            : model_->isRocm() ? "rocm"
                                               : "cpu";
  if (device != compiledFor)
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                "the artifact was compiled for target '" + model_->target() +
                    "' and cannot run on device '" + device +
                    "': create the session on device '" + compiledFor +
                    "' (kiln-run, kiln-bench: --device " + compiledFor +
                    "), or recompile with --target=" + device);
  if (kiln_status s = checkMemoryBudget(device, maxMemory))
    return s;
  device_ = createDevice(*model_, device, numThreads);
  lastDevice_ = device_.get();
  if (kiln_status s = device_->init())
    return s;
  for (const auto &variant : model_->batchVariants()) {
    variantDevices_.push_back(
        createDevice(*variant, device, numThreads, device_.get()));
    if (kiln_status s = variantDevices_.back()->init())
      return s;
  }
  return KILN_OK;
}

kiln_status Session::checkMemoryBudget(const std::string &device,
                                       uint64_t maxMemory) const {
  // The kernels of every chunk of the batch have buffers of their own.
  uint64_t arena = 0, splat = 0, weights = 0, needed = 0;
  bool overflow = false;
  auto add = [&](uint64_t &sum, uint64_t bytes) {
    overflow = overflow || __builtin_add_overflow(sum, bytes, &sum);
  };
  std::vector<const Model *> all = {model_.get()};
  for (const auto &variant : model_->batchVariants())
    all.push_back(variant.get());
  for (const Model *m : all) {
    add(arena, m->arenaSize());
    add(splat, m->splatSize());
    add(weights,
        device == "cpu" || m->weightsInCarrier() ? 0 : m->weightsSize());
  }
  add(needed, arena);
  add(needed, splat);
  add(needed, weights);
  if (!maxMemory || (!overflow && needed <= maxMemory))
    return KILN_OK;
  return fail(KILN_ERROR_OUT_OF_MEMORY,
              "the model needs " + std::to_string(arena) + " bytes of arena, " +
                  std::to_string(splat) + " of splat area" +
                  (weights ? " and " + std::to_string(weights) +
                                 " of weights on the device"
                           : std::string()) +
                  ", more than the session's " + std::to_string(maxMemory) +
                  "-byte budget (max_memory_bytes; kiln-run --max-memory)");
}

kiln_status Session::run(double *dispatchMs, const DispatchObserver *observer) {
  std::vector<std::string> missing;
  for (size_t i = 0; i < inputSet_.size(); ++i)
    if (!inputSet_[i])
      missing.push_back(model_->inputs()[i].name);
  if (!missing.empty())
    return fail(KILN_ERROR_MISSING_INPUT,
                "inputs not set before run: " + quoteList(missing));

  // Until this run succeeds, the outputs hold nothing worth reading.
  hasRun_ = false;
  if (kiln_status s = checkShapeGuards())
    return s;
  lastDevice_ = device_.get();
  if (kiln_status s = model_->batchChunk()
                          ? runChunks(dispatchMs, observer)
                          : runOnce(*model_, *device_, dispatchMs, observer))
    return s;
  hasRun_ = true;
  return KILN_OK;
}

kiln_status Session::runOnce(const Model &kernels, Device &device,
                             double *dispatchMs,
                             const DispatchObserver *observer) {
  DispatchObserver observeDispatch;
  if (observer)
    observeDispatch = [&](size_t i) { return observe(*observer, i); };
  if (kiln_status s =
          device.run(dispatchMs, observer ? &observeDispatch : nullptr))
    return s;
  return verifyChecks(kernels, device);
}

kiln_status Session::runBatch(int64_t &batch) const {
  batch = 0;
  std::string first;
  for (size_t i = 0; i < model_->inputs().size(); ++i) {
    if (!model_->inputs()[i].batched)
      continue;
    const std::string &name = model_->inputs()[i].name;
    if (batch && inputBatch_[i] != batch)
      return fail(KILN_ERROR_SHAPE_MISMATCH,
                  "the batched inputs hold different batches: '" + first +
                      "' " + std::to_string(batch) + ", '" + name + "' " +
                      std::to_string(inputBatch_[i]));
    batch = inputBatch_[i];
    first = name;
  }
  return KILN_OK;
}

kiln_status Session::runChunks(double *dispatchMs,
                               const DispatchObserver *observer) {
  int64_t batch;
  if (kiln_status s = runBatch(batch))
    return s;
  const int64_t chunk = model_->batchChunk();
  // Profiles and observers name the model's own dispatches: its chunk only.
  std::vector<int64_t> chunks = {chunk};
  if (!dispatchMs && !observer)
    for (const auto &variant : model_->batchVariants())
      chunks.push_back(variant->batchChunk());
  std::vector<int64_t> pieces = batchPieces(batch, chunks);
  if (observer && pieces.size() > 1)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "an observed run takes one chunk of the batch: at most " +
                    std::to_string(chunk) + " elements, not " +
                    std::to_string(batch));
  size_t numDispatches = model_->dispatches().size();
  std::vector<double> pieceMs(dispatchMs ? numDispatches : 0);
  if (dispatchMs)
    std::fill(dispatchMs, dispatchMs + numDispatches, 0.0);
  const auto &outputs = model_->outputs();
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (!outputs[o].batched)
      continue;
    std::string what =
        "output '" + outputs[o].name + "' of batch " + std::to_string(batch);
    uint64_t bytes;
    if (__builtin_mul_overflow(outputs[o].bytes / uint64_t(chunk),
                               uint64_t(batch), &bytes))
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "out of host memory for " + what + ": its bytes overflow");
    if (kiln_status s = resizeHostBytes(batchedOutputs_[o], bytes, what))
      return s;
  }
  int64_t first = 0;
  for (int64_t pieceChunk : pieces) {
    const Model *kernels = model_.get();
    Device *device = device_.get();
    for (size_t v = 0; v < variantDevices_.size(); ++v)
      if (model_->batchVariants()[v]->batchChunk() == pieceChunk) {
        kernels = model_->batchVariants()[v].get();
        device = variantDevices_[v].get();
      }
    int64_t rows = std::min(pieceChunk, batch - first);
    if (kiln_status s =
            runPiece(*kernels, *device, batch, first, rows,
                     dispatchMs ? pieceMs.data() : nullptr, observer))
      return s;
    for (size_t d = 0; d < pieceMs.size(); ++d)
      dispatchMs[d] += pieceMs[d];
    lastDevice_ = device;
    first += rows;
  }
  for (size_t o = 0; o < outputs.size(); ++o)
    if (outputs[o].batched) {
      outputsAsRun_[o].shape[outputs[o].batchDim] = batch;
      outputsAsRun_[o].bytes = batchedOutputs_[o].size();
    }
  return KILN_OK;
}

kiln_status Session::runPiece(const Model &kernels, Device &device,
                              int64_t batch, int64_t first, int64_t rows,
                              double *dispatchMs,
                              const DispatchObserver *observer) {
  const int64_t chunk = kernels.batchChunk();
  const auto &inputs = kernels.inputs(), &outputs = kernels.outputs();
  std::vector<uint8_t> staging;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorDesc &t = inputs[i];
    if (!t.batched)
      continue;
    const uint8_t *all = batchedInputs_[i].data();
    if (rows == chunk && t.batchBlocks() == 1) {
      device.writeInput(int(i), all + first * t.batchRowBytes(), t.bytes);
      continue;
    }
    // A piece's missing elements repeat its last one, so that they pass
    // the same run-time checks.
    if (kiln_status s = resizeHostBytes(staging, t.bytes,
                                        "a chunk of input '" + t.name + "'"))
      return s;
    copyBatchRows(t, all, batch, first, staging.data(), chunk, 0, rows);
    for (int64_t r = rows; r < chunk; ++r)
      copyBatchRows(t, staging.data(), chunk, rows - 1, staging.data(), chunk,
                    r, 1);
    device.writeInput(int(i), staging.data(), staging.size());
  }
  if (kiln_status s = runOnce(kernels, device, dispatchMs, observer))
    return s;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const TensorDesc &t = outputs[o];
    if (!t.batched)
      continue;
    if (kiln_status s = resizeHostBytes(staging, t.bytes,
                                        "a chunk of output '" + t.name + "'"))
      return s;
    device.readOutput(int(o), staging.data(), staging.size());
    copyBatchRows(t, staging.data(), chunk, 0, batchedOutputs_[o].data(), batch,
                  first, rows);
  }
  return KILN_OK;
}

kiln_status Session::verifyChecks(const Model &kernels, Device &device) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < kernels.checks().size(); ++i) {
    const CheckDesc &check = kernels.checks()[i];
    bytes.resize(check.tensor.bytes);
    device.readCheck(int(i), bytes.data(), bytes.size());
    if (std::any_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b; }))
      return fail(KILN_ERROR_INVALID_INPUT_VALUE,
                  check.message + "; the run's outputs are not valid");
  }
  return KILN_OK;
}

kiln_status Session::checkShapeGuards() const {
  for (const ShapeGuardDesc &guard : model_->shapeGuards()) {
    const std::string &input = model_->inputs()[guard.input].name;
    std::string label = "node '" + guard.node + "' (" + guard.opType +
                        "): input '" + input + "'";
    if (!validGuardValues_[guard.input])
      return fail(KILN_ERROR_INVALID_INPUT_VALUE,
                  label + " holds a value that is not an integer in range");
    std::string problem =
        checkShapeGuard(guard, guardValues_[guard.input], input);
    if (!problem.empty())
      return fail(KILN_ERROR_INVALID_INPUT_VALUE, label + " holds " + problem);
  }
  return KILN_OK;
}

kiln_status Session::findInput(const char *name, kiln_dtype dtype,
                               int &index) const {
  index = model_->findInput(name);
  if (index < 0)
    return fail(KILN_ERROR_NOT_FOUND,
                std::string("model has no input named '") + name +
                    "'; inputs are " + quoteList(inputNames(*model_)));
  const TensorDesc &t = model_->inputs()[index];
  if (dtype != t.dtype)
    return fail(KILN_ERROR_DTYPE_MISMATCH,
                "input '" + t.name + "' expects dtype " +
                    kiln_dtype_name(t.dtype) + ", got " +
                    kiln_dtype_name(dtype));
  return KILN_OK;
}

kiln_status Session::checkInputShape(const TensorDesc &t, const int64_t *shape,
                                     int32_t rank, size_t bytes) const {
  std::string label = "input '" + t.name + "'";
  if (rank < 0 || (rank > 0 && !shape))
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": invalid shape");
  if (size_t(rank) != t.shape.size() ||
      !std::equal(t.shape.begin(), t.shape.end(), shape))
    return fail(KILN_ERROR_SHAPE_MISMATCH,
                label + " expects shape " +
                    shapeString(t.shape.data(), t.shape.size()) + ", got " +
                    shapeString(shape, size_t(rank)));
  if (bytes != t.bytes)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " expects " + std::to_string(t.bytes) + " bytes, got " +
                    std::to_string(bytes));
  return KILN_OK;
}

kiln_status Session::setInput(const char *name, kiln_dtype dtype,
                              const int64_t *shape, int32_t rank,
                              const void *data, size_t bytes) {
  int index = -1;
  if (kiln_status s = findInput(name, dtype, index))
    return s;
  const TensorDesc &t = model_->inputs()[index];
  std::string label = "input '" + t.name + "'";
  if (t.batched)
    return setBatchedInput(index, shape, rank, data, bytes);
  if (kiln_status s = checkInputShape(t, shape, rank, bytes))
    return s;
  if (bytes > 0 && !data)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
  if (model_->isGuardedInput(size_t(index)))
    validGuardValues_[index] =
        readGuardValues(dtype, data, bytes, guardValues_[index]);
  if (bytes > 0) {
    device_->writeInput(index, data, bytes);
    for (const auto &variant : variantDevices_)
      variant->writeInput(index, data, bytes);
  }
  inputSet_[index] = true;
  return KILN_OK;
}

kiln_status Session::setBatchedInput(int index, const int64_t *shape,
                                     int32_t rank, const void *data,
                                     size_t bytes) {
  const TensorDesc &t = model_->inputs()[index];
  std::string label = "input '" + t.name + "'";
  const size_t dim = t.batchDim;
  auto shown = [&] {
    std::string text = "[";
    for (size_t d = 0; d < t.shape.size(); ++d)
      text += (d ? "," : "") + (d == dim ? "N" : std::to_string(t.shape[d]));
    return text + "] (any batch N)";
  };
  bool sameOtherDims = rank >= 1 && shape && size_t(rank) == t.shape.size();
  for (size_t d = 0; sameOtherDims && d < t.shape.size(); ++d)
    sameOtherDims = d == dim || shape[d] == t.shape[d];
  if (!sameOtherDims || shape[dim] < 1)
    return fail(KILN_ERROR_SHAPE_MISMATCH,
                label + " expects shape " + shown() + ", got " +
                    shapeString(shape, size_t(std::max(rank, 0))));
  const int64_t batch = shape[dim];
  uint64_t rowBytes = t.bytes / uint64_t(model_->batchChunk()), total;
  if (__builtin_mul_overflow(rowBytes, uint64_t(batch), &total) ||
      bytes != total)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " of batch " + std::to_string(batch) + " expects " +
                    std::to_string(rowBytes) + " bytes per element, got " +
                    std::to_string(bytes) + " bytes");
  if (bytes > 0 && !data)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
  if (kiln_status s =
          resizeHostBytes(batchedInputs_[index], bytes,
                          label + " of batch " + std::to_string(batch)))
    return s;
  if (bytes > 0)
    std::memcpy(batchedInputs_[index].data(), data, bytes);
  inputBatch_[index] = batch;
  inputSet_[index] = true;
  return KILN_OK;
}

kiln_status Session::observe(const DispatchObserver &observer,
                             size_t dispatch) {
  // Only while the observer runs are this dispatch's results readable,
  // however it returns.
  struct Observing {
    int &observed;
    Observing(int &observed, size_t dispatch) : observed(observed) {
      observed = int(dispatch);
    }
    ~Observing() { observed = -1; }
  } observing(observedDispatch_, dispatch);
  return observer(dispatch);
}

kiln_status Session::checkDispatchIndex(int dispatch) const {
  size_t count = model_->dispatches().size();
  if (dispatch < 0 || size_t(dispatch) >= count)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "dispatch index " + std::to_string(dispatch) +
                    " out of range [0, " + std::to_string(count) + ")");
  return KILN_OK;
}

kiln_status Session::dispatchResources(int dispatch,
                                       kiln_kernel_resources *resources) const {
  const auto &dispatches = model_->dispatches();
  if (kiln_status s = checkDispatchIndex(dispatch))
    return s;
  const kiln_kernel_resources *found = device_->resources(size_t(dispatch));
  if (!found)
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                "kernel resources are a GPU session's: dispatch " +
                    std::to_string(dispatch) + " (kernel '" +
                    dispatches[dispatch].kernel + "') runs on the CPU");
  *resources = *found;
  return KILN_OK;
}

kiln_status Session::getDispatchResult(int dispatch, int result, void *data,
                                       size_t bytes) {
  const auto &dispatches = model_->dispatches();
  if (kiln_status s = checkDispatchIndex(dispatch))
    return s;
  const DispatchDesc &d = dispatches[dispatch];
  std::string label =
      "dispatch " + std::to_string(dispatch) + " (kernel '" + d.kernel + "')";
  // Later dispatches reuse the arena's bytes: a result is only what the
  // kernel wrote while the observer of that dispatch runs.
  if (observedDispatch_ != dispatch)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "the results of " + label +
                    " can only be read from the observer of an observed run, "
                    "right after that dispatch");
  if (result < 0 || size_t(result) >= d.results.size())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " has " + std::to_string(d.results.size()) +
                    " recorded results, not " + std::to_string(result + 1));
  const TensorDesc &t = d.results[result];
  if (bytes != t.bytes)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " result " + std::to_string(result) + " has " +
                    std::to_string(t.bytes) + " bytes, the destination " +
                    std::to_string(bytes));
  if (bytes > 0 && !data)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
  if (bytes == 0)
    return KILN_OK;
  return device_->readBuffer(t.buffer, data, bytes);
}

kiln_status Session::setInputOnDevice(const char *name, kiln_dtype dtype,
                                      const int64_t *shape, int32_t rank,
                                      uint64_t pointer, size_t bytes) {
  int index = -1;
  if (kiln_status s = findInput(name, dtype, index))
    return s;
  const TensorDesc &t = model_->inputs()[index];
  std::string label = "input '" + t.name + "'";
  if (kiln_status s = refuseDeviceMemory(t, label))
    return s;
  if (model_->isGuardedInput(size_t(index)))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " is checked on the host before each run (a " +
                    "shape-like input): set it from host memory");
  if (kiln_status s = checkInputShape(t, shape, rank, bytes))
    return s;
  if (bytes > 0 && !pointer)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": device pointer is 0");
  device_->readInputFromDevice(index, pointer);
  inputSet_[index] = true;
  return KILN_OK;
}

kiln_status Session::refuseDeviceMemory(const TensorDesc &t,
                                        const std::string &label) const {
  if (!model_->isGpu())
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                label + ": device memory needs a model compiled for a GPU; "
                        "this model runs on the CPU");
  if (t.batched || !variantDevices_.empty())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " belongs to a dynamic batch, run in chunks from "
                        "host memory: use host memory");
  return KILN_OK;
}

kiln_status Session::bindOutputOnDevice(int index, uint64_t pointer,
                                        size_t bytes) {
  const TensorDesc &t = model_->outputs()[index];
  std::string label = "output '" + t.name + "'";
  if (kiln_status s = refuseDeviceMemory(t, label))
    return s;
  if (pointer && bytes != t.bytes)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " has " + std::to_string(t.bytes) +
                    " bytes, the destination " + std::to_string(bytes));
  device_->bindOutputToDevice(index, pointer);
  outputOnDevice_[index] = pointer != 0;
  return KILN_OK;
}

kiln_status Session::getOutputOnDevice(int index, uint64_t pointer,
                                       size_t bytes) {
  const TensorDesc &t = outputsAsRun_[index];
  std::string label = "output '" + t.name + "'";
  if (kiln_status s = refuseDeviceMemory(t, label))
    return s;
  if (!hasRun_)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " requested before a run of the session succeeded");
  if (bytes != t.bytes)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " has " + std::to_string(t.bytes) +
                    " bytes, the destination " + std::to_string(bytes));
  if (bytes > 0 && !pointer)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": device pointer is 0");
  return bytes > 0 ? lastDevice_->writeOutputToDevice(index, pointer, bytes)
                   : KILN_OK;
}

kiln_status Session::getOutput(int index, void *data, size_t bytes) {
  const TensorDesc &t = outputsAsRun_[index];
  std::string label = "output '" + t.name + "'";
  if (!hasRun_)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " requested before a run of the session succeeded");
  if (t.batched) {
    if (bytes != t.bytes)
      return fail(KILN_ERROR_SIZE_MISMATCH,
                  label + " of batch " + std::to_string(t.shape[t.batchDim]) +
                      " has " + std::to_string(t.bytes) +
                      " bytes, the destination " + std::to_string(bytes));
    if (bytes > 0 && !data)
      return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
    std::memcpy(data, batchedOutputs_[index].data(), bytes);
    return KILN_OK;
  }
  if (bytes != t.bytes)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " has " + std::to_string(t.bytes) +
                    " bytes, the destination " + std::to_string(bytes));
  if (bytes > 0 && !data)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
  if (outputOnDevice_[index])
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " goes to device memory "
                        "(kiln_session_bind_output_device): read it there, "
                        "or unbind it");
  if (bytes > 0)
    lastDevice_->readOutput(index, data, bytes);
  return KILN_OK;
}
