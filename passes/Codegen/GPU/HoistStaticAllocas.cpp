//===- HoistStaticAllocas.cpp - GPU stack buffers into the entry block ----===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace kiln {
#define GEN_PASS_DEF_HOISTSTATICALLOCAS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct HoistStaticAllocasPass
    : public kiln::impl::HoistStaticAllocasBase<HoistStaticAllocasPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUFuncOp kernel = getOperation();
    if (kernel.isExternal())
      return;
    Block &entry = kernel.getBody().front();
    SmallVector<memref::AllocaOp> allocas;
    // Inner allocation scopes (scf.for bodies, alloca_scope) would give a
    // fresh buffer each time they are entered; none of their buffers can be
    // used after the scope ends, so one buffer for all entries is the same.
    kernel.walk([&](memref::AllocaOp alloca) {
      if (alloca.getDynamicSizes().empty() &&
          alloca.getSymbolOperands().empty() && alloca->getBlock() != &entry)
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : allocas)
      alloca->moveBefore(&entry, entry.begin());
  }
};

} // namespace
