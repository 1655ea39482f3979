//===- DynamicWorkgroupMemory.cpp - large shared buffers as dynamic ones -===//
//
// CUDA lets a block declare at most 48 KiB of shared memory statically; up
// to the chip's opt-in limit (227 KiB on sm_90) it must be dynamic shared
// memory, sized at launch after cuFuncSetAttribute raised the kernel's
// maximum. Kernels under 48 KiB keep their static buffers.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_DYNAMICWORKGROUPMEMORY
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Every buffer starts at a multiple of this from the start of the dynamic
/// memory (itself 16-byte aligned, at the start of the block's shared
/// memory when there is no static part, as here), at least its own
/// alignment: cp.async copies and ldmatrix rows need 16, and the stage
/// swizzles assume rows that start on 128-byte bank lines.
constexpr int64_t kBufferAlignment = 128;

int64_t bufferBytes(MemRefType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

struct DynamicWorkgroupMemoryPass
    : public kiln::impl::DynamicWorkgroupMemoryBase<
          DynamicWorkgroupMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp kernels = getOperation();
    SmallVector<gpu::GPUFuncOp> funcs;
    kernels.walk([&](gpu::GPUFuncOp func) {
      if (!func.isExternal())
        funcs.push_back(func);
    });
    for (gpu::GPUFuncOp func : funcs) {
      if (func.getNumPrivateAttributions() != 0) {
        func.emitError("GPU kernel ")
            << func.getName() << " has private attributions, which "
            << getArgument() << " does not expect";
        return signalPassFailure();
      }
      std::optional<int64_t> bytes = moveToDynamicMemory(func);
      if (!bytes)
        continue;
      // The host declaration tells the artifact writer the launch size.
      func::FuncOp declaration = hostDeclaration(kernels, func);
      if (!declaration)
        return signalPassFailure();
      declaration->setAttr(
          kiln::attrs::kDynamicWorkgroupMemory,
          IntegerAttr::get(IntegerType::get(&getContext(), 64), *bytes));
    }
  }

  /// Replaces `func`'s workgroup attributions by views into its dynamic
  /// shared memory when they need more than a block may declare
  /// statically; returns the dynamic bytes then, nothing otherwise.
  std::optional<int64_t> moveToDynamicMemory(gpu::GPUFuncOp func) {
    SmallVector<BlockArgument> buffers(func.getWorkgroupAttributions());
    int64_t staticBytes = 0;
    for (BlockArgument buffer : buffers)
      staticBytes += bufferBytes(cast<MemRefType>(buffer.getType()));
    if (staticBytes <= kStaticWorkgroupBytes)
      return std::nullopt;

    MLIRContext *context = &getContext();
    OpBuilder b(context);
    Block &entry = func.getBody().front();
    b.setInsertionPointToStart(&entry);
    Location loc = func.getLoc();
    auto workgroup = gpu::AddressSpaceAttr::get(
        context, gpu::GPUDialect::getWorkgroupAddressSpace());
    auto bytesType =
        MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 8),
                        MemRefLayoutAttrInterface(), workgroup);
    Value memory = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
    int64_t offset = 0;
    for (auto [index, buffer] : llvm::enumerate(buffers)) {
      int64_t alignment = kBufferAlignment;
      if (auto align = dyn_cast_or_null<IntegerAttr>(
              func.getWorkgroupAttributionAttr(index, "llvm.align")))
        alignment = std::max(alignment, align.getInt());
      offset = llvm::alignTo(offset, alignment);
      auto type = cast<MemRefType>(buffer.getType());
      Value view = memref::ViewOp::create(
          b, buffer.getLoc(), type, memory,
          arith::ConstantIndexOp::create(b, loc, offset), ValueRange{});
      buffer.replaceAllUsesWith(view);
      offset += bufferBytes(type);
    }
    entry.eraseArguments(func.getFirstWorkgroupAttributionIndex(),
                         buffers.size());
    func->setAttr(func.getNumWorkgroupAttributionsAttrName(),
                  b.getI64IntegerAttr(0));
    func->removeAttr(func.getWorkgroupAttribAttrsAttrName());
    return offset;
  }
};

} // namespace
