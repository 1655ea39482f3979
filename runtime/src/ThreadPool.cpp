//===- ThreadPool.cpp - Workgroup thread pool -----------------------------===//
#include "ThreadPool.h"

using namespace kiln;

ThreadPool::ThreadPool(unsigned numThreads) {
  for (unsigned i = 1; i < numThreads; ++i)
    workers.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::runItems() {
  // Ids are handed out one at a time so uneven workgroups balance themselves.
  for (int64_t i;
       (i = next.fetch_add(1, std::memory_order_relaxed)) < jobCount;)
    (*job)(i);
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    wake.wait(lock, [&] { return stopping || generation != seen; });
    if (stopping)
      return;
    seen = generation;
    lock.unlock();
    runItems();
    lock.lock();
    if (--pending == 0)
      done.notify_one();
  }
}

void ThreadPool::parallelFor(int64_t count,
                             const std::function<void(int64_t)> &fn) {
  // Waking workers costs more than a single workgroup usually does.
  if (workers.empty() || count <= 1) {
    for (int64_t i = 0; i < count; ++i)
      fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    job = &fn;
    jobCount = count;
    next.store(0, std::memory_order_relaxed);
    pending = unsigned(workers.size());
    ++generation;
  }
  wake.notify_all();
  runItems();
  std::unique_lock<std::mutex> lock(mu);
  done.wait(lock, [&] { return pending == 0; });
  job = nullptr;
}
