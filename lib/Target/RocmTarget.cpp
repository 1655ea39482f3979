//===- RocmTarget.cpp - the rocm target: chips, device libs, hsaco --------===//
#include "kiln/Target/RocmTarget.h"
#include "kiln/Target/ChipList.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;
using namespace kiln;

// CDNA 2 (MI200) and CDNA 3 (MI300), oldest first.
static constexpr llvm::StringLiteral kSupportedChips[] = {"gfx90a", "gfx942"};

bool kiln::isRocmTarget(StringRef target) {
  return target == "rocm" || target.starts_with("rocm:");
}

FailureOr<RocmTargetSpec> kiln::parseRocmTarget(StringRef target,
                                                std::string &error) {
  FailureOr<std::vector<std::string>> chips =
      parseChipList(target, "rocm", "ROCm", kSupportedChips, "gfx942", error);
  if (failed(chips))
    return failure();
  return RocmTargetSpec{std::move(*chips)};
}

int64_t kiln::rocmComputeUnits(const RocmTargetSpec &spec) {
  int64_t most = 0;
  for (const std::string &chip : spec.chips)
    most = std::max<int64_t>(most, chip == "gfx942" ? 304 : 110);
  return most;
}

std::string kiln::rocmLoweringChip(const RocmTargetSpec &spec) {
  for (StringRef chip : kSupportedChips)
    if (llvm::is_contained(spec.chips, chip.str()))
      return chip.str();
  return spec.chips.front();
}

static bool isRocmLayout(StringRef dir) {
  llvm::SmallString<256> lld(dir), ocml(dir);
  llvm::sys::path::append(lld, "llvm", "bin", "ld.lld");
  llvm::sys::path::append(ocml, "amdgcn", "bitcode", "ocml.bc");
  return llvm::sys::fs::can_execute(lld) && llvm::sys::fs::exists(ocml);
}

/// The layout lib/CMakeLists.txt assembles, next to the tools (bin/../lib)
/// or where the build put it.
static std::vector<std::string> assembledLayouts() {
  std::vector<std::string> dirs;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (!exe.empty()) {
    llvm::SmallString<256> dir(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(dir, "lib", "kiln", "rocm");
    dirs.push_back(dir.str().str());
  }
  dirs.push_back(KILN_ROCM_LAYOUT_DIR);
  return dirs;
}

std::string kiln::findRocmToolkit(StringRef explicitPath,
                                  std::string &searched) {
  std::vector<std::string> candidates;
  if (!explicitPath.empty()) {
    candidates.push_back(explicitPath.str());
  } else {
    if (const char *dir = std::getenv("ROCM_PATH"))
      candidates.push_back(dir);
    candidates.push_back("/opt/rocm");
    for (std::string &dir : assembledLayouts())
      candidates.push_back(std::move(dir));
  }
  for (const std::string &dir : candidates)
    if (isRocmLayout(dir))
      return dir;
  searched = llvm::join(candidates, ", ");
  return "";
}

FailureOr<std::vector<GpuImage>> kiln::buildRocmImages(ModuleOp kernels,
                                                       StringRef toolkit) {
  PassManager pm(kernels->getContext(), ModuleOp::getOperationName());
  GpuModuleToBinaryPassOptions options;
  options.compilationTarget = "bin";
  options.toolkitPath = toolkit.str();
  pm.addPass(createGpuModuleToBinaryPass(options));
  // A crash in LLVM's GPU back end (seen: AMDGPU branch relaxation on a
  // bfloat16 ResNet-18 kernel, LLVM 22.1) becomes a compile error that
  // names a reproducer, instead of killing the compiler.
  llvm::SmallString<128> reproducer;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, reproducer);
  llvm::sys::path::append(reproducer, "kiln-rocm-serialize-crash.mlir");
  pm.enableCrashReproducerGeneration(reproducer);
  if (failed(pm.run(kernels)))
    return failure();
  std::vector<GpuImage> images;
  for (auto binary : kernels.getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = dyn_cast<ROCDL::ROCDLTargetAttr>(object.getTarget());
      if (!target)
        return binary.emitError("device image for a non-ROCDL target");
      GpuImage image;
      image.chip = target.getChip().str();
      image.format = "hsaco";
      image.data = object.getObject().getValue().str();
      images.push_back(std::move(image));
    }
  }
  return images;
}
