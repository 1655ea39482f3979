//===- ArtifactWriter.h - the .kiln artifact ---------------------*- C++
//-*-===//
#ifndef KILN_ARTIFACT_ARTIFACTWRITER_H
#define KILN_ARTIFACT_ARTIFACTWRITER_H

#include "kiln/Target/GpuImage.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace kiln {

/// One kernel of the schedule, for reports.
struct KernelReport {
  std::string name;
  std::vector<std::string> nodes;
  uint32_t workgroups = 1;
  /// Threads per workgroup (GPU blocks); 1 on the CPU.
  uint32_t threads = 1;
  /// Workgroup memory of one block (GPU stage buffers), and how much of it
  /// is dynamic shared memory reserved at launch (cuda, over 48 KiB).
  uint32_t workgroupMemory = 0, dynamicWorkgroupMemory = 0;
  /// GPU kernels: bytes of the arrays each thread keeps on its stack (local
  /// or scratch memory, unless LLVM promotes them to registers).
  uint64_t privateMemory = 0;
  uint64_t flops = 0;
  /// Bytes of every buffer the kernel reads or writes: the least it moves.
  uint64_t bytes = 0;
  /// Bytes of the kernel's results alone (0: it writes nothing).
  uint64_t resultBytes = 0;
  /// Which loop of the kernel's root op was split into workgroups, and the
  /// tile size; empty when the kernel runs as one workgroup.
  std::vector<int64_t> tile;
  /// GPU matrix kernels: the instruction ("mma.sync m16n8k16", ...), the
  /// output block of one GPU block (tile size per loop of the root) and
  /// the part of it one warp computes (rows, columns; empty when one warp
  /// computes the whole block); for thread-tile blocks, the outputs of one
  /// thread (rows, columns).
  std::string matrixCores;
  std::vector<int64_t> matrixTile, warpTile, threadTile;
  /// Arena placement of the kernel's results (offset, size).
  std::vector<std::pair<uint64_t, uint64_t>> resultSlots;
};

/// Statistics of the artifact's memory plan, for reports.
struct ArtifactSummary {
  std::vector<KernelReport> kernels;
  size_t numDispatches = 0;
  uint64_t arenaBytes = 0;
  uint64_t weightBytes = 0;
  /// Bytes the arena would need if no two buffers shared memory.
  uint64_t unplannedArenaBytes = 0;
};

/// The weights of a model's batch variants and of the artifact that carries
/// them (kiln-compile --batch-chunks): each distinct constant is stored
/// once, at a 64-byte aligned offset, and the carrying artifact writes the
/// whole pool as its weights.
class SharedWeights {
public:
  /// The offset of `bytes` in the pool; bytes added before keep theirs.
  uint64_t add(llvm::StringRef bytes);
  /// Bytes of the pool, its alignment gaps included.
  uint64_t size() const { return size_; }
  /// Appends the pool to `out`, whose end is where the pool starts.
  void appendTo(std::string &out) const;

private:
  llvm::StringMap<uint64_t> offsets_;
  /// The entries in the order of their offsets.
  std::vector<const llvm::StringMapEntry<uint64_t> *> inOrder_;
  uint64_t size_ = 0;
};

/// Serializes a fully lowered module — `@main` holding kiln.constant,
/// kiln.reshape and kiln.dispatch ops, and the kernels module already
/// compiled to `kernelObject` — into the FlatBuffers artifact. Arena buffers
/// are placed by liveness so that buffers with disjoint lifetimes share bytes.
/// The compiled code and choices that go into an artifact beside the graph.
struct ArtifactContents {
  std::string target;
  /// CPU: the kernels' shared object. Empty for GPU targets.
  std::string kernelObject;
  /// CPU: the LLVM CPU and the features the kernel object needs.
  std::string cpu;
  std::vector<std::string> cpuFeatures;
  /// GPU targets: one device image per chip.
  std::vector<GpuImage> gpuImages;
  /// Benchmark artifacts: float32 weights of 64 elements or more are left
  /// out and filled with 0.01 by the runtime (like IREE's splat parameter
  /// archives), so that a large model's artifact stays small. Results are
  /// then meaningless; timings are not.
  bool splatWeights = false;
  /// Dynamic batch: whole artifacts of the same model compiled for other
  /// chunks of the batch (kiln-compile --batch-chunks).
  std::vector<std::string> batchVariants;
  /// Dynamic batch with several chunks: where the weights go. The carrying
  /// artifact writes the pool after its FlatBuffer; a batch variant
  /// (`weightsInParent`) only refers to it.
  SharedWeights *sharedWeights = nullptr;
  bool weightsInParent = false;
};

mlir::FailureOr<std::string> writeArtifact(mlir::ModuleOp module,
                                           const ArtifactContents &contents,
                                           ArtifactSummary *summary = nullptr);

} // namespace kiln

#endif
