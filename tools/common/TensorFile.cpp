//===- TensorFile.cpp - Read/write tensors as .pb and .npy ----------------===//
#include "TensorFile.h"

#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>

using namespace kiln;

namespace {

// Kept here rather than calling the runtime so that tools can link this
// library without the runtime.
size_t dtypeSize(kiln_dtype t) {
  static const size_t sizes[] = {4, 2, 2, 8, 1, 1, 4, 8, 1, 2, 2, 4, 8};
  return unsigned(t) < sizeof(sizes) / sizeof(sizes[0]) ? sizes[t] : 0;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff;
  if (exp == 0) // zero or subnormal: mant * 2^-24
    return (sign ? -1.0f : 1.0f) * std::ldexp(float(mant), -24);
  uint32_t bits = exp == 31 ? sign | 0x7f800000 | (mant << 13)
                            : sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  float a = std::fabs(f);
  if (std::isnan(f))
    return sign | 0x7e00;
  if (a >= 65520.0f)
    return sign | 0x7c00;
  if (a < 6.103515625e-05f) // subnormal half: round a * 2^24
    return sign | uint16_t(std::nearbyint(a * 16777216.0f));
  // Normal: round the mantissa to 10 bits, nearest-even, carry into exp.
  uint32_t bits = x & 0x7fffffff;
  uint32_t rounded = bits + 0xfff + ((bits >> 13) & 1);
  return sign | uint16_t((rounded - (112u << 23)) >> 13);
}

/// Whether `path` is a regular file; else why not in `error`. A device, a
/// pipe or a directory is refused before it is opened: /dev/zero would be
/// read until memory runs out, a FIFO would wait for a writer.
static bool isRegularFile(const std::string &path, std::string &error) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (S_ISREG(status.st_mode))
    return true;
  error = "cannot read '" + path + "': " +
          (S_ISDIR(status.st_mode) ? "it is a directory"
           : S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode)
               ? "it is a device, not a regular file"
           : S_ISFIFO(status.st_mode) ? "it is a pipe, not a regular file"
                                      : "it is not a regular file");
  return false;
}

/// The most a tensor file may hold: this machine's memory. A larger file
/// (a sparse one of a terabyte) could only end in an allocation failure.
static uint64_t tensorFileCap() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageBytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageBytes <= 0)
    return std::numeric_limits<uint64_t>::max();
  return uint64_t(pages) * uint64_t(pageBytes);
}

bool readWhole(const std::string &path, std::string &data, std::string &error) {
  if (!isRegularFile(path, error))
    return false;
  uint64_t cap = tensorFileCap();
  auto tooLarge = [&](uint64_t bytes) {
    error = "cannot read '" + path + "': it holds " + std::to_string(bytes) +
            " bytes or more, more than this machine's " + std::to_string(cap) +
            " bytes of memory";
    return false;
  };
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && uint64_t(st.st_size) > cap)
    return tooLarge(uint64_t(st.st_size));
  // read(2), not a stream: libstdc++'s stream buffer throws on a read
  // error (/proc/self/mem gives EIO) whatever the stream's exception mask.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  data.clear();
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = "cannot read '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    // Files whose size stat does not tell (procfs) are capped as they are
    // read.
    if (data.size() + size_t(n) > cap) {
      ::close(fd);
      return tooLarge(data.size() + size_t(n));
    }
    try {
      data.append(chunk, size_t(n));
    } catch (const std::bad_alloc &) {
      ::close(fd);
      error = "cannot read '" + path +
              "': " + std::to_string(data.size() + size_t(n)) +
              " bytes do not fit in memory";
      return false;
    }
  }
  ::close(fd);
  return true;
}

bool writeWhole(const std::string &path, const std::string &data,
                std::string &error) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(data.data(), std::streamsize(data.size()))) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

//===-- .npy --------------------------------------------------------------===//

const char kNpyMagic[] = "\x93NUMPY";

struct NpyType {
  const char *descr;
  kiln_dtype dtype;
};
const NpyType kNpyTypes[] = {
    {"f4", KILN_DTYPE_F32}, {"f2", KILN_DTYPE_F16},  {"f8", KILN_DTYPE_F64},
    {"i1", KILN_DTYPE_I8},  {"u1", KILN_DTYPE_U8},   {"i4", KILN_DTYPE_I32},
    {"i8", KILN_DTYPE_I64}, {"b1", KILN_DTYPE_BOOL}, {"i2", KILN_DTYPE_I16},
    {"u2", KILN_DTYPE_U16}, {"u4", KILN_DTYPE_U32},  {"u8", KILN_DTYPE_U64}};

/// The text after `'key':` in a .npy header dict, or npos.
size_t findValue(const std::string &header, const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return k;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    return colon;
  return header.find_first_not_of(" ", colon + 1);
}

bool parseNpyHeader(const std::string &header, Tensor &out,
                    std::string &error) {
  size_t d = findValue(header, "descr");
  size_t f = findValue(header, "fortran_order");
  size_t s = findValue(header, "shape");
  if (d == std::string::npos || f == std::string::npos ||
      s == std::string::npos || header[d] != '\'' || header[s] != '(') {
    error = "malformed .npy header: " + header;
    return false;
  }
  std::string descr = header.substr(d + 1, header.find('\'', d + 1) - d - 1);
  if (header.compare(f, 4, "True") == 0) {
    error = ".npy array is in Fortran order; save it in C order "
            "(np.ascontiguousarray)";
    return false;
  }
  if (descr.size() != 3 || descr[0] == '>') {
    error = "unsupported .npy dtype '" + descr +
            "' (need little-endian f2/f4/f8/i1/u1/i4/i8/b1)";
    return false;
  }
  bool known = false;
  for (const NpyType &t : kNpyTypes)
    if (descr.compare(1, 2, t.descr) == 0) {
      out.dtype = t.dtype;
      known = true;
    }
  if (!known) {
    error = "unsupported .npy dtype '" + descr + "'";
    return false;
  }
  out.shape.clear();
  size_t end = header.find(')', s);
  if (end == std::string::npos) {
    error = "malformed .npy shape in header: " + header;
    return false;
  }
  std::string dims = header.substr(s + 1, end - s - 1);
  for (size_t p = 0; p < dims.size();) {
    size_t q = dims.find(',', p);
    std::string item = dims.substr(p, q == std::string::npos ? q : q - p);
    if (item.find_first_not_of(" ") != std::string::npos) {
      char *rest = nullptr;
      long long v = std::strtoll(item.c_str(), &rest, 10);
      if (v < 0 || rest == item.c_str()) {
        error = "malformed .npy shape '(" + dims + ")'";
        return false;
      }
      out.shape.push_back(v);
    }
    p = q == std::string::npos ? dims.size() : q + 1;
  }
  return true;
}

//===-- TensorProto
//--------------------------------------------------------===//

bool fromOnnxType(int32_t t, kiln_dtype &out) {
  using TP = onnx::TensorProto;
  switch (t) {
  case TP::FLOAT:
    out = KILN_DTYPE_F32;
    return true;
  case TP::FLOAT16:
    out = KILN_DTYPE_F16;
    return true;
  case TP::BFLOAT16:
    out = KILN_DTYPE_BF16;
    return true;
  case TP::DOUBLE:
    out = KILN_DTYPE_F64;
    return true;
  case TP::INT8:
    out = KILN_DTYPE_I8;
    return true;
  case TP::UINT8:
    out = KILN_DTYPE_U8;
    return true;
  case TP::INT32:
    out = KILN_DTYPE_I32;
    return true;
  case TP::INT64:
    out = KILN_DTYPE_I64;
    return true;
  case TP::BOOL:
    out = KILN_DTYPE_BOOL;
    return true;
  case TP::INT16:
    out = KILN_DTYPE_I16;
    return true;
  case TP::UINT16:
    out = KILN_DTYPE_U16;
    return true;
  case TP::UINT32:
    out = KILN_DTYPE_U32;
    return true;
  case TP::UINT64:
    out = KILN_DTYPE_U64;
    return true;
  default:
    return false;
  }
}

int32_t toOnnxType(kiln_dtype t) {
  using TP = onnx::TensorProto;
  static const int32_t types[] = {
      TP::FLOAT,  TP::FLOAT16, TP::BFLOAT16, TP::DOUBLE, TP::INT8,
      TP::UINT8,  TP::INT32,   TP::INT64,    TP::BOOL,   TP::INT16,
      TP::UINT16, TP::UINT32,  TP::UINT64};
  return unsigned(t) < sizeof(types) / sizeof(types[0]) ? types[t]
                                                        : TP::UNDEFINED;
}

/// Copies a typed repeated field into `out.bytes`, narrowing each value to
/// the tensor's element type (int32_data holds i8/u8/bool/f16 bit patterns).
template <typename Elem, typename Field>
void copyField(const Field &field, Tensor &out) {
  out.bytes.resize(size_t(field.size()) * sizeof(Elem));
  for (int i = 0; i < field.size(); ++i) {
    Elem v = Elem(field.Get(i));
    std::memcpy(out.bytes.data() + size_t(i) * sizeof(Elem), &v, sizeof(Elem));
  }
}

bool typedData(const onnx::TensorProto &tp, Tensor &out) {
  switch (out.dtype) {
  case KILN_DTYPE_F32:
    copyField<float>(tp.float_data(), out);
    return true;
  case KILN_DTYPE_F64:
    copyField<double>(tp.double_data(), out);
    return true;
  case KILN_DTYPE_I64:
    copyField<int64_t>(tp.int64_data(), out);
    return true;
  case KILN_DTYPE_I32:
    copyField<int32_t>(tp.int32_data(), out);
    return true;
  case KILN_DTYPE_I8:
    copyField<int8_t>(tp.int32_data(), out);
    return true;
  case KILN_DTYPE_U8:
  case KILN_DTYPE_BOOL:
    copyField<uint8_t>(tp.int32_data(), out);
    return true;
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16:
  case KILN_DTYPE_U16:
    copyField<uint16_t>(tp.int32_data(), out);
    return true;
  case KILN_DTYPE_I16:
    copyField<int16_t>(tp.int32_data(), out);
    return true;
  case KILN_DTYPE_U32:
    copyField<uint32_t>(tp.uint64_data(), out);
    return true;
  case KILN_DTYPE_U64:
    copyField<uint64_t>(tp.uint64_data(), out);
    return true;
  }
  return false;
}

} // namespace

int32_t kiln::onnxTypeOf(kiln_dtype dtype) { return toOnnxType(dtype); }

//===-- Tensor ------------------------------------------------------------===//

int64_t Tensor::numElements() const {
  // A zero dim empties the tensor whatever the others are; checking it
  // first keeps a huge dim beside it from overflowing the product (found by
  // kiln-fuzz-tensor-file). Readers reject non-empty shapes whose byte size
  // overflows, so the product of a read tensor fits.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return 0;
  return n;
}

double Tensor::at(int64_t i) const {
  const uint8_t *p = bytes.data() + size_t(i) * dtypeSize(dtype);
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (dtype) {
  case KILN_DTYPE_F32:
    return load(float());
  case KILN_DTYPE_F64:
    return load(double());
  case KILN_DTYPE_F16:
    return halfToFloat(load(uint16_t()));
  case KILN_DTYPE_BF16: {
    uint32_t bits = uint32_t(load(uint16_t())) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case KILN_DTYPE_I8:
    return load(int8_t());
  case KILN_DTYPE_U8:
    return load(uint8_t());
  case KILN_DTYPE_BOOL:
    return load(uint8_t()) != 0;
  case KILN_DTYPE_I32:
    return load(int32_t());
  case KILN_DTYPE_I64:
    return double(load(int64_t()));
  case KILN_DTYPE_I16:
    return load(int16_t());
  case KILN_DTYPE_U16:
    return load(uint16_t());
  case KILN_DTYPE_U32:
    return load(uint32_t());
  case KILN_DTYPE_U64:
    return double(load(uint64_t()));
  }
  return 0;
}

void Tensor::set(int64_t i, double v) {
  uint8_t *p = bytes.data() + size_t(i) * dtypeSize(dtype);
  auto store = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  switch (dtype) {
  case KILN_DTYPE_F32:
    return store(float(v));
  case KILN_DTYPE_F64:
    return store(v);
  case KILN_DTYPE_F16:
    return store(floatToHalf(float(v)));
  case KILN_DTYPE_BF16: {
    float f = float(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
    return store(uint16_t(bits >> 16));
  }
  case KILN_DTYPE_I8:
    return store(int8_t(std::lround(v)));
  case KILN_DTYPE_U8:
    return store(uint8_t(std::lround(v)));
  case KILN_DTYPE_BOOL:
    return store(uint8_t(v != 0));
  case KILN_DTYPE_I32:
    return store(int32_t(std::llround(v)));
  case KILN_DTYPE_I64:
    return store(int64_t(std::llround(v)));
  case KILN_DTYPE_I16:
    return store(int16_t(std::lround(v)));
  case KILN_DTYPE_U16:
    return store(uint16_t(std::lround(v)));
  case KILN_DTYPE_U32:
    return store(uint32_t(std::llround(v)));
  case KILN_DTYPE_U64:
    return store(uint64_t(std::llround(v)));
  }
}

kiln::Tolerance kiln::toleranceFor(kiln_dtype dtype, Tolerance given) {
  if (dtype != KILN_DTYPE_F16 && dtype != KILN_DTYPE_BF16)
    return given;
  return {std::max(given.rtol, 4e-3), std::max(given.atol, 1e-3)};
}

std::string kiln::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

bool kiln::tensorByteSize(kiln_dtype dtype, const std::vector<int64_t> &shape,
                          uint64_t &bytes) {
  bytes = dtypeSize(dtype);
  if (bytes == 0)
    return false;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      return false;
  return true;
}

//===-- Reading -----------------------------------------------------------===//

bool kiln::readTensorFile(const std::string &path, Tensor &out,
                          std::string &error) {
  if (!isRegularFile(path, error))
    return false;
  std::string head;
  {
    std::ifstream in(path, std::ios::binary);
    char buf[6] = {};
    if (!in) {
      error = "cannot open '" + path + "': " + std::strerror(errno);
      return false;
    }
    in.read(buf, 6);
    head.assign(buf, size_t(in.gcount()));
  }
  if (head == std::string(kNpyMagic, 6))
    return readNpy(path, out, error);
  return readTensorProto(path, out, error);
}

bool kiln::readNpy(const std::string &path, Tensor &out, std::string &error) {
  std::string data;
  if (!readWhole(path, data, error))
    return false;
  auto bad = [&](const std::string &why) {
    error = "'" + path + "': " + why;
    return false;
  };
  if (data.size() < 10 || data.compare(0, 6, kNpyMagic, 6) != 0)
    return bad("not a .npy file (bad magic)");
  unsigned major = uint8_t(data[6]);
  size_t lenBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3)
    return bad("unsupported .npy version " + std::to_string(major));
  if (data.size() < 8 + lenBytes)
    return bad("truncated .npy header");
  size_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= size_t(uint8_t(data[8 + i])) << (8 * i);
  size_t dataStart = 8 + lenBytes + headerLen;
  if (data.size() < dataStart)
    return bad("truncated .npy header");
  out = Tensor();
  if (!parseNpyHeader(data.substr(8 + lenBytes, headerLen), out, error))
    return bad(error);
  uint64_t bytes;
  if (!tensorByteSize(out.dtype, out.shape, bytes))
    return bad("invalid shape " + formatShape(out.shape));
  if (data.size() - dataStart != bytes)
    return bad("expected " + std::to_string(bytes) + " data bytes for shape " +
               formatShape(out.shape) + ", file has " +
               std::to_string(data.size() - dataStart));
  out.bytes.assign(data.begin() + long(dataStart), data.end());
  return true;
}

bool kiln::readTensorProto(const std::string &path, Tensor &out,
                           std::string &error) {
  std::string data;
  if (!readWhole(path, data, error))
    return false;
  auto bad = [&](const std::string &why) {
    error = "'" + path + "': " + why;
    return false;
  };
  onnx::TensorProto tp;
  if (!tp.ParseFromString(data))
    return bad("not a valid ONNX TensorProto (truncated or malformed)");
  out = Tensor();
  out.name = tp.name();
  if (!fromOnnxType(tp.data_type(), out.dtype))
    return bad("unsupported TensorProto data_type " +
               std::to_string(tp.data_type()));
  if (tp.data_location() == onnx::TensorProto::EXTERNAL)
    return bad("tensors with external data are not supported");
  out.shape.assign(tp.dims().begin(), tp.dims().end());
  uint64_t bytes;
  if (!tensorByteSize(out.dtype, out.shape, bytes))
    return bad("invalid shape " + formatShape(out.shape));
  if (tp.has_raw_data())
    out.bytes.assign(tp.raw_data().begin(), tp.raw_data().end());
  else
    typedData(tp, out);
  if (out.bytes.size() != bytes)
    return bad("expected " + std::to_string(bytes) + " data bytes for shape " +
               formatShape(out.shape) + ", found " +
               std::to_string(out.bytes.size()));
  return true;
}

//===-- Writing -----------------------------------------------------------===//

bool kiln::writeNpy(const std::string &path, const Tensor &t,
                    std::string &error) {
  const char *descr = nullptr;
  for (const NpyType &n : kNpyTypes)
    if (n.dtype == t.dtype)
      descr = n.descr;
  if (!descr) {
    error = "cannot write dtype " + std::to_string(int(t.dtype)) +
            " to .npy ('" + path + "')";
    return false;
  }
  std::string shape = "(";
  for (int64_t d : t.shape)
    shape += std::to_string(d) + (t.shape.size() == 1 ? "," : ", ");
  if (t.shape.size() > 1)
    shape.resize(shape.size() - 2);
  shape += ")";
  char order = t.dtype == KILN_DTYPE_I8 || t.dtype == KILN_DTYPE_U8 ||
                       t.dtype == KILN_DTYPE_BOOL
                   ? '|'
                   : '<';
  std::string header = std::string("{'descr': '") + order + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string file(kNpyMagic, 6);
  file += '\x01';
  file += '\x00';
  file += char(header.size() & 0xff);
  file += char(header.size() >> 8);
  file += header;
  file.append(t.bytes.begin(), t.bytes.end());
  return writeWhole(path, file, error);
}

bool kiln::writeTensorProto(const std::string &path, const Tensor &t,
                            std::string &error) {
  onnx::TensorProto tp;
  tp.set_name(t.name);
  tp.set_data_type(toOnnxType(t.dtype));
  for (int64_t d : t.shape)
    tp.add_dims(d);
  tp.set_raw_data(t.bytes.data(), t.bytes.size());
  return writeWhole(path, tp.SerializeAsString(), error);
}

//===-- Comparing ---------------------------------------------------------===//

CompareResult kiln::compareTensors(const Tensor &actual, const Tensor &expected,
                                   double rtol, double atol) {
  CompareResult r;
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    r.ok = false;
    r.error = "expected " + formatShape(expected.shape) + " dtype " +
              std::to_string(int(expected.dtype)) + ", got " +
              formatShape(actual.shape) + " dtype " +
              std::to_string(int(actual.dtype));
    return r;
  }
  for (int64_t i = 0, n = actual.numElements(); i < n; ++i) {
    double a = actual.at(i), e = expected.at(i);
    if ((std::isnan(a) && std::isnan(e)) || a == e)
      continue;
    double abs = std::fabs(a - e); // NaN when only one side is NaN
    bool good = abs <= atol + rtol * std::fabs(e);
    if (std::isnan(abs))
      abs = std::numeric_limits<double>::infinity();
    r.maxAbsErr = std::max(r.maxAbsErr, abs);
    if (e != 0)
      r.maxRelErr = std::max(r.maxRelErr, abs / std::fabs(e));
    if (!good && r.ok) {
      r.ok = false;
      r.firstBadIndex = i;
    }
  }
  return r;
}
