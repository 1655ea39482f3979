//===- BatchPiecesTest.cpp - pieces of a dynamic batch --------------------===//
#include "BatchPieces.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

using kiln::batchPieces;
using Pieces = std::vector<int64_t>;

TEST(BatchPieces, OneChunkPadsTheLastPiece) {
  EXPECT_EQ(batchPieces(1, {4}), (Pieces{4}));
  EXPECT_EQ(batchPieces(9, {4}), (Pieces{4, 4, 4}));
  EXPECT_EQ(batchPieces(3, {1}), (Pieces{1, 1, 1}));
}

TEST(BatchPieces, ABatchOfAChunkRunsThatChunk) {
  for (int64_t chunk : {1, 2, 8, 32})
    EXPECT_EQ(batchPieces(chunk, {1, 2, 8, 32}), (Pieces{chunk}));
}

TEST(BatchPieces, SmallRemaindersTakeSmallChunks) {
  EXPECT_EQ(batchPieces(9, {1, 8}), (Pieces{8, 1}));
  EXPECT_EQ(batchPieces(3, {1, 8}), (Pieces{1, 1, 1}));
  EXPECT_EQ(batchPieces(5, {1, 2, 4, 8}), (Pieces{4, 1}));
}

TEST(BatchPieces, AlmostFullChunksArePadded) {
  // 7 runs of 1 cost more than one run of 8 with an element of padding.
  EXPECT_EQ(batchPieces(7, {1, 8}), (Pieces{8}));
  EXPECT_EQ(batchPieces(31, {1, 8, 32}), (Pieces{32}));
}

TEST(BatchPieces, LargeBatchesRunTheLargestChunk) {
  Pieces pieces = batchPieces(1000, {1, 8, 32});
  EXPECT_EQ(std::accumulate(pieces.begin(), pieces.end(), int64_t(0)), 1000);
  EXPECT_EQ(pieces.front(), 32);
  EXPECT_EQ(std::count(pieces.begin(), pieces.end(), 32), 31);
}

TEST(BatchPieces, PiecesCoverTheBatch) {
  for (int64_t batch = 1; batch < 200; ++batch) {
    Pieces pieces = batchPieces(batch, {3, 5, 16});
    int64_t covered = std::accumulate(pieces.begin(), pieces.end(), int64_t(0));
    EXPECT_GE(covered, batch);
    EXPECT_LT(covered - pieces.back(), batch) << "batch " << batch;
    EXPECT_TRUE(std::is_sorted(pieces.rbegin(), pieces.rend()));
  }
}

TEST(BatchPieces, HugeChunksPlanInBoundedMemory) {
  const int64_t huge = int64_t(1) << 62;
  EXPECT_EQ(batchPieces(3, {1, huge}), (Pieces{1, 1, 1}));
  EXPECT_EQ(batchPieces(huge + 1, {huge}), (Pieces{huge, huge}));
  Pieces pieces = batchPieces(int64_t(1) << 40, {1, 1 << 20});
  EXPECT_EQ(std::accumulate(pieces.begin(), pieces.end(), int64_t(0)),
            int64_t(1) << 40);
}
