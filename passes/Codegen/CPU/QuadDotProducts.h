//===- QuadDotProducts.h - 4-way uint8 x int8 dot products -----*- C++ -*-===//
//
// The instructions kiln-contract-int8-quads and kiln-contract-int8-conv-
// quads compute their quads with: 16 int32 sums, each adding the 4
// products of a quad of uint8 by a quad of int8 values, 64 bytes of each
// operand per step. One x86 ISA each:
//
//   avx512-vnni  one vpdpbusd on a 512-bit register
//   avx-vnni     two (VEX) vpdpbusd on 256-bit halves
//   avx2         the bytes widened to 16 bits, four vpmaddwd adding pairs
//                of products into 8 int32 lanes each; a lane's two pair
//                sums are added once, after the reduction
//
// All three are exact: a uint8 x int8 product and the sum of two fit 16
// and 32 bits (vpmaddubsw, AVX2's byte instruction, would saturate a
// pair's sum at 16 bits, so it is not used).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CODEGEN_CPU_QUADDOTPRODUCTS_H
#define KILN_PASSES_CODEGEN_CPU_QUADDOTPRODUCTS_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace kiln {

enum class QuadInstructions { Avx512Vnni, AvxVnni, Avx2 };

/// The ISA an option names ("avx512-vnni", "avx-vnni", "avx2"), or none.
std::optional<QuadInstructions> parseQuadInstructions(llvm::StringRef name);

class QuadDotProducts {
public:
  explicit QuadDotProducts(QuadInstructions isa) : isa(isa) {}

  /// A zero accumulator of 16 int32 sums (one or more vectors).
  llvm::SmallVector<mlir::Value> zero(mlir::OpBuilder &b,
                                      mlir::Location loc) const;
  /// 64 loaded bytes (vector<64xi8>: 16 quads) as the instructions read
  /// them: uint8 when `isSigned` is false, else int8.
  mlir::Value operand(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bytes,
                      bool isSigned) const;
  /// The mask of the first `count` quads (an index below 16) of 64 bytes
  /// that `maskedLoad` takes: AVX-512 masks bytes; AVX2 masks only 32-bit
  /// lanes (a byte mask would be a scalar loop), so the quads are loaded
  /// there as int32 lanes.
  mlir::Value firstQuadsMask(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value count) const;
  /// The 64 bytes at `indices` of the i8 `memref` under such a mask, zeros
  /// past it.
  mlir::Value maskedLoad(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value memref, mlir::ValueRange indices,
                         mlir::Value mask) const;
  /// One quad (vector<4xi8>) in each of the 16 lanes, as `operand` makes
  /// them.
  mlir::Value broadcast(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value quad, bool isSigned) const;
  /// acc += the dot products of the quads of two operands.
  void accumulate(mlir::OpBuilder &b, mlir::Location loc,
                  llvm::MutableArrayRef<mlir::Value> acc,
                  mlir::Value unsignedOperand, mlir::Value signedOperand) const;
  /// The 16 int32 sums of an accumulator (vector<16xi32>).
  mlir::Value sums(mlir::OpBuilder &b, mlir::Location loc,
                   llvm::ArrayRef<mlir::Value> acc) const;

private:
  /// Vectors of one accumulator, and int32 lanes of each.
  int64_t parts() const;
  QuadInstructions isa;
};

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_CPU_QUADDOTPRODUCTS_H
