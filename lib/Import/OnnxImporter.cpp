//===- OnnxImporter.cpp - ONNX ModelProto → kiln dialect ------------------===//
//
// The importer walks the ONNX graph in order (ONNX requires topological
// order), turns initializers and Constant nodes into kiln.constant ops, and
// hands every node to the handler registered for its op type in
// OnnxOpHandlers.cpp. Handlers are opset-aware; result shapes come from the
// kiln ops' own type inference, never from ONNX's shape inference, so models
// at opsets newer than libonnx knows import the same way.
//
// Per-node failures do not stop the import: every unsupported node is
// collected so that the user sees the whole list at once.
//
//===----------------------------------------------------------------------===//
#include "ConstantEvaluator.h"
#include "ExternalData.h"
#include "NodeContext.h"
#include "common/TensorFile.h"
#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

FailureOr<Type> onnx_import::elementTypeFor(MLIRContext *ctx, int onnxType) {
  Builder b(ctx);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return Type(b.getF32Type());
  case onnx::TensorProto::FLOAT16:
    return Type(b.getF16Type());
  case onnx::TensorProto::BFLOAT16:
    return Type(b.getBF16Type());
  case onnx::TensorProto::DOUBLE:
    return Type(b.getF64Type());
  case onnx::TensorProto::INT8:
    return Type(b.getIntegerType(8));
  case onnx::TensorProto::UINT8:
    return Type(b.getIntegerType(8, /*isSigned=*/false));
  case onnx::TensorProto::INT32:
    return Type(b.getIntegerType(32));
  case onnx::TensorProto::INT64:
    return Type(b.getIntegerType(64));
  case onnx::TensorProto::INT16:
    return Type(b.getIntegerType(16));
  case onnx::TensorProto::UINT16:
    return Type(b.getIntegerType(16, /*isSigned=*/false));
  case onnx::TensorProto::UINT32:
    return Type(b.getIntegerType(32, /*isSigned=*/false));
  case onnx::TensorProto::UINT64:
    return Type(b.getIntegerType(64, /*isSigned=*/false));
  case onnx::TensorProto::BOOL:
    return Type(b.getIntegerType(1));
  default:
    return failure();
  }
}

std::string onnx_import::dtypeName(int onnxType) {
  const auto *desc = onnx::TensorProto::DataType_descriptor();
  if (const auto *value = desc->FindValueByNumber(onnxType))
    return llvm::StringRef(value->name()).lower();
  if (onnxType == kOnnxInt4 || onnxType == kOnnxUint4)
    return onnxType == kOnnxInt4 ? "int4" : "uint4";
  return "dtype#" + std::to_string(onnxType);
}

size_t onnx_import::bytesPerElement(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 8;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  default:
    return 1;
  }
}

/// A tensor of 4-bit values (INT4, UINT4: two a byte, the first in the low
/// bits, in raw_data or one byte per int32_data entry) widened to INT8 or
/// UINT8, sign-extended for INT4: what the quantization ops read.
static LogicalResult readFourBitTensor(const onnx::TensorProto &tensor,
                                       int64_t count, ConstTensor &out,
                                       std::string &error) {
  bool isSigned = tensor.data_type() == kOnnxInt4;
  out.fourBitType = tensor.data_type();
  out.onnxType = isSigned ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
  int64_t packedBytes = (count + 1) / 2;
  std::string packed;
  if (tensor.has_raw_data()) {
    packed = tensor.raw_data();
  } else {
    for (int32_t value : tensor.int32_data())
      packed.push_back(char(value));
  }
  if (int64_t(packed.size()) != packedBytes) {
    error = "tensor '" + tensor.name() + "' has " +
            std::to_string(packed.size()) + " bytes of 4-bit values, its " +
            "shape needs " + std::to_string(packedBytes);
    return failure();
  }
  out.bytes.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    int value = (uint8_t(packed[i / 2]) >> (4 * (i % 2))) & 0xF;
    out.bytes[i] = char(isSigned && value >= 8 ? value - 16 : value);
  }
  return success();
}

LogicalResult onnx_import::readTensorBytes(const onnx::TensorProto &tensor,
                                           ConstTensor &out, std::string &error,
                                           std::string *takeRaw) {
  out.onnxType = tensor.data_type();
  out.shape.assign(tensor.dims().begin(), tensor.dims().end());
  int64_t count = 1;
  for (int64_t d : out.shape) {
    if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d)) {
      error = "tensor '" + tensor.name() + "' has an invalid or huge shape";
      return failure();
    }
    count *= d;
  }
  size_t width = bytesPerElement(out.onnxType);
  size_t bytes = size_t(count) * width;
  // loadExternalData read every external tensor of the model; a frozen
  // input's TensorProto file may not point at other files.
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "tensor '" + tensor.name() +
            "' stores its data in an external file, which only a model's "
            "own tensors may do";
    return failure();
  }
  if (out.onnxType == kOnnxInt4 || out.onnxType == kOnnxUint4)
    return readFourBitTensor(tensor, count, out, error);
  // The data is checked against the shape before anything is allocated: a
  // small file must not make the importer allocate what its dims claim
  // (found by kiln-fuzz-importer).
  auto copyFrom = [&](const auto &field, auto convert) -> LogicalResult {
    if ((int64_t)field.size() != count) {
      error = "tensor '" + tensor.name() + "' has " +
              std::to_string(field.size()) + " values for " +
              std::to_string(count) + " elements";
      return failure();
    }
    out.bytes.resize(bytes);
    for (int64_t i = 0; i < count; ++i)
      convert(field.Get(i), out.bytes.data() + i * width);
    return success();
  };
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != bytes) {
      error = "tensor '" + tensor.name() + "' has " +
              std::to_string(tensor.raw_data().size()) +
              " bytes of raw data, its shape needs " + std::to_string(bytes);
      return failure();
    }
    // An empty tensor has no storage: memcpy must not see its null pointer
    // (found by the sanitized node suite).
    if (takeRaw)
      out.bytes.swap(*takeRaw);
    else
      out.bytes.assign(tensor.raw_data().begin(), tensor.raw_data().end());
    return success();
  }
  switch (out.onnxType) {
  case onnx::TensorProto::FLOAT:
    return copyFrom(tensor.float_data(),
                    [](float v, char *p) { memcpy(p, &v, 4); });
  case onnx::TensorProto::DOUBLE:
    return copyFrom(tensor.double_data(),
                    [](double v, char *p) { memcpy(p, &v, 8); });
  case onnx::TensorProto::INT64:
    return copyFrom(tensor.int64_data(),
                    [](int64_t v, char *p) { memcpy(p, &v, 8); });
  case onnx::TensorProto::INT32:
    return copyFrom(tensor.int32_data(),
                    [](int32_t v, char *p) { memcpy(p, &v, 4); });
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return copyFrom(tensor.int32_data(), [](int32_t v, char *p) {
      uint16_t h = uint16_t(v);
      memcpy(p, &h, 2);
    });
  case onnx::TensorProto::UINT32:
    return copyFrom(tensor.uint64_data(), [](uint64_t v, char *p) {
      uint32_t u = uint32_t(v);
      memcpy(p, &u, 4);
    });
  case onnx::TensorProto::UINT64:
    return copyFrom(tensor.uint64_data(),
                    [](uint64_t v, char *p) { memcpy(p, &v, 8); });
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return copyFrom(tensor.int32_data(),
                    [](int32_t v, char *p) { *p = char(v); });
  default:
    error = "tensor '" + tensor.name() + "' has unsupported dtype " +
            dtypeName(out.onnxType);
    return failure();
  }
}

std::vector<int64_t> ConstTensor::asInts() const {
  std::vector<int64_t> values;
  size_t width = bytesPerElement(onnxType);
  auto read = [&](auto value, size_t i) {
    memcpy(&value, bytes.data() + i, sizeof value);
    return int64_t(value);
  };
  for (size_t i = 0; i + width <= bytes.size(); i += width) {
    switch (onnxType) {
    case onnx::TensorProto::INT64:
      values.push_back(read(int64_t(), i));
      break;
    case onnx::TensorProto::INT32:
      values.push_back(read(int32_t(), i));
      break;
    case onnx::TensorProto::UINT32:
      values.push_back(read(uint32_t(), i));
      break;
    case onnx::TensorProto::INT16:
      values.push_back(read(int16_t(), i));
      break;
    case onnx::TensorProto::UINT16:
      values.push_back(read(uint16_t(), i));
      break;
    case onnx::TensorProto::INT8:
      values.push_back(read(int8_t(), i));
      break;
    case onnx::TensorProto::UINT8:
      values.push_back(read(uint8_t(), i));
      break;
    default:
      return values;
    }
  }
  return values;
}

std::optional<float> ConstTensor::asScalarFloat() const {
  if (bytes.size() != bytesPerElement(onnxType))
    return std::nullopt;
  if (onnxType == onnx::TensorProto::FLOAT) {
    float v;
    memcpy(&v, bytes.data(), 4);
    return v;
  }
  if (onnxType == onnx::TensorProto::DOUBLE) {
    double v;
    memcpy(&v, bytes.data(), 8);
    return float(v);
  }
  return std::nullopt;
}

/// Small tensors become plain dense attributes (foldable, readable); larger
/// ones (weights) become dense_resource blobs so the IR stays small. A blob
/// takes the tensor's bytes over (`tensor.stored` then views them): weights
/// run to hundreds of megabytes, and every copy of them costs.
static ElementsAttr makeElementsAttr(RankedTensorType type, ConstTensor &tensor,
                                     StringRef blobName) {
  constexpr int64_t kInlineElementLimit = 16;
  ArrayRef<char> raw(tensor.bytes.data(), tensor.bytes.size());
  if (type.getNumElements() <= kInlineElementLimit) {
    if (type.getElementType().isInteger(1)) {
      SmallVector<bool> bits;
      for (char c : raw)
        bits.push_back(c != 0);
      return DenseElementsAttr::get(type, bits);
    }
    return DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  // operator new aligns what it returns to max_align_t, as a heap blob is.
  auto owned = std::make_unique<std::string>(std::move(tensor.bytes));
  tensor.bytes.clear();
  tensor.stored = ArrayRef<char>(owned->data(), owned->size());
  AsmResourceBlob blob(
      tensor.stored, alignof(std::max_align_t),
      [owned = std::move(owned)](void *, size_t, size_t) mutable {
        owned.reset();
      },
      /*dataIsMutable=*/true);
  return DenseResourceElementsAttr::get(type, blobName, std::move(blob));
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext &context, onnx::ModelProto &model,
                             StringRef fileName)
    : context(context), model(model), builder(&context),
      fileName(fileName.str()) {
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      defaultOpset = opset.version();
}

Location GraphImporter::nodeLocation(const onnx::NodeProto &node,
                                     int index) const {
  std::string name = node.name();
  if (name.empty())
    name = node.op_type() + "_" + std::to_string(index);
  return NameLoc::get(StringAttr::get(&context, name),
                      FileLineColLoc::get(&context, fileName, 0, 0));
}

void GraphImporter::recordDeclaredShapes(const onnx::GraphProto &graph) {
  auto record = [&](const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return;
    std::vector<int64_t> shape;
    for (const auto &dim : info.type().tensor_type().shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0)
        return;
      shape.push_back(dim.dim_value());
    }
    declaredShapes[info.name()] = shape;
  };
  for (const auto &info : graph.value_info())
    record(info);
  for (const auto &info : graph.output())
    record(info);
}

const ConstTensor *GraphImporter::findConstant(const std::string &name) {
  auto it = constants.find(name);
  if (it == constants.end())
    return nullptr;
  ConstTensor &tensor = it->second;
  if (tensor.bytes.empty() && !tensor.stored.empty())
    tensor.bytes.assign(tensor.stored.begin(), tensor.stored.end());
  return &tensor;
}

Value GraphImporter::createConstant(StringRef name, ConstTensor tensor,
                                    Location loc, std::string &error) {
  auto elementType = elementTypeFor(&context, tensor.onnxType);
  if (failed(elementType)) {
    error = "constant '" + name.str() + "' has unsupported dtype " +
            dtypeName(tensor.onnxType);
    return nullptr;
  }
  auto type = RankedTensorType::get(tensor.shape, *elementType);
  std::string blobName = name.str();
  for (char &c : blobName)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (blobName.empty() || llvm::isDigit(blobName[0]))
    blobName = "w_" + blobName;
  auto value = makeElementsAttr(type, tensor, blobName);
  constants[name.str()] = std::move(tensor);
  return ConstantOp::create(builder, loc, value).getResult();
}

std::optional<uint64_t> onnx_import::tensorBytes(RankedTensorType type) {
  uint64_t bytes =
      std::max<uint64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  for (int64_t d : type.getShape()) {
    if (d == 0)
      return 0;
    if (ShapedType::isDynamic(d) ||
        __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      return std::nullopt;
  }
  return bytes;
}

/// Emits the error for a tensor over `limit` bytes (or overflowing) at
/// `loc`, naming `what`.
static LogicalResult checkTensorSize(RankedTensorType type, uint64_t limit,
                                     Location loc, const Twine &what) {
  std::optional<uint64_t> bytes = tensorBytes(type);
  if (bytes && *bytes <= limit)
    return success();
  InFlightDiagnostic diag = emitError(loc) << what << " has type " << type;
  if (bytes)
    diag << " (" << *bytes << " bytes), more than the " << limit
         << "-byte limit (--max-tensor-bytes)";
  else
    diag << ", whose size overflows 64 bits";
  return failure();
}

LogicalResult GraphImporter::resolveInputType(
    const onnx::ValueInfoProto &info, const ImportOptions &options,
    RankedTensorType &type, std::optional<int64_t> &batchDim) {
  const auto &name = info.name();
  batchDim.reset();
  if (!info.type().has_tensor_type()) {
    emitError(UnknownLoc::get(&context))
        << "graph input '" << name << "' is not a tensor";
    return failure();
  }
  const auto &tensorType = info.type().tensor_type();
  auto elementType = elementTypeFor(&context, tensorType.elem_type());
  if (failed(elementType)) {
    emitError(UnknownLoc::get(&context))
        << "graph input '" << name << "' has unsupported dtype "
        << dtypeName(tensorType.elem_type());
    return failure();
  }
  SmallVector<int64_t> shape;
  // --dynamic-batch: a symbolic leading dim is the batch, and so is a dim
  // named as one (a recurrent state's [layers, batch, hidden]).
  if (options.dynamicBatch && tensorType.has_shape())
    for (int i = 0; i < tensorType.shape().dim_size() && !batchDim; ++i) {
      const auto &dim = tensorType.shape().dim(i);
      bool symbolic = !dim.has_dim_value() || dim.dim_value() < 0;
      if (symbolic && (i == 0 || (dim.has_dim_param() &&
                                  batchSymbols.count(dim.dim_param()))))
        batchDim = i;
    }
  auto given = options.inputShapes.find(name);
  if (given != options.inputShapes.end()) {
    shape.assign(given->second.begin(), given->second.end());
    if (tensorType.has_shape() &&
        tensorType.shape().dim_size() != (int)shape.size()) {
      emitError(UnknownLoc::get(&context))
          << "--input-shape for '" << name << "' has rank " << shape.size()
          << " but the model declares rank " << tensorType.shape().dim_size();
      return failure();
    }
    for (int i = 0; tensorType.has_shape() && i < (int)shape.size(); ++i) {
      const auto &dim = tensorType.shape().dim(i);
      // A negative dim_value is symbolic (paddle2onnx writes -1 for a
      // dynamic batch).
      if (dim.has_dim_value() && dim.dim_value() >= 0 &&
          dim.dim_value() != shape[i]) {
        emitError(UnknownLoc::get(&context))
            << "--input-shape for '" << name << "' sets dim " << i << " to "
            << shape[i] << " but the model fixes it to " << dim.dim_value();
        return failure();
      }
    }
  } else {
    if (!tensorType.has_shape()) {
      emitError(UnknownLoc::get(&context))
          << "graph input '" << name << "' has no shape; pass --input-shape "
          << name << "=DxDx...";
      return failure();
    }
    for (const auto &dim : tensorType.shape().dim()) {
      bool symbolic = !dim.has_dim_value() || dim.dim_value() < 0;
      if (batchDim && int64_t(shape.size()) == *batchDim) {
        shape.push_back(1); // one batch element per chunk
        continue;
      }
      if (symbolic && options.symbolicDimsAs > 0) {
        // MLIR drops warnings without a handler: straight to stderr.
        llvm::errs() << "warning: graph input '" << name
                     << "' has symbolic dim '" << dim.dim_param()
                     << "', taken as " << options.symbolicDimsAs
                     << " for --check; pass --input-shape " << name
                     << "=DxDx... to check the shapes you will compile\n";
        shape.push_back(options.symbolicDimsAs);
        continue;
      }
      if (symbolic) {
        emitError(UnknownLoc::get(&context))
            << "graph input '" << name << "' has symbolic dim '"
            << dim.dim_param() << "'; pass --input-shape " << name
            << "=DxDx... to make it concrete";
        return failure();
      }
      shape.push_back(dim.dim_value());
    }
  }
  for (int64_t d : shape)
    if (d < 0) {
      emitError(UnknownLoc::get(&context))
          << "graph input '" << name << "' has a negative dim";
      return failure();
    }
  type = RankedTensorType::get(shape, *elementType);
  return checkTensorSize(type, options.maxTensorBytes,
                         UnknownLoc::get(&context),
                         "graph input '" + name + "'");
}

/// Protobuf messages (a model, a TensorProto) hold at most 2 GiB.
constexpr uint64_t kMaxProtobufBytes = (uint64_t(1) << 31) - 1;

/// The bytes of `path` when it is a regular file of at most `limit` bytes;
/// otherwise fails with why not in `error` (`tooLarge` after the size). A
/// device, a pipe or a directory is refused before it is opened: /dev/zero
/// would be read forever, a FIFO would wait for a writer.
static FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(StringRef path, uint64_t limit, StringRef tooLarge,
                std::string &error) {
  llvm::sys::fs::file_status status;
  if (std::error_code code = llvm::sys::fs::status(path, status)) {
    error = code.message();
    return failure();
  }
  switch (status.type()) {
  case llvm::sys::fs::file_type::regular_file:
    break;
  case llvm::sys::fs::file_type::directory_file:
    error = "it is a directory";
    return failure();
  case llvm::sys::fs::file_type::character_file:
  case llvm::sys::fs::file_type::block_file:
    error = "it is a device, not a regular file";
    return failure();
  case llvm::sys::fs::file_type::fifo_file:
    error = "it is a pipe, not a regular file";
    return failure();
  default:
    error = "it is not a regular file";
    return failure();
  }
  if (status.getSize() > limit) {
    error = "it is " + std::to_string(status.getSize()) + " bytes; " +
            tooLarge.str();
    return failure();
  }
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    error = file.getError().message();
    return failure();
  }
  return std::move(*file);
}

/// A .npy file as the TensorProto it stands for (raw little-endian data).
static bool npyToTensorProto(const std::string &file, onnx::TensorProto &proto,
                             std::string &error) {
  kiln::Tensor tensor;
  if (!kiln::readNpy(file, tensor, error))
    return false;
  proto.set_data_type(kiln::onnxTypeOf(tensor.dtype));
  for (int64_t dim : tensor.shape)
    proto.add_dims(dim);
  proto.set_raw_data(tensor.bytes.data(), tensor.bytes.size());
  return true;
}

LogicalResult GraphImporter::freezeInput(const onnx::ValueInfoProto &input,
                                         const std::string &file,
                                         Location loc) {
  std::string why;
  FailureOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = readRegularFile(
      file, kMaxProtobufBytes, "a TensorProto holds at most 2 GiB", why);
  if (failed(buffer))
    return emitError(loc) << "cannot read the value of frozen input '"
                          << input.name() << "' from '" << file << "': " << why;
  onnx::TensorProto proto;
  std::string error;
  if ((*buffer)->getBuffer().starts_with("\x93NUMPY")) {
    if (!npyToTensorProto(file, proto, error))
      return emitError(loc) << "cannot read the value of frozen input '"
                            << input.name() << "' from " << error;
  } else if (!proto.ParseFromArray((*buffer)->getBufferStart(),
                                   (int)(*buffer)->getBufferSize())) {
    return emitError(loc) << "cannot read the value of frozen input '"
                          << input.name() << "' from '" << file
                          << "': neither a TensorProto nor a .npy file";
  }
  ConstTensor tensor;
  if (failed(readTensorBytes(proto, tensor, error)))
    return emitError(loc) << error;
  const auto &declared = input.type().tensor_type();
  if (declared.elem_type() != tensor.onnxType)
    return emitError(loc) << "frozen input '" << input.name() << "' is "
                          << dtypeName(tensor.onnxType) << ", the model says "
                          << dtypeName(declared.elem_type());
  Value value = createConstant(input.name(), std::move(tensor), loc, error);
  if (!value)
    return emitError(loc) << error;
  values[input.name()] = value;
  return success();
}

void GraphImporter::markUnsupported(const onnx::NodeProto &node, int index,
                                    const std::string &reason,
                                    const std::string &needsConstant) {
  std::string name = node.name();
  if (name.empty())
    name = node.op_type() + "_" + std::to_string(index);
  unsupported.push_back({node.op_type(), name, reason, needsConstant});
  for (const auto &output : node.output())
    poisoned.insert(output);
}

/// Why an op type cannot be imported at all, or "" when it has a handler.
/// The node's domain as the op table names it: "" for ai.onnx.
static std::string domainOf(const onnx::NodeProto &node) {
  return node.domain() == "ai.onnx" ? "" : node.domain();
}

const OpHandler *GraphImporter::handlerFor(const onnx::NodeProto &node) const {
  std::string domain = domainOf(node);
  if (domain.empty())
    return opRegistry().find("", node.op_type(), defaultOpset);
  // Other domains (the training preview's optimizers) are imported by name.
  int minOpset, maxOpset;
  if (!opRegistry().has(domain, node.op_type(), minOpset, maxOpset))
    return nullptr;
  return opRegistry().find(domain, node.op_type(), minOpset);
}

std::string GraphImporter::opTypeProblem(const onnx::NodeProto &node) const {
  std::string domain = domainOf(node);
  int minOpset, maxOpset;
  bool known = opRegistry().has(domain, node.op_type(), minOpset, maxOpset);
  if (!domain.empty() && !known)
    return opRegistry().hasDomain(domain)
               ? "op not supported in domain '" + node.domain() + "'"
               : "domain '" + node.domain() + "' not supported";
  if (!domain.empty())
    return "";
  if (!known)
    return canEvaluateConstant(node.op_type()) ? "" : "op not supported";
  if (defaultOpset < minOpset || defaultOpset > maxOpset)
    return "opset " + std::to_string(defaultOpset) +
           " not supported (supported: " + std::to_string(minOpset) + "-" +
           std::to_string(maxOpset) + ")";
  return "";
}

std::string
GraphImporter::attributeTypeProblem(const onnx::NodeProto &node) const {
  if (!domainOf(node).empty())
    return "";
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), int(defaultOpset), node.domain());
  if (!schema)
    return "";
  for (const onnx::AttributeProto &attribute : node.attribute()) {
    // Files from before attributes carried their type, and references to
    // a function's attributes, are taken as they come.
    if (attribute.type() == onnx::AttributeProto::UNDEFINED ||
        !attribute.ref_attr_name().empty())
      continue;
    auto declared = schema->attributes().find(attribute.name());
    if (declared == schema->attributes().end() ||
        declared->second.type == attribute.type())
      continue;
    return "attribute '" + attribute.name() + "' is " +
           onnx::AttributeProto::AttributeType_Name(attribute.type()) + "; " +
           node.op_type() + " takes " +
           onnx::AttributeProto::AttributeType_Name(declared->second.type) +
           " (an invalid model)";
  }
  return "";
}

/// Nodes whose inputs are all known at import time (shape arithmetic,
/// constant masks) are computed here and become constants; Shape and Size
/// need only the input's static shape. Fails when the node must be imported
/// as a kernel instead; `error` says why when evaluation itself failed.
LogicalResult GraphImporter::foldConstantNode(const onnx::NodeProto &node,
                                              int index, std::string &error) {
  const std::string &op = node.op_type();
  std::vector<ConstTensor> outputs;
  if ((op == "Shape" || op == "Size") && node.input_size() == 1 &&
      values.count(node.input(0))) {
    auto shape =
        cast<RankedTensorType>(values[node.input(0)].getType()).getShape();
    if (op == "Shape") {
      std::optional<int64_t> end;
      int64_t start = 0;
      for (const auto &a : node.attribute()) {
        if (a.name() == "start")
          start = a.i();
        if (a.name() == "end")
          end = a.i();
      }
      outputs.push_back(shapeOf(shape, start, end));
    } else {
      ConstTensor size;
      size.onnxType = onnx::TensorProto::INT64;
      int64_t count = 1;
      for (int64_t d : shape)
        if (__builtin_mul_overflow(count, d, &count)) {
          error = "Size of a tensor whose element count overflows 64 bits";
          return failure();
        }
      size.bytes.resize(8);
      memcpy(size.bytes.data(), &count, 8);
      outputs.push_back(size);
    }
  } else {
    if (!canEvaluateConstant(op))
      return failure();
    std::vector<const ConstTensor *> inputs;
    for (const auto &name : node.input()) {
      if (name.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      const ConstTensor *input = findConstant(name);
      if (!input)
        return failure();
      inputs.push_back(input);
    }
    if (failed(
            evaluateConstantNode(node, defaultOpset, inputs, outputs, error)))
      return failure();
  }
  // A budget over the whole model: each node's results are bounded
  // (kMaxConstantElements), but a chain of them could still fold a small
  // file into gigabytes of weights.
  uint64_t bytes = 0;
  for (const ConstTensor &tensor : outputs)
    bytes += tensor.bytes.size();
  if (foldedBytes + bytes > foldBudget) {
    error = "computing its " + std::to_string(bytes) +
            " bytes at compile time would bring the constants computed so "
            "far to " +
            std::to_string(foldedBytes + bytes) + " bytes, past the " +
            std::to_string(foldBudget) + "-byte budget (--max-folded-bytes)";
    return failure();
  }
  foldedBytes += bytes;
  Location loc = nodeLocation(node, index);
  for (auto [i, tensor] : llvm::enumerate(outputs)) {
    if ((int)i >= node.output_size() || node.output(i).empty())
      continue;
    Value value = createConstant(node.output(i), std::move(tensor), loc, error);
    if (!value)
      return failure();
    values[node.output(i)] = value;
  }
  return success();
}

/// The ONNX dtype of a kiln element type (the inverse of elementTypeFor).
static int onnxDTypeOf(Type element) {
  if (element.isF32())
    return onnx::TensorProto::FLOAT;
  if (element.isF16())
    return onnx::TensorProto::FLOAT16;
  if (element.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (element.isF64())
    return onnx::TensorProto::DOUBLE;
  if (element.isInteger(1))
    return onnx::TensorProto::BOOL;
  bool isUnsigned = element.isUnsignedInteger();
  switch (element.getIntOrFloatBitWidth()) {
  case 8:
    return isUnsigned ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
  case 16:
    return isUnsigned ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
  case 32:
    return isUnsigned ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
  default:
    return isUnsigned ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
  }
}

/// Folds `op`, whose operands are all constants, with its folder,
/// charging the results to the folding budget; false when it stays a
/// kernel. `outputs` (the node's) follow the values they name. Unless
/// `mayGrow`, an op whose results outsize its operands together (a
/// broadcast) stays a kernel too.
bool GraphImporter::foldImportedOp(Operation *op, ArrayRef<std::string> outputs,
                                   bool mayGrow) {
  SmallVector<Attribute> operands;
  uint64_t operandBytes = 0;
  for (Value operand : op->getOperands()) {
    Attribute value;
    if (!matchPattern(operand, m_Constant(&value)))
      return false;
    operands.push_back(value);
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    operandBytes += type ? tensorBytes(type).value_or(0) : 0;
  }
  // Charged before it is computed: a result past the budget is never made.
  uint64_t bytes = 0;
  for (Value result : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    std::optional<uint64_t> size = type ? tensorBytes(type) : std::nullopt;
    if (!size)
      return false;
    bytes += *size;
  }
  if (foldedBytes + bytes > foldBudget || (!mayGrow && bytes > operandBytes))
    return false;
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.empty())
    return false;
  for (auto [result, folded] : llvm::zip(op->getResults(), results))
    if (dyn_cast<Value>(folded) == result)
      return false; // folded in place: still this op
  foldedBytes += bytes;
  OpBuilder here(op);
  for (auto [result, folded] : llvm::zip(op->getResults(), results)) {
    Value replacement = dyn_cast<Value>(folded);
    if (!replacement)
      replacement = ConstantOp::create(
          here, op->getLoc(), cast<ElementsAttr>(cast<Attribute>(folded)));
    for (const std::string &name : outputs)
      if (!name.empty() && values[name] == result)
        values[name] = replacement;
    result.replaceAllUsesWith(replacement);
  }
  op->erase();
  return true;
}

/// A node that reads only constants is imported as kernels and then
/// computed by the kiln ops' folders, so that its outputs are constants
/// later nodes read (a Reshape's shape). What no folder computes stays a
/// kernel. Each constant output is kept by its ONNX name, as initializers
/// are.
void GraphImporter::foldImportedNode(const onnx::NodeProto &node, int index,
                                     Operation *lastBefore) {
  std::vector<std::string> outputs(node.output().begin(), node.output().end());
  Block *block = builder.getInsertionBlock();
  auto createdOps = [&] {
    SmallVector<Operation *> ops;
    for (Block::iterator it = lastBefore ? std::next(lastBefore->getIterator())
                                         : block->begin();
         it != builder.getInsertionPoint(); ++it)
      ops.push_back(&*it);
    return ops;
  };
  // A node that reads nothing known at run time (constants and what its
  // own ops compute: a ConstantOfShape whose shape the declared shapes fix
  // reads no input at all) is computed whole. In one that does, the ops
  // that read only constants are computed too (a ConvInteger's weights
  // minus their zero point, a QLinearConv's scale ratios, a ConvTranspose's
  // kernel rearranged), unless that would store more bytes than they read.
  SmallVector<Operation *> created = createdOps();
  llvm::SmallPtrSet<Operation *, 16> own(created.begin(), created.end());
  bool readsRunTimeValues = llvm::any_of(created, [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value operand) {
      Operation *producer = operand.getDefiningOp();
      return !producer || (!own.count(producer) && !isa<ConstantOp>(producer));
    });
  });
  FoldLimitScope wholeSubgraphs(&context, kMaxConstantElements);
  for (Operation *op : created)
    if (!isa<ConstantOp>(op))
      foldImportedOp(op, outputs, /*mayGrow=*/!readsRunTimeValues);
  Location loc = nodeLocation(node, index);
  SmallVector<Operation *> afterFolding = createdOps();
  llvm::SmallPtrSet<Operation *, 16> fresh(afterFolding.begin(),
                                           afterFolding.end());
  for (const std::string &output : outputs) {
    if (output.empty())
      continue;
    auto folded = values[output].getDefiningOp<ConstantOp>();
    if (!folded || constants.count(output))
      continue;
    ConstTensor tensor;
    tensor.onnxType = onnxDTypeOf(folded.getType().getElementType());
    tensor.shape = std::vector<int64_t>(folded.getType().getShape());
    // Always a constant of its own, even where the node passes one through
    // (an Identity, or an Expand to the same shape at batch 1): the graph
    // has the same ops at every batch size (--dynamic-batch compares two).
    if (!withConstantElements(folded.getValue(), [&](ArrayRef<char> bytes) {
          tensor.bytes.assign(bytes.begin(), bytes.end());
        }))
      continue;
    std::string error;
    if (Value named = createConstant(output, std::move(tensor), loc, error))
      values[output] = named;
  }
  llvm::DenseSet<Value> kept;
  for (const std::string &output : outputs)
    if (!output.empty())
      kept.insert(values[output]);
  // The constants only folded ops used, and those the named ones replace;
  // the folders' blobs go with them (a folded weight is held once).
  SmallVector<Operation *> left = createdOps();
  for (Operation *op : llvm::reverse(left)) {
    auto constant = dyn_cast<ConstantOp>(op);
    if (!constant || !op->use_empty() || kept.count(constant.getResult()))
      continue;
    auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
    if (resource && fresh.count(op) &&
        resource.getRawHandle().getKey().starts_with("folded"))
      resource.getRawHandle().getResource()->setBlob(AsmResourceBlob());
    op->erase();
  }
}

/// Gives the ops this node created for its outputs a location that names
/// those ONNX values (see kiln/Dialect/OnnxValueNames.h). An output that is
/// another node's value (Identity) or a constant keeps its location.
void GraphImporter::nameOutputValues(const onnx::NodeProto &node, int index,
                                     Location nodeLoc) {
  llvm::MapVector<Operation *, SmallVector<std::string>> names;
  for (const std::string &output : node.output()) {
    if (output.empty())
      continue;
    auto value = dyn_cast<OpResult>(values[output]);
    if (!value || value.getOwner()->getLoc() != nodeLoc ||
        isa<ConstantOp>(value.getOwner()))
      continue;
    Operation *op = value.getOwner();
    auto &opNames = names[op];
    opNames.resize(op->getNumResults());
    opNames[value.getResultNumber()] = output;
  }
  for (auto &[op, opNames] : names)
    op->setLoc(withOnnxValues(nodeLoc, index, opNames));
}

/// The first graph input (not an initializer) that `value` is computed
/// from: the input to freeze to make `value` a compile-time constant.
std::string GraphImporter::graphInputBehind(const std::string &value) const {
  const onnx::GraphProto &graph = model.graph();
  std::map<std::string, const onnx::NodeProto *> producer;
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      producer[output] = &node;
  std::set<std::string> inputs;
  for (const auto &input : graph.input())
    inputs.insert(input.name());
  std::vector<std::string> work = {value};
  std::set<std::string> seen;
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (name.empty() || constants.count(name) || !seen.insert(name).second)
      continue;
    if (inputs.count(name))
      return name;
    auto it = producer.find(name);
    if (it == producer.end())
      continue;
    for (const auto &input : it->second->input())
      work.push_back(input);
  }
  return value;
}

void GraphImporter::importNode(const onnx::NodeProto &node, int index) {
  // Every ONNX op has an output (optional ones may be left empty, like
  // LSTM's Y); a node without any crashed the Constant handler (found by
  // kiln-fuzz-importer).
  if (llvm::all_of(node.output(),
                   [](const std::string &name) { return name.empty(); })) {
    markUnsupported(node, index, "the node has no output");
    return;
  }
  if (std::string problem = attributeTypeProblem(node); !problem.empty()) {
    markUnsupported(node, index, problem);
    return;
  }
  bool isIf = node.op_type() == "If" && node.domain().empty();
  bool isScan = node.op_type() == "Scan" && node.domain().empty();
  bool isLoop = node.op_type() == "Loop" && node.domain().empty();
  std::string problem = isIf || isScan || isLoop ? "" : opTypeProblem(node);
  for (const auto &input : node.input())
    if (poisoned.count(input)) {
      // Downstream of an unsupported node the shapes are unknown, so only
      // the op type itself can be checked.
      if (!problem.empty())
        markUnsupported(node, index, problem);
      for (const auto &output : node.output())
        poisoned.insert(output);
      return;
    }
  if (!problem.empty()) {
    markUnsupported(node, index, problem);
    return;
  }
  if (isIf) {
    importIf(node, index);
    return;
  }
  if (isScan) {
    importScan(node, index);
    return;
  }
  if (isLoop) {
    importLoop(node, index);
    return;
  }
  std::string foldError;
  if (succeeded(foldConstantNode(node, index, foldError)))
    return;
  const OpHandler *handler = handlerFor(node);
  if (!handler) {
    // Name the first input that is not known, so it can be frozen.
    std::string missing;
    for (const auto &input : node.input())
      if (!input.empty() && !constants.count(input)) {
        missing = input;
        break;
      }
    markUnsupported(node, index,
                    foldError.empty()
                        ? "supported only when its inputs are compile-time "
                          "constants (a shape subgraph); input '" +
                              missing + "' is not"
                        : foldError,
                    foldError.empty() ? graphInputBehind(missing) : "");
    return;
  }
  NodeContext ctx(*this, node, nodeLocation(node, index));
  std::string reason;
  // Type inference and verifiers report through diagnostics; keep the first
  // message as the reason instead of printing it.
  {
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
      if (reason.empty())
        reason = diag.str();
      return success();
    });
    Operation *lastBefore = lastImportedOp();
    size_t checksBefore = runtimeChecks.size();
    if (succeeded(handler->import(ctx)) && ctx.allOutputsSet() &&
        succeeded(ctx.checkOutputSizes())) {
      if (runtimeChecks.size() == checksBefore && !ctx.keepsUnfolded())
        foldImportedNode(node, index, lastBefore);
      nameOutputValues(node, index, ctx.getLoc());
      return;
    }
  }
  if (!ctx.error().empty())
    reason = ctx.error();
  // A node of constants that could not be computed at import says why
  // (past the folding budget, say), rather than why no kernel does it.
  if (!foldError.empty() &&
      llvm::all_of(node.input(), [&](const std::string &input) {
        return input.empty() || constants.count(input);
      }))
    reason = foldError;
  if (reason.empty())
    reason = "could not be imported";
  markUnsupported(node, index, reason, ctx.needsConstant());
}

std::optional<std::vector<Value>> GraphImporter::importSubgraph(
    const onnx::NodeProto &node, int index, const onnx::GraphProto &graph,
    const std::string &what, ArrayRef<Value> inputs, bool scoped) {
  // Names are unique across a model and its subgraphs (SSA); a subgraph
  // that redefines an outer name is malformed and would corrupt the value
  // map.
  std::vector<std::string> defined;
  auto forget = [&] {
    if (scoped)
      for (const std::string &name : defined) {
        values.erase(name);
        constants.erase(name);
        poisoned.erase(name);
      }
  };
  auto defines = [&](const std::string &name) {
    if (values.count(name) || poisoned.count(name)) {
      markUnsupported(node, index, "the " + what + " redefines '" + name + "'");
      return false;
    }
    defined.push_back(name);
    return true;
  };
  for (auto [input, value] : llvm::zip(graph.input(), inputs)) {
    if (!defines(input.name()))
      return forget(), std::nullopt;
    values[input.name()] = value;
  }
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (!defines(init.name()))
      return forget(), std::nullopt;
    ConstTensor tensor;
    std::string error;
    Value value;
    if (succeeded(readTensorBytes(init, tensor, error)))
      value = createConstant(init.name(), std::move(tensor),
                             nodeLocation(node, index), error);
    if (!value) {
      markUnsupported(node, index, error);
      return forget(), std::nullopt;
    }
    values[init.name()] = value;
  }
  for (const onnx::NodeProto &inner : graph.node()) {
    for (const std::string &output : inner.output())
      if (!output.empty() && !defines(output))
        return forget(), std::nullopt;
    importNode(inner, index);
  }
  std::vector<Value> outputs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    auto value = values.find(output.name());
    if (poisoned.count(output.name())) {
      outputs.push_back(nullptr);
    } else if (value == values.end()) {
      markUnsupported(node, index,
                      "the " + what + " never produces '" + output.name() +
                          "'");
      return forget(), std::nullopt;
    } else {
      outputs.push_back(value->second);
    }
  }
  forget();
  return outputs;
}

/// Why `graph` is not in SSA form: a value that two nodes write (or a node
/// writes a graph input or initializer), or a graph output listed twice;
/// "" when it is. onnxruntime refuses such graphs; importing one would let
/// the last writer win.
static std::string valueWrittenTwice(const onnx::GraphProto &graph) {
  llvm::StringMap<std::string> writer;
  for (const auto &input : graph.input())
    writer[input.name()] = "graph input '" + input.name() + "'";
  for (const auto &init : graph.initializer())
    writer[init.name()] = "initializer '" + init.name() + "'";
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    std::string name = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(index)
                           : node.name();
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      auto [it, inserted] = writer.try_emplace(
          output, "node '" + name + "' (" + node.op_type() + ") writes too");
      if (!inserted)
        return "node '" + name + "' (" + node.op_type() + ") writes '" +
               output + "', which " + it->second +
               ": an ONNX value is written once";
    }
  }
  llvm::StringSet<> outputs;
  for (const auto &output : graph.output())
    if (!outputs.insert(output.name()).second)
      return "graph output '" + output.name() + "' is listed twice";
  return "";
}

FailureOr<ImportResult> GraphImporter::run(const ImportOptions &options) {
  const onnx::GraphProto &graph = model.graph();
  if (std::string twice = valueWrittenTwice(graph); !twice.empty()) {
    emitError(UnknownLoc::get(&context)) << twice;
    return failure();
  }
  auto module = ModuleOp::create(UnknownLoc::get(&context));
  builder.setInsertionPointToEnd(module.getBody());

  // Graph inputs that are not initializers become function arguments.
  std::set<std::string> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());
  std::set<std::string> inputNames;
  for (const auto &input : graph.input())
    if (!initializerNames.count(input.name()))
      inputNames.insert(input.name());
  for (const auto &given : options.inputShapes)
    if (!inputNames.count(given.first)) {
      emitError(UnknownLoc::get(&context))
          << "--input-shape names '" << given.first
          << "', which is not an input of the model (inputs: "
          << llvm::join(inputNames, ", ") << ")";
      module.erase();
      return failure();
    }

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<std::optional<int64_t>> argBatchDims;
  std::vector<const onnx::ValueInfoProto *> frozen;
  if (options.dynamicBatch)
    for (const auto &input : graph.input())
      if (!initializerNames.count(input.name()) &&
          !options.frozenInputs.count(input.name()) &&
          input.type().tensor_type().shape().dim_size() > 0 &&
          input.type().tensor_type().shape().dim(0).has_dim_param())
        batchSymbols.insert(
            input.type().tensor_type().shape().dim(0).dim_param());
  for (const auto &input : graph.input()) {
    if (initializerNames.count(input.name()))
      continue;
    if (options.frozenInputs.count(input.name())) {
      frozen.push_back(&input);
      continue;
    }
    RankedTensorType type;
    std::optional<int64_t> batchDim;
    if (failed(resolveInputType(input, options, type, batchDim))) {
      module.erase();
      return failure();
    }
    argTypes.push_back(type);
    argNames.push_back(input.name());
    argBatchDims.push_back(batchDim);
  }
  for (const auto &given : options.frozenInputs)
    if (llvm::none_of(graph.input(), [&](const onnx::ValueInfoProto &input) {
          return input.name() == given.first;
        })) {
      emitError(UnknownLoc::get(&context))
          << "--freeze-input names '" << given.first
          << "', which is not an input of the model";
      module.erase();
      return failure();
    }
  auto func = func::FuncOp::create(builder, UnknownLoc::get(&context), "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    values[name] = entry->getArgument(i);
    func.setArgAttr(i, kiln::attrs::kName, builder.getStringAttr(name));
    if (argBatchDims[i])
      func.setArgAttr(i, kiln::attrs::kBatched,
                      builder.getI64IntegerAttr(*argBatchDims[i]));
  }
  if (options.dynamicBatch &&
      llvm::none_of(argBatchDims, [](auto d) { return d.has_value(); })) {
    emitError(UnknownLoc::get(&context))
        << "--dynamic-batch: no graph input has a symbolic leading dim to "
           "take as the batch";
    module.erase();
    return failure();
  }

  for (const onnx::ValueInfoProto *input : frozen) {
    Location loc = NameLoc::get(builder.getStringAttr(input->name()));
    if (failed(
            freezeInput(*input, options.frozenInputs.at(input->name()), loc))) {
      module.erase();
      return failure();
    }
  }

  for (onnx::TensorProto &init :
       *model.mutable_graph()->mutable_initializer()) {
    ConstTensor tensor;
    std::string error;
    Location loc = NameLoc::get(builder.getStringAttr(init.name()));
    Value value;
    // mutable_raw_data() would mark a tensor without raw data as having it.
    std::string *raw = init.has_raw_data() ? init.mutable_raw_data() : nullptr;
    if (succeeded(readTensorBytes(init, tensor, error, raw)))
      value = createConstant(init.name(), std::move(tensor), loc, error);
    if (!value) {
      emitError(loc) << error;
      module.erase();
      return failure();
    }
    values[init.name()] = value;
  }

  uint64_t weightBytes = 0;
  for (const auto &[name, tensor] : constants)
    weightBytes += std::max(tensor.bytes.size(), tensor.stored.size());
  // Weights stored as int8 and dequantized at import grow fourfold.
  maxTensorBytes = options.maxTensorBytes;
  foldBudget = options.maxFoldedBytes ? options.maxFoldedBytes
                                      : 4 * weightBytes + (uint64_t(64) << 20);
  recordDeclaredShapes(graph);
  propagateDeclaredShapes(graph);
  recordReaders(graph);
  for (int i = 0; i < graph.node_size(); ++i)
    importNode(graph.node(i), i);

  ImportResult result;
  result.unsupported = unsupported;
  result.numNodes = graph.node_size();
  if (!unsupported.empty()) {
    module.erase();
    return result;
  }

  SmallVector<Value> results;
  for (const auto &output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end()) {
      emitError(func.getLoc())
          << "graph output '" << output.name() << "' is never produced";
      module.erase();
      return failure();
    }
    results.push_back(it->second);
  }
  // The run-time checks follow the graph outputs.
  for (const auto &check : runtimeChecks)
    results.push_back(check.first);
  func::ReturnOp::create(builder, func.getLoc(), results);
  func.setType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, kiln::attrs::kName,
                       builder.getStringAttr(output.name()));
  for (auto [i, check] : llvm::enumerate(runtimeChecks))
    func.setResultAttr(graph.output_size() + i, kiln::attrs::kCheck,
                       builder.getStringAttr(check.second));
  if (!shapeGuards.empty())
    func->setAttr(kiln::attrs::kShapeGuards, builder.getArrayAttr(shapeGuards));

  if (failed(verify(module))) {
    module.erase();
    return failure();
  }
  result.module = module;
  return result;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

// Deep enough to parse any model whose subgraph nesting merely exceeds a
// sane --max-subgraph-depth, shallow enough for the parser's stack use.
static constexpr int kDiagnosticRecursionLimit = 1024;

static bool parseModel(const llvm::MemoryBuffer &file, int recursionLimit,
                       onnx::ModelProto &model) {
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(file.getBufferStart()),
      int(file.getBufferSize()));
  stream.SetRecursionLimit(recursionLimit);
  return model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

namespace {
/// The deepest chain of subgraphs (If branches, Loop and Scan bodies) in a
/// graph, and the outermost node that holds it.
struct SubgraphNesting {
  int depth = 0;
  const onnx::NodeProto *outermostNode = nullptr;
};
} // namespace

/// Nesting below `graph`. Recursion is bounded by the parser's limit: a
/// parsed model is at most that many messages deep.
static SubgraphNesting measureNesting(const onnx::GraphProto &graph);

void GraphImporter::recordReaders(const onnx::GraphProto &graph) {
  for (const onnx::ValueInfoProto &output : graph.output())
    readers[output.name()].push_back({"", -1});
  for (const onnx::NodeProto &node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i)
      if (!node.input(i).empty())
        readers[node.input(i)].push_back({node.op_type(), i});
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        recordReaders(attr.g());
      for (const onnx::GraphProto &g : attr.graphs())
        recordReaders(g);
    }
  }
}

static SubgraphNesting measureNesting(const onnx::GraphProto &graph) {
  SubgraphNesting deepest;
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attr : node.attribute()) {
      std::vector<const onnx::GraphProto *> subgraphs;
      if (attr.has_g())
        subgraphs.push_back(&attr.g());
      for (const onnx::GraphProto &g : attr.graphs())
        subgraphs.push_back(&g);
      for (const onnx::GraphProto *g : subgraphs) {
        int depth = 1 + measureNesting(*g).depth;
        if (depth > deepest.depth)
          deepest = {depth, &node};
      }
    }
  return deepest;
}

static LogicalResult
checkSubgraphDepth(Location loc, const onnx::ModelProto &model, int limit) {
  SubgraphNesting nesting = measureNesting(model.graph());
  if (nesting.depth <= limit)
    return success();
  const onnx::NodeProto &node = *nesting.outermostNode;
  emitError(loc) << "node '" << node.name() << "' (" << node.op_type()
                 << ") holds subgraphs nested " << nesting.depth
                 << " deep, more than the limit of " << limit
                 << " (--max-subgraph-depth)";
  return failure();
}

static FailureOr<ImportResult>
reportSubgraphDepth(Location loc, const onnx::ModelProto &model, int limit) {
  if (failed(checkSubgraphDepth(loc, model, limit)))
    return failure();
  // Deep messages without deep subgraphs (e.g. nested sequence types).
  emitError(loc) << "the model nests protobuf messages deeper than "
                 << 3 * limit + 16 << " levels";
  return failure();
}

FailureOr<ImportResult> kiln::importOnnxFile(MLIRContext &context,
                                             StringRef path,
                                             const ImportOptions &options) {
  auto loc = FileLineColLoc::get(&context, path, 0, 0);
  std::string why;
  FailureOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      readRegularFile(path, kMaxProtobufBytes,
                      "ONNX files (protobuf) hold at most 2 GiB (larger "
                      "models keep their weights in external data)",
                      why);
  if (failed(file)) {
    emitError(loc) << "cannot read '" << path << "': " << why;
    return failure();
  }
  onnx::ModelProto model;
  // Parsing recurses once per nested message; a subgraph costs three
  // (node, attribute, graph), tensor types up to eight more.
  int recursionLimit = 3 * options.maxSubgraphDepth + 16;
  if (!parseModel(**file, recursionLimit, model)) {
    // Too deep, or not ONNX at all? A deeper parse (on the failure path
    // only, still bounded) tells which, so the limit can be named.
    if (recursionLimit < kDiagnosticRecursionLimit &&
        parseModel(**file, kDiagnosticRecursionLimit, model))
      return reportSubgraphDepth(loc, model, options.maxSubgraphDepth);
    emitError(loc) << "'" << path
                   << "' is not a valid ONNX model (protobuf parse failed; "
                      "truncated or not an ONNX file?)";
    return failure();
  }
  if (failed(checkSubgraphDepth(loc, model, options.maxSubgraphDepth)))
    return failure();
  if (failed(loadExternalData(model, path, loc)))
    return failure();
  if (!model.has_graph() || model.opset_import_size() == 0) {
    emitError(loc) << "'" << path
                   << "' is not a valid ONNX model (no graph or no opset)";
    return failure();
  }
  context.loadDialect<KilnDialect, func::FuncDialect>();
  GraphImporter importer(context, model, path);
  FailureOr<ImportResult> result = importer.run(options);
  if (failed(result) || !result->module)
    return result;
  // Every value the model computes must fit: the memory plan and the
  // runtime add and multiply these sizes.
  WalkResult sizes = result->module->walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(v.getType()))
        if (failed(checkTensorSize(type, options.maxTensorBytes, op->getLoc(),
                                   "the result of this node")))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (sizes.wasInterrupted())
    return failure();
  return result;
}

void kiln::printUnsupportedReport(
    llvm::raw_ostream &os, const std::vector<UnsupportedNode> &unsupported) {
  std::map<std::string, std::vector<const UnsupportedNode *>> byOp;
  for (const auto &node : unsupported)
    byOp[node.opType].push_back(&node);
  os << unsupported.size() << " unsupported node"
     << (unsupported.size() == 1 ? "" : "s") << " in " << byOp.size()
     << " op type" << (byOp.size() == 1 ? "" : "s") << ":\n";
  for (const auto &[op, nodes] : byOp) {
    os << "  " << op << " (" << nodes.size() << "):\n";
    for (const auto *node : nodes)
      os << "    " << node->nodeName << ": " << node->reason << "\n";
  }
}
