//===- RunModel.h - what the artifact fuzz targets do with a model -*- C++
//-*-===//
//
// Shared by the artifact fuzz targets: every failure must come with a
// message, a session gets a memory budget, and a model whose kernels may run
// runs on zero inputs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_FUZZ_RUNMODEL_H
#define KILN_TEST_FUZZ_RUNMODEL_H

#include "kiln/runtime.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln_fuzz {

/// A budget for a fuzzed model's buffers (max_memory_bytes): a forged size
/// is refused by it, never allocated and filled.
constexpr uint64_t kMaxSessionBytes = uint64_t(256) << 20;

inline void requireMessage(kiln_status status) {
  const char *message = kiln_last_error();
  if (status != KILN_OK && (!message || !*message))
    std::abort(); // an error without a message
}

/// Whether a dispatch names the test library's call_in_workgroup, which
/// calls a function whose address it reads from its first binding (the
/// fault tests' hook): any schedule may name it, and what it calls is not
/// the runtime's to check, so such a model does not run.
inline bool callsTheHookKernel(kiln_model *model) {
  for (int32_t i = 0; i < kiln_model_dispatch_count(model); ++i) {
    kiln_dispatch_info info;
    if (kiln_model_dispatch_info(model, i, &info) != KILN_OK ||
        std::strcmp(info.kernel, "call_in_workgroup") == 0)
      return true;
  }
  return false;
}

/// Sets every input of `model` to zeros, a batched one at `batch` (0: as
/// compiled), runs, and reads every output back.
inline void runZeros(kiln_model *model, kiln_session *session, int64_t batch) {
  for (int32_t i = 0; i < kiln_model_input_count(model); ++i) {
    kiln_tensor_info info;
    if (kiln_model_input_info(model, i, &info) != KILN_OK)
      continue;
    std::vector<int64_t> shape(info.shape, info.shape + info.rank);
    int32_t dim = kiln_model_input_batch_dim(model, i);
    uint64_t bytes = info.bytes;
    if (batch && dim >= 0 && dim < info.rank && shape[dim] > 0) {
      bytes = bytes / uint64_t(shape[dim]) * uint64_t(batch);
      shape[dim] = batch;
    }
    std::vector<uint8_t> zeros(bytes);
    requireMessage(kiln_session_set_input(session, info.name, info.dtype,
                                          shape.data(), info.rank, zeros.data(),
                                          zeros.size()));
  }
  kiln_status status = kiln_session_run(session);
  requireMessage(status);
  for (int32_t i = 0; status == KILN_OK && i < kiln_model_output_count(model);
       ++i) {
    kiln_tensor_info info;
    if (kiln_session_output_info(session, i, &info) != KILN_OK)
      continue;
    std::vector<uint8_t> output(info.bytes);
    requireMessage(
        kiln_session_get_output_at(session, i, output.data(), output.size()));
  }
}

/// Creates a session on `device` within kMaxSessionBytes and runs it on
/// zero inputs, reading every output back; a dynamic-batch model at the
/// batch of each chunk it has kernels for.
inline void runWithZeroInputs(kiln_model *model, const char *device = "cpu") {
  kiln_session *session = nullptr;
  kiln_session_options options{1, kMaxSessionBytes};
  kiln_status status = kiln_session_create(model, device, &options, &session);
  requireMessage(status);
  if (status != KILN_OK)
    return;
  runZeros(model, session, 0);
  for (int32_t i = 0; i < kiln_model_batch_chunk_count(model); ++i)
    runZeros(model, session, kiln_model_batch_chunk_at(model, i));
  kiln_session_destroy(session);
}

} // namespace kiln_fuzz

#endif
