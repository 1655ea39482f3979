//===- OpRegistry.cpp - which ONNX ops the importer takes, and how --------===//
#include "OpRegistry.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace kiln::onnx_import;

void OpRegistry::add(llvm::StringRef opType, int minOpset, int maxOpset,
                     llvm::StringRef notes, ImportFn import) {
  addInDomain("", opType, minOpset, maxOpset, notes, import);
}

void OpRegistry::addInDomain(llvm::StringRef domain, llvm::StringRef opType,
                             int minOpset, int maxOpset, llvm::StringRef notes,
                             ImportFn import) {
  handlers.push_back(OpHandler{domain.str(), opType.str(), minOpset, maxOpset,
                               notes.str(), import});
}

const OpHandler *OpRegistry::find(llvm::StringRef domain,
                                  llvm::StringRef opType, int64_t opset) const {
  for (const OpHandler &h : handlers)
    if (h.domain == domain && h.opType == opType && opset >= h.minOpset &&
        opset <= h.maxOpset)
      return &h;
  return nullptr;
}

bool OpRegistry::has(llvm::StringRef domain, llvm::StringRef opType,
                     int &minOpset, int &maxOpset) const {
  bool found = false;
  for (const OpHandler &h : handlers) {
    if (h.domain != domain || h.opType != opType)
      continue;
    minOpset = found ? std::min(minOpset, h.minOpset) : h.minOpset;
    maxOpset = found ? std::max(maxOpset, h.maxOpset) : h.maxOpset;
    found = true;
  }
  return found;
}

const OpRegistry &kiln::onnx_import::opRegistry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerShapeOps(r);
    registerNormOps(r);
    registerRecurrentOps(r);
    registerDecomposedOps(r);
    registerConvTransposeOps(r);
    registerResizeOps(r);
    registerGridSampleOps(r);
    registerSpectralOps(r);
    registerUniqueOps(r);
    registerRoiAlignOps(r);
    registerTfIdfVectorizerOps(r);
    registerTrainingOps(r);
    registerClassicMLOps(r);
    registerQuantizeOps(r);
    registerSelectedPositionsOps(r);
    return r;
  }();
  return registry;
}

bool OpRegistry::hasDomain(llvm::StringRef domain) const {
  return llvm::any_of(handlers,
                      [&](const OpHandler &h) { return h.domain == domain; });
}
