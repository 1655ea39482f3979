//===- ChipList.cpp - "vendor:chip,chip" target strings -------------------===//
#include "kiln/Target/ChipList.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace kiln;

FailureOr<std::vector<std::string>>
kiln::parseChipList(StringRef target, StringRef vendor, StringRef vendorName,
                    ArrayRef<llvm::StringLiteral> supported,
                    StringRef defaultChip, std::string &error) {
  std::vector<std::string> result;
  StringRef list =
      target.drop_front(std::min(target.size(), vendor.size() + 1));
  if (list.empty()) {
    result.push_back(defaultChip.str());
    return result;
  }
  SmallVector<StringRef> chips;
  list.split(chips, ',', -1, /*KeepEmpty=*/false);
  for (StringRef chip : chips) {
    if (!llvm::is_contained(supported, chip)) {
      error = "unsupported " + vendorName.str() + " chip '" + chip.str() +
              "' in --target=" + target.str() + " (supported: " +
              llvm::join(llvm::map_range(supported,
                                         [](StringRef c) { return c.str(); }),
                         ", ") +
              ")";
      return failure();
    }
    if (!llvm::is_contained(result, chip.str()))
      result.push_back(chip.str());
  }
  if (result.empty()) {
    error = "--target=" + target.str() + " names no chip";
    return failure();
  }
  return result;
}
