// A kernel that throws, for the fault tests: Kiln's generated kernels never
// throw, but the runtime must turn a workgroup that does (a fault in a
// user-supplied or future kernel) into an error instead of std::terminate.
#include <cstdint>
#include <stdexcept>
#include <string>

/* Throws from workgroup b[0][0] when the int32 flag b[0][1] is non-zero;
 * otherwise copies in (b[1]) to out (b[2]), 1024 floats split over the
 * workgroups. */
extern "C" void throw_in_workgroup(void **b, int64_t id, int64_t count) {
  const int32_t *control = static_cast<const int32_t *>(b[0]);
  if (control[1] && id == control[0])
    throw std::runtime_error("injected fault in workgroup " +
                             std::to_string(id));
  const float *in = static_cast<const float *>(b[1]);
  float *out = static_cast<float *>(b[2]);
  int64_t chunk = (1024 + count - 1) / count;
  for (int64_t i = id * chunk; i < (id + 1) * chunk && i < 1024; ++i)
    out[i] = in[i];
}
