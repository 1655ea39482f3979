//===- ImportCheck.h - what the importer's fuzz targets require -*- C++ -*-===//
//
// Model bytes are imported (from a memfd, through the path the tools use).
// The importer must either fail with a diagnostic, list the nodes it cannot
// import, or produce a module that verifies: IR that does not verify would
// crash a later pass.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_FUZZ_IMPORTCHECK_H
#define KILN_TEST_FUZZ_IMPORTCHECK_H

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

namespace kiln_fuzz {

/// A context for the next input. Weights become dense_resource blobs that
/// the context keeps until it dies, so a fresh one replaces it every 256
/// inputs (creating one per input would cost most of the fuzzer's time).
inline mlir::MLIRContext &context() {
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

/// Imports the model in `data`; aborts on a failure without a diagnostic or
/// on a module that does not verify.
inline void importAndCheck(const uint8_t *data, size_t size) {
  MemoryFile file(data, size);
  if (!file.ok())
    return;
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
    return;
  }
  if (imported->unsupported.empty() && imported->module &&
      mlir::failed(mlir::verify(*imported->module)))
    std::abort(); // the importer built invalid IR
}

} // namespace kiln_fuzz

#endif
