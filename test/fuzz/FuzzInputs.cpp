//===- FuzzInputs.cpp - libFuzzer target: the runtime's input binding -----===//
//
// One trusted artifact ($KILN_FUZZ_ARTIFACT, y = (x + 1) * w over f32[1024],
// written by kiln-make-test-artifact) and a session on it; the bytes become a
// sequence of calls binding inputs with made-up names, dtypes, shapes and
// sizes, running, and reading outputs into buffers of made-up sizes. Every
// call must succeed or fail with a message; the session must stay usable.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Reads values from the fuzzer's bytes; zeros once they run out.
struct Bytes {
  const uint8_t *data;
  size_t size;
  template <typename T> T take() {
    T value{};
    size_t n = std::min(sizeof(T), size);
    std::memcpy(&value, data, n);
    data += n;
    size -= n;
    return value;
  }
};

kiln_session *session() {
  static kiln_model *model = nullptr;
  static kiln_session *s = nullptr;
  if (!s) {
    const char *path = std::getenv("KILN_FUZZ_ARTIFACT");
    if (!path || kiln_model_open(path, &model) != KILN_OK ||
        kiln_session_create(model, "cpu", nullptr, &s) != KILN_OK) {
      std::fprintf(stderr,
                   "set KILN_FUZZ_ARTIFACT to a loadable artifact: %s\n",
                   kiln_last_error());
      std::abort();
    }
  }
  return s;
}

void requireMessage(kiln_status status) {
  if (status != KILN_OK && !*kiln_last_error())
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln_session *s = session();
  Bytes in{data, size};
  std::vector<uint8_t> buffer(1 << 16);
  for (int call = 0; call < 8 && in.size > 0; ++call) {
    uint8_t op = in.take<uint8_t>() % 3;
    if (op == 0) {
      std::string name = in.take<uint8_t>() % 4
                             ? "x"
                             : std::string(1, char(in.take<uint8_t>()));
      // Values 9..15 are no dtype, yet inside the enum's range (a C caller
      // can pass them; beyond 15 even the cast would be undefined in C++).
      auto dtype = kiln_dtype(in.take<uint8_t>() % 16);
      int32_t rank = int32_t(in.take<uint8_t>() % 10) - 1; // -1 .. 8
      std::vector<int64_t> shape;
      for (int32_t d = 0; d < rank; ++d)
        shape.push_back(in.take<int16_t>() % 4 ? 1024 : in.take<int64_t>());
      size_t bytes = in.take<uint8_t>() % 4 ? 4096 : in.take<uint16_t>();
      requireMessage(kiln_session_set_input(
          s, name.c_str(), dtype, rank > 0 ? shape.data() : nullptr, rank,
          in.take<uint8_t>() % 8 ? buffer.data() : nullptr,
          std::min(bytes, buffer.size())));
    } else if (op == 1) {
      requireMessage(kiln_session_run(s));
    } else {
      size_t bytes = in.take<uint8_t>() % 4 ? 4096 : in.take<uint16_t>();
      int32_t index = in.take<int8_t>();
      requireMessage(
          in.take<uint8_t>() % 2
              ? kiln_session_get_output(s, "y", buffer.data(),
                                        std::min(bytes, buffer.size()))
              : kiln_session_get_output_at(s, index, buffer.data(),
                                           std::min(bytes, buffer.size())));
    }
  }
  return 0;
}
