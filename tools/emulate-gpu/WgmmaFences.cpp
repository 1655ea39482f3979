//===- WgmmaFences.cpp - wgmma.fence before a wgmma's registers -----------===//
#include "WgmmaFences.h"

#include <cstring>

using namespace kiln::emulator;

void WgmmaRegisterOrder::reset(int64_t threads) {
  states.assign(size_t(threads), ThreadState());
}

void WgmmaRegisterOrder::startBlock(int64_t thread) {
  states[size_t(thread)] = ThreadState();
}

void WgmmaRegisterOrder::fenced(int64_t thread) {
  states[size_t(thread)].fencedSinceLast = true;
}

std::string WgmmaRegisterOrder::issue(int64_t thread, const float *inputs,
                                      const float *outputs, int64_t count) {
  ThreadState &state = states[size_t(thread)];
  std::string broken;
  if (!state.fencedSinceLast) {
    // Bitwise: a NaN passed on unchanged is the same register contents.
    bool chained = state.issuedAny &&
                   int64_t(state.lastOutputs.size()) == count &&
                   std::memcmp(state.lastOutputs.data(), inputs,
                               size_t(count) * sizeof(float)) == 0;
    if (!state.issuedAny)
      broken = "a wgmma with no wgmma.fence before it in its thread's block";
    else if (!chained)
      broken = "a wgmma whose accumulators other instructions wrote since "
               "the last wgmma, with no wgmma.fence between";
  }
  state.issuedAny = true;
  state.fencedSinceLast = false;
  state.lastOutputs.assign(outputs, outputs + count);
  return broken;
}
