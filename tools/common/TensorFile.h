//===- TensorFile.h - Read/write tensors as .pb and .npy --------*- C++ -*-===//
//
// Tensors for the runtime tools: ONNX TensorProto files (as in the ONNX
// backend test data) and NumPy .npy files. No LLVM; errors come back as text.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_TENSORFILE_H
#define KILN_TOOLS_TENSORFILE_H

#include "kiln/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct Tensor {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // little-endian, C order

  int64_t numElements() const;
  /// Element `i` converted to double (f16/bf16/bool/int included).
  double at(int64_t i) const;
  /// Stores `v` at element `i`, converting (and rounding) to the dtype.
  void set(int64_t i, double v);
};

/// Reads a .npy file (by its magic) or else an ONNX TensorProto .pb file.
bool readTensorFile(const std::string &path, Tensor &out, std::string &error);
bool readNpy(const std::string &path, Tensor &out, std::string &error);
bool readTensorProto(const std::string &path, Tensor &out, std::string &error);
/// The ONNX TensorProto data_type of a Kiln dtype (0 when none).
int32_t onnxTypeOf(kiln_dtype dtype);

bool writeNpy(const std::string &path, const Tensor &t, std::string &error);
bool writeTensorProto(const std::string &path, const Tensor &t,
                      std::string &error);

struct CompareResult {
  bool ok = true;
  double maxAbsErr = 0;
  double maxRelErr = 0; // over elements whose expected value is non-zero
  int64_t firstBadIndex = -1;
  std::string error; // set on a dtype or shape mismatch (then ok = false)
};

/// ONNX backend-test criterion, element-wise: |a - e| <= atol + rtol * |e|;
/// NaN matches NaN, and equal infinities match.
CompareResult compareTensors(const Tensor &actual, const Tensor &expected,
                             double rtol, double atol);

struct Tolerance {
  double rtol, atol;
};
/// The tools' default comparison (kiln-run --expected, kiln-onnx-test): the
/// ONNX backend tests' tolerances.
constexpr Tolerance kDefaultTolerance = {1e-3, 1e-7};
/// What `given` becomes for an output of `dtype`: float16 and bfloat16
/// references are themselves rounded (epsilon 2^-10 and 2^-7) and Kiln rounds
/// after every op too, so they get at least rtol 4e-3 and atol 1e-3.
Tolerance toleranceFor(kiln_dtype dtype, Tolerance given);
/// The rule above, for the tools' --help.
constexpr const char *kToleranceHelp =
    "rtol 1e-3, atol 1e-7 by default (the ONNX backend tests'); float16 and "
    "bfloat16 outputs at least rtol 4e-3, atol 1e-3";

/// "[2,3,4]"
std::string formatShape(const std::vector<int64_t> &shape);

/// Byte count of a tensor of `shape`/`dtype`, or false on overflow/negative.
bool tensorByteSize(kiln_dtype dtype, const std::vector<int64_t> &shape,
                    uint64_t &bytes);

} // namespace kiln

#endif // KILN_TOOLS_TENSORFILE_H
