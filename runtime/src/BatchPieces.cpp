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
  // element; the last 2 * largest elements (at most 2^16, so that a huge
  // chunk cannot make the plan huge) are planned exactly.
  const int64_t window = 2 * std::min<int64_t>(largest, int64_t(1) << 15);
  int64_t rest = batch;
  if (rest > window) {
    int64_t full = (rest - window) / largest + ((rest - window) % largest != 0);
    pieces.assign(size_t(full), largest);
    // (full - 1) * largest < rest: no step below can overflow.
    rest -= (full - 1) * largest;
    rest = std::max<int64_t>(0, rest - largest);
  }
  // cost[n]: the least cost of covering n elements (128-bit: a chunk may be
  // near 2^63); first[n]: the chunk of the piece that takes the first of
  // them.
  using Cost = __int128;
  std::vector<Cost> cost(size_t(rest) + 1, 0);
  std::vector<int64_t> first(size_t(rest) + 1, 0);
  for (int64_t n = 1; n <= rest; ++n) {
    cost[n] = std::numeric_limits<Cost>::max();
    for (int64_t chunk : chunks) {
      Cost total =
          cost[std::max<int64_t>(0, n - chunk)] + 2 * Cost(chunk) + fixedCost;
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
