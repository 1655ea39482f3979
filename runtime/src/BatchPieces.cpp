//===- BatchPieces.cpp - a dynamic batch as pieces of compiled chunks -----===//
#include "BatchPieces.h"

#include <algorithm>
#include <limits>

using namespace kiln;

std::vector<int64_t> kiln::batchPieces(int64_t batch,
                                       const std::vector<int64_t> &chunks) {
  const int64_t largest = *std::max_element(chunks.begin(), chunks.end());
  // Costs are in half elements: a run's fixed cost is half the smallest
  // chunk.
  const int64_t fixedCost = *std::min_element(chunks.begin(), chunks.end());
  std::vector<int64_t> pieces;
  // Far from the end, the largest chunk wastes nothing and costs least per
  // element; the last 2 * largest elements are planned exactly.
  int64_t rest = batch;
  if (rest > 2 * largest) {
    int64_t full = (rest - 2 * largest + largest - 1) / largest;
    pieces.assign(size_t(full), largest);
    rest -= full * largest;
  }
  // cost[n]: the least cost of covering n elements; first[n]: the chunk of
  // the piece that takes the first of them.
  std::vector<int64_t> cost(size_t(rest) + 1, 0), first(size_t(rest) + 1, 0);
  for (int64_t n = 1; n <= rest; ++n) {
    cost[n] = std::numeric_limits<int64_t>::max();
    for (int64_t chunk : chunks) {
      int64_t total =
          cost[std::max<int64_t>(0, n - chunk)] + 2 * chunk + fixedCost;
      // Ties go to the larger chunk: fewer runs.
      if (total < cost[n] || (total == cost[n] && chunk > first[n])) {
        cost[n] = total;
        first[n] = chunk;
      }
    }
  }
  std::vector<int64_t> tail;
  for (int64_t n = rest; n > 0; n -= first[n])
    tail.push_back(first[n]);
  std::sort(tail.rbegin(), tail.rend());
  pieces.insert(pieces.end(), tail.begin(), tail.end());
  return pieces;
}
