//===- AddGpuKernelSignatures.cpp - what each GPU kernel was compiled for -===//
//
// The GPU sibling of the signature kiln-add-cpu-kernel-abi exports: each
// kernel of the gpu.module gets a constant global `<kernel>__signature` in
// global memory, beside its code in the PTX, cubin or code object. The
// runtime reads it through the driver when it loads the image and refuses a
// schedule that launches the kernel on another grid or block, with other
// dynamic shared memory, or on buffers smaller than the kernel reaches: a
// forged or damaged artifact then fails to open instead of running out of
// bounds on the device.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace kiln {
#define GEN_PASS_DEF_ADDGPUKERNELSIGNATURES
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Global memory on both NVPTX and AMDGPU: the drivers look such globals up
/// by name (cuModuleGetGlobal, hipModuleGetGlobal).
constexpr unsigned kGlobalAddressSpace = 1;

int64_t integerAttr(Operation *op, StringRef name, int64_t absent) {
  auto value = op->getAttrOfType<IntegerAttr>(name);
  return value ? value.getInt() : absent;
}

struct AddGpuKernelSignaturesPass
    : public kiln::impl::AddGpuKernelSignaturesBase<
          AddGpuKernelSignaturesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp kernels = getOperation();
    SmallVector<gpu::GPUFuncOp> funcs;
    kernels.walk([&](gpu::GPUFuncOp func) {
      if (func.isKernel())
        funcs.push_back(func);
    });
    for (gpu::GPUFuncOp func : funcs) {
      func::FuncOp declaration = hostDeclaration(kernels, func);
      if (!declaration || failed(addSignature(func, declaration)))
        return signalPassFailure();
    }
  }

  /// Words: binding count, blocks, threads per block, dynamic shared bytes,
  /// then the bytes the kernel reaches in each binding. The sizes come from
  /// the host declaration, whose buffer types are those of the dispatch (an
  /// empty buffer reaches 0 bytes though the kernel takes it as one
  /// element).
  LogicalResult addSignature(gpu::GPUFuncOp func, func::FuncOp declaration) {
    SmallVector<MemRefType> buffers;
    for (Type type : declaration.getFunctionType().getInputs())
      if (auto buffer = dyn_cast<MemRefType>(type))
        buffers.push_back(buffer);
    if (buffers.size() != func.getNumArguments())
      return func.emitError("GPU kernel ")
             << func.getName() << " takes " << func.getNumArguments()
             << " buffers; its host declaration " << buffers.size();
    SmallVector<int64_t> header = {
        int64_t(buffers.size()),
        integerAttr(declaration, kiln::attrs::kWorkgroups, 1),
        integerAttr(declaration, kiln::attrs::kThreads, 1),
        integerAttr(declaration, kiln::attrs::kDynamicWorkgroupMemory, 0)};
    return addKernelSignature(func, (func.getName() + "__signature").str(),
                              header, buffers, kGlobalAddressSpace);
  }
};

} // namespace
