//===- HipFaultTest.cpp - the HIP device against a fake runtime -----------===//
//
// The GPU executor driving AMD GPUs through HIP, on FakeCudaDriver.cpp built
// as libamdhip64.so (loaded before the runtime looks for it): code object
// selection by trial load, device memory, graph replay and failures. The
// executor is shared with CUDA (CudaFaultTest.cpp covers every driver
// failure); these tests cover what differs.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"
#include "TestArtifact.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

using namespace kiln_test;

namespace {

/// Loads the fake by path; the runtime's dlopen("libamdhip64.so") then
/// finds it by its soname.
const FakeDriver *fakeHip() {
  static FakeDriver hip = loadFakeDriver(KILN_FAKE_HIP_RUNTIME);
  return hip.reset ? &hip : nullptr;
}

/// A code object stand-in: the ELF magic and the chip it was built for.
std::vector<uint8_t> codeObject(const std::string &chip) {
  std::string bytes = "\x7f"
                      "ELF" +
                      chip;
  return {bytes.begin(), bytes.end()};
}

/// The default test model for rocm, with code objects for `chips`.
ArtifactSpec rocmSpec(std::vector<std::string> chips = {"gfx90a", "gfx942"}) {
  ArtifactSpec spec;
  spec.target = "rocm:gfx90a,gfx942";
  spec.kernelObject.clear();
  for (const std::string &chip : chips)
    spec.gpuImages.push_back({chip, "hsaco", codeObject(chip)});
  return spec;
}

class HipFaults : public ::testing::Test {
protected:
  void SetUp() override {
    hip = fakeHip();
    ASSERT_NE(hip, nullptr) << "cannot load the fake HIP runtime "
                            << KILN_FAKE_HIP_RUNTIME << ": " << ::dlerror();
    hip->reset();
  }
  void TearDown() override {
    kiln_session_destroy(session);
    kiln_model_close(model);
    for (const char *what : kLiveCounts)
      EXPECT_EQ(hip->count(what), 0) << what;
  }

  kiln_status create(const ArtifactSpec &spec) {
    std::vector<uint8_t> bytes = spec.build();
    kiln_status s = kiln_model_open_memory(bytes.data(), bytes.size(), &model);
    EXPECT_EQ(s, KILN_OK) << lastError();
    if (s != KILN_OK)
      return s;
    return kiln_session_create(model, "rocm", nullptr, &session);
  }

  kiln_status setX(const std::vector<float> &x) {
    const int64_t shape[] = {N};
    return kiln_session_set_input(session, "x", KILN_DTYPE_F32, shape, 1,
                                  x.data(), x.size() * sizeof(float));
  }

  const FakeDriver *hip = nullptr;
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
};

} // namespace

// The gfx90a code object is refused by the (gfx942) GPU; the next one loads.
TEST_F(HipFaults, LoadsTheCodeObjectForThisGpuAndReplays) {
  ASSERT_EQ(create(rocmSpec()), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 1.0f)), KILN_OK);
  for (int run = 0; run < 3; ++run)
    ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  EXPECT_EQ(hip->count("graph-launches"), 3);
  EXPECT_EQ(hip->count("launches"), 6);
  std::vector<double> ms(2);
  ASSERT_EQ(kiln_session_run_profiled(session, ms.data(), 2), KILN_OK)
      << lastError();
}

TEST_F(HipFaults, DataRoundTripsThroughDeviceMemory) {
  ArtifactSpec spec = rocmSpec();
  spec.dispatches.clear();
  spec.outputs = {{"same", fb::DType_F32, {N}, 0},
                  {"const", fb::DType_F32, {N}, 3}};
  ASSERT_EQ(create(spec), KILN_OK) << lastError();
  std::vector<float> x(N), out(N);
  for (int64_t i = 0; i < N; ++i)
    x[i] = float(i) * 2.0f;
  ASSERT_EQ(setX(x), KILN_OK);
  ASSERT_EQ(kiln_session_run(session), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_get_output(session, "same", out.data(), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(out, x);
  ASSERT_EQ(kiln_session_get_output(session, "const", out.data(), kTensorBytes),
            KILN_OK);
  EXPECT_EQ(out[10], 5.0f);
}

TEST_F(HipFaults, NoCodeObjectForThisGpu) {
  EXPECT_EQ(create(rocmSpec({"gfx90a"})), KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(), "cannot load the gfx90a hsaco image on "
                                    "Fake GPU (HIP device 0): "
                                    "hipErrorNoBinaryForGpu"))
      << lastError();
}

TEST_F(HipFaults, OutOfDeviceMemoryNamesTheBytes) {
  hip->setMemory(8192);
  EXPECT_EQ(create(rocmSpec()), KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(lastError(), "not enough device memory on Fake GPU "
                                    "(HIP device 0) for the arena: asked "
                                    "12288 bytes, 8192 free of 8192"))
      << lastError();
}

TEST_F(HipFaults, DeviceFaultKillsTheSession) {
  ASSERT_EQ(create(rocmSpec()), KILN_OK) << lastError();
  ASSERT_EQ(setX(std::vector<float>(N, 1.0f)), KILN_OK);
  hip->fail("cuStreamSynchronize", 1, 700, /*sticky=*/1);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
  EXPECT_EQ(kiln_session_run(session), KILN_ERROR_INTERNAL);
  EXPECT_TRUE(contains(lastError(), "this HIP session is unusable after a "
                                    "device fault in an earlier run"))
      << lastError();
}

TEST_F(HipFaults, RocmArtifactsRunOnlyOnRocm) {
  std::vector<uint8_t> bytes = rocmSpec().build();
  ASSERT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model),
            KILN_OK);
  for (const char *other : {"cpu", "cuda"}) {
    EXPECT_EQ(kiln_session_create(model, other, nullptr, &session),
              KILN_ERROR_UNSUPPORTED_DEVICE);
    EXPECT_TRUE(
        contains(lastError(), "recompile with --target=" + std::string(other)))
        << lastError();
  }
  ArtifactSpec ptx = rocmSpec();
  ptx.gpuImages[0].format = "ptx";
  kiln_model *bad = nullptr;
  bytes = ptx.build();
  EXPECT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &bad),
            KILN_ERROR_INVALID_ARTIFACT);
  EXPECT_TRUE(contains(lastError(), "unknown format 'ptx' for target "
                                    "'rocm:gfx90a,gfx942'"))
      << lastError();
}

TEST_F(HipFaults, CodeObjectWithoutSignatures) {
  ArtifactSpec spec = rocmSpec();
  for (GpuImageSpec &image : spec.gpuImages)
    image.signatures = false;
  std::vector<uint8_t> bytes = spec.build();
  ASSERT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model),
            KILN_OK);
  EXPECT_EQ(kiln_session_create(model, "rocm", nullptr, &session),
            KILN_ERROR_KERNEL_LOAD);
  EXPECT_TRUE(contains(lastError(), "kernel 'add_one' (ONNX nodes 'Add_0') "
                                    "has no signature in the gfx942 image"))
      << lastError();
}
