//===- KilnAttributes.cpp - the kiln. attributes and their verifier -------===//
//
// Every `kiln.` attribute a pass may put on an op is declared in
// KilnDialect.td (discardableAttrs) with its type; this verifier refuses
// the others, so that a tiling decision never travels under a name only
// its writer and readers know.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/KilnDialect.h"

using namespace mlir;
using namespace kiln;

namespace {

/// Whether `attribute` on `op` is what `helper` declares: nothing when the
/// names differ, else whether its type is the declared one.
template <typename Helper>
std::optional<bool> declaredAs(Helper helper, Operation *op,
                               NamedAttribute attribute) {
  if (helper.getName() != attribute.getName())
    return std::nullopt;
  return helper.isAttrPresent(op);
}

} // namespace

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  std::optional<bool> valid;
  auto check = [&](auto helper) {
    if (!valid)
      valid = declaredAs(helper, op, attribute);
  };
  check(getTargetAttrHelper());
  check(getKernelAttrHelper());
  check(getNodesAttrHelper());
  check(getOnnxValuesAttrHelper());
  check(getAbiAttrHelper());
  check(getFlopsAttrHelper());
  check(getWorkgroupsAttrHelper());
  check(getThreadsAttrHelper());
  check(getTileAttrHelper());
  check(getMatrixTileAttrHelper());
  check(getConfigAttrHelper());
  check(getRegisterTileAttrHelper());
  check(getContractionAttrHelper());
  check(getLanesAttrHelper());
  check(getCooperativeAttrHelper());
  check(getWorkgroupMemoryAttrHelper());
  check(getDynamicWorkgroupMemoryAttrHelper());
  check(getPrivateMemoryAttrHelper());
  check(getShapeGuardsAttrHelper());
  check(getBatchDimAttrHelper());
  if (!valid)
    return op->emitError() << "'" << attribute.getName().getValue()
                           << "' is not an attribute the kiln dialect "
                              "declares (dialects/Kiln/KilnDialect.td)";
  if (!*valid)
    return op->emitError() << "'" << attribute.getName().getValue()
                           << "' = " << attribute.getValue()
                           << " is not of the type KilnDialect.td declares";
  return success();
}

/// kiln.name, the ONNX graph input or output a value of @main is, on
/// arguments and results; kiln.check, a run-time check's error, on results;
/// kiln.batched (the dim that is the batch) on both.
static LogicalResult verifyValueName(Operation *op, NamedAttribute attribute,
                                     StringRef what, bool isResult) {
  StringAttr name = attribute.getName();
  if (name == attrs::kBatched) {
    auto dim = dyn_cast<IntegerAttr>(attribute.getValue());
    return success((dim && dim.getInt() >= 0) ||
                   (op->emitError() << "'" << name.getValue() << "' of " << what
                                    << " must be a dim (an integer)",
                    false));
  }
  if (name == attrs::kName || (isResult && name == attrs::kCheck))
    return success(isa<StringAttr>(attribute.getValue()) ||
                   (op->emitError() << "'" << name.getValue() << "' of " << what
                                    << " must be a string",
                    false));
  return op->emitError() << "'" << name.getValue() << "' on " << what
                         << " is not an attribute the kiln dialect declares "
                            "(only '"
                         << attrs::kName << "'"
                         << (isResult
                                 ? ", '" + attrs::kBatched.str() + "' and '" +
                                       attrs::kCheck.str() + "'"
                                 : " and '" + attrs::kBatched.str() + "'")
                         << ")";
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned,
                                                    NamedAttribute attribute) {
  return verifyValueName(op, attribute, "an argument", false);
}

LogicalResult
KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned,
                                         NamedAttribute attribute) {
  return verifyValueName(op, attribute, "a result", true);
}
