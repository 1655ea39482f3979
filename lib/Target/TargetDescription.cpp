//===- TargetDescription.cpp - what the target is, in one place -----------===//
#include "kiln/Target/TargetDescription.h"

#include "kiln/Passes/Passes.h"
#include "kiln/Target/CpuTarget.h"
#include "kiln/Target/CudaTarget.h"
#include "kiln/Target/RocmTarget.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

static TargetDescription describeCpuTarget(const CompileOptions &options) {
  TargetDescription target;
  target.cpu = options.cpu;
  CpuDescription cpu = kiln::describeCpu(CpuTargetOptions{options.cpu});
  target.cpuName = cpu.cpu;
  target.cpuFeatures = cpu.features;
  target.vectorWidth = cpu.vectorWidth;
  return target;
}

static TargetDescription describeCuda(const CompileOptions &options,
                                      const CudaTargetSpec &spec) {
  TargetDescription target;
  target.kind = TargetKind::Cuda;
  target.chips = spec.chips;
  target.warpSize = 32;
  target.matrix = cudaTargetHasWgmma(spec) ? MatrixInstructions::Wgmma
                                           : MatrixInstructions::MmaSync;
  target.tf32 = options.allowTf32;
  target.workgroupMemoryBytes = cudaWorkgroupMemoryLimit(spec);
  if (options.workgroupMemoryLimit > 0)
    target.workgroupMemoryBytes =
        std::min(target.workgroupMemoryBytes, options.workgroupMemoryLimit);
  target.multiprocessors = cudaMultiprocessors(spec);
  return target;
}

static TargetDescription describeRocm(const RocmTargetSpec &spec) {
  TargetDescription target;
  target.kind = TargetKind::Rocm;
  target.chips = spec.chips;
  target.warpSize = 64;
  target.matrix = MatrixInstructions::Mfma;
  target.workgroupMemoryBytes = kStaticWorkgroupBytes;
  target.multiprocessors = rocmComputeUnits(spec);
  target.loweringChip = rocmLoweringChip(spec);
  return target;
}

FailureOr<TargetDescription> kiln::describeTarget(const CompileOptions &options,
                                                  std::string &error) {
  FailureOr<TargetDescription> target = failure();
  if (options.target == "cpu") {
    target = describeCpuTarget(options);
  } else if (isCudaTarget(options.target)) {
    FailureOr<CudaTargetSpec> spec = parseCudaTarget(options.target, error);
    if (succeeded(spec))
      target = describeCuda(options, *spec);
  } else if (isRocmTarget(options.target)) {
    FailureOr<RocmTargetSpec> spec = parseRocmTarget(options.target, error);
    if (succeeded(spec))
      target = describeRocm(*spec);
  } else {
    error = "unknown target '" + options.target +
            "' (supported: cpu, cuda, cuda:sm_80,sm_90,..., rocm, "
            "rocm:gfx90a,gfx942)";
  }
  if (succeeded(target))
    target->name = options.target;
  return target;
}
