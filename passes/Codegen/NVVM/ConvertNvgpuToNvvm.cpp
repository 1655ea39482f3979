//===- ConvertNvgpuToNvvm.cpp - nvgpu ops to NVVM at the module's index width
//=//
//
// Upstream's convert-nvgpu-to-nvvm lowers `index` to 64 bits whatever the
// gpu.module's data layout says, while convert-gpu-to-nvvm follows it: a
// module that kiln-narrow-gpu-indices gave 32-bit indices would be left
// with casts between i32 and i64 indices that nothing can reconcile. This
// pass runs the same conversion patterns with a type converter built from
// the module's data layout.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTNVGPUTONVVM
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ConvertNvgpuToNvvmPass
    : public kiln::impl::ConvertNvgpuToNvvmBase<ConvertNvgpuToNvvmPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    LowerToLLVMOptions options(context, DataLayout(module));
    LLVMTypeConverter converter(context, options);
    nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
    // cp.async tokens only order the waits; they lower to a dummy i32.
    converter.addConversion([&](nvgpu::DeviceAsyncTokenType type) -> Type {
      return IntegerType::get(type.getContext(), 32);
    });
    RewritePatternSet patterns(context);
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, memref::MemRefDialect,
                           NVVM::NVVMDialect>();
    target.addIllegalDialect<nvgpu::NVGPUDialect>();
    // The stage loops carry cp.async tokens as iteration arguments.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
