//===- ChipList.h - "vendor:chip,chip" target strings -----------*- C++ -*-===//
#ifndef KILN_TARGET_CHIPLIST_H
#define KILN_TARGET_CHIPLIST_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln {

/// The chips of a GPU target string: `vendor` alone means `defaultChip`,
/// `vendor:a,b` the listed chips (each once, in order). On failure `error`
/// names the chip that is not in `supported` and lists those that are;
/// `vendorName` ("CUDA") words the message.
mlir::FailureOr<std::vector<std::string>>
parseChipList(llvm::StringRef target, llvm::StringRef vendor,
              llvm::StringRef vendorName,
              llvm::ArrayRef<llvm::StringLiteral> supported,
              llvm::StringRef defaultChip, std::string &error);

} // namespace kiln

#endif
