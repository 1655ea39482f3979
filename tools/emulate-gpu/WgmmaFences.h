//===- WgmmaFences.h - wgmma.fence before a wgmma's registers ---*- C++ -*-===//
//
// wgmma.mma_async reads and writes its accumulator registers
// asynchronously. PTX ISA, "wgmma.fence": a warpgroup's threads must run
// wgmma.fence before the first wgmma.mma_async, and between any other
// instruction's access of a wgmma's registers and that wgmma; only
// accumulators passed from one wgmma straight to the next of the same
// shape are ordered without one. Without the fence the device may start
// the wgmma on registers not yet written (a bias or zero fill, an
// epilogue's change); the emulator, which computes each wgmma when issued
// on the values it is given, would compute the right product anyway.
// WgmmaRegisterOrder keeps per thread whether it ran wgmma.fence since
// its last wgmma (or since it started the block) and what that wgmma left
// in the accumulators, so the emulator can fail a kernel whose wgmma
// starts unfenced on anything else: registers that other instructions
// wrote.
//
// It sees values, not registers: accumulators that another instruction
// rewrote with the values they held pass (nothing on the device could
// tell), and a thread alternating wgmmas between two accumulator sets
// would need a fence at each (Kiln's blocks give a thread one set).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_EMULATEGPU_WGMMAFENCES_H
#define KILN_TOOLS_EMULATEGPU_WGMMAFENCES_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::emulator {

class WgmmaRegisterOrder {
public:
  /// `threads` GPU threads, none of which has started a block.
  void reset(int64_t threads);

  /// `thread` starts a block: no fence and no wgmma yet.
  void startBlock(int64_t thread);

  /// `thread` ran wgmma.fence.
  void fenced(int64_t thread);

  /// `thread` issues a wgmma whose accumulators hold `inputs`
  /// (`count` floats); it leaves `outputs` there. Returns what breaks the
  /// rule, or "".
  std::string issue(int64_t thread, const float *inputs, const float *outputs,
                    int64_t count);

private:
  struct ThreadState {
    bool fencedSinceLast = false; // since its last wgmma, or block start
    bool issuedAny = false;
    std::vector<float> lastOutputs;
  };
  std::vector<ThreadState> states;
};

} // namespace kiln::emulator

#endif
