//===- ExternalData.h - tensors whose bytes live beside the model -*- C++
//-*-===//
#ifndef KILN_LIB_IMPORT_EXTERNALDATA_H
#define KILN_LIB_IMPORT_EXTERNALDATA_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

namespace onnx {
class ModelProto;
} // namespace onnx

namespace kiln::onnx_import {

/// Reads every tensor of `model` (initializers and Constant values, in
/// subgraphs too) whose data is external into its raw_data, so that the
/// rest of the importer sees ordinary tensors. Each location must name a
/// regular file inside the folder of `modelPath` (no absolute path, no
/// '..', no symbolic link out of it), and its offset and length must lie in
/// the file and match the tensor's size; otherwise an error names the
/// tensor and the location.
mlir::LogicalResult loadExternalData(onnx::ModelProto &model,
                                     llvm::StringRef modelPath,
                                     mlir::Location loc);

} // namespace kiln::onnx_import

#endif
