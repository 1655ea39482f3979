//===- kiln-bench.cpp - Time a compiled .kiln model -----------------------===//
#include "common/TensorFile.h"
#include "common/ToolSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>

using namespace kiln;

namespace {

const char kUsage[] =
    "usage: kiln-bench MODEL.kiln [options]\n"
    "\n"
    "Times a compiled model: median/min/mean over the repeats, then each\n"
    "kernel's median time, slowest first, with its rates against the least\n"
    "work it must do (GFLOP/s of its FLOPs, GB/s of the buffers it binds)\n"
    "and, on a GPU, what it takes of the device as the driver reports it:\n"
    "registers and local bytes per thread, shared KiB per block, blocks\n"
    "resident per multiprocessor.\n"
    "\n"
    "  --input [NAME=]@FILE  input from a .pb or .npy file (repeatable);\n"
    "                        inputs not given are random in [-1, 1)\n"
    "  --ignore-unknown-inputs  skip NAME=@FILE inputs the model does not\n"
    "                        have (e.g. frozen when it was compiled)\n"
    "  --batch N             dynamic-batch artifacts: random batched inputs\n"
    "                        of batch N (default: the compiled chunk)\n"
    "  --warmup W            untimed runs first (default 5)\n"
    "  --repeats R           timed runs (default 20)\n"
    "  --device NAME         cpu (default), cuda or rocm\n"
    "  --threads N           worker threads; 0 = one per core (default)\n"
    "  --max-memory BYTES    refuse a model whose buffers need more\n"
    "                        (e.g. 512M, 4G; default: no limit)\n"
    "  --version             print the runtime's version and git commit\n"
    "  --help                show this help\n";

struct Options {
  std::string model, device = "cpu";
  std::vector<std::string> inputs;
  int warmup = 5, repeats = 20, threads = 0, batch = 0;
  uint64_t maxMemory = 0;
  bool help = false;
  bool ignoreUnknownInputs = false;
};

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  ArgReader args(argc, argv);
  std::string v;
  while (!args.done() && error.empty()) {
    if (args.flag("--help") || args.flag("-h"))
      o.help = true;
    else if (args.option("--input", v, error))
      o.inputs.push_back(v);
    else if (args.flag("--ignore-unknown-inputs"))
      o.ignoreUnknownInputs = true;
    else if (args.option("--device", v, error))
      o.device = v;
    else if (args.option("--threads", v, error))
      parseInt(v, "--threads", o.threads, error);
    else if (args.option("--max-memory", v, error))
      parseBytes(v, "--max-memory", o.maxMemory, error);
    else if (args.option("--batch", v, error))
      parseInt(v, "--batch", o.batch, error);
    else if (args.option("--warmup", v, error))
      parseInt(v, "--warmup", o.warmup, error);
    else if (args.option("--repeats", v, error))
      parseInt(v, "--repeats", o.repeats, error);
    else if (args.peek().size() > 1 && args.peek()[0] == '-')
      error = "unknown option '" + args.peek() + "' (see --help)";
    else if (o.model.empty())
      o.model = args.take();
    else
      error = "unexpected argument '" + args.peek() + "'";
  }
  if (error.empty() && o.repeats < 1)
    error = "--repeats must be at least 1";
  if (error.empty() && o.batch < 0)
    error = "--batch must be positive";
  if (error.empty() && o.model.empty() && !o.help)
    error = "no model given (see --help)";
  return error.empty();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool setInputs(const Options &o, const LoadedModel &m, std::string &error) {
  std::vector<Tensor> given;
  std::vector<bool> bound;
  if (!readTensorSpecs(o.inputs, inputNames(m.model), given, bound, error,
                       o.ignoreUnknownInputs))
    return false;
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int32_t i = 0; i < kiln_model_input_count(m.model); ++i) {
    if (!bound[i]) {
      kiln_tensor_info info;
      kiln_model_input_info(m.model, i, &info);
      std::vector<int64_t> shape(info.shape, info.shape + info.rank);
      if (int32_t d = kiln_model_input_batch_dim(m.model, i);
          o.batch > 0 && d >= 0) {
        info.bytes = info.bytes / size_t(shape[d]) * size_t(o.batch);
        shape[d] = o.batch;
      }
      info.shape = shape.data();
      given[i] = tensorFor(info);
      for (int64_t e = 0; e < given[i].numElements(); ++e)
        given[i].set(e, dist(rng));
    }
    if (!setInput(m.session, given[i], error))
      return false;
  }
  return true;
}

/// What a GPU kernel takes of the device, as columns: registers and
/// local bytes per thread, shared KiB per block, blocks a multiprocessor
/// holds ("?" where the driver could not say).
std::string resourceColumns(kiln_session *session, int32_t dispatch) {
  kiln_kernel_resources r;
  if (kiln_session_dispatch_resources(session, dispatch, &r) != KILN_OK)
    return "";
  auto column = [](int width, double value, const char *format) {
    char text[32];
    if (value < 0)
      std::snprintf(text, sizeof(text), "%*s", width, "?");
    else
      std::snprintf(text, sizeof(text), format, width, value);
    return std::string(text) + " ";
  };
  double sharedKiB = r.shared_bytes < 0 ? -1.0 : double(r.shared_bytes) / 1024;
  return column(4, r.registers, "%*.0f") +
         column(6, double(r.local_bytes), "%*.0f") +
         column(6, sharedKiB, "%*.1f") +
         column(5, r.blocks_per_multiprocessor, "%*.0f");
}

void printKernelTable(const kiln_model *model, kiln_session *session, bool gpu,
                      const std::vector<std::vector<double>> &perDispatch) {
  struct Row {
    int32_t index;
    double ms;
  };
  std::vector<Row> rows;
  double total = 0;
  for (size_t d = 0; d < perDispatch.size(); ++d) {
    rows.push_back({int32_t(d), median(perDispatch[d])});
    total += rows.back().ms;
  }
  std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
    return a.ms != b.ms ? a.ms > b.ms : a.index < b.index;
  });
  // Rates against the least work each kernel must do (its FLOPs; the
  // bytes of the buffers it binds): how far from the hardware's limits.
  // On a GPU, also what each kernel takes of the device (the driver's
  // registers, local bytes, shared KiB and resident blocks per SM).
  std::printf("\n%-32s %10s %12s %7s %9s %8s  %s%s\n", "kernel", "workgroups",
              "median ms", "%", "GFLOP/s", "GB/s",
              gpu ? "regs  local   smem  /SM  " : "", "ONNX nodes");
  for (const Row &r : rows) {
    kiln_dispatch_info info;
    kiln_model_dispatch_info(model, r.index, &info);
    std::string nodes;
    for (int32_t n = 0; n < info.node_count; ++n)
      nodes += (n ? ", " : "") + std::string(info.nodes[n]);
    double seconds = r.ms / 1000.0;
    auto rate = [&](double amount) {
      char text[32] = "-";
      if (amount > 0 && seconds > 0)
        std::snprintf(text, sizeof(text), "%.1f", amount / seconds / 1e9);
      return std::string(text);
    };
    std::printf("%-32s %10u %12.4f %6.1f%% %9s %8s  %s%s\n", info.kernel,
                info.workgroups, r.ms, total > 0 ? 100.0 * r.ms / total : 0.0,
                rate(double(info.flops)).c_str(),
                rate(double(kiln_model_dispatch_bytes(model, r.index))).c_str(),
                gpu ? resourceColumns(session, r.index).c_str() : "",
                nodes.c_str());
  }
}

int bench(const Options &o, std::string &error) {
  LoadedModel m;
  if (!openModel(o.model, o.device, o.threads, o.maxMemory, m, error) ||
      !setInputs(o, m, error))
    return 1;
  for (int i = 0; i < o.warmup; ++i)
    if (kiln_session_run(m.session) != KILN_OK) {
      error = kiln_last_error();
      return 1;
    }
  size_t numDispatches = size_t(kiln_model_dispatch_count(m.model));
  // Whole-model time from plain runs (on a GPU: CUDA graph replay), then
  // per-kernel times from profiled runs, which time each kernel alone.
  std::vector<double> totals;
  for (int i = 0; i < o.repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (kiln_session_run(m.session) != KILN_OK) {
      error = kiln_last_error();
      return 1;
    }
    totals.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count());
  }
  std::vector<double> times(std::max<size_t>(numDispatches, 1));
  std::vector<std::vector<double>> perDispatch(numDispatches);
  for (int i = 0; i < o.repeats; ++i) {
    if (kiln_session_run_profiled(m.session, times.data(),
                                  int32_t(times.size())) != KILN_OK) {
      error = kiln_last_error();
      return 1;
    }
    for (size_t d = 0; d < numDispatches; ++d)
      perDispatch[d].push_back(times[d]);
  }
  double mean = std::accumulate(totals.begin(), totals.end(), 0.0) /
                double(totals.size());
  double kernelSum = 0;
  for (const std::vector<double> &t : perDispatch)
    kernelSum += median(t);
  std::printf(
      "model: %s (%zu dispatches, %s, %d repeats)\n", o.model.c_str(),
      numDispatches,
      o.device == "cpu"
          ? (std::to_string(kiln_session_num_threads(m.session)) + " threads")
                .c_str()
          : o.device.c_str(),
      o.repeats);
  std::printf("median: %.4f ms\nmin: %.4f ms\nmean: %.4f ms\n", median(totals),
              *std::min_element(totals.begin(), totals.end()), mean);
  // What a run costs beyond its kernels (launches, copies, sync), per
  // kernel: with graph replay on a GPU, the host overhead of one launch.
  if (numDispatches > 0)
    std::printf("kernel sum: %.4f ms\noverhead per dispatch: %.2f us\n",
                kernelSum,
                1000.0 * std::max(0.0, median(totals) - kernelSum) /
                    double(numDispatches));
  printKernelTable(m.model, m.session, o.device != "cpu", perDispatch);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (printVersionIfAsked(argc, argv))
    return 0;
  Options o;
  std::string error;
  if (!parseArgs(argc, argv, o, error)) {
    std::fprintf(stderr, "kiln-bench: error: %s\n", error.c_str());
    return 2;
  }
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  int rc = bench(o, error);
  if (rc != 0)
    std::fprintf(stderr, "kiln-bench: error: %s\n", error.c_str());
  return rc;
}
