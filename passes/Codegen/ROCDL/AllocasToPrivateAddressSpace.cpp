//===- AllocasToPrivateAddressSpace.cpp - GPU allocas in private memory ---===//
#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_ALLOCASTOPRIVATEADDRESSSPACE
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct AllocasToPrivateAddressSpacePass
    : public kiln::impl::AllocasToPrivateAddressSpaceBase<
          AllocasToPrivateAddressSpacePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<LLVM::AllocaOp> generic;
    getOperation().walk([&](LLVM::AllocaOp alloca) {
      if (alloca.getType().getAddressSpace() == 0)
        generic.push_back(alloca);
    });
    IRRewriter rewriter(&getContext());
    auto privatePtr = LLVM::LLVMPointerType::get(&getContext(), addressSpace);
    for (LLVM::AllocaOp alloca : generic) {
      rewriter.setInsertionPoint(alloca);
      auto replacement = LLVM::AllocaOp::create(
          rewriter, alloca.getLoc(), privatePtr, alloca.getElemType(),
          alloca.getArraySize(), alloca.getAlignment().value_or(0));
      auto cast = LLVM::AddrSpaceCastOp::create(rewriter, alloca.getLoc(),
                                                alloca.getType(), replacement);
      rewriter.replaceOp(alloca, cast);
    }
  }
};

} // namespace
