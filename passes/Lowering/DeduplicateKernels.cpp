//===- DeduplicateKernels.cpp - one kernel for identical dispatches -------===//
//
// A model's repeated layers (BERT-base's 12 encoder layers, ResNet-50's
// bottleneck blocks) outline into kernels whose bodies are the same op for
// op: kernels take every buffer as an argument, so two dispatches of the
// same shapes differ only in what they bind. Code generation (LLVM, ptxas)
// is most of the compile time and grows with the number of kernels, so each
// group of identical kernels is compiled once: every dispatch of the group
// names its first kernel, and the others are erased.
//
// Identical means: the same function type, the same attributes but for
// `kiln.nodes` (which ONNX nodes a dispatch computes), and bodies that
// OperationEquivalence finds equivalent ignoring locations. The nodes move
// to the dispatches (`kiln.nodes` on kiln.dispatch), so that the artifact
// still names each launch's own nodes (profiles, errors, kiln-bisect).
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_DEDUPLICATEKERNELS
#include "kiln/Passes/LoweringPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr StringLiteral kNodesAttr = kiln::attrs::kNodes;

/// The kernel's attributes that must match for two kernels to be one: all
/// but its symbol name and its ONNX nodes.
DictionaryAttr comparedAttributes(func::FuncOp kernel) {
  NamedAttrList attrs(kernel->getDiscardableAttrDictionary());
  attrs.erase(kNodesAttr);
  return attrs.getDictionary(kernel->getContext());
}

/// A hash that equal kernels share: the function type, the compared
/// attributes, and every op of the body (name, attributes, types) in order.
llvm::hash_code kernelHash(func::FuncOp kernel) {
  llvm::hash_code hash =
      llvm::hash_combine(kernel.getFunctionType(), comparedAttributes(kernel));
  kernel.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool areIdentical(func::FuncOp a, func::FuncOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         a.getArgAttrsAttr() == b.getArgAttrsAttr() &&
         a.getResAttrsAttr() == b.getResAttrsAttr() &&
         comparedAttributes(a) == comparedAttributes(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct DeduplicateKernelsPass
    : public kiln::impl::DeduplicateKernelsBase<DeduplicateKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp kernels;
    for (auto nested : module.getOps<ModuleOp>())
      if (nested.getSymName() == "kernels")
        kernels = nested;
    if (!kernels)
      return;

    // Each kernel's first identical kernel (itself when it is the first).
    DenseMap<StringAttr, func::FuncOp> canonical;
    DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> byHash;
    SmallVector<func::FuncOp> duplicates;
    for (auto kernel : kernels.getOps<func::FuncOp>()) {
      if (!kernel->hasAttr(kiln::attrs::kKernel) || kernel.isExternal())
        continue;
      SmallVector<func::FuncOp, 1> &candidates = byHash[kernelHash(kernel)];
      auto *same = llvm::find_if(candidates, [&](func::FuncOp first) {
        return areIdentical(first, kernel);
      });
      if (same == candidates.end()) {
        candidates.push_back(kernel);
        canonical[kernel.getSymNameAttr()] = kernel;
      } else {
        canonical[kernel.getSymNameAttr()] = *same;
        duplicates.push_back(kernel);
      }
    }

    // Every dispatch keeps its kernel's nodes and names the group's kernel.
    module.walk([&](DispatchOp dispatch) {
      StringAttr name = dispatch.getKernel().getLeafReference();
      auto kernel = kernels.lookupSymbol<func::FuncOp>(name);
      auto first = canonical.lookup(name);
      if (!kernel || !first)
        return;
      if (!dispatch->hasAttr(kNodesAttr))
        if (Attribute nodes = kernel->getAttr(kNodesAttr))
          dispatch->setAttr(kNodesAttr, nodes);
      if (first != kernel)
        dispatch.setKernelAttr(SymbolRefAttr::get(
            dispatch.getKernel().getRootReference(),
            {FlatSymbolRefAttr::get(first.getSymNameAttr())}));
    });
    for (func::FuncOp duplicate : duplicates)
      duplicate.erase();
  }
};

} // namespace
