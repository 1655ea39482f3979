//===- OpRegistry.h - which ONNX ops the importer takes, and how -*- C++
//-*-===//
//
// The importer's op table. Each op family's file registers its own rows at
// its bottom (register*Ops below); nothing else lists an op. `kiln-compile
// --list-ops` prints the table as docs/ops.md.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_OPREGISTRY_H
#define KILN_LIB_IMPORT_OPREGISTRY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln::onnx_import {

/// The newest opset of the default domain the importer knows. Opsets 22 and
/// 23 changed no op Kiln takes but in the types they allow (bfloat16 at 22,
/// float4e2m1 at 23), which the dtype checks of each op handle.
constexpr int kMaxOpset = 23;

class NodeContext;
using ImportFn = mlir::LogicalResult (*)(NodeContext &);

/// How one ONNX op type is imported for the opsets minOpset..maxOpset. An
/// op whose semantics change at a version may have a row per version range,
/// each with its own function.
struct OpHandler {
  std::string domain; ///< "" for the default domain (ai.onnx)
  std::string opType;
  int minOpset;
  int maxOpset;
  std::string notes; ///< what of the op is supported, for docs/ops.md
  ImportFn import;
};

class OpRegistry {
public:
  /// Adds a row of the default domain.
  void add(llvm::StringRef opType, int minOpset, int maxOpset,
           llvm::StringRef notes, ImportFn import);
  /// Adds a row of another domain (ai.onnx.preview.training, ...).
  void addInDomain(llvm::StringRef domain, llvm::StringRef opType, int minOpset,
                   int maxOpset, llvm::StringRef notes, ImportFn import);
  /// The row of `opType` in `domain` whose range holds `opset`; null when
  /// none does.
  const OpHandler *find(llvm::StringRef domain, llvm::StringRef opType,
                        int64_t opset) const;
  /// Whether any row imports `opType` in `domain`, and the opsets of all its
  /// rows together.
  bool has(llvm::StringRef domain, llvm::StringRef opType, int &minOpset,
           int &maxOpset) const;
  /// Whether any row imports an op of `domain`.
  bool hasDomain(llvm::StringRef domain) const;
  const std::vector<OpHandler> &all() const { return handlers; }

private:
  std::vector<OpHandler> handlers;
};

/// The table, registered once from every family below.
const OpRegistry &opRegistry();

// One per op family, each defined at the bottom of its file.
void registerElementwiseOps(OpRegistry &registry); // OnnxOpHandlers.cpp
void registerShapeOps(OpRegistry &registry);       // OnnxShapeOpHandlers.cpp
void registerNormOps(OpRegistry &registry);        // OnnxNormOpHandlers.cpp
void registerRecurrentOps(OpRegistry &registry); // OnnxRecurrentOpHandlers.cpp
void registerDecomposedOps(
    OpRegistry &registry); // OnnxDecomposedOpHandlers.cpp
void registerConvTransposeOps(
    OpRegistry &registry);                    // OnnxConvTransposeHandler.cpp
void registerResizeOps(OpRegistry &registry); // OnnxResizeHandler.cpp
void registerGridSampleOps(OpRegistry &registry); // OnnxGridSampleHandler.cpp
void registerSpectralOps(OpRegistry &registry);   // OnnxSpectralOpHandlers.cpp
void registerUniqueOps(OpRegistry &registry);     // OnnxUniqueHandler.cpp
void registerRoiAlignOps(OpRegistry &registry);   // OnnxRoiAlignHandler.cpp
void registerTfIdfVectorizerOps(
    OpRegistry &registry); // OnnxTfIdfVectorizerHandler.cpp
void registerTrainingOps(OpRegistry &registry);  // OnnxTrainingOpHandlers.cpp
void registerClassicMLOps(OpRegistry &registry); // OnnxClassicMLOpHandlers.cpp
void registerQuantizeOps(OpRegistry &registry);  // OnnxQuantizeOpHandlers.cpp
void registerSelectedPositionsOps(
    OpRegistry &registry); // OnnxSelectedPositionsHandlers.cpp

} // namespace kiln::onnx_import

#endif
