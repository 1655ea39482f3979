//===- FuzzArtifact.cpp - libFuzzer target: the artifact loader -----------===//
//
// Any bytes go to kiln_model_open_memory; whatever loads is queried through
// the whole C API and given a session. Nothing may crash, leak or read out
// of bounds; every failure must come back as a status with a message.
// A mutation rarely keeps the section digests right, so bytes that verify
// as a FlatBuffer are also opened sealed with fresh digests: the loader's
// checks past the digests are fuzzed too.
//
//===----------------------------------------------------------------------===//
#include "kiln/artifact_digest.h"
#include "kiln/artifact_generated.h"
#include "kiln/runtime.h"

#include <vector>

#include <cstdlib>
#include <cstring>

static void requireMessage(kiln_status status) {
  const char *message = kiln_last_error();
  if (status != KILN_OK && (!message || !*message))
    std::abort(); // an error without a message
}

static void openAndQuery(const uint8_t *data, size_t size);

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
  kiln_session *session = nullptr;
  kiln_session_options options{1};
  status = kiln_session_create(model, "cpu", &options, &session);
  requireMessage(status);
  if (status == KILN_OK)
    kiln_session_destroy(session);
  kiln_model_close(model);
}
