//===- WarpgroupInstructions.cpp - wgmma on a warpgroup (sm_90a) ---------===//
//
// A warpgroup's m64nNk16 wgmma.mma_async reads both operands from the
// cp.async stage buffers, laid out as the instruction's core matrices,
// through matrix descriptors; its accumulators are mma.sync's per 8
// columns (MmaSyncInstructions.cpp), so a block's positions, epilogue and
// stores stay a warp tile's.
//
//===----------------------------------------------------------------------===//
#include "../GPU/MatrixInstructions.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kiln;

namespace {

/// The matrix descriptor (PTX ISA, "Matrix Descriptor Format") of the
/// core matrices of the stage buffer `shared` from (`tileIndex`, `k`):
/// the start address's bits 4-17, the leading (K) and stride (M or N)
/// byte offsets over 16, no swizzle. The allocation's address (shared
/// memory is one window under 256 KiB, so adding 16-byte units to bits
/// 4-17 never carries out of them) is the loop-invariant part; a
/// stage's and a core matrix's offsets are added in 16-byte units.
Value matrixDescriptor(OpBuilder &b, Location loc, OutputBlock &block,
                       int64_t stageK, unsigned input, bool kMajor,
                       Value shared, Value tileIndex, Value k) {
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value allocation = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared));
  OutputBlock::CoreMatrixStrides strides =
      block.coreMatrixStrides(input, stageK, kMajor);
  int64_t fields =
      ((strides.leading >> 4) << 16) | ((strides.stride >> 4) << 32);
  Value base = arith::OrIOp::create(
      b, loc,
      arith::ShRUIOp::create(
          b, loc, arith::AndIOp::create(b, loc, allocation, i64(0x3FFFF)),
          i64(4)),
      i64(fields));
  // The view's offset (a stage of the set) and the core matrix's 16-byte
  // row, in 16-byte units.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, shared);
  int64_t perUnit = 16 / (block.loops.operandType.getIntOrFloatBitWidth() / 8);
  Value units = arith::AddIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, metadata.getOffset(), index(perUnit)),
      block.coreMatrixRow(b, loc, input, stageK, kMajor, tileIndex, k));
  return arith::AddIOp::create(
      b, loc, base,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), units));
}

} // namespace

SmallVector<Value> kiln::emitWarpgroupStage(
    OpBuilder &b, Location loc, OutputBlock &block, int64_t stageK,
    int64_t tileN, std::array<bool, 2> kMajor, Value sharedA, Value sharedB,
    Value warpgroupRow, ValueRange accs, int64_t inFlight) {
  Type f32 = b.getF32Type();
  int64_t registers = 4 * int64_t(accs.size());
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(registers, f32));
  Value d = LLVM::UndefOp::create(b, loc, structType);
  for (int64_t e = 0; e < registers; ++e)
    d = LLVM::InsertValueOp::create(
        b, loc, d,
        vector::ExtractOp::create(b, loc, accs[e / 4],
                                  ArrayRef<int64_t>{(e % 4) / 2, e % 2}),
        e);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  NVVM::WGMMATypes operand = block.loops.operandType.isF16()
                                 ? NVVM::WGMMATypes::f16
                                 : NVVM::WGMMATypes::bf16;
  // K-major operands are A "row" and B "col" (imm-trans 0); MN-major
  // ones the other way round (imm-trans 1).
  auto layout = [&](unsigned input) {
    bool kContiguous = !kMajor[input];
    return (input == 0) == kContiguous ? NVVM::MMALayout::row
                                       : NVVM::MMALayout::col;
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t kk = 0; kk < stageK; kk += kSubtile) {
    Value k = arith::ConstantIndexOp::create(b, loc, kk);
    Value descriptorA = matrixDescriptor(b, loc, block, stageK, 0, kMajor[0],
                                         sharedA, warpgroupRow, k);
    Value descriptorB =
        matrixDescriptor(b, loc, block, stageK, 1, kMajor[1], sharedB, zero, k);
    d = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, d, descriptorA, descriptorB,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, tileN, kSubtile),
        NVVM::WGMMATypesAttr::get(b.getContext(), operand),
        NVVM::WGMMATypesAttr::get(b.getContext(), operand),
        NVVM::WGMMATypesAttr::get(b.getContext(), NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(b.getContext(), NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(b.getContext(), NVVM::WGMMAScaleIn::one),
        NVVM::WGMMAScaleInAttr::get(b.getContext(), NVVM::WGMMAScaleIn::one),
        NVVM::MMALayoutAttr::get(b.getContext(), layout(0)),
        NVVM::MMALayoutAttr::get(b.getContext(), layout(1)),
        NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, inFlight);
  SmallVector<Value> next;
  for (int64_t e = 0; e < registers; e += 4) {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(LLVM::ExtractValueOp::create(b, loc, d, e + i));
    next.push_back(vector::FromElementsOp::create(
        b, loc, VectorType::get({2, 2}, f32), elements));
  }
  return next;
}
