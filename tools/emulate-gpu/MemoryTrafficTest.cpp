//===- MemoryTrafficTest.cpp - counting rules of --memory-traffic ---------===//
//
// The sector and bank-conflict counts of kiln-emulate-gpu --memory-traffic
// on access patterns whose costs the CUDA programming guide and Nsight
// Compute document.
//
//===----------------------------------------------------------------------===//
#include "MemoryTraffic.h"

#include <gtest/gtest.h>

using namespace kiln::emulator;

namespace {

/// Lanes 0..count-1, lane l at base + l * stride, each `bytes` wide.
std::vector<LaneAccess> strided(uint64_t base, int64_t stride, int64_t bytes,
                                int64_t count = 32) {
  std::vector<LaneAccess> lanes;
  for (int64_t lane = 0; lane < count; ++lane)
    lanes.push_back({lane, base + uint64_t(lane * stride), bytes});
  return lanes;
}

/// The kernel line MemoryTraffic prints for its blocks so far.
std::string printed(const MemoryTraffic &traffic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  traffic.print(os, "k", false);
  return text;
}

TEST(GlobalRequest, ConsecutiveWordsAreFourSectors) {
  Traffic traffic = globalRequest(strided(1024, 4, 4));
  EXPECT_EQ(traffic.transactions, 4);
  EXPECT_EQ(traffic.ideal, 4);
  EXPECT_EQ(traffic.bytes, 128);
}

TEST(GlobalRequest, SixteenBytesPerLaneAreSixteenSectors) {
  Traffic traffic = globalRequest(strided(0, 16, 16));
  EXPECT_EQ(traffic.transactions, 16);
  EXPECT_EQ(traffic.ideal, 16);
}

TEST(GlobalRequest, MisalignedRunTouchesOneMoreSector) {
  Traffic traffic = globalRequest(strided(16, 4, 4));
  EXPECT_EQ(traffic.transactions, 5);
  EXPECT_EQ(traffic.ideal, 4);
}

TEST(GlobalRequest, StridedWordsTakeASectorEach) {
  // A column of a row-major float matrix with rows of 1 KiB.
  Traffic traffic = globalRequest(strided(0, 1024, 4));
  EXPECT_EQ(traffic.transactions, 32);
  EXPECT_EQ(traffic.bytes, 128);
  EXPECT_EQ(traffic.ideal, 4);
}

TEST(GlobalRequest, BroadcastCountsItsBytesOnce) {
  Traffic traffic = globalRequest(strided(64, 0, 4));
  EXPECT_EQ(traffic.transactions, 1);
  EXPECT_EQ(traffic.bytes, 4);
  EXPECT_EQ(traffic.ideal, 1);
}

TEST(WorkgroupRequest, ConsecutiveWordsAreOneWavefront) {
  Traffic traffic = workgroupRequest(strided(0, 4, 4));
  EXPECT_EQ(traffic.transactions, 1);
  EXPECT_EQ(traffic.ideal, 1);
}

TEST(WorkgroupRequest, StrideOfTwoWordsIsATwoWayConflict) {
  Traffic traffic = workgroupRequest(strided(0, 8, 4));
  EXPECT_EQ(traffic.transactions, 2);
  EXPECT_EQ(traffic.ideal, 1);
}

TEST(WorkgroupRequest, ColumnOfA32WordRowIsAThirtyTwoWayConflict) {
  Traffic traffic = workgroupRequest(strided(0, 128, 4));
  EXPECT_EQ(traffic.transactions, 32);
  // Padding each row by one word spreads the column over every bank.
  EXPECT_EQ(workgroupRequest(strided(0, 132, 4)).transactions, 1);
}

TEST(WorkgroupRequest, SameWordIsABroadcast) {
  Traffic traffic = workgroupRequest(strided(256, 0, 4));
  EXPECT_EQ(traffic.transactions, 1);
  // Halves of one word from two lanes: one word, no conflict.
  EXPECT_EQ(workgroupRequest(strided(0, 2, 2)).transactions, 1);
}

TEST(WorkgroupRequest, SixteenBytesPerLaneAreFourPhases) {
  Traffic traffic = workgroupRequest(strided(0, 16, 16));
  EXPECT_EQ(traffic.transactions, 4);
  EXPECT_EQ(traffic.ideal, 4);
}

TEST(WorkgroupRequest, LdmatrixRowsOfAPaddedStageAreConflictFree) {
  // ldmatrix.x4 on a [row][k] float16 stage of 32 along K padded by 16
  // bytes (rows of 80 bytes): lane l gives row l % 16 of the 16x16 piece
  // at k 8 (l / 16); 8 lanes' rows are one matrix.
  std::vector<LaneAccess> lanes;
  for (int64_t lane = 0; lane < 32; ++lane)
    lanes.push_back({lane, uint64_t((lane % 16) * 80 + (lane / 16) * 16), 16});
  EXPECT_EQ(workgroupRequest(lanes).transactions, 4);
  // Unpadded rows of 64 bytes: rows r and r + 2 share banks.
  for (LaneAccess &lane : lanes)
    lane.address = (lane.lane % 16) * 64 + (lane.lane / 16) * 16;
  EXPECT_EQ(workgroupRequest(lanes).transactions, 16);
}

TEST(WorkgroupRequest, SixteenByteCopiesOfRowsOfSixtyFourBytesConflict) {
  // A stage of 32 float16 along K, rows padded to 80 bytes, copied 16
  // bytes a lane, 4 lanes a row: the 8 lanes of a phase cover two rows,
  // whose banks overlap by 16 bytes.
  std::vector<LaneAccess> lanes;
  for (int64_t lane = 0; lane < 32; ++lane)
    lanes.push_back({lane, uint64_t((lane / 4) * 80 + (lane % 4) * 16), 16});
  Traffic traffic = workgroupRequest(lanes);
  EXPECT_EQ(traffic.transactions, 8);
  EXPECT_EQ(traffic.ideal, 4);
}

TEST(MemoryTraffic, LanesOfAWarpMatchByExecution) {
  MemoryTraffic traffic;
  traffic.start({{"load", MemorySpace::Global, false}}, 64, 32);
  // Two executions of the site by each of 64 threads: 2 requests a warp,
  // each 32 consecutive words.
  for (int64_t execution = 0; execution < 2; ++execution)
    for (int64_t thread = 0; thread < 64; ++thread)
      traffic.record(thread, 0, 4096 * execution + 4 * thread, 4);
  traffic.finishBlock();
  EXPECT_EQ(printed(traffic),
            "k: memory: global loads 4 requests, 4.0 sectors each, 100% "
            "of their bytes used\n");
}

TEST(MemoryTraffic, AdjacentAlignedAccessesJoinIntoOneVector) {
  MemoryTraffic traffic;
  traffic.start({{"x", MemorySpace::Global, false},
                 {"y", MemorySpace::Global, false},
                 {"z", MemorySpace::Global, false}},
                32, 32);
  for (int64_t thread = 0; thread < 32; ++thread) {
    // x and y make one 8-byte load; z is not next to them.
    traffic.record(thread, 0, 8 * thread, 4);
    traffic.record(thread, 1, 8 * thread + 4, 4);
    traffic.record(thread, 2, 4096 + 4 * thread, 4);
  }
  traffic.finishBlock();
  EXPECT_EQ(printed(traffic),
            "k: memory: global loads 2 requests, 6.0 sectors each, 100% "
            "of their bytes used\n");
}

TEST(MemoryTraffic, ASiteDoesNotJoinItselfOutsideUnrolledLoops) {
  MemoryTraffic traffic;
  traffic.start({{"x", MemorySpace::Global, false}}, 32, 32);
  for (int64_t thread = 0; thread < 32; ++thread) {
    traffic.record(thread, 0, 8 * thread, 4);
    traffic.record(thread, 0, 8 * thread + 4, 4);
  }
  traffic.finishBlock();
  EXPECT_EQ(printed(traffic),
            "k: memory: global loads 2 requests, 8.0 sectors each, 50% "
            "of their bytes used\n");
}

} // namespace
