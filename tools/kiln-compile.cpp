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


using namespace mlir;
using namespace kiln;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu; cuda[:CHIPS] with CHIPS a comma list of "
                    "sm_80, sm_86, sm_89, sm_90, sm_90a (default sm_90; "
                    "sm_90a alone adds wgmma); "
                    "rocm[:CHIPS] with gfx90a, gfx942 (default gfx942)"),
           cl::init("cpu"));
static cl::opt<std::string> rocmPath(
    "rocm-path",
    cl::desc("For rocm targets: a ROCm install (llvm/bin/ld.lld, "
             "amdgcn/bitcode) (default: $ROCM_PATH, /opt/rocm, then the "
             "layout the build assembled from lld-22 and rocm-device-libs)"),
    cl::init(""));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("CUDA toolkit folder for ptxas and libdevice (default: "
             "$CUDA_HOME, $CUDA_PATH, /usr/local/cuda); 'none' emits PTX for "
             "the driver to compile, with math that needs no libdevice"),
    cl::init(""));
static cl::opt<bool> splatWeights(
    "splat-weights",
    cl::desc("Benchmark artifact: leave float32 weights of 64+ elements out "
             "and let the runtime fill them with 0.01 (outputs are then "
             "meaningless; a large model's artifact stays small)"));
static cl::opt<std::string> cpu("cpu",
                                cl::desc("LLVM CPU for --target=cpu (default: "
                                         "native, this machine's CPU)"),
                                cl::init("native"));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Concrete shape of a graph input: name=1x3x224x224"));
static cl::opt<uint64_t> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("Refuse models with a tensor larger than this many bytes "
             "(default 1 TiB)"),
    cl::init(uint64_t(1) << 40));
static cl::opt<unsigned> maxSubgraphDepth(
    "max-subgraph-depth",
    cl::desc("Refuse models whose subgraphs (If/Loop/Scan bodies) nest "
             "deeper than this (default 16, at most 300)"),
    cl::init(16));
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
static cl::opt<std::string> registerTile(
    "register-tile",
    cl::desc("cpu: register tiles of matmuls and convolutions as ROWSxVECTOR "
             "(rows x floats per vector register; tiles are up to two "
             "vectors wide). Default: 8x16 with AVX-512, 6x8 otherwise"),
    cl::value_desc("RxV"));
static cl::opt<std::string> matrixBlock(
    "matrix-block",
    cl::desc("cuda, rocm: output block of one GPU block of a tensor-core / "
             "MFMA matmul or convolution, as ROWSxCOLUMNS (multiples of 16, "
             "rows up to 128, columns up to 256; used where they divide the "
             "kernel's M and N). 16x16 is "
             "one warp reading global memory; larger blocks stage operands "
             "through shared memory. Default: chosen per kernel"),
    cl::value_desc("RxC"));
static cl::opt<int64_t> workgroupMemoryLimit(
    "workgroup-memory-limit",
    cl::desc("cuda: most shared memory one GPU block may use, in bytes; the "
             "stage pipelines of tensor-core blocks are sized to it. "
             "Default: what every chip of the target allows (227 KiB on "
             "sm_90, 163 KiB on sm_80, 99 KiB on sm_86/sm_89); over 48 KiB "
             "is dynamic shared memory"),
    cl::value_desc("BYTES"), cl::init(0));
static cl::opt<int64_t> wgmmaGroupsInFlight(
    "wgmma-groups-in-flight",
    cl::desc("cuda:sm_90a: groups of wgmma instructions a pipeline stage "
             "leaves running into the next: 1 (default; the stage waits for "
             "the previous stage's) or 0 (each stage waits for its own)"),
    cl::value_desc("N"), cl::init(1));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Type float32 tensors are kept in between ops: f32 (default), "
             "f16 or bf16; ops compute and accumulate in float32, "
             "matmuls on GPUs use tensor cores"),
    cl::init("f32"));
static cl::opt<bool> allowTf32(
    "allow-tf32",
    cl::desc("cuda: run float32 matmuls on tensor cores as TF32 (10-bit "
             "mantissa products, float32 accumulation)"));
/// --split-matmul-k / --split-conv-k / --window-padding-in-place /
/// --patchify-convs / --space-to-depth-convs /
/// --channels-last-conv-weights / --k-major-matmul-weights /
/// --channels-last-activations: GPU
/// targets only unless forced.
enum class GpuDefault { Auto, On, Off };
static auto gpuDefaultValues() {
  return cl::values(
      clEnumValN(GpuDefault::Auto, "auto", "on GPU targets only (default)"),
      clEnumValN(GpuDefault::On, "on",
                 "on every target (the CPU too, to check it)"),
      clEnumValN(GpuDefault::Off, "off", "never"));
}
static cl::opt<GpuDefault> splitMatMulK(
    "split-matmul-k",
    cl::desc("Split float32 matmuls with few outputs and a long K into K "
             "parts summed by a second kernel (kiln-split-matmul-k)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<GpuDefault> splitConvK(
    "split-conv-k",
    cl::desc("Split convolutions (float32, or widened from 16 bits by "
             "--precision) with few outputs and many input channels into "
             "channel parts summed by a second kernel (kiln-split-conv-k)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<GpuDefault> windowPaddingInPlace(
    "window-padding-in-place",
    cl::desc("Depthwise convolutions and pooling read their padding in place "
             "(index checks) instead of from a padded copy of their input"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<bool> convPaddingInPlace(
    "conv-padding-in-place",
    cl::desc("GPU targets: a convolution's zero padding joins its kernel, "
             "whose blocks read the input through it in place, instead of "
             "a padding kernel writing a padded copy (default off: each "
             "stage load then tests a mask)"),
    cl::init(false));
static cl::opt<GpuDefault> patchifyConvs(
    "patchify-convs",
    cl::desc("Convolutions whose windows tile the image (ViT's patch "
             "embedding) as einsums over patches "
             "(kiln-patchify-convs-as-einsums)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<GpuDefault> spaceToDepthConvs(
    "space-to-depth-convs",
    cl::desc("Strided convolutions over few input channels (an image's 3) "
             "as stride-1 ones over space-to-depth blocks "
             "(kiln-space-to-depth-strided-convs; auto: GPU targets at "
             "--precision=f16/bf16 or with --allow-tf32)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<GpuDefault> channelsLastConvWeights(
    "channels-last-conv-weights",
    cl::desc("Store the constant weights of KxK convolutions as "
             "[F][kh][kw][C], read through a transpose that folds into the "
             "kernel (kiln-channels-last-conv-weights)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<GpuDefault> channelsLastActivations(
    "channels-last-activations",
    cl::desc("Compute 2-D convolutions, and the ops between them, on NHWC "
             "activations, with transposes only where a chain of them "
             "starts or ends (kiln-channels-last-activations; auto: GPU "
             "targets, where it adds at most one transpose per two "
             "convolutions; on: always)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<bool> narrowGpuIndices(
    "narrow-gpu-indices",
    cl::desc("32-bit index arithmetic in cuda kernels whose buffers span "
             "under 2 GiB and whose launches have under 2^31 threads "
             "(kiln-narrow-gpu-indices; off by default: fewer integer "
             "instructions, but fewer 128-bit loads and stores)"),
    cl::init(false));
static cl::opt<GpuDefault> kMajorMatMulWeights(
    "k-major-matmul-weights",
    cl::desc("Store the 16-bit constant weights of MatMuls as [N][K], read "
             "through a transpose that folds into the matmul "
             "(kiln-k-major-matmul-weights)"),
    gpuDefaultValues(), cl::init(GpuDefault::Auto));
static cl::opt<std::string>
    dumpIRDir("dump-ir",
              cl::desc("Write the IR after import and after every pass to "
                       "DIR/NN-<pass>.mlir"),
              cl::value_desc("dir"));
static cl::opt<std::string>
    reportFile("report",
               cl::desc("Write a JSON report: per kernel its ONNX nodes, "
                        "FLOPs, bytes, tiling and arena slots"),
               cl::value_desc("file.json"));
static cl::opt<std::string>
    dumpGraphFile("dump-graph",
                  cl::desc("Draw the graph with one cluster per kernel "
                           "(Graphviz DOT)"),
                  cl::value_desc("file.dot"));
static cl::opt<bool> summary("summary",
                             cl::desc("Print kernels, arena bytes and compile "
                                      "time after compiling"));

static void printSupportedOps() {
  llvm::outs()
      << "# Supported ONNX ops\n\n"
         "Generated by `kiln-compile --list-ops` from the importer's op table "
         "(`lib/Import/OnnxOpHandlers.cpp`); do not edit by hand.\n\n"
         "Every op below computes in float32 on the `cpu` target. Inputs that "
         "a node needs at compile time (shapes, axes, pads) must be "
         "initializers, Constant nodes or inputs frozen with "
         "`--freeze-input`.\n\n"
         "| ONNX op | opsets | notes |\n| --- | --- | --- |\n";
  for (const SupportedOp &op : getSupportedOps())
    llvm::outs() << "| " << op.opType << " | " << op.minOpset << "-"
                 << op.maxOpset << " | " << op.notes << " |\n";
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
  request.compile.cudaToolkit = cudaToolkit;
  request.compile.rocmPath = rocmPath;
  request.compile.splatWeights = splatWeights;
  request.compile.maxWorkgroups = maxWorkgroups;
  if (!registerTile.empty()) {
    std::string error;
    if (failed(parseRegisterTile(registerTile, request.compile, error))) {
      llvm::errs() << "error: " << error << "\n";
      return 2;
    }
  }
  if (!matrixBlock.empty()) {
    std::string error;
    if (failed(parseMatrixBlock(matrixBlock, request.compile, error))) {
      llvm::errs() << "error: " << error << "\n";
      return 2;
    }
  }
  if (workgroupMemoryLimit < 0) {
    llvm::errs() << "error: --workgroup-memory-limit must be >= 0, got "
                 << workgroupMemoryLimit << "\n";
    return 2;
  }
  request.compile.workgroupMemoryLimit = workgroupMemoryLimit;
  if (wgmmaGroupsInFlight != 0 && wgmmaGroupsInFlight != 1) {
    llvm::errs() << "error: --wgmma-groups-in-flight must be 0 or 1, got "
                 << wgmmaGroupsInFlight << "\n";
    return 2;
  }
  request.compile.wgmmaGroupsInFlight = wgmmaGroupsInFlight;
  request.compile.precision = precision;
  request.compile.allowTf32 = allowTf32;
  if (splitMatMulK != GpuDefault::Auto)
    request.compile.splitMatMulK = splitMatMulK == GpuDefault::On;
  if (splitConvK != GpuDefault::Auto)
    request.compile.splitConvK = splitConvK == GpuDefault::On;
  if (windowPaddingInPlace != GpuDefault::Auto)
    request.compile.windowPaddingInPlace = windowPaddingInPlace == GpuDefault::On;
  request.compile.convPaddingInPlace = convPaddingInPlace;
  if (patchifyConvs != GpuDefault::Auto)
    request.compile.patchifyConvs = patchifyConvs == GpuDefault::On;
  if (spaceToDepthConvs != GpuDefault::Auto)
    request.compile.spaceToDepthConvs = spaceToDepthConvs == GpuDefault::On;
  if (channelsLastConvWeights != GpuDefault::Auto)
    request.compile.channelsLastConvWeights =
        channelsLastConvWeights == GpuDefault::On;
  if (kMajorMatMulWeights != GpuDefault::Auto)
    request.compile.kMajorMatMulWeights = kMajorMatMulWeights == GpuDefault::On;
  if (channelsLastActivations != GpuDefault::Auto)
    request.compile.channelsLastActivations =
        channelsLastActivations == GpuDefault::On;
  request.compile.narrowGpuIndices = narrowGpuIndices;
  request.stopAfter = *phase;
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (failed(parseInputShape(spec, request.import, error))) {
      llvm::errs() << "error: " << error << "\n";
      return 2;
    }
  }

  request.import.maxTensorBytes = maxTensorBytes;
  if (maxSubgraphDepth > 300) {
    llvm::errs() << "error: --max-subgraph-depth=" << maxSubgraphDepth
                 << " is more than 300, the deepest Kiln parses safely\n";
    return 2;
  }
  request.import.maxSubgraphDepth = int(maxSubgraphDepth);
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
  // Passes run on the kernels in parallel, and so does LLVM's code
  // generation (--mlir-disable-threading turns both off). Printing the IR
  // after each pass reads the whole module while other threads change it:
  // not then.
  if (!dumpIRDir.empty() || printsIRAfterPasses(argc, argv))
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
  request.dumpIRDir = dumpIRDir;
  request.dumpGraphFile = dumpGraphFile;
  request.configurePassManager = [](PassManager &pm) {
    (void)applyPassManagerCLOptions(pm);
  };
  CompileResult result;
  if (failed(compileModel(context, request, result))) {
    if (!result.unsupported.empty()) {
      llvm::errs() << "error: " << inputFile << " uses ops Kiln cannot compile\n";
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
      llvm::errs() << "error: cannot write '" << reportFile << "': "
                   << reportError << "\n";
      return 1;
    }
    writeReportJson(result, inputFile, report->os());
    report->keep();
  }
  return 0;
}
