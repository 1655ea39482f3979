//===- artifact_digest.h - SHA-256 digests of a .kiln file's sections -*- C++
//-*-===//
//
// A .kiln file is its FlatBuffer, then its weights (from the next 64-byte
// boundary on: a FlatBuffer holds at most 2 GiB, weights may hold more),
// then a trailer of SHA-256 digests (OpenSSL's libcrypto), one per section:
// the kernel object, the weights, each GPU image, each batch variant's
// artifact, and the schedule (every other byte of the FlatBuffer: buffers,
// tensors, dispatches, checks). The writer appends the trailer; the runtime
// recomputes every digest after the FlatBuffers verifier and before it
// reads a value, and names the section that does not match, so that a
// corrupted file is refused instead of running corrupted kernels or
// weights. The digests detect damage, not forgery: whoever can write the
// file can write its trailer too.
//
// Trailer layout (little-endian), after the FlatBuffer's `size` bytes and
// the weights:
//   uint8_t  digests[count][32];   // in the order sections() lists them
//   uint64_t size;                 // bytes of the FlatBuffer
//   uint32_t count;
//   char     magic[8] = "KILNSHA2"
// The weights are the bytes between the FlatBuffer and the digests, from
// the first 64-byte boundary at or after its end (none when it is there).
//
// Shared by the compiler's artifact writer and the runtime; header-only.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ARTIFACT_DIGEST_H
#define KILN_ARTIFACT_DIGEST_H

#include "kiln/artifact_generated.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kiln::artifact_digest {

using Digest = std::array<uint8_t, 32>;
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'S', 'H', 'A', '2'};
constexpr size_t kTailBytes = sizeof(uint64_t) + sizeof(uint32_t) + 8;

/// One section: its name in errors and the bytes it covers.
struct Section {
  std::string name;
  std::vector<std::pair<const uint8_t *, size_t>> ranges;
};

/// Where the weights after a FlatBuffer of `size` bytes start.
inline size_t weightsOffset(size_t size) { return (size + 63) / 64 * 64; }

/// The sections of the verified FlatBuffer [data, data + size) and the
/// `tail` bytes after it (the weights, with the padding before them), in
/// the order their digests are stored.
inline std::vector<Section> sections(const uint8_t *data, size_t size,
                                     size_t tail) {
  const fb::Model &m = *fb::GetModel(data);
  std::vector<Section> out;
  auto blob = [&](std::string name, const flatbuffers::Vector<uint8_t> *v) {
    if (v && v->size() > 0)
      out.push_back({std::move(name), {{v->data(), v->size()}}});
  };
  blob("the kernel object", m.kernel_object());
  blob("the weights", m.weights());
  if (m.gpu_images())
    for (const fb::GpuImage *image : *m.gpu_images())
      blob("the GPU image for " + image->chip()->str(), image->data());
  if (m.batch_variants())
    for (const fb::BatchVariant *variant : *m.batch_variants())
      blob("a batch variant's artifact", variant->artifact());
  // The schedule: the bytes between the blobs.
  std::vector<std::pair<const uint8_t *, size_t>> blobs;
  for (const Section &s : out)
    blobs.push_back(s.ranges.front());
  std::sort(blobs.begin(), blobs.end());
  Section schedule{"the schedule (buffers, tensors and dispatches)", {}};
  const uint8_t *at = data;
  for (auto [start, length] : blobs) {
    if (start > at)
      schedule.ranges.push_back({at, size_t(start - at)});
    at = std::max(at, start + length);
  }
  if (data + size > at)
    schedule.ranges.push_back({at, size_t(data + size - at)});
  out.push_back(std::move(schedule));
  if (tail > 0)
    out.push_back({"the weights", {{data + size, tail}}});
  return out;
}

/// SHA-256 of a section's bytes; false when libcrypto fails.
inline bool digest(const Section &section, Digest &out) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (auto [start, length] : section.ranges)
    ok = ok && EVP_DigestUpdate(ctx, start, length);
  unsigned int written = 0;
  ok = ok && EVP_DigestFinal_ex(ctx, out.data(), &written) &&
       written == out.size();
  EVP_MD_CTX_free(ctx);
  return ok;
}

/// The trailer for the FlatBuffer [data, data + size) and the `tail` bytes
/// after it; empty when libcrypto fails.
inline std::string trailer(const uint8_t *data, size_t size, size_t tail = 0) {
  std::vector<Section> list = sections(data, size, tail);
  std::string out;
  for (const Section &s : list) {
    Digest d;
    if (!digest(s, d))
      return {};
    out.append(reinterpret_cast<const char *>(d.data()), d.size());
  }
  uint64_t flatbufferSize = size;
  uint32_t count = uint32_t(list.size());
  out.append(reinterpret_cast<const char *>(&flatbufferSize), sizeof(uint64_t));
  out.append(reinterpret_cast<const char *>(&count), sizeof(uint32_t));
  out.append(kMagic, sizeof(kMagic));
  return out;
}

/// Where a file of `fileSize` bytes keeps its FlatBuffer, the bytes after
/// it (`tail`: the weights) and its digests, read from its trailer; false
/// when it has no well-formed one.
inline bool readTrailer(const uint8_t *file, size_t fileSize,
                        size_t &flatbufferSize, size_t &tail,
                        const uint8_t *&digests, uint32_t &count) {
  if (fileSize < kTailBytes ||
      std::memcmp(file + fileSize - sizeof(kMagic), kMagic, sizeof(kMagic)))
    return false;
  const uint8_t *tailBytes = file + fileSize - kTailBytes;
  uint64_t size;
  std::memcpy(&size, tailBytes, sizeof(size));
  std::memcpy(&count, tailBytes + sizeof(size), sizeof(count));
  size_t available = fileSize - kTailBytes;
  if (count > available / sizeof(Digest))
    return false;
  size_t beforeDigests = available - count * sizeof(Digest);
  if (size > beforeDigests)
    return false;
  flatbufferSize = size_t(size);
  tail = beforeDigests - flatbufferSize;
  digests = file + beforeDigests;
  return true;
}

} // namespace kiln::artifact_digest

#endif // KILN_ARTIFACT_DIGEST_H
