//===- OnnxValueNames.cpp - which ONNX value an op computes ---------------===//
#include "kiln/Dialect/OnnxValueNames.h"
#include "kiln/Dialect/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

static constexpr llvm::StringLiteral kNodeKey = "kiln.onnx_node";
static constexpr llvm::StringLiteral kValuesKey = kiln::attrs::kOnnxValues;

/// The node index and value names of a location made by withOnnxValues.
static std::optional<std::pair<int64_t, ArrayAttr>> valueTag(FusedLoc loc) {
  auto dict = dyn_cast_or_null<DictionaryAttr>(loc.getMetadata());
  if (!dict)
    return std::nullopt;
  auto node = dict.getAs<IntegerAttr>(kNodeKey);
  auto values = dict.getAs<ArrayAttr>(kValuesKey);
  if (!node || !values)
    return std::nullopt;
  return std::make_pair(node.getInt(), values);
}

Location kiln::withOnnxValues(Location nodeLoc, int64_t nodeIndex,
                              ArrayRef<std::string> names) {
  MLIRContext *context = nodeLoc.getContext();
  SmallVector<Attribute> values;
  for (const std::string &name : names)
    values.push_back(StringAttr::get(context, name));
  NamedAttribute entries[] = {
      NamedAttribute(
          StringAttr::get(context, kNodeKey),
          IntegerAttr::get(IntegerType::get(context, 64), nodeIndex)),
      NamedAttribute(StringAttr::get(context, kValuesKey),
                     ArrayAttr::get(context, values))};
  return FusedLoc::get({nodeLoc}, DictionaryAttr::get(context, entries),
                       context);
}

Location kiln::withoutOnnxValues(Location loc) {
  auto fused = dyn_cast<FusedLoc>(loc);
  if (!fused)
    return loc;
  SmallVector<Location> inner;
  for (Location l : fused.getLocations())
    inner.push_back(withoutOnnxValues(l));
  Attribute metadata = valueTag(fused) ? Attribute() : fused.getMetadata();
  return FusedLoc::get(inner, metadata, loc.getContext());
}

std::string kiln::onnxValueName(Value result) {
  auto opResult = dyn_cast<OpResult>(result);
  if (!opResult)
    return "";
  Operation *op = opResult.getOwner();
  unsigned numResults = op->getNumResults();
  int64_t latest = -1;
  std::string name;
  bool ambiguous = false;
  op->getLoc()->walk([&](Location loc) {
    auto fused = dyn_cast<FusedLoc>(loc);
    auto tag = fused ? valueTag(fused) : std::nullopt;
    if (!tag || tag->first < latest)
      return WalkResult::advance();
    ArrayAttr values = tag->second;
    std::string candidate;
    if (values.size() == numResults)
      candidate = cast<StringAttr>(values[opResult.getResultNumber()]).str();
    else if (values.size() == 1 && numResults == 1)
      candidate = cast<StringAttr>(values[0]).str();
    // Two different values of the same node: say nothing rather than guess.
    ambiguous = tag->first == latest && (ambiguous || candidate != name);
    latest = tag->first;
    name = candidate;
    return WalkResult::advance();
  });
  return ambiguous ? "" : name;
}
