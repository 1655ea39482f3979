//===- shape_guards.h - shape-like inputs checked before a run --*- C++ -*-===//
//
// Kiln fixes shapes at compile time. A node whose shape-like input (a
// Reshape's shape, a TopK's k) is a model input is compiled for the result
// shape the model declares; the artifact keeps a guard per such input, and
// before each run the runtime checks that the input's values give that
// shape. Pure C++: the rules follow the ONNX ops' shape semantics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SHAPE_GUARDS_H
#define KILN_SHAPE_GUARDS_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// The most values a guarded input may hold: shape-like inputs hold a
/// few, and the checks stay cheap on a forged artifact.
constexpr size_t kMaxShapeGuardValues = 4096;

struct ShapeGuardDesc {
  /// The values of fb::ShapeRule, in the same order.
  enum Rule { Equals, Reshape, Expand, Tile, Squeeze, Unsqueeze, Reduce };
  Rule rule;
  std::string node, opType;
  uint32_t input; // index into Model::inputs()
  std::vector<int64_t> dataShape, params, expected;
};

/// The elements of an input tensor as int64 (floats truncated toward zero,
/// as ONNX casts them), or false when one is not a finite value in range.
bool readGuardValues(kiln_dtype dtype, const void *data, size_t bytes,
                     std::vector<int64_t> &values);

/// "" when `values` (of the model input called `input`) give the guard its
/// expected result, else why not: the values, what they give, and what the
/// artifact was compiled for.
std::string checkShapeGuard(const ShapeGuardDesc &guard,
                            const std::vector<int64_t> &values,
                            const std::string &input);

/// What the guard holds an input to: "holds [3]", or "gives [4,6] from
/// data [2,3,4]".
std::string describeShapeGuard(const ShapeGuardDesc &guard);

/// The most dims (and values) a guard's shapes hold.
constexpr size_t kMaxGuardRank = 64;

/// Why an artifact's guard is malformed, or "" (rule parameters the checks
/// rely on; shapes of sane rank with non-negative dims).
std::string validateShapeGuard(const ShapeGuardDesc &guard);

} // namespace kiln

#endif // KILN_SHAPE_GUARDS_H
