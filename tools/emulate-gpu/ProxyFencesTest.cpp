//===- ProxyFencesTest.cpp - rules of the async-proxy check ---------------===//
//
// What kiln-emulate-gpu --target=cuda:sm_90a lets a wgmma read: workgroup
// memory that cp.async wrote only once the writing thread ran
// fence.proxy.async.
//
//===----------------------------------------------------------------------===//
#include "ProxyFences.h"

#include <gtest/gtest.h>

using namespace kiln::emulator;

namespace {

/// Two GPU threads over a 16-byte aligned scratch area standing in for
/// workgroup memory.
class AsyncProxyVisibilityTest : public ::testing::Test {
protected:
  void SetUp() override { visibility.reset(2); }
  const uint8_t *row(int i) const { return bytes + 16 * i; }

  alignas(16) uint8_t bytes[256] = {};
  AsyncProxyVisibility visibility;
};

TEST_F(AsyncProxyVisibilityTest, WriteIsVisibleOnlyAfterTheWritersFence) {
  EXPECT_TRUE(visibility.visible(row(0)));
  visibility.written(0, row(0), 16);
  EXPECT_FALSE(visibility.visible(row(0)));
  EXPECT_TRUE(visibility.visible(row(1)));
  visibility.fenced(0);
  EXPECT_TRUE(visibility.visible(row(0)));
}

TEST_F(AsyncProxyVisibilityTest, AnotherThreadsFenceDoesNotCount) {
  visibility.written(0, row(2), 16);
  visibility.fenced(1);
  EXPECT_FALSE(visibility.visible(row(2)));
}

TEST_F(AsyncProxyVisibilityTest, RowSharedByTwoWritersNeedsBothFences) {
  // Two 8-byte copies into one 16-byte row.
  visibility.written(0, row(3), 8);
  visibility.written(1, row(3) + 8, 8);
  visibility.fenced(0);
  EXPECT_FALSE(visibility.visible(row(3)));
  visibility.fenced(1);
  EXPECT_TRUE(visibility.visible(row(3)));
}

TEST_F(AsyncProxyVisibilityTest, WritesMarkEveryRowTheyTouch) {
  visibility.written(0, row(4), 32);
  visibility.written(0, row(7) + 4, 4);
  EXPECT_FALSE(visibility.visible(row(4)));
  EXPECT_FALSE(visibility.visible(row(5)));
  EXPECT_TRUE(visibility.visible(row(6)));
  EXPECT_FALSE(visibility.visible(row(7)));
  // A row written twice before one fence: that fence covers both.
  visibility.written(0, row(4), 16);
  visibility.fenced(0);
  for (int i = 4; i < 8; ++i)
    EXPECT_TRUE(visibility.visible(row(i))) << "row " << i;
}

TEST_F(AsyncProxyVisibilityTest, WriteAfterTheFenceNeedsAnother) {
  visibility.written(0, row(0), 16);
  visibility.fenced(0);
  visibility.written(0, row(0), 16);
  EXPECT_FALSE(visibility.visible(row(0)));
}

TEST_F(AsyncProxyVisibilityTest, ResetForgetsWrites) {
  visibility.written(0, row(0), 16);
  visibility.reset(1);
  EXPECT_TRUE(visibility.visible(row(0)));
}

} // namespace
