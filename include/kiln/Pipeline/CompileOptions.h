//===- CompileOptions.h - what a compilation is asked for -------*- C++ -*-===//
#ifndef KILN_PIPELINE_COMPILEOPTIONS_H
#define KILN_PIPELINE_COMPILEOPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// The options of one compilation, as the flags of CompileFlags.h give
/// them. Unset optional strategies take their target's default
/// (resolveStrategies in lib/Pipeline).
struct CompileOptions {
  std::string target = "cpu";
  /// LLVM CPU name for the CPU target; "native" means this machine's.
  std::string cpu = "native";
  int64_t maxWorkgroups = 64;
  /// CPU register tiles (kiln-contract-with-vector-registers): rows, and
  /// elements of one vector (tiles are up to two vectors wide); 0 chooses
  /// from the CPU (8 x 16 with AVX-512, 6 x 8 with AVX).
  int64_t registerRows = 0, vectorWidth = 0;
  /// For cuda targets: the toolkit folder given on the command line (empty:
  /// look in $CUDA_HOME, $CUDA_PATH, /usr/local/cuda).
  std::string cudaToolkit;
  /// For rocm targets: a ROCm install given on the command line (empty:
  /// $ROCM_PATH, /opt/rocm, then the layout the build assembled).
  std::string rocmPath;
  /// Storage type of float32 tensors: "f32", "f16" or "bf16"
  /// (kiln-demote-precision); ops compute and accumulate in float32.
  std::string precision = "f32";
  /// cuda: float32 matmuls on tensor cores as TF32 (products of 10-bit
  /// mantissas, float32 accumulation), as PyTorch's allow_tf32.
  bool allowTf32 = false;
  /// GPU targets: the output block (rows x columns) of one GPU block of a
  /// tensor-core / MFMA matmul or convolution; 0 chooses per kernel.
  int64_t matrixBlockRows = 0, matrixBlockCols = 0;
  /// cuda: the most shared memory a GPU block may use, in bytes (0: what
  /// every chip of the target allows; over 48 KiB is dynamic shared
  /// memory). For A/B runs against smaller stage pipelines.
  int64_t workgroupMemoryLimit = 0;
  /// cuda sm_90a (wgmma): groups of warpgroup matrix instructions a stage
  /// leaves running into the next (1), or none (0: each stage waits for
  /// its own). For A/B runs.
  int64_t wgmmaGroupsInFlight = 1;
  /// kiln-split-matmul-k: split float32 matmuls with few outputs and a
  /// long K into parts along K; unset: on for GPU targets only.
  std::optional<bool> splitMatMulK;
  /// kiln-split-conv-k: the same for float32 convolutions with few outputs
  /// and many input channels (parts along the channels).
  std::optional<bool> splitConvK;
  /// Depthwise convolutions and pooling read their padding in place
  /// (kiln-convert-to-linalg's read-window-padding-in-place) instead of
  /// from a padded copy of their input; unset: on for GPU targets only.
  std::optional<bool> windowPaddingInPlace;
  /// A channels-last convolution's zero padding joins its kernel, whose
  /// blocks read the input through it in place (kiln-form-dispatch-regions'
  /// fuse-conv-padding), instead of a padding kernel writing a padded copy;
  /// GPU targets only, off when unset.
  std::optional<bool> convPaddingInPlace;
  /// kiln-patchify-convs-as-einsums: convolutions whose windows tile the
  /// image as einsums over patches; unset: on for every target.
  std::optional<bool> patchifyConvs;
  /// kiln-space-to-depth-strided-convs: strided convolutions over few
  /// input channels (an image's 3) as stride-1 ones over space-to-depth
  /// blocks; unset: on for GPU targets where convolutions use matrix
  /// instructions (16-bit precision, or TF32 on cuda).
  std::optional<bool> spaceToDepthConvs;
  /// kiln-channels-last-conv-weights: constant weights of KxK
  /// convolutions stored [F][kh][kw][C]; unset: on for GPU targets.
  std::optional<bool> channelsLastConvWeights;
  /// kiln-k-major-matmul-weights: 16-bit constant MatMul weights stored
  /// [N][K]; unset: on for GPU targets.
  std::optional<bool> kMajorMatMulWeights;
  /// kiln-channels-last-activations: 2-D convolutions, and the ops
  /// between them, on NHWC activations; transposes only where a chain of
  /// them starts or ends. Unset: on for GPU targets where its trial adds
  /// at most one transpose per two convolutions; true: on every target,
  /// always.
  std::optional<bool> channelsLastActivations;
  /// kiln-narrow-gpu-indices: 32-bit index arithmetic in cuda kernels
  /// whose buffers and launches fit it. Off by default: it saves integer
  /// instructions and registers, but LLVM's load-store vectorizer then
  /// merges fewer neighbouring accesses (docs/targets/cuda.md); a GPU must say
  /// which matters more.
  bool narrowGpuIndices = false;
  /// cpu: kiln-narrow-integer-weights stores float32 weights whose values
  /// are all small integers (dynamically quantized models) as int8 or
  /// int16, widened in the contraction's kernel.
  bool narrowIntegerWeights = true;
  /// cpu: kiln-pack-matmul-weights stores the constant weights of
  /// few-row matmuls as column panels, each one contiguous stream.
  bool packMatMulWeights = true;
  /// cpu with AVX-512 VNNI: kiln-pack-int8-matmul-weights computes matmuls
  /// of uint8 activations by int8 weights as 4-way integer dot products.
  bool int8DotProducts = true;
  /// cpu with AMX-INT8: those matmuls' blocks of 16 rows on AMX tiles.
  bool int8MatrixTiles = true;
  /// Leave large float32 weights out of the artifact (benchmarks only).
  bool splatWeights = false;
};

} // namespace kiln

#endif
