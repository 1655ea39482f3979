//===- KernelCheck.h - one kernel emulated against its reference -*- C++
//-*-===//
//
// For a `kiln.kernel` function (bufferized and tiled, as
// kiln-contract-with-matrix-cores and kiln-map-kernels-to-gpu get them),
// two versions are JIT-compiled for this CPU: the reference (the same
// function with its forall run as loops) and the emulated GPU kernel (the
// GPU pipeline's gpu.func turned into a CPU function, KernelRewrite.h), run
// block after block on the emulated device (Device.h). Both run on the same
// pseudo-random buffers; every buffer is compared afterwards.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_EMULATEGPU_KERNELCHECK_H
#define KILN_TOOLS_EMULATEGPU_KERNELCHECK_H

#include "MemoryTraffic.h"

#include "kiln/Target/TargetDescription.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::emulator {

/// What kiln-emulate-gpu's flags ask (see there).
struct EmulatorOptions {
  /// The target the kernels are emulated for.
  TargetDescription target;
  int64_t wgmmaGroupsInFlight = 1;
  /// Kernels are tiled tensor code: bufferize them first.
  bool bufferize = false;
  /// Kernels with more GPU threads than this, all blocks together, are
  /// skipped.
  int64_t maxThreads = 200000;
  /// Print the module of both functions before lowering to LLVM.
  bool dump = false;
  /// Check every load, store and cp.async of the emulated kernel against
  /// its bounds.
  bool checkBounds = true;
  /// Count global and workgroup memory use (MemoryTraffic.h); with
  /// memoryTrafficSites, also per load or store.
  bool memoryTraffic = false, memoryTrafficSites = false;
  /// Largest |emulated - reference| / (1 + |reference|).
  double tolerance = 1e-2;
};

/// The memory traffic of the kernels emulated so far (--memory-traffic).
struct EmulationTotals {
  TrafficByKind traffic;
  int64_t kernels = 0;
};

/// Emulates `kernel` against its reference; prints the result and returns
/// whether it matched (kernels that cannot be emulated are skipped).
mlir::LogicalResult checkKernel(mlir::func::FuncOp kernel,
                                const EmulatorOptions &options,
                                EmulationTotals &totals);

} // namespace kiln::emulator

#endif
