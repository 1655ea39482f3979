//===- ShapeGuards.cpp - shape-like inputs checked before a run -----------===//
#include "kiln/shape_guards.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace kiln;

namespace {

/// Far past any real model's rank; keeps forged guards cheap.

std::string listString(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/// A shape computed from the values, or why the values are invalid.
struct Shape {
  std::vector<int64_t> dims;
  std::string error;
};

Shape invalid(std::string why) { return {{}, std::move(why)}; }

bool normalizeAxis(int64_t axis, int64_t rank, int64_t &out) {
  if (axis < -rank || axis >= rank)
    return false;
  out = axis < 0 ? axis + rank : axis;
  return true;
}

/// Distinct axes of a tensor of `rank` dims, normalized, or an error.
Shape normalizeAxes(const std::vector<int64_t> &axes, int64_t rank) {
  Shape normalized;
  for (int64_t axis : axes) {
    int64_t n;
    if (!normalizeAxis(axis, rank, n))
      return invalid("axis " + std::to_string(axis) + " is out of range for " +
                     std::to_string(rank) + " dims");
    if (std::count(normalized.dims.begin(), normalized.dims.end(), n))
      return invalid("axis " + std::to_string(axis) + " repeats");
    normalized.dims.push_back(n);
  }
  return normalized;
}

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Shape reshape(const std::vector<int64_t> &data,
              const std::vector<int64_t> &shape, bool allowZero) {
  int64_t total = 1, known = 1, inferred = -1;
  for (int64_t d : data)
    if (__builtin_mul_overflow(total, d, &total))
      return invalid("the data has more elements than 64 bits count");
  Shape result{shape, ""};
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t &dim = result.dims[i];
    if (dim == 0 && !allowZero) {
      if (i >= data.size())
        return invalid("entry " + std::to_string(i) +
                       " is 0 but the data has no dim to copy there");
      dim = data[i];
    }
    if (dim == -1) {
      if (inferred >= 0)
        return invalid("more than one entry is -1");
      inferred = int64_t(i);
      continue;
    }
    if (dim < 0 || __builtin_mul_overflow(known, dim, &known))
      return invalid("entry " + std::to_string(i) + " is invalid");
  }
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return invalid("the -1 entry cannot be inferred");
    result.dims[inferred] = total / known;
  } else if (known != total) {
    return invalid("it has " + std::to_string(known) + " elements, the data " +
                   std::to_string(total));
  }
  return result;
}

Shape expand(const std::vector<int64_t> &data,
             const std::vector<int64_t> &shape) {
  size_t rank = std::max(data.size(), shape.size());
  Shape result{std::vector<int64_t>(rank), ""};
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - data.size() ? 1 : data[i - (rank - data.size())];
    int64_t b = i < rank - shape.size() ? 1 : shape[i - (rank - shape.size())];
    if (b < 0 || (a != b && a != 1 && b != 1))
      return invalid("the data does not broadcast to it");
    result.dims[i] = a == 1 ? b : a;
  }
  return result;
}

Shape tile(const std::vector<int64_t> &data,
           const std::vector<int64_t> &repeats) {
  if (repeats.size() != data.size())
    return invalid("it needs one entry per data dim");
  Shape result{data, ""};
  for (size_t i = 0; i < data.size(); ++i)
    if (repeats[i] < 0 ||
        __builtin_mul_overflow(data[i], repeats[i], &result.dims[i]))
      return invalid("entry " + std::to_string(i) + " is invalid");
  return result;
}

Shape squeeze(const std::vector<int64_t> &data,
              const std::vector<int64_t> &axes) {
  Shape normalized = normalizeAxes(axes, int64_t(data.size()));
  if (!normalized.error.empty())
    return normalized;
  Shape result;
  for (size_t d = 0; d < data.size(); ++d) {
    bool listed = contains(normalized.dims, int64_t(d));
    if (listed && data[d] != 1)
      return invalid("dim " + std::to_string(d) + " has size " +
                     std::to_string(data[d]) + ", not 1");
    if (!listed && !(axes.empty() && data[d] == 1))
      result.dims.push_back(data[d]);
  }
  return result;
}

Shape unsqueeze(const std::vector<int64_t> &data,
                const std::vector<int64_t> &axes) {
  int64_t rank = int64_t(data.size() + axes.size());
  Shape normalized = normalizeAxes(axes, rank);
  if (!normalized.error.empty())
    return normalized;
  Shape result;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    result.dims.push_back(contains(normalized.dims, d) ? 1 : data[next++]);
  return result;
}

Shape reduce(const std::vector<int64_t> &data, const std::vector<int64_t> &axes,
             bool keepDims, bool noopWithEmptyAxes) {
  if (axes.empty() && noopWithEmptyAxes)
    return {data, ""};
  Shape normalized = normalizeAxes(axes, int64_t(data.size()));
  if (!normalized.error.empty())
    return normalized;
  Shape result;
  for (size_t d = 0; d < data.size(); ++d) {
    bool reduced = axes.empty() || contains(normalized.dims, int64_t(d));
    if (!reduced)
      result.dims.push_back(data[d]);
    else if (keepDims)
      result.dims.push_back(1);
  }
  return result;
}

Shape resultShape(const ShapeGuardDesc &g, const std::vector<int64_t> &v) {
  auto param = [&](size_t i) { return i < g.params.size() && g.params[i]; };
  switch (g.rule) {
  case ShapeGuardDesc::Reshape:
    return reshape(g.dataShape, v, param(0));
  case ShapeGuardDesc::Expand:
    return expand(g.dataShape, v);
  case ShapeGuardDesc::Tile:
    return tile(g.dataShape, v);
  case ShapeGuardDesc::Squeeze:
    return squeeze(g.dataShape, v);
  case ShapeGuardDesc::Unsqueeze:
    return unsqueeze(g.dataShape, v);
  case ShapeGuardDesc::Reduce:
    return reduce(g.dataShape, v, param(0), param(1));
  case ShapeGuardDesc::Equals:
    break;
  }
  return {v, ""};
}

template <typename T>
bool readAs(const void *data, size_t bytes, std::vector<int64_t> &values) {
  size_t count = bytes / sizeof(T);
  values.resize(count);
  for (size_t i = 0; i < count; ++i) {
    T x;
    std::memcpy(&x, static_cast<const char *>(data) + i * sizeof(T), sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      // ±2^63 itself is out of range: the bound is exclusive.
      if (!std::isfinite(x) || std::fabs(double(x)) >= 9.2233720368547758e18)
        return false;
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      if (x > uint64_t(INT64_MAX))
        return false;
    }
    values[i] = int64_t(x);
  }
  return true;
}

} // namespace

bool kiln::readGuardValues(kiln_dtype dtype, const void *data, size_t bytes,
                           std::vector<int64_t> &values) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return readAs<float>(data, bytes, values);
  case KILN_DTYPE_F64:
    return readAs<double>(data, bytes, values);
  case KILN_DTYPE_I8:
    return readAs<int8_t>(data, bytes, values);
  case KILN_DTYPE_U8:
  case KILN_DTYPE_BOOL:
    return readAs<uint8_t>(data, bytes, values);
  case KILN_DTYPE_I16:
    return readAs<int16_t>(data, bytes, values);
  case KILN_DTYPE_U16:
    return readAs<uint16_t>(data, bytes, values);
  case KILN_DTYPE_I32:
    return readAs<int32_t>(data, bytes, values);
  case KILN_DTYPE_U32:
    return readAs<uint32_t>(data, bytes, values);
  case KILN_DTYPE_I64:
    return readAs<int64_t>(data, bytes, values);
  case KILN_DTYPE_U64:
    return readAs<uint64_t>(data, bytes, values);
  default:
    return false;
  }
}

std::string kiln::checkShapeGuard(const ShapeGuardDesc &guard,
                                  const std::vector<int64_t> &values,
                                  const std::string &input) {
  Shape got = resultShape(guard, values);
  if (got.error.empty() && got.dims == guard.expected)
    return "";
  std::string what = listString(values);
  if (!got.error.empty())
    return what + ", which is not valid here: " + got.error;
  bool givesShape = guard.rule != ShapeGuardDesc::Equals;
  std::string compiledFor =
      givesShape ? ", which gives shape " + listString(got.dims) +
                       "; the artifact was compiled for shape "
                 : "; the artifact was compiled for ";
  return what + compiledFor + listString(guard.expected) +
         " (shapes are fixed at compile time: recompile for these values, "
         "with --freeze-input " +
         input + "=@FILE)";
}

std::string kiln::describeShapeGuard(const ShapeGuardDesc &guard) {
  if (guard.rule == ShapeGuardDesc::Equals)
    return "holds " + listString(guard.expected);
  return "gives " + listString(guard.expected) + " from data " +
         listString(guard.dataShape);
}

std::string kiln::validateShapeGuard(const ShapeGuardDesc &guard) {
  if (guard.dataShape.size() > kMaxGuardRank ||
      guard.expected.size() > kMaxGuardRank ||
      guard.params.size() > kMaxGuardRank)
    return "has more than " + std::to_string(kMaxGuardRank) + " dims";
  for (int64_t d : guard.dataShape)
    if (d < 0 || d > (int64_t(1) << 48))
      return "has an invalid data dim " + std::to_string(d);
  return "";
}
