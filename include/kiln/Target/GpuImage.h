//===- GpuImage.h - one device image of a GPU artifact ----------*- C++ -*-===//
#ifndef KILN_TARGET_GPUIMAGE_H
#define KILN_TARGET_GPUIMAGE_H

#include <string>

namespace kiln {

/// Device code for one chip, as the artifact stores it.
struct GpuImage {
  std::string chip;   // "sm_90", "gfx942"
  std::string format; // "cubin" or "ptx" (NVIDIA), "hsaco" (AMD)
  std::string data;
};

} // namespace kiln

#endif
