//===- ConvertKilnToLinalg.cpp - kiln ops → linalg on tensors -------------===//
//
// The patterns live in KilnToLinalg/ beside this file, one op family per file.
// Every kiln compute op is illegal afterwards, so an op without a lowering is
// reported by name.
//
//===----------------------------------------------------------------------===//
#include "KilnToLinalg/KilnToLinalg.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "kiln/Passes/LoweringPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ConvertKilnToLinalgPass
    : public kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    populateKilnToLinalgPatterns(patterns, flattenRowsBelow,
                                 readWindowPaddingInPlace, concatByElement);
    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           bufferization::BufferizationDialect,
                           func::FuncDialect>();
    // Host-side ops stay; only kernel bodies are converted.
    target.addLegalOp<DispatchOp, DispatchRegionOp, YieldOp>();
    target.addIllegalDialect<KilnDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    FrozenRewritePatternSet frozen(std::move(patterns));
    getOperation()->walk([&](func::FuncOp func) {
      if (func->hasAttr(kiln::attrs::kKernel) &&
          failed(applyPartialConversion(func, target, frozen)))
        signalPassFailure();
    });
  }
};

} // namespace
