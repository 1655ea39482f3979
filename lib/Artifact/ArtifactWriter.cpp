//===- ArtifactWriter.cpp - the .kiln artifact ----------------------------===//
#include "kiln/Artifact/ArtifactWriter.h"

#include "kiln/Dialect/KilnDialect.h"
#include "kiln/artifact_digest.h"
#include "kiln/artifact_generated.h"
#include "kiln/artifact_version.h"
#include "kiln/version.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;
using namespace kiln;

namespace {

FailureOr<fb::DType> dtypeOf(Type type) {
  if (type.isF32())
    return fb::DType_F32;
  if (type.isF16())
    return fb::DType_F16;
  if (type.isBF16())
    return fb::DType_BF16;
  if (type.isF64())
    return fb::DType_F64;
  if (type.isInteger(1))
    return fb::DType_Bool;
  bool isUnsigned = type.isUnsignedInteger();
  if (type.isInteger(8))
    return isUnsigned ? fb::DType_U8 : fb::DType_I8;
  if (type.isInteger(16))
    return isUnsigned ? fb::DType_U16 : fb::DType_I16;
  if (type.isInteger(32))
    return isUnsigned ? fb::DType_U32 : fb::DType_I32;
  if (type.isInteger(64))
    return isUnsigned ? fb::DType_U64 : fb::DType_I64;
  return failure();
}

uint64_t byteSize(RankedTensorType type) {
  uint64_t width = type.getElementType().isInteger(1)
                       ? 1
                       : llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  return uint64_t(type.getNumElements()) * width;
}

/// A buffer of the plan; arena buffers also carry their lifetime, in
/// schedule steps (-1: before the first dispatch; INT64_MAX: past the end).
struct PlannedBuffer {
  fb::BufferKind kind = fb::BufferKind_Arena;
  uint64_t offset = 0;
  uint64_t size = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  uint32_t splatBits = 0;
};

/// Places arena buffers first-fit in order of definition, letting buffers
/// whose lifetimes do not overlap share bytes.
uint64_t planArena(std::vector<PlannedBuffer> &buffers) {
  std::vector<size_t> placed;
  uint64_t arenaSize = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    PlannedBuffer &buffer = buffers[i];
    if (buffer.kind != fb::BufferKind_Arena)
      continue;
    uint64_t size = llvm::alignTo(std::max<uint64_t>(buffer.size, 1),
                                  KILN_ARTIFACT_ALIGNMENT);
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed) {
      const PlannedBuffer &other = buffers[j];
      if (other.firstStep <= buffer.lastStep &&
          buffer.firstStep <= other.lastStep)
        busy.push_back(
            {other.offset,
             other.offset + llvm::alignTo(std::max<uint64_t>(other.size, 1),
                                          KILN_ARTIFACT_ALIGNMENT)});
    }
    llvm::sort(busy);
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + size <= begin)
        break;
      offset = std::max(offset, end);
    }
    buffer.offset = offset;
    arenaSize = std::max(arenaSize, offset + size);
    placed.push_back(i);
  }
  return arenaSize;
}

/// Whether appendConstantBytes can write the constant: a resource blob or
/// dense elements of its type's byte size.
bool isSerializable(ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    return blob && blob->getData().size() == byteSize(type);
  }
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return false;
  if (type.getElementType().isInteger(1))
    return true;
  uint64_t raw = dense.getRawData().size();
  return dense.isSplat() ? raw * type.getNumElements() == byteSize(type)
                         : raw == byteSize(type);
}

/// Appends the raw little-endian bytes of a serializable constant
/// (isSerializable) to `out`, byteSize(type) bytes, expanding splats. Each
/// byte is written once: a pass over hundreds of megabytes costs seconds of
/// page faults on a VM.
void appendConstantBytes(ConstantOp op, std::string &out) {
  auto type = cast<RankedTensorType>(op.getType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
    out.append(data.data(), data.size());
    return;
  }
  auto dense = cast<DenseElementsAttr>(op.getValue());
  if (type.getElementType().isInteger(1)) {
    for (bool v : dense.getValues<bool>())
      out.push_back(v ? 1 : 0);
    return;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat()) {
    out.append(raw.data(), raw.size());
    return;
  }
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    out.append(raw.data(), raw.size());
}

/// A flatbuffers allocator whose one buffer is a std::string, so that the
/// finished artifact becomes the caller's string without another copy of
/// its weights. The builder is sized up front to hold the whole artifact;
/// should it grow anyway, the string is replaced by a larger one.
class StringAllocator : public flatbuffers::Allocator {
public:
  uint8_t *allocate(size_t size) override {
    storage.assign(size, '\0');
    return reinterpret_cast<uint8_t *>(storage.data());
  }
  // The string owns its bytes; release() hands them to the caller.
  void deallocate(uint8_t *, size_t) override {}
  uint8_t *reallocate_downward(uint8_t *old, size_t oldSize, size_t newSize,
                               size_t inUseBack, size_t inUseFront) override {
    std::string grown(newSize, '\0');
    std::memcpy(grown.data() + newSize - inUseBack, old + oldSize - inUseBack,
                inUseBack);
    std::memcpy(grown.data(), old, inUseFront);
    storage = std::move(grown);
    return reinterpret_cast<uint8_t *>(storage.data());
  }
  /// The finished buffer (the last `size` bytes of the allocation).
  std::string release(size_t size) {
    storage.erase(0, storage.size() - size);
    return std::move(storage);
  }

private:
  std::string storage;
};

} // namespace

uint64_t SharedWeights::add(StringRef bytes) {
  auto [entry, added] = offsets_.try_emplace(bytes, 0);
  if (!added)
    return entry->second;
  entry->second = llvm::alignTo(size_, KILN_ARTIFACT_ALIGNMENT);
  size_ = entry->second + bytes.size();
  inOrder_.push_back(&*entry);
  return entry->second;
}

void SharedWeights::appendTo(std::string &out) const {
  size_t start = out.size();
  out.reserve(start + size_);
  for (const llvm::StringMapEntry<uint64_t> *entry : inOrder_) {
    out.append(start + entry->second - out.size(), '\0');
    out.append(entry->first());
  }
  out.append(start + size_ - out.size(), '\0');
}

namespace {

class Writer {
public:
  Writer(ModuleOp module, ModuleOp kernels, size_t expectedBytes)
      : module(module), kernels(kernels), fbb(expectedBytes, &allocator) {}

  FailureOr<std::string> write(func::FuncOp main,
                               const ArtifactContents &contents,
                               ArtifactSummary *summary);

private:
  size_t newBuffer(fb::BufferKind kind, uint64_t size, int64_t firstStep) {
    buffers.push_back({kind, 0, size, firstStep, firstStep});
    return buffers.size() - 1;
  }
  void use(Value v, int64_t step) {
    PlannedBuffer &buffer = buffers[bufferOf.lookup(v)];
    buffer.lastStep = std::max(buffer.lastStep, step);
  }
  LogicalResult addConstant(ConstantOp op);
  /// Where a constant holding the same bytes was stored, if one was.
  std::optional<uint64_t> storedOffset(ConstantOp op) const;
  void recordOffset(ConstantOp op, uint64_t offset);
  LogicalResult addDispatch(DispatchOp op, int64_t step);

public:
  std::vector<KernelReport> reports;
  std::vector<std::vector<size_t>> resultBuffers; // per dispatch
private:
  ModuleOp module, kernels;
  StringAllocator allocator;
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<PlannedBuffer> buffers;
  DenseMap<Value, size_t> bufferOf;
  /// The weights' constants and their offsets in the weights after the
  /// FlatBuffer, copied in once it is finished; weightBytes is their size.
  std::vector<std::pair<ConstantOp, uint64_t>> weights;
  uint64_t weightBytes = 0;
  /// The offset of each distinct value stored so far, by its bytes (a
  /// constant the model repeats is stored once) or, for the values
  /// whose bytes are not at hand (splats, booleans), by the value itself.
  llvm::DenseMap<StringRef, uint64_t> offsetOfBytes;
  llvm::DenseMap<Attribute, uint64_t> offsetOfValue;
  std::vector<flatbuffers::Offset<fb::Dispatch>> dispatches;

public:
  bool splatWeights = false;
  uint64_t splatSize = 0;
  SharedWeights *sharedWeights = nullptr;
};

/// The weights a benchmark artifact leaves out: float32 tensors large
/// enough to matter.
static bool isSplatCandidate(ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  bool halfWords =
      (element.isF16() || element.isBF16()) && type.getNumElements() % 2 == 0;
  return (element.isF32() || halfWords) && type.getNumElements() >= 64;
}

/// A 32-bit word holding 0.01 in the constant's float type (twice for
/// 16-bit types): the value a splat buffer repeats.
static uint32_t splatWord(ConstantOp op) {
  auto element =
      cast<FloatType>(cast<RankedTensorType>(op.getType()).getElementType());
  if (element.isF32())
    return llvm::bit_cast<uint32_t>(0.01f);
  APFloat value(0.01f);
  bool losesInfo = false;
  (void)value.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                      &losesInfo);
  uint32_t half = value.bitcastToAPInt().getZExtValue();
  return half << 16 | half;
}

/// The bytes a serializable constant stores as they are (a resource blob or
/// non-splat dense elements); none for splats and booleans, whose bytes
/// are expanded.
static std::optional<StringRef> storedBytes(ConstantOp op) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
    return StringRef(data.data(), data.size());
  }
  auto dense = cast<DenseElementsAttr>(op.getValue());
  if (dense.isSplat() || dense.getElementType().isInteger(1))
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  return StringRef(raw.data(), raw.size());
}

std::optional<uint64_t> Writer::storedOffset(ConstantOp op) const {
  if (std::optional<StringRef> bytes = storedBytes(op)) {
    auto it = offsetOfBytes.find(*bytes);
    if (it != offsetOfBytes.end())
      return it->second;
    return std::nullopt;
  }
  auto it = offsetOfValue.find(op.getValue());
  if (it != offsetOfValue.end())
    return it->second;
  return std::nullopt;
}

void Writer::recordOffset(ConstantOp op, uint64_t offset) {
  if (std::optional<StringRef> bytes = storedBytes(op))
    offsetOfBytes[*bytes] = offset;
  else
    offsetOfValue[op.getValue()] = offset;
}

LogicalResult Writer::addConstant(ConstantOp op) {
  if (splatWeights && isSplatCandidate(op)) {
    uint64_t size = byteSize(cast<RankedTensorType>(op.getType()));
    size_t index = newBuffer(fb::BufferKind_Splat, size, -1);
    buffers[index].offset = splatSize;
    buffers[index].splatBits = splatWord(op);
    splatSize = llvm::alignTo(splatSize + size, KILN_ARTIFACT_ALIGNMENT);
    bufferOf[op.getResult()] = index;
    return success();
  }
  if (!isSerializable(op))
    return op.emitError("cannot serialize this constant");
  uint64_t size = byteSize(cast<RankedTensorType>(op.getType()));
  uint64_t offset;
  if (sharedWeights) {
    std::string bytes;
    appendConstantBytes(op, bytes);
    offset = sharedWeights->add(bytes);
  } else if (std::optional<uint64_t> stored = storedOffset(op)) {
    offset = *stored;
  } else {
    offset = llvm::alignTo(weightBytes, KILN_ARTIFACT_ALIGNMENT);
    weightBytes = offset + size;
    weights.push_back({op, offset});
    recordOffset(op, offset);
  }
  size_t index = newBuffer(fb::BufferKind_Weight, size, -1);
  buffers[index].offset = offset;
  bufferOf[op.getResult()] = index;
  return success();
}

LogicalResult Writer::addDispatch(DispatchOp op, int64_t step) {
  StringRef name = op.getKernel().getLeafReference().getValue();
  // An LLVM function (cpu) or the declaration a GPU kernel leaves behind.
  Operation *kernel = kernels.lookupSymbol(name);
  if (!kernel)
    return op.emitError("kernel '") << name << "' was not compiled";
  std::vector<uint32_t> bindings;
  for (Value input : op.getInputs()) {
    use(input, step);
    bindings.push_back(bufferOf.lookup(input));
  }
  for (Value result : op.getResults()) {
    size_t index =
        newBuffer(fb::BufferKind_Arena,
                  byteSize(cast<RankedTensorType>(result.getType())), step);
    bufferOf[result] = index;
    bindings.push_back(index);
  }
  // The dispatch's own nodes where identical kernels became one
  // (kiln-deduplicate-kernels), else its kernel's.
  std::vector<std::string> nodes;
  auto names = op->getAttrOfType<ArrayAttr>(kiln::attrs::kNodes);
  if (!names)
    names = kernel->getAttrOfType<ArrayAttr>(kiln::attrs::kNodes);
  if (names)
    for (auto n : names.getAsValueRange<StringAttr>())
      nodes.push_back(n.str());
  uint32_t workgroups = 1;
  if (auto grid = kernel->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroups))
    workgroups = grid.getInt();
  uint32_t threads = 1;
  if (auto block = kernel->getAttrOfType<IntegerAttr>(kiln::attrs::kThreads))
    threads = block.getInt();
  KernelReport report;
  report.name = name.str();
  report.nodes = nodes;
  report.workgroups = workgroups;
  report.threads = threads;
  if (auto bytes =
          kernel->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroupMemory))
    report.workgroupMemory = bytes.getInt();
  if (auto bytes = kernel->getAttrOfType<IntegerAttr>(
          kiln::attrs::kDynamicWorkgroupMemory))
    report.dynamicWorkgroupMemory = bytes.getInt();
  if (auto bytes =
          kernel->getAttrOfType<IntegerAttr>(kiln::attrs::kPrivateMemory))
    report.privateMemory = bytes.getInt();
  if (auto flops = kernel->getAttrOfType<IntegerAttr>(kiln::attrs::kFlops))
    report.flops = flops.getInt();
  if (auto tile = kernel->getAttrOfType<DenseI64ArrayAttr>(kiln::attrs::kTile))
    report.tile.assign(tile.asArrayRef().begin(), tile.asArrayRef().end());
  if (auto tile =
          kernel->getAttrOfType<DenseI64ArrayAttr>(kiln::attrs::kMatrixTile))
    report.matrixTile.assign(tile.asArrayRef().begin(),
                             tile.asArrayRef().end());
  if (auto contraction = kernel->getAttrOfType<ContractionConfigAttr>(
          kiln::attrs::kContraction)) {
    ArrayRef<int64_t> tile = contraction.getTile();
    if (contraction.getUnit() == ContractionUnit::Threads) {
      report.threadTile.assign(tile.begin(), tile.end());
    } else {
      report.matrixCores = contraction.getInstruction().str();
      // A warp tile where warps share a staged block (a single 16x16
      // block is one warp reading global memory).
      if (contraction.getStageK() > 0)
        report.warpTile.assign(tile.begin(), tile.end());
    }
  }
  for (uint32_t b : bindings)
    report.bytes += buffers[b].size;
  for (uint32_t b : llvm::drop_begin(bindings, op.getInputs().size()))
    report.resultBytes += buffers[b].size;
  reports.push_back(report);
  resultBuffers.emplace_back(bindings.end() - op.getNumResults(),
                             bindings.end());
  auto valueNames = op->getAttrOfType<ArrayAttr>(kiln::attrs::kOnnxValues);
  std::vector<flatbuffers::Offset<fb::TensorInfo>> results;
  for (auto [i, result] : llvm::enumerate(op.getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    auto dtype = dtypeOf(type.getElementType());
    if (failed(dtype))
      return op.emitError("result ") << i << " has an unsupported dtype";
    std::string valueName;
    if (valueNames && i < valueNames.size())
      valueName = cast<StringAttr>(valueNames[i]).str();
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    results.push_back(fb::CreateTensorInfoDirect(
        fbb, valueName.c_str(), *dtype, &shape, bufferOf.lookup(result)));
  }
  auto nodeOffsets = fbb.CreateVectorOfStrings(nodes);
  auto kernelName = fbb.CreateString(name.str());
  auto bindingVector = fbb.CreateVector(bindings);
  dispatches.push_back(fb::CreateDispatch(
      fbb, kernelName, bindingVector, workgroups, nodeOffsets, report.flops,
      threads, fbb.CreateVector(results), report.dynamicWorkgroupMemory));
  return success();
}

/// The rules of runtime/schema/artifact.fbs by their names in kShapeGuards.
static std::optional<fb::ShapeRule> shapeRuleNamed(StringRef name) {
  for (int r = fb::ShapeRule_MIN; r <= fb::ShapeRule_MAX; ++r)
    if (name == fb::EnumNameShapeRule(fb::ShapeRule(r)))
      return fb::ShapeRule(r);
  return std::nullopt;
}

/// @main's shape guards (kiln.shape_guards), their inputs resolved to input
/// indices.
static FailureOr<std::vector<flatbuffers::Offset<fb::ShapeGuard>>>
writeShapeGuards(flatbuffers::FlatBufferBuilder &fbb, func::FuncOp main) {
  std::vector<flatbuffers::Offset<fb::ShapeGuard>> guards;
  auto list = main->getAttrOfType<ArrayAttr>(kiln::attrs::kShapeGuards);
  if (!list)
    return guards;
  for (Attribute entry : list) {
    auto guard = dyn_cast<DictionaryAttr>(entry);
    auto str = [&](StringRef key) {
      auto a = guard ? guard.getAs<StringAttr>(key) : StringAttr();
      return a ? a.getValue() : StringRef();
    };
    auto ints = [&](StringRef key) {
      auto a = guard ? guard.getAs<DenseI64ArrayAttr>(key) : nullptr;
      return a ? std::vector<int64_t>(a.asArrayRef().begin(),
                                      a.asArrayRef().end())
               : std::vector<int64_t>();
    };
    std::optional<fb::ShapeRule> rule = shapeRuleNamed(str("rule"));
    std::optional<unsigned> input;
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      if (auto name = main.getArgAttrOfType<StringAttr>(i, kiln::attrs::kName))
        if (name.getValue() == str("input"))
          input = i;
    if (!rule || !input)
      return main.emitError("shape guard ")
             << entry << " has no known rule or names no input of @main";
    std::vector<int64_t> dataShape = ints("data_shape"),
                         params = ints("params"), expected = ints("expected");
    guards.push_back(fb::CreateShapeGuardDirect(
        fbb, *rule, str("node").str().c_str(), str("op_type").str().c_str(),
        *input, &dataShape, &params, &expected));
  }
  return guards;
}

FailureOr<std::string> Writer::write(func::FuncOp main,
                                     const ArtifactContents &contents,
                                     ArtifactSummary *summary) {
  const std::string &target = contents.target;
  const std::string &kernelObject = contents.kernelObject;
  for (BlockArgument arg : main.getArguments())
    bufferOf[arg] =
        newBuffer(fb::BufferKind_Arena,
                  byteSize(cast<RankedTensorType>(arg.getType())), -1);
  int64_t step = 0;
  func::ReturnOp ret;
  for (Operation &op : main.getBody().front()) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (failed(addConstant(constant)))
        return failure();
    } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      bufferOf[reshape.getResult()] = bufferOf.lookup(reshape.getInput());
    } else if (auto dispatch = dyn_cast<DispatchOp>(op)) {
      if (failed(addDispatch(dispatch, step++)))
        return failure();
    } else if (auto r = dyn_cast<func::ReturnOp>(op)) {
      ret = r;
    } else {
      return op.emitError("cannot be scheduled: not a dispatch, constant or "
                          "reshape (was it lowered?)");
    }
  }
  // Graph inputs and outputs live for the whole run.
  for (BlockArgument arg : main.getArguments())
    use(arg, INT64_MAX);
  for (Value v : ret.getOperands())
    use(v, INT64_MAX);

  uint64_t unplanned = 0;
  for (const PlannedBuffer &b : buffers)
    if (b.kind == fb::BufferKind_Arena)
      unplanned +=
          llvm::alignTo(std::max<uint64_t>(b.size, 1), KILN_ARTIFACT_ALIGNMENT);
  uint64_t arenaSize = planArena(buffers);

  // Dynamic batch: the chunk is the batched inputs' batch dim.
  int64_t batchChunk = 0;
  auto tensorInfo = [&](Value v, StringRef name, IntegerAttr batchDim)
      -> FailureOr<flatbuffers::Offset<fb::TensorInfo>> {
    auto type = cast<RankedTensorType>(v.getType());
    auto dtype = dtypeOf(type.getElementType());
    if (failed(dtype))
      return failure();
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    if (batchDim)
      batchChunk = shape[batchDim.getInt()];
    return fb::CreateTensorInfoDirect(
        fbb, name.str().c_str(), *dtype, &shape, bufferOf.lookup(v),
        bool(batchDim), batchDim ? int32_t(batchDim.getInt()) : 0);
  };
  std::vector<flatbuffers::Offset<fb::TensorInfo>> inputs, outputs;
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    auto name = main.getArgAttrOfType<StringAttr>(i, kiln::attrs::kName);
    auto info = tensorInfo(
        arg, name ? name.getValue() : StringRef("input_" + std::to_string(i)),
        main.getArgAttrOfType<IntegerAttr>(i, kiln::attrs::kBatched));
    if (failed(info))
      return main.emitError("input ") << i << " has an unsupported dtype";
    inputs.push_back(*info);
  }
  std::vector<flatbuffers::Offset<fb::Check>> checks;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto check =
            main.getResultAttrOfType<StringAttr>(i, kiln::attrs::kCheck)) {
      auto info = tensorInfo(
          v, "check_" + std::to_string(checks.size()),
          main.getResultAttrOfType<IntegerAttr>(i, kiln::attrs::kBatched));
      if (failed(info))
        return main.emitError("check ") << i << " has an unsupported dtype";
      checks.push_back(fb::CreateCheck(
          fbb, fbb.CreateString(check.getValue().str()), *info));
      continue;
    }
    auto name = main.getResultAttrOfType<StringAttr>(i, kiln::attrs::kName);
    auto info = tensorInfo(
        v, name ? name.getValue() : StringRef("output_" + std::to_string(i)),
        main.getResultAttrOfType<IntegerAttr>(i, kiln::attrs::kBatched));
    if (failed(info))
      return main.emitError("output ") << i << " has an unsupported dtype";
    outputs.push_back(*info);
  }
  auto shapeGuards = writeShapeGuards(fbb, main);
  if (failed(shapeGuards))
    return failure();
  std::vector<flatbuffers::Offset<fb::Buffer>> bufferTables;
  for (const PlannedBuffer &b : buffers)
    bufferTables.push_back(
        fb::CreateBuffer(fbb, b.kind, b.offset, b.size, b.splatBits));

  // A FlatBuffer's offsets are 32-bit: past 2 GiB the builder would abort.
  // The weights follow it in the file (kiln/artifact_digest.h); the kernels
  // stay inside, and the tables need far less than the margin.
  uint64_t sectionBytes = contents.kernelObject.size();
  for (const GpuImage &image : contents.gpuImages)
    sectionBytes += image.data.size();
  for (const std::string &variant : contents.batchVariants)
    sectionBytes += variant.size();
  constexpr uint64_t kMaxFlatBufferBytes = (uint64_t(1) << 31) - (64 << 20);
  if (sectionBytes > kMaxFlatBufferBytes)
    return main.emitError("the artifact would hold ")
           << sectionBytes
           << " bytes of kernels, more than the 2 GiB a .kiln file's "
              "FlatBuffer can; models whose code is this large are not "
              "supported";

  fbb.ForceVectorAlignment(kernelObject.size(), 1, KILN_ARTIFACT_ALIGNMENT);
  auto objectVector =
      fbb.CreateVector(reinterpret_cast<const uint8_t *>(kernelObject.data()),
                       kernelObject.size());
  std::vector<flatbuffers::Offset<fb::GpuImage>> imageTables;
  for (const GpuImage &image : contents.gpuImages) {
    fbb.ForceVectorAlignment(image.data.size(), 1, KILN_ARTIFACT_ALIGNMENT);
    auto data =
        fbb.CreateVector(reinterpret_cast<const uint8_t *>(image.data.data()),
                         image.data.size());
    imageTables.push_back(fb::CreateGpuImage(fbb, fbb.CreateString(image.chip),
                                             fbb.CreateString(image.format),
                                             data));
  }
  std::vector<flatbuffers::Offset<fb::BatchVariant>> variantTables;
  for (const std::string &variant : contents.batchVariants)
    variantTables.push_back(fb::CreateBatchVariant(
        fbb, fbb.CreateVector(reinterpret_cast<const uint8_t *>(variant.data()),
                              variant.size())));
  auto model = fb::CreateModel(
      fbb, KILN_SCHEMA_VERSION, fbb.CreateString(KILN_VERSION_STRING),
      fbb.CreateString(target), objectVector, /*weights=*/0, arenaSize,
      fbb.CreateVector(bufferTables), fbb.CreateVector(inputs),
      fbb.CreateVector(outputs), fbb.CreateVector(dispatches),
      fbb.CreateVector(imageTables), splatSize, fbb.CreateVector(checks),
      fbb.CreateString(contents.cpu),
      fbb.CreateVectorOfStrings(contents.cpuFeatures),
      fbb.CreateVector(*shapeGuards), batchChunk,
      fbb.CreateVector(variantTables), contents.weightsInParent);
  fb::FinishModelBuffer(fbb, model);

  if (summary) {
    for (auto [report, results] : llvm::zip(reports, resultBuffers)) {
      for (size_t b : results)
        report.resultSlots.push_back({buffers[b].offset, buffers[b].size});
      summary->kernels.push_back(report);
    }
    summary->numDispatches = dispatches.size();
    summary->arenaBytes = arenaSize;
    summary->weightBytes = !sharedWeights             ? weightBytes
                           : contents.weightsInParent ? 0
                                                      : sharedWeights->size();
    summary->unplannedArenaBytes = unplanned;
  }
  // The weights follow the FlatBuffer from the next 64-byte boundary, each
  // constant at its offset, the gaps zero; the section digests follow them
  // (kiln/artifact_digest.h).
  const size_t flatbufferSize = fbb.GetSize();
  std::string artifact = allocator.release(flatbufferSize);
  if (sharedWeights && !contents.weightsInParent && sharedWeights->size() > 0) {
    artifact.append(
        artifact_digest::weightsOffset(flatbufferSize) - flatbufferSize, '\0');
    sharedWeights->appendTo(artifact);
  } else if (!sharedWeights && weightBytes > 0) {
    size_t offset = artifact_digest::weightsOffset(flatbufferSize);
    artifact.reserve(offset + weightBytes + (4 << 10));
    for (auto [constant, at] : weights) {
      artifact.append(offset + at - artifact.size(), '\0');
      appendConstantBytes(constant, artifact);
    }
    artifact.append(offset + weightBytes - artifact.size(), '\0');
  }
  std::string digests = artifact_digest::trailer(
      reinterpret_cast<const uint8_t *>(artifact.data()), flatbufferSize,
      artifact.size() - flatbufferSize);
  if (digests.empty())
    return main.emitError("computing the artifact's SHA-256 digests failed "
                          "(libcrypto)");
  artifact += digests;
  return artifact;
}

} // namespace

FailureOr<std::string> kiln::writeArtifact(ModuleOp module,
                                           const ArtifactContents &contents,
                                           ArtifactSummary *summary) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  ModuleOp kernels;
  for (auto nested : module.getOps<ModuleOp>())
    if (nested.getSymName() == "kernels")
      kernels = nested;
  if (!main || !kernels)
    return module.emitError("expected @main and a kernels module");
  // Room for the whole FlatBuffer, so that the builder never copies the
  // device code to grow: the code, and a margin for the schedule's tables
  // (the weights follow the FlatBuffer).
  size_t expectedBytes = contents.kernelObject.size() + (1 << 20);
  for (const GpuImage &image : contents.gpuImages)
    expectedBytes += image.data.size() + KILN_ARTIFACT_ALIGNMENT;
  for (const std::string &variant : contents.batchVariants)
    expectedBytes += variant.size() + KILN_ARTIFACT_ALIGNMENT;
  for (auto dispatch : main.getBody().getOps<DispatchOp>())
    expectedBytes += 512 + 64 * dispatch->getNumOperands();
  Writer writer(module, kernels, expectedBytes);
  writer.splatWeights = contents.splatWeights;
  writer.sharedWeights = contents.sharedWeights;
  return writer.write(main, contents, summary);
}
