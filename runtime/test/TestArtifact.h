//===- TestArtifact.h - Build .kiln artifacts for tests ---------*- C++ -*-===//
//
// A whole artifact as plain structs, editable field by field before build(),
// around the hand-written kernels of test_kernels.c.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_TEST_TESTARTIFACT_H
#define KILN_RUNTIME_TEST_TESTARTIFACT_H

#include "kiln/artifact_digest.h"
#include "kiln/artifact_generated.h"
#include "kiln/artifact_version.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kiln_test {

namespace fb = kiln::fb;

constexpr int64_t N = 1024; // KERNEL_ELEMS in test_kernels.c
constexpr uint64_t kTensorBytes = N * sizeof(float);

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct TensorSpec {
  std::string name;
  fb::DType dtype;
  std::vector<int64_t> shape;
  uint32_t buffer;
  bool batched = false; // dim batchDim is the batch (ArtifactSpec::batchChunk)
  int32_t batchDim = 0;
};

struct DispatchSpec {
  std::string kernel;
  std::vector<uint32_t> bindings;
  uint32_t workgroups;
  std::vector<std::string> nodes;
  std::vector<TensorSpec> results = {}; // what the kernel writes
  uint32_t dynamicWorkgroupMemory = 0;  // bytes of dynamic shared memory
};

struct BufferSpec {
  fb::BufferKind kind;
  uint64_t offset, size;
  uint32_t splatBits = 0;
};

struct GpuImageSpec {
  std::string chip, format;
  std::vector<uint8_t> data;
  /// build() appends the dispatches' kernel signatures to `data`
  /// (ArtifactSpec::gpuSignatures), as the compiler puts them in an image.
  bool signatures = true;
};

/// A whole artifact, editable field by field before build().
/// The default is y = (x + 1) * w with x, y: f32[1024] and w = i * 0.5.
struct ArtifactSpec {
  uint32_t version = KILN_SCHEMA_VERSION;
  std::string target = "cpu";
  std::vector<uint8_t> kernelObject = readBytes(KILN_TEST_KERNELS);
  std::vector<uint8_t> weights;
  uint64_t arenaSize = 3 * kTensorBytes;
  std::vector<BufferSpec> buffers = {
      {fb::BufferKind_Arena, 0, kTensorBytes},                // 0: x
      {fb::BufferKind_Arena, kTensorBytes, kTensorBytes},     // 1: x + 1
      {fb::BufferKind_Arena, 2 * kTensorBytes, kTensorBytes}, // 2: y
      {fb::BufferKind_Weight, 0, kTensorBytes}};              // 3: w
  std::vector<TensorSpec> inputs = {{"x", fb::DType_F32, {N}, 0}};
  std::vector<TensorSpec> outputs = {{"y", fb::DType_F32, {N}, 2}};
  std::vector<GpuImageSpec> gpuImages;
  uint64_t splatSize = 0;
  std::vector<DispatchSpec> dispatches = {
      {"add_one", {0, 1}, 7, {"Add_0"}},
      {"scale", {1, 3, 2}, 5, {"Mul_1", "Identity_2"}}};
  /// Run-time checks: their messages and tensors.
  std::vector<std::pair<std::string, TensorSpec>> checks;
  /// Shape-like inputs checked before a run.
  struct ShapeGuardSpec {
    fb::ShapeRule rule = fb::ShapeRule_Equals;
    uint32_t input = 0;
    std::vector<int64_t> dataShape, params, expected;
  };
  std::vector<ShapeGuardSpec> shapeGuards;
  /// The CPU the kernels need; test_kernels.c is built for any x86-64.
  std::string cpu = "x86-64";
  std::vector<std::string> cpuFeatures;
  /// Dynamic batch: the batch the kernels run at once; 0: fixed.
  int64_t batchChunk = 0;
  /// Dynamic batch: whole artifacts (build()'s bytes) for other chunks.
  std::vector<std::vector<uint8_t>> batchVariants;
  /// Where the weights go: inside the FlatBuffer, or after it as
  /// kiln-compile writes them.
  bool weightsAfterFlatBuffer = false;
  /// A batch variant whose Weight buffers index the carrying artifact's
  /// weights (clear `weights` for one that holds none of its own).
  bool weightsInParent = false;

  ArtifactSpec() {
    weights.resize(kTensorBytes);
    auto *w = reinterpret_cast<float *>(weights.data());
    for (int64_t i = 0; i < N; ++i)
      w[i] = float(i) * 0.5f;
  }

  /// The signatures kiln-add-gpu-kernel-signatures puts in a GPU image,
  /// one PTX global per dispatch's kernel, true to the dispatches:
  /// bindings, blocks, threads (1), dynamic shared bytes, binding bytes.
  std::string gpuSignatures() const {
    std::string text;
    for (const DispatchSpec &d : dispatches) {
      std::vector<uint64_t> words = {d.bindings.size(), d.workgroups, 1,
                                     d.dynamicWorkgroupMemory};
      for (uint32_t b : d.bindings) // a forged binding past the buffers: 0
        words.push_back(b < buffers.size() ? buffers[b].size : 0);
      text += ".visible .global .align 8 .u64 " + d.kernel + "__signature[" +
              std::to_string(words.size()) + "] = {";
      for (size_t i = 0; i < words.size(); ++i)
        text += (i ? ", " : "") + std::to_string(words[i]);
      text += "};\n";
    }
    return text;
  }

  std::vector<uint8_t> build() const {
    flatbuffers::FlatBufferBuilder b;
    auto tensors = [&](const std::vector<TensorSpec> &list) {
      std::vector<flatbuffers::Offset<fb::TensorInfo>> out;
      for (const TensorSpec &t : list)
        out.push_back(fb::CreateTensorInfoDirect(b, t.name.c_str(), t.dtype,
                                                 &t.shape, t.buffer, t.batched,
                                                 t.batchDim));
      return out;
    };
    std::vector<flatbuffers::Offset<fb::Buffer>> bufs;
    for (const BufferSpec &s : buffers)
      bufs.push_back(
          fb::CreateBuffer(b, s.kind, s.offset, s.size, s.splatBits));
    std::vector<flatbuffers::Offset<fb::Dispatch>> disps;
    for (const DispatchSpec &d : dispatches) {
      std::vector<flatbuffers::Offset<flatbuffers::String>> nodes;
      for (const std::string &n : d.nodes)
        nodes.push_back(b.CreateString(n));
      auto results = tensors(d.results);
      disps.push_back(fb::CreateDispatchDirect(
          b, d.kernel.c_str(), &d.bindings, d.workgroups, &nodes, 0, 1,
          &results, d.dynamicWorkgroupMemory));
    }
    std::vector<flatbuffers::Offset<fb::GpuImage>> images;
    for (const GpuImageSpec &g : gpuImages) {
      std::vector<uint8_t> data = g.data;
      if (g.signatures) {
        std::string text = gpuSignatures();
        data.insert(data.end(), text.begin(), text.end());
      }
      // The fake drivers read a stand-in code object as text up to a NUL
      // (a real one's ELF header gives its size).
      if (data.size() >= 4 && std::memcmp(data.data(),
                                          "\x7f"
                                          "ELF",
                                          4) == 0)
        data.push_back(0);
      images.push_back(
          fb::CreateGpuImageDirect(b, g.chip.c_str(), g.format.c_str(), &data));
    }
    std::vector<flatbuffers::Offset<fb::Check>> checkTables;
    for (const auto &[message, tensor] : checks)
      checkTables.push_back(
          fb::CreateCheckDirect(b, message.c_str(), tensors({tensor}).front()));
    auto ins = tensors(inputs), outs = tensors(outputs);
    std::vector<flatbuffers::Offset<flatbuffers::String>> features;
    for (const std::string &feature : cpuFeatures)
      features.push_back(b.CreateString(feature));
    std::vector<flatbuffers::Offset<fb::ShapeGuard>> guardTables;
    for (const ShapeGuardSpec &g : shapeGuards)
      guardTables.push_back(
          fb::CreateShapeGuardDirect(b, g.rule, "Node_0", "Op", g.input,
                                     &g.dataShape, &g.params, &g.expected));
    std::vector<flatbuffers::Offset<fb::BatchVariant>> variants;
    for (const std::vector<uint8_t> &bytes : batchVariants)
      variants.push_back(fb::CreateBatchVariantDirect(b, &bytes));
    const std::vector<uint8_t> none;
    auto root = fb::CreateModelDirect(
        b, version, "kiln-test", target.c_str(), &kernelObject,
        weightsAfterFlatBuffer ? &none : &weights, arenaSize, &bufs, &ins,
        &outs, &disps, &images, splatSize, &checkTables, cpu.c_str(), &features,
        &guardTables, batchChunk, &variants, weightsInParent);
    fb::FinishModelBuffer(b, root);
    std::vector<uint8_t> out(b.GetBufferPointer(),
                             b.GetBufferPointer() + b.GetSize());
    if (weightsAfterFlatBuffer && !weights.empty()) {
      out.resize(kiln::artifact_digest::weightsOffset(out.size()), 0);
      out.insert(out.end(), weights.begin(), weights.end());
    }
    std::string digests = kiln::artifact_digest::trailer(
        out.data(), b.GetSize(), out.size() - b.GetSize());
    out.insert(out.end(), digests.begin(), digests.end());
    return out;
  }
};

/// `spec` (the default model, y = (x + 1) * w) as a dynamic batch: x and
/// y hold `chunk` batch elements of N / 4 in their leading dim.
inline ArtifactSpec withBatchChunk(ArtifactSpec spec, int64_t chunk) {
  spec.inputs = {{"x", fb::DType_F32, {chunk, N / 4}, 0, true}};
  spec.outputs = {{"y", fb::DType_F32, {chunk, N / 4}, 2, true}};
  spec.batchChunk = chunk;
  return spec;
}

} // namespace kiln_test

#endif // KILN_RUNTIME_TEST_TESTARTIFACT_H
