//===- GpuExecutor.cpp - run a model's schedule on a GPU ------------------===//
#include "GpuExecutor.h"
#include "HipDriver.h"
#include "Status.h"

#include <algorithm>
#include <cstring>

using namespace kiln;

GpuExecutor::~GpuExecutor() {
  if (!driver_)
    return;
  const cu::Driver &d = *driver_;
  if (context_)
    d.ctxSetCurrent(context_);
  if (stream_)
    d.streamSynchronize(stream_);
  if (graph_)
    d.graphExecDestroy(graph_);
  if (module_)
    d.moduleUnload(module_);
  if (arena_)
    d.memFree(arena_);
  if (weights_ && !model_.weightsInCarrier())
    d.memFree(weights_);
  if (splat_)
    d.memFree(splat_);
  if (staging_)
    d.memFreeHost(staging_);
  if (stream_)
    d.streamDestroy(stream_);
  if (context_)
    d.primaryCtxRelease(device_);
}

kiln_status GpuExecutor::check(cu::Result result, const std::string &what) {
  if (result == 0)
    return KILN_OK;
  return fail(result == cu::kErrorOutOfMemory ? KILN_ERROR_OUT_OF_MEMORY
                                              : KILN_ERROR_INTERNAL,
              what + " failed on " + deviceName_ + ": " +
                  cu::describe(*driver_, result));
}

kiln_status GpuExecutor::checkExecution(cu::Result result,
                                        const std::string &what) {
  kiln_status status = check(result, what);
  if (status != KILN_OK)
    deadReason_ = kiln_last_error();
  return status;
}

cu::DevicePtr GpuExecutor::devicePointer(const BufferDesc &buffer) const {
  cu::DevicePtr base = buffer.kind == BufferDesc::Weight  ? weights_
                       : buffer.kind == BufferDesc::Splat ? splat_
                                                          : arena_;
  return base + buffer.offset;
}

cu::DevicePtr GpuExecutor::bufferPointer(uint32_t index) const {
  for (size_t i = 0; i < deviceInputs_.size(); ++i)
    if (deviceInputs_[i] && model_.inputs()[i].buffer == index)
      return deviceInputs_[i];
  for (size_t o = 0; o < deviceOutputs_.size(); ++o)
    if (deviceOutputs_[o] && outputInPlace_[o] &&
        model_.outputs()[o].buffer == index)
      return deviceOutputs_[o];
  return devicePointer(model_.buffers()[index]);
}

void GpuExecutor::bindInputPointers() {
  const std::vector<DispatchDesc> &dispatches = model_.dispatches();
  bool changed = false;
  for (size_t d = 0; d < pointers_.size(); ++d)
    for (size_t k = 0; k < pointers_[d].size(); ++k) {
      cu::DevicePtr pointer = bufferPointer(dispatches[d].bindings[k]);
      changed |= pointers_[d][k] != pointer;
      pointers_[d][k] = pointer;
    }
  // The graph holds the kernels' parameters as captured.
  if (changed && graph_) {
    driver_->graphExecDestroy(graph_);
    graph_ = nullptr;
  }
}

kiln_status GpuExecutor::allocate(cu::DevicePtr &ptr, uint64_t bytes,
                                  const char *what) {
  if (cu::Result r = driver_->memAlloc(&ptr, std::max<uint64_t>(bytes, 1))) {
    size_t free = 0, total = 0;
    driver_->memGetInfo(&free, &total);
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                std::string("not enough device memory on ") + deviceName_ +
                    " for the " + what + ": asked " + std::to_string(bytes) +
                    " bytes, " + std::to_string(free) + " free of " +
                    std::to_string(total) + " (" + cu::describe(*driver_, r) +
                    ")");
  }
  return KILN_OK;
}

kiln_status GpuExecutor::init() {
  std::string error;
  driver_ =
      api_ == GpuApi::Cuda ? cu::loadDriver(error) : hip::loadDriver(error);
  if (!driver_)
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE, error);
  const cu::Driver &d = *driver_;
  int count = 0;
  if (d.deviceGetCount(&count) != 0 || count == 0)
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                api_ == GpuApi::Cuda
                    ? "no CUDA device: the driver loaded but reports no GPU"
                    : "no HIP device: the HIP runtime loaded but reports no "
                      "GPU");
  deviceName_ = std::string(apiName()) + " device 0";
  if (kiln_status s = check(d.deviceGet(&device_, 0), "cuDeviceGet"))
    return s;
  char name[256] = {0};
  if (d.deviceGetName(name, sizeof(name) - 1, device_) == 0)
    deviceName_ = std::string(name) + " (" + apiName() + " device 0)";
  if (kiln_status s = check(d.primaryCtxRetain(&context_, device_),
                            "retaining the primary context"))
    return s;
  if (kiln_status s = check(d.ctxSetCurrent(context_), "cuCtxSetCurrent"))
    return s;
  if (kiln_status s = check(d.streamCreate(&stream_, cu::kStreamNonBlocking),
                            "creating a stream"))
    return s;
  if (kiln_status s = allocate(arena_, model_.arenaSize(), "arena"))
    return s;
  uint64_t weightBytes = model_.weightsSize();
  if (model_.weightsInCarrier()) {
    if (!carrier_)
      return fail(KILN_ERROR_INTERNAL,
                  "a batch variant's weights are its carrier's, but no "
                  "carrier device was given");
    weights_ = carrier_->weights_;
    weightBytes = 0;
  } else if (kiln_status s = allocate(weights_, weightBytes, "weights"))
    return s;
  if (weightBytes > 0)
    if (kiln_status s =
            check(d.memcpyHtoD(weights_, model_.weights(), weightBytes),
                  "uploading the weights"))
      return s;
  if (model_.splatSize() > 0) {
    if (kiln_status s = allocate(splat_, model_.splatSize(), "splat weights"))
      return s;
    for (const BufferDesc &b : model_.buffers())
      if (b.kind == BufferDesc::Splat)
        if (kiln_status s =
                check(d.memsetD32(splat_ + b.offset, b.splatBits, b.size / 4),
                      "filling splat weights"))
          return s;
  }
  uint64_t stagingBytes = 0;
  auto slot = [&](const TensorDesc &t) {
    uint64_t offset = stagingBytes;
    stagingBytes += (t.bytes + KILN_ARTIFACT_ALIGNMENT - 1) /
                    KILN_ARTIFACT_ALIGNMENT * KILN_ARTIFACT_ALIGNMENT;
    return offset;
  };
  for (const TensorDesc &t : model_.inputs())
    inputSlots_.push_back(slot(t));
  deviceInputs_.assign(model_.inputs().size(), 0);
  deviceOutputs_.assign(model_.outputs().size(), 0);
  for (const TensorDesc &t : model_.outputs()) {
    auto same = [&](const TensorDesc &u) { return u.buffer == t.buffer; };
    outputInPlace_.push_back(
        model_.buffers()[t.buffer].kind == BufferDesc::Arena &&
        std::none_of(model_.inputs().begin(), model_.inputs().end(), same) &&
        std::count_if(model_.outputs().begin(), model_.outputs().end(), same) ==
            1);
  }
  for (const TensorDesc &t : model_.outputs())
    outputSlots_.push_back(slot(t));
  for (const CheckDesc &c : model_.checks())
    checkSlots_.push_back(slot(c.tensor));
  void *pinned = nullptr;
  if (cu::Result r =
          d.memAllocHost(&pinned, std::max<uint64_t>(stagingBytes, 1)))
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot allocate " + std::to_string(stagingBytes) +
                    " bytes of pinned host memory for inputs and outputs: " +
                    cu::describe(d, r));
  staging_ = static_cast<uint8_t *>(pinned);
  return loadKernels();
}

/// The image for this GPU: a cubin for exactly its chip, else PTX for a
/// chip it can run (the driver compiles PTX forward to newer GPUs).
kiln_status GpuExecutor::selectImage(const GpuImageDesc *&image) {
  int major = 0, minor = 0;
  driver_->deviceGetAttribute(&major, cu::kAttrComputeCapabilityMajor, device_);
  driver_->deviceGetAttribute(&minor, cu::kAttrComputeCapabilityMinor, device_);
  int capability = major * 10 + minor;
  std::string chip = "sm_" + std::to_string(capability);
  image = nullptr;
  int bestPtx = -1;
  std::vector<std::string> available;
  for (const GpuImageDesc &candidate : model_.gpuImages()) {
    available.push_back(candidate.chip + " " + candidate.format);
    if (candidate.format == "cubin" &&
        (candidate.chip == chip || candidate.chip == chip + "a")) {
      image = &candidate;
      return KILN_OK;
    }
    int version = std::atoi(candidate.chip.c_str() + 3);
    if (candidate.format == "ptx" && version <= capability &&
        version > bestPtx) {
      bestPtx = version;
      image = &candidate;
    }
  }
  if (image)
    return KILN_OK;
  return fail(KILN_ERROR_KERNEL_LOAD,
              "the artifact has no device code for " + deviceName_ + " (" +
                  chip + "); it holds " + quoteList(available) +
                  ": recompile with --target=cuda:" + chip);
}

kiln_status GpuExecutor::loadModule(const GpuImageDesc *&loaded) {
  std::vector<const GpuImageDesc *> candidates;
  if (api_ == GpuApi::Cuda) {
    const GpuImageDesc *image = nullptr;
    if (kiln_status s = selectImage(image))
      return s;
    candidates.push_back(image);
  } else {
    for (const GpuImageDesc &image : model_.gpuImages())
      candidates.push_back(&image);
  }
  std::vector<std::string> available, refusals;
  for (const GpuImageDesc *image : candidates) {
    // cuModuleLoadData wants PTX NUL-terminated; the image is not.
    std::string ptx;
    const void *data = image->data;
    if (image->format == "ptx") {
      ptx.assign(reinterpret_cast<const char *>(image->data), image->size);
      data = ptx.c_str();
    }
    cu::Result r = driver_->moduleLoadData(&module_, data);
    if (r == 0) {
      loaded = image;
      return KILN_OK;
    }
    module_ = nullptr;
    available.push_back(image->chip + " " + image->format);
    refusals.push_back(cu::describe(*driver_, r));
  }
  if (candidates.size() == 1)
    return fail(KILN_ERROR_KERNEL_LOAD, "cannot load the " + available[0] +
                                            " image on " + deviceName_ + ": " +
                                            refusals[0]);
  return fail(KILN_ERROR_KERNEL_LOAD,
              "no code object of the artifact loads on " + deviceName_ +
                  " (it holds " + quoteList(available) +
                  "; the last one: " + refusals.back() +
                  "): recompile with --target=rocm:CHIP for this GPU's chip "
                  "(rocminfo names it)");
}

kiln_status GpuExecutor::loadKernels() {
  const std::vector<DispatchDesc> &dispatches = model_.dispatches();
  if (dispatches.empty())
    return KILN_OK;
  const GpuImageDesc *image = nullptr;
  if (kiln_status s = loadModule(image))
    return s;
  for (const DispatchDesc &dispatch : dispatches) {
    cu::Function fn = nullptr;
    if (cu::Result r =
            driver_->moduleGetFunction(&fn, module_, dispatch.kernel.c_str()))
      return fail(KILN_ERROR_KERNEL_LOAD,
                  "kernel '" + dispatch.kernel + "' (ONNX nodes " +
                      quoteList(dispatch.nodes) + ") is not in the " +
                      image->chip + " image: " + cu::describe(*driver_, r));
    if (kiln_status s = checkSignature(dispatch, *image))
      return s;
    if (kiln_status s = allowDynamicSharedMemory(fn, dispatch))
      return s;
    functions_.push_back(fn);
    resources_.push_back(queryResources(fn, dispatch));
    std::vector<cu::DevicePtr> pointers;
    for (uint32_t b : dispatch.bindings) {
      const BufferDesc &buffer = model_.buffers()[b];
      pointers.push_back(devicePointer(buffer));
    }
    pointers_.push_back(std::move(pointers));
  }
  // Parameter arrays point into pointers_, which no longer moves.
  for (std::vector<cu::DevicePtr> &pointers : pointers_) {
    std::vector<void *> params;
    for (cu::DevicePtr &p : pointers)
      params.push_back(&p);
    params_.push_back(std::move(params));
  }
  return KILN_OK;
}

kiln_status GpuExecutor::checkSignature(const DispatchDesc &dispatch,
                                        const GpuImageDesc &image) {
  // Words: bindings, blocks, threads per block, dynamic shared bytes, then
  // the bytes reached in each binding (kiln-add-gpu-kernel-signatures).
  constexpr size_t kHeaderWords = 4;
  std::string kernel = "kernel '" + dispatch.kernel + "' (ONNX nodes " +
                       quoteList(dispatch.nodes) + ")";
  std::string name = dispatch.kernel + "__signature";
  cu::DevicePtr global = 0;
  size_t bytes = 0;
  if (driver_->moduleGetGlobal(&global, &bytes, module_, name.c_str()) != 0)
    return fail(KILN_ERROR_KERNEL_LOAD,
                kernel + " has no signature in the " + image.chip + " image");
  size_t expected = (kHeaderWords + dispatch.bindings.size()) * 8;
  if (bytes != expected)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                kernel + " binds " + std::to_string(dispatch.bindings.size()) +
                    " buffers; its signature in the " + image.chip +
                    " image has " + std::to_string(bytes) + " bytes, not " +
                    std::to_string(expected));
  std::vector<uint64_t> words(bytes / 8);
  if (kiln_status s =
          check(driver_->memcpyDtoHAsync(words.data(), global, bytes, stream_),
                "reading " + kernel + "'s signature"))
    return s;
  if (kiln_status s = check(driver_->streamSynchronize(stream_),
                            "reading " + kernel + "'s signature"))
    return s;
  if (words[2] != dispatch.threads)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                kernel + " runs blocks of " + std::to_string(dispatch.threads) +
                    " threads; the kernel was compiled for " +
                    std::to_string(words[2]));
  if (words[3] != dispatch.dynamicWorkgroupMemory)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                kernel + " launches with " +
                    std::to_string(dispatch.dynamicWorkgroupMemory) +
                    " bytes of dynamic shared memory; the kernel was "
                    "compiled for " +
                    std::to_string(words[3]));
  KernelObject::Signature signature;
  signature.workgroups = words[1];
  signature.bindingBytes.assign(words.begin() + kHeaderWords, words.end());
  return model_.checkSignature(dispatch, signature, kernel);
}

kiln_status
GpuExecutor::allowDynamicSharedMemory(cu::Function fn,
                                      const DispatchDesc &dispatch) {
  uint32_t bytes = dispatch.dynamicWorkgroupMemory;
  if (bytes <= cu::kStaticSharedMemoryBytes || !driver_->funcSetAttribute)
    return KILN_OK;
  std::string kernel = "kernel '" + dispatch.kernel + "' (ONNX nodes " +
                       quoteList(dispatch.nodes) + ")";
  int limit = 0;
  if (driver_->deviceGetAttribute(&limit, cu::kAttrMaxSharedMemoryPerBlockOptin,
                                  device_) == 0 &&
      bytes > uint32_t(limit))
    return fail(KILN_ERROR_KERNEL_LOAD,
                kernel + " needs " + std::to_string(bytes) +
                    " bytes of shared memory per block; " + deviceName_ +
                    " allows " + std::to_string(limit) +
                    ": recompile with --target=cuda:CHIP for this GPU's chip");
  if (cu::Result r = driver_->funcSetAttribute(
          fn, cu::kFuncAttrMaxDynamicSharedSizeBytes, int(bytes)))
    return fail(KILN_ERROR_KERNEL_LOAD,
                "allowing " + kernel + " " + std::to_string(bytes) +
                    " bytes of dynamic shared memory failed on " + deviceName_ +
                    ": " + cu::describe(*driver_, r));
  return KILN_OK;
}

kiln_kernel_resources
GpuExecutor::queryResources(cu::Function fn,
                            const DispatchDesc &dispatch) const {
  // Only reported (kiln-bench, the C API), never relied on: a query the
  // driver lacks or refuses leaves that value unknown (-1).
  kiln_kernel_resources resources = {-1, -1, -1, -1};
  if (const auto get = driver_->funcGetAttribute) {
    int value = 0;
    if (get(&value, cu::kFuncAttrNumRegs, fn) == 0)
      resources.registers = value;
    if (get(&value, cu::kFuncAttrLocalSizeBytes, fn) == 0)
      resources.local_bytes = value;
    if (get(&value, cu::kFuncAttrSharedSizeBytes, fn) == 0)
      resources.shared_bytes =
          int64_t(value) + int64_t(dispatch.dynamicWorkgroupMemory);
  }
  int blocks = 0;
  if (driver_->occupancyMaxActiveBlocksPerMultiprocessor &&
      driver_->occupancyMaxActiveBlocksPerMultiprocessor(
          &blocks, fn, int(dispatch.threads),
          dispatch.dynamicWorkgroupMemory) == 0)
    resources.blocks_per_multiprocessor = blocks;
  return resources;
}

// Empty tensors copy nothing: their pointers may be null (an empty staging
// area, an empty vector's data()), which memcpy may not be given even for 0
// bytes.

void GpuExecutor::writeInput(int index, const void *data, size_t bytes) {
  if (bytes)
    std::memcpy(staging_ + inputSlots_[index], data, bytes);
  deviceInputs_[index] = 0;
}

void GpuExecutor::readInputFromDevice(int index, uint64_t pointer) {
  deviceInputs_[index] = cu::DevicePtr(pointer);
}

void GpuExecutor::bindOutputToDevice(int index, uint64_t pointer) {
  deviceOutputs_[index] = cu::DevicePtr(pointer);
}

kiln_status GpuExecutor::writeOutputToDevice(int index, uint64_t pointer,
                                             size_t bytes) {
  const TensorDesc &t = model_.outputs()[index];
  std::string what = "copying output '" + t.name + "' to device memory";
  if (kiln_status s = check(driver_->ctxSetCurrent(context_), what))
    return s;
  if (kiln_status s = check(driver_->memcpyDtoDAsync(cu::DevicePtr(pointer),
                                                     bufferPointer(t.buffer),
                                                     bytes, stream_),
                            what))
    return s;
  return check(driver_->streamSynchronize(stream_), what);
}

void GpuExecutor::readOutput(int index, void *data, size_t bytes) const {
  if (bytes)
    std::memcpy(data, staging_ + outputSlots_[index], bytes);
}

void GpuExecutor::readCheck(int index, void *data, size_t bytes) const {
  if (bytes)
    std::memcpy(data, staging_ + checkSlots_[index], bytes);
}

kiln_status GpuExecutor::launch(size_t index) {
  const DispatchDesc &dispatch = model_.dispatches()[index];
  cu::Result r = driver_->launchKernel(
      functions_[index], dispatch.workgroups, 1, 1, dispatch.threads, 1, 1,
      dispatch.dynamicWorkgroupMemory, stream_, params_[index].data(), nullptr);
  if (r != 0)
    return fail(KILN_ERROR_INTERNAL,
                "launching kernel '" + dispatch.kernel + "' (ONNX nodes " +
                    quoteList(dispatch.nodes) + ") failed on " + deviceName_ +
                    ": " + cu::describe(*driver_, r));
  return KILN_OK;
}

kiln_status GpuExecutor::captureGraph() {
  const cu::Driver &d = *driver_;
  if (kiln_status s =
          check(d.streamBeginCapture(stream_, cu::kCaptureModeThreadLocal),
                "starting graph capture"))
    return s;
  for (size_t i = 0; i < functions_.size(); ++i)
    if (kiln_status s = launch(i)) {
      cu::Graph broken = nullptr;
      d.streamEndCapture(stream_, &broken);
      if (broken)
        d.graphDestroy(broken);
      return s;
    }
  cu::Graph graph = nullptr;
  if (kiln_status s =
          check(d.streamEndCapture(stream_, &graph), "ending graph capture"))
    return s;
  kiln_status s =
      check(d.graphInstantiateWithFlags(&graph_, graph, 0),
            std::string("instantiating the ") + apiName() + " graph");
  d.graphDestroy(graph);
  return s;
}

kiln_status GpuExecutor::readBuffer(uint32_t index, void *data, size_t bytes) {
  const cu::Driver &d = *driver_;
  if (kiln_status s =
          check(d.memcpyDtoHAsync(data, bufferPointer(index), bytes, stream_),
                "copying a dispatch result to the host"))
    return s;
  return checkExecution(d.streamSynchronize(stream_),
                        "copying a dispatch result to the host");
}

kiln_status GpuExecutor::run(double *dispatchMs,
                             const DispatchObserver *observer) {
  if (!deadReason_.empty())
    return fail(KILN_ERROR_INTERNAL,
                std::string("this ") + apiName() +
                    " session is unusable after a device fault in an "
                    "earlier run (" +
                    deadReason_ + "); destroy it and create a new session");
  const cu::Driver &d = *driver_;
  if (kiln_status s = check(d.ctxSetCurrent(context_), "cuCtxSetCurrent"))
    return s;
  bindInputPointers();
  for (size_t i = 0; i < model_.inputs().size(); ++i) {
    const TensorDesc &t = model_.inputs()[i];
    const BufferDesc &b = model_.buffers()[t.buffer];
    // An input in device memory is read there by the kernels.
    if (t.bytes == 0 || deviceInputs_[i])
      continue;
    if (kiln_status s = check(d.memcpyHtoDAsync(arena_ + b.offset,
                                                staging_ + inputSlots_[i],
                                                t.bytes, stream_),
                              "copying input '" + t.name + "' to the device"))
      return s;
  }
  if (dispatchMs || observer) {
    std::vector<cu::Event> events(functions_.size() + 1, nullptr);
    kiln_status status = KILN_OK;
    for (cu::Event &e : events)
      if (status == KILN_OK)
        status = check(d.eventCreate(&e, 0), "cuEventCreate");
    if (status) {
      for (cu::Event e : events)
        if (e)
          d.eventDestroy(e);
      return status;
    }
    d.eventRecord(events[0], stream_);
    for (size_t i = 0; i < functions_.size() && status == KILN_OK; ++i) {
      status = launch(i);
      d.eventRecord(events[i + 1], stream_);
      if (observer && status == KILN_OK) {
        status = checkExecution(d.eventSynchronize(events[i + 1]),
                                "running kernel '" +
                                    model_.dispatches()[i].kernel + "'");
        if (status == KILN_OK)
          status = (*observer)(i);
      }
    }
    if (status == KILN_OK)
      status = checkExecution(d.eventSynchronize(events.back()),
                              "running the kernels");
    for (size_t i = 0; dispatchMs && i < functions_.size() && status == KILN_OK;
         ++i) {
      float ms = 0;
      d.eventElapsedTime(&ms, events[i], events[i + 1]);
      dispatchMs[i] = ms;
    }
    for (cu::Event e : events)
      d.eventDestroy(e);
    if (status)
      return status;
  } else if (!functions_.empty()) {
    if (!graph_)
      if (kiln_status s = captureGraph())
        return s;
    if (kiln_status s =
            check(d.graphLaunch(graph_, stream_),
                  std::string("launching the ") + apiName() + " graph"))
      return s;
  }
  auto copyOut = [&](const TensorDesc &t, uint64_t slot) {
    if (t.bytes == 0)
      return KILN_OK;
    return check(d.memcpyDtoHAsync(staging_ + slot, bufferPointer(t.buffer),
                                   t.bytes, stream_),
                 "copying '" + t.name + "' to the host");
  };
  for (size_t i = 0; i < model_.outputs().size(); ++i) {
    const TensorDesc &t = model_.outputs()[i];
    // An output in device memory stays there: copied there when the
    // kernels could not write it in place, never to the host.
    if (deviceOutputs_[i]) {
      if (!outputInPlace_[i] && t.bytes > 0)
        if (kiln_status s = check(
                d.memcpyDtoDAsync(deviceOutputs_[i], bufferPointer(t.buffer),
                                  t.bytes, stream_),
                "copying output '" + t.name + "' to its device memory"))
          return s;
      continue;
    }
    if (kiln_status s = copyOut(t, outputSlots_[i]))
      return s;
  }
  for (size_t i = 0; i < model_.checks().size(); ++i)
    if (kiln_status s = copyOut(model_.checks()[i].tensor, checkSlots_[i]))
      return s;
  return checkExecution(
      d.streamSynchronize(stream_),
      "running the model (a kernel faulted or the copies failed)");
}
