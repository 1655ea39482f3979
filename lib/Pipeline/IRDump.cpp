//===- IRDump.cpp - the IR after every pass, one file each ----------------===//
#include "kiln/Pipeline/IRDump.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kiln;

LogicalResult kiln::dumpIR(Operation *op, const std::string &dir,
                           const std::string &name) {
  std::error_code ec;
  llvm::raw_fd_ostream out(dir + "/" + name, ec);
  if (ec)
    return op->emitError("cannot write ")
           << dir << "/" << name << ": " << ec.message();
  OpPrintingFlags flags;
  flags.elideLargeResourceString(64);
  op->print(out, flags);
  return success();
}

namespace {

class IRDumpInstrumentation : public PassInstrumentation {
public:
  IRDumpInstrumentation(std::string dir, unsigned &count)
      : dir(std::move(dir)), count(count) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    // Adaptors only run nested pipelines; their passes are dumped themselves.
    if (pass->getName() == "Pipeline Collection Adaptor" ||
        pass->getArgument().empty())
      return;
    if (pass != lastPass)
      ++count;
    lastPass = pass;
    Operation *root = op;
    while (Operation *parent = root->getParentOp())
      root = parent;
    std::string name;
    llvm::raw_string_ostream(name)
        << llvm::format("%02u", count) << "-" << pass->getArgument() << ".mlir";
    (void)dumpIR(root, dir, name);
  }

private:
  std::string dir;
  unsigned &count; // 00 is the imported module
  Pass *lastPass = nullptr;
};

} // namespace

std::unique_ptr<PassInstrumentation>
kiln::createIRDumpInstrumentation(const std::string &dir, unsigned &counter) {
  return std::make_unique<IRDumpInstrumentation>(dir, counter);
}
