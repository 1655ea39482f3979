//===- kiln-run.cpp - Run a compiled .kiln model on tensor files ----------===//
#include "common/TensorFile.h"
#include "common/ToolSupport.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace kiln;

namespace {

const char kUsage[] =
    "usage: kiln-run MODEL.kiln [options]\n"
    "\n"
    "Runs a compiled model once and prints its outputs.\n"
    "\n"
    "  --input [NAME=]@FILE     input tensor from an ONNX TensorProto .pb or "
    "a\n"
    "                           .npy file; without NAME= it binds the next\n"
    "                           unbound input in model order (repeatable)\n"
    "  --expected [NAME=]@FILE  expected output to compare against; exits 1 "
    "on\n"
    "                           a mismatch (repeatable)\n"
    "  --rtol R, --atol A       tolerances, |got - want| <= A + R*|want|\n"
    "                           (the defaults are below)\n"
    "  --output-dir DIR         write each output to DIR/NAME.npy\n"
    "  --device NAME            cpu (default), cuda or rocm\n"
    "  --ignore-unknown-inputs  skip NAME=@FILE inputs the model does not\n"
    "                           have (e.g. frozen when it was compiled)\n"
    "  --threads N              worker threads; 0 = one per core (default)\n"
    "  --max-memory BYTES       refuse a model whose buffers need more\n"
    "                           (e.g. 512M, 4G; default: no limit)\n"
    "  --print                  print every output value\n"
    "  --dump-dispatches DIR    write what every kernel computes to DIR\n"
    "                           (dNNNN_rK.npy, and dispatches.json naming\n"
    "                           each kernel's ONNX nodes and the ONNX value\n"
    "                           of each result), for scripts/kiln-bisect\n"
    "  --jobs FILE              (alone) run each line of FILE as one set of\n"
    "                           these options, in one process\n"
    "  --info                   print what the artifact holds (producer,\n"
    "                           target, CPU features, inputs and outputs\n"
    "                           with their dtypes and shapes) and exit\n"
    "  --version                print the runtime's version and git commit\n"
    "  --help                   show this help\n";

struct Options {
  std::string model, outputDir, dumpDir, device = "cpu";
  bool ignoreUnknownInputs = false;
  std::vector<std::string> inputs, expected;
  double rtol = kDefaultTolerance.rtol, atol = kDefaultTolerance.atol;
  int threads = 0;
  uint64_t maxMemory = 0;
  bool printAll = false, help = false, info = false;
};

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  ArgReader args(argc, argv);
  std::string v;
  while (!args.done() && error.empty()) {
    if (args.flag("--help") || args.flag("-h"))
      o.help = true;
    else if (args.flag("--ignore-unknown-inputs"))
      o.ignoreUnknownInputs = true;
    else if (args.flag("--print"))
      o.printAll = true;
    else if (args.flag("--info"))
      o.info = true;
    else if (args.option("--input", v, error))
      o.inputs.push_back(v);
    else if (args.option("--expected", v, error))
      o.expected.push_back(v);
    else if (args.option("--output-dir", v, error))
      o.outputDir = v;
    else if (args.option("--dump-dispatches", v, error))
      o.dumpDir = v;
    else if (args.option("--device", v, error))
      o.device = v;
    else if (args.option("--threads", v, error))
      parseInt(v, "--threads", o.threads, error);
    else if (args.option("--max-memory", v, error))
      parseBytes(v, "--max-memory", o.maxMemory, error);
    else if (args.option("--rtol", v, error))
      parseDouble(v, "--rtol", o.rtol, error);
    else if (args.option("--atol", v, error))
      parseDouble(v, "--atol", o.atol, error);
    else if (args.peek().size() > 1 && args.peek()[0] == '-')
      error = "unknown option '" + args.peek() + "' (see --help)";
    else if (o.model.empty())
      o.model = args.take();
    else
      error = "unexpected argument '" + args.peek() + "'";
  }
  if (error.empty() && o.model.empty() && !o.help)
    error = "no model given (see --help)";
  return error.empty();
}

void printValues(const Tensor &t, bool all) {
  int64_t n = t.numElements(), shown = all ? n : std::min<int64_t>(n, 8);
  std::printf("  [");
  for (int64_t i = 0; i < shown; ++i)
    std::printf("%s%.6g", i ? ", " : "", t.at(i));
  std::printf("%s]\n", shown < n ? ", ..." : "");
}

std::string fileNameFor(std::string name) {
  for (char &c : name)
    if (c == '/' || c == '\\' || c == ':')
      c = '_';
  return name.empty() ? "output" : name;
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

/// Writes each dispatch's results as it runs (kiln_session_run_observed)
/// and an index of them, dispatches.json, for scripts/kiln-bisect.
struct DispatchDump {
  DispatchDump(const kiln_model *model, std::string dir)
      : model(model), dir(std::move(dir)) {}
  const kiln_model *model;
  std::string dir;
  std::string json = "[";
  std::string error;

  static kiln_status observe(kiln_session *session, int32_t dispatch,
                             void *user) {
    auto *dump = static_cast<DispatchDump *>(user);
    return dump->write(session, dispatch) ? KILN_OK : KILN_ERROR_IO;
  }

  bool write(kiln_session *session, int32_t dispatch) {
    kiln_dispatch_info info;
    kiln_model_dispatch_info(model, dispatch, &info);
    std::string nodes;
    for (int32_t n = 0; n < info.node_count; ++n)
      nodes += (n ? ", " : "") + jsonString(info.nodes[n]);
    std::string results;
    for (int32_t r = 0; r < kiln_model_dispatch_result_count(model, dispatch);
         ++r) {
      kiln_tensor_info result;
      kiln_model_dispatch_result_info(model, dispatch, r, &result);
      Tensor t = tensorFor(result);
      if (kiln_session_get_dispatch_result(session, dispatch, r, t.bytes.data(),
                                           t.bytes.size()) != KILN_OK) {
        error = kiln_last_error();
        return false;
      }
      char file[64];
      std::snprintf(file, sizeof file, "d%04d_r%d.npy", int(dispatch), int(r));
      if (!writeNpy(dir + "/" + file, t, error))
        return false;
      std::string shape;
      for (int64_t d : t.shape)
        shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      results += std::string(r ? ", " : "") +
                 "{\"value\": " + jsonString(result.name) +
                 ", \"file\": " + jsonString(file) +
                 ", \"dtype\": " + jsonString(kiln_dtype_name(t.dtype)) +
                 ", \"shape\": [" + shape + "]}";
    }
    json += std::string(dispatch ? ",\n " : "\n ") +
            "{\"dispatch\": " + std::to_string(dispatch) +
            ", \"kernel\": " + jsonString(info.kernel) + ", \"nodes\": [" +
            nodes + "], \"results\": [" + results + "]}";
    return true;
  }

  bool finish() {
    std::ofstream out(dir + "/dispatches.json");
    out << json << "\n]\n";
    if (!out)
      error = "cannot write '" + dir + "/dispatches.json'";
    return bool(out);
  }
};

/// Compares outputs against the expected files; returns false on mismatch.
bool checkExpected(const Options &o, const std::vector<Tensor> &outputs,
                   const std::vector<Tensor> &expected,
                   const std::vector<bool> &given) {
  bool allOk = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!given[i])
      continue;
    Tolerance tolerance = toleranceFor(expected[i].dtype, {o.rtol, o.atol});
    CompareResult r =
        compareTensors(outputs[i], expected[i], tolerance.rtol, tolerance.atol);
    allOk &= r.ok;
    if (!r.error.empty()) {
      std::printf("%s: MISMATCH: %s\n", outputs[i].name.c_str(),
                  r.error.c_str());
      continue;
    }
    std::printf("%s: max abs err %.3g, max rel err %.3g: %s",
                outputs[i].name.c_str(), r.maxAbsErr, r.maxRelErr,
                r.ok ? "OK\n" : "MISMATCH");
    if (!r.ok)
      std::printf(" (first at index %lld: got %.8g, expected %.8g)\n",
                  (long long)r.firstBadIndex, outputs[i].at(r.firstBadIndex),
                  expected[i].at(r.firstBadIndex));
  }
  return allOk;
}

int run(const Options &o, std::string &error) {
  LoadedModel m;
  if (!openModel(o.model, o.device, o.threads, o.maxMemory, m, error))
    return 1;
  std::vector<Tensor> inputs, expected;
  std::vector<bool> bound, given;
  if (!readTensorSpecs(o.inputs, inputNames(m.model), inputs, bound, error,
                       o.ignoreUnknownInputs) ||
      !readTensorSpecs(o.expected, outputNames(m.model), expected, given,
                       error))
    return 1;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (bound[i] && !setInput(m.session, inputs[i], error))
      return 1;
  if (!o.dumpDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dumpDir, ec);
    if (ec) {
      error = "cannot create '" + o.dumpDir + "': " + ec.message();
      return 1;
    }
    DispatchDump dump(m.model, o.dumpDir);
    kiln_status status =
        kiln_session_run_observed(m.session, &DispatchDump::observe, &dump);
    if (status != KILN_OK || !dump.finish()) {
      error = dump.error.empty() ? kiln_last_error() : dump.error;
      return 1;
    }
  } else if (kiln_session_run(m.session) != KILN_OK) {
    error = kiln_last_error();
    return 1;
  }

  std::vector<Tensor> outputs;
  for (int32_t i = 0; i < kiln_model_output_count(m.model); ++i) {
    kiln_tensor_info info;
    kiln_session_output_info(m.session, i, &info); // the run's batch
    Tensor t = tensorFor(info);
    if (kiln_session_get_output_at(m.session, i, t.bytes.data(),
                                   t.bytes.size()) != KILN_OK) {
      error = kiln_last_error();
      return 1;
    }
    std::printf("%s: %s %s\n", t.name.c_str(), kiln_dtype_name(t.dtype),
                formatShape(t.shape).c_str());
    printValues(t, o.printAll);
    if (!o.outputDir.empty() &&
        !writeNpy(o.outputDir + "/" + fileNameFor(t.name) + ".npy", t, error))
      return 1;
    outputs.push_back(std::move(t));
  }
  return checkExpected(o, outputs, expected, given) ? 0 : 1;
}

} // namespace

/// `kiln-run --jobs FILE`: one run per line of FILE (the same options,
/// separated by spaces), in this one process, so that a test harness pays
/// for loading the runtime and creating the GPU context once. Each job ends
/// with a line "job N: exit R" on stdout; its errors are printed before it.
int runJobs(const char *path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "kiln-run: error: cannot read job file '%s'\n", path);
    return 2;
  }
  std::string line;
  int job = 0, failed = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> args = {"kiln-run"};
    for (std::string w; words >> w;)
      args.push_back(w);
    if (args.size() == 1)
      continue;
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    Options o;
    std::string error;
    int rc =
        parseArgs(int(argv.size()), argv.data(), o, error) ? run(o, error) : 2;
    if (!error.empty())
      std::printf("kiln-run: error: %s\n", error.c_str());
    std::printf("job %d: exit %d\n", job++, rc);
    std::fflush(stdout);
    failed += rc != 0;
  }
  return failed ? 1 : 0;
}

void printTensors(const char *heading, const kiln_model *model, bool inputs) {
  int32_t count =
      inputs ? kiln_model_input_count(model) : kiln_model_output_count(model);
  std::printf("%s:\n", heading);
  for (int32_t i = 0; i < count; ++i) {
    kiln_tensor_info info;
    if (inputs)
      kiln_model_input_info(model, i, &info);
    else
      kiln_model_output_info(model, i, &info);
    int32_t batchDim = inputs ? kiln_model_input_batch_dim(model, i)
                              : kiln_model_output_batch_dim(model, i);
    std::string shape = "[";
    for (int32_t d = 0; d < info.rank; ++d) // the batch dim is any batch
      shape += (d ? "," : "") +
               (d == batchDim ? "N" : std::to_string(info.shape[d]));
    shape += "]";
    std::printf("  %s  %s %s\n", info.name, kiln_dtype_name(info.dtype),
                shape.c_str());
  }
}

/// --info: what the artifact holds, without running it.
int printInfo(const std::string &path) {
  kiln_model *model = nullptr;
  if (kiln_model_open(path.c_str(), &model) != KILN_OK) {
    std::fprintf(stderr, "kiln-run: error: %s\n", kiln_last_error());
    return 1;
  }
  std::printf("model:    %s\n", path.c_str());
  std::printf("producer: %s\n", kiln_model_producer(model));
  std::printf("target:   %s\n", kiln_model_target(model));
  if (*kiln_model_cpu(model)) {
    std::printf("cpu:      %s\n", kiln_model_cpu(model));
    std::printf("features: %s\n", kiln_model_cpu_features(model));
  }
  if (*kiln_model_gpu_images(model))
    std::printf("images:   %s\n", kiln_model_gpu_images(model));
  std::printf("kernels:  %d launches\n", kiln_model_dispatch_count(model));
  if (int32_t count = kiln_model_batch_chunk_count(model)) {
    std::string chunks;
    for (int32_t i = 0; i < count; ++i)
      chunks +=
          (i ? ", " : "") + std::to_string(kiln_model_batch_chunk_at(model, i));
    std::printf("batch:    any N, run in chunks of %s\n", chunks.c_str());
  }
  printTensors("inputs", model, /*inputs=*/true);
  printTensors("outputs", model, /*inputs=*/false);
  if (*kiln_model_shape_guards(model)) {
    std::printf("checked before each run:\n");
    std::string guards = kiln_model_shape_guards(model);
    for (size_t at = 0, end; (end = guards.find('\n', at)) != std::string::npos;
         at = end + 1)
      std::printf("  %s\n", guards.substr(at, end - at).c_str());
  }
  kiln_model_close(model);
  return 0;
}

int main(int argc, char **argv) {
  if (printVersionIfAsked(argc, argv))
    return 0;
  if (argc == 3 && std::string(argv[1]) == "--jobs")
    return runJobs(argv[2]);
  Options o;
  std::string error;
  if (!parseArgs(argc, argv, o, error)) {
    std::fprintf(stderr, "kiln-run: error: %s\n", error.c_str());
    return 2;
  }
  if (o.help) {
    std::printf("%s\nTolerances: %s.\n", kUsage, kToleranceHelp);
    return 0;
  }
  if (o.info)
    return printInfo(o.model);
  if (!o.outputDir.empty())
    ::mkdir(o.outputDir.c_str(), 0777); // an existing directory is fine
  int rc = run(o, error);
  if (!error.empty())
    std::fprintf(stderr, "kiln-run: error: %s\n", error.c_str());
  return rc;
}
