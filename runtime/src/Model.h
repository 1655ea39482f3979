//===- Model.h - a loaded artifact ------------------------------*- C++ -*-===//
//
// What a loaded and validated artifact holds, as the sessions and devices
// read it. Nothing here crosses the C API: the C handles wrap these classes
// and Api.cpp catches every exception.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "KernelObject.h"
#include "Memory.h"
#include "kiln/runtime.h"
#include "kiln/shape_guards.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace fb {
struct Model;
struct TensorInfo;
} // namespace fb

struct TensorDesc {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
  uint32_t buffer;
  /// Dim `batchDim` is the batch: a run takes any count of batch elements,
  /// in chunks of Model::batchChunk().
  bool batched = false;
  size_t batchDim = 0;

  /// A batched tensor's elements as `batchBlocks()` blocks (one per index
  /// of the dims before the batch dim), each of one row of
  /// `batchRowBytes()` per batch element.
  uint64_t batchBlocks() const {
    uint64_t blocks = 1;
    for (size_t d = 0; d < batchDim; ++d)
      blocks *= uint64_t(shape[d]);
    return blocks;
  }
  uint64_t batchRowBytes() const {
    uint64_t perBatch = batchBlocks() * uint64_t(shape[batchDim]);
    return perBatch ? bytes / perBatch : 0;
  }
};

/// A run-time check: its tensor's bytes are all zero after a run whose
/// inputs are valid, else the run fails with `message`.
struct CheckDesc {
  std::string message;
  TensorDesc tensor;
};

struct BufferDesc {
  enum Kind { Arena, Weight, Splat };
  Kind kind;
  uint64_t offset;
  uint64_t size;
  uint32_t splatBits; // kind Splat: the value repeated over its bytes
  bool isWeight() const { return kind != Arena; }
};

struct DispatchDesc {
  std::string kernel;
  KernelObject::KernelFn fn;
  std::vector<uint32_t> bindings;
  uint32_t workgroups;
  std::vector<std::string> nodes;
  std::vector<const char *> nodePtrs; // for kiln_dispatch_info
  uint64_t flops;
  uint32_t threads; // per block, GPU targets
  /// Bytes of dynamic shared memory per block (cuda kernels over 48 KiB).
  uint32_t dynamicWorkgroupMemory;
  /// What the kernel writes; name: the ONNX value it holds, or "".
  std::vector<TensorDesc> results;
};

/// Device code for one GPU chip; the bytes live in the artifact.
struct GpuImageDesc {
  std::string chip;   // "sm_90"
  std::string format; // "cubin" or "ptx" (cuda), "hsaco" (rocm)
  const uint8_t *data;
  size_t size;
};

/// A loaded and fully validated artifact. Immutable after load().
class Model {
public:
  /// Takes ownership of `bytes` (64-byte aligned) and validates them.
  kiln_status load(AlignedBytes bytes, size_t size);

  /// Checks dispatch `d` (called `label` in errors) against the signature
  /// its kernel was compiled with: as many bindings, each buffer as large
  /// as the kernel reaches, and the workgroup count. The CPU's signatures
  /// are in the kernel object, a GPU image's in the image (GpuExecutor).
  kiln_status checkSignature(const DispatchDesc &d,
                             const KernelObject::Signature &signature,
                             const std::string &label) const;

  const std::string &producer() const { return producer_; }
  const std::string &target() const { return target_; }
  /// CPU artifacts: the LLVM CPU and the features the kernels need.
  const std::string &cpu() const { return cpu_; }
  const std::vector<std::string> &cpuFeatures() const { return cpuFeatures_; }
  /// The same, comma-separated.
  const std::string &cpuFeatureList() const { return cpuFeatureList_; }
  /// "sm_80 cubin, sm_90 cubin": the GPU images, for kiln_model_gpu_images.
  const std::string &gpuImageList() const { return gpuImageList_; }
  uint64_t arenaSize() const { return arenaSize_; }
  const uint8_t *weights() const { return weights_; }
  uint64_t weightsSize() const { return weightsSize_; }
  /// A batch variant whose weights are those of the model carrying it.
  bool weightsInCarrier() const { return weightsInCarrier_; }
  /// Bytes of the area holding splat weights (benchmark artifacts).
  uint64_t splatSize() const { return splatSize_; }
  /// True for artifacts compiled for an NVIDIA GPU ("cuda:...").
  bool isCuda() const { return target_.rfind("cuda", 0) == 0; }
  /// True for artifacts compiled for an AMD GPU ("rocm:...").
  bool isRocm() const { return target_.rfind("rocm", 0) == 0; }
  bool isGpu() const { return isCuda() || isRocm(); }
  const std::vector<GpuImageDesc> &gpuImages() const { return gpuImages_; }
  const std::vector<BufferDesc> &buffers() const { return buffers_; }
  const std::vector<TensorDesc> &inputs() const { return inputs_; }
  const std::vector<TensorDesc> &outputs() const { return outputs_; }
  const std::vector<DispatchDesc> &dispatches() const { return dispatches_; }
  const std::vector<CheckDesc> &checks() const { return checks_; }
  /// Shape-like inputs the runtime checks before each run.
  const std::vector<ShapeGuardDesc> &shapeGuards() const {
    return shapeGuards_;
  }
  /// The guards as kiln_model_shape_guards describes them.
  const std::string &shapeGuardList() const { return shapeGuardList_; }
  /// True when a shape guard reads input `index`.
  bool isGuardedInput(size_t index) const;
  /// Dynamic batch: the batch elements the kernels run at once (the
  /// batched tensors' leading dim); 0 for a fixed batch.
  int64_t batchChunk() const { return batchChunk_; }
  /// Dynamic batch: the same model's kernels for other chunks of the
  /// batch, each a whole loaded artifact; empty when it has none.
  const std::vector<std::shared_ptr<const Model>> &batchVariants() const {
    return batchVariants_;
  }

  /// Index of the input/output called `name`, or -1.
  int findInput(const std::string &name) const;
  int findOutput(const std::string &name) const;

private:
  kiln_status verify(const uint8_t *data, size_t size);
  /// The batch chunk, checked against every batched tensor.
  kiln_status readBatchChunk(const fb::Model &m);
  /// Loads each batch variant, checked to be this model at another chunk.
  kiln_status readBatchVariants(const fb::Model &m);
  /// Fails unless `variant` has this model's target, inputs and outputs,
  /// their shapes differing in the batch dim alone, at a chunk of its own.
  kiln_status checkBatchVariant(const Model &variant) const;
  /// Compares the SHA-256 of each section of the verified FlatBuffer
  /// [data, data + size) and the `tail` bytes after it with the `count`
  /// digests the file stores.
  kiln_status checkDigests(const uint8_t *data, size_t size, size_t tail,
                           const uint8_t *digests, uint32_t count);
  /// The weights: inside the FlatBuffer, the `tail` bytes after it from
  /// the next 64-byte boundary on (kiln/artifact_digest.h), or a batch
  /// variant's carrier's.
  kiln_status readWeights(const fb::Model &m, const uint8_t *data, size_t size,
                          size_t tail);
  kiln_status readBuffers(const fb::Model &m, uint64_t weightsSize);
  kiln_status readTensor(const fb::TensorInfo *t, const std::string &label,
                         TensorDesc &d);
  kiln_status readTensors(const fb::Model &m, bool isInput);
  kiln_status readChecks(const fb::Model &m);
  kiln_status readShapeGuards(const fb::Model &m);
  /// Reads the CPU and its features; refuses a CPU artifact this CPU
  /// cannot run.
  kiln_status readCpu(const fb::Model &m);
  kiln_status readDispatches(const fb::Model &m);
  kiln_status readGpuImages(const fb::Model &m);

  AlignedBytes bytes_;
  std::string producer_, target_, cpu_, cpuFeatureList_, gpuImageList_;
  std::vector<std::string> cpuFeatures_;
  uint64_t arenaSize_ = 0;
  const uint8_t *weights_ = nullptr;
  uint64_t weightsSize_ = 0;
  uint64_t splatSize_ = 0;
  std::vector<GpuImageDesc> gpuImages_;
  std::vector<BufferDesc> buffers_;
  std::vector<TensorDesc> inputs_, outputs_;
  std::vector<DispatchDesc> dispatches_;
  std::vector<CheckDesc> checks_;
  int64_t batchChunk_ = 0;
  std::vector<std::shared_ptr<const Model>> batchVariants_;
  /// A batch variant: the model that carries it (and may hold its
  /// weights); null for an artifact opened on its own.
  const Model *carrier_ = nullptr;
  bool weightsInCarrier_ = false;
  std::vector<ShapeGuardDesc> shapeGuards_;
  std::string shapeGuardList_;
  KernelObject kernels_;
};

} // namespace kiln

#endif // KILN_RUNTIME_MODEL_H
