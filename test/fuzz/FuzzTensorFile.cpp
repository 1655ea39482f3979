//===- FuzzTensorFile.cpp - libFuzzer target: .npy and .pb tensor readers -===//
//
// The bytes are read both as an ONNX TensorProto and as a .npy file (from a
// memfd, through the same path-based readers kiln-run uses).
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"
#include "common/TensorFile.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemoryFile file(data, size);
  if (!file.ok())
    return 0;
  std::string path = file.path();
  for (bool npy : {false, true}) {
    kiln::Tensor tensor;
    std::string error;
    bool ok = npy ? kiln::readNpy(path, tensor, error)
                  : kiln::readTensorProto(path, tensor, error);
    if (!ok && error.empty())
      std::abort(); // a failure without a message
    if (ok) {
      uint64_t bytes = 0;
      if (!kiln::tensorByteSize(tensor.dtype, tensor.shape, bytes) ||
          bytes != tensor.bytes.size())
        std::abort(); // a tensor whose data does not match its shape
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        (void)tensor.at(i);
    }
  }
  return 0;
}
