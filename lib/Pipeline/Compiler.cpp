//===- Compiler.cpp - ONNX file → IR text or .kiln artifact ---------------===//
#include "kiln/Pipeline/Compiler.h"

#include "kiln/Pipeline/IRDump.h"
#include "kiln/Target/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

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

LogicalResult kiln::compileModel(MLIRContext &context,
                                 const CompileRequest &request,
                                 CompileResult &result) {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();

  auto imported = importOnnxFile(context, request.modelPath, request.import);
  if (failed(imported))
    return failure();
  if (!imported->unsupported.empty()) {
    result.unsupported = std::move(imported->unsupported);
    return failure();
  }
  OwningOpRef<ModuleOp> module = std::move(imported->module);

  PassManager pm(&context);
  if (request.configurePassManager)
    request.configurePassManager(pm);
  if (!request.dumpIRDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(request.dumpIRDir)) {
      llvm::errs() << "error: cannot create '" << request.dumpIRDir
                   << "': " << ec.message() << "\n";
      return failure();
    }
    if (failed(dumpIR(*module, request.dumpIRDir, "00-import.mlir")))
      return failure();
    pm.addInstrumentation(createIRDumpInstrumentation(request.dumpIRDir));
  }
  if (failed(buildPipeline(pm, request.stopAfter, request.compile)) ||
      failed(pm.run(*module)))
    return failure();

  if (request.stopAfter != Phase::Artifact) {
    llvm::raw_string_ostream os(result.output);
    module->print(os);
    return success();
  }
  CpuTargetOptions cpuOptions;
  cpuOptions.cpu = request.compile.cpu;
  ModuleOp kernels = kernelsModule(*module);
  std::string kernelObject;
  if (kernels) {
    auto object = buildCpuKernelObject(kernels, cpuOptions);
    if (failed(object))
      return failure();
    kernelObject = std::move(*object);
  }
  auto artifact = writeArtifact(*module, request.compile.target, kernelObject,
                                &result.summary);
  if (failed(artifact))
    return failure();
  result.output = std::move(*artifact);
  return success();
}
