//===- TensorFileTest.cpp - .pb/.npy reading, writing and comparing -------===//
#include "common/TensorFile.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

using namespace kiln;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/kiln_tf_" + name;
}

void writeText(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Tensor makeTensor(kiln_dtype dtype, std::vector<int64_t> shape,
                  size_t elemSize) {
  Tensor t;
  t.name = "t";
  t.dtype = dtype;
  t.shape = shape;
  t.bytes.resize(size_t(t.numElements()) * elemSize);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.set(i, double(i % 5) - 2);
  return t;
}

std::string npyHeader(const std::string &dict) {
  std::string h = dict;
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string f("\x93NUMPY\x01\x00", 8);
  f += char(h.size() & 0xff);
  f += char(h.size() >> 8);
  return f + h;
}

} // namespace

TEST(TensorFile, NpyRoundTripsEveryDtype) {
  const std::pair<kiln_dtype, size_t> types[] = {
      {KILN_DTYPE_F32, 4}, {KILN_DTYPE_F16, 2},  {KILN_DTYPE_F64, 8},
      {KILN_DTYPE_I8, 1},  {KILN_DTYPE_U8, 1},   {KILN_DTYPE_I32, 4},
      {KILN_DTYPE_I64, 8}, {KILN_DTYPE_BOOL, 1}, {KILN_DTYPE_I16, 2},
      {KILN_DTYPE_U16, 2}, {KILN_DTYPE_U32, 4},  {KILN_DTYPE_U64, 8}};
  for (auto [dtype, size] : types)
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {7}, {2, 3, 4}, {0, 3}}) {
      Tensor t = makeTensor(dtype, shape, size), back;
      std::string error, path = tempPath("rt.npy");
      ASSERT_TRUE(writeNpy(path, t, error)) << error;
      ASSERT_TRUE(readTensorFile(path, back, error)) << error;
      EXPECT_EQ(back.dtype, t.dtype);
      EXPECT_EQ(back.shape, t.shape);
      EXPECT_EQ(back.bytes, t.bytes);
      EXPECT_EQ(readText(path).find("\n") % 64, 63u); // data 64-aligned
    }
}

TEST(TensorFile, TensorProtoRawAndTypedFields) {
  Tensor t = makeTensor(KILN_DTYPE_F32, {2, 3}, 4), back;
  std::string error, path = tempPath("raw.pb");
  ASSERT_TRUE(writeTensorProto(path, t, error)) << error;
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.bytes, t.bytes);
  EXPECT_EQ(back.shape, t.shape);

  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::INT64);
  tp.add_dims(3);
  for (int64_t v : {int64_t(-1), int64_t(0), int64_t(1) << 40})
    tp.add_int64_data(v);
  writeText(path, tp.SerializeAsString());
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.dtype, KILN_DTYPE_I64);
  EXPECT_EQ(back.at(2), double(1LL << 40));

  tp.Clear();
  tp.set_data_type(onnx::TensorProto::FLOAT16);
  tp.add_dims(2);
  tp.add_int32_data(0x3c00); // 1.0
  tp.add_int32_data(0xc000); // -2.0
  writeText(path, tp.SerializeAsString());
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.at(0), 1.0);
  EXPECT_EQ(back.at(1), -2.0);

  tp.Clear();
  tp.set_data_type(onnx::TensorProto::BOOL);
  tp.add_dims(2);
  tp.add_int32_data(1);
  tp.add_int32_data(0);
  writeText(path, tp.SerializeAsString());
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.bytes, (std::vector<uint8_t>{1, 0}));

  tp.Clear();
  tp.set_data_type(onnx::TensorProto::DOUBLE);
  tp.add_dims(1);
  tp.add_double_data(0.25);
  writeText(path, tp.SerializeAsString());
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.at(0), 0.25);

  // uint32/uint64 live in uint64_data, int16/uint16 in int32_data.
  tp.Clear();
  tp.set_data_type(onnx::TensorProto::UINT32);
  tp.add_dims(2);
  tp.add_uint64_data(4000000000u);
  tp.add_uint64_data(7);
  writeText(path, tp.SerializeAsString());
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.dtype, KILN_DTYPE_U32);
  EXPECT_EQ(back.at(0), 4000000000.0);
  EXPECT_EQ(back.at(1), 7.0);

  tp.Clear();
  tp.set_data_type(onnx::TensorProto::INT16);
  tp.add_dims(1);
  tp.add_int32_data(-300);
  writeText(path, tp.SerializeAsString());
  ASSERT_TRUE(readTensorFile(path, back, error)) << error;
  EXPECT_EQ(back.dtype, KILN_DTYPE_I16);
  EXPECT_EQ(back.at(0), -300.0);
}

TEST(TensorFile, Float16Conversions) {
  Tensor t = makeTensor(KILN_DTYPE_F16, {6}, 2);
  const double values[] = {0.0, -1.5, 65504.0, 1e-7, 1e6, 0.333251953125};
  const double expect[] = {
      0.0, -1.5, 65504.0, 1.1920928955078125e-07, INFINITY, 0.333251953125};
  for (int i = 0; i < 6; ++i) {
    t.set(i, values[i]);
    EXPECT_EQ(t.at(i), expect[i]) << i;
  }
}

TEST(TensorFile, RejectsBadFiles) {
  std::string error, path = tempPath("bad");
  Tensor t;
  EXPECT_FALSE(readTensorFile("/nonexistent/x.pb", t, error));
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;

  writeText(path, npyHeader("{'descr': '<f4', 'fortran_order': True, "
                            "'shape': (2, 2), }") +
                      std::string(16, '\0'));
  EXPECT_FALSE(readTensorFile(path, t, error));
  EXPECT_NE(error.find("Fortran order"), std::string::npos) << error;

  writeText(path, npyHeader("{'descr': '>f4', 'fortran_order': False, "
                            "'shape': (2,), }") +
                      std::string(8, '\0'));
  EXPECT_FALSE(readTensorFile(path, t, error));
  EXPECT_NE(error.find("'>f4'"), std::string::npos) << error;

  writeText(path, npyHeader("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2, 3), }") +
                      std::string(20, '\0'));
  EXPECT_FALSE(readTensorFile(path, t, error));
  EXPECT_NE(error.find("expected 24 data bytes"), std::string::npos) << error;

  writeText(path, std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17));
  EXPECT_FALSE(readTensorFile(path, t, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;

  // A TensorProto cut short.
  Tensor good = makeTensor(KILN_DTYPE_F32, {64}, 4);
  ASSERT_TRUE(writeTensorProto(path, good, error));
  std::string bytes = readText(path);
  writeText(path, bytes.substr(0, bytes.size() - 10));
  EXPECT_FALSE(readTensorFile(path, t, error));

  // Raw data that does not match the dims.
  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::FLOAT);
  tp.add_dims(3);
  tp.set_raw_data(std::string(8, '\0'));
  writeText(path, tp.SerializeAsString());
  EXPECT_FALSE(readTensorFile(path, t, error));
  EXPECT_NE(error.find("expected 12 data bytes"), std::string::npos) << error;
}

// Found by kiln-fuzz-tensor-file: an empty tensor whose other dims are huge
// overflowed numElements(); readers that accept such a shape (it holds no
// bytes) must leave a tensor that is safe to walk.
TEST(TensorFile, EmptyTensorWithHugeDims) {
  Tensor t{"t", KILN_DTYPE_F32, {77992277311488, 147455, 0}, {}};
  EXPECT_EQ(t.numElements(), 0);
  t.shape = {0, 77992277311488, 147455};
  EXPECT_EQ(t.numElements(), 0);
  std::string path = tempPath("huge-empty.pb"), error;
  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::FLOAT);
  tp.add_dims(77992277311488);
  tp.add_dims(147455);
  tp.add_dims(0);
  writeText(path, tp.SerializeAsString());
  Tensor read;
  if (readTensorFile(path, read, error))
    EXPECT_EQ(read.numElements(), 0);
  else
    EXPECT_NE(error.find("invalid shape"), std::string::npos) << error;
}

TEST(TensorFile, CompareUsesOnnxCriterion) {
  Tensor a = makeTensor(KILN_DTYPE_F32, {4}, 4), e = a;
  for (int i = 0; i < 4; ++i)
    e.set(i, 100.0);
  a.set(0, 100.0 + 1e-3); // within atol + rtol * 100 = 0.01 + 1e-5
  a.set(1, 100.0);
  a.set(2, NAN);
  e.set(2, NAN);
  a.set(3, 100.0 - 0.005);
  CompareResult r = compareTensors(a, e, /*rtol=*/1e-4, /*atol=*/1e-5);
  EXPECT_TRUE(r.ok);
  EXPECT_NEAR(r.maxAbsErr, 0.005, 1e-5);
  EXPECT_NEAR(r.maxRelErr, 5e-5, 1e-7);

  a.set(1, 100.02);
  r = compareTensors(a, e, 1e-4, 1e-5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.firstBadIndex, 1);

  a.set(1, NAN); // NaN against a number never matches
  r = compareTensors(a, e, 1.0, 1.0);
  EXPECT_FALSE(r.ok);

  Tensor other = makeTensor(KILN_DTYPE_F32, {2, 2}, 4);
  r = compareTensors(other, e, 1, 1);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.empty());
}
