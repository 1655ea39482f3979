//===- WgmmaFencesTest.cpp - rules of the wgmma.fence check ---------------===//
//
// What kiln-emulate-gpu --target=cuda:sm_90a lets a wgmma start on:
// accumulators passed straight from the thread's previous wgmma, or anything
// once the thread ran wgmma.fence since that wgmma (or since it started the
// block).
//
//===----------------------------------------------------------------------===//
#include "WgmmaFences.h"

#include <gtest/gtest.h>

using namespace kiln::emulator;

namespace {

class WgmmaRegisterOrderTest : public ::testing::Test {
protected:
  void SetUp() override {
    order.reset(2);
    order.startBlock(0);
    order.startBlock(1);
  }
  /// Thread 0's first wgmma, fenced: zeros in, `first` out.
  void fencedFirstWgmma() {
    order.fenced(0);
    ASSERT_EQ(order.issue(0, zeros, first, 4), "");
  }
  WgmmaRegisterOrder order;
  float zeros[4] = {0, 0, 0, 0}, first[4] = {1, 2, 3, 4},
        second[4] = {5, 6, 7, 8}, bias[4] = {9, 9, 9, 9};
};

TEST_F(WgmmaRegisterOrderTest, FirstWgmmaNeedsAFence) {
  EXPECT_EQ(order.issue(0, zeros, first, 4),
            "a wgmma with no wgmma.fence before it in its thread's block");
  order.fenced(1);
  EXPECT_EQ(order.issue(1, zeros, first, 4), "");
}

TEST_F(WgmmaRegisterOrderTest, ChainedAccumulatorsNeedNoFence) {
  fencedFirstWgmma();
  EXPECT_EQ(order.issue(0, first, second, 4), "");
}

TEST_F(WgmmaRegisterOrderTest, RewrittenAccumulatorsNeedAFence) {
  fencedFirstWgmma();
  EXPECT_EQ(order.issue(0, bias, second, 4),
            "a wgmma whose accumulators other instructions wrote since the "
            "last wgmma, with no wgmma.fence between");
  order.fenced(0);
  EXPECT_EQ(order.issue(0, bias, first, 4), "");
}

TEST_F(WgmmaRegisterOrderTest, AnotherThreadsFenceDoesNotCount) {
  order.fenced(1);
  EXPECT_NE(order.issue(0, zeros, first, 4), "");
}

TEST_F(WgmmaRegisterOrderTest, ANewBlockStartsUnfenced) {
  fencedFirstWgmma();
  order.startBlock(0);
  EXPECT_NE(order.issue(0, first, second, 4), "");
}

} // namespace
