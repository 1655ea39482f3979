//===- IRDump.cpp - the IR after every pass that changed it ---------------===//
#include "kiln/Pipeline/IRDump.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

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
  // A kernel is printed on its own: naming values across the whole module
  // for each kernel would make dumping quadratic.
  flags.useLocalScope();
  op->print(out, flags);
  return success();
}

namespace {

std::string symbolName(Operation *op) {
  auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  return name ? name.str() : std::string();
}

class IRDumpInstrumentation : public PassInstrumentation {
public:
  IRDumpInstrumentation(IRDumpOptions options, unsigned &count)
      : options(std::move(options)), count(count) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (dumps(pass))
      before.insert_or_assign({pass, op}, OperationFingerPrint(op));
  }

  void runAfterPass(Pass *pass, Operation *op) override {
    if (!dumps(pass))
      return;
    auto it = before.find({pass, op});
    bool changed = it == before.end() || it->second != OperationFingerPrint(op);
    if (it != before.end())
      before.erase(it);
    if (!changed)
      return;
    unsigned number = numbers.try_emplace(pass, count + 1).first->second;
    count = std::max(count, number);
    std::string prefix;
    llvm::raw_string_ostream(prefix)
        << llvm::format("%04u", number) << "-" << pass->getArgument();
    if (!op->getParentOp() && options.kernels.empty()) {
      (void)dumpIR(op, options.dir, prefix + ".mlir");
      return;
    }
    // Per kernel: the op itself when it is one, else the kernels in it.
    op->walk([&](Operation *nested) {
      std::string name = symbolName(nested);
      bool wanted =
          options.kernels.empty() ? nested == op : options.kernels.count(name);
      if (!wanted)
        return WalkResult::advance();
      if (name.empty())
        name = nested->getName().getStringRef().str();
      std::string folder = options.dir + "/" + prefix;
      if (!llvm::sys::fs::create_directories(folder))
        (void)dumpIR(nested, folder, name + ".mlir");
      return WalkResult::skip();
    });
  }

private:
  /// Adaptors only run nested pipelines; their passes are dumped themselves.
  bool dumps(Pass *pass) const {
    if (pass->getName() == "Pipeline Collection Adaptor" ||
        pass->getArgument().empty())
      return false;
    return options.passes.empty() ||
           options.passes.count(pass->getArgument().str());
  }

  IRDumpOptions options;
  unsigned &count; // 0 is the imported module
  /// Each pass's number: a pass run on each kernel in turn keeps one.
  llvm::DenseMap<Pass *, unsigned> numbers;
  std::map<std::pair<Pass *, Operation *>, OperationFingerPrint> before;
};

} // namespace

std::unique_ptr<PassInstrumentation>
kiln::createIRDumpInstrumentation(const IRDumpOptions &options,
                                  unsigned &counter) {
  return std::make_unique<IRDumpInstrumentation>(options, counter);
}
