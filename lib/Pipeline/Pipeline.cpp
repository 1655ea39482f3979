//===- Pipeline.cpp - the compiler's phases and their passes --------------===//
#include "kiln/Pipeline/Pipeline.h"

#include "kiln/Passes/Passes.h"
#include "kiln/Target/CpuTarget.h"
#include "kiln/Target/CudaTarget.h"
#include "kiln/Target/RocmTarget.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSwitch.h"

#include <mutex>

using namespace mlir;
using namespace kiln;

std::optional<Phase> kiln::parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("graph", Phase::Graph)
      .Case("fused", Phase::Fused)
      .Case("tiled", Phase::Tiled)
      .Case("kernels", Phase::Kernels)
      .Case("artifact", Phase::Artifact)
      .Default(std::nullopt);
}

llvm::StringRef kiln::phaseName(Phase phase) {
  switch (phase) {
  case Phase::Graph:
    return "graph";
  case Phase::Fused:
    return "fused";
  case Phase::Tiled:
    return "tiled";
  case Phase::Kernels:
    return "kernels";
  case Phase::Artifact:
    return "artifact";
  }
  llvm_unreachable("unknown phase");
}

void kiln::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // Serializing GPU modules translates them to LLVM IR in-process.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<KilnDialect>();
}

static const char *kBufferize =
    "eliminate-empty-tensors,empty-tensor-to-alloc-tensor,"
    "one-shot-bufferize,canonicalize,";

/// The CPU's register tile: rows x elements of one vector register, from
/// the options or chosen for the CPU: 8 x 16 with AVX-512 (16 accumulators
/// of two vectors per row), 6 x 8 elsewhere (12 of AVX's 16 registers).
/// As the options of kiln-tile-and-distribute and
/// kiln-contract-with-vector-registers, which must agree.
static std::string cpuRegisterTile(const CompileOptions &options) {
  int64_t width = options.vectorWidth > 0
                      ? options.vectorWidth
                      : cpuVectorWidth(CpuTargetOptions{options.cpu});
  int64_t rows = options.registerRows > 0 ? options.registerRows
                 : width >= 16            ? 8
                                          : 6;
  return "register-rows=" + std::to_string(rows) +
         " vector-width=" + std::to_string(width);
}

static std::string cpuKernelsPipeline(const CompileOptions &options) {
  // cse after bufferization: a padded tile written into the output leaves
  // a copy of the output's tile onto an identical view of itself, which
  // canonicalize folds once the two views are one value.
  return std::string("builtin.module(func.func(kiln-decompose-pads),") +
         kBufferize + "cse,canonicalize,"
         "func.func(kiln-map-forall-to-workgroups),"
         "func.func(kiln-expand-memref-copies),"
         "func.func(kiln-contract-with-vector-registers{" +
         cpuRegisterTile(options) + "}),"
         "buffer-deallocation-pipeline,"
         "func.func(scf-forall-to-for),func.func(convert-linalg-to-loops),"
         // Inline polynomials instead of libm calls, so that LLVM
         // vectorizes softmax, GELU and sigmoid loops.
         "func.func(kiln-approximate-math{functions=math.exp,math.erf,"
         "math.tanh}),"
         // bfloat16 rounding without a libcall (__truncsfbf2).
         "kiln-expand-bfloat16-casts,"
         "expand-strided-metadata,lower-affine,convert-vector-to-llvm,"
         "finalize-memref-to-llvm,"
         "convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,"
         "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
         "reconcile-unrealized-casts,kiln-add-cpu-kernel-abi,canonicalize)";
}

std::string kiln::gpuBufferizePasses() {
  return std::string(kBufferize) +
         "func.func(kiln-expand-memref-copies),"
         "func.func(kiln-promote-temporaries-to-stack),"
         "buffer-deallocation-pipeline";
}

std::string kiln::gpuThreadMappingPasses(llvm::StringRef matrixArch,
                                         int64_t lanes, bool tf32,
                                         int64_t workgroupMemoryBytes,
                                         bool wgmma,
                                         int64_t wgmmaGroupsInFlight) {
  std::string workgroupMemory =
      " workgroup-memory-bytes=" + std::to_string(workgroupMemoryBytes);
  return "func.func(kiln-contract-with-matrix-cores{arch=" + matrixArch.str() +
         (tf32 ? " tf32=true" : "") +
         (wgmma ? " wgmma=true wgmma-groups-in-flight=" +
                      std::to_string(wgmmaGroupsInFlight)
                : "") +
         workgroupMemory +
         "}),"
         "func.func(kiln-contract-with-thread-tiles),"
         "func.func(kiln-distribute-rows-to-lanes{lanes=" +
         std::to_string(lanes) +
         "}),"
         "func.func(kiln-distribute-copies-to-threads),"
         "func.func(convert-linalg-to-loops),"
         "kiln-map-kernels-to-gpu{warp-size=" +
         std::to_string(lanes) + workgroupMemory + "},"
         "gpu.module(gpu.func(kiln-group-thread-accesses))";
}

/// What both GPU targets do to tiled kernels: bufferize, keep small
/// temporaries on the stack, give each row-reduction row to the lanes of a
/// warp, and make every kernel a gpu.func of one gpu.module.
static std::string gpuKernelsPrefix(llvm::StringRef matrixArch,
                                    int64_t lanes, bool tf32,
                                    int64_t workgroupMemoryBytes,
                                    bool wgmma = false,
                                    int64_t wgmmaGroupsInFlight = 1) {
  return "builtin.module(" + gpuBufferizePasses() + "," +
         gpuThreadMappingPasses(matrixArch, lanes, tf32,
                                workgroupMemoryBytes, wgmma,
                                wgmmaGroupsInFlight) +
         ",";
}

/// The workgroup memory a block may use on the GPU target: on cuda what
/// every chip of the target allows a block (163 KiB on sm_80, 227 on
/// sm_90; buffers over 48 KiB become dynamic shared memory), capped by
/// --workgroup-memory-limit; on rocm the 48 KiB a block declares
/// statically.
static int64_t gpuWorkgroupMemory(const CompileOptions &options) {
  std::string error;
  FailureOr<CudaTargetSpec> spec = parseCudaTarget(options.target, error);
  if (!isCudaTarget(options.target) || failed(spec))
    return kStaticWorkgroupBytes;
  int64_t workgroupMemory = cudaWorkgroupMemoryLimit(*spec);
  if (options.workgroupMemoryLimit > 0)
    workgroupMemory = std::min(workgroupMemory, options.workgroupMemoryLimit);
  return workgroupMemory;
}

/// Whether every chip of a cuda target has warpgroup matrix instructions
/// (sm_90a): the tiling then takes 128x256 blocks and code generation
/// wgmma.
static bool targetHasWgmma(const CompileOptions &options) {
  std::string error;
  FailureOr<CudaTargetSpec> spec = parseCudaTarget(options.target, error);
  return succeeded(spec) && cudaTargetHasWgmma(*spec);
}

/// The gpu.module lowered to NVVM with one target per chip; serialization
/// (ptxas) is the artifact step. Without a CUDA toolkit, math is
/// approximated so that no libdevice function is needed.
static std::string cudaKernelsPipeline(const CompileOptions &options) {
  std::string error;
  bool toolkit = !findCudaToolkit(options.cudaToolkit).empty();
  FailureOr<CudaTargetSpec> spec = parseCudaTarget(options.target, error);
  int64_t workgroupMemory = gpuWorkgroupMemory(options);
  bool wgmma = targetHasWgmma(options);
  std::string pipeline =
      gpuKernelsPrefix("nvidia", 32, options.allowTf32, workgroupMemory,
                       wgmma, options.wgmmaGroupsInFlight) +
      "kiln-dynamic-workgroup-memory," +
      (options.narrowGpuIndices ? "kiln-narrow-gpu-indices," : "") +
      "gpu.module(gpu.func(kiln-hoist-static-allocas),"
      "expand-strided-metadata,lower-affine,kiln-convert-nvgpu-to-nvvm," +
      (toolkit ? "" : "kiln-approximate-math,") +
      "convert-scf-to-cf,"
      "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}," +
      // wgmma.mma_async has no LLVM intrinsic: it becomes inline PTX.
      (wgmma ? "convert-nvvm-to-llvm," : "") +
      "kiln-extern-dynamic-shared-memory" +
      (toolkit ? "" : ",kiln-libdevice-to-intrinsics") + "),";
  // sm_90 needs PTX 8.0; the same ISA version serves every chip we support.
  for (const std::string &chip : spec->chips)
    pipeline += "nvvm-attach-target{chip=" + chip + " features=+ptx80 O=3},";
  return pipeline + "reconcile-unrealized-casts,canonicalize)";
}

/// The gpu.module lowered to ROCDL (math through the ROCm device
/// libraries, linked at serialization) with one target per chip. Code
/// object v5: what ROCm 6 runtimes load by default.
static std::string rocmKernelsPipeline(const CompileOptions &options) {
  std::string error;
  FailureOr<RocmTargetSpec> spec = parseRocmTarget(options.target, error);
  std::string pipeline =
      gpuKernelsPrefix("amd", 64, /*tf32=*/false, kStaticWorkgroupBytes) +
      "gpu.module(gpu.func(kiln-hoist-static-allocas),"
      "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-amdgpu-to-rocdl{chipset=" + rocmLoweringChip(*spec) + "}),"
      // Before the gpu lowering, whose generic math patterns may pick
      // llvm.intr.tanh & co., which the AMDGPU backend cannot select.
      "convert-math-to-rocdl{chipset=" + rocmLoweringChip(*spec) + "},"
      "gpu.module(convert-gpu-to-rocdl{chipset=" +
      rocmLoweringChip(*spec) +
      " use-bare-ptr-memref-call-conv=1 runtime=HIP},"
      "llvm.func(kiln-allocas-to-private-address-space)),";
  for (const std::string &chip : spec->chips)
    pipeline += "rocdl-attach-target{chip=" + chip + " abi=500 O=3},";
  return pipeline + "reconcile-unrealized-casts,canonicalize)";
}

/// The passes of each phase as textual pipelines on the top-level module, so
/// that `--mlir-print-ir-after-all` and a lit test can name every step. Each
/// function pass gets its own `func.func(...)` so that it finishes on every
/// function before the next pass starts (one `--dump-ir` file per pass).
static std::string phasePipeline(Phase phase, const CompileOptions &options) {
  bool cuda = isCudaTarget(options.target);
  bool rocm = isRocmTarget(options.target);
  bool windowPaddingInPlace = options.windowPaddingInPlace.value_or(cuda || rocm);
  // Off unless asked: each stage load then tests a mask (about 5 more
  // SASS instructions a copy), which issue-bound convolution loops may
  // pay more for than the padding kernel costs (docs/gpu.md).
  bool convPaddingInPlace =
      (cuda || rocm) && options.convPaddingInPlace.value_or(false);
  // 128x256 matrix blocks pay on warpgroup instructions alone
  // (kiln-tile-and-distribute's widestMatrixColumns says why).
  bool wideMatrixBlocks = cuda && targetHasWgmma(options);
  switch (phase) {
  case Phase::Graph:
    // Strided convolutions over an image's channels as space-to-depth
    // ones where matrix instructions would compute them: on float32
    // thread tiles the blocks' zero weights would only add work.
    return std::string("func.func(canonicalize),func.func(cse),"
                       "func.func(kiln-gather-before-transpose),"
                       "func.func(kiln-recognize-layer-norm),"
                       "func.func(kiln-recognize-activations),"
                       "func.func(kiln-conv-columns-as-rows),") +
           // GPU targets keep a one-row Gemm's weights N x K: a warp per
           // output reads its row.
           (cuda || rocm ? "func.func(kiln-transpose-weights{gpu=true}),"
                         : "func.func(kiln-transpose-weights),") +
           (options.spaceToDepthConvs.value_or(
                (cuda || rocm) &&
                (options.precision != "f32" || (cuda && options.allowTf32)))
                ? "func.func(kiln-space-to-depth-strided-convs),"
                : "") +
           (options.precision == "f32"
                ? ""
                : "func.func(kiln-demote-precision{precision=" +
                      options.precision + "}),") +
           "func.func(kiln-compute-f16-in-f32)";
  case Phase::Fused:
    // On the CPU, attention as one kernel, whose workgroups each take
    // whole heads (the GPU kernels would give each thread a whole row of
    // it). Depthwise convolutions keep their padding: a CPU workgroup pads
    // its channels once, GPU kernels read the padding in place
    // (read-window-padding-in-place below).
    // On GPUs, transposes read by matmuls (attention's heads) folded into
    // them, and short deep matmuls and convolutions in parts along K (BERT
    // and ResNet-50 at batch 1).
    // Patch embeddings as einsums first: a transpose after one (ViT's
    // flatten and transpose) then folds into it.
    return std::string(options.patchifyConvs.value_or(cuda || rocm)
                           ? "func.func(kiln-patchify-convs-as-einsums),"
                           : "") +
           // Before the fold that makes its transposes permuted einsums.
           (options.kMajorMatMulWeights.value_or(cuda || rocm)
                ? "func.func(kiln-k-major-matmul-weights),"
                : "") +
           (cuda || rocm
                ? "func.func(kiln-fold-transposes-into-contractions),"
                : "") +
           (options.splitMatMulK.value_or(cuda || rocm)
                           ? "func.func(kiln-split-matmul-k),"
                           : "") +
           // GPU kernels that pad a depthwise input inside would pad a
           // copy of every thread's tile.
           "func.func(kiln-split-conv-padding{split-depthwise=" +
           ((cuda || rocm) && !windowPaddingInPlace ? "true" : "false") +
           "}),func.func(kiln-split-pointwise-conv-stride)," +
           // After both splits above (it moves their pads and slices to
           // NHWC) and before split-K, which splits either layout.
           // Forced on (--channels-last-activations=on), every convolution
           // even where it adds more transposes than its trial allows.
           (options.channelsLastActivations.value_or(cuda || rocm)
                ? std::string("func.func(kiln-channels-last-activations") +
                      (options.channelsLastActivations.value_or(false)
                           ? "{min-convs-per-transpose=0}),"
                           : "),")
                : "") +
           // After both splits above: the convolutions it splits have no
           // padding and strided 1x1 ones are stride 1.
           (options.splitConvK.value_or(cuda || rocm)
                ? "func.func(kiln-split-conv-k),"
                : "") +
           // After split-K, whose grouped convolutions keep their layout.
           (options.channelsLastConvWeights.value_or(cuda || rocm)
                ? "func.func(kiln-channels-last-conv-weights),"
                : "") +
           "func.func(kiln-move-reshapes-after-elementwise),"
           // GPU blocks read a convolution's padding in place.
           "func.func(kiln-form-dispatch-regions" +
           (!(cuda || rocm)        ? "{fuse-attention=true}"
            : convPaddingInPlace ? "{fuse-conv-padding=true}"
                                 : "") +
           "),func.func(canonicalize)";
  case Phase::Tiled:
    return "kiln-outline-dispatches{target=" + options.target + "},"
           "builtin.module(kiln-convert-to-linalg" +
           std::string(cuda || rocm ? "{flatten-rows-below=0" : "{") +
           " read-window-padding-in-place=" +
           (windowPaddingInPlace ? "true" : "false") +
           (cuda || rocm ? " concat-by-element=true" : "") +
           "},canonicalize,cse,"
           "func.func(kiln-fold-expand-shapes-into-consumers),"
           "func.func(kiln-fuse-elementwise-producers),"
           "func.func(kiln-tile-and-distribute{max-workgroups=" +
           std::to_string(options.maxWorkgroups) +
           (cuda || rocm ? "" : " " + cpuRegisterTile(options)) +
           (rocm ? " min-block-threads=64" : "") +
           (cuda || rocm ? " gpu=true thread-blocks=true matrix-tile=16"
                           " matrix-block-rows=" +
                               std::to_string(options.matrixBlockRows) +
                               " matrix-block-cols=" +
                               std::to_string(options.matrixBlockCols) +
                               " workgroup-memory-bytes=" +
                               std::to_string(gpuWorkgroupMemory(options))
                         : "") +
           (wideMatrixBlocks ? " wide-matrix-blocks=true" : "") +
           (cuda && options.allowTf32 ? " matrix-f32=true" : "") +
           "}),canonicalize,cse)";
  case Phase::Kernels:
    // Identical kernels (repeated layers) first become one, so that each
    // is generated and compiled once.
    return "kiln-deduplicate-kernels," +
           (cuda   ? cudaKernelsPipeline(options)
            : rocm ? rocmKernelsPipeline(options)
                   : cpuKernelsPipeline(options));
  case Phase::Artifact:
    return "";
  }
  llvm_unreachable("unknown phase");
}

LogicalResult kiln::buildPhasePipeline(OpPassManager &pm, Phase phase,
                                       const CompileOptions &options) {
  // The textual pipelines below name passes through the global registry.
  static std::once_flag registered;
  std::call_once(registered, [] {
    registerAllPasses();
    registerKilnPasses();
  });
  std::string error;
  if (isCudaTarget(options.target)) {
    if (failed(parseCudaTarget(options.target, error))) {
      llvm::errs() << "error: " << error << "\n";
      return failure();
    }
  } else if (isRocmTarget(options.target)) {
    if (failed(parseRocmTarget(options.target, error))) {
      llvm::errs() << "error: " << error << "\n";
      return failure();
    }
  } else if (options.target != "cpu") {
    llvm::errs() << "error: unknown target '" << options.target
                 << "' (supported: cpu, cuda, cuda:sm_80,sm_90,..., rocm, "
                    "rocm:gfx90a,gfx942)\n";
    return failure();
  }
  if (options.precision != "f32" && options.precision != "f16" &&
      options.precision != "bf16") {
    llvm::errs() << "error: unknown precision '" << options.precision
                 << "' (f32, f16, bf16)\n";
    return failure();
  }
  std::string pipeline = phasePipeline(phase, options);
  llvm::raw_string_ostream errorStream(error);
  if (!pipeline.empty() && failed(parsePassPipeline(pipeline, pm, errorStream))) {
    llvm::errs() << "internal error: bad pipeline for phase "
                 << phaseName(phase) << ": " << error << "\n";
    return failure();
  }
  return success();
}
