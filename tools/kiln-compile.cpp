//===- kiln-compile.cpp - compile an ONNX model into a .kiln artifact -----===//
#include "kiln/Pipeline/Compiler.h"

#include "kiln/Dialect/KilnDialect.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

#include <chrono>

using namespace mlir;
using namespace kiln;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"));
static cl::opt<std::string> target("target", cl::desc("Target: cpu"),
                                   cl::init("cpu"));
static cl::opt<std::string> cpu("cpu",
                                cl::desc("LLVM CPU for --target=cpu (default: "
                                         "native, this machine's CPU)"),
                                cl::init("native"));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Concrete shape of a graph input: name=1x3x224x224"));
static cl::list<std::string>
    frozenInputs("freeze-input",
                 cl::desc("Fix a graph input's value at compile time: "
                          "name=@value.pb (TensorProto)"));
static cl::opt<bool> check("check",
                           cl::desc("Only list the nodes Kiln cannot import; "
                                    "exit 1 if there are any"));
static cl::opt<std::string>
    compileTo("compile-to",
              cl::desc("Stop after a phase and write its IR: graph, fused, "
                       "tiled, kernels, artifact"),
              cl::init("artifact"));
static cl::opt<bool> listOps("list-ops",
                             cl::desc("Print the supported ONNX ops as a "
                                      "Markdown table and exit"));
static cl::opt<int64_t> maxWorkgroups("max-workgroups",
                                      cl::desc("Upper bound on a kernel's grid"),
                                      cl::init(64));
static cl::opt<bool> summary("summary",
                             cl::desc("Print kernels, arena bytes and compile "
                                      "time after compiling"));

static void printSupportedOps() {
  llvm::outs() << "| ONNX op | opsets | notes |\n| --- | --- | --- |\n";
  for (const SupportedOp &op : getSupportedOps())
    llvm::outs() << "| " << op.opType << " | " << op.minOpset << "-"
                 << op.maxOpset << " | " << op.notes << " |\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "Kiln ONNX compiler\n");

  if (listOps) {
    printSupportedOps();
    return 0;
  }
  if (inputFile.empty()) {
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
  CompileRequest request;
  request.modelPath = inputFile;
  request.compile.target = target;
  request.compile.cpu = cpu;
  request.compile.maxWorkgroups = maxWorkgroups;
  request.stopAfter = *phase;
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (failed(parseInputShape(spec, request.import, error))) {
      llvm::errs() << "error: " << error << "\n";
      return 2;
    }
  }

  for (const std::string &spec : frozenInputs) {
    size_t at = spec.find("=@");
    if (at == std::string::npos || at == 0) {
      llvm::errs() << "error: --freeze-input expects name=@file.pb, got '"
                   << spec << "'\n";
      return 2;
    }
    request.import.frozenInputs[spec.substr(0, at)] = spec.substr(at + 2);
  }

  MLIRContext context;
  context.disableMultithreading();
  if (check) {
    context.loadDialect<KilnDialect>();
    auto imported = importOnnxFile(context, inputFile, request.import);
    if (failed(imported))
      return 1;
    if (!imported->unsupported.empty()) {
      printUnsupportedReport(llvm::outs(), imported->unsupported);
      return 1;
    }
    llvm::outs() << "ok: every node of " << inputFile
                 << " is supported\n";
    return 0;
  }

  if (outputFile.empty()) {
    llvm::errs() << "error: no output file (-o)\n";
    return 2;
  }
  request.configurePassManager = [](PassManager &pm) {
    (void)applyPassManagerCLOptions(pm);
  };
  auto start = std::chrono::steady_clock::now();
  CompileResult result;
  if (failed(compileModel(context, request, result))) {
    if (!result.unsupported.empty()) {
      llvm::errs() << "error: " << inputFile << " uses ops Kiln cannot compile\n";
      printUnsupportedReport(llvm::errs(), result.unsupported);
    }
    return 1;
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
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
    llvm::outs() << "kernels: " << result.summary.numDispatches
                 << "\narena: " << result.summary.arenaBytes << " bytes ("
                 << result.summary.unplannedArenaBytes
                 << " without reuse)\nweights: " << result.summary.weightBytes
                 << " bytes\ncompile time: " << llvm::format("%.2f", seconds)
                 << " s\n";
  return 0;
}
