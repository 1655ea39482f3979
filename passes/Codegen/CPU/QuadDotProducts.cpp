//===- QuadDotProducts.cpp - 4-way uint8 x int8 dot products --------------===//
#include "QuadDotProducts.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace kiln;

std::optional<QuadInstructions> kiln::parseQuadInstructions(StringRef name) {
  return llvm::StringSwitch<std::optional<QuadInstructions>>(name)
      .Case("avx512-vnni", QuadInstructions::Avx512Vnni)
      .Case("avx-vnni", QuadInstructions::AvxVnni)
      .Case("avx2", QuadInstructions::Avx2)
      .Default(std::nullopt);
}

int64_t QuadDotProducts::parts() const {
  switch (isa) {
  case QuadInstructions::Avx512Vnni:
    return 1;
  case QuadInstructions::AvxVnni:
    return 2;
  case QuadInstructions::Avx2:
    // 16 sums as 32 int32 pair sums.
    return 4;
  }
  llvm_unreachable("unknown ISA");
}

SmallVector<Value> QuadDotProducts::zero(OpBuilder &b, Location loc) const {
  int64_t lanes = isa == QuadInstructions::Avx512Vnni ? kQuadLanes : 8;
  auto type = VectorType::get({lanes}, b.getI32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
  return SmallVector<Value>(parts(), zeros);
}

Value QuadDotProducts::operand(OpBuilder &b, Location loc, Value bytes,
                               bool isSigned) const {
  if (isa != QuadInstructions::Avx2)
    return bytes;
  auto type = VectorType::get({kQuadLanes * kQuadDepth}, b.getI16Type());
  if (isSigned)
    return arith::ExtSIOp::create(b, loc, type, bytes);
  return arith::ExtUIOp::create(b, loc, type, bytes);
}

Value QuadDotProducts::broadcast(OpBuilder &b, Location loc, Value quad,
                                 bool isSigned) const {
  // The quad as one integer of 4 lanes' width, broadcast and viewed as
  // the lanes again.
  Type laneType = b.getI8Type();
  if (isa == QuadInstructions::Avx2) {
    laneType = b.getI16Type();
    auto wide = VectorType::get({kQuadDepth}, laneType);
    quad = isSigned ? arith::ExtSIOp::create(b, loc, wide, quad).getResult()
                    : arith::ExtUIOp::create(b, loc, wide, quad).getResult();
  }
  Type word = b.getIntegerType(kQuadDepth * laneType.getIntOrFloatBitWidth());
  Value scalar = vector::ExtractOp::create(
      b, loc,
      vector::BitCastOp::create(b, loc, VectorType::get({1}, word), quad),
      ArrayRef<int64_t>{0});
  Value words = vector::BroadcastOp::create(
      b, loc, VectorType::get({kQuadLanes}, word), scalar);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({kQuadLanes * kQuadDepth}, laneType), words);
}

Value QuadDotProducts::firstQuadsMask(OpBuilder &b, Location loc,
                                      Value count) const {
  if (isa != QuadInstructions::Avx512Vnni)
    return vector::CreateMaskOp::create(
        b, loc, VectorType::get({kQuadLanes}, b.getI1Type()),
        ValueRange{count});
  Value bytes = arith::MulIOp::create(
      b, loc, count, arith::ConstantIndexOp::create(b, loc, kQuadDepth));
  return vector::CreateMaskOp::create(
      b, loc, VectorType::get({kQuadLanes * kQuadDepth}, b.getI1Type()),
      ValueRange{bytes});
}

Value QuadDotProducts::maskedLoad(OpBuilder &b, Location loc, Value memref,
                                  ValueRange indices, Value mask) const {
  auto bytesType = VectorType::get({kQuadLanes * kQuadDepth}, b.getI8Type());
  if (isa == QuadInstructions::Avx512Vnni) {
    Value zeros = arith::ConstantOp::create(
        b, loc, bytesType,
        DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0)));
    return vector::MaskedLoadOp::create(b, loc, bytesType, memref, indices,
                                        mask, zeros);
  }
  // The bytes' address from the memref's pointer, offset and strides:
  // vector.maskedload would take a memref of int32.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value offset = metadata.getOffset();
  for (auto [i, index] : llvm::enumerate(indices))
    offset = arith::AddIOp::create(
        b, loc, offset,
        arith::MulIOp::create(b, loc, index, metadata.getStrides()[i]));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, offset));
  Value pointer = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  auto wordsType = VectorType::get({kQuadLanes}, b.getI32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, wordsType,
      DenseElementsAttr::get(wordsType, b.getI32IntegerAttr(0)));
  Value words = LLVM::MaskedLoadOp::create(b, loc, wordsType, pointer, mask,
                                           zeros, /*alignment=*/1);
  return vector::BitCastOp::create(b, loc, bytesType, words);
}

/// Elements [offset, offset + size) of the 1-D `vector`.
static Value slice(OpBuilder &b, Location loc, Value vector, int64_t offset,
                   int64_t size) {
  return vector::ExtractStridedSliceOp::create(b, loc, vector, {offset}, {size},
                                               {1});
}

void QuadDotProducts::accumulate(OpBuilder &b, Location loc,
                                 MutableArrayRef<Value> acc,
                                 Value unsignedOperand,
                                 Value signedOperand) const {
  auto call = [&](Type type, StringRef name, ValueRange args) {
    return LLVM::CallIntrinsicOp::create(b, loc, type, b.getStringAttr(name),
                                         args)
        .getResult(0);
  };
  switch (isa) {
  case QuadInstructions::Avx512Vnni:
    acc[0] = call(acc[0].getType(), "llvm.x86.avx512.vpdpbusd.512",
                  {acc[0], unsignedOperand, signedOperand});
    return;
  case QuadInstructions::AvxVnni:
    // The 256-bit intrinsic is AVX-VNNI's VEX instruction on a CPU
    // without AVX-512.
    for (int64_t h = 0; h < 2; ++h)
      acc[h] = call(acc[h].getType(), "llvm.x86.avx512.vpdpbusd.256",
                    {acc[h], slice(b, loc, unsignedOperand, 32 * h, 32),
                     slice(b, loc, signedOperand, 32 * h, 32)});
    return;
  case QuadInstructions::Avx2:
    for (int64_t c = 0; c < 4; ++c) {
      Value pairs = call(acc[c].getType(), "llvm.x86.avx2.pmadd.wd",
                         {slice(b, loc, unsignedOperand, 16 * c, 16),
                          slice(b, loc, signedOperand, 16 * c, 16)});
      acc[c] = arith::AddIOp::create(b, loc, acc[c], pairs);
    }
    return;
  }
}

Value QuadDotProducts::sums(OpBuilder &b, Location loc,
                            ArrayRef<Value> acc) const {
  // The parts side by side.
  SmallVector<Value> joined(acc);
  while (joined.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i < joined.size(); i += 2) {
      int64_t lanes = cast<VectorType>(joined[i].getType()).getNumElements();
      next.push_back(vector::ShuffleOp::create(
          b, loc, joined[i], joined[i + 1],
          llvm::to_vector(llvm::seq<int64_t>(0, 2 * lanes))));
    }
    joined = std::move(next);
  }
  if (isa != QuadInstructions::Avx2)
    return joined[0];
  // Lane 2o + i holds pair i of sum o.
  SmallVector<int64_t> even, odd;
  for (int64_t o = 0; o < kQuadLanes; ++o) {
    even.push_back(2 * o);
    odd.push_back(2 * o + 1);
  }
  Value all = joined[0];
  return arith::AddIOp::create(
      b, loc, vector::ShuffleOp::create(b, loc, all, all, even),
      vector::ShuffleOp::create(b, loc, all, all, odd));
}
