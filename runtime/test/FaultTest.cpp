//===- FaultTest.cpp - host faults injected into the runtime --------------===//
//
// Faults the runtime must turn into errors through the C API, leaving the
// session usable or clearly dead: a workgroup that throws on a pool thread,
// memory that cannot be had (an arena larger than the address space, and
// every single C++ allocation failing in turn), an artifact too large for
// memory. This binary replaces the global operator new to inject the
// allocation failures, so it is separate from kiln-runtime-tests.
//
//===----------------------------------------------------------------------===//
#include "TestArtifact.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>

using namespace kiln_test;

//===-- Allocation failure injection --------------------------------------===//

// ThreadSanitizer's runtime defines operator new itself (and cannot share
// it); its build runs the other fault tests.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_NO_NEW_REPLACEMENT 1
#endif
#endif

namespace {
// Allocations left before one fails; negative: never fail.
std::atomic<long> allocationsUntilFailure{-1};
std::atomic<long> injectedFailures{0};
} // namespace

#ifndef KILN_NO_NEW_REPLACEMENT
void *operator new(size_t size) {
  if (allocationsUntilFailure.load(std::memory_order_relaxed) >= 0 &&
      allocationsUntilFailure.fetch_sub(1) == 0) {
    injectedFailures.fetch_add(1);
    throw std::bad_alloc();
  }
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void *operator new[](size_t size) { return operator new(size); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }
#endif

namespace {

std::string lastError() { return kiln_last_error(); }

bool contains(const std::string &s, const std::string &n) {
  return s.find(n) != std::string::npos;
}

/// The workgroup that throws, or -1.
std::atomic<int64_t> throwingWorkgroup{-1};

/// What call_in_workgroup calls on each pool thread.
void throwFromArmedWorkgroup(int64_t id) {
  if (id == throwingWorkgroup.load())
    throw std::runtime_error("injected fault in workgroup " +
                             std::to_string(id));
}

/// y = x, copied by call_in_workgroup, which first calls the function whose
/// address is the int64 input `hook` (throwFromArmedWorkgroup).
ArtifactSpec throwingSpec() {
  ArtifactSpec spec;
  spec.arenaSize = 2 * kTensorBytes + 64;
  spec.weights.clear();
  spec.buffers = {{fb::BufferKind_Arena, 0, kTensorBytes},
                  {fb::BufferKind_Arena, kTensorBytes, kTensorBytes},
                  {fb::BufferKind_Arena, 2 * kTensorBytes, 8}};
  spec.inputs = {{"x", fb::DType_F32, {N}, 0}, {"hook", fb::DType_I64, {1}, 2}};
  spec.outputs = {{"y", fb::DType_F32, {N}, 1}};
  spec.dispatches = {{"call_in_workgroup", {2, 0, 1}, 8, {"Custom_7"}}};
  return spec;
}

struct Session {
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
  Session(const ArtifactSpec &spec, int threads) {
    std::vector<uint8_t> bytes = spec.build();
    EXPECT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model),
              KILN_OK)
        << lastError();
    kiln_session_options options{threads};
    EXPECT_EQ(kiln_session_create(model, "cpu", &options, &session), KILN_OK)
        << lastError();
  }
  ~Session() {
    kiln_session_destroy(session);
    kiln_model_close(model);
  }
  kiln_status setControl(int32_t workgroup, int32_t armed) {
    throwingWorkgroup = armed ? workgroup : -1;
    int64_t hook =
        int64_t(reinterpret_cast<intptr_t>(&throwFromArmedWorkgroup));
    const int64_t shape[] = {1};
    return kiln_session_set_input(session, "hook", KILN_DTYPE_I64, shape, 1,
                                  &hook, sizeof(hook));
  }
};

} // namespace

// The pool stops handing out workgroups, waits for the running ones, and
// the run fails naming the dispatch; the same session then runs correctly.
TEST(Faults, WorkgroupThatThrowsFailsTheRunOnly) {
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Session s(throwingSpec(), threads);
    ASSERT_NE(s.session, nullptr);
    std::vector<float> x(N), y(N);
    for (int64_t i = 0; i < N; ++i)
      x[i] = float(i);
    const int64_t shape[] = {N};
    ASSERT_EQ(kiln_session_set_input(s.session, "x", KILN_DTYPE_F32, shape, 1,
                                     x.data(), kTensorBytes),
              KILN_OK);
    for (int round = 0; round < 20; ++round) {
      ASSERT_EQ(s.setControl(round % 8, 1), KILN_OK);
      EXPECT_EQ(kiln_session_run(s.session), KILN_ERROR_INTERNAL);
      EXPECT_TRUE(contains(lastError(),
                           "dispatch 0 (kernel 'call_in_workgroup', nodes "
                           "'Custom_7') failed: injected fault in workgroup " +
                               std::to_string(round % 8)))
          << lastError();
      EXPECT_EQ(kiln_session_get_output(s.session, "y", y.data(), kTensorBytes),
                KILN_ERROR_INVALID_ARGUMENT);
      ASSERT_EQ(s.setControl(0, 0), KILN_OK);
      ASSERT_EQ(kiln_session_run(s.session), KILN_OK) << lastError();
      ASSERT_EQ(kiln_session_get_output(s.session, "y", y.data(), kTensorBytes),
                KILN_OK);
      ASSERT_EQ(y, x);
    }
  }
}

// 2^50 bytes do not fit in a 47-bit address space: mmap fails for real.
TEST(Faults, ArenaLargerThanMemory) {
  ArtifactSpec spec;
  spec.arenaSize = uint64_t(1) << 50;
  kiln_model *model = nullptr;
  std::vector<uint8_t> bytes = spec.build();
  ASSERT_EQ(kiln_model_open_memory(bytes.data(), bytes.size(), &model), KILN_OK)
      << lastError();
  kiln_session *session = nullptr;
  EXPECT_EQ(kiln_session_create(model, "cpu", nullptr, &session),
            KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(session, nullptr);
  EXPECT_TRUE(
      contains(lastError(), "cannot allocate the 1125899906842624-byte arena"))
      << lastError();
  kiln_model_close(model);
}

TEST(Faults, ArtifactLargerThanMemory) {
  // The size is checked before a byte is read, so `data` may be short.
  char data[64] = {0};
  kiln_model *model = nullptr;
  EXPECT_EQ(kiln_model_open_memory(data, size_t(1) << 50, &model),
            KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(model, nullptr);
  EXPECT_TRUE(contains(lastError(), "cannot allocate 1125899906842624 bytes "
                                    "for the artifact"))
      << lastError();
}

// Fails the 1st, 2nd, ... allocation of a whole open/create/set/run/get
// sequence in turn. Each step returns OK or KILN_ERROR_OUT_OF_MEMORY with a
// message — never a crash, a leak (under ASan) or another status — and the
// run completes correctly once no allocation fails.
/// Fails each allocation of opening `spec`, creating a session, setting x
/// to 2s of `shape` (`elements` of them), running and reading y, one
/// allocation per try, until a try completes with y[i] == want(i); each
/// failure must be reported as out of memory, and `messageNeedle`, where
/// given, must be in at least one report. Returns the failures seen.
long failEachAllocation(const ArtifactSpec &spec,
                        const std::vector<int64_t> &shape, size_t elements,
                        const std::function<float(size_t)> &want,
                        const std::string &messageNeedle = "") {
  std::vector<uint8_t> bytes = spec.build();
  std::vector<float> x(elements, 2.0f), y(elements);
  const size_t tensorBytes = elements * sizeof(float);
  bool completed = false, needleSeen = messageNeedle.empty();
  long failuresSeen = 0;
  for (long failAt = 0; !completed && failAt < 100000; ++failAt) {
    SCOPED_TRACE("allocation " + std::to_string(failAt) + " fails");
    injectedFailures = 0;
    kiln_model *model = nullptr;
    kiln_session *session = nullptr;
    kiln_session_options options{3};
    allocationsUntilFailure = failAt;
    kiln_status status =
        kiln_model_open_memory(bytes.data(), bytes.size(), &model);
    if (status == KILN_OK)
      status = kiln_session_create(model, "cpu", &options, &session);
    if (status == KILN_OK)
      status =
          kiln_session_set_input(session, "x", KILN_DTYPE_F32, shape.data(),
                                 int32_t(shape.size()), x.data(), tensorBytes);
    if (status == KILN_OK)
      status = kiln_session_run(session);
    if (status == KILN_OK)
      status = kiln_session_get_output(session, "y", y.data(), tensorBytes);
    allocationsUntilFailure = -1;
    if (status == KILN_OK) {
      // The fault never fired: every allocation of the sequence has been
      // failed once already.
      completed = injectedFailures == 0;
      size_t wrong = 0;
      while (wrong < elements && y[wrong] == want(wrong))
        ++wrong;
      EXPECT_EQ(wrong, elements) << "y is wrong from element " << wrong;
    } else {
      ++failuresSeen;
      EXPECT_EQ(status, KILN_ERROR_OUT_OF_MEMORY) << lastError();
      EXPECT_EQ(injectedFailures, 1);
      EXPECT_FALSE(lastError().empty());
      needleSeen = needleSeen || contains(lastError(), messageNeedle);
    }
    kiln_session_destroy(session);
    kiln_model_close(model);
  }
  EXPECT_TRUE(completed);
  EXPECT_TRUE(needleSeen) << "no report says '" << messageNeedle << "'";
  return failuresSeen;
}

TEST(Faults, EveryAllocationFailureIsReported) {
#ifdef KILN_NO_NEW_REPLACEMENT
  GTEST_SKIP() << "operator new cannot be replaced under ThreadSanitizer";
#endif
  // y = (x + 1) * w, w[i] = i / 2.
  auto want = [](size_t i) { return 3.0f * (float(i) * 0.5f); };
  // A failure in the runtime's bookkeeping names the call it failed in.
  EXPECT_GT(failEachAllocation(ArtifactSpec(), {N}, N, want,
                               "kiln_session_create: out of host memory"),
            10);
}

/// A dynamic batch of 4 with kernels for a chunk of 2 beside them, run at
/// a batch of 7 (two pieces of 4, the second padded): the batch's own host
/// copies say what they hold and the bytes they asked for.
TEST(Faults, EveryAllocationFailureOfABatchedRunIsReported) {
#ifdef KILN_NO_NEW_REPLACEMENT
  GTEST_SKIP() << "operator new cannot be replaced under ThreadSanitizer";
#endif
  ArtifactSpec spec = withBatchChunk(ArtifactSpec(), 4);
  spec.batchVariants = {withBatchChunk(ArtifactSpec(), 2).build()};
  const int64_t row = N / 4;
  // Element b of the batch runs at row b % 4 of its piece.
  auto want = [&](size_t i) {
    return 3.0f * (float((i / row) % 4 * row + i % row) * 0.5f);
  };
  EXPECT_GT(failEachAllocation(spec, {7, row}, size_t(7 * row), want,
                               "out of host memory for input 'x' of batch 7: "
                               "asked " +
                                   std::to_string(7 * row * 4) + " bytes"),
            10);
}

// Like the C library, return null for impossible sizes instead of aborting:
// the runtime must see the failure to report it.
extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}
extern "C" const char *__tsan_default_options() {
  return "allocator_may_return_null=1";
}
