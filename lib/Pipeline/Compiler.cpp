//===- Compiler.cpp - ONNX file → IR text or .kiln artifact ---------------===//
#include "kiln/Pipeline/Compiler.h"

#include "kiln/Passes/Passes.h"
#include "kiln/Pipeline/DispatchGraph.h"
#include "kiln/Pipeline/IRDump.h"
#include "kiln/Target/CpuTarget.h"
#include "kiln/Target/CudaTarget.h"
#include "kiln/Target/RocmTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include "llvm/Support/raw_ostream.h"
#include <chrono>

using namespace mlir;
using namespace kiln;

LogicalResult kiln::parseInputShape(StringRef spec, ImportOptions &options,
                                    std::string &error) {
  size_t eq = spec.rfind('=');
  if (eq == StringRef::npos || eq == 0) {
    error = "--input-shape expects name=DxDx..., got '" + spec.str() + "'";
    return failure();
  }
  std::vector<int64_t> dims;
  StringRef rest = spec.drop_front(eq + 1);
  while (!rest.empty()) {
    auto [dim, tail] = rest.split('x');
    int64_t value;
    if (dim.getAsInteger(10, value) || value < 0) {
      error = "--input-shape has an invalid dim '" + dim.str() + "' in '" +
              spec.str() + "'";
      return failure();
    }
    dims.push_back(value);
    rest = tail;
  }
  options.inputShapes[spec.take_front(eq).str()] = dims;
  return success();
}

static ModuleOp kernelsModule(ModuleOp module) {
  for (auto nested : module.getOps<ModuleOp>())
    if (nested.getSymName() == "kernels")
      return nested;
  return nullptr;
}

/// Seconds since `start`.
static double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// --dynamic-batch: the batch chunk `main`'s batched inputs hold (0: none).
static int64_t batchChunkOf(func::FuncOp main) {
  for (BlockArgument arg : main.getArguments())
    if (auto dim = main.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                      attrs::kBatched))
      return cast<RankedTensorType>(arg.getType()).getShape()[dim.getInt()];
  return 0;
}

/// Sets the --input-shape of each of `main`'s batched inputs to its shape
/// with the batch dim at `batch`.
static void setBatch(func::FuncOp main, int64_t batch, ImportOptions &options) {
  for (BlockArgument arg : main.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto dim = main.getArgAttrOfType<IntegerAttr>(i, attrs::kBatched);
    if (!dim)
      continue;
    auto shape =
        llvm::to_vector(cast<RankedTensorType>(arg.getType()).getShape());
    shape[dim.getInt()] = batch;
    auto name = main.getArgAttrOfType<StringAttr>(i, attrs::kName);
    options.inputShapes[name.str()] = {shape.begin(), shape.end()};
  }
}

/// --dynamic-batch: imports the model again at a larger batch and checks
/// that only the batch dims kiln-check-batch-independence finds change.
static LogicalResult checkLargerBatch(MLIRContext &context,
                                      const CompileRequest &request,
                                      ModuleOp chunkModule) {
  auto main = chunkModule.lookupSymbol<func::FuncOp>("main");
  int64_t chunk = batchChunkOf(main);
  if (!chunk)
    return success();
  ImportOptions options = request.import;
  int64_t larger = 2 * chunk + 1;
  setBatch(main, larger, options);
  auto imported = importOnnxFile(context, request.modelPath, options);
  if (failed(imported) || !imported->unsupported.empty())
    return main.emitError() << "--dynamic-batch: the model does not import "
                               "at a batch of "
                            << larger
                            << " (compile with a fixed batch "
                               "instead)";
  auto other = imported->module->lookupSymbol<func::FuncOp>("main");
  return checkBatchDimsAt(main, other, larger);
}

/// --batch-chunks: the model compiled for each other chunk of the batch,
/// each a whole artifact that the main one carries, their weights in
/// `weights`.
static FailureOr<std::vector<std::string>>
compileBatchVariants(MLIRContext &context, const CompileRequest &request,
                     ModuleOp chunkModule, SharedWeights &weights) {
  auto main = chunkModule.lookupSymbol<func::FuncOp>("main");
  std::vector<int64_t> chunks = request.batchChunks;
  llvm::sort(chunks);
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  std::vector<std::string> variants;
  for (int64_t other : chunks) {
    if (other < 1) {
      main.emitError() << "--batch-chunks: a chunk of the batch is at least "
                          "1, not "
                       << other;
      return failure();
    }
    if (other == batchChunkOf(main))
      continue;
    CompileRequest variant = request;
    variant.batchChunks.clear();
    variant.dumpIR = IRDumpOptions();
    variant.dumpGraphFile.clear();
    variant.parentWeights = &weights;
    setBatch(main, other, variant.import);
    CompileResult compiled;
    if (failed(compileModel(context, variant, compiled))) {
      main.emitError() << "--batch-chunks: the model does not compile for a "
                          "batch chunk of "
                       << other;
      return failure();
    }
    variants.push_back(std::move(compiled.output));
  }
  return variants;
}

LogicalResult kiln::compileModel(MLIRContext &context,
                                 const CompileRequest &request,
                                 CompileResult &result) {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();

  // The target is described once; every phase and the artifact step read
  // the description.
  std::string error;
  FailureOr<TargetDescription> target = describeTarget(request.compile, error);
  if (failed(target) || failed(checkCompileOptions(request.compile, error))) {
    llvm::errs() << "error: " << error << "\n";
    return failure();
  }

  auto start = std::chrono::steady_clock::now();
  auto imported = importOnnxFile(context, request.modelPath, request.import);
  if (failed(imported))
    return failure();
  if (!imported->unsupported.empty()) {
    result.unsupported = std::move(imported->unsupported);
    return failure();
  }
  OwningOpRef<ModuleOp> module = std::move(imported->module);
  if (request.import.dynamicBatch &&
      failed(checkLargerBatch(context, request, *module)))
    return failure();
  result.onnxNodes = imported->numNodes;
  result.phaseSeconds.push_back({"import", since(start)});
  std::vector<std::string> batchVariants;
  SharedWeights variantWeights;
  if (!request.batchChunks.empty() && request.stopAfter == Phase::Artifact) {
    start = std::chrono::steady_clock::now();
    auto compiled =
        compileBatchVariants(context, request, *module, variantWeights);
    if (failed(compiled))
      return failure();
    batchVariants = std::move(*compiled);
    result.phaseSeconds.push_back({"batch variants", since(start)});
  }

  unsigned dumpCounter = 0;
  const std::string &dumpDir = request.dumpIR.dir;
  if (!dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir)) {
      llvm::errs() << "error: cannot create '" << dumpDir
                   << "': " << ec.message() << "\n";
      return failure();
    }
    if (request.dumpIR.kernels.empty() &&
        failed(dumpIR(*module, dumpDir, "0000-import.mlir")))
      return failure();
  }
  // A pass that fails says why; this names the pass and the kernel too,
  // so that a failure whose pass said nothing is never a silent exit.
  struct NameFailedPass : public PassInstrumentation {
    void runAfterPassFailed(Pass *pass, Operation *op) override {
      if (pass->getArgument().empty()) // a nesting adaptor: its pass spoke
        return;
      // A check of the model (not of the compiler): its error is the verdict.
      if (pass->getArgument() == "kiln-check-batch-independence")
        return;
      auto symbol =
          op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      op->emitError()
          << "pass '" << pass->getArgument() << "' failed"
          << (symbol ? " on kernel " + symbol.str() : std::string())
          << " (an internal error: report it with --dump-ir output)";
    }
  };
  // One pass manager per phase, so each phase is timed on its own.
  for (Phase phase :
       {Phase::Graph, Phase::Fused, Phase::Tiled, Phase::Kernels}) {
    if (phase > request.stopAfter)
      break;
    start = std::chrono::steady_clock::now();
    PassManager pm(&context);
    if (request.configurePassManager)
      request.configurePassManager(pm);
    pm.addInstrumentation(std::make_unique<NameFailedPass>());
    if (!dumpDir.empty())
      pm.addInstrumentation(
          createIRDumpInstrumentation(request.dumpIR, dumpCounter));
    buildPhasePipeline(pm, phase, request.compile, *target);
    if (failed(pm.run(*module)))
      return failure();
    result.phaseSeconds.push_back({phaseName(phase).str(), since(start)});
    if (phase == Phase::Fused && !request.dumpGraphFile.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream dot(request.dumpGraphFile, ec);
      if (ec) {
        llvm::errs() << "error: cannot write '" << request.dumpGraphFile
                     << "': " << ec.message() << "\n";
        return failure();
      }
      if (failed(writeDispatchGraph(*module, dot)))
        return failure();
    }
  }

  if (request.stopAfter != Phase::Artifact) {
    llvm::raw_string_ostream os(result.output);
    module->print(os);
    return success();
  }
  start = std::chrono::steady_clock::now();
  ModuleOp kernels = kernelsModule(*module);
  ArtifactContents contents;
  contents.target = request.compile.target;
  contents.splatWeights = request.compile.splatWeights;
  contents.batchVariants = std::move(batchVariants);
  if (request.parentWeights) {
    contents.sharedWeights = request.parentWeights;
    contents.weightsInParent = true;
  } else if (!contents.batchVariants.empty()) {
    contents.sharedWeights = &variantWeights;
  }
  if (kernels && target->isCuda()) {
    std::string toolkit = findCudaToolkit(request.compile.cudaToolkit);
    if (toolkit.empty() && !request.compile.cudaToolkit.empty() &&
        request.compile.cudaToolkit != "none") {
      llvm::errs()
          << "error: --cuda-toolkit=" << request.compile.cudaToolkit
          << " holds no bin/ptxas and nvvm/libdevice/libdevice.10.bc\n";
      return failure();
    }
    auto built = buildCudaImages(kernels, toolkit);
    if (failed(built))
      return failure();
    contents.gpuImages = std::move(*built);
  } else if (kernels && target->isRocm()) {
    std::string searched;
    std::string toolkit = findRocmToolkit(request.compile.rocmPath, searched);
    if (toolkit.empty()) {
      llvm::errs() << "error: no ROCm device libraries found (looked in "
                   << searched
                   << " for llvm/bin/ld.lld and amdgcn/bitcode/ocml.bc): "
                      "install rocm-device-libs and lld-22, or pass "
                      "--rocm-path=DIR\n";
      return failure();
    }
    auto built = buildRocmImages(kernels, toolkit);
    if (failed(built))
      return failure();
    contents.gpuImages = std::move(*built);
  } else if (kernels) {
    CpuTargetOptions cpuOptions;
    cpuOptions.cpu = request.compile.cpu;
    auto object = buildCpuKernelObject(kernels, cpuOptions);
    if (failed(object))
      return failure();
    contents.kernelObject = std::move(*object);
    contents.cpu = target->cpuName;
    contents.cpuFeatures = target->cpuFeatures;
  }
  auto artifact = writeArtifact(*module, contents, &result.summary);
  if (failed(artifact))
    return failure();
  result.output = std::move(*artifact);
  result.phaseSeconds.push_back({"artifact", since(start)});
  return success();
}

/// Kernels compiled: launches of identical kernels share one
/// (kiln-deduplicate-kernels).
static size_t compiledKernels(const ArtifactSummary &summary) {
  llvm::StringSet<> names;
  for (const KernelReport &k : summary.kernels)
    names.insert(k.name);
  return names.size();
}

void kiln::writeReportJson(const CompileResult &result, StringRef model,
                           llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 2);
  const ArtifactSummary &s = result.summary;
  json.object([&] {
    json.attribute("model", model);
    json.attribute("onnx_nodes", int64_t(result.onnxNodes));
    json.attribute("kernels", int64_t(s.kernels.size()));
    json.attribute("compiled_kernels", int64_t(compiledKernels(s)));
    json.attribute("arena_bytes", int64_t(s.arenaBytes));
    json.attribute("arena_bytes_without_reuse", int64_t(s.unplannedArenaBytes));
    json.attribute("weight_bytes", int64_t(s.weightBytes));
    json.attributeObject("compile_seconds", [&] {
      for (const auto &[phase, seconds] : result.phaseSeconds)
        json.attribute(phase, seconds);
    });
    json.attributeArray("dispatches", [&] {
      for (const KernelReport &k : s.kernels)
        json.object([&] {
          json.attribute("kernel", k.name);
          json.attributeArray("onnx_nodes", [&] {
            for (const std::string &n : k.nodes)
              json.value(n);
          });
          json.attribute("flops", int64_t(k.flops));
          json.attribute("min_bytes", int64_t(k.bytes));
          json.attribute("workgroups", int64_t(k.workgroups));
          json.attribute("threads", int64_t(k.threads));
          if (k.workgroupMemory)
            json.attribute("workgroup_memory", int64_t(k.workgroupMemory));
          if (k.dynamicWorkgroupMemory)
            json.attribute("dynamic_workgroup_memory",
                           int64_t(k.dynamicWorkgroupMemory));
          if (k.privateMemory)
            json.attribute("thread_private_memory", int64_t(k.privateMemory));
          if (k.tile.size() == 2)
            json.attributeObject("tile", [&] {
              json.attribute("loop", k.tile[0]);
              json.attribute("size", k.tile[1]);
            });
          if (!k.matrixCores.empty())
            json.attribute("matrix_cores", k.matrixCores);
          auto sizes = [&](llvm::StringRef key,
                           llvm::ArrayRef<int64_t> values) {
            if (!values.empty())
              json.attributeArray(key, [&] {
                for (int64_t v : values)
                  json.value(v);
              });
          };
          sizes("matrix_tile", k.matrixTile);
          sizes("warp_tile", k.warpTile);
          sizes("thread_tile", k.threadTile);
          json.attributeArray("arena_slots", [&] {
            for (auto [offset, size] : k.resultSlots)
              json.object([&] {
                json.attribute("offset", int64_t(offset));
                json.attribute("bytes", int64_t(size));
              });
          });
        });
    });
  });
  os << "\n";
}

void kiln::printSummary(const CompileResult &result, llvm::raw_ostream &os) {
  const ArtifactSummary &s = result.summary;
  os << "ONNX nodes: " << result.onnxNodes << "\nkernels: " << s.kernels.size()
     << " launches of " << compiledKernels(s) << " compiled kernels"
     << "\narena: " << s.arenaBytes << " bytes (" << s.unplannedArenaBytes
     << " without reuse)\nweights: " << s.weightBytes << " bytes\n";
  os << "compile time:";
  double total = 0;
  for (const auto &[phase, seconds] : result.phaseSeconds) {
    os << " " << phase << " " << llvm::format("%.2f", seconds) << " s,";
    total += seconds;
  }
  os << " total " << llvm::format("%.2f", total) << " s\n\n";
  // GPU kernels launch blocks of threads; CPU ones run workgroups.
  bool gpu = llvm::any_of(s.kernels,
                          [](const KernelReport &k) { return k.threads > 1; });
  // GPU kernels: the shared memory of a block too ("+dyn": dynamic, over
  // the 48 KiB a block declares statically).
  os << llvm::format("%-36s %12s %12s %11s", "kernel",
                     gpu ? "blocks x thr" : "workgroups", "MFLOP", "KiB moved");
  if (gpu)
    os << llvm::format(" %13s", "smem KiB");
  os << "  ONNX nodes\n";
  for (const KernelReport &k : s.kernels) {
    std::string nodes = llvm::join(k.nodes, ", ");
    if (nodes.size() > 60)
      nodes = nodes.substr(0, 57) + "...";
    std::string grid = std::to_string(k.workgroups);
    if (gpu)
      grid += " x " + std::to_string(k.threads);
    os << llvm::format("%-36s %12s %12.3f %11.1f", k.name.substr(0, 36).c_str(),
                       grid.c_str(), double(k.flops) / 1e6,
                       double(k.bytes) / 1024.0);
    if (gpu) {
      std::string shared = "-";
      if (k.workgroupMemory)
        shared = llvm::formatv("{0:F1}{1}", k.workgroupMemory / 1024.0,
                               k.dynamicWorkgroupMemory ? " +dyn" : "");
      os << llvm::format(" %13s", shared.c_str());
    }
    os << "  " << nodes << "\n";
  }
}
