//===- NarrowGpuIndices.cpp - 32-bit index arithmetic in GPU kernels ------===//
//
// `index` lowers to the target's pointer width: 64 bits on NVPTX. Every
// address a kernel computes (thread id times a stride, a block's row
// offset, a window's clamped input position) then takes 64-bit integer
// instructions, which the GPU runs as pairs of 32-bit ones with carries,
// and twice the registers. Where no value a kernel can compute needs more
// than 31 bits, 32-bit indices give the same results in half the
// instructions (XLA and Triton index this way too).
//
// The bound: every buffer a kernel addresses (its arguments, stack and
// workgroup buffers, and so every view into them) spans fewer than 2^31
// bytes, every index constant fits, and the launch has fewer than 2^31
// threads. Offsets into a buffer are then below its size, a thread's
// linear id below the thread count, and the index arithmetic of the
// tiling passes (products of ids and strides, clamped window positions)
// stays within those. Such a gpu.module gets a data layout of 32-bit
// indices, which convert-gpu-to-nvvm and kiln-convert-nvgpu-to-nvvm
// follow; otherwise it is left alone and indices stay 64-bit. The kernels'
// arguments are bare pointers either way, so the launch ABI is unchanged.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_NARROWGPUINDICES
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kLimit = (int64_t(1) << 31) - 1;

/// Bytes a buffer of `type` spans from its base (the largest offset plus
/// one element), or nullopt when a size or stride is unknown. Workgroup
/// memory of unknown size is the block's dynamic shared memory, at most
/// what a block may have (well under 2^31).
std::optional<int64_t> spanBytes(MemRefType type) {
  if (!type.getElementType().isIntOrIndexOrFloat())
    return std::nullopt;
  int64_t elementBytes =
      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  if (!type.hasStaticShape())
    return gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(type)
               ? std::optional<int64_t>(0)
               : std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return std::nullopt;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (ShapedType::isDynamic(stride))
      return std::nullopt;
    if (size == 0)
      return 0;
    last += (size - 1) * std::abs(stride);
    if (last > kLimit)
      return std::nullopt;
  }
  return (last + 1) * elementBytes;
}

bool bufferFits(Type type) {
  std::optional<int64_t> bytes = spanBytes(cast<MemRefType>(type));
  return bytes && *bytes <= kLimit;
}

/// Whether `value` (a memref) is a buffer of its own rather than a view of
/// one: a kernel argument or attribution, or an allocation.
bool isBuffer(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return isa<gpu::GPUFuncOp>(argument.getOwner()->getParentOp()) &&
           argument.getOwner()->isEntryBlock();
  return isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp,
             gpu::DynamicSharedMemoryOp>(value.getDefiningOp());
}

/// Whether a memref result of `op` can only address what its operands
/// can: a view, a cast, or a memref passed through control flow.
bool derivesFromOperands(Operation *op) {
  return isa<ViewLikeOpInterface, CastOpInterface, RegionBranchOpInterface>(op);
}

/// Whether every value `module`'s kernels compute fits 32-bit indices;
/// `launches` gives each kernel's threads (blocks times block size).
bool indicesFit(gpu::GPUModuleOp module,
                const llvm::StringMap<int64_t> &launches) {
  for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
    auto launch = launches.find(kernel.getName());
    if (launch == launches.end() || launch->second > kLimit)
      return false;
    // Arguments and attributions (workgroup and private buffers).
    for (BlockArgument argument : kernel.getBody().front().getArguments())
      if (isa<MemRefType>(argument.getType()) &&
          !bufferFits(argument.getType()))
        return false;
  }
  // Views and memrefs carried through loops address inside the buffers
  // they come from, so only the buffers themselves need bounds.
  WalkResult result = module.walk([&](Operation *op) {
    for (Value value : op->getResults()) {
      if (!isa<MemRefType>(value.getType()))
        continue;
      if (isBuffer(value) ? !bufferFits(value.getType())
                          : !derivesFromOperands(op))
        return WalkResult::interrupt();
    }
    if (auto constant = dyn_cast<arith::ConstantIndexOp>(op))
      if (std::abs(constant.value()) > kLimit)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Index adds, subtracts and multiplies cannot overflow 32 signed bits in
/// such a module; saying so (nsw) lets LLVM move the sign extension of a
/// 32-bit offset through them when it compares addresses. Its load-store
/// vectorizer still merges fewer neighbouring accesses than with 64-bit
/// indices (docs/targets/cuda.md), which is why the pass is not on by default.
void markNoSignedWrap(gpu::GPUModuleOp module) {
  module.walk([](arith::ArithIntegerOverflowFlagsInterface op) {
    if (!op->getResult(0).getType().isIndex())
      return;
    op->setAttr(op.getIntegerOverflowAttrName(),
                arith::IntegerOverflowFlagsAttr::get(
                    op->getContext(), op.getOverflowAttr().getValue() |
                                          arith::IntegerOverflowFlags::nsw));
  });
}

struct NarrowGpuIndicesPass
    : public kiln::impl::NarrowGpuIndicesBase<NarrowGpuIndicesPass> {
  using Base::Base;

  void runOnOperation() override {
    // The host-side declarations that kiln-map-kernels-to-gpu leaves
    // carry each kernel's launch shape.
    llvm::StringMap<int64_t> launches;
    getOperation().walk([&](func::FuncOp func) {
      auto blocks = func->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroups);
      auto threads = func->getAttrOfType<IntegerAttr>(kiln::attrs::kThreads);
      if (blocks && threads && threads.getInt() > 0 &&
          blocks.getInt() <= kLimit / threads.getInt())
        launches[func.getName()] = blocks.getInt() * threads.getInt();
    });
    MLIRContext *context = &getContext();
    getOperation().walk([&](gpu::GPUModuleOp module) {
      if (!indicesFit(module, launches))
        return;
      auto index = DataLayoutEntryAttr::get(
          IndexType::get(context),
          IntegerAttr::get(IntegerType::get(context, 64), 32));
      module->setAttr(DLTIDialect::kDataLayoutAttrName,
                      DataLayoutSpecAttr::get(context, {index}));
      markNoSignedWrap(module);
    });
  }
};

} // namespace
