//===- FuzzImporter.cpp - libFuzzer target: the ONNX importer -------------===//
//
// Any bytes are imported as an ONNX model (from a memfd, through the path the
// tools use). The importer must either fail with a diagnostic, list the nodes
// it cannot import, or produce a module that verifies: IR that does not
// verify would crash a later pass.
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"
#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Import/OnnxImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"

#include <cstdlib>
#include <memory>
#include <string>

namespace {

/// A context for the next input. Weights become dense_resource blobs that
/// the context keeps until it dies, so a fresh one replaces it every 256
/// inputs (creating one per input would cost most of the fuzzer's time).
mlir::MLIRContext &context() {
  static std::unique_ptr<mlir::MLIRContext> ctx;
  static unsigned uses = 0;
  if (!ctx || ++uses % 256 == 0) {
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    registry.insert<kiln::KilnDialect>();
    ctx = std::make_unique<mlir::MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
  }
  return *ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemoryFile file(data, size);
  if (!file.ok())
    return 0;
  mlir::MLIRContext &ctx = context();
  bool diagnosed = false;
  mlir::ScopedDiagnosticHandler quiet(&ctx, [&](mlir::Diagnostic &) {
    diagnosed = true;
    return mlir::success();
  });
  kiln::ImportOptions options;
  auto imported = kiln::importOnnxFile(ctx, file.path(), options);
  if (mlir::failed(imported)) {
    if (!diagnosed)
      std::abort(); // a failure without a message
    return 0;
  }
  if (imported->unsupported.empty() && imported->module &&
      mlir::failed(mlir::verify(*imported->module)))
    std::abort(); // the importer built invalid IR
  return 0;
}
