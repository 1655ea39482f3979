//===- Api.cpp - The C API ------------------------------------------------===//
//
// Thin wrappers: check handles, call into Model/Session, and turn every C++
// exception into a status so that none crosses the C boundary.
//
//===----------------------------------------------------------------------===//
#include "Model.h"
#include "Session.h"
#include "Status.h"
#include "kiln/version.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace kiln;

struct kiln_model {
  std::shared_ptr<const Model> impl;
};

struct kiln_session {
  std::unique_ptr<Session> impl;
  /// Held by the call in progress, on the thread in `owner`.
  std::mutex entry;
  std::atomic<std::thread::id> owner{};
};

namespace {

/// `fn`, the body of the C API function `call`, with every exception made
/// a status naming the call. The runtime's large buffers (artifact, arena,
/// batched inputs and outputs) are allocated where their bytes are known
/// and fail with them; what reaches here is bookkeeping that could not be
/// allocated.
template <typename Fn> kiln_status guarded(const char *call, Fn &&fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                std::string(call) + ": out of host memory (an allocation of "
                                    "the runtime's bookkeeping failed)");
  } catch (const std::exception &e) {
    return fail(KILN_ERROR_INTERNAL,
                std::string(call) + ": internal error: " + e.what());
  } catch (...) {
    return fail(KILN_ERROR_INTERNAL,
                std::string(call) + ": internal error: unknown exception");
  }
}

/// `call` (a C API function's name) inside `session`, or
/// KILN_ERROR_SESSION_BUSY when the session is in another call: its arena,
/// inputs and outputs belong to one call at a time, and a second thread
/// would race on them (an observer calling back into its own run would
/// overwrite the run's buffers).
template <typename Fn>
kiln_status entered(kiln_session *session, const char *call, Fn &&fn) {
  std::unique_lock<std::mutex> lock(session->entry, std::try_to_lock);
  if (!lock.owns_lock()) {
    bool observer = session->owner.load() == std::this_thread::get_id();
    return fail(KILN_ERROR_SESSION_BUSY,
                std::string(call) + ": the session is busy " +
                    (observer ? "with the run that called this observer"
                              : "in a call on another thread") +
                    "; a session takes one call at a time (give each thread "
                    "its own session)");
  }
  session->owner = std::this_thread::get_id();
  kiln_status status = guarded(call, fn);
  session->owner = std::thread::id();
  return status;
}

kiln_status nullArg(const char *what) {
  return fail(KILN_ERROR_INVALID_ARGUMENT, std::string(what) + " is null");
}

kiln_status openBytes(AlignedBytes bytes, size_t size, kiln_model **out) {
  auto model = std::make_shared<Model>();
  if (kiln_status s = model->load(std::move(bytes), size))
    return s;
  *out = new kiln_model{std::move(model)};
  return KILN_OK;
}

kiln_status readFile(const char *path, kiln_model **out) {
  auto ioError = [&](const char *what) {
    return fail(KILN_ERROR_IO, std::string("cannot ") + what + " '" + path +
                                   "': " + std::strerror(errno));
  };
  // O_NONBLOCK: a FIFO opens at once (then fails the regular-file check)
  // instead of waiting for a writer; reads of a regular file never block.
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return ioError("open");
  struct stat st;
  bool statOk = ::fstat(fd, &st) == 0;
  if (!statOk) {
    kiln_status s = ioError("read");
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char *what = S_ISDIR(st.st_mode) ? "it is a directory"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                           ? "it is a device, not a regular file"
                       : S_ISFIFO(st.st_mode)
                           ? "it is a pipe, not a regular file"
                           : "it is not a regular file";
    return fail(KILN_ERROR_IO,
                std::string("cannot read '") + path + "': " + what);
  }
  // The artifact must sit in 64-byte-aligned memory so that its weights do.
  size_t size = size_t(st.st_size);
  AlignedBytes bytes = allocateAligned(size);
  if (!bytes) {
    ::close(fd);
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot allocate " + std::to_string(size) +
                    " bytes for the artifact '" + path + "'");
  }
  for (size_t done = 0; done < size;) {
    ssize_t n = ::read(fd, bytes.get() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO; // the file shrank while we read it
      kiln_status s = ioError("read");
      ::close(fd);
      return s;
    }
    done += size_t(n);
  }
  ::close(fd);
  kiln_status s = openBytes(std::move(bytes), size, out);
  if (s != KILN_OK)
    fail(s, std::string(path) + ": " + lastErrorMessage());
  return s;
}

int outputIndex(const Model &m, int32_t index) {
  return index >= 0 && size_t(index) < m.outputs().size() ? index : -1;
}

void fillInfo(const TensorDesc &t, kiln_tensor_info *info) {
  info->name = t.name.c_str();
  info->dtype = t.dtype;
  info->rank = int32_t(t.shape.size());
  info->shape = t.shape.data();
  info->bytes = size_t(t.bytes);
}

kiln_status tensorInfo(const Model *model, int32_t index, bool isInput,
                       kiln_tensor_info *info) {
  if (!model || !info)
    return nullArg(!model ? "model" : "info");
  const auto &list = isInput ? model->inputs() : model->outputs();
  if (index < 0 || size_t(index) >= list.size())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                std::string(isInput ? "input" : "output") + " index " +
                    std::to_string(index) + " out of range [0, " +
                    std::to_string(list.size()) + ")");
  fillInfo(list[index], info);
  return KILN_OK;
}

} // namespace

//===-- C API -------------------------------------------------------------===//

const char *kiln_last_error(void) { return lastErrorMessage().c_str(); }

const char *kiln_version(void) { return KILN_VERSION_STRING; }

const char *kiln_status_string(kiln_status status) {
  switch (status) {
  case KILN_OK:
    return "ok";
  case KILN_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case KILN_ERROR_IO:
    return "I/O error";
  case KILN_ERROR_INVALID_ARTIFACT:
    return "invalid artifact";
  case KILN_ERROR_VERSION_MISMATCH:
    return "schema version mismatch";
  case KILN_ERROR_NOT_FOUND:
    return "not found";
  case KILN_ERROR_DTYPE_MISMATCH:
    return "dtype mismatch";
  case KILN_ERROR_SHAPE_MISMATCH:
    return "shape mismatch";
  case KILN_ERROR_SIZE_MISMATCH:
    return "size mismatch";
  case KILN_ERROR_MISSING_INPUT:
    return "missing input";
  case KILN_ERROR_UNSUPPORTED_DEVICE:
    return "unsupported device";
  case KILN_ERROR_KERNEL_LOAD:
    return "kernel load error";
  case KILN_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case KILN_ERROR_INTERNAL:
    return "internal error";
  case KILN_ERROR_SESSION_BUSY:
    return "session busy";
  case KILN_ERROR_INVALID_INPUT_VALUE:
    return "invalid input value";
  }
  return "unknown status";
}

const char *kiln_dtype_name(kiln_dtype dtype) {
  static const char *const names[] = {"f32", "f16", "bf16", "f64",  "i8",
                                      "u8",  "i32", "i64",  "bool", "i16",
                                      "u16", "u32", "u64"};
  unsigned i = unsigned(dtype);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "invalid";
}

size_t kiln_dtype_size(kiln_dtype dtype) {
  static const size_t sizes[] = {4, 2, 2, 8, 1, 1, 4, 8, 1, 2, 2, 4, 8};
  unsigned i = unsigned(dtype);
  return i < sizeof(sizes) / sizeof(sizes[0]) ? sizes[i] : 0;
}

kiln_status kiln_model_open(const char *path, kiln_model **model) {
  if (!path || !model)
    return nullArg(!path ? "path" : "model");
  *model = nullptr;
  return guarded("kiln_model_open", [&] { return readFile(path, model); });
}

kiln_status kiln_model_open_memory(const void *data, size_t size,
                                   kiln_model **model) {
  if (!data || !model)
    return nullArg(!data ? "data" : "model");
  *model = nullptr;
  return guarded("kiln_model_open_memory", [&] {
    AlignedBytes bytes = allocateAligned(size);
    if (!bytes)
      return fail(KILN_ERROR_OUT_OF_MEMORY, "cannot allocate " +
                                                std::to_string(size) +
                                                " bytes for the artifact");
    std::memcpy(bytes.get(), data, size);
    return openBytes(std::move(bytes), size, model);
  });
}

void kiln_model_close(kiln_model *model) { delete model; }

int32_t kiln_model_input_count(const kiln_model *model) {
  return model ? int32_t(model->impl->inputs().size()) : 0;
}

int32_t kiln_model_output_count(const kiln_model *model) {
  return model ? int32_t(model->impl->outputs().size()) : 0;
}

kiln_status kiln_model_input_info(const kiln_model *model, int32_t index,
                                  kiln_tensor_info *info) {
  return tensorInfo(model ? model->impl.get() : nullptr, index,
                    /*isInput=*/true, info);
}

kiln_status kiln_model_output_info(const kiln_model *model, int32_t index,
                                   kiln_tensor_info *info) {
  return tensorInfo(model ? model->impl.get() : nullptr, index,
                    /*isInput=*/false, info);
}

int32_t kiln_model_dispatch_count(const kiln_model *model) {
  return model ? int32_t(model->impl->dispatches().size()) : 0;
}

kiln_status kiln_model_dispatch_info(const kiln_model *model, int32_t index,
                                     kiln_dispatch_info *info) {
  if (!model || !info)
    return nullArg(!model ? "model" : "info");
  const auto &list = model->impl->dispatches();
  if (index < 0 || size_t(index) >= list.size())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "dispatch index " + std::to_string(index) +
                    " out of range [0, " + std::to_string(list.size()) + ")");
  const DispatchDesc &d = list[index];
  info->kernel = d.kernel.c_str();
  info->workgroups = d.workgroups;
  info->node_count = int32_t(d.nodePtrs.size());
  info->nodes = d.nodePtrs.data();
  info->flops = d.flops;
  return KILN_OK;
}

uint64_t kiln_model_dispatch_bytes(const kiln_model *model, int32_t index) {
  if (!model || index < 0 || size_t(index) >= model->impl->dispatches().size())
    return 0;
  std::vector<uint32_t> bound = model->impl->dispatches()[index].bindings;
  std::sort(bound.begin(), bound.end());
  bound.erase(std::unique(bound.begin(), bound.end()), bound.end());
  uint64_t bytes = 0;
  for (uint32_t b : bound)
    bytes += model->impl->buffers()[b].size;
  return bytes;
}

int32_t kiln_model_dispatch_result_count(const kiln_model *model,
                                         int32_t dispatch) {
  if (!model || dispatch < 0 ||
      size_t(dispatch) >= model->impl->dispatches().size())
    return 0;
  return int32_t(model->impl->dispatches()[dispatch].results.size());
}

kiln_status kiln_model_dispatch_result_info(const kiln_model *model,
                                            int32_t dispatch, int32_t index,
                                            kiln_tensor_info *info) {
  if (!model || !info)
    return nullArg(!model ? "model" : "info");
  const auto &list = model->impl->dispatches();
  if (dispatch < 0 || size_t(dispatch) >= list.size())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "dispatch index " + std::to_string(dispatch) +
                    " out of range [0, " + std::to_string(list.size()) + ")");
  const auto &results = list[dispatch].results;
  if (index < 0 || size_t(index) >= results.size())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "result index " + std::to_string(index) + " out of range [0, " +
                    std::to_string(results.size()) + ") of dispatch " +
                    std::to_string(dispatch));
  fillInfo(results[index], info);
  return KILN_OK;
}

const char *kiln_model_producer(const kiln_model *model) {
  return model ? model->impl->producer().c_str() : "";
}

const char *kiln_model_target(const kiln_model *model) {
  return model ? model->impl->target().c_str() : "";
}

const char *kiln_model_cpu(const kiln_model *model) {
  return model ? model->impl->cpu().c_str() : "";
}

const char *kiln_model_cpu_features(const kiln_model *model) {
  return model ? model->impl->cpuFeatureList().c_str() : "";
}

const char *kiln_model_gpu_images(const kiln_model *model) {
  return model ? model->impl->gpuImageList().c_str() : "";
}

const char *kiln_model_shape_guards(const kiln_model *model) {
  return model ? model->impl->shapeGuardList().c_str() : "";
}

int64_t kiln_model_batch_chunk(const kiln_model *model) {
  return model ? model->impl->batchChunk() : 0;
}

int32_t kiln_model_batch_chunk_count(const kiln_model *model) {
  if (!model || !model->impl->batchChunk())
    return 0;
  return 1 + int32_t(model->impl->batchVariants().size());
}

int64_t kiln_model_batch_chunk_at(const kiln_model *model, int32_t index) {
  if (index < 0 || index >= kiln_model_batch_chunk_count(model))
    return 0;
  if (index == 0)
    return model->impl->batchChunk();
  return model->impl->batchVariants()[size_t(index) - 1]->batchChunk();
}

int32_t kiln_model_input_batched(const kiln_model *model, int32_t index) {
  if (!model || index < 0 || size_t(index) >= model->impl->inputs().size())
    return 0;
  return model->impl->inputs()[index].batched;
}

int32_t kiln_model_output_batched(const kiln_model *model, int32_t index) {
  if (!model || index < 0 || size_t(index) >= model->impl->outputs().size())
    return 0;
  return model->impl->outputs()[index].batched;
}

int32_t kiln_model_input_batch_dim(const kiln_model *model, int32_t index) {
  if (!kiln_model_input_batched(model, index))
    return -1;
  return int32_t(model->impl->inputs()[index].batchDim);
}

int32_t kiln_model_output_batch_dim(const kiln_model *model, int32_t index) {
  if (!kiln_model_output_batched(model, index))
    return -1;
  return int32_t(model->impl->outputs()[index].batchDim);
}

kiln_status kiln_session_create(kiln_model *model, const char *device,
                                const kiln_session_options *options,
                                kiln_session **session) {
  if (!model || !session)
    return nullArg(!model ? "model" : "session");
  *session = nullptr;
  return guarded("kiln_session_create", [&] {
    auto impl = std::make_unique<Session>(model->impl);
    if (kiln_status s = impl->init(device ? device : "cpu",
                                   options ? options->num_threads : 0,
                                   options ? options->max_memory_bytes : 0))
      return s;
    *session = new kiln_session{std::move(impl)};
    return KILN_OK;
  });
}

void kiln_session_destroy(kiln_session *session) {
  if (!session)
    return;
  // A call in progress on another thread returns first.
  if (session->owner.load() != std::this_thread::get_id()) {
    std::lock_guard<std::mutex> drained(session->entry);
  }
  delete session;
}

kiln_status kiln_session_set_input(kiln_session *session, const char *name,
                                   kiln_dtype dtype, const int64_t *shape,
                                   int32_t rank, const void *data,
                                   size_t bytes) {
  if (!session || !name)
    return nullArg(!session ? "session" : "name");
  return entered(session, "kiln_session_set_input", [&] {
    return session->impl->setInput(name, dtype, shape, rank, data, bytes);
  });
}

kiln_status kiln_session_set_input_device(kiln_session *session,
                                          const char *name, kiln_dtype dtype,
                                          const int64_t *shape, int32_t rank,
                                          uint64_t device_pointer,
                                          size_t bytes) {
  if (!session || !name)
    return nullArg(!session ? "session" : "name");
  return entered(session, "kiln_session_set_input_device", [&] {
    return session->impl->setInputOnDevice(name, dtype, shape, rank,
                                           device_pointer, bytes);
  });
}

kiln_status kiln_session_bind_output_device(kiln_session *session,
                                            int32_t index,
                                            uint64_t device_pointer,
                                            size_t bytes) {
  if (!session)
    return nullArg("session");
  return entered(session, "kiln_session_bind_output_device", [&] {
    if (outputIndex(session->impl->model(), index) < 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "output index " + std::to_string(index) + " out of range");
    return session->impl->bindOutputOnDevice(index, device_pointer, bytes);
  });
}

kiln_status kiln_session_get_output_device(kiln_session *session, int32_t index,
                                           uint64_t device_pointer,
                                           size_t bytes) {
  if (!session)
    return nullArg("session");
  return entered(session, "kiln_session_get_output_device", [&] {
    if (outputIndex(session->impl->model(), index) < 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "output index " + std::to_string(index) + " out of range");
    return session->impl->getOutputOnDevice(index, device_pointer, bytes);
  });
}

kiln_status kiln_session_run(kiln_session *session) {
  if (!session)
    return nullArg("session");
  return entered(session, "kiln_session_run",
                 [&] { return session->impl->run(nullptr); });
}

kiln_status kiln_session_run_profiled(kiln_session *session,
                                      double *dispatch_ms, int32_t capacity) {
  if (!session || !dispatch_ms)
    return nullArg(!session ? "session" : "dispatch_ms");
  size_t needed = session->impl->model().dispatches().size();
  if (capacity < 0 || size_t(capacity) < needed)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "dispatch_ms holds " + std::to_string(capacity) +
                    " entries but the model has " + std::to_string(needed) +
                    " dispatches");
  return entered(session, "kiln_session_run_profiled",
                 [&] { return session->impl->run(dispatch_ms); });
}

kiln_status kiln_session_run_observed(kiln_session *session,
                                      kiln_dispatch_observer observer,
                                      void *user) {
  if (!session || !observer)
    return nullArg(!session ? "session" : "observer");
  DispatchObserver observe = [&](size_t i) {
    return observer(session, int32_t(i), user);
  };
  return entered(session, "kiln_session_run_observed",
                 [&] { return session->impl->run(nullptr, &observe); });
}

kiln_status kiln_session_dispatch_resources(const kiln_session *session,
                                            int32_t dispatch,
                                            kiln_kernel_resources *resources) {
  if (!session || !resources)
    return nullArg(!session ? "session" : "resources");
  return guarded("kiln_session_dispatch_resources", [&] {
    return session->impl->dispatchResources(dispatch, resources);
  });
}

kiln_status kiln_session_get_dispatch_result(kiln_session *session,
                                             int32_t dispatch, int32_t index,
                                             void *data, size_t bytes) {
  if (!session)
    return nullArg("session");
  auto read = [&] {
    return session->impl->getDispatchResult(dispatch, index, data, bytes);
  };
  // An observer reads inside the run that called it, on the run's thread.
  if (session->owner.load() == std::this_thread::get_id())
    return guarded("kiln_session_get_dispatch_result", read);
  return entered(session, "kiln_session_get_dispatch_result", read);
}

kiln_status kiln_session_get_output(kiln_session *session, const char *name,
                                    void *data, size_t bytes) {
  if (!session || !name)
    return nullArg(!session ? "session" : "name");
  return entered(session, "kiln_session_get_output", [&] {
    const Model &m = session->impl->model();
    int index = m.findOutput(name);
    if (index < 0) {
      std::vector<std::string> names;
      for (const TensorDesc &t : m.outputs())
        names.push_back(t.name);
      return fail(KILN_ERROR_NOT_FOUND, std::string("model has no output "
                                                    "named '") +
                                            name + "'; outputs are " +
                                            quoteList(names));
    }
    return session->impl->getOutput(index, data, bytes);
  });
}

kiln_status kiln_session_get_output_at(kiln_session *session, int32_t index,
                                       void *data, size_t bytes) {
  if (!session)
    return nullArg("session");
  return entered(session, "kiln_session_get_output_at", [&] {
    if (outputIndex(session->impl->model(), index) < 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "output index " + std::to_string(index) + " out of range");
    return session->impl->getOutput(index, data, bytes);
  });
}

kiln_status kiln_session_output_info(const kiln_session *session, int32_t index,
                                     kiln_tensor_info *info) {
  kiln_status s = tensorInfo(session ? &session->impl->model() : nullptr, index,
                             /*isInput=*/false, info);
  // A dynamic-batch output has the last run's batch.
  if (s == KILN_OK)
    fillInfo(session->impl->outputAsRun(index), info);
  return s;
}

int32_t kiln_session_num_threads(const kiln_session *session) {
  return session ? session->impl->numThreads() : 0;
}
