//===- ExternalData.cpp - tensors whose bytes live beside the model -------===//
//
// Models over protobuf's 2 GiB, and what exporters write by default for
// large ones, keep their weights in files next to the .onnx: a TensorProto
// with data_location EXTERNAL and external_data entries `location`,
// `offset` and `length`. The importer reads them before anything else looks
// at the tensors. A model is untrusted input: its locations are confined to
// its own folder, so that it cannot make the compiler read another file
// (and embed it in an artifact).
//
//===----------------------------------------------------------------------===//
#include "ExternalData.h"

#include "OnnxImporterImpl.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace kiln::onnx_import;

namespace {

struct ExternalRange {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

class ExternalDataReader {
public:
  ExternalDataReader(llvm::StringRef modelPath, Location loc)
      : modelPath(modelPath), loc(loc) {}

  LogicalResult loadGraph(onnx::GraphProto &graph) {
    for (onnx::TensorProto &tensor : *graph.mutable_initializer())
      if (failed(load(tensor)))
        return failure();
    for (onnx::NodeProto &node : *graph.mutable_node())
      for (onnx::AttributeProto &attribute : *node.mutable_attribute()) {
        if (attribute.has_t() && failed(load(*attribute.mutable_t())))
          return failure();
        for (onnx::TensorProto &tensor : *attribute.mutable_tensors())
          if (failed(load(tensor)))
            return failure();
        if (attribute.has_g() && failed(loadGraph(*attribute.mutable_g())))
          return failure();
        for (onnx::GraphProto &subgraph : *attribute.mutable_graphs())
          if (failed(loadGraph(subgraph)))
            return failure();
      }
    return success();
  }

private:
  LogicalResult load(onnx::TensorProto &tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      return success();
    FailureOr<ExternalRange> range = parseEntries(tensor);
    if (failed(range))
      return failure();
    FailureOr<std::string> path = confinedPath(tensor, range->location);
    if (failed(path))
      return failure();
    FailureOr<std::string> bytes = read(tensor, *path, *range);
    if (failed(bytes))
      return failure();
    tensor.set_raw_data(std::move(*bytes));
    tensor.clear_external_data();
    tensor.set_data_location(onnx::TensorProto::DEFAULT);
    return success();
  }

  InFlightDiagnostic fail(const onnx::TensorProto &tensor) {
    return emitError(loc) << "tensor '" << tensor.name() << "': ";
  }

  FailureOr<ExternalRange> parseEntries(const onnx::TensorProto &tensor) {
    ExternalRange range;
    for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
      uint64_t number = 0;
      bool isNumber = !llvm::StringRef(entry.value()).getAsInteger(10, number);
      if (entry.key() == "location")
        range.location = entry.value();
      else if ((entry.key() == "offset" || entry.key() == "length") &&
               !isNumber)
        return fail(tensor) << "external data " << entry.key() << " '"
                            << entry.value() << "' is not a byte count";
      else if (entry.key() == "offset")
        range.offset = number;
      else if (entry.key() == "length")
        range.length = number;
    }
    if (range.location.empty())
      return fail(tensor) << "external data without a location";
    return range;
  }

  /// `location` inside the model's folder, with every link resolved.
  FailureOr<std::string> confinedPath(const onnx::TensorProto &tensor,
                                      const std::string &location) {
    llvm::StringRef name(location);
    if (llvm::sys::path::is_absolute(name))
      return fail(tensor) << "external data location '" << location
                          << "' is an absolute path; Kiln reads external "
                             "data only from the model's folder";
    for (llvm::StringRef part : llvm::make_range(llvm::sys::path::begin(name),
                                                 llvm::sys::path::end(name)))
      if (part == "..")
        return fail(tensor) << "external data location '" << location
                            << "' leads out of the model's folder ('..')";
    if (failed(resolveFolder(tensor)))
      return failure();
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, name);
    llvm::SmallString<256> real;
    if (std::error_code code = llvm::sys::fs::real_path(path, real))
      return fail(tensor) << "cannot read external data '" << location
                          << "' (looked for " << path
                          << "): " << code.message();
    if (!llvm::StringRef(real).starts_with(folder + "/"))
      return fail(tensor) << "external data location '" << location
                          << "' resolves to '" << real
                          << "', outside the model's folder (a symbolic link)";
    return std::string(real);
  }

  FailureOr<std::string> read(const onnx::TensorProto &tensor,
                              const std::string &path,
                              const ExternalRange &range) {
    llvm::sys::fs::file_status status;
    if (std::error_code code = llvm::sys::fs::status(path, status))
      return fail(tensor) << "cannot read external data '" << range.location
                          << "': " << code.message();
    if (status.type() != llvm::sys::fs::file_type::regular_file)
      return fail(tensor) << "external data '" << range.location
                          << "' is not a regular file";
    uint64_t size = status.getSize();
    if (range.offset > size ||
        (range.length && *range.length > size - range.offset))
      return fail(tensor) << "external data range [offset " << range.offset
                          << ", length "
                          << (range.length ? std::to_string(*range.length)
                                           : std::string("to the end"))
                          << "] lies beyond the " << size << " bytes of '"
                          << range.location << "'";
    uint64_t length = range.length ? *range.length : size - range.offset;
    FailureOr<uint64_t> expected = expectedBytes(tensor);
    if (failed(expected))
      return failure();
    if (length != *expected)
      return fail(tensor) << "external data holds " << length
                          << " bytes, and its " << dtypeName(tensor.data_type())
                          << " shape needs " << *expected;
    auto slice = llvm::MemoryBuffer::getFileSlice(path, length, range.offset,
                                                  /*IsVolatile=*/false);
    if (!slice)
      return fail(tensor) << "cannot read external data '" << range.location
                          << "': " << slice.getError().message();
    return (*slice)->getBuffer().str();
  }

  FailureOr<uint64_t> expectedBytes(const onnx::TensorProto &tensor) {
    uint64_t width = bytesPerElement(tensor.data_type());
    if (tensor.data_type() == onnx::TensorProto::STRING || width == 0)
      return fail(tensor) << "external data of dtype "
                          << dtypeName(tensor.data_type())
                          << " is not supported";
    uint64_t bytes = width;
    for (int64_t dim : tensor.dims())
      if (dim < 0 || __builtin_mul_overflow(bytes, uint64_t(dim), &bytes))
        return fail(tensor) << "has an invalid or huge shape";
    // 4-bit values are packed two a byte.
    if (tensor.data_type() == kOnnxInt4 || tensor.data_type() == kOnnxUint4)
      bytes = (bytes + 1) / 2;
    return bytes;
  }

  /// The model's folder with every link resolved, found when the first
  /// external tensor needs it (a model without one may come from a path
  /// that does not resolve: a pipe, a deleted memfd).
  LogicalResult resolveFolder(const onnx::TensorProto &tensor) {
    if (!folder.empty())
      return success();
    llvm::SmallString<256> real;
    if (std::error_code code = llvm::sys::fs::real_path(modelPath, real))
      return fail(tensor) << "has external data, but the model's path '"
                          << modelPath
                          << "' does not resolve: " << code.message();
    folder = llvm::sys::path::parent_path(real).str();
    return success();
  }

  std::string modelPath;
  std::string folder;
  Location loc;
};

} // namespace

LogicalResult kiln::onnx_import::loadExternalData(onnx::ModelProto &model,
                                                  llvm::StringRef modelPath,
                                                  Location loc) {
  return ExternalDataReader(modelPath, loc).loadGraph(*model.mutable_graph());
}
