//===- FuzzForgedArtifact.cpp - libFuzzer target: forged artifacts --------===//
//
// A structure-aware forger: the fuzzer's bytes choose edits to a valid
// artifact (the runtime tests' y = (x + 1) * w around test_kernels.c), whose
// FlatBuffer is then rebuilt and sealed with fresh digests, so every forged
// file passes the verifier and the digest check and reaches the loader's
// own checks: buffers, tensors, dispatches, bindings, launch shapes, targets.
// Whatever opens is queried and run with zero inputs, its kernels being the
// trusted ones (on the CPU; a GPU artifact on the fake drivers, against
// the trusted kernels' signatures): a forged schedule must be refused or run
// in bounds. Nothing may crash, leak or read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/test/TestArtifact.h"
#include "RunModel.h"
#include "kiln/runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>

using namespace kiln_test;

namespace {

/// A size or offset: usually near the sizes the artifact has, sometimes
/// anything.
uint64_t forgedSize(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
  case 0:
    return in.ConsumeIntegralInRange<uint64_t>(0, 4 * kTensorBytes);
  case 1:
    return kTensorBytes * in.ConsumeIntegralInRange<uint64_t>(0, 4) +
           in.ConsumeIntegralInRange<int64_t>(-8, 8);
  case 2:
    return in.ConsumeIntegralInRange<uint64_t>(0, 64);
  default:
    // Anything a process may allocate, or sizes whose sums overflow; never
    // the gigabytes between, which would only test the machine.
    return in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 1 << 28)
                            : ~in.ConsumeIntegralInRange<uint64_t>(0, 1 << 16);
  }
}

/// A GPU image the fake drivers load for `target` (cuda: PTX declaring the
/// trusted kernels; rocm: the fake's gfx942 code object), carrying the
/// trusted schedule's kernel signatures: what the kernels were compiled
/// for, whatever the forger makes of the schedule.
GpuImageSpec trustedGpuImage(const std::string &target) {
  static const ArtifactSpec trusted;
  bool cuda = target.rfind("cuda", 0) == 0;
  std::string text = cuda ? ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry add_one(\n)\n{ ret; }\n"
                            ".visible .entry scale(\n)\n{ ret; }\n"
                          : "\x7f"
                            "ELFgfx942\n";
  text += trusted.gpuSignatures();
  // The fake drivers read a stand-in code object as text up to a NUL.
  text.push_back('\0');
  return {cuda ? "sm_90" : "gfx942", cuda ? "ptx" : "hsaco",
          std::vector<uint8_t>(text.begin(), text.end()), false};
}

template <typename T> T &pick(FuzzedDataProvider &in, std::vector<T> &list) {
  return list[in.ConsumeIntegralInRange<size_t>(0, list.size() - 1)];
}

void forgeTensor(FuzzedDataProvider &in, TensorSpec &t) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
  case 0:
    t.dtype = fb::DType(in.ConsumeIntegralInRange<int>(-2, fb::DType_MAX + 2));
    break;
  case 1:
    t.shape.resize(in.ConsumeIntegralInRange<size_t>(0, 4));
    for (int64_t &dim : t.shape)
      dim = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 2048)
                             : in.ConsumeIntegral<int64_t>();
    break;
  case 2:
    t.buffer = in.ConsumeIntegralInRange<uint32_t>(0, 6);
    break;
  default:
    t.name = in.ConsumeRandomLengthString(8);
    break;
  }
}

void forgeDispatch(FuzzedDataProvider &in, DispatchSpec &d) {
  static const char *kKernels[] = {"add_one",           "scale", "count_ids",
                                   "call_in_workgroup", "",      "abort"};
  switch (in.ConsumeIntegralInRange(0, 4)) {
  case 0:
    d.kernel = kKernels[in.ConsumeIntegralInRange<size_t>(0, 5)];
    break;
  case 1:
    d.bindings.resize(in.ConsumeIntegralInRange<size_t>(0, 4));
    for (uint32_t &b : d.bindings)
      b = in.ConsumeIntegralInRange<uint32_t>(0, 5);
    break;
  case 2:
    d.workgroups = in.ConsumeBool()
                       ? in.ConsumeIntegralInRange<uint32_t>(0, 1001)
                       : in.ConsumeIntegral<uint32_t>();
    break;
  case 3:
    d.results.push_back({"r", fb::DType_F32, {N}, 0});
    forgeTensor(in, d.results.back());
    break;
  default:
    d.dynamicWorkgroupMemory = in.ConsumeIntegral<uint32_t>();
    break;
  }
}

/// Makes `spec` a dynamic-batch artifact whose tensors carry a batch of
/// `chunk` in their leading dim.
void makeBatched(ArtifactSpec &spec, int64_t chunk) {
  spec.batchChunk = chunk;
  for (auto *tensors : {&spec.inputs, &spec.outputs})
    for (TensorSpec &t : *tensors) {
      t.batched = true;
      t.batchDim = 0;
      if (!t.shape.empty())
        t.shape[0] = chunk;
    }
}

void forgeOnce(FuzzedDataProvider &in, ArtifactSpec &spec);

/// A dynamic batch of 4 with the kernels for a chunk of 2 beside them,
/// those forged too (nested variants included), their weights their own or
/// the carrier's (or both, or neither, forged).
void forgeBatchVariant(FuzzedDataProvider &in, ArtifactSpec &spec) {
  ArtifactSpec pairs = spec;
  pairs.batchVariants.clear();
  makeBatched(spec, 4);
  makeBatched(pairs, in.ConsumeBool() ? 2 : 4);
  pairs.weightsInParent = in.ConsumeBool();
  if (in.ConsumeBool())
    pairs.weights.clear();
  for (int edits = in.ConsumeIntegralInRange(0, 2); edits > 0; --edits)
    forgeOnce(in, pairs);
  // The variant's kernels run too: never the hook (see callsTheHookKernel).
  for (const DispatchSpec &d : pairs.dispatches)
    if (d.kernel == "call_in_workgroup")
      return;
  spec.batchVariants.push_back(pairs.build());
}

/// One edit of the artifact, chosen by the fuzzer's bytes.
void forgeOnce(FuzzedDataProvider &in, ArtifactSpec &spec) {
  switch (in.ConsumeIntegralInRange(0, 14)) {
  case 0:
    if (!spec.buffers.empty()) {
      BufferSpec &b = pick(in, spec.buffers);
      b.kind = fb::BufferKind(in.ConsumeIntegralInRange<int>(0, 3));
      b.offset = forgedSize(in);
      b.size = forgedSize(in);
      b.splatBits = in.ConsumeIntegral<uint32_t>();
    }
    break;
  case 1:
    spec.buffers.push_back({fb::BufferKind(in.ConsumeIntegralInRange(0, 2)),
                            forgedSize(in), forgedSize(in)});
    break;
  case 2:
    spec.arenaSize = forgedSize(in);
    break;
  case 3:
    spec.weights.resize(forgedSize(in) % (8 * kTensorBytes));
    break;
  case 4:
    if (!spec.inputs.empty())
      forgeTensor(in, pick(in, spec.inputs));
    break;
  case 5:
    if (!spec.outputs.empty())
      forgeTensor(in, pick(in, spec.outputs));
    break;
  case 6:
    if (!spec.dispatches.empty())
      forgeDispatch(in, pick(in, spec.dispatches));
    break;
  case 7:
    if (!spec.dispatches.empty())
      spec.dispatches.push_back(pick(in, spec.dispatches));
    break;
  case 8:
    if (!spec.dispatches.empty())
      spec.dispatches.erase(
          spec.dispatches.begin() +
          in.ConsumeIntegralInRange<size_t>(0, spec.dispatches.size() - 1));
    break;
  case 9:
    spec.checks.push_back(
        {in.ConsumeRandomLengthString(16), {"c", fb::DType_Bool, {8}, 0}});
    forgeTensor(in, spec.checks.back().second);
    break;
  case 10:
    spec.splatSize = forgedSize(in);
    break;
  case 11: {
    ArtifactSpec::ShapeGuardSpec guard;
    guard.rule = fb::ShapeRule(in.ConsumeIntegralInRange(0, 8));
    guard.input = in.ConsumeIntegralInRange<uint32_t>(0, 2);
    for (auto *list : {&guard.dataShape, &guard.params, &guard.expected})
      for (int n = in.ConsumeIntegralInRange(0, 4); n > 0; --n)
        list->push_back(in.ConsumeBool()
                            ? in.ConsumeIntegralInRange<int64_t>(-2, 8)
                            : in.ConsumeIntegral<int64_t>());
    spec.shapeGuards.push_back(guard);
    break;
  }
  case 12:
    forgeBatchVariant(in, spec);
    break;
  case 13:
    spec.weightsAfterFlatBuffer = !spec.weightsAfterFlatBuffer;
    break;
  default: {
    static const char *kTargets[] = {"cpu", "cuda:sm_90", "rocm:gfx942", "",
                                     "cpu "};
    spec.target = kTargets[in.ConsumeIntegralInRange<size_t>(0, 4)];
    if (spec.target == "cpu")
      break;
    if (in.ConsumeBool())
      spec.gpuImages = {{"sm_90", "ptx", {'.', 'v', 0}, false}};
    else
      spec.gpuImages = {trustedGpuImage(spec.target)};
    if (in.ConsumeBool())
      spec.kernelObject.clear();
    break;
  }
  }
}

} // namespace

/// The fake CUDA driver and HIP runtime (runtime/test/FakeCudaDriver.cpp),
/// loaded before the runtime looks for them by name: GPU artifacts then
/// load and run (kernels are only counted; device memory is host memory,
/// so a copy out of bounds is caught as any other).
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  for (const char *path : {KILN_FAKE_CUDA_DRIVER, KILN_FAKE_HIP_RUNTIME})
    if (!::dlopen(path, RTLD_NOW | RTLD_GLOBAL))
      std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const ArtifactSpec trusted;
  ArtifactSpec spec = trusted;
  FuzzedDataProvider in(data, size);
  for (int edits = in.ConsumeIntegralInRange(1, 6); edits > 0; --edits)
    forgeOnce(in, spec);
  std::vector<uint8_t> bytes = spec.build();
  kiln_model *model = nullptr;
  kiln_status status =
      kiln_model_open_memory(bytes.data(), bytes.size(), &model);
  kiln_fuzz::requireMessage(status);
  if (status != KILN_OK)
    return 0;
  // The kernels are the trusted ones; only the hook kernel never runs.
  std::string target = kiln_model_target(model);
  if (target == "cpu" && !kiln_fuzz::callsTheHookKernel(model))
    kiln_fuzz::runWithZeroInputs(model, "cpu");
  else if (target.rfind("cuda", 0) == 0 || target.rfind("rocm", 0) == 0)
    kiln_fuzz::runWithZeroInputs(model, target.substr(0, 4).c_str());
  kiln_model_close(model);
  return 0;
}
