//===- Session.cpp - Execute a model's dispatch schedule on the CPU -------===//
#include "Internal.h"
#include "ThreadPool.h"
#include "GpuExecutor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sys/mman.h>
#include <thread>

using namespace kiln;

namespace {

std::string shapeString(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<std::string> inputNames(const Model &m) {
  std::vector<std::string> names;
  for (const TensorDesc &t : m.inputs())
    names.push_back(t.name);
  return names;
}

} // namespace

ArenaMemory::~ArenaMemory() {
  if (data)
    ::munmap(data, size);
}

bool ArenaMemory::allocate(uint64_t bytes) {
  size = size_t(std::max<uint64_t>(bytes, 1));
  if (bytes > SIZE_MAX / 2)
    return false;
  void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return false;
  data = static_cast<uint8_t *>(p);
  return true;
}

Session::Session(std::shared_ptr<const Model> model)
    : model_(std::move(model)), inputSet_(model_->inputs().size(), false) {}

Session::~Session() = default;

int Session::numThreads() const { return pool_ ? int(pool_->size()) : 0; }

kiln_status Session::init(const std::string &device, int numThreads) {
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
                    "'; recompile with --target=" + device);
  if (device != "cpu") {
    gpu_ = std::make_unique<GpuExecutor>(
        *model_, device == "cuda" ? GpuApi::Cuda : GpuApi::Hip);
    return gpu_->init();
  }
  if (numThreads < 0)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "num_threads must be >= 0, got " + std::to_string(numThreads));
  if (numThreads == 0)
    numThreads = int(std::max(1u, std::thread::hardware_concurrency()));
  if (!arena_.allocate(model_->arenaSize()))
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot allocate the " + std::to_string(model_->arenaSize()) +
                    "-byte arena");
  if (model_->splatSize() > 0) {
    splat_ = allocateAligned(model_->splatSize());
    if (!splat_)
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "cannot allocate the " + std::to_string(model_->splatSize()) +
                      "-byte splat weight area");
    for (const BufferDesc &b : model_->buffers())
      if (b.kind == BufferDesc::Splat)
        std::fill_n(reinterpret_cast<uint32_t *>(splat_.get() + b.offset),
                    b.size / 4, b.splatBits);
  }
  pool_ = std::make_unique<ThreadPool>(unsigned(numThreads));
  return KILN_OK;
}

void *Session::bufferData(uint32_t index) const {
  const BufferDesc &b = model_->buffers()[index];
  // Kernels never write weight buffers; the cast only serves the ABI.
  const uint8_t *base = b.kind == BufferDesc::Weight  ? model_->weights()
                        : b.kind == BufferDesc::Splat ? splat_.get()
                                                      : arena_.get();
  return const_cast<uint8_t *>(base + b.offset);
}

kiln_status Session::setInput(const char *name, kiln_dtype dtype,
                              const int64_t *shape, int32_t rank,
                              const void *data, size_t bytes) {
  int index = model_->findInput(name);
  if (index < 0)
    return fail(KILN_ERROR_NOT_FOUND,
                std::string("model has no input named '") + name +
                    "'; inputs are " + quoteList(inputNames(*model_)));
  const TensorDesc &t = model_->inputs()[index];
  std::string label = "input '" + t.name + "'";
  if (dtype != t.dtype)
    return fail(KILN_ERROR_DTYPE_MISMATCH,
                label + " expects dtype " + kiln_dtype_name(t.dtype) +
                    ", got " + kiln_dtype_name(dtype));
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
  if (bytes > 0 && !data)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
  if (bytes > 0 && gpu_)
    gpu_->stageInput(index, data, bytes);
  else if (bytes > 0)
    std::memcpy(bufferData(t.buffer), data, bytes);
  inputSet_[index] = true;
  return KILN_OK;
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
  if (gpu_) {
    DispatchObserver observeOnDevice;
    if (observer)
      observeOnDevice = [&](size_t i) { return observe(*observer, i); };
    if (kiln_status s =
            gpu_->run(dispatchMs, observer ? &observeOnDevice : nullptr))
      return s;
    hasRun_ = true;
    return KILN_OK;
  }
  std::vector<void *> bindings;
  for (size_t i = 0; i < model_->dispatches().size(); ++i) {
    const DispatchDesc &d = model_->dispatches()[i];
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
      if (kiln_status s = observe(*observer, i))
        return s;
  }
  hasRun_ = true;
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

kiln_status
Session::dispatchResources(int dispatch,
                           kiln_kernel_resources *resources) const {
  const auto &dispatches = model_->dispatches();
  if (kiln_status s = checkDispatchIndex(dispatch))
    return s;
  if (!gpu_)
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                "kernel resources are a GPU session's: dispatch " +
                    std::to_string(dispatch) + " (kernel '" +
                    dispatches[dispatch].kernel + "') runs on the CPU");
  *resources = gpu_->resources(size_t(dispatch));
  return KILN_OK;
}

kiln_status Session::getDispatchResult(int dispatch, int result, void *data,
                                       size_t bytes) {
  const auto &dispatches = model_->dispatches();
  if (kiln_status s = checkDispatchIndex(dispatch))
    return s;
  const DispatchDesc &d = dispatches[dispatch];
  std::string label = "dispatch " + std::to_string(dispatch) + " (kernel '" +
                      d.kernel + "')";
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
  if (gpu_)
    return gpu_->readBuffer(t.buffer, data, bytes);
  std::memcpy(data, bufferData(t.buffer), bytes);
  return KILN_OK;
}

kiln_status Session::dispatchFailed(size_t index,
                                    std::exception_ptr error) const {
  const DispatchDesc &d = model_->dispatches()[index];
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
  return fail(code,
              "dispatch " + std::to_string(index) + " (kernel '" + d.kernel +
                  "', nodes " + quoteList(d.nodes) + ") failed: " + what +
                  "; its outputs are undefined until a run succeeds");
}

kiln_status Session::getOutput(int index, void *data, size_t bytes) {
  const TensorDesc &t = model_->outputs()[index];
  std::string label = "output '" + t.name + "'";
  if (!hasRun_)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                label + " requested before a run of the session succeeded");
  if (bytes != t.bytes)
    return fail(KILN_ERROR_SIZE_MISMATCH,
                label + " has " + std::to_string(t.bytes) +
                    " bytes, the destination " + std::to_string(bytes));
  if (bytes > 0 && !data)
    return fail(KILN_ERROR_INVALID_ARGUMENT, label + ": data is null");
  if (bytes > 0 && gpu_)
    gpu_->readOutput(index, data, bytes);
  else if (bytes > 0)
    std::memcpy(data, bufferData(t.buffer), bytes);
  return KILN_OK;
}
