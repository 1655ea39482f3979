//===- FuzzArtifact.cpp - libFuzzer target: the artifact loader -----------===//
//
// Any bytes go to kiln_model_open_memory; whatever loads is queried through
// the whole C API and given a session. Nothing may crash, leak or read out
// of bounds; every failure must come back as a status with a message.
// A mutation rarely keeps the section digests right, so bytes that verify
// as a FlatBuffer are also opened sealed with fresh digests: the loader's
// checks past the digests are fuzzed too. Every kernel object is loaded
// (the runtime's loader maps it as data); a model whose kernel object is
// the trusted artifact's ($KILN_FUZZ_ARTIFACT) also runs, so that a schedule
// that lies about its buffers, bindings or workgroups must be refused
// before its kernels reach out of bounds. Made-up machine code never runs.
//
//===----------------------------------------------------------------------===//
#include "RunModel.h"
#include "kiln/artifact_digest.h"
#include "kiln/artifact_generated.h"
#include "kiln/runtime.h"

#include <fstream>
#include <iterator>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using kiln_fuzz::requireMessage;

static void openAndQuery(const uint8_t *data, size_t size);

/// The kernel object of a verified artifact file (FlatBuffer and digests);
/// empty when it is not one.
static std::vector<uint8_t> kernelObjectOf(const uint8_t *data, size_t size) {
  size_t flatbufferSize = 0, weights = 0;
  const uint8_t *digests = nullptr;
  uint32_t count = 0;
  if (!kiln::artifact_digest::readTrailer(data, size, flatbufferSize, weights,
                                          digests, count))
    return {};
  flatbuffers::Verifier verifier(data, flatbufferSize);
  if (flatbufferSize < 8 || !kiln::fb::ModelBufferHasIdentifier(data) ||
      !kiln::fb::VerifyModelBuffer(verifier))
    return {};
  const auto *object = kiln::fb::GetModel(data)->kernel_object();
  return {object->begin(), object->end()};
}

/// The trusted artifact's kernel object: the only code a fuzzed model runs.
static const std::vector<uint8_t> &trustedKernels() {
  static const std::vector<uint8_t> kernels = [] {
    const char *path = std::getenv("KILN_FUZZ_ARTIFACT");
    std::ifstream in(path ? path : "", std::ios::binary);
    std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    std::vector<uint8_t> object = kernelObjectOf(file.data(), file.size());
    if (object.empty()) {
      std::fprintf(stderr, "set KILN_FUZZ_ARTIFACT to a CPU artifact\n");
      std::abort();
    }
    return object;
  }();
  return kernels;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  openAndQuery(data, size);
  flatbuffers::Verifier verifier(data, size);
  if (size >= 8 && kiln::fb::ModelBufferHasIdentifier(data) &&
      kiln::fb::VerifyModelBuffer(verifier)) {
    std::string digests = kiln::artifact_digest::trailer(data, size);
    std::vector<uint8_t> sealed(data, data + size);
    sealed.insert(sealed.end(), digests.begin(), digests.end());
    openAndQuery(sealed.data(), sealed.size());
  }
  return 0;
}

static void openAndQuery(const uint8_t *data, size_t size) {
  kiln_model *model = nullptr;
  kiln_status status = kiln_model_open_memory(data, size, &model);
  requireMessage(status);
  if (status != KILN_OK)
    return;
  for (int32_t i = 0; i < kiln_model_input_count(model); ++i) {
    kiln_tensor_info info;
    if (kiln_model_input_info(model, i, &info) == KILN_OK)
      for (int32_t d = 0; d < info.rank; ++d)
        (void)info.shape[d];
  }
  for (int32_t i = 0; i < kiln_model_output_count(model); ++i) {
    kiln_tensor_info info;
    kiln_model_output_info(model, i, &info);
  }
  for (int32_t i = 0; i < kiln_model_dispatch_count(model); ++i) {
    kiln_dispatch_info info;
    if (kiln_model_dispatch_info(model, i, &info) == KILN_OK)
      for (int32_t n = 0; n < info.node_count; ++n)
        (void)std::strlen(info.nodes[n]);
  }
  (void)std::strlen(kiln_model_target(model));
  // Kernels run only when they are the trusted ones.
  if (!kiln_fuzz::callsTheHookKernel(model) &&
      kernelObjectOf(data, size) == trustedKernels()) {
    kiln_fuzz::runWithZeroInputs(model);
  } else {
    kiln_session *session = nullptr;
    kiln_session_options options{1, kiln_fuzz::kMaxSessionBytes};
    status = kiln_session_create(model, "cpu", &options, &session);
    requireMessage(status);
    if (status == KILN_OK)
      kiln_session_destroy(session);
  }
  kiln_model_close(model);
}
