//===- ProxyFences.cpp - what wgmma's reads may see -----------------------===//
#include "ProxyFences.h"

#include <algorithm>

using namespace kiln::emulator;

void AsyncProxyVisibility::reset(int64_t threads) {
  unfencedWriters.clear();
  unfencedRowsOf.assign(threads, {});
}

void AsyncProxyVisibility::written(int64_t thread, const uint8_t *address,
                                   int64_t bytes) {
  std::vector<uintptr_t> &rows = unfencedRowsOf[thread];
  for (uintptr_t row = rowOf(address); row < rowOf(address + bytes - 1) + 16;
       row += 16) {
    // A row the thread already wrote since its fence is counted once.
    if (std::find(rows.rbegin(), rows.rend(), row) != rows.rend())
      continue;
    rows.push_back(row);
    ++unfencedWriters[row];
  }
}

void AsyncProxyVisibility::fenced(int64_t thread) {
  for (uintptr_t row : unfencedRowsOf[thread])
    if (--unfencedWriters[row] == 0)
      unfencedWriters.erase(row);
  unfencedRowsOf[thread].clear();
}

bool AsyncProxyVisibility::visible(const uint8_t *row) const {
  return !unfencedWriters.count(rowOf(row));
}
