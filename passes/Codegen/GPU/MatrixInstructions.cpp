//===- MatrixInstructions.cpp - a warp's matrix instructions, by vendor ---===//
#include "MatrixInstructions.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kiln;

std::unique_ptr<WarpMatrixInstructions>
kiln::warpMatrixInstructions(StringRef arch) {
  if (arch == "nvidia")
    return createMmaSyncInstructions();
  if (arch == "amd")
    return createMfmaInstructions();
  return nullptr;
}

std::array<bool, 2>
kiln::stageKMajor(const WarpMatrixInstructions &instructions,
                  OutputBlock &block, bool warpgroups) {
  bool eitherOrder =
      warpgroups || instructions.loadsStageFragments(block.loops.operandType);
  return {eitherOrder && block.operandContiguousAlongTile(0),
          eitherOrder && block.operandContiguousAlongTile(1)};
}

Value kiln::loadFragment(OpBuilder &b, Location loc, ElementLoader load,
                         unsigned input, Type operandType,
                         ArrayRef<std::pair<Value, Value>> elements,
                         ArrayRef<int64_t> shape) {
  SmallVector<Value> values;
  for (auto [tileIndex, k] : elements)
    values.push_back(load(input, tileIndex, k));
  auto type = VectorType::get(shape, operandType);
  if (shape.size() == 1)
    return vector::FromElementsOp::create(b, loc, type, values);
  Value fragment = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  auto rowType = VectorType::get({shape[1]}, operandType);
  for (int64_t r = 0; r < shape[0]; ++r) {
    Value row = vector::FromElementsOp::create(
        b, loc, rowType, ArrayRef(values).slice(r * shape[1], shape[1]));
    fragment = vector::InsertOp::create(b, loc, row, fragment, r);
  }
  return fragment;
}

Value kiln::addIndex(OpBuilder &b, Location loc, Value x, int64_t v) {
  if (v == 0)
    return x;
  return arith::AddIOp::create(b, loc, x,
                               arith::ConstantIndexOp::create(b, loc, v));
}
