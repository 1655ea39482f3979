//===- ThreadPoolTest.cpp - the workgroup thread pool ---------------------===//
#include "ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

using namespace kiln;

namespace {

// Every id of every dispatch runs exactly once, whatever the pool's size
// and however the shares divide the count (fewer ids than threads, counts
// the threads do not divide).
TEST(ThreadPool, RunsEveryIdOnce) {
  for (unsigned threads : {1u, 2u, 3u, 5u}) {
    ThreadPool pool(threads);
    for (int64_t count : {0, 1, 2, 3, 7, 64, 1000}) {
      for (int repeat = 0; repeat < 20; ++repeat) {
        std::vector<std::atomic<int>> runs(count);
        pool.parallelFor(count, [&](int64_t id) { runs[id].fetch_add(1); });
        for (int64_t id = 0; id < count; ++id)
          ASSERT_EQ(runs[id].load(), 1) << "id " << id << " of " << count
                                        << ", " << threads << " threads";
      }
    }
  }
}

// Uneven workgroups balance: one share's ids are slow, and the threads
// that finish their own shares take the rest of it.
TEST(ThreadPool, OtherThreadsTakeASlowShare) {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  pool.parallelFor(8, [&](int64_t id) {
    if (id < 4) {
      volatile double x = 0;
      for (int i = 0; i < 200000; ++i)
        x = x + i;
    }
    done.fetch_add(1);
  });
  EXPECT_EQ(done.load(), 8);
}

// A workgroup that throws: the first exception reaches the caller, no
// further ids start after it, and the pool runs the next dispatch whole.
TEST(ThreadPool, RethrowsAndStaysUsable) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallelFor(300,
                                [](int64_t id) {
                                  if (id == 150)
                                    throw std::runtime_error("workgroup 150");
                                }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.parallelFor(100, [&](int64_t id) { sum.fetch_add(id); });
  EXPECT_EQ(sum.load(), 99 * 100 / 2);
}

} // namespace
