//===- PackedWeights.cpp - 4-bit weights read packed, or unpacked --------===//
//
// The importer gives a matmul by 4-bit weights (com.microsoft MatMulNBits,
// or a MatMul of a DequantizeLinear of 4-bit weights) its B as a chain of
// kiln ops on constants that unpacks them: bytes of
// two 4-bit values, shifted, masked, converted to float32, scaled and
// offset per block, as [blocks, 2, block/2, N], reshaped to [K, N]. The
// chain is not computed at import: it would store eight times the bytes.
//
// On the CPU this pass makes the matmul an einsum over that layout (A's K
// read as [blocks, 2, block/2]), so the chain feeds the contraction
// directly and kiln-form-dispatch-regions puts it in the contraction's
// kernel: the kernel loads the bytes and unpacks them in registers
// (kiln-contract-with-vector-registers). With `fold` (the GPU targets,
// whose contraction kernels read float operands) it computes the chain at
// compile time instead: a float32 [K, N] constant, as any weight.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_PACKEDWEIGHTS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A cast of 8-bit integers to a float type.
bool unpacksBytes(Operation *op) {
  auto cast = dyn_cast<CastOp>(op);
  return cast && getElementTypeOrSelf(cast.getInput().getType()).isInteger(8) &&
         isa<FloatType>(getElementTypeOrSelf(cast.getType()));
}

/// The elementwise ops that compute `value` from constants alone, in
/// program order, when there are such ops and one of them converts bytes
/// to floats; empty otherwise.
SmallVector<Operation *> unpackingChain(Value value) {
  SmallVector<Operation *> chain;
  SmallVector<Value> pending = {value};
  while (!pending.empty()) {
    Operation *op = pending.pop_back_val().getDefiningOp();
    if (op && isa<ConstantOp>(op))
      continue;
    if (!op || !kiln::isElementwise(op) || op->getNumResults() != 1)
      return {};
    if (llvm::is_contained(chain, op))
      continue;
    chain.push_back(op);
    llvm::append_range(pending, op->getOperands());
  }
  if (llvm::none_of(chain, unpacksBytes))
    return {};
  llvm::sort(chain,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return chain;
}

struct PackedWeightsPass
    : public kiln::impl::PackedWeightsBase<PackedWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp op) { matmuls.push_back(op); });
    for (MatMulOp matmul : matmuls) {
      auto reshape = matmul.getRhs().getDefiningOp<ReshapeOp>();
      if (!reshape || !reshape->hasOneUse())
        continue;
      auto unpacked = dyn_cast<RankedTensorType>(reshape.getInput().getType());
      if (!unpacked || unpacked.getRank() != 4 || unpacked.getDimSize(1) != 2)
        continue;
      SmallVector<Operation *> chain = unpackingChain(reshape.getInput());
      if (chain.empty())
        continue;
      if (fold)
        foldChain(chain, reshape);
      else
        contractPacked(matmul, reshape);
    }
  }

  /// Computes the chain and the reshape: a float32 constant B.
  void foldChain(ArrayRef<Operation *> chain, ReshapeOp reshape) {
    FoldLimitScope unlimited(&getContext(),
                             std::numeric_limits<int64_t>::max());
    SmallVector<Operation *> ops(chain);
    ops.push_back(reshape);
    for (Operation *op : ops) {
      SmallVector<Attribute> operands;
      for (Value operand : op->getOperands()) {
        Attribute value;
        if (!matchPattern(operand, m_Constant(&value)))
          return;
        operands.push_back(value);
      }
      SmallVector<OpFoldResult> results;
      if (failed(op->fold(operands, results)) || results.size() != 1)
        return;
      auto value =
          dyn_cast_or_null<ElementsAttr>(dyn_cast<Attribute>(results.front()));
      if (!value)
        return;
      OpBuilder b(op);
      op->getResult(0).replaceAllUsesWith(
          ConstantOp::create(b, op->getLoc(), value));
    }
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty())
        op->erase();
  }

  /// A [..., K] x B as an einsum of A as [..., blocks, 2, block/2] by the
  /// chain's [blocks, 2, block/2, N].
  void contractPacked(MatMulOp matmul, ReshapeOp reshape) {
    Value a = matmul.getLhs();
    auto aType = cast<RankedTensorType>(a.getType());
    auto unpacked = cast<RankedTensorType>(reshape.getInput().getType());
    // A's leading dims keep their own letters (not b, j, r or n).
    static constexpr llvm::StringLiteral kLeading = "acdefghiklmopqstuvwxyz";
    int64_t leading = aType.getRank() - 1;
    if (leading > int64_t(kLeading.size()))
      return;
    SmallVector<int64_t> blocked(aType.getShape().drop_back());
    llvm::append_range(blocked, unpacked.getShape().drop_back());
    OpBuilder b(matmul);
    Location loc = matmul.getLoc();
    Value lhs = ReshapeOp::create(
        b, loc, RankedTensorType::get(blocked, aType.getElementType()), a);
    std::string lead = kLeading.take_front(leading).str();
    Value product = EinsumOp::create(
        b, loc, matmul.getType(), ValueRange{lhs, reshape.getInput()},
        b.getStringAttr(lead + "bjr,bjrn->" + lead + "n"));
    matmul.replaceAllUsesWith(product);
    matmul.erase();
    reshape.erase();
  }
};

} // namespace
