//===- ToolSupport.h - Shared code of kiln-run and kiln-bench ---*- C++ -*-===//
#ifndef KILN_TOOLS_TOOLSUPPORT_H
#define KILN_TOOLS_TOOLSUPPORT_H

#include "TensorFile.h"
#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln {

/// With --version anywhere in `argv`: prints the runtime's version
/// (kiln_version()) and returns true; the tool then exits 0.
bool printVersionIfAsked(int argc, char **argv);

/// A tiny command-line reader: accepts `--flag value` and `--flag=value`.
class ArgReader {
public:
  ArgReader(int argc, char **argv) : args(argv + 1, argv + argc) {}

  bool done() const { return pos >= args.size(); }
  /// The current argument, without consuming it.
  const std::string &peek() const { return args[pos]; }
  /// If the current argument is `flag`, consumes it (and its value) and
  /// returns true; `value` is then set. Sets `error` on a missing value.
  bool option(const char *flag, std::string &value, std::string &error);
  /// Like option() for a flag without a value.
  bool flag(const char *flag);
  std::string take() { return args[pos++]; }

private:
  std::vector<std::string> args;
  size_t pos = 0;
};

bool parseInt(const std::string &text, const char *what, int &out,
              std::string &error);
bool parseDouble(const std::string &text, const char *what, double &out,
                 std::string &error);
/// A byte count: digits, optionally followed by K, M or G (powers of 1024).
bool parseBytes(const std::string &text, const char *what, uint64_t &out,
                std::string &error);

/// The last runtime error prefixed with `what`.
std::string runtimeError(const std::string &what);

struct LoadedModel {
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
  ~LoadedModel();
};

/// Opens `path` and creates a session on `device` with `threads` threads
/// and a budget of `maxMemory` bytes for the model's buffers (0: none).
bool openModel(const std::string &path, const std::string &device, int threads,
               uint64_t maxMemory, LoadedModel &out, std::string &error);

/// Reads `name=@file` or `@file` specs (a bare `@file` takes the next unnamed
/// slot in `names` order). `out` gets one tensor per slot; `bound` flags
/// which slots a spec filled. With `ignoreUnknownNames`, a named spec the
/// model has no slot for is skipped instead of being an error.
bool readTensorSpecs(const std::vector<std::string> &specs,
                     const std::vector<std::string> &names,
                     std::vector<Tensor> &out, std::vector<bool> &bound,
                     std::string &error, bool ignoreUnknownNames = false);

std::vector<std::string> inputNames(const kiln_model *model);
std::vector<std::string> outputNames(const kiln_model *model);

/// A zero tensor matching a model input/output.
Tensor tensorFor(const kiln_tensor_info &info);

bool setInput(kiln_session *session, const Tensor &t, std::string &error);

} // namespace kiln

#endif // KILN_TOOLS_TOOLSUPPORT_H
