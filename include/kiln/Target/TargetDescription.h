//===- TargetDescription.h - what the target is, in one place ---*- C++ -*-===//
//
// Every fact about the target that a pass, a pipeline or a tool decides by:
// built once from `--target` and the options that refine it, then passed
// around typed. Nothing else parses a target string.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_TARGETDESCRIPTION_H
#define KILN_TARGET_TARGETDESCRIPTION_H

#include "kiln/Pipeline/CompileOptions.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln {

enum class TargetKind { Cpu, Cuda, Rocm };

/// The matrix instructions a target's contractions use.
enum class MatrixInstructions {
  None,    ///< the CPU: vector registers
  MmaSync, ///< NVIDIA warp-level mma.sync (sm_80 and later)
  Wgmma,   ///< NVIDIA warpgroup wgmma (every chip sm_90a)
  Mfma,    ///< AMD MFMA (gfx90a, gfx942)
};

struct TargetDescription {
  TargetKind kind = TargetKind::Cpu;
  /// `--target` as given: the artifact records it.
  std::string name = "cpu";
  /// GPU chips, one device image each (sm_90, gfx942); empty on the CPU.
  std::vector<std::string> chips;
  /// The CPU: the LLVM CPU name ("native": this machine's), what it
  /// resolves to, and the features of kiln/cpu_features.h it enables.
  std::string cpu = "native";
  std::string cpuName;
  std::vector<std::string> cpuFeatures;
  /// Float32 elements of one CPU vector register (16 with AVX-512, 8 with
  /// AVX, 4 otherwise); 0 on GPUs.
  int64_t vectorWidth = 0;
  /// Threads of a warp (NVIDIA 32) or wavefront (AMD 64); 1 on the CPU.
  int64_t warpSize = 1;
  MatrixInstructions matrix = MatrixInstructions::None;
  /// cuda with --allow-tf32: float32 contractions on tensor cores as TF32.
  bool tf32 = false;
  /// Workgroup (shared) memory one GPU block may use, in bytes: on cuda
  /// what every chip allows (dynamic shared memory included) capped by
  /// --workgroup-memory-limit; on rocm the 48 KiB a block declares
  /// statically; 0 on the CPU.
  int64_t workgroupMemoryBytes = 0;
  /// Multiprocessors (compute units) of the target's largest part: a
  /// kernel with fewer blocks leaves some idle. 0 on the CPU.
  int64_t multiprocessors = 0;
  /// rocm: the chip whose ISA the shared lowering assumes (the oldest).
  std::string loweringChip;

  bool isGpu() const { return kind != TargetKind::Cpu; }
  bool isCuda() const { return kind == TargetKind::Cuda; }
  bool isRocm() const { return kind == TargetKind::Rocm; }
  /// "nvidia" or "amd": the matrix instruction vendor, as
  /// kiln-contract-with-matrix-cores and kiln-emulate-gpu name it.
  llvm::StringRef vendor() const { return isRocm() ? "amd" : "nvidia"; }
};

/// The target `options` ask for; an error names the bad target or chip and
/// the supported ones.
mlir::FailureOr<TargetDescription> describeTarget(const CompileOptions &options,
                                                  std::string &error);

} // namespace kiln

#endif
