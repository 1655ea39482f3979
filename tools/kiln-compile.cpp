//===- kiln-compile.cpp - compile an ONNX model into a .kiln artifact -----===//
#include "kiln/Pipeline/CompileFlags.h"
#include "kiln/Pipeline/Compiler.h"

#include "kiln/Dialect/KilnDialect.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
using namespace kiln;
namespace cl = llvm::cl;

static cl::OptionCategory toolCategory("kiln-compile flags");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::cat(toolCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"),
                                       cl::cat(toolCategory));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Concrete shape of a graph input: name=1x3x224x224"),
                cl::cat(toolCategory));
static cl::opt<bool> dynamicBatch(
    "dynamic-batch",
    cl::desc("Inputs whose leading dim is symbolic take any batch at run "
             "time: the kernels run chunks of the batch --input-shape gives "
             "(1 without it); refused when a node mixes batch elements"),
    cl::cat(toolCategory));
static cl::list<int64_t> batchChunks(
    "batch-chunks",
    cl::desc("With --dynamic-batch: compile the kernels for these chunks of "
             "the batch too (e.g. 1,8,32); a run takes its batch in pieces "
             "of the chunks the artifact has"),
    cl::CommaSeparated, cl::cat(toolCategory));
static cl::opt<uint64_t> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("Refuse models with a tensor larger than this many bytes "
             "(default 1 TiB)"),
    cl::init(uint64_t(1) << 40), cl::cat(toolCategory));
static cl::opt<uint64_t> maxFoldedBytes(
    "max-folded-bytes",
    cl::desc("Most bytes of constants computed at compile time over the "
             "whole model; nodes past it run as kernels (default 0: four "
             "times the model's weights plus 64 MiB)"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<uint64_t> maxMemory(
    "max-memory",
    cl::desc("Most address space the compile may use, in bytes; past it the "
             "compile stops with an out-of-memory error (default 0: what "
             "the machine has)"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<unsigned> maxSubgraphDepth(
    "max-subgraph-depth",
    cl::desc("Refuse models whose subgraphs (If/Loop/Scan bodies) nest "
             "deeper than this (default 16, at most 300)"),
    cl::init(16), cl::cat(toolCategory));
static cl::list<std::string>
    frozenInputs("freeze-input",
                 cl::desc("Fix a graph input's value at compile time: "
                          "name=@FILE, an ONNX TensorProto .pb or a .npy file"),
                 cl::cat(toolCategory));
static cl::opt<bool> check("check",
                           cl::desc("Only list the nodes Kiln cannot import; "
                                    "exit 1 if there are any (symbolic dims "
                                    "without --input-shape are taken as 64)"),
                           cl::cat(toolCategory));
static cl::opt<std::string>
    compileTo("compile-to",
              cl::desc("Stop after a phase and write its IR: graph, fused, "
                       "tiled, kernels, artifact"),
              cl::init("artifact"), cl::cat(toolCategory));
static cl::opt<bool> listOps("list-ops",
                             cl::desc("Print the supported ONNX ops as a "
                                      "Markdown table and exit"),
                             cl::cat(toolCategory));
static cl::opt<std::string> dumpIRDir(
    "dump-ir",
    cl::desc("Write the IR after import (DIR/0000-import.mlir) and "
             "after every pass that changed it: DIR/NNNN-<pass>.mlir "
             "for a pass on the module, DIR/NNNN-<pass>/<kernel>.mlir "
             "for one on each kernel"),
    cl::value_desc("dir"), cl::cat(toolCategory));
static cl::list<std::string>
    dumpIRPasses("dump-ir-passes",
                 cl::desc("With --dump-ir: only after these passes (their "
                          "arguments, as --print-pipeline lists them)"),
                 cl::CommaSeparated, cl::value_desc("pass,..."),
                 cl::cat(toolCategory));
static cl::list<std::string> dumpIRKernels(
    "dump-ir-kernels",
    cl::desc("With --dump-ir: only these kernels (their names, as --report "
             "and kiln-bench list them), each in its own file"),
    cl::CommaSeparated, cl::value_desc("kernel,..."), cl::cat(toolCategory));
static cl::opt<std::string>
    reportFile("report",
               cl::desc("Write a JSON report: per kernel its ONNX nodes, "
                        "FLOPs, bytes, tiling and arena slots"),
               cl::value_desc("file.json"), cl::cat(toolCategory));
static cl::opt<std::string>
    dumpGraphFile("dump-graph",
                  cl::desc("Draw the graph with one cluster per kernel "
                           "(Graphviz DOT)"),
                  cl::value_desc("file.dot"), cl::cat(toolCategory));
static cl::opt<bool> printPipeline(
    "print-pipeline",
    cl::desc("Print the passes each phase runs for the given target and "
             "options, one line per phase, and exit"),
    cl::cat(toolCategory));
static cl::opt<bool> printFlagReferenceAndExit(
    "print-flag-reference",
    cl::desc("Print the compile flags as a Markdown table (docs/flags.md) "
             "and exit"),
    cl::cat(toolCategory));
static cl::opt<bool> summary("summary",
                             cl::desc("Print kernels, arena bytes and compile "
                                      "time after compiling"),
                             cl::cat(toolCategory));

static void printSupportedOps() {
  llvm::outs()
      << "# Supported ONNX ops\n\n"
         "Generated by `kiln-compile --list-ops` from the importer's op table "
         "(`lib/Import/OpRegistry.h`: each op family's file registers its "
         "rows); do not edit by hand.\n\n"
         "Every op below computes in float32 on the `cpu` target. Inputs that "
         "a node needs at compile time (shapes, axes, pads) must be "
         "initializers, Constant nodes or inputs frozen with "
         "`--freeze-input`; those marked *guarded* may also be model inputs "
         "where the model declares the node's result shapes: the node is "
         "compiled for them and the runtime checks the input's values "
         "against them before each run.\n\n"
         "| ONNX op | opsets | notes |\n| --- | --- | --- |\n";
  for (const SupportedOp &op : getSupportedOps())
    llvm::outs() << "| " << op.opType << " | " << op.minOpset << "-"
                 << op.maxOpset << " | " << op.notes << " |\n";
}

/// --print-pipeline: each phase's passes as MLIR's textual pipeline.
static int printPhasePipelines(const CompileOptions &options) {
  std::string error;
  FailureOr<TargetDescription> target = describeTarget(options, error);
  if (failed(target)) {
    llvm::errs() << "error: " << error << "\n";
    return 2;
  }
  MLIRContext context;
  for (Phase phase :
       {Phase::Graph, Phase::Fused, Phase::Tiled, Phase::Kernels}) {
    PassManager pm(&context);
    buildPhasePipeline(pm, phase, options, *target);
    llvm::outs() << phaseName(phase) << ": ";
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\n";
  }
  return 0;
}

/// The size of the last allocation operator new could not make (0: none
/// yet, or one of LLVM's own allocators failed, which do not say).
static std::atomic<size_t> failedAllocationBytes{0};

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KILN_SANITIZED_BUILD 1
#endif
#endif
#if !defined(KILN_SANITIZED_BUILD)
/// operator new as the C++ library's, except that a failed allocation
/// records its size before the new-handler reports it. (Sanitizer builds
/// keep their own operator new.)
void *operator new(std::size_t size) {
  for (;;) {
    if (void *p = std::malloc(size ? size : 1))
      return p;
    failedAllocationBytes = size;
    std::new_handler handler = std::get_new_handler();
    if (!handler)
      throw std::bad_alloc();
    handler();
  }
}
void *operator new[](std::size_t size) { return ::operator new(size); }
#endif

/// Ends the compile with an error instead of LLVM's abort when memory runs
/// out (the machine's, or --max-memory's). Allocates nothing: the heap is
/// what failed.
[[noreturn]] static void reportOutOfMemory(const char *what) {
  char asked[64] = "";
  if (size_t bytes = failedAllocationBytes)
    std::snprintf(asked, sizeof(asked), " asking for %zu bytes", bytes);
  char message[512];
  int length =
      maxMemory ? std::snprintf(message, sizeof(message),
                                "kiln-compile: error: out of memory compiling "
                                "'%s' (%s%s): it needs more than the %llu "
                                "bytes --max-memory allows\n",
                                inputFile.c_str(), what, asked,
                                (unsigned long long)maxMemory)
                : std::snprintf(message, sizeof(message),
                                "kiln-compile: error: out of memory compiling "
                                "'%s' (%s%s): it needs more memory than the "
                                "machine has\n",
                                inputFile.c_str(), what, asked);
  if (length > 0)
    (void)!::write(STDERR_FILENO, message,
                   std::min<size_t>(size_t(length), sizeof(message) - 1));
  ::_exit(1);
}

/// Caps the address space at --max-memory and routes every failed
/// allocation (operator new, LLVM's safe_malloc) to reportOutOfMemory.
static bool limitMemory() {
  std::set_new_handler([] { reportOutOfMemory("operator new failed"); });
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *reason, bool) { reportOutOfMemory(reason); });
  if (!maxMemory)
    return true;
  rlimit limit{rlim_t(maxMemory), rlim_t(maxMemory)};
  if (::setrlimit(RLIMIT_AS, &limit) != 0) {
    llvm::errs() << "error: --max-memory=" << maxMemory
                 << ": cannot set the address-space limit\n";
    return false;
  }
  return true;
}

/// MLIR's --mlir-print-ir-* options.
static bool printsIRAfterPasses(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]).ltrim('-').starts_with("mlir-print-ir"))
      return true;
  return false;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerCompileFlags(CompileFlagSet::All);
  hideForeignFlags(toolCategory);
  printKilnVersionOnVersionFlag();
  cl::ParseCommandLineOptions(argc, argv, "Kiln ONNX compiler\n");

  if (printFlagReferenceAndExit) {
    printFlagReference(llvm::outs());
    return 0;
  }

  if (listOps) {
    printSupportedOps();
    return 0;
  }
  if (inputFile.empty() && !printPipeline) {
    llvm::errs() << "error: no input model (usage: kiln-compile model.onnx -o "
                    "model.kiln)\n";
    return 2;
  }
  auto phase = parsePhase(compileTo);
  if (!phase) {
    llvm::errs() << "error: unknown phase '" << compileTo
                 << "' (graph, fused, tiled, kernels, artifact)\n";
    return 2;
  }
  if (!limitMemory())
    return 2;
  CompileRequest request;
  request.modelPath = inputFile;
  std::string flagError;
  FailureOr<CompileOptions> options = compileOptionsFromFlags(flagError);
  if (failed(options)) {
    llvm::errs() << "error: " << flagError << "\n";
    return 2;
  }
  request.compile = *options;
  request.stopAfter = *phase;
  if (printPipeline)
    return printPhasePipelines(request.compile);
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (failed(parseInputShape(spec, request.import, error))) {
      llvm::errs() << "error: " << error << "\n";
      return 2;
    }
  }

  request.import.maxTensorBytes = maxTensorBytes;
  request.import.dynamicBatch = dynamicBatch;
  if (!batchChunks.empty() && !dynamicBatch) {
    llvm::errs() << "error: --batch-chunks needs --dynamic-batch\n";
    return 2;
  }
  request.batchChunks.assign(batchChunks.begin(), batchChunks.end());
  if (maxSubgraphDepth > 300) {
    llvm::errs() << "error: --max-subgraph-depth=" << maxSubgraphDepth
                 << " is more than 300, the deepest Kiln parses safely\n";
    return 2;
  }
  request.import.maxSubgraphDepth = int(maxSubgraphDepth);
  request.import.maxFoldedBytes = maxFoldedBytes;
  for (const std::string &spec : frozenInputs) {
    size_t at = spec.find("=@");
    if (at == std::string::npos || at == 0) {
      llvm::errs()
          << "error: --freeze-input expects name=@FILE (.pb or .npy), got '"
          << spec << "'\n";
      return 2;
    }
    request.import.frozenInputs[spec.substr(0, at)] = spec.substr(at + 2);
  }

  MLIRContext context;
  // Passes run on the kernels in parallel, and so does LLVM's code
  // generation (--mlir-disable-threading turns both off). Printing the IR
  // after each pass reads the whole module while other threads change it:
  // not then.
  if (!dumpIRDir.empty() || printsIRAfterPasses(argc, argv))
    context.disableMultithreading();
  if (check) {
    request.import.symbolicDimsAs = 64;
    context.loadDialect<KilnDialect>();
    auto imported = importOnnxFile(context, inputFile, request.import);
    if (failed(imported))
      return 1;
    if (!imported->unsupported.empty()) {
      printUnsupportedReport(llvm::outs(), imported->unsupported);
      return 1;
    }
    llvm::outs() << "ok: every node of " << inputFile << " is supported\n";
    return 0;
  }

  if (outputFile.empty()) {
    llvm::errs() << "error: no output file (-o)\n";
    return 2;
  }
  request.dumpIR.dir = dumpIRDir;
  request.dumpIR.passes = {dumpIRPasses.begin(), dumpIRPasses.end()};
  request.dumpIR.kernels = {dumpIRKernels.begin(), dumpIRKernels.end()};
  request.dumpGraphFile = dumpGraphFile;
  request.configurePassManager = [](PassManager &pm) {
    (void)applyPassManagerCLOptions(pm);
  };
  CompileResult result;
  if (failed(compileModel(context, request, result))) {
    if (!result.unsupported.empty()) {
      llvm::errs() << "error: " << inputFile
                   << " uses ops Kiln cannot compile\n";
      printUnsupportedReport(llvm::errs(), result.unsupported);
    }
    return 1;
  }
  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "error: cannot write '" << outputFile << "': " << error
                 << "\n";
    return 1;
  }
  output->os() << result.output;
  output->keep();
  if (summary && *phase == Phase::Artifact)
    printSummary(result, llvm::outs());
  if (!reportFile.empty()) {
    std::string reportError;
    auto report = openOutputFile(reportFile, &reportError);
    if (!report) {
      llvm::errs() << "error: cannot write '" << reportFile
                   << "': " << reportError << "\n";
      return 1;
    }
    writeReportJson(result, inputFile, report->os());
    report->keep();
  }
  return 0;
}
