//===- CpuTarget.cpp - LLVM-dialect kernels → x86-64 shared object --------===//
#include "kiln/Target/CpuTarget.h"
#include "kiln/cpu_features.h"

#include <algorithm>

#include "mlir/IR/Threading.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#ifndef KILN_LLD_PATH
#define KILN_LLD_PATH "/usr/lib/llvm-22/bin/ld.lld"
#endif

using namespace mlir;
using namespace kiln;

static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CpuTargetOptions &options, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpu = options.cpu;
  std::string features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures featureSet;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      featureSet.AddFeature(feature.first(), feature.second);
    features = featureSet.getString();
  }
  llvm::TargetOptions targetOptions;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

CpuDescription kiln::describeCpu(const CpuTargetOptions &options) {
  std::string error;
  auto machine = createTargetMachine(options, error);
  CpuDescription description{options.cpu, {}, 4};
  if (!machine)
    return description;
  const llvm::MCSubtargetInfo *info = machine->getMCSubtargetInfo();
  description.cpu = info->getCPU().str();
  for (const cpu_features::Feature &feature : cpu_features::kFeatures)
    if (info->checkFeatures(std::string("+") + feature.name))
      description.features.push_back(feature.name);
  if (info->checkFeatures("+avx512f"))
    description.vectorWidth = 16;
  else if (info->checkFeatures("+avx"))
    description.vectorWidth = 8;
  return description;
}

/// Lets LLVM reassociate and contract floating-point math, so that
/// reductions (dot products, sums) vectorize and multiply-adds fuse. NaN and
/// infinity semantics are kept: max/min and masking rely on them.
static void allowReassociation(llvm::Module &module) {
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (llvm::isa<llvm::FPMathOperator>(inst)) {
        inst.setHasAllowReassoc(true);
        inst.setHasAllowContract(true);
      }
}

/// Lets LLVM's vectorizers use whole AVX-512 registers. LLVM prefers
/// 256-bit vectors on AVX-512 CPUs by default (older Xeons lowered their
/// clock for 512-bit code), so the loops it vectorizes (elementwise
/// kernels: GELU's, softmax's polynomials) ran half as wide as the
/// kernels' own 16-lane register tiles, which are 512-bit code already.
static void preferWholeVectors(llvm::Module &module,
                               const llvm::TargetMachine &machine) {
  if (!machine.getMCSubtargetInfo()->checkFeatures("+avx512f"))
    return;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      function.addFnAttr("prefer-vector-width", "512");
}

static void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  preferWholeVectors(module, machine);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

/// A temporary file path that is removed when this object goes away.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

/// Kernels compile in parallel: the module is split into parts (a kernel's
/// entry point and its internal implementation stay together), each part is
/// optimized and compiled to an object in an LLVMContext of its own (a
/// context is not thread-safe) on the MLIR context's threads, and lld
/// links the objects into one shared object. The number of parts depends
/// only on the module, so the artifact is the same on any machine; threads
/// only change how many parts compile at once.
static constexpr unsigned kCodegenParts = 8;

/// Optimizes and compiles one part (LLVM bitcode) to an object file.
static LogicalResult compilePart(StringRef bitcode,
                                 const CpuTargetOptions &options,
                                 llvm::SmallVectorImpl<char> &object,
                                 std::string &error) {
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "kernels"), context);
  if (!module) {
    error = llvm::toString(module.takeError());
    return failure();
  }
  auto machine = createTargetMachine(options, error);
  if (!machine)
    return failure();
  optimize(**module, *machine);
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, stream, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the CPU target cannot emit object files";
    return failure();
  }
  codegen.run(**module);
  return success();
}

FailureOr<std::string>
kiln::buildCpuKernelObject(ModuleOp kernels, const CpuTargetOptions &options) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  kernels->getContext()->appendDialectRegistry(registry);

  std::string error;
  auto machine = createTargetMachine(options, error);
  if (!machine)
    return kernels.emitError("cannot create the CPU target machine for '")
           << options.cpu << "': " << error;

  llvm::LLVMContext llvmContext;
  auto llvmModule = translateModuleToLLVMIR(kernels, llvmContext, "kernels");
  if (!llvmModule)
    return kernels.emitError("cannot translate the kernels to LLVM IR");
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());
  allowReassociation(*llvmModule);

  // Small models (the node tests) have a kernel or two: a part each.
  unsigned entryPoints = llvm::count_if(*llvmModule, [](llvm::Function &f) {
    return !f.isDeclaration() && !f.hasLocalLinkage();
  });
  SmallVector<llvm::SmallString<0>> parts;
  llvm::SplitModule(
      *llvmModule, std::clamp(entryPoints, 1u, kCodegenParts),
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::raw_svector_ostream stream(parts.emplace_back());
        llvm::WriteBitcodeToFile(*part, stream);
      },
      /*PreserveLocals=*/true);
  SmallVector<llvm::SmallVector<char, 0>> objects(parts.size());
  SmallVector<std::string> errors(parts.size());
  if (failed(failableParallelForEachN(
          kernels->getContext(), 0, parts.size(), [&](size_t i) {
            return compilePart(parts[i], options, objects[i], errors[i]);
          }))) {
    for (const std::string &partError : errors)
      if (!partError.empty())
        return kernels.emitError("compiling the kernels failed: ") << partError;
    return kernels.emitError("compiling the kernels failed");
  }

  std::vector<TempFile> objectFiles(objects.size());
  TempFile sharedFile;
  if (llvm::sys::fs::createTemporaryFile("kiln-kernels", "so", sharedFile.path))
    return kernels.emitError("cannot create temporary files for linking");
  llvm::SmallVector<llvm::StringRef> args = {
      KILN_LLD_PATH, "-shared", "--hash-style=gnu",
      "-O2",         "-o",      sharedFile.path};
  for (auto [object, file] : llvm::zip(objects, objectFiles)) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("kiln-kernels", "o", fd, file.path))
      return kernels.emitError("cannot create temporary files for linking");
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(object.data(), object.size());
    args.push_back(file.path);
  }
  // Math functions (expf, erff, ...) resolve against libm at load time.
  if (llvm::sys::fs::exists("/usr/lib/x86_64-linux-gnu/libm.so"))
    args.append({"-L/usr/lib/x86_64-linux-gnu", "-lm"});
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(KILN_LLD_PATH, args, std::nullopt, {}, 0,
                                     0, &linkError);
  if (rc != 0)
    return kernels.emitError("linking the kernel object with ")
           << KILN_LLD_PATH << " failed (exit " << rc << "): " << linkError;
  auto shared = llvm::MemoryBuffer::getFile(sharedFile.path, false, false);
  if (!shared)
    return kernels.emitError("cannot read the linked kernel object");
  return (*shared)->getBuffer().str();
}
