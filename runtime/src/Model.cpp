//===- Model.cpp - Read and validate a .kiln artifact ---------------------===//
//
// Nothing in an artifact is trusted: the FlatBuffers verifier checks the
// structure, and then every buffer range, index and tensor size is checked
// here so that execution never needs another bounds check.
//
//===----------------------------------------------------------------------===//
#include "Model.h"
#include "CpuFeatures.h"
#include "Status.h"

#include "kiln/artifact_digest.h"
#include "kiln/artifact_generated.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

using namespace kiln;

static_assert(KILN_DTYPE_F32 == int(fb::DType_F32) &&
                  KILN_DTYPE_F16 == int(fb::DType_F16) &&
                  KILN_DTYPE_BF16 == int(fb::DType_BF16) &&
                  KILN_DTYPE_F64 == int(fb::DType_F64) &&
                  KILN_DTYPE_I8 == int(fb::DType_I8) &&
                  KILN_DTYPE_U8 == int(fb::DType_U8) &&
                  KILN_DTYPE_I32 == int(fb::DType_I32) &&
                  KILN_DTYPE_I64 == int(fb::DType_I64) &&
                  KILN_DTYPE_BOOL == int(fb::DType_Bool) &&
                  KILN_DTYPE_I16 == int(fb::DType_I16) &&
                  KILN_DTYPE_U16 == int(fb::DType_U16) &&
                  KILN_DTYPE_U32 == int(fb::DType_U32) &&
                  KILN_DTYPE_U64 == int(fb::DType_U64),
              "kiln_dtype must mirror kiln.fb.DType");

namespace {

/// a * b, or false on uint64 overflow.
bool mulChecked(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}

std::string str(const flatbuffers::String *s) {
  return s ? s->str() : std::string();
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

kiln_status Model::verify(const uint8_t *data, size_t size) {
  // Identifier first: "not a Kiln artifact" is more useful than a verifier
  // failure when someone passes an .onnx file.
  if (size < 8 || !fb::ModelBufferHasIdentifier(data))
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "not a Kiln artifact: missing the 'KILN' file identifier (" +
                    std::to_string(size) + " bytes)");
  flatbuffers::Verifier::Options opts;
  opts.max_tables = 1u << 30; // large models have many small tables
  flatbuffers::Verifier verifier(data, size, opts);
  if (!fb::VerifyModelBuffer(verifier))
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "Kiln artifact failed FlatBuffers verification (corrupt, "
                "truncated or missing required fields)");
  uint32_t version = fb::GetModel(data)->schema_version();
  if (version != KILN_SCHEMA_VERSION)
    return fail(KILN_ERROR_VERSION_MISMATCH,
                "artifact schema_version " + std::to_string(version) +
                    " does not match this runtime's " +
                    std::to_string(KILN_SCHEMA_VERSION) +
                    "; recompile the model with a matching kiln-compile");
  return KILN_OK;
}

kiln_status Model::readBuffers(const fb::Model &m, uint64_t weightsSize) {
  for (uint32_t i = 0; i < m.buffers()->size(); ++i) {
    const fb::Buffer *b = m.buffers()->Get(i);
    BufferDesc d{BufferDesc::Arena, b->offset(), b->size(), b->splat_bits()};
    uint64_t limit = arenaSize_;
    const char *area = "arena";
    switch (b->kind()) {
    case fb::BufferKind_Arena:
      break;
    case fb::BufferKind_Weight:
      d.kind = BufferDesc::Weight;
      limit = weightsSize;
      area = "weights";
      break;
    case fb::BufferKind_Splat:
      d.kind = BufferDesc::Splat;
      limit = splatSize_;
      area = "splat area";
      break;
    default:
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "buffer " + std::to_string(i) + " has unknown kind " +
                      std::to_string(int(b->kind())));
    }
    uint64_t end;
    if (__builtin_add_overflow(b->offset(), b->size(), &end) || end > limit)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "buffer " + std::to_string(i) + " [offset " +
                      std::to_string(b->offset()) + ", size " +
                      std::to_string(b->size()) + "] is out of range of the " +
                      area + " (" + std::to_string(limit) + " bytes)");
    if (d.kind == BufferDesc::Splat && (d.offset % 4 || d.size % 4))
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "splat buffer " + std::to_string(i) +
                      " is not a whole number of 32-bit words");
    buffers_.push_back(d);
  }
  return KILN_OK;
}

kiln_status Model::readTensor(const fb::TensorInfo *t, const std::string &label,
                              TensorDesc &d) {
  d.name = t->name()->str();
  // The verifier aligns a vector's length, not its 8-byte elements: a
  // crafted file can place them off alignment (found by kiln-fuzz-artifact),
  // so they are copied byte-wise.
  d.shape.resize(t->shape()->size());
  if (!d.shape.empty())
    std::memcpy(d.shape.data(), t->shape()->Data(),
                d.shape.size() * sizeof(int64_t));
  d.buffer = t->buffer();
  d.batched = t->batched();
  d.batchDim = d.batched && t->batch_dim() > 0 ? size_t(t->batch_dim()) : 0;
  // Check the raw value: an out-of-range enum value is itself UB.
  int rawDtype = int(t->dtype());
  if (rawDtype < fb::DType_MIN || rawDtype > fb::DType_MAX)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                label + " has unknown dtype " + std::to_string(rawDtype));
  d.dtype = kiln_dtype(rawDtype);
  uint64_t bytes = kiln_dtype_size(d.dtype);
  for (int64_t dim : d.shape)
    if (dim < 0 || !mulChecked(bytes, uint64_t(dim), bytes))
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " has an invalid or too large shape " +
                      shapeString(d.shape));
  d.bytes = bytes;
  if (d.buffer >= buffers_.size())
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                label + " names buffer " + std::to_string(d.buffer) +
                    " but the artifact has " + std::to_string(buffers_.size()) +
                    " buffers");
  const BufferDesc &buf = buffers_[d.buffer];
  if (bytes > buf.size)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                label + " needs " + std::to_string(bytes) + " bytes but its " +
                    "buffer " + std::to_string(d.buffer) + " holds " +
                    std::to_string(buf.size));
  return KILN_OK;
}

kiln_status Model::readTensors(const fb::Model &m, bool isInput) {
  const char *what = isInput ? "input" : "output";
  auto *list = isInput ? m.inputs() : m.outputs();
  std::vector<TensorDesc> &out = isInput ? inputs_ : outputs_;
  std::set<std::string> seen;
  for (uint32_t i = 0; i < list->size(); ++i) {
    const fb::TensorInfo *t = list->Get(i);
    TensorDesc d;
    std::string label = std::string(what) + " '" + t->name()->str() + "'";
    if (!seen.insert(t->name()->str()).second)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "duplicate " + label + " in the artifact");
    if (kiln_status s = readTensor(t, label, d))
      return s;
    if (isInput && buffers_[d.buffer].isWeight())
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " is bound to read-only weight buffer " +
                      std::to_string(d.buffer));
    out.push_back(std::move(d));
  }
  return KILN_OK;
}

kiln_status Model::readChecks(const fb::Model &m) {
  if (!m.checks())
    return KILN_OK;
  for (uint32_t i = 0; i < m.checks()->size(); ++i) {
    const fb::Check *c = m.checks()->Get(i);
    CheckDesc d{c->message()->str(), {}};
    if (kiln_status s =
            readTensor(c->tensor(), "check " + std::to_string(i), d.tensor))
      return s;
    if (buffers_[d.tensor.buffer].isWeight())
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "check " + std::to_string(i) +
                      " is not bound to an arena buffer");
    checks_.push_back(std::move(d));
  }
  return KILN_OK;
}

/// A FlatBuffers int64 vector, copied byte-wise (see readTensor).
static std::vector<int64_t> int64s(const flatbuffers::Vector<int64_t> *v) {
  std::vector<int64_t> out(v ? v->size() : 0);
  if (!out.empty())
    std::memcpy(out.data(), v->Data(), out.size() * sizeof(int64_t));
  return out;
}

kiln_status Model::readShapeGuards(const fb::Model &m) {
  if (!m.shape_guards())
    return KILN_OK;
  for (uint32_t i = 0; i < m.shape_guards()->size(); ++i) {
    const fb::ShapeGuard *g = m.shape_guards()->Get(i);
    std::string label = "shape guard " + std::to_string(i);
    int rawRule = int(g->rule());
    if (rawRule < fb::ShapeRule_MIN || rawRule > fb::ShapeRule_MAX)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " has unknown rule " + std::to_string(rawRule));
    ShapeGuardDesc d{ShapeGuardDesc::Rule(rawRule), g->node()->str(),
                     g->op_type()->str(),           g->input(),
                     int64s(g->data_shape()),       int64s(g->params()),
                     int64s(g->expected())};
    if (d.input >= inputs_.size())
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " reads input " + std::to_string(d.input) +
                      " but the model has " + std::to_string(inputs_.size()));
    const TensorDesc &input = inputs_[d.input];
    std::vector<int64_t> probe;
    if (!readGuardValues(input.dtype, nullptr, 0, probe))
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " reads input '" + input.name +
                      "', whose dtype holds no integers");
    if (input.bytes / kiln_dtype_size(input.dtype) > kMaxShapeGuardValues)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " reads input '" + input.name + "', of more than " +
                      std::to_string(kMaxShapeGuardValues) + " values");
    std::string problem = validateShapeGuard(d);
    if (!problem.empty())
      return fail(KILN_ERROR_INVALID_ARTIFACT, label + " " + problem);
    shapeGuardList_ += "node '" + d.node + "' (" + d.opType + "): input '" +
                       input.name + "' " + describeShapeGuard(d) + "\n";
    shapeGuards_.push_back(std::move(d));
  }
  return KILN_OK;
}

bool Model::isGuardedInput(size_t index) const {
  return std::any_of(shapeGuards_.begin(), shapeGuards_.end(),
                     [&](const ShapeGuardDesc &g) { return g.input == index; });
}

kiln_status Model::readDispatches(const fb::Model &m) {
  for (uint32_t i = 0; i < m.dispatches()->size(); ++i) {
    const fb::Dispatch *fd = m.dispatches()->Get(i);
    DispatchDesc d;
    d.kernel = fd->kernel()->str();
    d.workgroups = fd->workgroups();
    d.threads = fd->threads();
    d.dynamicWorkgroupMemory = fd->dynamic_workgroup_memory();
    d.flops = fd->flops();
    if (fd->nodes())
      for (const flatbuffers::String *n : *fd->nodes())
        d.nodes.push_back(str(n));
    std::string label = "dispatch " + std::to_string(i) + " (kernel '" +
                        d.kernel + "', ONNX nodes " + quoteList(d.nodes) + ")";
    for (uint32_t b : *fd->bindings()) {
      if (b >= buffers_.size())
        return fail(KILN_ERROR_INVALID_ARTIFACT,
                    label + " binds buffer " + std::to_string(b) +
                        " but the artifact has " +
                        std::to_string(buffers_.size()) + " buffers");
      d.bindings.push_back(b);
    }
    if (fd->results())
      for (uint32_t r = 0; r < fd->results()->size(); ++r) {
        TensorDesc result;
        std::string resultLabel = label + " result " + std::to_string(r);
        if (kiln_status s =
                readTensor(fd->results()->Get(r), resultLabel, result))
          return s;
        // A kernel writes only arena buffers it is bound to.
        if (buffers_[result.buffer].isWeight() ||
            std::find(d.bindings.begin(), d.bindings.end(), result.buffer) ==
                d.bindings.end())
          return fail(KILN_ERROR_INVALID_ARTIFACT,
                      resultLabel + " names buffer " +
                          std::to_string(result.buffer) +
                          ", which the kernel does not write");
        d.results.push_back(std::move(result));
      }
    if (isGpu()) {
      // A block holds at most 1024 threads; a grid at least one block.
      d.fn = nullptr;
      if (d.threads == 0 || d.threads > 1024 || d.workgroups == 0)
        return fail(KILN_ERROR_INVALID_ARTIFACT,
                    label + " has an invalid launch shape: " +
                        std::to_string(d.workgroups) + " blocks of " +
                        std::to_string(d.threads) + " threads");
    } else {
      d.fn = kernels_.lookup(d.kernel);
      if (!d.fn)
        return fail(KILN_ERROR_KERNEL_LOAD,
                    "kernel symbol not found in the kernel object: " + label);
      const KernelObject::Signature *signature = kernels_.signature(d.kernel);
      if (!signature)
        return fail(KILN_ERROR_KERNEL_LOAD,
                    label + " has no signature in the kernel object");
      if (kiln_status s = checkSignature(d, *signature, label))
        return s;
    }
    dispatches_.push_back(std::move(d));
  }
  // Pointers into the strings are taken once the vectors stop moving.
  for (DispatchDesc &d : dispatches_)
    for (const std::string &n : d.nodes)
      d.nodePtrs.push_back(n.c_str());
  return KILN_OK;
}

kiln_status Model::checkSignature(const DispatchDesc &d,
                                  const KernelObject::Signature &signature,
                                  const std::string &label) const {
  if (signature.bindingBytes.size() != d.bindings.size())
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                label + " binds " + std::to_string(d.bindings.size()) +
                    " buffers; the kernel takes " +
                    std::to_string(signature.bindingBytes.size()));
  if (signature.workgroups != d.workgroups)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                label + " runs " + std::to_string(d.workgroups) +
                    " workgroups; the kernel was compiled for " +
                    std::to_string(signature.workgroups));
  for (size_t i = 0; i < d.bindings.size(); ++i) {
    uint64_t bytes = signature.bindingBytes[i];
    const BufferDesc &buffer = buffers_[d.bindings[i]];
    if (buffer.size < bytes)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  label + " binding " + std::to_string(i) + " is buffer " +
                      std::to_string(d.bindings[i]) + " of " +
                      std::to_string(buffer.size) +
                      " bytes; the kernel reaches " + std::to_string(bytes));
  }
  return KILN_OK;
}

kiln_status Model::readWeights(const fb::Model &m, const uint8_t *data,
                               size_t size, size_t tail) {
  weights_ = m.weights() ? m.weights()->data() : nullptr;
  weightsSize_ = m.weights() ? m.weights()->size() : 0;
  if (m.weights_in_parent()) {
    if (!carrier_)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "the artifact is a batch variant whose weights are in the "
                  "artifact that carries it: open that one");
    if (weightsSize_ > 0 || tail > 0)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "holds weights of its own beside those of the artifact "
                  "that carries it");
    weightsInCarrier_ = true;
    weights_ = carrier_->weights_;
    weightsSize_ = carrier_->weightsSize_;
    return KILN_OK;
  }
  if (tail == 0)
    return KILN_OK;
  size_t offset = artifact_digest::weightsOffset(size);
  if (weightsSize_ > 0 || size + tail < offset)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "the artifact holds " + std::to_string(tail) +
                    " bytes after its FlatBuffer, which are not its weights "
                    "(weights inside the FlatBuffer too, or too few bytes)");
  weights_ = data + offset;
  weightsSize_ = size + tail - offset;
  return KILN_OK;
}

kiln_status Model::checkDigests(const uint8_t *data, size_t size, size_t tail,
                                const uint8_t *digests, uint32_t count) {
  std::vector<artifact_digest::Section> sections =
      artifact_digest::sections(data, size, tail);
  if (count != sections.size())
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "artifact holds " + std::to_string(count) +
                    " section digests for its " +
                    std::to_string(sections.size()) + " sections");
  for (size_t i = 0; i < sections.size(); ++i) {
    artifact_digest::Digest d;
    if (!artifact_digest::digest(sections[i], d))
      return fail(KILN_ERROR_INTERNAL, "computing a SHA-256 digest failed");
    if (std::memcmp(d.data(), digests + i * d.size(), d.size()))
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  "artifact section '" + sections[i].name +
                      "' does not match its SHA-256 digest: the file is "
                      "corrupt or was changed after kiln-compile wrote it");
  }
  return KILN_OK;
}

kiln_status Model::load(AlignedBytes bytes, size_t fileSize) {
  bytes_ = std::move(bytes);
  const uint8_t *data = bytes_.get();
  size_t size = 0, tail = 0;
  const uint8_t *digests = nullptr;
  uint32_t count = 0;
  if (!artifact_digest::readTrailer(data, fileSize, size, tail, digests,
                                    count)) {
    if (kiln_status s = verify(data, fileSize))
      return s;
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "Kiln artifact has no section digests after its FlatBuffer "
                "(truncated, or not written by this kiln-compile)");
  }
  if (kiln_status s = verify(data, size))
    return s;
  if (kiln_status s = checkDigests(data, size, tail, digests, count))
    return s;
  const fb::Model &m = *fb::GetModel(data);
  producer_ = str(m.producer());
  target_ = str(m.target());
  arenaSize_ = m.arena_size();
  if (target_ != "cpu" && !isGpu())
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                "artifact target '" + target_ +
                    "' is not supported by this runtime (cpu, cuda, rocm)");
  if (kiln_status s = readCpu(m))
    return s;
  if (kiln_status s = readWeights(m, data, size, tail))
    return s;
  uint64_t weightsSize = weightsSize_;
  splatSize_ = m.splat_size();
  if (weightsSize > 0 && uintptr_t(weights_) % KILN_ARTIFACT_ALIGNMENT != 0)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "artifact weights are not 64-byte aligned (offset " +
                    std::to_string(weights_ - data) +
                    "); the writer must call "
                    "ForceVectorAlignment(size, 1, 64) before creating them");
  if (kiln_status s = readBuffers(m, weightsSize))
    return s;
  if (kiln_status s = readTensors(m, /*isInput=*/true))
    return s;
  if (kiln_status s = readTensors(m, /*isInput=*/false))
    return s;
  if (kiln_status s = readChecks(m))
    return s;
  if (kiln_status s = readShapeGuards(m))
    return s;
  if (kiln_status s = readBatchChunk(m))
    return s;
  if (kiln_status s = readBatchVariants(m))
    return s;
  if (isGpu()) {
    if (kiln_status s = readGpuImages(m))
      return s;
    return readDispatches(m);
  }
  // A model without dispatches (e.g. an identity) needs no kernel object.
  if (m.dispatches()->size() > 0)
    if (kiln_status s =
            kernels_.load(m.kernel_object()->data(), m.kernel_object()->size()))
      return s;
  return readDispatches(m);
}

kiln_status Model::readBatchChunk(const fb::Model &m) {
  batchChunk_ = m.batch_chunk();
  bool anyBatched = false;
  auto check = [&](const TensorDesc &t,
                   const std::string &what) -> kiln_status {
    if (!t.batched)
      return KILN_OK;
    anyBatched = true;
    if (batchChunk_ < 1 || t.batchDim >= t.shape.size() ||
        t.shape[t.batchDim] != batchChunk_)
      return fail(KILN_ERROR_INVALID_ARTIFACT,
                  what + " '" + t.name + "' is batched, but its dim " +
                      std::to_string(t.batchDim) +
                      " is not the artifact's batch chunk of " +
                      std::to_string(batchChunk_));
    return KILN_OK;
  };
  for (const TensorDesc &t : inputs_)
    if (kiln_status s = check(t, "input"))
      return s;
  for (const TensorDesc &t : outputs_)
    if (kiln_status s = check(t, "output"))
      return s;
  for (const CheckDesc &c : checks_)
    if (kiln_status s = check(c.tensor, "check"))
      return s;
  if (batchChunk_ != 0 && !anyBatched)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "the artifact has a batch chunk of " +
                    std::to_string(batchChunk_) + " but no batched input");
  return KILN_OK;
}

kiln_status Model::readBatchVariants(const fb::Model &m) {
  if (!m.batch_variants() || m.batch_variants()->size() == 0)
    return KILN_OK;
  // Refused before loading, so that nesting cannot recurse.
  if (carrier_)
    return fail(KILN_ERROR_INVALID_ARTIFACT, "holds batch variants of its own");
  for (const fb::BatchVariant *variant : *m.batch_variants()) {
    const flatbuffers::Vector<uint8_t> &bytes = *variant->artifact();
    AlignedBytes copy = allocateAligned(bytes.size());
    if (!copy)
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "out of host memory for a batch variant of " +
                      std::to_string(bytes.size()) + " bytes");
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    auto loaded = std::make_shared<Model>();
    loaded->carrier_ = this;
    if (kiln_status s = loaded->load(std::move(copy), bytes.size()))
      return fail(s, "batch variant " + std::to_string(batchVariants_.size()) +
                         ": " + lastErrorMessage());
    if (kiln_status s = checkBatchVariant(*loaded))
      return s;
    batchVariants_.push_back(std::move(loaded));
  }
  return KILN_OK;
}

kiln_status Model::checkBatchVariant(const Model &variant) const {
  std::string label = "batch variant " + std::to_string(batchVariants_.size());
  auto invalid = [&](const std::string &problem) {
    return fail(KILN_ERROR_INVALID_ARTIFACT, label + " " + problem);
  };
  if (!batchChunk_)
    return invalid("belongs to an artifact with a fixed batch");
  if (variant.target_ != target_ || variant.cpu_ != cpu_)
    return invalid("was compiled for another target or CPU");
  int64_t chunk = variant.batchChunk_;
  bool seen = chunk == batchChunk_;
  for (const auto &other : batchVariants_)
    seen = seen || other->batchChunk_ == chunk;
  if (seen)
    return invalid("repeats the batch chunk of " + std::to_string(chunk));
  auto sameTensors = [&](const std::vector<TensorDesc> &mine,
                         const std::vector<TensorDesc> &theirs) {
    if (mine.size() != theirs.size())
      return false;
    for (size_t i = 0; i < mine.size(); ++i) {
      const TensorDesc &a = mine[i], &b = theirs[i];
      if (a.name != b.name || a.dtype != b.dtype || a.batched != b.batched ||
          a.batchDim != b.batchDim || a.shape.size() != b.shape.size())
        return false;
      for (size_t d = 0; d < a.shape.size(); ++d)
        if (a.shape[d] != b.shape[d] && !(a.batched && d == a.batchDim))
          return false;
    }
    return true;
  };
  if (!sameTensors(inputs_, variant.inputs_) ||
      !sameTensors(outputs_, variant.outputs_))
    return invalid("has inputs or outputs other than the model's");
  return KILN_OK;
}

kiln_status Model::readCpu(const fb::Model &m) {
  cpu_ = str(m.cpu());
  if (m.cpu_features())
    for (const flatbuffers::String *feature : *m.cpu_features())
      cpuFeatures_.push_back(str(feature));
  for (const std::string &feature : cpuFeatures_)
    cpuFeatureList_ += (cpuFeatureList_.empty() ? "" : ",") + feature;
  if (isGpu())
    return KILN_OK;
  std::vector<std::string> missing = missingCpuFeatures(cpuFeatures_);
  if (missing.empty()) {
    std::string refused = enableTileState(cpuFeatures_);
    if (refused.empty())
      return KILN_OK;
    return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
                "the artifact's kernels were compiled for CPU '" + cpu_ +
                    "' with AMX tiles: " + refused +
                    "; recompile with --int8-matrix-tiles=false");
  }
  std::string names;
  for (const std::string &name : missing)
    names += (names.empty() ? "" : ", ") + name;
  return fail(KILN_ERROR_UNSUPPORTED_DEVICE,
              "the artifact's kernels were compiled for CPU '" + cpu_ +
                  "' and need features this CPU lacks: " + names +
                  "; recompile on this machine (kiln-compile --cpu=native, "
                  "the default) or for a CPU it has (e.g. --cpu=x86-64-v3)");
}

kiln_status Model::readGpuImages(const fb::Model &m) {
  if (m.gpu_images())
    for (const fb::GpuImage *image : *m.gpu_images()) {
      GpuImageDesc d{image->chip()->str(), image->format()->str(),
                     image->data()->data(), image->data()->size()};
      bool known = isCuda() ? d.format == "cubin" || d.format == "ptx"
                            : d.format == "hsaco";
      if (!known)
        return fail(KILN_ERROR_INVALID_ARTIFACT,
                    "GPU image for " + d.chip + " has unknown format '" +
                        d.format + "' for target '" + target_ + "'");
      gpuImageList_ +=
          (gpuImageList_.empty() ? "" : ", ") + d.chip + " " + d.format;
      gpuImages_.push_back(std::move(d));
    }
  if (gpuImages_.empty() && m.dispatches()->size() > 0)
    return fail(KILN_ERROR_INVALID_ARTIFACT,
                "artifact for target '" + target_ + "' holds no GPU image");
  return KILN_OK;
}

int Model::findInput(const std::string &name) const {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i].name == name)
      return int(i);
  return -1;
}

int Model::findOutput(const std::string &name) const {
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i].name == name)
      return int(i);
  return -1;
}
