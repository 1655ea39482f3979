//===- ThreadPool.cpp - Workgroup thread pool -----------------------------===//
#include "ThreadPool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KILN_CPU_RELAX() _mm_pause()
#else
#define KILN_CPU_RELAX() std::this_thread::yield()
#endif

using namespace kiln;

// How long a thread spins for the next event before it sleeps. Dispatches of
// one model follow each other within microseconds.
static constexpr std::chrono::microseconds kSpinTime(200);

template <typename Predicate> static bool spinUntil(Predicate ready) {
  auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned i = 0;; ++i) {
    if (ready())
      return true;
    KILN_CPU_RELAX();
    if ((i & 255) == 255 && std::chrono::steady_clock::now() > deadline)
      return false;
  }
}

ThreadPool::ThreadPool(unsigned numThreads)
    : shares(new Share[numThreads > 0 ? numThreads : 1]) {
  try {
    for (unsigned i = 1; i < numThreads; ++i)
      workers.emplace_back([this, i] { workerLoop(i); });
  } catch (...) {
    // No destructor runs for a half-built pool: stop the workers started so
    // far (a joinable std::thread would terminate the process).
    stopWorkers();
    throw;
  }
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping.store(true);
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
  workers.clear();
}

void ThreadPool::closeShares() {
  for (unsigned t = 0; t < size(); ++t)
    shares[t].next.store(shares[t].end, std::memory_order_relaxed);
}

void ThreadPool::runItems(unsigned self) {
  unsigned threads = size();
  for (unsigned k = 0; k < threads; ++k) {
    Share &share = shares[(self + k) % threads];
    for (int64_t i; (i = share.next.fetch_add(1, std::memory_order_relaxed)) <
                    share.end;) {
      try {
        (*job)(i);
      } catch (...) {
        // An exception must not escape a worker (std::terminate) nor leave
        // the caller while workers still use `job`: record it, hand out no
        // more ids, and let parallelFor rethrow once everyone is done.
        std::lock_guard<std::mutex> lock(failureMu);
        if (!failure)
          failure = std::current_exception();
        closeShares();
      }
    }
  }
}

bool ThreadPool::waitForJob(uint64_t seen) {
  auto ready = [&] {
    return stopping.load(std::memory_order_relaxed) ||
           generation.load(std::memory_order_acquire) != seen;
  };
  if (!spinUntil(ready)) {
    std::unique_lock<std::mutex> lock(mu);
    wake.wait(lock, ready);
  }
  return !stopping.load();
}

void ThreadPool::workerLoop(unsigned self) {
  uint64_t seen = 0;
  while (waitForJob(seen)) {
    seen = generation.load(std::memory_order_acquire);
    runItems(self);
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Under the lock, so a caller about to sleep cannot miss it.
      std::lock_guard<std::mutex> lock(mu);
      done.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int64_t count,
                             const std::function<void(int64_t)> &fn) {
  if (workers.empty() || count <= 1) {
    for (int64_t i = 0; i < count; ++i)
      fn(i); // an exception leaves at once: no other thread runs fn
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    job = &fn;
    unsigned threads = size();
    for (unsigned t = 0; t < threads; ++t) {
      shares[t].next.store(count * t / threads, std::memory_order_relaxed);
      shares[t].end = count * (t + 1) / threads;
    }
    pending.store(unsigned(workers.size()), std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  runItems(0);
  auto finished = [&] { return pending.load(std::memory_order_acquire) == 0; };
  if (!spinUntil(finished)) {
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, finished);
  }
  job = nullptr;
  std::exception_ptr thrown;
  {
    std::lock_guard<std::mutex> lock(failureMu);
    std::swap(thrown, failure);
  }
  if (thrown)
    std::rethrow_exception(thrown);
}
