//===- ExpandBFloat16Casts.cpp - bfloat16 casts as integer arithmetic ----===//
//
// CPU kernels of a --precision=bf16 model round float32 results to
// bfloat16. An x86 CPU without AVX512-BF16 has no instruction for it, and
// LLVM lowers the truncation to a call of __truncsfbf2, which Debian 12's
// libgcc (GCC 12) does not have: the kernel object then fails to load
// ("undefined symbol: __truncsfbf2"). MLIR's bfloat16 expansion computes
// the same rounding (to nearest even; NaN stays NaN) and the widening with
// integer operations that LLVM vectorizes, on every CPU.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_EXPANDBFLOAT16CASTS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ExpandBFloat16CastsPass
    : public kiln::impl::ExpandBFloat16CastsBase<ExpandBFloat16CastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
