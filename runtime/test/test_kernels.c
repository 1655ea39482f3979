/* Hand-written kernels that follow the Kiln CPU kernel ABI, used by the
 * runtime tests in place of compiler output. Each float kernel splits
 * KERNEL_ELEMS elements evenly over the workgroups. */
#include <stdint.h>

#define KERNEL_ELEMS 1024
#define KERNEL_BYTES (KERNEL_ELEMS * 4)

/* Each kernel's signature as kiln-compile exports it: the binding count, the
 * workgroup count (what the tests' artifacts run), then the bytes it reaches
 * in each binding. The runtime checks every dispatch against it. */
#define SIGNATURE(kernel, ...)                                                 \
  const uint64_t kernel##_signature[] __asm__(#kernel                          \
                                              ".signature") = {__VA_ARGS__}

SIGNATURE(add_one, 2, 7, KERNEL_BYTES, KERNEL_BYTES);
SIGNATURE(scale, 3, 5, KERNEL_BYTES, KERNEL_BYTES, KERNEL_BYTES);
SIGNATURE(count_ids, 1, 1000, 1000 * 4);
SIGNATURE(call_in_workgroup, 3, 8, 8, KERNEL_BYTES, KERNEL_BYTES);

static void range(int64_t id, int64_t count, int64_t *begin, int64_t *end) {
  int64_t chunk = (KERNEL_ELEMS + count - 1) / count;
  *begin = id * chunk;
  *end = *begin + chunk < KERNEL_ELEMS ? *begin + chunk : KERNEL_ELEMS;
}

/* out[i] = in[i] + 1 */
void add_one(void **b, int64_t id, int64_t count) {
  const float *in = b[0];
  float *out = b[1];
  int64_t i, e;
  for (range(id, count, &i, &e); i < e; ++i)
    out[i] = in[i] + 1.0f;
}

/* out[i] = in[i] * w[i], w being a weight buffer */
void scale(void **b, int64_t id, int64_t count) {
  const float *in = b[0], *w = b[1];
  float *out = b[2];
  int64_t i, e;
  for (range(id, count, &i, &e); i < e; ++i)
    out[i] = in[i] * w[i];
}

/* Records which workgroup ids ran: hits[id] += 1 (ints). */
void count_ids(void **b, int64_t id, int64_t count) {
  int32_t *hits = b[0];
  (void)count;
  __atomic_fetch_add(&hits[id], 1, __ATOMIC_RELAXED);
}

/* Calls the function whose address is the int64 in b[0] with the workgroup
 * id, then copies in (b[1]) to out (b[2]). The fault tests pass a function
 * that throws from a chosen workgroup: built with -fexceptions, this frame
 * lets a C++ exception unwind through it, as a kernel fault would. */
void call_in_workgroup(void **b, int64_t id, int64_t count) {
  const int64_t *hook = b[0];
  const float *in = b[1];
  float *out = b[2];
  int64_t i, e;
  if (*hook)
    ((void (*)(int64_t))(intptr_t)*hook)(id);
  for (range(id, count, &i, &e); i < e; ++i)
    out[i] = in[i];
}
