/*
 * Kiln runtime C API.
 *
 * A model (kiln_model) is a loaded, verified .kiln artifact. It is read-only
 * after kiln_model_open* returns and may be shared by any number of sessions
 * on any threads. A session (kiln_session) owns one arena and one thread pool
 * and takes one call at a time: a call made while another thread is inside
 * the same session (or made by an observer of its own run) returns
 * KILN_ERROR_SESSION_BUSY and changes nothing. Give each thread its own
 * session; sessions on one model run in parallel. kiln_session_destroy
 * waits for a call in progress on another thread to return.
 *
 * Every function that can fail returns a kiln_status; on failure,
 * kiln_last_error() returns a message for the calling thread that names the
 * offending input, buffer, kernel or file. No function throws or aborts.
 */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/artifact_version.h"

#if defined(_WIN32)
#define KILN_API
#else
#define KILN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1, /* null pointer, bad index, bad options */
  KILN_ERROR_IO = 2,               /* cannot open or read a file */
  KILN_ERROR_INVALID_ARTIFACT = 3, /* not a Kiln artifact, fails checks */
  KILN_ERROR_VERSION_MISMATCH = 4, /* schema_version != KILN_SCHEMA_VERSION */
  KILN_ERROR_NOT_FOUND = 5,        /* no input/output with that name */
  KILN_ERROR_DTYPE_MISMATCH = 6,
  KILN_ERROR_SHAPE_MISMATCH = 7,
  KILN_ERROR_SIZE_MISMATCH = 8, /* byte count differs from the tensor's */
  KILN_ERROR_MISSING_INPUT = 9, /* run before every input was set */
  KILN_ERROR_UNSUPPORTED_DEVICE = 10,
  KILN_ERROR_KERNEL_LOAD = 11, /* dlopen failed or a kernel is missing */
  KILN_ERROR_OUT_OF_MEMORY = 12,
  KILN_ERROR_INTERNAL = 13,
  KILN_ERROR_SESSION_BUSY = 14, /* the session is in another call */
  /* an input's values fail a check of the run (an index out of range) */
  KILN_ERROR_INVALID_INPUT_VALUE = 15
} kiln_status;

/* Values match kiln.fb.DType in the artifact schema. */
typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 0,
  KILN_DTYPE_F16 = 1,
  KILN_DTYPE_BF16 = 2,
  KILN_DTYPE_F64 = 3,
  KILN_DTYPE_I8 = 4,
  KILN_DTYPE_U8 = 5,
  KILN_DTYPE_I32 = 6,
  KILN_DTYPE_I64 = 7,
  KILN_DTYPE_BOOL = 8,
  KILN_DTYPE_I16 = 9,
  KILN_DTYPE_U16 = 10,
  KILN_DTYPE_U32 = 11,
  KILN_DTYPE_U64 = 12
} kiln_dtype;

typedef struct kiln_model kiln_model;
typedef struct kiln_session kiln_session;

/* Describes a model input or output. Pointers live as long as the model. */
typedef struct kiln_tensor_info {
  const char *name;
  kiln_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  size_t bytes; /* product(shape) * kiln_dtype_size(dtype) */
} kiln_tensor_info;

/* Describes one dispatch. Pointers live as long as the model. */
typedef struct kiln_dispatch_info {
  const char *kernel;
  uint32_t workgroups;
  int32_t node_count;
  const char *const *nodes; /* ONNX node names this kernel computes */
  uint64_t flops;           /* 0 when unknown */
} kiln_dispatch_info;

typedef struct kiln_session_options {
  int32_t num_threads; /* 0: one thread per core */
  /* The most bytes the session may allocate for the model's buffers (the
   * arena and splat area; on a GPU also the weights' device copy); a model
   * that needs more is refused with KILN_ERROR_OUT_OF_MEMORY. 0: no limit. */
  uint64_t max_memory_bytes;
} kiln_session_options;

/* This runtime library's version: "kiln 0.1.0 (commit 4809bc0abcde)". */
KILN_API const char *kiln_version(void);

/* ---- Errors and dtypes ---- */
KILN_API const char *kiln_last_error(void);
KILN_API const char *kiln_status_string(kiln_status status);
KILN_API const char *kiln_dtype_name(kiln_dtype dtype); /* "f32", ... */
KILN_API size_t kiln_dtype_size(kiln_dtype dtype);      /* 0 if invalid */

/* ---- Models ---- */
KILN_API kiln_status kiln_model_open(const char *path, kiln_model **model);
/* Copies `size` bytes from `data`; the caller may free them afterwards. */
KILN_API kiln_status kiln_model_open_memory(const void *data, size_t size,
                                            kiln_model **model);
/* Sessions keep the model alive; closing it with sessions open is safe. */
KILN_API void kiln_model_close(kiln_model *model);

KILN_API int32_t kiln_model_input_count(const kiln_model *model);
KILN_API int32_t kiln_model_output_count(const kiln_model *model);
KILN_API kiln_status kiln_model_input_info(const kiln_model *model,
                                           int32_t index,
                                           kiln_tensor_info *info);
KILN_API kiln_status kiln_model_output_info(const kiln_model *model,
                                            int32_t index,
                                            kiln_tensor_info *info);
KILN_API int32_t kiln_model_dispatch_count(const kiln_model *model);
KILN_API kiln_status kiln_model_dispatch_info(const kiln_model *model,
                                              int32_t index,
                                              kiln_dispatch_info *info);
/* The bytes of every buffer dispatch `index` binds (its inputs, weights and
 * results, each counted once): the least a run of it moves, for bandwidth
 * rates. 0 for a null model or an index out of range. */
KILN_API uint64_t kiln_model_dispatch_bytes(const kiln_model *model,
                                            int32_t index);
/* The tensors dispatch `index` writes; info->name is the ONNX value each
 * holds ("" for one that is none: a padded copy of an input, part of a
 * node's work). Artifacts from before these were recorded have none. */
KILN_API int32_t kiln_model_dispatch_result_count(const kiln_model *model,
                                                  int32_t dispatch);
KILN_API kiln_status kiln_model_dispatch_result_info(const kiln_model *model,
                                                     int32_t dispatch,
                                                     int32_t index,
                                                     kiln_tensor_info *info);
/* The compiler that made the artifact: "kiln 0.1.0 (commit 4809bc0abcde)". */
KILN_API const char *kiln_model_producer(const kiln_model *model);
/* "cpu", "cuda:sm_80,sm_90" or "rocm:gfx942". */
KILN_API const char *kiln_model_target(const kiln_model *model);
/* CPU artifacts: the LLVM CPU the kernels were compiled for ("x86-64-v3")
 * and the instruction-set features they need, comma-separated
 * ("avx,avx2,fma,..."; kiln/cpu_features.h). Opening a CPU artifact on a CPU
 * without them fails with KILN_ERROR_UNSUPPORTED_DEVICE naming the missing
 * ones. "" for GPU artifacts. */
KILN_API const char *kiln_model_cpu(const kiln_model *model);
KILN_API const char *kiln_model_cpu_features(const kiln_model *model);
/* GPU artifacts: the device code it holds, one image per chip with its
 * format, comma-separated ("sm_80 cubin, sm_90 cubin"; "gfx942 hsaco").
 * "" for CPU artifacts. */
KILN_API const char *kiln_model_gpu_images(const kiln_model *model);
/* The shape-like inputs a run checks before any kernel (the artifact was
 * compiled for the shapes their values give), one line each:
 * "node 'reshape' (Reshape): input 'shape' gives [4,6] from data [2,3,4]",
 * "node 'topk' (TopK): input 'k' holds [3]"; "" when there are none. */
KILN_API const char *kiln_model_shape_guards(const kiln_model *model);
/* Dynamic batch (kiln-compile --dynamic-batch): the batch elements the
 * kernels run at once; 0 for an artifact of a fixed batch. The inputs and
 * outputs kiln_model_input_batched/kiln_model_output_batched name take any
 * batch N in one dim, kiln_model_input_batch_dim/kiln_model_output_batch_dim
 * (-1 for the others; the leading dim but for a recurrent state's
 * [layers, batch, hidden] or a time-major [time, batch, classes]); their
 * info shows the chunk there. A run goes over the batch in pieces of the
 * chunks the artifact has kernels for, and kiln_session_output_info gives
 * the last run's shapes. */
KILN_API int64_t kiln_model_batch_chunk(const kiln_model *model);
/* The chunks of the batch the artifact has kernels for (the one above, then
 * those of kiln-compile --batch-chunks): kiln_model_batch_chunk_count of
 * them (0 for a fixed batch), the index-th by kiln_model_batch_chunk_at
 * (0 out of range). */
KILN_API int32_t kiln_model_batch_chunk_count(const kiln_model *model);
KILN_API int64_t kiln_model_batch_chunk_at(const kiln_model *model,
                                           int32_t index);
KILN_API int32_t kiln_model_input_batched(const kiln_model *model,
                                          int32_t index);
KILN_API int32_t kiln_model_output_batched(const kiln_model *model,
                                           int32_t index);
KILN_API int32_t kiln_model_input_batch_dim(const kiln_model *model,
                                            int32_t index);
KILN_API int32_t kiln_model_output_batch_dim(const kiln_model *model,
                                             int32_t index);

/* ---- Sessions ---- */
/* device: "cpu" (NULL means "cpu"), "cuda" (the first NVIDIA GPU; the
 * artifact must have been compiled for a cuda target) or "rocm" (the first
 * AMD GPU, through HIP; a rocm target). Without a driver or device this
 * fails with KILN_ERROR_UNSUPPORTED_DEVICE and says which. options may be
 * NULL; num_threads is ignored on GPUs. */
KILN_API kiln_status kiln_session_create(kiln_model *model, const char *device,
                                         const kiln_session_options *options,
                                         kiln_session **session);
KILN_API void kiln_session_destroy(kiln_session *session);

/* Copies `bytes` bytes of `data` into the input's buffer after checking the
 * name, dtype, shape and size against the model (a batched input's leading
 * dim may be any batch). Inputs stay set across runs. */
KILN_API kiln_status kiln_session_set_input(kiln_session *session,
                                            const char *name, kiln_dtype dtype,
                                            const int64_t *shape, int32_t rank,
                                            const void *data, size_t bytes);
KILN_API kiln_status kiln_session_run(kiln_session *session);
/* Runs and writes each dispatch's wall time in milliseconds to
 * dispatch_ms[0 .. kiln_model_dispatch_count()); `capacity` is the length of
 * dispatch_ms and must be at least the dispatch count. */
KILN_API kiln_status kiln_session_run_profiled(kiln_session *session,
                                               double *dispatch_ms,
                                               int32_t capacity);

/* What dispatch `dispatch`'s GPU kernel takes of the device, as the driver
 * reports it once the session loaded the kernel: registers and local memory
 * (arrays and register spills) per thread, shared memory per block (static
 * plus the dynamic bytes it is launched with), and how many of its blocks
 * one multiprocessor holds at once (0: none fits). A value the driver
 * cannot report is -1. CPU sessions have no kernels of this kind:
 * KILN_ERROR_UNSUPPORTED_DEVICE. */
typedef struct kiln_kernel_resources {
  int32_t registers;
  int64_t local_bytes;
  int64_t shared_bytes;
  int32_t blocks_per_multiprocessor;
} kiln_kernel_resources;
KILN_API kiln_status
kiln_session_dispatch_resources(const kiln_session *session, int32_t dispatch,
                                kiln_kernel_resources *resources);

/* For bisecting numerics: runs like kiln_session_run, but calls
 * observer(session, i, user) right after dispatch i has finished, while
 * kiln_session_get_dispatch_result can copy out what it wrote (later
 * dispatches reuse the memory). Slower: on a GPU every kernel is launched and
 * waited for on its own. A status other than KILN_OK from the observer stops
 * the run and is returned. */
typedef kiln_status (*kiln_dispatch_observer)(kiln_session *session,
                                              int32_t dispatch, void *user);
KILN_API kiln_status kiln_session_run_observed(kiln_session *session,
                                               kiln_dispatch_observer observer,
                                               void *user);
KILN_API kiln_status kiln_session_get_dispatch_result(kiln_session *session,
                                                      int32_t dispatch,
                                                      int32_t index, void *data,
                                                      size_t bytes);

/* GPU sessions: input `name` is read by the kernels in device memory at
 * `device_pointer` (a CUDA or HIP device pointer, on the session's GPU),
 * without a copy: each run launches them on that memory. The memory must
 * stay valid, and unchanged while a run reads it, until the input is set
 * again. The name, dtype, shape and size are checked
 * as by kiln_session_set_input. An input whose values the runtime reads on
 * the host (a shape-like input checked before each run) and a dynamic
 * batch's inputs are refused (KILN_ERROR_INVALID_ARGUMENT); CPU sessions
 * refuse it (KILN_ERROR_UNSUPPORTED_DEVICE). */
KILN_API kiln_status kiln_session_set_input_device(
    kiln_session *session, const char *name, kiln_dtype dtype,
    const int64_t *shape, int32_t rank, uint64_t device_pointer, size_t bytes);

/* GPU sessions: output `index` of every later run goes to device memory at
 * `device_pointer` (`bytes` of it, the output's size): the kernels write it
 * there, or, for an output that is also an input or a constant of the
 * model, the run copies it there device to device. A device_pointer of 0
 * unbinds it. Refused as kiln_session_set_input_device. */
KILN_API kiln_status kiln_session_bind_output_device(kiln_session *session,
                                                     int32_t index,
                                                     uint64_t device_pointer,
                                                     size_t bytes);

/* GPU sessions: copies output `index` of the last run into device memory at
 * `device_pointer` (`bytes` of it, the output's size), device to device;
 * returns when the copy is done. Refused as kiln_session_set_input_device. */
KILN_API kiln_status kiln_session_get_output_device(kiln_session *session,
                                                    int32_t index,
                                                    uint64_t device_pointer,
                                                    size_t bytes);

/* Copy an output out after a run; `bytes` must equal the output's size. */
KILN_API kiln_status kiln_session_get_output(kiln_session *session,
                                             const char *name, void *data,
                                             size_t bytes);
KILN_API kiln_status kiln_session_get_output_at(kiln_session *session,
                                                int32_t index, void *data,
                                                size_t bytes);
KILN_API kiln_status kiln_session_output_info(const kiln_session *session,
                                              int32_t index,
                                              kiln_tensor_info *info);
KILN_API int32_t kiln_session_num_threads(const kiln_session *session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
