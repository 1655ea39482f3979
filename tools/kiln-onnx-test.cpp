//===- kiln-onnx-test.cpp - run ONNX backend-test directories end to end --===//
//
// Each test directory holds model.onnx and test_data_set_N/{input,output}_K.pb.
// A test is compiled once per distinct set of input shapes found in its data
// sets, run on the chosen device, and every output compared with the
// reference. Nothing is frozen unless --freeze-inputs is given: a model
// input that a node needs fixed at compile time skips the test. Each test runs
// in a forked child so that a crash or a hang is a failure of that test, not of
// the run.
//
//===----------------------------------------------------------------------===//
#include "kiln/Pipeline/CompileFlags.h"
#include "kiln/Pipeline/Compiler.h"
#include "kiln/Target/CudaTarget.h"
#include "kiln/Target/RocmTarget.h"
#include "kiln/runtime.h"

#include "common/TensorFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <map>
#include <poll.h>
#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kiln;
namespace cl = llvm::cl;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static cl::OptionCategory toolCategory("kiln-onnx-test flags");

static cl::list<std::string> inputDirs(cl::Positional, cl::desc("<dir>..."),
                                       cl::OneOrMore, cl::cat(toolCategory));
static cl::opt<std::string>
    device("device", cl::desc("Runtime device: cpu (default), cuda or rocm"),
           cl::init("cpu"), cl::cat(toolCategory));
/// The compile options every test is compiled with (CompileFlags.h),
/// read once in main().
static CompileOptions compileOptions;
/// The target they describe.
static TargetDescription target;
static cl::opt<bool> freezeInputs(
    "freeze-inputs",
    cl::desc("When a node needs a model input fixed at compile time, "
             "compile each data set with its values of that input frozen "
             "(kiln-compile --freeze-input) instead of skipping the test"),
    cl::cat(toolCategory));
static cl::opt<bool> dynamicBatch(
    "dynamic-batch",
    cl::desc("Compile each test once with kiln-compile --dynamic-batch (the "
             "first data set's batch as the chunk) and run every data set "
             "that differs only in its batch through that artifact; a model "
             "the compiler refuses a dynamic batch is skipped with why"),
    cl::cat(toolCategory));
static cl::list<int64_t> batchChunks(
    "batch-chunks",
    cl::desc("With --dynamic-batch: compile the kernels for these chunks of "
             "the batch too (kiln-compile --batch-chunks)"),
    cl::CommaSeparated, cl::cat(toolCategory));
static cl::opt<std::string> xfailFile("xfail-file",
                                      cl::desc("Tests expected to fail, one "
                                               "per line: name  # reason"),
                                      cl::cat(toolCategory));
static cl::opt<double> relTolerance(
    "rtol",
    cl::desc(std::string("Relative tolerance (") + kToleranceHelp + ")"),
    cl::init(kDefaultTolerance.rtol), cl::cat(toolCategory));
static cl::opt<double> absTolerance("atol",
                                    cl::desc("Absolute tolerance (see --rtol)"),
                                    cl::init(kDefaultTolerance.atol),
                                    cl::cat(toolCategory));
static cl::opt<bool> compileOnly("compile-only",
                                 cl::desc("Only compile, into --artifact-dir"),
                                 cl::cat(toolCategory));
static cl::opt<bool> runOnly("run-only",
                             cl::desc("Only run artifacts from --artifact-dir"),
                             cl::cat(toolCategory));
static cl::opt<std::string> artifactDir("artifact-dir",
                                        cl::desc("Where artifacts are written "
                                                 "or read"),
                                        cl::cat(toolCategory));
static cl::opt<std::string> filter("filter",
                                   cl::desc("Only tests whose name matches "
                                            "this regex"),
                                   cl::cat(toolCategory));
static cl::opt<unsigned> jobs("j",
                              cl::desc("Tests run at once (default: "
                                       "number of cores)"),
                              cl::init(0), cl::cat(toolCategory));
static cl::opt<uint64_t> maxSerialKernelBytes(
    "max-serial-kernel-bytes",
    cl::desc("GPU targets: fail a test whose model has a kernel that runs as "
             "one GPU thread and moves more than this many bytes (a kernel "
             "the code generator failed to parallelize)"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<uint64_t> maxThreadPrivateBytes(
    "max-thread-private-bytes",
    cl::desc("GPU targets: fail a test whose model has a kernel whose "
             "threads each keep more than this many bytes on their stack "
             "(local or scratch memory)"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<uint64_t> underfilledKernelBytes(
    "underfilled-kernel-bytes",
    cl::desc("GPU targets: fail a test whose model has a kernel that moves "
             "more than this many bytes in fewer blocks than the target's "
             "chip has multiprocessors"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<unsigned> timeoutSeconds("timeout", cl::desc("Seconds per test"),
                                        cl::init(120), cl::cat(toolCategory));

namespace {

enum class Outcome { Pass, Fail, Skip };

struct TestCase {
  std::string name;
  std::string dir;
};

struct DataSet {
  std::vector<Tensor> inputs, outputs;
  std::vector<std::string> inputFiles;
};

/// Test directories under each argument: the argument itself when it holds
/// model.onnx, else its immediate subdirectories that do.
std::vector<TestCase> findTests() {
  std::vector<TestCase> tests;
  llvm::Regex pattern(filter);
  auto consider = [&](llvm::StringRef dir) {
    if (!fs::exists(dir + "/model.onnx"))
      return false;
    // "models/m/" is test "m", as "models/m" is; "." is the folder's name.
    llvm::SmallString<256> real;
    std::string name = path::filename(dir.rtrim('/')).str();
    if ((name.empty() || name == "." || name == "..") &&
        !fs::real_path(dir, real))
      name = path::filename(real).str();
    if (filter.empty() || pattern.match(name))
      tests.push_back({name, dir.str()});
    return true;
  };
  for (const std::string &root : inputDirs) {
    if (consider(root))
      continue;
    std::error_code ec;
    std::vector<std::string> children;
    for (fs::directory_iterator it(root, ec), end; it != end && !ec;
         it.increment(ec))
      children.push_back(it->path());
    if (ec) {
      llvm::errs() << "error: cannot read directory '" << root
                   << "': " << ec.message() << "\n";
      std::exit(2);
    }
    llvm::sort(children);
    for (const std::string &child : children)
      consider(child);
  }
  return tests;
}

bool readDataSets(const TestCase &test, std::vector<DataSet> &sets,
                  std::string &error) {
  for (int n = 0;; ++n) {
    std::string dir = test.dir + "/test_data_set_" + std::to_string(n);
    if (!fs::is_directory(dir))
      break;
    DataSet set;
    for (const char *kind : {"input", "output"})
      for (int k = 0;; ++k) {
        // input_K.pb as the ONNX suites store them, or input_K.npy.
        std::string base = dir + "/" + kind + "_" + std::to_string(k);
        std::string file = base + ".pb";
        if (!fs::exists(file))
          file = base + ".npy";
        if (!fs::exists(file))
          break;
        Tensor t;
        if (!readTensorFile(file, t, error))
          return false;
        if (std::string(kind) == "input") {
          set.inputs.push_back(std::move(t));
          set.inputFiles.push_back(file);
        } else {
          set.outputs.push_back(std::move(t));
        }
      }
    sets.push_back(std::move(set));
  }
  if (sets.empty())
    error = "no test_data_set_N directories";
  return !sets.empty();
}

/// Graph inputs that are not initializers, in order, with their declared
/// ONNX element types, and the graph outputs' element types.
bool graphInputNames(const std::string &model, std::vector<std::string> &names,
                     std::vector<int32_t> &types, std::vector<int> &ranks,
                     std::vector<int32_t> &outputTypes, std::string &error) {
  std::ifstream in(model, std::ios::binary);
  onnx::ModelProto proto;
  if (!in || !proto.ParseFromIstream(&in)) {
    error = "cannot parse " + model;
    return false;
  }
  std::set<std::string> initializers;
  for (const auto &init : proto.graph().initializer())
    initializers.insert(init.name());
  for (const auto &input : proto.graph().input())
    if (!initializers.count(input.name())) {
      names.push_back(input.name());
      types.push_back(input.type().tensor_type().elem_type());
      ranks.push_back(input.type().tensor_type().has_shape()
                          ? input.type().tensor_type().shape().dim_size()
                          : -1);
    }
  for (const auto &output : proto.graph().output())
    outputTypes.push_back(output.type().tensor_type().elem_type());
  return true;
}

/// The ONNX test suites store bfloat16 tensors as uint16 (the same bits):
/// such data is read as the bfloat16 the model declares.
void readUint16AsBfloat16(std::vector<DataSet> &sets,
                          const std::vector<int32_t> &inputTypes,
                          const std::vector<int32_t> &outputTypes) {
  auto relabel = [](std::vector<Tensor> &tensors,
                    const std::vector<int32_t> &types) {
    for (size_t i = 0; i < tensors.size() && i < types.size(); ++i)
      if (types[i] == onnx::TensorProto::BFLOAT16 &&
          tensors[i].dtype == KILN_DTYPE_U16)
        tensors[i].dtype = KILN_DTYPE_BF16;
  };
  for (DataSet &set : sets) {
    relabel(set.inputs, inputTypes);
    relabel(set.outputs, outputTypes);
  }
}

/// Data whose dtype or rank differs from the input it feeds cannot test the
/// model (onnxruntime refuses it too).
bool dataMatchesInputs(const std::vector<DataSet> &sets,
                       const std::vector<std::string> &names,
                       const std::vector<int32_t> &types,
                       const std::vector<int> &ranks, std::string &error) {
  for (const DataSet &set : sets)
    for (size_t i = 0; i < set.inputs.size() && i < types.size(); ++i) {
      int rank = set.inputs[i].shape.size();
      if (ranks[i] >= 0 && rank != ranks[i]) {
        error = set.inputFiles[i] + " holds rank-" + std::to_string(rank) +
                " data for input '" + names[i] + "' of rank " +
                std::to_string(ranks[i]);
        return false;
      }
      int32_t given = onnxTypeOf(set.inputs[i].dtype);
      if (types[i] != 0 && given != types[i]) {
        error = set.inputFiles[i] + " holds " +
                onnx::TensorProto::DataType_Name(
                    onnx::TensorProto::DataType(given)) +
                " data for input '" + names[i] + "' of type " +
                onnx::TensorProto::DataType_Name(
                    onnx::TensorProto::DataType(types[i]));
        return false;
      }
    }
  return true;
}

/// The data set's input shapes; with --dynamic-batch, without the batch.
std::string shapeKey(const DataSet &set) {
  std::string key;
  for (const Tensor &t : set.inputs) {
    std::vector<int64_t> shape = t.shape;
    if (dynamicBatch && !shape.empty())
      shape.erase(shape.begin());
    key += formatShape(shape) + ";";
  }
  return key;
}

/// Groups data sets by input shapes; returns the group of each data set.
std::vector<size_t> groupByShape(const std::vector<DataSet> &sets,
                                 size_t &numGroups) {
  std::map<std::string, size_t> groups;
  std::vector<size_t> groupOf;
  for (const DataSet &set : sets)
    groupOf.push_back(
        groups.emplace(shapeKey(set), groups.size()).first->second);
  numGroups = groups.size();
  return groupOf;
}

struct Result {
  Outcome outcome;
  std::string message;
  double maxAbsErr = 0; // over every output of every data set that ran
};

/// On a GPU target, a message naming the first kernel that falls off a
/// performance cliff, else "": one thread of one block moving more than
/// --max-serial-kernel-bytes (a kernel the code generator failed to
/// parallelize), threads keeping more than --max-thread-private-bytes on
/// their stack, or more than --underfilled-kernel-bytes moved in fewer
/// blocks than the chip has multiprocessors.
std::string gpuKernelCliff(const ArtifactSummary &summary) {
  int64_t multiprocessors = target.multiprocessors;
  if (!target.isGpu())
    return "";
  for (const KernelReport &kernel : summary.kernels) {
    std::string where =
        kernel.name + " (ONNX nodes " + llvm::join(kernel.nodes, ", ") + ")";
    if (maxSerialKernelBytes && kernel.workgroups == 1 && kernel.threads == 1 &&
        kernel.bytes > maxSerialKernelBytes && kernel.resultBytes != 0)
      return "serial GPU kernel: " + where + " runs as one thread over " +
             std::to_string(kernel.bytes) + " bytes";
    if (maxThreadPrivateBytes && kernel.privateMemory > maxThreadPrivateBytes)
      return "GPU kernel " + where + " keeps " +
             std::to_string(kernel.privateMemory) +
             " bytes per thread on its stack (local memory)";
    if (underfilledKernelBytes && kernel.bytes > underfilledKernelBytes &&
        kernel.workgroups < multiprocessors)
      return "GPU kernel " + where + " moves " + std::to_string(kernel.bytes) +
             " bytes in " + std::to_string(kernel.workgroups) +
             " blocks, fewer than the " + std::to_string(multiprocessors) +
             " multiprocessors";
  }
  return "";
}

/// Compiles the model for the input shapes of `set`, with the inputs named
/// in `frozen` fixed to their values in `set`.
Result compileFor(const TestCase &test, const DataSet &set,
                  const std::vector<std::string> &names,
                  const std::set<std::string> &frozen,
                  std::vector<UnsupportedNode> &unsupported,
                  std::string &artifact) {
  CompileRequest request;
  request.modelPath = test.dir + "/model.onnx";
  request.compile = compileOptions;
  request.import.dynamicBatch = dynamicBatch;
  if (dynamicBatch)
    request.batchChunks.assign(batchChunks.begin(), batchChunks.end());
  for (size_t i = 0; i < set.inputs.size() && i < names.size(); ++i) {
    if (frozen.count(names[i]))
      request.import.frozenInputs[names[i]] = set.inputFiles[i];
    else
      request.import.inputShapes[names[i]] = set.inputs[i].shape;
  }
  mlir::MLIRContext context;
  context.disableMultithreading();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
    if (diagnostics.empty())
      diagnostics = d.str();
    return mlir::success();
  });
  CompileResult result;
  if (mlir::failed(compileModel(context, request, result))) {
    if (!result.unsupported.empty()) {
      unsupported = result.unsupported;
      const UnsupportedNode &first = result.unsupported.front();
      return {Outcome::Skip, "unsupported: " + first.opType + " (" +
                                 first.nodeName + "): " + first.reason};
    }
    if (dynamicBatch &&
        diagnostics.find("--dynamic-batch:") != std::string::npos)
      return {Outcome::Skip, "dynamic batch refused: " + diagnostics};
    return {Outcome::Fail, "compile: " + diagnostics};
  }
  artifact = std::move(result.output);
  if (std::string cliff = gpuKernelCliff(result.summary); !cliff.empty())
    return {Outcome::Fail, cliff};
  return {Outcome::Pass, ""};
}

Result runDataSet(const std::string &artifact, const DataSet &set,
                  const std::vector<std::string> &names) {
  kiln_model *model = nullptr;
  if (kiln_model_open_memory(artifact.data(), artifact.size(), &model) !=
      KILN_OK)
    return {Outcome::Fail, std::string("load: ") + kiln_last_error()};
  kiln_session_options options = {jobs == 1 ? 0 : 1};
  kiln_session *session = nullptr;
  Result result = {Outcome::Pass, ""};
  auto fail = [&](const std::string &what) {
    result = {Outcome::Fail, what + ": " + kiln_last_error()};
  };
  if (kiln_session_create(model, device.c_str(), &options, &session) !=
      KILN_OK) {
    fail("session");
    kiln_model_close(model);
    return result;
  }
  int32_t numInputs = kiln_model_input_count(model);
  for (int32_t i = 0; i < numInputs && result.outcome == Outcome::Pass; ++i) {
    kiln_tensor_info info;
    kiln_model_input_info(model, i, &info);
    // Inputs bind by name: frozen inputs are not inputs of the artifact.
    auto it = std::find(names.begin(), names.end(), info.name);
    if (it == names.end() || size_t(it - names.begin()) >= set.inputs.size()) {
      result = {Outcome::Fail, "no data for input " + std::string(info.name)};
      break;
    }
    const Tensor &t = set.inputs[it - names.begin()];
    if (kiln_session_set_input(session, info.name, t.dtype, t.shape.data(),
                               (int32_t)t.shape.size(), t.bytes.data(),
                               t.bytes.size()) != KILN_OK)
      fail("input " + std::string(info.name));
  }
  if (result.outcome == Outcome::Pass && kiln_session_run(session) != KILN_OK)
    fail("run");
  int32_t numOutputs = kiln_model_output_count(model);
  for (int32_t i = 0; i < numOutputs && i < (int32_t)set.outputs.size() &&
                      result.outcome == Outcome::Pass;
       ++i) {
    kiln_tensor_info info;
    kiln_session_output_info(session, i, &info);
    Tensor actual;
    actual.dtype = info.dtype;
    actual.shape.assign(info.shape, info.shape + info.rank);
    actual.bytes.resize(info.bytes);
    if (kiln_session_get_output_at(session, i, actual.bytes.data(),
                                   actual.bytes.size()) != KILN_OK) {
      fail("output " + std::string(info.name));
      break;
    }
    Tolerance tolerance =
        toleranceFor(set.outputs[i].dtype, {relTolerance, absTolerance});
    CompareResult cmp =
        compareTensors(actual, set.outputs[i], tolerance.rtol, tolerance.atol);
    result.maxAbsErr = std::max(result.maxAbsErr, cmp.maxAbsErr);
    if (!cmp.ok) {
      std::string message;
      llvm::raw_string_ostream os(message);
      os << "output " << info.name << ": ";
      if (!cmp.error.empty())
        os << cmp.error;
      else
        os << "max abs err " << llvm::format("%.3g", cmp.maxAbsErr)
           << ", max rel err " << llvm::format("%.3g", cmp.maxRelErr)
           << " (first bad element " << cmp.firstBadIndex << ")";
      result = {Outcome::Fail, message};
    }
  }
  kiln_session_destroy(session);
  kiln_model_close(model);
  return result;
}

/// Needs every unsupported node only a graph input fixed at compile time?
/// Then those inputs are frozen (the data set's values become constants).
bool inputsToFreeze(const std::vector<UnsupportedNode> &unsupported,
                    const std::vector<std::string> &names,
                    std::set<std::string> &frozen) {
  for (const UnsupportedNode &node : unsupported) {
    if (node.needsConstant.empty() ||
        !llvm::is_contained(names, node.needsConstant))
      return false;
    frozen.insert(node.needsConstant);
  }
  return !frozen.empty();
}

std::string artifactName(const TestCase &test, size_t index) {
  return test.name + "." + std::to_string(index) + ".kiln";
}

/// Compiles one artifact per distinct input-shape set (per data set when
/// inputs are frozen); `artifactOf[n]` names data set n's artifact.
Result compileTest(const TestCase &test, const std::vector<DataSet> &sets,
                   const std::vector<std::string> &names,
                   std::map<std::string, std::string> &artifacts,
                   std::vector<std::string> &artifactOf) {
  size_t numGroups;
  std::vector<size_t> groupOf = groupByShape(sets, numGroups);
  std::set<std::string> frozen;
  artifactOf.assign(sets.size(), "");
  for (size_t n = 0; n < sets.size(); ++n) {
    size_t first =
        std::find(groupOf.begin(), groupOf.end(), groupOf[n]) - groupOf.begin();
    if (frozen.empty() && first != n) {
      artifactOf[n] = artifactOf[first];
      continue;
    }
    std::vector<UnsupportedNode> unsupported;
    std::string artifact;
    Result compiled =
        compileFor(test, sets[n], names, frozen, unsupported, artifact);
    // With --freeze-inputs, each retry freezes the inputs the remaining
    // nodes asked for.
    for (size_t before = frozen.size();
         freezeInputs && compiled.outcome == Outcome::Skip &&
         inputsToFreeze(unsupported, names, frozen) && frozen.size() > before;
         before = frozen.size()) {
      unsupported.clear();
      compiled =
          compileFor(test, sets[n], names, frozen, unsupported, artifact);
    }
    if (compiled.outcome != Outcome::Pass)
      return compiled;
    artifactOf[n] = artifactName(test, n);
    artifacts[artifactOf[n]] = std::move(artifact);
  }
  return {Outcome::Pass, ""};
}

/// Compiles and/or runs one test; called in a child process.
Result runTest(const TestCase &test) {
  std::vector<DataSet> sets;
  std::vector<std::string> names;
  std::vector<int32_t> types, outputTypes;
  std::vector<int> ranks;
  std::string error;
  if (!graphInputNames(test.dir + "/model.onnx", names, types, ranks,
                       outputTypes, error))
    return {Outcome::Fail, error};
  // Sequences, optionals and strings have no Kiln dtype: such tests cannot
  // run, whatever their ops.
  if (!readDataSets(test, sets, error))
    return {Outcome::Skip, "unsupported test data: " + error};
  readUint16AsBfloat16(sets, types, outputTypes);
  if (!dataMatchesInputs(sets, names, types, ranks, error))
    return {Outcome::Skip, "unsupported test data: " + error};
  std::map<std::string, std::string> artifacts;
  std::vector<std::string> artifactOf;
  std::string manifest = artifactDir + "/" + test.name + ".manifest";
  if (runOnly) {
    std::ifstream in(manifest);
    std::string line;
    while (std::getline(in, line))
      artifactOf.push_back(line);
    if (artifactOf.size() != sets.size())
      return {Outcome::Skip, "not compiled (no manifest)"};
    for (const std::string &name : artifactOf) {
      auto file =
          llvm::MemoryBuffer::getFile(artifactDir + "/" + name, false, false);
      if (!file)
        return {Outcome::Fail, "cannot read artifact " + name};
      artifacts[name] = (*file)->getBuffer().str();
    }
  } else {
    Result compiled = compileTest(test, sets, names, artifacts, artifactOf);
    if (compiled.outcome != Outcome::Pass)
      return compiled;
  }
  if (compileOnly) {
    for (const auto &[name, bytes] : artifacts) {
      std::ofstream out(artifactDir + "/" + name, std::ios::binary);
      out.write(bytes.data(), bytes.size());
      if (!out)
        return {Outcome::Fail, "cannot write " + artifactDir + "/" + name};
    }
    std::ofstream out(manifest);
    for (const std::string &name : artifactOf)
      out << name << "\n";
    return {Outcome::Pass, ""};
  }
  double maxAbsErr = 0;
  for (size_t n = 0; n < sets.size(); ++n) {
    Result ran = runDataSet(artifacts[artifactOf[n]], sets[n], names);
    if (ran.outcome != Outcome::Pass) {
      ran.message = "data set " + std::to_string(n) + ": " + ran.message;
      return ran;
    }
    maxAbsErr = std::max(maxAbsErr, ran.maxAbsErr);
  }
  std::string message;
  llvm::raw_string_ostream(message)
      << "max abs err " << llvm::format("%.3g", maxAbsErr);
  return {Outcome::Pass, message};
}

struct Child {
  pid_t pid;
  int fd;
  size_t test;
  std::string output;
  time_t started;
};

/// Runs every test in forked children, at most `jobs` at once.
std::vector<Result> runAll(const std::vector<TestCase> &tests) {
  std::vector<Result> results(tests.size(), {Outcome::Fail, "not run"});
  std::vector<Child> running;
  size_t next = 0;
  unsigned maxJobs =
      jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && running.size() < maxJobs) {
      int fds[2];
      if (pipe(fds) != 0) {
        perror("pipe");
        std::exit(2);
      }
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        Result r = runTest(tests[next]);
        std::string line = std::to_string(int(r.outcome)) + " " + r.message;
        (void)!write(fds[1], line.data(), line.size());
        _exit(0);
      }
      close(fds[1]);
      running.push_back({pid, fds[0], next, "", time(nullptr)});
      ++next;
    }
    std::vector<pollfd> polls;
    for (const Child &c : running)
      polls.push_back({c.fd, POLLIN, 0});
    poll(polls.data(), polls.size(), 200);
    for (size_t i = 0; i < running.size();) {
      Child &c = running[i];
      bool done = false;
      if (polls[i].revents & (POLLIN | POLLHUP)) {
        char buffer[4096];
        ssize_t n = read(c.fd, buffer, sizeof(buffer));
        if (n > 0)
          c.output.append(buffer, n);
        else
          done = true;
      }
      if (!done && time(nullptr) - c.started > (time_t)timeoutSeconds) {
        kill(c.pid, SIGKILL);
        c.output = "1 timed out after " + std::to_string(timeoutSeconds) + " s";
        done = true;
      }
      if (!done) {
        ++i;
        continue;
      }
      int status = 0;
      waitpid(c.pid, &status, 0);
      close(c.fd);
      Result &r = results[c.test];
      if (WIFSIGNALED(status) && c.output.empty())
        r = {Outcome::Fail,
             "crashed with signal " + std::to_string(WTERMSIG(status))};
      else if (c.output.empty())
        r = {Outcome::Fail, "exited without a result"};
      else
        r = {Outcome(c.output[0] - '0'), c.output.substr(2)};
      polls.erase(polls.begin() + i);
      running.erase(running.begin() + i);
    }
  }
  return results;
}

std::map<std::string, std::string> readXfails() {
  std::map<std::string, std::string> xfails;
  if (xfailFile.empty())
    return xfails;
  std::ifstream in(xfailFile);
  if (!in) {
    llvm::errs() << "error: cannot read --xfail-file '" << xfailFile << "'\n";
    std::exit(2);
  }
  std::string line;
  while (std::getline(in, line)) {
    llvm::StringRef text = llvm::StringRef(line).trim();
    if (text.empty() || text.starts_with("#"))
      continue;
    auto [name, reason] = text.split('#');
    xfails[name.trim().str()] = reason.trim().str();
  }
  return xfails;
}

} // namespace

int main(int argc, char **argv) {
  registerCompileFlags(CompileFlagSet::All);
  hideForeignFlags(toolCategory);
  printKilnVersionOnVersionFlag();
  cl::ParseCommandLineOptions(argc, argv, "Kiln ONNX backend-test runner\n");
  std::string error;
  llvm::FailureOr<CompileOptions> options = compileOptionsFromFlags(error);
  llvm::FailureOr<TargetDescription> described = llvm::failure();
  if (llvm::succeeded(options))
    described = describeTarget(*options, error);
  if (failed(described)) {
    llvm::errs() << "error: " << error << "\n";
    return 2;
  }
  compileOptions = *options;
  target = *described;
  if ((compileOnly || runOnly) && artifactDir.empty()) {
    llvm::errs()
        << "error: --compile-only and --run-only need --artifact-dir\n";
    return 2;
  }
  if (compileOnly && runOnly) {
    llvm::errs() << "error: --compile-only and --run-only exclude each other\n";
    return 2;
  }
  if (compileOnly)
    fs::create_directories(artifactDir);
  auto xfails = readXfails();
  std::vector<TestCase> tests = findTests();
  std::vector<Result> results = runAll(tests);

  unsigned passed = 0, failed = 0, skipped = 0, expected = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    const Result &r = results[i];
    bool listed = xfails.count(tests[i].name);
    llvm::StringRef tag;
    switch (r.outcome) {
    case Outcome::Pass:
      tag = listed ? "XPASS" : "PASS";
      listed ? ++failed : ++passed;
      break;
    case Outcome::Fail:
      tag = listed ? "XFAIL" : "FAIL";
      listed ? (++skipped, ++expected) : ++failed;
      break;
    case Outcome::Skip:
      tag = "SKIP";
      ++skipped;
      break;
    }
    llvm::outs() << tag << " " << tests[i].name;
    if (!r.message.empty())
      llvm::outs() << ": " << r.message;
    if (tag == "XPASS")
      llvm::outs() << " (listed in " << xfailFile << ": remove it)";
    llvm::outs() << "\n";
  }
  if (expected)
    llvm::outs() << expected << " of the skipped are expected failures\n";
  llvm::outs() << passed << " passed, " << failed << " failed, " << skipped
               << " skipped\n";
  return failed ? 1 : 0;
}
