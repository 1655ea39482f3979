//===- CudaTarget.cpp - the cuda target: chips, toolkit, device images ----===//
#include "kiln/Target/CudaTarget.h"
#include "kiln/Target/ChipList.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;
using namespace kiln;

static constexpr llvm::StringLiteral kSupportedChips[] = {
    "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};

int64_t kiln::cudaWorkgroupMemoryLimit(const CudaTargetSpec &spec) {
  // The CUDA C++ Programming Guide's table of technical specifications
  // per compute capability ("maximum amount of shared memory per thread
  // block"), which cuDeviceGetAttribute's
  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN reports.
  auto limit = [](StringRef chip) -> int64_t {
    if (chip.starts_with("sm_90"))
      return 227 * 1024;
    if (chip == "sm_80")
      return 163 * 1024;
    return 99 * 1024; // sm_86, sm_89
  };
  int64_t bytes = INT64_MAX;
  for (const std::string &chip : spec.chips)
    bytes = std::min(bytes, limit(chip));
  return bytes;
}

int64_t kiln::cudaMultiprocessors(const CudaTargetSpec &spec) {
  auto count = [](StringRef chip) -> int64_t {
    if (chip.starts_with("sm_90"))
      return 132;
    if (chip == "sm_89")
      return 142;
    if (chip == "sm_86")
      return 84;
    return 108; // sm_80
  };
  int64_t most = 0;
  for (const std::string &chip : spec.chips)
    most = std::max(most, count(chip));
  return most;
}

bool kiln::cudaTargetHasWgmma(const CudaTargetSpec &spec) {
  return !spec.chips.empty() &&
         llvm::all_of(spec.chips,
                      [](const std::string &chip) { return chip == "sm_90a"; });
}

bool kiln::isCudaTarget(StringRef target) {
  return target == "cuda" || target.starts_with("cuda:");
}

FailureOr<CudaTargetSpec> kiln::parseCudaTarget(StringRef target,
                                                std::string &error) {
  FailureOr<std::vector<std::string>> chips =
      parseChipList(target, "cuda", "CUDA", kSupportedChips, "sm_90", error);
  if (failed(chips))
    return failure();
  return CudaTargetSpec{std::move(*chips)};
}

static bool isToolkit(StringRef dir) {
  llvm::SmallString<256> ptxas(dir), libdevice(dir);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::can_execute(ptxas) && llvm::sys::fs::exists(libdevice);
}

std::string kiln::findCudaToolkit(StringRef explicitPath) {
  if (explicitPath == "none")
    return "";
  if (!explicitPath.empty())
    return isToolkit(explicitPath) ? explicitPath.str() : std::string();
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var))
      if (isToolkit(dir))
        return dir;
  return isToolkit("/usr/local/cuda") ? "/usr/local/cuda" : std::string();
}

/// Options for `toolkit`'s ptxas: `--split-compile 0` (optimize the
/// kernels on every core; ptxas is most of a model's compile time: BERT-base
/// at batch 32 in float16, 6.4 s -> 3.7 s on 2 cores, the same code) when
/// this ptxas knows it (CUDA 12.1 and later), none otherwise. Probed once
/// per toolkit with `ptxas --help`.
static std::string ptxasOptions(StringRef toolkit) {
  static std::mutex mutex;
  static llvm::StringMap<std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(toolkit);
  if (it != known.end())
    return it->second;
  std::string options;
  llvm::SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::SmallString<128> help;
  if (!llvm::sys::fs::createTemporaryFile("kiln-ptxas-help", "txt", help)) {
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(help),
                                            StringRef(help)};
    StringRef args[] = {ptxas, "--help"};
    if (llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects) == 0)
      if (auto text = llvm::MemoryBuffer::getFile(help))
        if ((*text)->getBuffer().contains("--split-compile"))
          options = "--split-compile 0";
    llvm::sys::fs::remove(help);
  }
  known[toolkit] = options;
  return options;
}

FailureOr<std::vector<GpuImage>> kiln::buildCudaImages(ModuleOp kernels,
                                                       StringRef toolkit) {
  // PTX for the driver must not call libdevice, which only a toolkit has.
  if (toolkit.empty()) {
    SmallVector<std::string> needed;
    kernels.walk([&](LLVM::LLVMFuncOp func) {
      if (func.isExternal() && func.getName().starts_with("__nv_"))
        needed.push_back(func.getName().str());
    });
    if (!needed.empty())
      return kernels.emitError("no CUDA toolkit found (looked in $CUDA_HOME, "
                               "$CUDA_PATH, /usr/local/cuda): the kernels "
                               "need libdevice functions ")
             << llvm::join(needed, ", ")
             << "; install the toolkit or pass --cuda-toolkit=DIR";
  }
  PassManager pm(kernels->getContext(), ModuleOp::getOperationName());
  GpuModuleToBinaryPassOptions options;
  options.compilationTarget = toolkit.empty() ? "isa" : "bin";
  options.toolkitPath = toolkit.str();
  if (!toolkit.empty())
    options.cmdOptions = ptxasOptions(toolkit);
  pm.addPass(createGpuModuleToBinaryPass(options));
  // A crash in LLVM's GPU back end (seen: AMDGPU branch relaxation on a
  // bfloat16 ResNet-18 kernel, LLVM 22.1) becomes a compile error that
  // names a reproducer, instead of killing the compiler.
  llvm::SmallString<128> reproducer;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, reproducer);
  llvm::sys::path::append(reproducer, "kiln-cuda-serialize-crash.mlir");
  pm.enableCrashReproducerGeneration(reproducer);
  if (failed(pm.run(kernels)))
    return failure();
  std::vector<GpuImage> images;
  for (auto binary : kernels.getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!target)
        return binary.emitError("device image for a non-NVVM target");
      GpuImage image;
      image.chip = target.getChip().str();
      image.format = object.getFormat() == gpu::CompilationTarget::Assembly
                         ? "ptx"
                         : "cubin";
      image.data = object.getObject().getValue().str();
      images.push_back(std::move(image));
    }
  }
  return images;
}
