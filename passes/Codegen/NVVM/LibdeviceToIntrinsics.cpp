//===- LibdeviceToIntrinsics.cpp - native ops for simple libdevice calls --===//
#include "kiln/Passes/Passes.h"

#include "llvm/ADT/StringSwitch.h"

namespace kiln {
#define GEN_PASS_DEF_LIBDEVICETOINTRINSICS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The LLVM intrinsic op that computes what a libdevice function does, for
/// functions PTX has an instruction for.
std::optional<StringRef> intrinsicFor(StringRef callee) {
  StringRef base = callee;
  if (!base.consume_front("__nv_"))
    return std::nullopt;
  if (base.ends_with("f") && base != "fdim")
    base = base.drop_back(); // the f32 variant: floorf -> floor
  return llvm::StringSwitch<std::optional<StringRef>>(base)
      .Case("floor", "llvm.intr.floor")
      .Case("ceil", "llvm.intr.ceil")
      .Case("trunc", "llvm.intr.trunc")
      .Case("rint", "llvm.intr.rint")
      .Case("fabs", "llvm.intr.fabs")
      .Case("sqrt", "llvm.intr.sqrt")
      .Case("fma", "llvm.intr.fma")
      .Case("copysign", "llvm.intr.copysign")
      .Case("fmin", "llvm.intr.minnum")
      .Case("fmax", "llvm.intr.maxnum")
      .Default(std::nullopt);
}

struct LibdeviceToIntrinsicsPass
    : public kiln::impl::LibdeviceToIntrinsicsBase<LibdeviceToIntrinsicsPass> {
  void runOnOperation() override {
    SmallVector<LLVM::CallOp> calls;
    getOperation()->walk([&](LLVM::CallOp call) {
      if (call.getCallee() && intrinsicFor(*call.getCallee()))
        calls.push_back(call);
    });
    OpBuilder builder(&getContext());
    for (LLVM::CallOp call : calls) {
      builder.setInsertionPoint(call);
      OperationState state(call.getLoc(), *intrinsicFor(*call.getCallee()));
      state.addOperands(call.getArgOperands());
      state.addTypes(call.getResultTypes());
      Operation *native = builder.create(state);
      call.replaceAllUsesWith(native->getResults());
      call.erase();
    }
    // Declarations nothing calls any more.
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      if (func.isExternal() && intrinsicFor(func.getName()) &&
          SymbolTable::symbolKnownUseEmpty(func, getOperation()))
        func.erase();
    });
  }
};

} // namespace
