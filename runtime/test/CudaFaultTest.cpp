//===- CudaFaultTest.cpp - the CUDA device against a fake driver ----------===//
//
// Runs the runtime's CUDA device on FakeCudaDriver.cpp (loaded as
// libcuda.so.1 before the runtime looks for it), so its whole life —
// device memory, module load, graph capture and replay, profiling — and
// every driver failure are tested on machines without a GPU. Kernels do not
// execute on the fake: these tests check the bookkeeping and the errors,
// scripts/gpu-check checks the numbers on a real GPU.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"
#include "TestArtifact.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <thread>

using namespace kiln_test;

namespace {

/// Loads the fake by path; the runtime's dlopen("libcuda.so.1") then finds
/// it by its soname instead of any real driver.
const FakeDriver *fakeDriver() {
  static FakeDriver driver = loadFakeDriver(KILN_FAKE_CUDA_DRIVER);
  return driver.reset ? &driver : nullptr;
}

/// The default test model for cuda:sm_90, with a PTX image that declares
/// both of its kernels.
ArtifactSpec cudaSpec() {
  ArtifactSpec spec;
  spec.target = "cuda:sm_90";
  spec.kernelObject.clear();
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry add_one(\n)\n{ ret; }\n"
                    ".visible .entry scale(\n)\n{ ret; }\n";
  spec.gpuImages.push_back({"sm_90", "ptx", {ptx.begin(), ptx.end()}});
  return spec;
}

class CudaFaults : public ::testing::Test {
protected:
  void SetUp() override {
    fake = fakeDriver();
    ASSERT_NE(fake, nullptr) << "cannot load the fake driver "
                             << KILN_FAKE_CUDA_DRIVER << ": " << ::dlerror();
    fake->reset();
  }
  void TearDown() override {
    kiln_session_destroy(session);
    kiln_model_close(model);
    // Whatever happened, the runtime released every driver object.
    for (const char *what : kLiveCounts)
      EXPECT_EQ(fake->count(what), 0) << what;
  }

  kiln_status create(const ArtifactSpec &spec = cudaSpec()) {
    std::vector<uint8_t> bytes = spec.build();
    kiln_status s = kiln_model_open_memory(bytes.data(), bytes.size(), &model);
    EXPECT_EQ(s, KILN_OK) << lastError();
    if (s != KILN_OK)
      return s;
    return kiln_session_create(model, "cuda", nullptr, &session);
  }

  kiln_status setX(const std::vector<float> &x) {
    const int64_t shape[] = {N};
    return kiln_session_set_input(session, "x", KILN_DTYPE_F32, shape, 1,
                                  x.data(), x.size() * sizeof(float));
  }

  /// Arms `entry` to fail on its nth next call.
  void failNext(const char *entry, int code, int nth = 1, bool sticky = false) {
    fake->fail(entry, nth, code, sticky);
  }

  const FakeDriver *fake = nullptr;
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
};

constexpr int kInvalidValue = 1, kIllegalAddress = 700, kUnknown = 999;

} // namespace

TEST_F(CudaFaults, CapturesOnceAndReplays) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 1.0f)), KILN_OK);
  for (int run = 0; run < 3; ++run)
    ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_EQ(fake->count("graph-launches"), 3);
  EXPECT_EQ(fake->count("launches"), 6);
  std::vector<double> ms(2, -1);
  ASSERT_EQ(kiln_session_run_profiled(session, ms.data(), 2), KILN_OK)
      << lastError();
  EXPECT_EQ(fake->count("launches"), 8); // launched one by one
  EXPECT_GT(ms[0], 0.0);
  std::vector<float> y(N);
  EXPECT_EQ(kiln_session_get_output(session, "y", y.data(), kTensorBytes),
            KILN_OK);
}

TEST_F(CudaFaults, ObservedRunLaunchesOneByOneAndReadsResults) {
  ArtifactSpec spec = cudaSpec();
  // The fake kernels write nothing: record x (bound to add_one) as the
  // first dispatch's result to see device bytes come back.
  spec.dispatches[0].results = {{"x", fb::DType_F32, {N}, 0}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> x(N);
  for (int64_t i = 0; i < N; ++i)
    x[i] = float(i) * 2.0f;
  ASSERT_EQ(setX(x), KILN_OK);
  struct Seen {
    std::vector<int32_t> dispatches;
    std::vector<float> x = std::vector<float>(N);
  } seen;
  auto observe = [](kiln_session *s, int32_t dispatch, void *user) {
    auto *seen = static_cast<Seen *>(user);
    seen->dispatches.push_back(dispatch);
    if (dispatch == 0)
      return kiln_session_get_dispatch_result(s, 0, 0, seen->x.data(),
                                              kTensorBytes);
    return KILN_OK;
  };
  ASSERT_EQ(kiln_session_run_observed(session, observe, &seen), KILN_OK)
      << lastError();
  EXPECT_EQ(seen.dispatches, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(seen.x, x);
  EXPECT_EQ(fake->count("launches"), 2);
  EXPECT_EQ(fake->count("graph-launches"), 0);
  // A failed copy is reported and stops the run.
  failNext("cuMemcpyDtoHAsync", kInvalidValue);
  EXPECT_EQ(kiln_session_run_observed(session, observe, &seen),
            KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "copying a dispatch result to the host"))
      << lastError();
}

TEST_F(CudaFaults, DataRoundTripsThroughDeviceMemory) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches.clear();
  spec.outputs = {{"same", fb::DType_F32, {N}, 0},
                  {"const", fb::DType_F32, {N}, 3}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> x(N), out(N);
  for (int64_t i = 0; i < N; ++i)
    x[i] = float(i) - 3.0f;
  ASSERT_EQ(setX(x), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_get_output(session, "same", out.data(), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(out, x);
  ASSERT_EQ(kiln_session_get_output(session, "const", out.data(), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(out[10], 5.0f); // the weights were uploaded
}

// Device memory in and out (the fake driver's is host memory): the input
// is copied device to device at each run, from the memory as it is then;
// an output is copied device to device into the caller's memory; setting
// the input from host memory again goes back to it.
TEST_F(CudaFaults, InputsAndOutputsInDeviceMemory) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches.clear();
  spec.outputs = {{"same", fb::DType_F32, {N}, 0}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> onDevice(N), out(N), host(N, 7.0f);
  for (int64_t i = 0; i < N; ++i)
    onDevice[i] = float(i) * 2.0f;
  const int64_t shape[] = {N};
  ASSERT_EQ(kiln_session_set_input_device(
                session, "x", KILN_DTYPE_F32, shape, 1,
                uint64_t(uintptr_t(onDevice.data())), kTensorBytes),
            KILN_OK)
      << lastError();
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_get_output_device(
                session, 0, uint64_t(uintptr_t(out.data())), kTensorBytes),
            KILN_OK)
      << lastError();
  EXPECT_EQ(out, onDevice);
  onDevice[3] = -1.0f; // read again at the next run
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_get_output_at(session, 0, out.data(), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(out[3], -1.0f);
  ASSERT_EQ(setX(host), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_get_output_at(session, 0, out.data(), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(out, host);
}

TEST_F(CudaFaults, DeviceMemoryMisuse) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  std::vector<float> memory(N);
  uint64_t pointer = uint64_t(uintptr_t(memory.data()));
  const int64_t shape[] = {N}, wrong[] = {N / 2};
  EXPECT_EQ(kiln_session_get_output_device(session, 0, pointer, kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(lastError(), "requested before a run")) << lastError();
  EXPECT_EQ(kiln_session_set_input_device(session, "x", KILN_DTYPE_F32, wrong,
                                          1, pointer, kTensorBytes / 2),
            KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(kiln_session_set_input_device(session, "x", KILN_DTYPE_I32, shape,
                                          1, pointer, kTensorBytes),
            KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(kiln_session_set_input_device(session, "x", KILN_DTYPE_F32, shape,
                                          1, 0, kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(lastError(), "input 'x': device pointer is 0"))
      << lastError();
}

// An input in device memory is not copied: the kernels that read it are
// launched on that memory (the captured graph made again when the pointer
// changes), and on the arena again once it is set from host memory.
TEST_F(CudaFaults, KernelsReadDeviceInputsInPlace) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  std::vector<float> first(N, 1.0f), second(N, 2.0f);
  const int64_t shape[] = {N};
  failNext("cuMemcpyDtoDAsync", kInvalidValue, 1, /*sticky=*/true);
  for (std::vector<float> *memory : {&first, &second}) {
    uint64_t pointer = uint64_t(uintptr_t(memory->data()));
    ASSERT_EQ(kiln_session_set_input_device(session, "x", KILN_DTYPE_F32, shape,
                                            1, pointer, kTensorBytes),
              KILN_OK);
    ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
    EXPECT_EQ(fake->firstArgument("add_one"), pointer);
  }
  ASSERT_EQ(setX(first), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  uint64_t arena = fake->firstArgument("add_one");
  EXPECT_NE(arena, 0u);
  EXPECT_NE(arena, uint64_t(uintptr_t(first.data())));
  EXPECT_NE(arena, uint64_t(uintptr_t(second.data())));
}

// An output bound to device memory is written there by its kernel (here
// add_one, whose first argument the fake records, made to write buffer 1
// first), not copied to the host; unbound, it is the arena's again.
TEST_F(CudaFaults, KernelsWriteBoundOutputsInPlace) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches[0].bindings = {1, 0};
  spec.outputs = {{"mid", fb::DType_F32, {N}, 1}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> x(N, 1.0f), out(N);
  uint64_t pointer = uint64_t(uintptr_t(out.data()));
  ASSERT_EQ(setX(x), KILN_OK);
  ASSERT_EQ(kiln_session_bind_output_device(session, 0, pointer, kTensorBytes),
            KILN_OK)
      << lastError();
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_EQ(fake->firstArgument("add_one"), pointer);
  EXPECT_EQ(kiln_session_get_output_at(session, 0, x.data(), kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(lastError(), "output 'mid' goes to device memory"))
      << lastError();
  ASSERT_EQ(kiln_session_bind_output_device(session, 0, 0, 0), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_NE(fake->firstArgument("add_one"), pointer);
  EXPECT_EQ(kiln_session_get_output_at(session, 0, x.data(), kTensorBytes),
            KILN_OK);
}

// An output that is also an input cannot be written in place: bound to
// device memory, the run copies it there.
TEST_F(CudaFaults, BoundOutputThatIsAnInputIsCopied) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches.clear();
  spec.outputs = {{"same", fb::DType_F32, {N}, 0}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> x(N), out(N);
  for (int64_t i = 0; i < N; ++i)
    x[i] = float(i);
  ASSERT_EQ(setX(x), KILN_OK);
  ASSERT_EQ(kiln_session_bind_output_device(
                session, 0, uint64_t(uintptr_t(out.data())), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(kiln_session_bind_output_device(session, 0,
                                            uint64_t(uintptr_t(out.data())), 8),
            KILN_ERROR_SIZE_MISMATCH);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_EQ(out, x);
}

TEST_F(CudaFaults, ChecksAreCopiedBackWithTheOutputs) {
  // A check on the input's device buffer: copied to the host with the
  // outputs, then read; a non-zero byte fails the run with its message.
  ArtifactSpec spec = cudaSpec();
  spec.dispatches.clear();
  spec.outputs = {{"same", fb::DType_F32, {N}, 0}};
  spec.checks = {{"index out of range", {"check_0", fb::DType_F32, {N}, 0}}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> x(N, 0.0f);
  ASSERT_EQ(setX(x), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  x[5] = 2.0f;
  ASSERT_EQ(setX(x), KILN_OK);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INVALID_INPUT_VALUE);
  EXPECT_EQ(lastError(), "index out of range; the run's outputs are not valid");
}

TEST_F(CudaFaults, OutOfDeviceMemoryNamesTheBytes) {
  fake->setMemory(8192); // the arena needs 12288
  EXPECT_EQ(create(), KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(session, nullptr);
  EXPECT_TRUE(contains(lastError(),
                       "not enough device memory on Fake GPU (CUDA device 0) "
                       "for the arena: asked 12288 bytes, 8192 free of 8192"))
      << lastError();
  kiln_model_close(model);
  model = nullptr;
  fake->setMemory(12288 + 100); // the arena fits, the weights do not
  EXPECT_EQ(create(), KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(lastError(), "for the weights: asked 4096 bytes, 100 "
                                    "free"))
      << lastError();
}

// Every driver call made while a session is created, failing in turn: each
// is an error naming what failed, and nothing is left allocated.
TEST_F(CudaFaults, EverySetupFailureIsReported) {
  struct Case {
    const char *entry;
    int nth;
    const char *message;
  } cases[] = {
      {"cuDeviceGet", 1, "cuDeviceGet failed"},
      {"cuDevicePrimaryCtxRetain", 1, "retaining the primary context failed"},
      {"cuCtxSetCurrent", 1, "cuCtxSetCurrent failed"},
      {"cuStreamCreate", 1, "creating a stream failed"},
      {"cuMemAlloc", 1, "for the arena"},
      {"cuMemAlloc", 2, "for the weights"},
      {"cuMemcpyHtoD", 1, "uploading the weights failed"},
      {"cuMemAllocHost", 1, "bytes of pinned host memory"},
      {"cuModuleLoadData", 1, "cannot load the sm_90 ptx image"},
      {"cuModuleGetFunction", 2,
       "kernel 'scale' (ONNX nodes 'Mul_1', "
       "'Identity_2') is not in the sm_90 image"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.entry) + " #" + std::to_string(c.nth));
    fake->reset();
    failNext(c.entry, kUnknown, c.nth);
    EXPECT_NE(create(), KILN_OK);
    EXPECT_EQ(session, nullptr);
    EXPECT_TRUE(contains(lastError(), c.message)) << lastError();
    kiln_model_close(model);
    model = nullptr;
    EXPECT_EQ(fake->count("live-allocations"), 0);
    EXPECT_EQ(fake->count("live-modules"), 0);
  }
  fake->reset();
  ASSERT_EQ(create(), KILN_OK) << lastError(); // nothing was poisoned
}

// A kernel whose stage buffers exceed 48 KiB launches with dynamic shared
// memory after the runtime raised its limit (the fake refuses the launch
// otherwise), in the captured graph and one by one alike.
TEST_F(CudaFaults, DynamicSharedMemoryIsAllowedBeforeLaunch) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches[1].dynamicWorkgroupMemory = 64 * 1024;
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 1.0f)), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  std::vector<double> ms(2, -1);
  EXPECT_EQ(kiln_session_run_profiled(session, ms.data(), 2), KILN_OK)
      << lastError();
  EXPECT_EQ(fake->count("launches"), 4);
}

// What each kernel takes of the device is read from the driver at load:
// the fake's 40 registers, no local or static shared memory, the dynamic
// shared memory a dispatch launches with, and the blocks its H200-like
// multiprocessor holds (one-thread blocks: 32, or 3 of 65 KiB).
TEST_F(CudaFaults, KernelResourcesAreReadAtLoad) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches[1].dynamicWorkgroupMemory = 64 * 1024;
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  kiln_kernel_resources r[2];
  for (int d = 0; d < 2; ++d)
    ASSERT_EQ(kiln_session_dispatch_resources(session, d, &r[d]), KILN_OK)
        << lastError();
  EXPECT_EQ(r[0].registers, 40);
  EXPECT_EQ(r[0].local_bytes, 0);
  EXPECT_EQ(r[0].shared_bytes, 0);
  EXPECT_EQ(r[0].blocks_per_multiprocessor, 32);
  EXPECT_EQ(r[1].shared_bytes, 64 * 1024);
  EXPECT_EQ(r[1].blocks_per_multiprocessor, 3);
  EXPECT_EQ(kiln_session_dispatch_resources(session, 2, &r[0]),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(lastError(), "dispatch index 2 out of range [0, 2)"))
      << lastError();
  EXPECT_EQ(kiln_session_dispatch_resources(session, 0, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
}

// A query the driver refuses leaves that value unknown (-1); the session
// loads and runs all the same.
TEST_F(CudaFaults, KernelResourcesTheDriverRefusesAreUnknown) {
  failNext("cuFuncGetAttribute", kInvalidValue);
  failNext("cuOccupancyMaxActiveBlocksPerMultiprocessor", kInvalidValue, 2);
  ASSERT_EQ(create(), KILN_OK) << lastError();
  kiln_kernel_resources r[2];
  for (int d = 0; d < 2; ++d)
    ASSERT_EQ(kiln_session_dispatch_resources(session, d, &r[d]), KILN_OK);
  EXPECT_EQ(r[0].registers, -1);
  EXPECT_EQ(r[0].local_bytes, 0);
  EXPECT_EQ(r[0].blocks_per_multiprocessor, 32);
  EXPECT_EQ(r[1].registers, 40);
  EXPECT_EQ(r[1].blocks_per_multiprocessor, -1);
  ASSERT_EQ(setX(std::vector<float>(N, 1.0f)), KILN_OK);
  EXPECT_EQ(kiln_session_run(session), KILN_OK) << lastError();
}

TEST_F(CudaFaults, DynamicSharedMemoryOverTheDeviceLimit) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches[1].dynamicWorkgroupMemory = 200 * 1024;
  fake->setSharedMemoryOptin(99 * 1024);
  std::vector<uint8_t> bytes = spec.build();
  ASSERT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model),
            KILN_OK);
  EXPECT_EQ(kiln_session_create(model, "cuda", nullptr, &session),
            KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(),
                       "kernel 'scale' (ONNX nodes 'Mul_1', 'Identity_2') "
                       "needs 204800 bytes of shared memory per block; Fake "
                       "GPU (CUDA device 0) allows 101376"))
      << lastError();
}

TEST_F(CudaFaults, DynamicSharedMemoryRefused) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches[0].dynamicWorkgroupMemory = 96 * 1024;
  failNext("cuFuncSetAttribute", kInvalidValue);
  std::vector<uint8_t> bytes = spec.build();
  ASSERT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model),
            KILN_OK);
  EXPECT_EQ(kiln_session_create(model, "cuda", nullptr, &session),
            KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(), "allowing kernel 'add_one' (ONNX nodes "
                                    "'Add_0') 98304 bytes of dynamic shared "
                                    "memory failed on Fake GPU (CUDA device "
                                    "0): CUDA_ERROR_INVALID_VALUE"))
      << lastError();
}

TEST_F(CudaFaults, KernelMissingFromTheImage) {
  ArtifactSpec spec = cudaSpec();
  std::string ptx = ".version 8.0\n.target sm_90\n"
                    ".visible .entry add_one(\n)\n{ ret; }\n";
  spec.gpuImages[0].data.assign(ptx.begin(), ptx.end());
  EXPECT_EQ(create(spec), KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(), "kernel 'scale' (ONNX nodes 'Mul_1', "
                                    "'Identity_2') is not in the sm_90 image: "
                                    "CUDA_ERROR_NOT_FOUND"))
      << lastError();
}

TEST_F(CudaFaults, ImageTheDriverRejects) {
  ArtifactSpec spec = cudaSpec();
  spec.gpuImages[0].data.assign(64, 'x');
  EXPECT_EQ(create(spec), KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(), "cannot load the sm_90 ptx image on Fake "
                                    "GPU (CUDA device 0): "
                                    "CUDA_ERROR_INVALID_IMAGE"))
      << lastError();
}

TEST_F(CudaFaults, NoImageForThisChip) {
  ArtifactSpec spec = cudaSpec();
  spec.target = "cuda:sm_80";
  spec.gpuImages[0].chip = "sm_80";
  spec.gpuImages[0].format = "cubin";
  spec.gpuImages[0].data.assign({0x7f, 'E', 'L', 'F'});
  EXPECT_EQ(create(spec), KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(), "no device code for Fake GPU (CUDA device "
                                    "0) (sm_90); it holds 'sm_80 cubin'"))
      << lastError();
}

// A launch refused while the graph is captured fails that run only: the
// broken capture is dropped and the next run captures again.
TEST_F(CudaFaults, LaunchFailureFailsOneRun) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 2.0f)), KILN_OK);
  failNext("cuLaunchKernel", kInvalidValue, 2);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "launching kernel 'scale' (ONNX nodes "
                                    "'Mul_1', 'Identity_2') failed on Fake "
                                    "GPU (CUDA device 0): "
                                    "CUDA_ERROR_INVALID_VALUE"))
      << lastError();
  std::vector<float> y(N);
  EXPECT_EQ(kiln_session_get_output(session, "y", y.data(), kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT); // no successful run yet
  EXPECT_EQ(fake->count("live-graphs"), 0);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_EQ(fake->count("graph-launches"), 1);
  EXPECT_EQ(kiln_session_get_output(session, "y", y.data(), kTensorBytes),
            KILN_OK);
}

TEST_F(CudaFaults, GraphLaunchFailureFailsOneRun) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 2.0f)), KILN_OK);
  failNext("cuGraphLaunch", kInvalidValue);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "launching the CUDA graph failed"))
      << lastError();
  EXPECT_EQ(kiln_session_run(session), KILN_OK) << lastError();
}

// A kernel that faults (an illegal address) poisons the CUDA context: the
// run fails, later runs on the session say why they refuse, and a new
// session works once the device does.
TEST_F(CudaFaults, DeviceFaultKillsTheSession) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 2.0f)), KILN_OK);
  failNext("cuStreamSynchronize", kIllegalAddress, 1, /*sticky=*/true);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "running the model (a kernel faulted or "
                                    "the copies failed) failed on Fake GPU "
                                    "(CUDA device 0): "
                                    "CUDA_ERROR_ILLEGAL_ADDRESS"))
      << lastError();
  for (int retry = 0; retry < 2; ++retry) {
    EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
    EXPECT_TRUE(contains(lastError(), "unusable after a device fault in an "
                                      "earlier run"))
        << lastError();
    EXPECT_TRUE(contains(lastError(), "CUDA_ERROR_ILLEGAL_ADDRESS"))
        << lastError();
  }
  kiln_session_destroy(session);
  session = nullptr;
  fake->reset(); // a new process, or a reset device
  ASSERT_EQ(kiln_session_create(model, "cuda", nullptr, &session), KILN_OK)
      << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 2.0f)), KILN_OK);
  EXPECT_EQ(kiln_session_run(session), KILN_OK) << lastError();
}

TEST_F(CudaFaults, ProfiledRunFailuresLeakNoEvents) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 2.0f)), KILN_OK);
  std::vector<double> ms(2);
  failNext("cuEventCreate", kUnknown, 2);
  EXPECT_EQ(kiln_session_run_profiled(session, ms.data(), 2),
            KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "cuEventCreate failed")) << lastError();
  EXPECT_EQ(fake->count("live-events"), 0);
  failNext("cuLaunchKernel", kInvalidValue, 1);
  EXPECT_EQ(kiln_session_run_profiled(session, ms.data(), 2),
            KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "launching kernel 'add_one'"))
      << lastError();
  EXPECT_EQ(fake->count("live-events"), 0);
  EXPECT_EQ(kiln_session_run_profiled(session, ms.data(), 2), KILN_OK)
      << lastError();
}

TEST_F(CudaFaults, InputCopyFailureNamesTheInput) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 2.0f)), KILN_OK);
  failNext("cuMemcpyHtoDAsync", kUnknown);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "copying input 'x' to the device failed"))
      << lastError();
  EXPECT_EQ(kiln_session_run(session), KILN_OK) << lastError();
}

// Sessions of one model on several threads, each with its own device
// arena (also run under ThreadSanitizer by scripts/tsan.sh).
TEST_F(CudaFaults, SessionsOnSeveralThreads) {
  ASSERT_EQ(create(), KILN_OK) << lastError();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([this] {
      kiln_session *s = nullptr;
      ASSERT_EQ(kiln_session_create(model, "cuda", nullptr, &s), KILN_OK);
      std::vector<float> x(N, 1.0f), y(N);
      const int64_t shape[] = {N};
      for (int iter = 0; iter < 20; ++iter) {
        ASSERT_EQ(kiln_session_set_input(s, "x", KILN_DTYPE_F32, shape, 1,
                                         x.data(), kTensorBytes),
                  KILN_OK);
        ASSERT_EQ(kiln_session_run(s), KILN_OK);
        ASSERT_EQ(kiln_session_get_output(s, "y", y.data(), kTensorBytes),
                  KILN_OK);
      }
      kiln_session_destroy(s);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(fake->count("graph-launches"), 80);
}

// A batch variant whose weights are its carrier's reads the carrier's
// device copy of them: one device allocation fewer, and none freed twice
// (TearDown checks that everything is released).
TEST_F(CudaFaults, BatchVariantsShareTheCarriersDeviceWeights) {
  ArtifactSpec own = withBatchChunk(cudaSpec(), 2);
  ArtifactSpec shared = own;
  shared.weights.clear();
  shared.weightsInParent = true;
  auto liveAllocations = [&](const ArtifactSpec &variant) {
    ArtifactSpec spec = withBatchChunk(cudaSpec(), 4);
    spec.batchVariants = {variant.build()};
    EXPECT_EQ(create(spec), KILN_OK) << lastError();
    long live = fake->count("live-allocations");
    kiln_session_destroy(session);
    kiln_model_close(model);
    session = nullptr;
    model = nullptr;
    return live;
  };
  long withOwnWeights = liveAllocations(own);
  EXPECT_EQ(liveAllocations(shared), withOwnWeights - 1);
}

// A dynamic batch of 4 with kernels for a chunk of 2 beside them: each
// chunk's kernels live on a device of their own (module, arena, graph), a
// batch of 5 runs as pieces of 4 and 2, and everything is released.
TEST_F(CudaFaults, BatchVariantsRunOnDevicesOfTheirOwn) {
  ArtifactSpec spec = withBatchChunk(cudaSpec(), 4);
  spec.batchVariants = {withBatchChunk(cudaSpec(), 2).build()};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  EXPECT_EQ(fake->count("live-modules"), 2);
  const int64_t shape[] = {5, N / 4};
  std::vector<float> x(5 * N / 4, 1.0f), y(x.size());
  ASSERT_EQ(kiln_session_set_input(session, "x", KILN_DTYPE_F32, shape, 2,
                                   x.data(), x.size() * sizeof(float)),
            KILN_OK)
      << lastError();
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_EQ(fake->count("graph-launches"), 2); // one piece on each device
  ASSERT_EQ(
      kiln_session_get_output(session, "y", y.data(), y.size() * sizeof(float)),
      KILN_OK)
      << lastError();
}

/// `spec` whose image carries the signatures of `honest` (what the kernels
/// were compiled for) while its schedule says otherwise.
static ArtifactSpec withSignaturesOf(ArtifactSpec spec,
                                     const ArtifactSpec &honest) {
  std::string signatures = honest.gpuSignatures();
  spec.gpuImages[0].signatures = false;
  spec.gpuImages[0].data.insert(spec.gpuImages[0].data.end(),
                                signatures.begin(), signatures.end());
  return spec;
}

class CudaSignatures : public CudaFaults {
protected:
  /// Opens `spec` and expects the session to be refused with `message`.
  void expectRefused(const ArtifactSpec &spec, kiln_status status,
                     const std::string &message) {
    std::vector<uint8_t> bytes = spec.build();
    ASSERT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model),
              KILN_OK);
    EXPECT_EQ(kiln_session_create(model, "cuda", nullptr, &session), status);
    EXPECT_TRUE(contains(lastError(), message)) << lastError();
  }
};

TEST_F(CudaSignatures, ImageWithoutSignatures) {
  ArtifactSpec spec = cudaSpec();
  spec.gpuImages[0].signatures = false;
  expectRefused(spec, KILN_ERROR_KERNEL_LOAD,
                "kernel 'add_one' (ONNX nodes 'Add_0') has no signature in "
                "the sm_90 image");
}

TEST_F(CudaSignatures, GridLargerThanCompiled) {
  ArtifactSpec forged = withSignaturesOf(cudaSpec(), cudaSpec());
  forged.dispatches[0].workgroups = 70;
  expectRefused(forged, KILN_ERROR_INVALID_ARTIFACT,
                "kernel 'add_one' (ONNX nodes 'Add_0') runs 70 workgroups; "
                "the kernel was compiled for 7");
}

TEST_F(CudaSignatures, BufferSmallerThanTheKernelReaches) {
  ArtifactSpec forged = withSignaturesOf(cudaSpec(), cudaSpec());
  forged.buffers[1].size = kTensorBytes / 2;
  expectRefused(forged, KILN_ERROR_INVALID_ARTIFACT,
                "kernel 'add_one' (ONNX nodes 'Add_0') binding 1 is buffer 1 "
                "of 2048 bytes; the kernel reaches 4096");
}

TEST_F(CudaSignatures, OtherDynamicSharedMemory) {
  ArtifactSpec forged = withSignaturesOf(cudaSpec(), cudaSpec());
  forged.dispatches[1].dynamicWorkgroupMemory = 64 * 1024;
  expectRefused(forged, KILN_ERROR_INVALID_ARTIFACT,
                "kernel 'scale' (ONNX nodes 'Mul_1', 'Identity_2') launches "
                "with 65536 bytes of dynamic shared memory; the kernel was "
                "compiled for 0");
}

TEST_F(CudaSignatures, OtherBlockSize) {
  ArtifactSpec forged = cudaSpec();
  forged.gpuImages[0].signatures = false;
  std::string ptx = ".visible .global .align 8 .u64 add_one__signature[6] = "
                    "{2, 7, 128, 0, 4096, 4096};\n"
                    ".visible .global .align 8 .u64 scale__signature[7] = "
                    "{3, 5, 1, 0, 4096, 4096, 4096};\n";
  forged.gpuImages[0].data.insert(forged.gpuImages[0].data.end(), ptx.begin(),
                                  ptx.end());
  expectRefused(forged, KILN_ERROR_INVALID_ARTIFACT,
                "kernel 'add_one' (ONNX nodes 'Add_0') runs blocks of 1 "
                "threads; the kernel was compiled for 128");
}

TEST_F(CudaSignatures, OtherBindingCount) {
  ArtifactSpec honest = cudaSpec();
  honest.dispatches[1].bindings = {1, 2};
  ArtifactSpec forged = withSignaturesOf(cudaSpec(), honest);
  expectRefused(forged, KILN_ERROR_INVALID_ARTIFACT,
                "kernel 'scale' (ONNX nodes 'Mul_1', 'Identity_2') binds 3 "
                "buffers; its signature in the sm_90 image has 48 bytes, not "
                "56");
}
