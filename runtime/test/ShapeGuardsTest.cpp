//===- ShapeGuardsTest.cpp - the rules of shape-like inputs read at run time
//==//
#include "kiln/shape_guards.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kiln;

namespace {

ShapeGuardDesc guard(ShapeGuardDesc::Rule rule, std::vector<int64_t> data,
                     std::vector<int64_t> params,
                     std::vector<int64_t> expected) {
  return {rule,
          "n",
          "Op",
          0,
          std::move(data),
          std::move(params),
          std::move(expected)};
}

bool passes(const ShapeGuardDesc &g, std::vector<int64_t> values) {
  return checkShapeGuard(g, values, "v").empty();
}

TEST(ShapeGuards, ReshapeResolvesZerosAndMinusOne) {
  auto g = guard(ShapeGuardDesc::Reshape, {2, 3, 4}, {0}, {2, 12});
  EXPECT_TRUE(passes(g, {2, 12}));
  EXPECT_TRUE(passes(g, {2, -1}));
  EXPECT_TRUE(passes(g, {0, -1})); // 0 copies the data's dim
  EXPECT_FALSE(passes(g, {12, 2}));
  EXPECT_FALSE(passes(g, {-1, -1}));
  EXPECT_FALSE(passes(g, {5, -1}));
  EXPECT_FALSE(passes(g, {2, 12, 1}));
  // With allowzero a 0 is a 0.
  auto zero = guard(ShapeGuardDesc::Reshape, {0, 3}, {1}, {3, 0});
  EXPECT_TRUE(passes(zero, {3, 0}));
  EXPECT_FALSE(passes(zero, {0, -1}));
}

TEST(ShapeGuards, MessagesSayWhatTheValuesGiveAndWhatWasCompiled) {
  auto g = guard(ShapeGuardDesc::Reshape, {2, 3, 4}, {0}, {2, 12});
  EXPECT_EQ(checkShapeGuard(g, {12, 2}, "shape"),
            "[12,2], which gives shape [12,2]; the artifact was compiled for "
            "shape [2,12] (shapes are fixed at compile time: recompile for "
            "these values, with --freeze-input shape=@FILE)");
  EXPECT_EQ(checkShapeGuard(g, {-1, -1}, "shape"),
            "[-1,-1], which is not valid here: more than one entry is -1");
  auto k = guard(ShapeGuardDesc::Equals, {}, {}, {3});
  EXPECT_EQ(checkShapeGuard(k, {4}, "k"),
            "[4]; the artifact was compiled for [3] (shapes are fixed at "
            "compile time: recompile for these values, with --freeze-input "
            "k=@FILE)");
}

TEST(ShapeGuards, ExpandAndTile) {
  auto expand = guard(ShapeGuardDesc::Expand, {3, 1}, {}, {2, 3, 4});
  EXPECT_TRUE(passes(expand, {2, 3, 4}));
  EXPECT_TRUE(passes(expand, {2, 1, 4}));
  EXPECT_FALSE(passes(expand, {2, 2, 4}));
  EXPECT_FALSE(passes(expand, {2, 3, -4}));
  auto tile = guard(ShapeGuardDesc::Tile, {2, 3}, {}, {4, 3});
  EXPECT_TRUE(passes(tile, {2, 1}));
  EXPECT_FALSE(passes(tile, {1, 2}));
  EXPECT_FALSE(passes(tile, {2}));
  EXPECT_FALSE(passes(tile, {-2, -1}));
}

TEST(ShapeGuards, SqueezeAndUnsqueezeAxes) {
  auto squeeze = guard(ShapeGuardDesc::Squeeze, {1, 3, 1}, {}, {3, 1});
  EXPECT_TRUE(passes(squeeze, {0}));
  EXPECT_TRUE(passes(squeeze, {-3}));
  EXPECT_FALSE(passes(squeeze, {1})); // a dim of size 3
  EXPECT_FALSE(passes(squeeze, {2}));
  EXPECT_FALSE(passes(squeeze, {3}));
  auto all = guard(ShapeGuardDesc::Squeeze, {1, 3, 1}, {}, {3});
  EXPECT_TRUE(passes(all, {})); // no axes: every dim of size 1
  auto unsqueeze = guard(ShapeGuardDesc::Unsqueeze, {3, 4}, {}, {1, 3, 4, 1});
  EXPECT_TRUE(passes(unsqueeze, {0, 3}));
  EXPECT_TRUE(passes(unsqueeze, {-1, 0}));
  EXPECT_FALSE(passes(unsqueeze, {0, 0}));
  EXPECT_FALSE(passes(unsqueeze, {1, 3}));
}

TEST(ShapeGuards, ReductionAxes) {
  auto kept = guard(ShapeGuardDesc::Reduce, {2, 3, 4}, {1, 0}, {2, 1, 4});
  EXPECT_TRUE(passes(kept, {1}));
  EXPECT_TRUE(passes(kept, {-2}));
  EXPECT_FALSE(passes(kept, {2}));
  EXPECT_FALSE(passes(kept, {}));
  auto all = guard(ShapeGuardDesc::Reduce, {2, 3}, {0, 0}, {});
  EXPECT_TRUE(passes(all, {}));
  EXPECT_TRUE(passes(all, {0, 1}));
  auto noop = guard(ShapeGuardDesc::Reduce, {2, 3}, {1, 1}, {2, 3});
  EXPECT_TRUE(passes(noop, {}));
  EXPECT_FALSE(passes(noop, {0}));
}

TEST(ShapeGuards, Equals) {
  auto sizes = guard(ShapeGuardDesc::Equals, {}, {}, {2, 4});
  EXPECT_TRUE(passes(sizes, {2, 4}));
  EXPECT_FALSE(passes(sizes, {4, 2}));
  EXPECT_FALSE(passes(sizes, {2}));
}

TEST(ShapeGuards, ValuesOfEveryIntegerAndFloatDtype) {
  std::vector<int64_t> values;
  int32_t ints[] = {3, -1};
  ASSERT_TRUE(readGuardValues(KILN_DTYPE_I32, ints, sizeof ints, values));
  EXPECT_EQ(values, (std::vector<int64_t>{3, -1}));
  float floats[] = {2.9f, -1.5f};
  ASSERT_TRUE(readGuardValues(KILN_DTYPE_F32, floats, sizeof floats, values));
  EXPECT_EQ(values, (std::vector<int64_t>{2, -1})); // truncated, as ONNX casts
  float nan = std::nanf("");
  EXPECT_FALSE(readGuardValues(KILN_DTYPE_F32, &nan, sizeof nan, values));
  double huge = 1e30;
  EXPECT_FALSE(readGuardValues(KILN_DTYPE_F64, &huge, sizeof huge, values));
  uint64_t big = uint64_t(1) << 63;
  EXPECT_FALSE(readGuardValues(KILN_DTYPE_U64, &big, sizeof big, values));
  uint16_t half = 0x3c00;
  EXPECT_FALSE(readGuardValues(KILN_DTYPE_F16, &half, sizeof half, values));
}

TEST(ShapeGuards, MalformedGuards) {
  EXPECT_NE(validateShapeGuard(guard(ShapeGuardDesc::Reshape, {-1}, {}, {})),
            "");
  EXPECT_NE(validateShapeGuard(guard(ShapeGuardDesc::Reshape,
                                     std::vector<int64_t>(65, 1), {}, {})),
            "");
  // Data dims whose product overflows: the values are refused, no UB.
  auto huge = guard(ShapeGuardDesc::Reshape,
                    std::vector<int64_t>(8, int64_t(1) << 40), {0}, {1});
  EXPECT_EQ(validateShapeGuard(huge), "");
  EXPECT_FALSE(passes(huge, {1}));
}

} // namespace
