//===- ToolSupport.cpp - Shared code of kiln-run and kiln-bench -----------===//
#include "ToolSupport.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

using namespace kiln;

bool ArgReader::option(const char *flag, std::string &value,
                       std::string &error) {
  if (done())
    return false;
  const std::string &arg = args[pos];
  std::string f = flag;
  if (arg.compare(0, f.size() + 1, f + "=") == 0) {
    value = arg.substr(f.size() + 1);
    ++pos;
    return true;
  }
  if (arg != f)
    return false;
  if (pos + 1 >= args.size()) {
    error = f + " needs a value";
    ++pos;
    return true;
  }
  value = args[pos + 1];
  pos += 2;
  return true;
}

bool ArgReader::flag(const char *flag) {
  if (done() || args[pos] != flag)
    return false;
  ++pos;
  return true;
}

bool kiln::parseInt(const std::string &text, const char *what, int &out,
                    std::string &error) {
  if (!error.empty()) // the option itself was malformed
    return false;
  char *end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < 0 || v > 1 << 24) {
    error = std::string(what) + " expects a non-negative integer, got '" +
            text + "'";
    return false;
  }
  out = int(v);
  return true;
}

bool kiln::parseDouble(const std::string &text, const char *what, double &out,
                       std::string &error) {
  if (!error.empty()) // the option itself was malformed
    return false;
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || out < 0) {
    error = std::string(what) + " expects a non-negative number, got '" + text +
            "'";
    return false;
  }
  return true;
}

bool kiln::parseBytes(const std::string &text, const char *what, uint64_t &out,
                      std::string &error) {
  if (!error.empty()) // the option itself was malformed
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  int shift = !*end                     ? 0
              : std::string("K") == end ? 10
              : std::string("M") == end ? 20
              : std::string("G") == end ? 30
                                        : -1;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) ||
      errno || shift < 0 || v > (~0ull >> shift)) {
    error = std::string(what) +
            " expects a byte count (digits, optionally "
            "followed by K, M or G), got '" +
            text + "'";
    return false;
  }
  out = uint64_t(v) << shift;
  return true;
}

std::string kiln::runtimeError(const std::string &what) {
  return what + ": " + kiln_last_error();
}

LoadedModel::~LoadedModel() {
  kiln_session_destroy(session);
  kiln_model_close(model);
}

bool kiln::openModel(const std::string &path, const std::string &device,
                     int threads, uint64_t maxMemory, LoadedModel &out,
                     std::string &error) {
  if (kiln_model_open(path.c_str(), &out.model) != KILN_OK) {
    error = kiln_last_error();
    return false;
  }
  kiln_session_options opts{threads, maxMemory};
  if (kiln_session_create(out.model, device.c_str(), &opts, &out.session) !=
      KILN_OK) {
    error = kiln_last_error();
    return false;
  }
  return true;
}

/// Splits "name=@path" into name and path ("@path" has an empty name).
static void splitSpec(const std::string &spec, std::string &name,
                      std::string &path) {
  size_t at = spec.find('@');
  size_t eq = spec.find('=');
  bool named = eq != std::string::npos && (at == std::string::npos || eq < at);
  name = named ? spec.substr(0, eq) : "";
  path = named ? spec.substr(eq + 1) : spec;
  if (!path.empty() && path[0] == '@')
    path = path.substr(1);
}

bool kiln::readTensorSpecs(const std::vector<std::string> &specs,
                           const std::vector<std::string> &names,
                           std::vector<Tensor> &out, std::vector<bool> &bound,
                           std::string &error, bool ignoreUnknownNames) {
  out.assign(names.size(), Tensor());
  bound.assign(names.size(), false);
  // Named specs first, so that bare ones fill whatever slots remain in order.
  std::vector<std::pair<size_t, std::string>> reads;
  std::vector<std::string> unnamed;
  for (const std::string &spec : specs) {
    std::string name, path;
    splitSpec(spec, name, path);
    if (name.empty()) {
      unnamed.push_back(path);
      continue;
    }
    size_t slot = 0;
    while (slot < names.size() && names[slot] != name)
      ++slot;
    if (slot == names.size() && ignoreUnknownNames)
      continue;
    if (slot == names.size()) {
      error = "'" + spec + "': the model has no tensor named '" + name +
              "'; it has " + std::to_string(names.size()) + ":";
      for (const std::string &n : names)
        error += " '" + n + "'";
      return false;
    }
    if (bound[slot]) {
      error = "tensor '" + name + "' given twice";
      return false;
    }
    bound[slot] = true;
    reads.push_back({slot, path});
  }
  size_t slot = 0;
  for (const std::string &path : unnamed) {
    while (slot < names.size() && bound[slot])
      ++slot;
    if (slot == names.size()) {
      error = "'@" + path + "': more tensors given than the model has (" +
              std::to_string(names.size()) + ")";
      return false;
    }
    bound[slot] = true;
    reads.push_back({slot, path});
  }
  for (auto &[index, path] : reads) {
    if (!readTensorFile(path, out[index], error))
      return false;
    out[index].name = names[index];
  }
  return true;
}

static std::vector<std::string> names(const kiln_model *model, bool inputs) {
  std::vector<std::string> list;
  int32_t n =
      inputs ? kiln_model_input_count(model) : kiln_model_output_count(model);
  for (int32_t i = 0; i < n; ++i) {
    kiln_tensor_info info;
    if ((inputs ? kiln_model_input_info
                : kiln_model_output_info)(model, i, &info) == KILN_OK)
      list.push_back(info.name);
  }
  return list;
}

std::vector<std::string> kiln::inputNames(const kiln_model *model) {
  return names(model, /*inputs=*/true);
}

std::vector<std::string> kiln::outputNames(const kiln_model *model) {
  return names(model, /*inputs=*/false);
}

Tensor kiln::tensorFor(const kiln_tensor_info &info) {
  Tensor t;
  t.name = info.name;
  t.dtype = info.dtype;
  t.shape.assign(info.shape, info.shape + info.rank);
  t.bytes.assign(info.bytes, 0);
  return t;
}

bool kiln::setInput(kiln_session *session, const Tensor &t,
                    std::string &error) {
  if (kiln_session_set_input(session, t.name.c_str(), t.dtype, t.shape.data(),
                             int32_t(t.shape.size()), t.bytes.data(),
                             t.bytes.size()) == KILN_OK)
    return true;
  error = kiln_last_error();
  return false;
}

bool kiln::printVersionIfAsked(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--version") {
      std::printf("%s\n", kiln_version());
      return true;
    }
  return false;
}
