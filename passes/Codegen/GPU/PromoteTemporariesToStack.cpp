//===- PromoteTemporariesToStack.cpp - small kernel temporaries on the stack
//===//
#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_PROMOTETEMPORARIESTOSTACK
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Bytes of a statically shaped memref, or nullopt.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, (bits + 7) / 8);
}

struct PromoteTemporariesToStackPass
    : public kiln::impl::PromoteTemporariesToStackBase<
          PromoteTemporariesToStackPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (bytes && *bytes <= maxBytes && alloc.getDynamicSizes().empty() &&
          !escapes(alloc))
        allocs.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : allocs) {
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                    alloc.getAlignmentAttr());
    }
  }

  /// A temporary that a kernel returns would outlive its stack frame.
  static bool escapes(memref::AllocOp alloc) {
    return llvm::any_of(alloc->getUsers(), [](Operation *user) {
      return isa<func::ReturnOp>(user);
    });
  }
};

} // namespace
