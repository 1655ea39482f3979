//===- CompileFlags.h - the compile options as command-line flags -*- C++
//-*-===//
//
// Every compile option is declared once, here, as an LLVM command-line flag:
// kiln-compile and kiln-onnx-test take all of them, kiln-emulate-gpu the
// target ones, and docs/flags.md is generated from the same table
// (`kiln-compile --print-flag-reference`, checked by
// test/Tools/flags-doc.test).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINE_COMPILEFLAGS_H
#define KILN_PIPELINE_COMPILEFLAGS_H

#include "kiln/Pipeline/CompileOptions.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/CommandLine.h"

namespace kiln {

enum class CompileFlagSet {
  /// The target and what refines it (--target, --allow-tf32,
  /// --workgroup-memory-limit, ...): what kiln-emulate-gpu takes.
  Target,
  /// Every compile option.
  All,
};

/// The categories the flags are listed under by --help.
llvm::cl::OptionCategory &targetFlagCategory();
llvm::cl::OptionCategory &codegenFlagCategory();

/// Declares the flags of `set` to LLVM's command line, --target defaulting
/// to `defaultTarget`; call once, before cl::ParseCommandLineOptions.
void registerCompileFlags(CompileFlagSet set,
                          llvm::StringRef defaultTarget = "cpu");

/// The options the parsed flags give (flags not registered keep their
/// defaults); an error names the bad flag and what it takes.
mlir::FailureOr<CompileOptions> compileOptionsFromFlags(std::string &error);

/// The flag reference as Markdown: every flag of CompileFlagSet::All with
/// its values, default and meaning, in declaration order.
void printFlagReference(llvm::raw_ostream &os);

/// Hides LLVM's and MLIR's own flags from --help except the MLIR ones a
/// Kiln user inspects IR with (--mlir-print-ir-*, --mlir-timing, ...);
/// all of them still work. `toolCategory`: the tool's own flags.
void hideForeignFlags(llvm::cl::OptionCategory &toolCategory);

/// Makes --version print Kiln's version and git commit (and the LLVM it is
/// built with) instead of LLVM's alone.
void printKilnVersionOnVersionFlag();

} // namespace kiln

#endif
