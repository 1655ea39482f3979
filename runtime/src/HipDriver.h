//===- HipDriver.h - AMD's HIP runtime, loaded at run time ------*- C++ -*-===//
//
// HIP's module API mirrors the CUDA driver API call for call, so the HIP
// runtime is loaded into the same table (cu::Driver) that the GPU executor
// drives: entry points of the same shape are used as they are, the others
// (device pointers as void*, error names returned rather than written)
// through small adapters. Like libcuda, libamdhip64 is dlopen'ed so that the
// runtime loads everywhere and says "no HIP runtime" where there is none.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HIPDRIVER_H
#define KILN_RUNTIME_HIPDRIVER_H

#include "CudaDriver.h"

namespace kiln {
namespace hip {

/// Loads libamdhip64 and calls hipInit once. Returns null and sets `error`
/// ("no HIP runtime: ...") when it is missing or cannot start.
const cu::Driver *loadDriver(std::string &error);

} // namespace hip
} // namespace kiln

#endif
