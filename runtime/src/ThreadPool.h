//===- ThreadPool.h - Workgroup thread pool ---------------------*- C++ -*-===//
#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

/// A fixed pool that runs the ids of one dispatch at a time. The calling
/// thread takes part, so a pool of N threads owns N-1 workers.
///
/// Each thread first runs its own contiguous share of the ids, the same
/// share in every dispatch of the same count, then takes ids one at a time
/// from the other shares' fronts. Successive kernels over the same data
/// (an LSTM's steps reading one recurrent weight, an epilogue after its
/// matmul) then find their part of it in the same core's cache, and
/// uneven workgroups still balance.
class ThreadPool {
public:
  explicit ThreadPool(unsigned numThreads);
  ~ThreadPool();

  unsigned size() const { return unsigned(workers.size()) + 1; }

  /// Calls fn(i) for every i in [0, count) and returns once all calls are
  /// done. If a call throws, no further ids are handed out, the calls already
  /// running finish, and the first exception is rethrown here; the pool stays
  /// usable.
  void parallelFor(int64_t count, const std::function<void(int64_t)> &fn);

private:
  /// The ids [next, end) of one thread's share not yet handed out; its own
  /// cache line, since every thread claims from it with fetch_add.
  struct alignas(64) Share {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };

  void stopWorkers();
  void workerLoop(unsigned self);
  /// Runs ids of share `self` and then of the others until none is left.
  void runItems(unsigned self);
  /// Hands out no more ids (after a failure).
  void closeShares();
  /// Waits for a job newer than `seen`; spins briefly first, because waking
  /// a sleeping thread costs more than most workgroups take.
  bool waitForJob(uint64_t seen);

  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *job = nullptr;
  std::unique_ptr<Share[]> shares; // one per thread, the caller's first
  // Bumped (release) after a job is published, so workers see each job once.
  std::atomic<uint64_t> generation{0};
  std::atomic<unsigned> pending{0}; // workers still inside the current job
  std::atomic<bool> stopping{false};
  std::mutex failureMu;
  std::exception_ptr failure; // the first exception of the current job
};

} // namespace kiln

#endif // KILN_RUNTIME_THREADPOOL_H
