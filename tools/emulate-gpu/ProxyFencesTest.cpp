//===- ProxyFencesTest.cpp - rules of the async-proxy check ---------------===//
//
// What kiln-emulate-gpu --wgmma lets a wgmma read: workgroup memory that
// cp.async wrote only once the writing thread ran fence.proxy.async.
//
//===----------------------------------------------------------------------===//
#include "ProxyFences.h"

#include <gtest/gtest.h>

using namespace kiln::emulator;

namespace {

/// A 16-byte aligned scratch area standing in for workgroup memory.
struct Rows {
  alignas(16) uint8_t bytes[256] = {};
  const uint8_t *row(int i) const { return bytes + 16 * i; }
};

TEST(AsyncProxyVisibility, WriteIsVisibleOnlyAfterTheWritersFence) {
  Rows memory;
  AsyncProxyVisibility visibility;
  visibility.reset(2);
  EXPECT_TRUE(visibility.visible(memory.row(0)));
  visibility.written(0, memory.row(0), 16);
  EXPECT_FALSE(visibility.visible(memory.row(0)));
  EXPECT_TRUE(visibility.visible(memory.row(1)));
  visibility.fenced(0);
  EXPECT_TRUE(visibility.visible(memory.row(0)));
}

TEST(AsyncProxyVisibility, AnotherThreadsFenceDoesNotCount) {
  Rows memory;
  AsyncProxyVisibility visibility;
  visibility.reset(2);
  visibility.written(0, memory.row(2), 16);
  visibility.fenced(1);
  EXPECT_FALSE(visibility.visible(memory.row(2)));
}

TEST(AsyncProxyVisibility, RowSharedByTwoWritersNeedsBothFences) {
  Rows memory;
  AsyncProxyVisibility visibility;
  visibility.reset(2);
  // Two 8-byte copies into one 16-byte row.
  visibility.written(0, memory.row(3), 8);
  visibility.written(1, memory.row(3) + 8, 8);
  visibility.fenced(0);
  EXPECT_FALSE(visibility.visible(memory.row(3)));
  visibility.fenced(1);
  EXPECT_TRUE(visibility.visible(memory.row(3)));
}

TEST(AsyncProxyVisibility, WritesMarkEveryRowTheyTouch) {
  Rows memory;
  AsyncProxyVisibility visibility;
  visibility.reset(1);
  visibility.written(0, memory.row(4), 32);
  visibility.written(0, memory.row(7) + 4, 4);
  EXPECT_FALSE(visibility.visible(memory.row(4)));
  EXPECT_FALSE(visibility.visible(memory.row(5)));
  EXPECT_TRUE(visibility.visible(memory.row(6)));
  EXPECT_FALSE(visibility.visible(memory.row(7)));
  // A row written twice before one fence: that fence covers both.
  visibility.written(0, memory.row(4), 16);
  visibility.fenced(0);
  for (int i = 4; i < 8; ++i)
    EXPECT_TRUE(visibility.visible(memory.row(i))) << "row " << i;
}

TEST(AsyncProxyVisibility, WriteAfterTheFenceNeedsAnother) {
  Rows memory;
  AsyncProxyVisibility visibility;
  visibility.reset(1);
  visibility.written(0, memory.row(0), 16);
  visibility.fenced(0);
  visibility.written(0, memory.row(0), 16);
  EXPECT_FALSE(visibility.visible(memory.row(0)));
}

TEST(AsyncProxyVisibility, ResetForgetsWrites) {
  Rows memory;
  AsyncProxyVisibility visibility;
  visibility.reset(1);
  visibility.written(0, memory.row(0), 16);
  visibility.reset(1);
  EXPECT_TRUE(visibility.visible(memory.row(0)));
}

} // namespace
