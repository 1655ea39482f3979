//===- FuzzImporter.cpp - libFuzzer target: the ONNX importer -------------===//
//
// Any bytes are imported as an ONNX model (ImportCheck.h says what must
// hold): truncated, bit-flipped and made-up protobufs.
//
//===----------------------------------------------------------------------===//
#include "ImportCheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln_fuzz::importAndCheck(data, size);
  return 0;
}
