//===- KernelSignature.cpp - what a kernel was compiled to take -----------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

LogicalResult kiln::addKernelSignature(Operation *at, StringRef name,
                                       ArrayRef<int64_t> header,
                                       ArrayRef<MemRefType> buffers,
                                       unsigned addressSpace) {
  SmallVector<int64_t> words(header);
  for (MemRefType type : buffers) {
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return at->emitError("kernel binding without a static size: ") << type;
    words.push_back(type.getNumElements() *
                    llvm::divideCeil(type.getElementTypeBitWidth(), 8));
  }
  OpBuilder b(at);
  auto arrayType = LLVM::LLVMArrayType::get(b.getI64Type(), words.size());
  LLVM::GlobalOp::create(
      b, at->getLoc(), arrayType, /*isConstant=*/true, LLVM::Linkage::External,
      name, b.getI64TensorAttr(words), /*alignment=*/8, addressSpace);
  return success();
}
