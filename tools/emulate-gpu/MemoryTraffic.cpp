//===- MemoryTraffic.cpp - how well emulated warps use memory -------------===//
//
// See MemoryTraffic.h. The counting rules are NVIDIA's (Nsight Compute's
// sectors per request and shared-memory wavefronts); AMD's LDS has 32 banks
// of 4 bytes too, and its 64-lane requests are counted the same way.
//
//===----------------------------------------------------------------------===//
#include "MemoryTraffic.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace kiln::emulator;

namespace {

constexpr uint64_t kSectorBytes = 32;
constexpr uint64_t kBankBytes = 4;
constexpr uint64_t kBanks = 32;
/// Bytes the banks serve in one wavefront.
constexpr uint64_t kWavefrontBytes = kBankBytes * kBanks;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Distinct bytes of the byte ranges of `lanes` (duplicates are broadcasts).
int64_t distinctBytes(llvm::ArrayRef<LaneAccess> lanes) {
  llvm::SmallVector<std::pair<uint64_t, uint64_t>, 32> ranges;
  for (const LaneAccess &lane : lanes)
    ranges.push_back({lane.address, lane.address + lane.bytes});
  llvm::sort(ranges);
  int64_t bytes = 0;
  uint64_t coveredTo = 0;
  for (auto [begin, end] : ranges) {
    begin = std::max(begin, coveredTo);
    if (end > begin)
      bytes += end - begin;
    coveredTo = std::max(coveredTo, end);
  }
  return bytes;
}

} // namespace

void Traffic::add(const Traffic &other) {
  requests += other.requests;
  transactions += other.transactions;
  ideal += other.ideal;
  bytes += other.bytes;
}

Traffic kiln::emulator::globalRequest(llvm::ArrayRef<LaneAccess> lanes) {
  llvm::SmallVector<uint64_t, 64> sectors;
  for (const LaneAccess &lane : lanes)
    for (uint64_t sector = lane.address / kSectorBytes;
         sector <= (lane.address + lane.bytes - 1) / kSectorBytes; ++sector)
      sectors.push_back(sector);
  llvm::sort(sectors);
  Traffic traffic;
  traffic.requests = 1;
  traffic.transactions =
      std::unique(sectors.begin(), sectors.end()) - sectors.begin();
  traffic.bytes = distinctBytes(lanes);
  traffic.ideal = ceilDiv(traffic.bytes, kSectorBytes);
  return traffic;
}

Traffic kiln::emulator::workgroupRequest(llvm::ArrayRef<LaneAccess> lanes) {
  Traffic traffic;
  traffic.requests = 1;
  traffic.bytes = distinctBytes(lanes);
  if (lanes.empty())
    return traffic;
  // A phase is as many lanes as 128 bytes of their accesses: 32 lanes of
  // 4 bytes or less, 16 of 8, 8 of 16.
  int64_t widest = 0;
  for (const LaneAccess &lane : lanes)
    widest = std::max(widest, lane.bytes);
  int64_t phaseLanes = std::max<int64_t>(
      1, kWavefrontBytes / std::max<int64_t>(widest, kBankBytes));
  llvm::SmallDenseMap<int64_t, llvm::SmallVector<uint64_t, 32>> wordsByPhase;
  for (const LaneAccess &lane : lanes)
    for (uint64_t word = lane.address / kBankBytes;
         word <= (lane.address + lane.bytes - 1) / kBankBytes; ++word)
      wordsByPhase[lane.lane / phaseLanes].push_back(word);
  for (auto &[phase, words] : wordsByPhase) {
    llvm::sort(words);
    words.erase(std::unique(words.begin(), words.end()), words.end());
    // Two distinct words in one bank take two wavefronts; one word read by
    // several lanes is a broadcast.
    int64_t perBank[kBanks] = {};
    for (uint64_t word : words)
      ++perBank[word % kBanks];
    traffic.transactions += *std::max_element(perBank, perBank + kBanks);
    traffic.ideal += ceilDiv(words.size(), kBanks);
  }
  return traffic;
}

void MemoryTraffic::start(std::vector<AccessSite> kernelSites, int64_t threads,
                          int64_t warp) {
  sites = std::move(kernelSites);
  siteTraffic.assign(sites.size(), Traffic());
  warpSize = warp;
  accesses.assign(threads, {});
}

void MemoryTraffic::record(int64_t thread, int64_t site, uint64_t address,
                           int64_t bytes) {
  if (bytes <= 0)
    return;
  std::vector<Access> &mine = accesses[thread];
  const AccessSite &kind = sites[site];
  // A few accesses back: the vectorizer joins accesses of a basic block
  // that other accesses separate (a loaded value's store in between).
  constexpr size_t kLookBack = 8;
  for (size_t i = mine.size(); i > 0 && i + kLookBack > mine.size(); --i) {
    Access &earlier = mine[i - 1];
    const AccessSite &earlierKind = sites[earlier.site];
    if (earlierKind.space != kind.space || earlierKind.store != kind.store ||
        earlier.lastSite > site ||
        (earlier.lastSite == site && !kind.unrolled) ||
        earlier.address + earlier.bytes != address)
      continue;
    uint64_t joined = earlier.bytes + bytes;
    if (joined > 16 || earlier.address % llvm::PowerOf2Ceil(joined) != 0)
      continue;
    earlier.bytes = joined;
    earlier.lastSite = site;
    return;
  }
  mine.push_back({int32_t(site), int32_t(site), int32_t(bytes), address});
}

void MemoryTraffic::finishBlock() {
  int64_t threads = accesses.size();
  std::vector<uint32_t> executions(sites.size());
  for (int64_t warpStart = 0; warpStart < threads; warpStart += warpSize) {
    // The k-th execution of a site by each lane of the warp is one request.
    llvm::DenseMap<uint64_t, unsigned> requestOf;
    std::vector<std::pair<int32_t, std::vector<LaneAccess>>> requests;
    for (int64_t lane = 0; lane < warpSize && warpStart + lane < threads;
         ++lane) {
      std::fill(executions.begin(), executions.end(), 0);
      for (const Access &access : accesses[warpStart + lane]) {
        uint64_t key = uint64_t(access.site) << 32 | executions[access.site]++;
        auto [it, inserted] = requestOf.try_emplace(key, requests.size());
        if (inserted)
          requests.push_back({access.site, {}});
        requests[it->second].second.push_back(
            {lane, access.address, access.bytes});
      }
      accesses[warpStart + lane].clear();
    }
    for (auto &[site, lanes] : requests)
      siteTraffic[site].add(sites[site].space == MemorySpace::Global
                                ? globalRequest(lanes)
                                : workgroupRequest(lanes));
  }
}

namespace {

/// "8.0 sectors each, 100% of their bytes used" / "4.00 wavefronts each,
/// 1.00x the conflict-free count".
void printKind(llvm::raw_ostream &os, MemorySpace space,
               const Traffic &traffic) {
  double each = double(traffic.transactions) / traffic.requests;
  os << traffic.requests << " requests, ";
  if (space == MemorySpace::Global)
    os << llvm::format("%.1f sectors each, %.0f%% of their bytes used", each,
                       100.0 * traffic.bytes /
                           (kSectorBytes * traffic.transactions));
  else
    os << llvm::format("%.2f wavefronts each, %.2fx the conflict-free count",
                       each, double(traffic.transactions) / traffic.ideal);
}

size_t kindIndex(MemorySpace space, bool store) {
  return (space == MemorySpace::Global ? 0 : 2) + (store ? 1 : 0);
}

const char *kindName(MemorySpace space, bool store) {
  if (space == MemorySpace::Global)
    return store ? "global stores" : "global loads";
  return store ? "workgroup stores" : "workgroup loads";
}

} // namespace

TrafficByKind MemoryTraffic::byKind() const {
  TrafficByKind totals;
  for (size_t site = 0; site < sites.size(); ++site)
    totals[kindIndex(sites[site].space, sites[site].store)].add(
        siteTraffic[site]);
  return totals;
}

void kiln::emulator::printTraffic(llvm::raw_ostream &os, llvm::StringRef label,
                                  const TrafficByKind &totals) {
  os << label << ": memory:";
  bool any = false;
  for (MemorySpace space : {MemorySpace::Global, MemorySpace::Workgroup})
    for (bool store : {false, true}) {
      const Traffic &total = totals[kindIndex(space, store)];
      if (total.requests == 0)
        continue;
      os << (any ? "; " : " ") << kindName(space, store) << " ";
      printKind(os, space, total);
      any = true;
    }
  os << (any ? "\n" : " none\n");
}

void MemoryTraffic::print(llvm::raw_ostream &os, llvm::StringRef kernel,
                          bool perSite) const {
  printTraffic(os, kernel, byKind());
  if (!perSite)
    return;
  for (size_t site = 0; site < sites.size(); ++site) {
    const Traffic &traffic = siteTraffic[site];
    if (traffic.requests == 0 || traffic.transactions == traffic.ideal)
      continue;
    os << "  " << kindName(sites[site].space, sites[site].store) << " by "
       << sites[site].description << ": ";
    printKind(os, sites[site].space, traffic);
    os << "\n";
  }
}
