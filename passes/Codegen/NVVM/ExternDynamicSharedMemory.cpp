//===- ExternDynamicSharedMemory.cpp - dynamic shared memory as .extern ---===//
//
// convert-gpu-to-nvvm gives `gpu.dynamic_shared_memory` an internal,
// zero-length global in address space 3, which NVPTX demotes into the
// kernel as a one-byte static `.shared` variable: the kernel then addresses
// its dynamic shared memory through a static variable it overruns, which
// works only because the dynamic part follows the static one. An external
// declaration is what CUDA C++'s `extern __shared__ char smem[];` gives:
// `.extern .shared .align 16 .b8 name[];`, the start of the block's dynamic
// shared memory.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace kiln {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDMEMORY
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ExternDynamicSharedMemoryPass
    : public kiln::impl::ExternDynamicSharedMemoryBase<
          ExternDynamicSharedMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() == NVVM::NVVMMemorySpace::Shared && array &&
          array.getNumElements() == 0 && !global.getValueOrNull() &&
          global.getInitializerRegion().empty())
        global.setLinkage(LLVM::Linkage::External);
    });
  }
};

} // namespace
