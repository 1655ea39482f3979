//===- kiln-opt.cpp - the kiln dialect and passes for lit tests -----------===//
#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Passes/Passes.h"

#include "kiln/version.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  kiln::registerKilnPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates GPU modules to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<kiln::KilnDialect>();
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << KILN_VERSION_STRING << "\n"; });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
