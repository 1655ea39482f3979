//===- AddCpuKernelAbi.cpp - the runtime's calling convention -------------===//
#include "kiln/Passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_ADDCPUKERNELABI
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct AddCpuKernelAbiPass
    : public kiln::impl::AddCpuKernelAbiBase<AddCpuKernelAbiPass> {
  void runOnOperation() override {
    SmallVector<LLVM::LLVMFuncOp> kernels;
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (func->hasAttr(kiln::attrs::kKernel))
        kernels.push_back(func);
    });
    for (LLVM::LLVMFuncOp kernel : kernels)
      if (failed(wrap(kernel)))
        return signalPassFailure();
  }

  /// Appends the expanded memref descriptor of `type` at data pointer `ptr`:
  /// allocated and aligned pointers, offset, sizes, strides.
  void appendDescriptor(OpBuilder &b, Location loc, MemRefType type, Value ptr,
                        SmallVectorImpl<Value> &args) {
    auto i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    args.push_back(ptr);
    args.push_back(ptr);
    args.push_back(constant(0));
    for (int64_t size : type.getShape())
      args.push_back(constant(size));
    int64_t stride = 1;
    SmallVector<Value> strides;
    for (int64_t size : llvm::reverse(type.getShape())) {
      strides.push_back(constant(stride));
      stride *= size;
    }
    args.append(strides.rbegin(), strides.rend());
  }

  /// The buffers bound to one dispatch never overlap when one of them is
  /// written (the memory plan keeps a dispatch's results apart from its
  /// inputs), so each aligned data pointer is `noalias`: LLVM may then keep
  /// values in registers and vectorize without runtime alias checks.
  void markBuffersNoAlias(LLVM::LLVMFuncOp impl, ArrayAttr abi) {
    unsigned arg = 0;
    for (Attribute typeAttr : abi) {
      auto type = cast<MemRefType>(cast<TypeAttr>(typeAttr).getValue());
      impl.setArgAttr(arg + 1, LLVM::LLVMDialect::getNoAliasAttrName(),
                      UnitAttr::get(&getContext()));
      arg += 3 + 2 * type.getRank();
    }
  }

  LogicalResult wrap(LLVM::LLVMFuncOp impl) {
    MLIRContext *ctx = &getContext();
    auto abi = impl->getAttrOfType<ArrayAttr>(kiln::attrs::kAbi);
    if (!abi)
      return impl.emitError("kernel has no kiln.abi attribute");
    std::string name = impl.getSymName().str();
    impl.setSymName(name + "_impl");
    impl.setLinkage(LLVM::Linkage::Internal);
    impl->removeAttr(kiln::attrs::kKernel);
    markBuffersNoAlias(impl, abi);

    OpBuilder b(impl);
    Location loc = impl.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = b.getI64Type();
    auto wrapperType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                                   {ptrType, i64, i64});
    auto wrapper = LLVM::LLVMFuncOp::create(b, loc, name, wrapperType);
    // The artifact writer reads the kernel's metadata from the exported symbol.
    for (StringRef attr : {kiln::attrs::kNodes, kiln::attrs::kWorkgroups,
                           kiln::attrs::kFlops, kiln::attrs::kTile})
      if (Attribute value = impl->getAttr(attr))
        wrapper->setAttr(attr, value);
    Block *entry = wrapper.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value bindings = entry->getArgument(0);
    SmallVector<Value> args;
    for (auto [i, typeAttr] : llvm::enumerate(abi)) {
      auto type = cast<MemRefType>(cast<TypeAttr>(typeAttr).getValue());
      Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, bindings,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value ptr = LLVM::LoadOp::create(b, loc, ptrType, slot);
      appendDescriptor(b, loc, type, ptr, args);
    }
    args.push_back(entry->getArgument(1));
    args.push_back(entry->getArgument(2));
    if (args.size() != impl.getNumArguments())
      return impl.emitError("kernel signature does not match its kiln.abi");
    LLVM::CallOp::create(b, loc, impl, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return addSignature(wrapper, abi);
  }

  /// Exports `<name>.signature`, what the kernel was compiled to take: its
  /// binding count, its workgroup count, and the bytes it reaches in each
  /// binding. The runtime checks every dispatch of the kernel against it,
  /// so that a schedule that lies about sizes or grids is refused instead of
  /// run out of bounds.
  LogicalResult addSignature(LLVM::LLVMFuncOp wrapper, ArrayAttr abi) {
    int64_t workgroups = 1;
    if (auto grid =
            wrapper->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroups))
      workgroups = grid.getInt();
    SmallVector<MemRefType> buffers;
    for (Attribute typeAttr : abi)
      buffers.push_back(cast<MemRefType>(cast<TypeAttr>(typeAttr).getValue()));
    return addKernelSignature(wrapper,
                              (wrapper.getSymName() + ".signature").str(),
                              {int64_t(abi.size()), workgroups}, buffers,
                              /*addressSpace=*/0);
  }
};

} // namespace
