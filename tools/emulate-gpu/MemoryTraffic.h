//===- MemoryTraffic.h - how well emulated warps use memory -----*- C++ -*-===//
//
// kiln-emulate-gpu --memory-traffic: every global and workgroup-memory
// access of an emulated kernel is recorded (site, address, bytes) per GPU
// thread; after each block the accesses of a warp's lanes are matched into
// warp-wide requests (the k-th execution of a site by each lane is one
// request, which holds wherever the lanes do not diverge) and counted the
// way the hardware serves them:
//
//   global memory: the 32-byte sectors a request touches, against the
//     distinct bytes its lanes asked for (coalescing);
//   workgroup memory: the wavefronts a request takes (32 banks of 4 bytes;
//     a request is served in phases of 128 bytes' worth of lanes, 32 lanes
//     of 4 bytes, 16 of 8, 8 of 16; two lanes on different words of one
//     bank in a phase take two wavefronts, on the same word one), against
//     the fewest its bytes need (bank conflicts).
//
// Accesses of one thread that the backend joins into one vector access
// (MemoryTraffic::record) count as one.
//
// Nothing here knows about MLIR: the tool instruments the kernel and feeds
// the accesses in.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_EMULATEGPU_MEMORYTRAFFIC_H
#define KILN_TOOLS_EMULATEGPU_MEMORYTRAFFIC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::emulator {

enum class MemorySpace : uint8_t { Global, Workgroup };

/// One load or store of the kernel: what it is and where it reads or writes.
struct AccessSite {
  std::string description; // the op and its location
  MemorySpace space;
  bool store;
  /// In a loop the backend unrolls (a few iterations): its executions in
  /// consecutive iterations may join into one vector access.
  bool unrolled = false;
};

/// Totals over the requests of one site (or of all sites of a kind).
struct Traffic {
  /// Warp-wide requests.
  int64_t requests = 0;
  /// Global: 32-byte sectors touched; workgroup: wavefronts.
  int64_t transactions = 0;
  /// The fewest transactions that the same distinct bytes need: a sector
  /// per 32 bytes, a wavefront per 128.
  int64_t ideal = 0;
  /// Distinct bytes the lanes asked for, request by request.
  int64_t bytes = 0;

  void add(const Traffic &other);
};

/// Totals of global loads, global stores, workgroup loads, workgroup
/// stores, in that order.
using TrafficByKind = std::array<Traffic, 4>;

/// "LABEL: memory: global loads N requests, ...": each kind that has
/// requests.
void printTraffic(llvm::raw_ostream &os, llvm::StringRef label,
                  const TrafficByKind &totals);

/// One lane's part of a warp-wide request.
struct LaneAccess {
  int64_t lane;
  uint64_t address;
  int64_t bytes;
};

/// A global-memory request: the 32-byte sectors its lanes touch, and their
/// distinct bytes.
Traffic globalRequest(llvm::ArrayRef<LaneAccess> lanes);
/// A workgroup-memory request: its wavefronts, and the fewest its distinct
/// bytes need.
Traffic workgroupRequest(llvm::ArrayRef<LaneAccess> lanes);

class MemoryTraffic {
public:
  /// Starts a kernel: its sites, threads per block and warp size.
  void start(std::vector<AccessSite> sites, int64_t threads, int64_t warpSize);
  /// An access by GPU thread `thread` of the current block. One that
  /// continues a recent access of the thread by a site before it (the
  /// same loop iteration, or the next of an unrolled loop) joins it where
  /// the two make one aligned access of at most 16 bytes: NVPTX's
  /// load-store vectorizer makes those `ld/st.v2/.v4` where it can prove
  /// the alignment (the PTX shows whether it did).
  void record(int64_t thread, int64_t site, uint64_t address, int64_t bytes);
  /// Counts the current block's requests and forgets its accesses.
  void finishBlock();
  /// One line for `kernel` with each kind of access (global/workgroup,
  /// load/store) it makes, and with `perSite` a line per site that takes
  /// more transactions than its bytes need.
  void print(llvm::raw_ostream &os, llvm::StringRef kernel, bool perSite) const;
  /// The kernel's totals by kind.
  TrafficByKind byKind() const;

private:
  struct Access {
    /// The first site of the access, and the last one joined into it.
    int32_t site, lastSite, bytes;
    uint64_t address;
  };

  std::vector<AccessSite> sites;
  std::vector<Traffic> siteTraffic;
  int64_t warpSize = 32;
  /// Per thread of the current block, in program order.
  std::vector<std::vector<Access>> accesses;
};

} // namespace kiln::emulator

#endif // KILN_TOOLS_EMULATEGPU_MEMORYTRAFFIC_H
