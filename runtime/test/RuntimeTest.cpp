//===- RuntimeTest.cpp - Kiln runtime unit tests --------------------------===//
//
// Builds artifacts with the FlatBuffers builder around a hand-written kernel
// library (test_kernels.c) so the runtime is tested without the compiler.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime.h"
#include "TestArtifact.h"

#include <gtest/gtest.h>

#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

using namespace kiln_test;

namespace {

std::string lastError() { return kiln_last_error(); }

kiln_status open(const ArtifactSpec &spec, kiln_model **model) {
  std::vector<uint8_t> bytes = spec.build();
  return kiln_model_open_memory(bytes.data(), bytes.size(), model);
}

/// Opens a model that must load, and a session on it.
struct Loaded {
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;

  explicit Loaded(const ArtifactSpec &spec = ArtifactSpec(), int threads = 4) {
    EXPECT_EQ(open(spec, &model), KILN_OK) << lastError();
    kiln_session_options opts{threads};
    if (model)
      EXPECT_EQ(kiln_session_create(model, "cpu", &opts, &session), KILN_OK)
          << lastError();
  }
  ~Loaded() {
    kiln_session_destroy(session);
    kiln_model_close(model);
  }
};

std::vector<float> iota(float start) {
  std::vector<float> v(N);
  for (int64_t i = 0; i < N; ++i)
    v[i] = start + float(i);
  return v;
}

kiln_status setX(kiln_session *s, const std::vector<float> &x) {
  const int64_t shape[] = {N};
  return kiln_session_set_input(s, "x", KILN_DTYPE_F32, shape, 1, x.data(),
                                x.size() * sizeof(float));
}

void expectY(kiln_session *s, const std::vector<float> &x) {
  std::vector<float> y(N);
  ASSERT_EQ(kiln_session_get_output(s, "y", y.data(), kTensorBytes), KILN_OK)
      << lastError();
  for (int64_t i = 0; i < N; ++i)
    ASSERT_EQ(y[i], (x[i] + 1.0f) * (float(i) * 0.5f)) << "at " << i;
}

/// Expects opening `spec` to fail with `code` and a message containing
/// every string in `needles`.
void expectOpenError(const ArtifactSpec &spec, kiln_status code,
                     std::vector<std::string> needles) {
  kiln_model *model = nullptr;
  EXPECT_EQ(open(spec, &model), code) << lastError();
  EXPECT_EQ(model, nullptr);
  for (const std::string &n : needles)
    EXPECT_NE(lastError().find(n), std::string::npos)
        << "'" << n << "' not in: " << lastError();
  kiln_model_close(model);
}

bool contains(const std::string &s, const std::string &n) {
  return s.find(n) != std::string::npos;
}

} // namespace

TEST(Runtime, RunsWithSeveralThreads) {
  for (int threads : {1, 2, 4, 8}) {
    Loaded l(ArtifactSpec(), threads);
    ASSERT_NE(l.session, nullptr);
    EXPECT_EQ(kiln_session_num_threads(l.session), threads);
    for (float start : {0.0f, -100.0f}) {
      std::vector<float> x = iota(start);
      ASSERT_EQ(setX(l.session, x), KILN_OK) << lastError();
      ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
      expectY(l.session, x);
    }
  }
}

TEST(Runtime, EveryWorkgroupRunsOnce) {
  ArtifactSpec spec;
  spec.arenaSize = 4000;
  spec.buffers = {{fb::BufferKind_Arena, 0, 4000}};
  spec.inputs.clear();
  spec.outputs = {{"hits", fb::DType_I32, {1000}, 0}};
  spec.dispatches = {{"count_ids", {0}, 1000, {"n"}}};
  Loaded l(spec, 3);
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  std::vector<int32_t> hits(1000);
  ASSERT_EQ(kiln_session_get_output_at(l.session, 0, hits.data(), 4000),
            KILN_OK);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(hits[i], 1) << "workgroup " << i;
}

TEST(Runtime, ModelInfo) {
  Loaded l;
  ASSERT_EQ(kiln_model_input_count(l.model), 1);
  ASSERT_EQ(kiln_model_output_count(l.model), 1);
  kiln_tensor_info info;
  ASSERT_EQ(kiln_model_input_info(l.model, 0, &info), KILN_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(info.rank, 1);
  EXPECT_EQ(info.shape[0], N);
  EXPECT_EQ(info.bytes, kTensorBytes);
  EXPECT_EQ(kiln_model_output_info(l.model, 1, &info),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_model_producer(l.model), "kiln-test");
  ASSERT_EQ(kiln_model_dispatch_count(l.model), 2);
  kiln_dispatch_info d;
  ASSERT_EQ(kiln_model_dispatch_info(l.model, 1, &d), KILN_OK);
  EXPECT_STREQ(d.kernel, "scale");
  EXPECT_EQ(d.workgroups, 5u);
  ASSERT_EQ(d.node_count, 2);
  EXPECT_STREQ(d.nodes[0], "Mul_1");
  EXPECT_STREQ(d.nodes[1], "Identity_2");
  // scale binds x + 1, w and y: three 4 KiB buffers; add_one two.
  EXPECT_EQ(kiln_model_dispatch_bytes(l.model, 1), 3 * kTensorBytes);
  EXPECT_EQ(kiln_model_dispatch_bytes(l.model, 0), 2 * kTensorBytes);
  EXPECT_EQ(kiln_model_dispatch_bytes(l.model, 2), 0u);
  EXPECT_EQ(kiln_model_dispatch_bytes(nullptr, 0), 0u);
}

TEST(Runtime, ProfiledRunTimesEachDispatch) {
  Loaded l;
  std::vector<float> x = iota(1);
  ASSERT_EQ(setX(l.session, x), KILN_OK);
  std::vector<double> ms(2, -1.0);
  EXPECT_EQ(kiln_session_run_profiled(l.session, ms.data(), 1),
            KILN_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(kiln_session_run_profiled(l.session, ms.data(), 2), KILN_OK)
      << lastError();
  for (double t : ms)
    EXPECT_GE(t, 0.0);
  expectY(l.session, x);
}

// Kernel resources are a GPU session's.
TEST(Runtime, CpuSessionsHaveNoKernelResources) {
  Loaded l;
  kiln_kernel_resources r;
  EXPECT_EQ(kiln_session_dispatch_resources(l.session, 0, &r),
            KILN_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_TRUE(contains(lastError(), "kernel resources are a GPU session's: "
                                    "dispatch 0 (kernel '"))
      << lastError();
}

TEST(Runtime, CpuSessionsTakeNoDeviceMemory) {
  Loaded l;
  std::vector<float> x(N);
  const int64_t shape[] = {N};
  EXPECT_EQ(kiln_session_set_input_device(l.session, "x", KILN_DTYPE_F32, shape,
                                          1, uint64_t(uintptr_t(x.data())),
                                          kTensorBytes),
            KILN_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_TRUE(contains(lastError(), "input 'x': device memory needs a model "
                                    "compiled for a GPU; this model runs on "
                                    "the CPU"))
      << lastError();
  EXPECT_EQ(kiln_session_get_output_device(
                l.session, 0, uint64_t(uintptr_t(x.data())), kTensorBytes),
            KILN_ERROR_UNSUPPORTED_DEVICE);
}

/// The default artifact with each dispatch's result recorded: x + 1 (no
/// ONNX value: part of a node's work) and y.
ArtifactSpec specWithResults() {
  ArtifactSpec spec;
  spec.dispatches[0].results = {{"", fb::DType_F32, {N}, 1}};
  spec.dispatches[1].results = {{"y", fb::DType_F32, {N}, 2}};
  return spec;
}

/// Copies every dispatch's results as the run goes (what
/// kiln-run --dump-dispatches does).
struct Observed {
  std::vector<std::vector<float>> results; // per dispatch, its result 0
  int stopAfter = -1;                      // return an error after this one
};

kiln_status observeResults(kiln_session *session, int32_t dispatch,
                           void *user) {
  auto *observed = static_cast<Observed *>(user);
  std::vector<float> values(N);
  kiln_status s = kiln_session_get_dispatch_result(session, dispatch, 0,
                                                   values.data(), kTensorBytes);
  if (s != KILN_OK)
    return s;
  observed->results.push_back(std::move(values));
  return dispatch == observed->stopAfter ? KILN_ERROR_IO : KILN_OK;
}

TEST(Runtime, DispatchResultInfo) {
  Loaded l(specWithResults());
  ASSERT_EQ(kiln_model_dispatch_result_count(l.model, 0), 1);
  ASSERT_EQ(kiln_model_dispatch_result_count(l.model, 2), 0);
  kiln_tensor_info info;
  ASSERT_EQ(kiln_model_dispatch_result_info(l.model, 1, 0, &info), KILN_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.bytes, kTensorBytes);
  ASSERT_EQ(kiln_model_dispatch_result_info(l.model, 0, 0, &info), KILN_OK);
  EXPECT_STREQ(info.name, "");
  EXPECT_EQ(kiln_model_dispatch_result_info(l.model, 0, 1, &info),
            KILN_ERROR_INVALID_ARGUMENT);
  // An artifact that records no results (an older compiler) has none.
  Loaded plain;
  EXPECT_EQ(kiln_model_dispatch_result_count(plain.model, 0), 0);
}

TEST(Runtime, ObservedRunReadsEachDispatchResult) {
  Loaded l(specWithResults());
  std::vector<float> x = iota(1);
  ASSERT_EQ(setX(l.session, x), KILN_OK);
  Observed observed;
  ASSERT_EQ(kiln_session_run_observed(l.session, observeResults, &observed),
            KILN_OK)
      << lastError();
  ASSERT_EQ(observed.results.size(), 2u);
  for (int64_t i = 0; i < N; ++i) {
    ASSERT_EQ(observed.results[0][i], x[i] + 1.0f) << i;
    ASSERT_EQ(observed.results[1][i], (x[i] + 1.0f) * float(i) * 0.5f) << i;
  }
  expectY(l.session, x);
  // Outside the observer the arena holds later dispatches' bytes.
  std::vector<float> values(N);
  EXPECT_EQ(kiln_session_get_dispatch_result(l.session, 0, 0, values.data(),
                                             kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("observer"), std::string::npos)
      << lastError();
}

TEST(Runtime, ObserverErrorStopsTheRun) {
  Loaded l(specWithResults());
  ASSERT_EQ(setX(l.session, iota(1)), KILN_OK);
  Observed observed;
  observed.stopAfter = 0;
  EXPECT_EQ(kiln_session_run_observed(l.session, observeResults, &observed),
            KILN_ERROR_IO);
  EXPECT_EQ(observed.results.size(), 1u);
  // The outputs of a stopped run are not readable; a full run works again.
  std::vector<float> y(N);
  EXPECT_EQ(kiln_session_get_output_at(l.session, 0, y.data(), kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  EXPECT_EQ(kiln_session_run_observed(l.session, nullptr, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
}

// A session takes one call at a time. While a run is held in its
// observer, calls from another thread and the observer's own call back
// into the run get KILN_ERROR_SESSION_BUSY and change nothing; the
// observer may read the dispatch's result. Also run under ThreadSanitizer
// by scripts/tsan.sh.
struct BusyCalls {
  kiln_status otherRun = KILN_OK, otherSetInput = KILN_OK,
              otherOutput = KILN_OK, ownRun = KILN_OK, ownResult = KILN_OK;
  std::string otherMessage, ownMessage;
};

static kiln_status callWhileRunning(kiln_session *s, int32_t dispatch,
                                    void *user) {
  auto *calls = static_cast<BusyCalls *>(user);
  if (dispatch != 0)
    return KILN_OK;
  std::thread other([&] {
    calls->otherRun = kiln_session_run(s);
    calls->otherMessage = kiln_last_error();
    calls->otherSetInput = setX(s, iota(100));
    std::vector<float> y(N);
    calls->otherOutput =
        kiln_session_get_output_at(s, 0, y.data(), kTensorBytes);
  });
  other.join();
  calls->ownRun = kiln_session_run(s);
  calls->ownMessage = kiln_last_error();
  std::vector<float> result(N);
  calls->ownResult =
      kiln_session_get_dispatch_result(s, 0, 0, result.data(), kTensorBytes);
  return KILN_OK;
}

TEST(Runtime, SessionInAnotherCallIsBusy) {
  Loaded l(specWithResults());
  std::vector<float> x = iota(1);
  ASSERT_EQ(setX(l.session, x), KILN_OK);
  BusyCalls calls;
  ASSERT_EQ(kiln_session_run_observed(l.session, callWhileRunning, &calls),
            KILN_OK)
      << lastError();
  EXPECT_EQ(calls.otherRun, KILN_ERROR_SESSION_BUSY);
  EXPECT_EQ(calls.otherSetInput, KILN_ERROR_SESSION_BUSY);
  EXPECT_EQ(calls.otherOutput, KILN_ERROR_SESSION_BUSY);
  EXPECT_NE(calls.otherMessage.find("kiln_session_run: the session is busy "
                                    "in a call on another thread"),
            std::string::npos)
      << calls.otherMessage;
  EXPECT_EQ(calls.ownRun, KILN_ERROR_SESSION_BUSY);
  EXPECT_NE(calls.ownMessage.find("the run that called this observer"),
            std::string::npos)
      << calls.ownMessage;
  EXPECT_EQ(calls.ownResult, KILN_OK);
  // The refused input did not land: the outputs are x's.
  expectY(l.session, x);
  // Once the run has returned, another thread may use the session.
  std::thread later([&] {
    EXPECT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
    expectY(l.session, x);
  });
  later.join();
  EXPECT_STREQ(kiln_status_string(KILN_ERROR_SESSION_BUSY), "session busy");
}

TEST(Runtime, DispatchResultMustBeWhatTheKernelWrites) {
  ArtifactSpec spec = specWithResults();
  spec.dispatches[0].results[0].buffer = 2; // not bound to add_one
  kiln_model *model = nullptr;
  EXPECT_EQ(open(spec, &model), KILN_ERROR_INVALID_ARTIFACT);
  EXPECT_NE(std::string(lastError()).find("result 0 names buffer 2"),
            std::string::npos)
      << lastError();
  spec = specWithResults();
  spec.dispatches[1].results[0].shape = {N + 1}; // larger than its buffer
  EXPECT_EQ(open(spec, &model), KILN_ERROR_INVALID_ARTIFACT);
  EXPECT_NE(std::string(lastError()).find("needs 4100 bytes"),
            std::string::npos)
      << lastError();
}

TEST(Runtime, SessionsOnOneModelFromTwoThreads) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(ArtifactSpec(), &model), KILN_OK) << lastError();
  auto work = [model](float start) {
    kiln_session *s = nullptr;
    kiln_session_options opts{2};
    ASSERT_EQ(kiln_session_create(model, "cpu", &opts, &s), KILN_OK);
    for (int iter = 0; iter < 50; ++iter) {
      std::vector<float> x = iota(start + float(iter));
      ASSERT_EQ(setX(s, x), KILN_OK);
      ASSERT_EQ(kiln_session_run(s), KILN_OK);
      expectY(s, x);
    }
    kiln_session_destroy(s);
  };
  std::thread a(work, 0.0f), b(work, 5000.0f);
  a.join();
  b.join();
  kiln_model_close(model);
}

// One model, eight threads with a session each (and two pool threads per
// session), many runs: every result is the exact serial answer. Also run
// under ThreadSanitizer by scripts/tsan.sh.
TEST(Runtime, ManySessionsOnManyThreads) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(ArtifactSpec(), &model), KILN_OK) << lastError();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([model, t] {
      kiln_session *s = nullptr;
      kiln_session_options opts{2};
      ASSERT_EQ(kiln_session_create(model, "cpu", &opts, &s), KILN_OK);
      for (int iter = 0; iter < 30; ++iter) {
        std::vector<float> x = iota(float(t * 1000 + iter));
        ASSERT_EQ(setX(s, x), KILN_OK);
        ASSERT_EQ(kiln_session_run(s), KILN_OK);
        expectY(s, x);
      }
      kiln_session_destroy(s);
    });
  for (std::thread &thread : threads)
    thread.join();
  kiln_model_close(model);
}

TEST(Runtime, SessionOutlivesClosedModel) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(ArtifactSpec(), &model), KILN_OK);
  kiln_session *s = nullptr;
  ASSERT_EQ(kiln_session_create(model, nullptr, nullptr, &s), KILN_OK);
  kiln_model_close(model);
  std::vector<float> x = iota(3);
  ASSERT_EQ(setX(s, x), KILN_OK);
  ASSERT_EQ(kiln_session_run(s), KILN_OK);
  expectY(s, x);
  kiln_session_destroy(s);
}

TEST(Runtime, OutputsMayAliasInputsAndWeights) {
  // An identity model: no kernels, outputs read the input and a weight.
  ArtifactSpec spec;
  spec.kernelObject.clear();
  spec.dispatches.clear();
  spec.outputs = {{"same", fb::DType_F32, {N}, 0},
                  {"const", fb::DType_F32, {N}, 3}};
  Loaded l(spec);
  std::vector<float> x = iota(7), out(N);
  ASSERT_EQ(setX(l.session, x), KILN_OK);
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  ASSERT_EQ(
      kiln_session_get_output(l.session, "same", out.data(), kTensorBytes),
      KILN_OK);
  EXPECT_EQ(out, x);
  ASSERT_EQ(
      kiln_session_get_output(l.session, "const", out.data(), kTensorBytes),
      KILN_OK);
  EXPECT_EQ(out[10], 5.0f);
}

TEST(Runtime, FailedCheckFailsTheRun) {
  // A check reads the bytes of a tensor the run wrote (here the input x
  // itself): all zero passes, any other byte fails the run with the
  // check's message, and the outputs stay unreadable until a run passes.
  ArtifactSpec spec;
  spec.checks = {{"node 'g' (Gather): input 'x' holds an index out of range",
                  {"check_0", fb::DType_F32, {N}, 0}}};
  Loaded l(spec);
  std::vector<float> zeros(N, 0.0f), bad(N, 0.0f), out(N);
  bad[N - 1] = 1.0f;
  ASSERT_EQ(setX(l.session, bad), KILN_OK);
  EXPECT_EQ(kiln_session_run(l.session), KILN_ERROR_INVALID_INPUT_VALUE);
  EXPECT_EQ(lastError(), "node 'g' (Gather): input 'x' holds an index out of "
                         "range; the run's outputs are not valid");
  EXPECT_EQ(kiln_session_get_output(l.session, "y", out.data(), kTensorBytes),
            KILN_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(setX(l.session, zeros), KILN_OK);
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  expectY(l.session, zeros);
  EXPECT_STREQ(kiln_status_string(KILN_ERROR_INVALID_INPUT_VALUE),
               "invalid input value");
}

TEST(RuntimeErrors, CheckOnAWeightIsRefused) {
  ArtifactSpec spec;
  spec.checks = {{"m", {"check_0", fb::DType_F32, {N}, 3}}};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"check 0 is not bound to an arena buffer"});
}

TEST(Runtime, OpensFromFile) {
  std::string path = ::testing::TempDir() + "/kiln_runtime_test.kiln";
  std::vector<uint8_t> bytes = ArtifactSpec().build();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  kiln_model *model = nullptr;
  ASSERT_EQ(kiln_model_open(path.c_str(), &model), KILN_OK) << lastError();
  kiln_model_close(model);
  std::remove(path.c_str());
}

//===-- Errors at set_input / run / get_output ----------------------------===//

TEST(RuntimeErrors, WrongInputName) {
  Loaded l;
  const int64_t shape[] = {N};
  std::vector<float> x(N);
  EXPECT_EQ(kiln_session_set_input(l.session, "bogus", KILN_DTYPE_F32, shape, 1,
                                   x.data(), kTensorBytes),
            KILN_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(lastError(), "'bogus'")) << lastError();
  EXPECT_TRUE(contains(lastError(), "inputs are 'x'")) << lastError();
}

TEST(RuntimeErrors, WrongDtype) {
  Loaded l;
  const int64_t shape[] = {N};
  std::vector<int32_t> x(N);
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_I32, shape, 1,
                                   x.data(), kTensorBytes),
            KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "input 'x' expects dtype f32, got i32"))
      << lastError();
}

TEST(RuntimeErrors, WrongShape) {
  Loaded l;
  const int64_t shape[] = {2, N / 2};
  std::vector<float> x(N);
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, shape, 2,
                                   x.data(), kTensorBytes),
            KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "expects shape [1024], got [2,512]"))
      << lastError();
}

/// y = (x + 1) * w as 4 batch elements of 256: a batch of any size runs
/// in chunks of 4, each computed with the same w.
ArtifactSpec batchedSpec() { return withBatchChunk(ArtifactSpec(), 4); }

/// Runs batched input x of `shape` and reads y, whose batch is in dim
/// `batchDim` and whose size is x's.
void runBatch(Loaded &l, const std::vector<float> &x,
              const std::vector<int64_t> &shape, size_t batchDim,
              std::vector<float> &y) {
  ASSERT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, shape.data(),
                                   int32_t(shape.size()), x.data(),
                                   x.size() * sizeof(float)),
            KILN_OK)
      << lastError();
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  kiln_tensor_info info;
  ASSERT_EQ(kiln_session_output_info(l.session, 0, &info), KILN_OK);
  EXPECT_EQ(info.shape[batchDim], shape[batchDim]);
  ASSERT_EQ(info.bytes, x.size() * sizeof(float));
  y.resize(x.size());
  ASSERT_EQ(kiln_session_get_output(l.session, "y", y.data(), info.bytes),
            KILN_OK)
      << lastError();
}

TEST(Runtime, DynamicBatchRunsInChunks) {
  Loaded l(batchedSpec());
  EXPECT_EQ(kiln_model_batch_chunk(l.model), 4);
  EXPECT_EQ(kiln_model_input_batched(l.model, 0), 1);
  EXPECT_EQ(kiln_model_output_batched(l.model, 0), 1);
  const int64_t row = N / 4;
  for (int64_t batch : {1, 4, 6, 9}) {
    std::vector<float> x(batch * row);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i % 97);
    std::vector<float> y;
    ASSERT_NO_FATAL_FAILURE(runBatch(l, x, {batch, row}, 0, y));
    // Element b of the batch is row b % 4 of its chunk.
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y[i], (x[i] + 1.0f) * (float(i % (4 * row)) * 0.5f))
          << "batch " << batch << " at " << i;
    EXPECT_EQ(kiln_session_get_output(l.session, "y", y.data(), kTensorBytes),
              batch == 4 ? KILN_OK : KILN_ERROR_SIZE_MISMATCH);
  }
}

/// batchedSpec's artifact with kernels for a chunk of 2 too: a batch runs
/// as pieces of 4 and of 2 (BatchPieces.h), each element weighted by its
/// place in its own piece.
TEST(Runtime, DynamicBatchRunsInPiecesOfEachChunk) {
  const int64_t row = N / 4;
  ArtifactSpec pairs = withBatchChunk(ArtifactSpec(), 2);
  ArtifactSpec spec = batchedSpec();
  spec.batchVariants = {pairs.build()};
  Loaded l(spec);
  ASSERT_EQ(kiln_model_batch_chunk_count(l.model), 2);
  EXPECT_EQ(kiln_model_batch_chunk_at(l.model, 0), 4);
  EXPECT_EQ(kiln_model_batch_chunk_at(l.model, 1), 2);
  EXPECT_EQ(kiln_model_batch_chunk_at(l.model, 2), 0);
  // Each batch element's place in the chunk that runs it: 1 and 2 run as
  // one piece of 2; 5 as 4 + 2 (one element of padding); 6 as 4 + 2.
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> places = {
      {1, {0}}, {2, {0, 1}}, {5, {0, 1, 2, 3, 0}}, {6, {0, 1, 2, 3, 0, 1}}};
  for (const auto &[batch, place] : places) {
    std::vector<float> x(batch * row);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i % 97);
    std::vector<float> y;
    ASSERT_NO_FATAL_FAILURE(runBatch(l, x, {batch, row}, 0, y));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < row; ++j) {
        size_t at = size_t(b * row + j);
        float w = float(place[b] * row + j) * 0.5f;
        ASSERT_EQ(y[at], (x[at] + 1.0f) * w)
            << "batch " << batch << " at " << b << "," << j;
      }
  }
}

/// A batch variant whose weights are in the artifact carrying it (as
/// kiln-compile writes them) reads the carrier's: both chunks weight an
/// element by the carrier's w = i * 0.25.
TEST(Runtime, DynamicBatchVariantReadsItsCarriersWeights) {
  const int64_t row = N / 4;
  ArtifactSpec pairs = withBatchChunk(ArtifactSpec(), 2);
  pairs.weights.clear();
  pairs.weightsInParent = true;
  ArtifactSpec spec = batchedSpec();
  spec.weightsAfterFlatBuffer = true;
  auto *w = reinterpret_cast<float *>(spec.weights.data());
  for (int64_t i = 0; i < N; ++i)
    w[i] = float(i) * 0.25f;
  spec.batchVariants = {pairs.build()};
  Loaded l(spec);
  // 6 runs as pieces of 4 and 2: the second piece on the variant.
  const std::vector<int64_t> place = {0, 1, 2, 3, 0, 1};
  std::vector<float> x(6 * row, 3.0f), y;
  ASSERT_NO_FATAL_FAILURE(runBatch(l, x, {6, row}, 0, y));
  for (int64_t b = 0; b < 6; ++b)
    for (int64_t j = 0; j < row; ++j)
      ASSERT_EQ(y[b * row + j], 4.0f * float(place[b] * row + j) * 0.25f)
          << "at " << b << "," << j;
}

TEST(RuntimeErrors, BatchVariantsMustBeTheModelAtAnotherChunk) {
  auto refused = [](const ArtifactSpec &spec, const char *message) {
    expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT, {message});
  };
  ArtifactSpec pairs = withBatchChunk(ArtifactSpec(), 2);
  ArtifactSpec spec = batchedSpec();
  spec.batchVariants = {batchedSpec().build()};
  refused(spec, "batch variant 0 repeats the batch chunk of 4");
  ArtifactSpec renamed = pairs;
  renamed.inputs[0].name = "z";
  spec.batchVariants = {renamed.build()};
  refused(spec, "batch variant 0 has inputs or outputs other than the "
                "model's");
  ArtifactSpec nested = pairs;
  nested.batchVariants = {pairs.build()};
  spec.batchVariants = {nested.build()};
  refused(spec, "batch variant 0: holds batch variants of its own");
  ArtifactSpec fixed;
  fixed.batchVariants = {pairs.build()};
  refused(fixed, "batch variant 0 belongs to an artifact with a fixed batch");
  ArtifactSpec sharing = pairs;
  sharing.weightsInParent = true;
  spec.batchVariants = {sharing.build()};
  refused(spec, "batch variant 0: holds weights of its own beside those of "
                "the artifact that carries it");
  sharing.weights.clear();
  refused(sharing, "the artifact is a batch variant whose weights are in "
                   "the artifact that carries it: open that one");
}

/// The same kernel over [2, 4, N / 8] with the batch in dim 1 (as a
/// recurrent state's [layers, batch, hidden]): each chunk gathers its
/// rows from both blocks, and the output's rows go back in place.
TEST(Runtime, DynamicBatchInAnInnerDim) {
  ArtifactSpec spec = batchedSpec();
  const int64_t row = N / 8;
  spec.inputs[0].shape = spec.outputs[0].shape = {2, 4, row};
  spec.inputs[0].batchDim = spec.outputs[0].batchDim = 1;
  Loaded l(spec);
  EXPECT_EQ(kiln_model_input_batch_dim(l.model, 0), 1);
  EXPECT_EQ(kiln_model_output_batch_dim(l.model, 0), 1);
  for (int64_t batch : {1, 4, 6}) {
    std::vector<float> x(2 * batch * row);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i % 89);
    std::vector<float> y;
    ASSERT_NO_FATAL_FAILURE(runBatch(l, x, {2, batch, row}, 1, y));
    // Element (block k, b, j) ran at flat position (k * 4 + b % 4) * row + j
    // of its chunk.
    for (int64_t k = 0; k < 2; ++k)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < row; ++j) {
          size_t at = size_t((k * batch + b) * row + j);
          float w = float((k * 4 + b % 4) * row + j) * 0.5f;
          ASSERT_EQ(y[at], (x[at] + 1.0f) * w)
              << "batch " << batch << " at " << k << "," << b << "," << j;
        }
  }
  const int64_t wrong[] = {3, 2, row};
  std::vector<float> x(3 * 2 * row);
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, wrong, 3,
                                   x.data(), x.size() * sizeof(float)),
            KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "expects shape [2,N,128] (any batch N)"))
      << lastError();
}

TEST(RuntimeErrors, DynamicBatchShapes) {
  Loaded l(batchedSpec());
  std::vector<float> x(3 * N);
  const int64_t wide[] = {3, N / 2}, empty[] = {0, N / 4};
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, wide, 2,
                                   x.data(), 3 * N / 2 * sizeof(float)),
            KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "expects shape [N,256] (any batch N), "
                                    "got [3,512]"))
      << lastError();
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, empty, 2,
                                   x.data(), 0),
            KILN_ERROR_SHAPE_MISMATCH);
  const int64_t three[] = {3, N / 4};
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, three, 2,
                                   x.data(), kTensorBytes),
            KILN_ERROR_SIZE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "of batch 3 expects 1024 bytes per "
                                    "element, got 4096 bytes"))
      << lastError();
}

TEST(LoadErrors, BatchedTensorsMatchTheChunk) {
  ArtifactSpec spec = batchedSpec();
  spec.batchChunk = 2;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"input 'x' is batched, but its dim 0 is not the "
                   "artifact's batch chunk of 2"});
  spec = batchedSpec();
  spec.outputs[0].batchDim = 2;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"output 'y' is batched, but its dim 2 is not the "
                   "artifact's batch chunk of 4"});
  spec = ArtifactSpec();
  spec.batchChunk = 4;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"batch chunk of 4 but no batched input"});
}

TEST(RuntimeErrors, WrongByteCount) {
  Loaded l;
  const int64_t shape[] = {N};
  std::vector<float> x(N);
  EXPECT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, shape, 1,
                                   x.data(), kTensorBytes - 4),
            KILN_ERROR_SIZE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "expects 4096 bytes, got 4092"))
      << lastError();
  ASSERT_EQ(setX(l.session, x), KILN_OK);
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK);
  EXPECT_EQ(kiln_session_get_output(l.session, "y", x.data(), 8),
            KILN_ERROR_SIZE_MISMATCH);
  EXPECT_TRUE(contains(lastError(), "output 'y'")) << lastError();
  EXPECT_EQ(kiln_session_get_output(l.session, "z", x.data(), kTensorBytes),
            KILN_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(lastError(), "outputs are 'y'")) << lastError();
}

TEST(RuntimeErrors, MissingInput) {
  ArtifactSpec spec;
  spec.arenaSize = 4 * kTensorBytes;
  spec.buffers.push_back(
      {fb::BufferKind_Arena, 3 * kTensorBytes, kTensorBytes});
  spec.inputs.push_back({"unused", fb::DType_F32, {N}, 4});
  Loaded l(spec);
  ASSERT_EQ(setX(l.session, iota(0)), KILN_OK);
  EXPECT_EQ(kiln_session_run(l.session), KILN_ERROR_MISSING_INPUT);
  EXPECT_TRUE(contains(lastError(), "inputs not set before run: 'unused'"))
      << lastError();
  std::vector<float> y(N);
  EXPECT_NE(kiln_session_get_output(l.session, "y", y.data(), kTensorBytes),
            KILN_OK);
}

/// The default artifact with a second input, `k` (i64[1], unused by the
/// kernels), that a shape guard expecting 3 reads.
ArtifactSpec guardedSpec(fb::DType kType = fb::DType_I64) {
  ArtifactSpec spec;
  spec.arenaSize = 4 * kTensorBytes;
  spec.buffers.push_back({fb::BufferKind_Arena, 3 * kTensorBytes, 8});
  spec.inputs.push_back({"k", kType, {1}, 4});
  spec.shapeGuards.push_back({fb::ShapeRule_Equals, 1, {}, {}, {3}});
  return spec;
}

TEST(RuntimeErrors, ShapeGuardsCheckInputValuesBeforeTheRun) {
  Loaded l(guardedSpec());
  const int64_t shape[] = {1};
  auto setK = [&](int64_t k) {
    return kiln_session_set_input(l.session, "k", KILN_DTYPE_I64, shape, 1, &k,
                                  sizeof k);
  };
  EXPECT_STREQ(kiln_model_shape_guards(l.model),
               "node 'Node_0' (Op): input 'k' holds [3]\n");
  ASSERT_EQ(setX(l.session, iota(0)), KILN_OK);
  ASSERT_EQ(setK(3), KILN_OK);
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  ASSERT_EQ(setK(2), KILN_OK);
  EXPECT_EQ(kiln_session_run(l.session), KILN_ERROR_INVALID_INPUT_VALUE);
  EXPECT_TRUE(contains(lastError(), "node 'Node_0' (Op): input 'k' holds [2]; "
                                    "the artifact was compiled for [3]"))
      << lastError();
  std::vector<float> y(N);
  EXPECT_NE(kiln_session_get_output(l.session, "y", y.data(), kTensorBytes),
            KILN_OK);
}

TEST(LoadErrors, MalformedShapeGuards) {
  ArtifactSpec spec = guardedSpec();
  spec.shapeGuards[0].input = 5;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"shape guard 0 reads input 5", "the model has 2"});
  spec = guardedSpec();
  spec.shapeGuards[0].rule = fb::ShapeRule(99);
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"shape guard 0 has unknown rule 99"});
  spec = guardedSpec(fb::DType_BF16);
  spec.buffers[4].size = 2;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"reads input 'k', whose dtype holds no integers"});
  spec = guardedSpec();
  spec.shapeGuards[0].dataShape = {4, -1};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"shape guard 0 has an invalid data dim -1"});
}

TEST(RuntimeErrors, UnsupportedDevices) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(ArtifactSpec(), &model), KILN_OK);
  kiln_session *s = nullptr;
  // A CPU artifact cannot run on a GPU, whether or not there is one.
  for (const char *gpu : {"cuda", "rocm"}) {
    EXPECT_EQ(kiln_session_create(model, gpu, nullptr, &s),
              KILN_ERROR_UNSUPPORTED_DEVICE);
    EXPECT_TRUE(
        contains(lastError(), std::string("cannot run on device '") + gpu +
                                  "': create the session on device 'cpu' "
                                  "(kiln-run, kiln-bench: --device cpu), or "
                                  "recompile with --target=" +
                                  gpu))
        << lastError();
  }
  EXPECT_EQ(kiln_session_create(model, "tpu", nullptr, &s),
            KILN_ERROR_UNSUPPORTED_DEVICE);
  kiln_session_options bad{-1};
  EXPECT_EQ(kiln_session_create(model, "cpu", &bad, &s),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  kiln_model_close(model);
}

// A session's budget refuses a model whose buffers need more, before any of
// them is allocated: the default artifact's arena is 3 * 4096 bytes.
TEST(RuntimeErrors, SessionOverItsMemoryBudget) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(ArtifactSpec(), &model), KILN_OK);
  kiln_session *s = nullptr;
  kiln_session_options tight{1, 12287};
  EXPECT_EQ(kiln_session_create(model, "cpu", &tight, &s),
            KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(lastError(), "the model needs 12288 bytes of arena, 0 "
                                    "of splat area, more than the session's "
                                    "12287-byte budget"))
      << lastError();
  EXPECT_EQ(s, nullptr);
  kiln_session_options enough{1, 12288};
  ASSERT_EQ(kiln_session_create(model, "cpu", &enough, &s), KILN_OK)
      << lastError();
  kiln_session_destroy(s);
  kiln_model_close(model);
}

//===-- Errors at load ----------------------------------------------------===//

TEST(LoadErrors, MissingFile) {
  kiln_model *model = nullptr;
  EXPECT_EQ(kiln_model_open("/nonexistent/m.kiln", &model), KILN_ERROR_IO);
  EXPECT_TRUE(contains(lastError(), "'/nonexistent/m.kiln'")) << lastError();
  EXPECT_TRUE(contains(lastError(), "No such file")) << lastError();
  EXPECT_EQ(kiln_model_open("/", &model), KILN_ERROR_IO);
  EXPECT_TRUE(contains(lastError(), "it is a directory")) << lastError();
  // Refused before a read: /dev/zero would never end, and a FIFO opens
  // without waiting for a writer.
  EXPECT_EQ(kiln_model_open("/dev/zero", &model), KILN_ERROR_IO);
  EXPECT_TRUE(contains(lastError(), "it is a device, not a regular file"))
      << lastError();
  std::string fifo = testing::TempDir() + "kiln-runtime-test.fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(kiln_model_open(fifo.c_str(), &model), KILN_ERROR_IO);
  EXPECT_TRUE(contains(lastError(), "it is a pipe, not a regular file"))
      << lastError();
  ::unlink(fifo.c_str());
}

TEST(LoadErrors, NotAnArtifact) {
  const char text[] = "ir_version: 8 -- an ONNX model, say";
  kiln_model *model = nullptr;
  EXPECT_EQ(kiln_model_open_memory(text, sizeof(text), &model),
            KILN_ERROR_INVALID_ARTIFACT);
  EXPECT_TRUE(contains(lastError(), "not a Kiln artifact")) << lastError();
  EXPECT_EQ(kiln_model_open_memory(text, 3, &model),
            KILN_ERROR_INVALID_ARTIFACT);
}

TEST(LoadErrors, TruncatedArtifactsAreRejected) {
  std::vector<uint8_t> bytes = ArtifactSpec().build();
  for (size_t len = 0; len < bytes.size(); len += 61) {
    kiln_model *model = nullptr;
    EXPECT_NE(kiln_model_open_memory(bytes.data(), len, &model), KILN_OK)
        << "length " << len;
    kiln_model_close(model);
  }
}

TEST(LoadErrors, CorruptedSectionIsNamed) {
  // Each section's SHA-256 digest is checked at open: a changed byte names
  // the section it lies in, and a file without its digests is refused.
  std::vector<uint8_t> good = ArtifactSpec().build();
  const fb::Model *m = fb::GetModel(good.data());
  auto offsetOf = [&](const void *p) {
    return size_t(static_cast<const uint8_t *>(p) - good.data());
  };
  auto expectNamed = [&](size_t offset, const std::string &section) {
    std::vector<uint8_t> bad = good;
    bad[offset] ^= 0x10;
    kiln_model *model = nullptr;
    EXPECT_EQ(kiln_model_open_memory(bad.data(), bad.size(), &model),
              KILN_ERROR_INVALID_ARTIFACT);
    EXPECT_EQ(lastError(), "artifact section '" + section +
                               "' does not match its SHA-256 digest: the "
                               "file is corrupt or was changed after "
                               "kiln-compile wrote it");
    kiln_model_close(model);
  };
  expectNamed(offsetOf(m->weights()->data() + 10), "the weights");
  expectNamed(offsetOf(m->kernel_object()->data() + 100), "the kernel object");
  expectNamed(offsetOf(m->dispatches()->Get(0)->kernel()->data()),
              "the schedule (buffers, tensors and dispatches)");
  kiln_model *model = nullptr;
  EXPECT_EQ(kiln_model_open_memory(good.data(), good.size() - 1, &model),
            KILN_ERROR_INVALID_ARTIFACT);
  EXPECT_NE(lastError().find("has no section digests"), std::string::npos)
      << lastError();
}

/// The weights after the FlatBuffer, as kiln-compile writes them: the same
/// results, a changed weight byte named, and weights in both places or too
/// few bytes after the FlatBuffer refused.
TEST(Runtime, WeightsAfterTheFlatBuffer) {
  ArtifactSpec spec;
  spec.weightsAfterFlatBuffer = true;
  Loaded l(spec);
  std::vector<float> x(N, 2.0f), y(N);
  const int64_t shape[] = {N};
  ASSERT_EQ(kiln_session_set_input(l.session, "x", KILN_DTYPE_F32, shape, 1,
                                   x.data(), kTensorBytes),
            KILN_OK);
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_get_output(l.session, "y", y.data(), kTensorBytes),
            KILN_OK);
  for (int64_t i = 0; i < N; ++i)
    ASSERT_EQ(y[i], 3.0f * (float(i) * 0.5f)) << "at " << i;

  std::vector<uint8_t> bytes = spec.build();
  const size_t trailer = 3 * 32 + 20; // digests of three sections, then sizes
  std::vector<uint8_t> bad = bytes;
  bad[bad.size() - trailer - 1] ^= 0x10; // the last weight byte
  kiln_model *model = nullptr;
  EXPECT_EQ(kiln_model_open_memory(bad.data(), bad.size(), &model),
            KILN_ERROR_INVALID_ARTIFACT);
  EXPECT_TRUE(contains(lastError(), "artifact section 'the weights' does not "
                                    "match its SHA-256 digest"))
      << lastError();
}

TEST(LoadErrors, CorruptedBytesNeverCrash) {
  // No kernel object here: dlopen of a corrupted ELF is not what is tested.
  ArtifactSpec spec;
  spec.kernelObject.clear();
  spec.dispatches.clear();
  spec.weights.resize(64);
  spec.buffers = {{fb::BufferKind_Arena, 0, kTensorBytes}};
  spec.arenaSize = kTensorBytes;
  spec.outputs = {{"y", fb::DType_F32, {N}, 0}};
  std::vector<uint8_t> good = spec.build();
  int rejected = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= flip;
      kiln_model *model = nullptr;
      kiln_status s = kiln_model_open_memory(bad.data(), bad.size(), &model);
      rejected += s != KILN_OK;
      if (s == KILN_OK) {
        // Whatever loaded must still run safely.
        kiln_session *session = nullptr;
        if (kiln_session_create(model, "cpu", nullptr, &session) == KILN_OK) {
          kiln_session_run(session);
          kiln_session_destroy(session);
        }
      }
      kiln_model_close(model);
    }
  }
  // The section digests cover every byte.
  EXPECT_EQ(rejected, int(3 * good.size()));
}

TEST(LoadErrors, WrongSchemaVersion) {
  ArtifactSpec spec;
  spec.version = KILN_SCHEMA_VERSION + 1;
  expectOpenError(spec, KILN_ERROR_VERSION_MISMATCH,
                  {"schema_version " + std::to_string(KILN_SCHEMA_VERSION + 1),
                   "runtime's " + std::to_string(KILN_SCHEMA_VERSION)});
}

TEST(LoadErrors, UnsupportedTarget) {
  ArtifactSpec spec;
  spec.target = "tpu";
  expectOpenError(spec, KILN_ERROR_UNSUPPORTED_DEVICE, {"target 'tpu'"});
}

TEST(LoadErrors, CpuFeatureUnknownToTheRuntime) {
  ArtifactSpec spec;
  spec.cpuFeatures = {"sse4.2", "avx1024"};
  expectOpenError(spec, KILN_ERROR_UNSUPPORTED_DEVICE,
                  {"CPU 'x86-64'", "lacks: avx1024;", "--cpu=x86-64-v3"});
}

TEST(LoadErrors, CpuFeatureThisCpuLacks) {
  // Hidden as the one environment variable does, the CPU lacks avx2.
  ArtifactSpec spec;
  spec.cpu = "x86-64-v3";
  spec.cpuFeatures = {"sse4.2", "avx", "avx2", "fma"};
  setenv("KILN_CPU_FEATURES_DISABLE", "bmi2,avx2", 1);
  expectOpenError(spec, KILN_ERROR_UNSUPPORTED_DEVICE,
                  {"CPU 'x86-64-v3'", "lacks: avx2;"});
  unsetenv("KILN_CPU_FEATURES_DISABLE");
}

TEST(Model, RecordsItsCpuAndFeatures) {
  ArtifactSpec spec;
  spec.cpuFeatures = {"sse3", "ssse3"};
  Loaded l(spec);
  ASSERT_NE(l.model, nullptr);
  EXPECT_STREQ(kiln_model_cpu(l.model), "x86-64");
  EXPECT_STREQ(kiln_model_cpu_features(l.model), "sse3,ssse3");
  EXPECT_NE(std::string(kiln_version()).find("kiln "), std::string::npos);
}

TEST(Model, AsksForTheTileStateOfAmxKernels) {
  // Kernels with AMX tiles: on a CPU with AMX the model opens and runs
  // (the runtime asked Linux for the tile state, without which AMX
  // instructions fault), elsewhere it is refused naming the feature.
  ArtifactSpec spec;
  spec.cpu = "sapphirerapids";
  spec.cpuFeatures = {"amx-tile", "amx-int8"};
  kiln_model *model = nullptr;
  if (open(spec, &model) == KILN_OK) {
    kiln_model_close(model);
    Loaded l(spec);
    ASSERT_NE(l.session, nullptr);
    ASSERT_EQ(setX(l.session, iota(1)), KILN_OK);
    EXPECT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
    return;
  }
  expectOpenError(spec, KILN_ERROR_UNSUPPORTED_DEVICE,
                  {"CPU 'sapphirerapids'", "lacks: amx-tile"});
}

/// The default model retargeted to CUDA with a stand-in PTX image.
ArtifactSpec cudaSpec() {
  ArtifactSpec spec;
  spec.target = "cuda:sm_90";
  spec.kernelObject.clear();
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  spec.gpuImages.push_back({"sm_90", "ptx", {ptx.begin(), ptx.end()}});
  return spec;
}

TEST(LoadErrors, CudaArtifactWithoutImage) {
  ArtifactSpec spec = cudaSpec();
  spec.gpuImages.clear();
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT, {"holds no GPU image"});
}

TEST(LoadErrors, CudaLaunchShapeTooLarge) {
  ArtifactSpec spec = cudaSpec();
  spec.dispatches[0].workgroups = 0;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"kernel 'add_one'", "invalid launch shape"});
}

TEST(RuntimeErrors, CudaArtifactOnCpu) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(cudaSpec(), &model), KILN_OK) << lastError();
  EXPECT_STREQ(kiln_model_target(model), "cuda:sm_90");
  kiln_session *s = nullptr;
  EXPECT_EQ(kiln_session_create(model, "cpu", nullptr, &s),
            KILN_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_TRUE(contains(lastError(), "compiled for target 'cuda:sm_90'"))
      << lastError();
  kiln_model_close(model);
}

// Without a driver (this machine, CI) a CUDA session fails cleanly and says
// so; with one, the stand-in image has no kernels and loading says which.
TEST(RuntimeErrors, CudaSessionWithoutDriverOrKernels) {
  kiln_model *model = nullptr;
  ASSERT_EQ(open(cudaSpec(), &model), KILN_OK) << lastError();
  kiln_session *s = nullptr;
  kiln_status status = kiln_session_create(model, "cuda", nullptr, &s);
  EXPECT_EQ(s, nullptr);
  if (status == KILN_ERROR_UNSUPPORTED_DEVICE)
    EXPECT_TRUE(contains(lastError(), "no CUDA driver") ||
                contains(lastError(), "no CUDA device"))
        << lastError();
  else
    EXPECT_TRUE(status == KILN_ERROR_KERNEL_LOAD &&
                contains(lastError(), "kernel 'add_one'"))
        << lastError();
  kiln_model_close(model);
}

TEST(Runtime, SplatWeightsAreFilled) {
  ArtifactSpec spec;
  spec.weights.clear();
  spec.buffers[3] = {fb::BufferKind_Splat, 0, kTensorBytes, 0x3f000000}; // 0.5
  spec.splatSize = kTensorBytes;
  Loaded l(spec);
  ASSERT_NE(l.session, nullptr);
  std::vector<float> x = iota(3.0f);
  ASSERT_EQ(setX(l.session, x), KILN_OK) << lastError();
  ASSERT_EQ(kiln_session_run(l.session), KILN_OK) << lastError();
  std::vector<float> y(N);
  ASSERT_EQ(kiln_session_get_output(l.session, "y", y.data(), kTensorBytes),
            KILN_OK);
  for (int64_t i = 0; i < N; ++i)
    ASSERT_EQ(y[i], (x[i] + 1.0f) * 0.5f) << "at " << i;
}

TEST(LoadErrors, SplatBufferOutOfRange) {
  ArtifactSpec spec;
  spec.buffers[3] = {fb::BufferKind_Splat, 0, kTensorBytes, 0};
  spec.splatSize = kTensorBytes - 4;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"buffer 3", "out of range of the splat area"});
}

TEST(LoadErrors, ArenaBufferOutOfRange) {
  ArtifactSpec spec;
  spec.buffers[2].offset = 2 * kTensorBytes + 4;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"buffer 2", "out of range of the arena (12288 bytes)"});
}

TEST(LoadErrors, WeightBufferOutOfRange) {
  ArtifactSpec spec;
  spec.buffers[3].size = kTensorBytes + 1;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"buffer 3", "out of range of the weights (4096 bytes)"});
}

TEST(LoadErrors, BufferRangeOverflow) {
  ArtifactSpec spec;
  spec.buffers[1].offset = UINT64_MAX - 2;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT, {"buffer 1"});
}

TEST(LoadErrors, TensorBufferIndexOutOfRange) {
  ArtifactSpec spec;
  spec.outputs[0].buffer = 9;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"output 'y' names buffer 9", "4 buffers"});
}

TEST(LoadErrors, TensorLargerThanBuffer) {
  ArtifactSpec spec;
  spec.inputs[0].shape = {N + 1};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"input 'x' needs 4100 bytes", "holds 4096"});
}

TEST(LoadErrors, TensorSizeOverflow) {
  ArtifactSpec spec;
  spec.inputs[0].shape = {INT64_MAX / 2, 4};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT, {"input 'x'", "shape"});
  spec.inputs[0].shape = {-1};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT, {"input 'x'", "[-1]"});
}

TEST(LoadErrors, InputInWeightBuffer) {
  ArtifactSpec spec;
  spec.inputs[0].buffer = 3;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"input 'x'", "read-only weight buffer 3"});
}

TEST(LoadErrors, DuplicateNames) {
  ArtifactSpec spec;
  spec.outputs.push_back(spec.outputs[0]);
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT, {"duplicate output 'y'"});
}

TEST(LoadErrors, BindingOutOfRange) {
  ArtifactSpec spec;
  spec.dispatches[1].bindings[1] = 4;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"dispatch 1", "'scale'", "binds buffer 4"});
}

TEST(LoadErrors, MissingKernelSymbol) {
  ArtifactSpec spec;
  spec.dispatches[0].kernel = "no_such_kernel";
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"kernel symbol not found", "'no_such_kernel'", "'Add_0'"});
}

TEST(LoadErrors, KernelObjectNotLoadable) {
  ArtifactSpec spec;
  spec.kernelObject = {'n', 'o', 't', ' ', 'e', 'l', 'f'};
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"the artifact's kernel object is not an ELF file"});
  // Cut inside its program headers, then one byte short of its segments.
  std::vector<uint8_t> object = ArtifactSpec().kernelObject;
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof(header));
  size_t segmentsEnd = 0;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment,
                object.data() + header.e_phoff + i * sizeof(Elf64_Phdr),
                sizeof(segment));
    if (segment.p_type == PT_LOAD)
      segmentsEnd =
          std::max<size_t>(segmentsEnd, segment.p_offset + segment.p_filesz);
  }
  for (size_t size : {size_t(80), segmentsEnd - 1}) {
    spec.kernelObject = ArtifactSpec().kernelObject;
    spec.kernelObject.resize(size);
    expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                    {"the artifact's kernel object", "past its end"});
  }
}

/// The test kernels with `edit` applied to their ELF header, program
/// headers and dynamic entries in place.
static std::vector<uint8_t> editedKernels(
    const std::function<void(Elf64_Ehdr &, Elf64_Phdr &, Elf64_Dyn &)> &edit) {
  std::vector<uint8_t> bytes = ArtifactSpec().kernelObject;
  auto *header = reinterpret_cast<Elf64_Ehdr *>(bytes.data());
  for (int i = 0; i < header->e_phnum; ++i) {
    auto *segment = reinterpret_cast<Elf64_Phdr *>(
        bytes.data() + header->e_phoff + i * sizeof(Elf64_Phdr));
    if (segment->p_type != PT_DYNAMIC)
      continue;
    auto *entry =
        reinterpret_cast<Elf64_Dyn *>(bytes.data() + segment->p_offset);
    for (; entry->d_tag != DT_NULL; ++entry)
      edit(*header, *segment, *entry);
  }
  return bytes;
}

// An object whose loading would run its code, or that is for another CPU,
// is refused before the system loader sees it.
TEST(LoadErrors, KernelObjectThatRunsCodeWhenLoaded) {
  ArtifactSpec spec;
  spec.kernelObject =
      editedKernels([](Elf64_Ehdr &, Elf64_Phdr &, Elf64_Dyn &entry) {
        if (entry.d_tag == DT_GNU_HASH)
          entry.d_tag = DT_INIT_ARRAY;
      });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"kernel object has initializers (code that runs when it "
                   "is loaded)"});
  spec.kernelObject =
      editedKernels([](Elf64_Ehdr &, Elf64_Phdr &, Elf64_Dyn &entry) {
        if (entry.d_tag == DT_GNU_HASH)
          entry.d_tag = DT_FINI;
      });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD, {"has finalizers"});
  spec.kernelObject =
      editedKernels([](Elf64_Ehdr &, Elf64_Phdr &, Elf64_Dyn &entry) {
        if (entry.d_tag == DT_GNU_HASH)
          entry.d_tag = DT_RUNPATH;
      });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"names other objects to search or load"});
  spec.kernelObject =
      editedKernels([](Elf64_Ehdr &header, Elf64_Phdr &, Elf64_Dyn &) {
        header.e_machine = EM_AARCH64;
      });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"is for ELF machine 183", "compiled for another CPU"});
}

// dlsym also finds the names of the object's dependencies: a dispatch that
// names libc's `abort` is refused, not called.
TEST(LoadErrors, KernelEntryOutsideTheKernelObject) {
  ArtifactSpec spec;
  spec.dispatches[0].kernel = "abort";
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"kernel symbol not found", "'abort'"});
}

/// The test kernels with `edit` applied to each loadable segment's header.
static std::vector<uint8_t>
editedSegments(const std::function<void(Elf64_Phdr &)> &edit) {
  std::vector<uint8_t> bytes = ArtifactSpec().kernelObject;
  auto *header = reinterpret_cast<Elf64_Ehdr *>(bytes.data());
  for (int i = 0; i < header->e_phnum; ++i) {
    auto *segment = reinterpret_cast<Elf64_Phdr *>(
        bytes.data() + header->e_phoff + i * sizeof(Elf64_Phdr));
    if (segment->p_type == PT_LOAD)
      edit(*segment);
  }
  return bytes;
}

// Kiln's loader maps each page with one segment's permissions, never
// writable and executable at once, within a bounded span.
TEST(LoadErrors, KernelSegmentsTheLoaderRefuses) {
  ArtifactSpec spec;
  spec.kernelObject = editedSegments([](Elf64_Phdr &segment) {
    if (segment.p_flags & PF_X)
      segment.p_flags |= PF_W;
  });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"has a segment both writable and executable"});
  spec.kernelObject = editedSegments([](Elf64_Phdr &segment) {
    if (segment.p_flags & PF_X)
      segment.p_vaddr -= 0x1000;
  });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"has segments that share a page"});
  spec.kernelObject = editedSegments([](Elf64_Phdr &segment) {
    if (segment.p_flags & PF_W)
      segment.p_memsz = uint64_t(1) << 40;
  });
  expectOpenError(spec, KILN_ERROR_KERNEL_LOAD,
                  {"spans more than 1024 MiB of addresses"});
}

// Each CPU dispatch is checked against the signature its kernel exports.
TEST(LoadErrors, DispatchesMustMatchTheirKernelsSignatures) {
  ArtifactSpec spec;
  spec.dispatches[0].bindings = {0, 1, 2};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"dispatch 0 (kernel 'add_one'", "binds 3 buffers",
                   "the kernel takes 2"});
  spec = ArtifactSpec();
  spec.buffers[1].size = 100;
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"dispatch 0 (kernel 'add_one'",
                   "binding 1 is buffer 1 of 100 bytes",
                   "the kernel reaches 4096"});
  spec = ArtifactSpec();
  spec.arenaSize = 4000;
  spec.buffers = {{fb::BufferKind_Arena, 0, 4000}};
  spec.inputs.clear();
  spec.outputs = {{"hits", fb::DType_I32, {1000}, 0}};
  spec.dispatches = {{"count_ids", {0}, 1001, {"n"}}};
  expectOpenError(spec, KILN_ERROR_INVALID_ARTIFACT,
                  {"runs 1001 workgroups", "the kernel was compiled for 1000"});
}

// The system loader never sees the kernels: no object of theirs is in its
// list and no file or memfd of theirs is mapped.
TEST(Runtime, KernelsAreNotLoadedBySystemLoader) {
  auto loadedObjects = [] {
    int count = 0;
    dl_iterate_phdr(
        [](dl_phdr_info *, size_t, void *data) {
          ++*static_cast<int *>(data);
          return 0;
        },
        &count);
    return count;
  };
  int before = loadedObjects();
  Loaded l;
  EXPECT_EQ(loadedObjects(), before);
  std::ifstream maps("/proc/self/maps");
  std::string text((std::istreambuf_iterator<char>(maps)),
                   std::istreambuf_iterator<char>());
  EXPECT_FALSE(contains(text, "kiln-kernels")) << text;
  EXPECT_FALSE(contains(text, "kiln_test_kernels")) << text;
}
