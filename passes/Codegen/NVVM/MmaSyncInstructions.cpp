//===- MmaSyncInstructions.cpp - NVIDIA's mma.sync on a warp -------------===//
//
// Two mma.sync m16n8k16 (columns 0-7 and 8-15) per 16x16 subtile and step
// of 16 along K, by a warp of 32 lanes (nvgpu.mma.sync for float16,
// nvvm.mma.sync for bfloat16; m16n8k8 TF32 for float32 operands). The
// fragments are the PTX ISA's; from stage buffers, ldmatrix loads them.
// Accumulators: two vector<2x2xf32> per subtile, element [h][i][j] at
// (g + 8i, 8h + 2t + j) with g = lane / 4, t = lane % 4.
//
//===----------------------------------------------------------------------===//
#include "../GPU/MatrixInstructions.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kiln;

namespace {

class MmaSyncInstructions : public WarpMatrixInstructions {
public:
  int64_t lanes() const override { return 32; }
  bool takesTf32() const override { return true; }
  bool sharesWarpgroupLayout() const override { return true; }
  int64_t stepK(Type operandType) const override {
    return operandType.isF32() ? 8 : kSubtile;
  }
  std::string name(Type operandType) const override {
    return operandType.isF32() ? "mma.sync m16n8k8 tf32" : "mma.sync m16n8k16";
  }

  std::pair<Value, Value> laneOrigin(OpBuilder &b, Location loc,
                                     Value lane) const override {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value row = arith::DivUIOp::create(b, loc, lane, c(4));
    Value col = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, c(4)), c(2));
    return {row, col};
  }

  SmallVector<std::pair<int64_t, int64_t>> elementOffsets() const override {
    SmallVector<std::pair<int64_t, int64_t>> offsets;
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          offsets.push_back({8 * i, 8 * h + j});
    return offsets;
  }

  /// A vector<2x2xf32>: the accumulator of one mma.sync m16n8.
  Value packAccumulator(OpBuilder &b, Location loc,
                        ArrayRef<Value> four) const override {
    Type f32 = b.getF32Type();
    auto accType = VectorType::get({2, 2}, f32);
    Value acc = arith::ConstantOp::create(b, loc, b.getZeroAttr(accType));
    for (int64_t i = 0; i < 2; ++i)
      acc = vector::InsertOp::create(
          b, loc,
          vector::FromElementsOp::create(b, loc, VectorType::get({2}, f32),
                                         four.slice(2 * i, 2)),
          acc, i);
    return acc;
  }

  Value accumulatorElement(OpBuilder &b, Location loc, Value acc,
                           int64_t i) const override {
    return vector::ExtractOp::create(b, loc, acc,
                                     ArrayRef<int64_t>{i / 2, i % 2});
  }

  SmallVector<Value> emitStep(OpBuilder &b, Location loc, ElementLoader load,
                              Type operandType, Value lane,
                              ArrayRef<Value> rowBases,
                              ArrayRef<Value> colBases, Value k0,
                              ValueRange accs,
                              const FragmentLoader &fragments) const override {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value x, int64_t v) { return addIndex(b, loc, x, v); };
    SmallVector<Value> aFragments;
    SmallVector<SmallVector<Value, 2>> bFragments;
    SmallVector<Value> next;
    // PTX ISA fragments, g = lane / 4, t = lane % 4, j < pairs:
    //   m16n8k16 (pairs = 2, stride 8): A [r][j] at (g + 8 (r % 2),
    //     k0 + 2t + 8 (r / 2) + j); B [r][j] (columns 8h..8h+7) at
    //     (k0 + 2t + 8r + j, 8h + g).
    //   m16n8k8 TF32 (pairs = 1, stride 4): A [r] at (g + 8 (r % 2),
    //     k0 + t + 4 (r / 2)); B [r] at (k0 + t + 4r, 8h + g); operands
    //     are float32 registers the tensor cores read as TF32.
    // ldmatrix loads them so; elements loaded one by one take K
    // permuted (below).
    bool isTf32 = operandType.isF32();
    int64_t pairs = isTf32 ? 1 : 2;
    if (fragments && !isTf32) {
      for (Value rowBase : rowBases)
        aFragments.push_back(fragments(0, rowBase, k0).front());
      for (Value colBase : colBases) {
        SmallVector<Value> halves = fragments(1, colBase, k0);
        bFragments.emplace_back(halves.begin(), halves.end());
      }
    } else {
      // Elements loaded one by one (from global memory, or a TF32 stage)
      // take K in another order within the step, the same for A and B
      // (the products' sum does not change): the fragment's second half
      // along K, which the ISA puts `stride` further, comes right after
      // the first, so that a lane's elements of a row are 2 * pairs
      // contiguous K (8 bytes: one load where NVPTX joins them, and a
      // warp's rows whole 32-byte sectors instead of half ones).
      Value g = arith::DivUIOp::create(b, loc, lane, c(4));
      Value kt = arith::AddIOp::create(
          b, loc, k0,
          arith::MulIOp::create(b, loc,
                                arith::RemUIOp::create(b, loc, lane, c(4)),
                                c(2 * pairs)));
      for (Value rowBase : rowBases) {
        Value row = arith::AddIOp::create(b, loc, rowBase, g);
        SmallVector<std::pair<Value, Value>> elements;
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t j = 0; j < pairs; ++j)
            elements.push_back(
                {add(row, 8 * (r % 2)), add(kt, pairs * (r / 2) + j)});
        aFragments.push_back(
            loadFragment(b, loc, load, 0, operandType, elements, {4, pairs}));
      }
      for (Value colBase : colBases) {
        Value col = arith::AddIOp::create(b, loc, colBase, g);
        bFragments.emplace_back();
        for (int64_t h = 0; h < 2; ++h) {
          SmallVector<std::pair<Value, Value>> elements;
          for (int64_t r = 0; r < 2; ++r)
            for (int64_t j = 0; j < pairs; ++j)
              elements.push_back({add(col, 8 * h), add(kt, pairs * r + j)});
          bFragments.back().push_back(
              loadFragment(b, loc, load, 1, operandType, elements, {2, pairs}));
        }
      }
    }
    for (auto [si, a] : llvm::enumerate(aFragments))
      for (auto [sj, pair] : llvm::enumerate(bFragments))
        for (auto [h, bFragment] : llvm::enumerate(pair)) {
          Value acc = accs[2 * (si * colBases.size() + sj) + h];
          next.push_back(
              isTf32 ? nvgpu::MmaSyncOp::create(b, loc, a, bFragment, acc,
                                                ArrayRef<int64_t>{16, 8, 8},
                                                /*tf32Enabled=*/true)
                     : mmaSync(b, loc, a, bFragment, acc));
        }
    return next;
  }

  bool loadsStageFragments(Type operandType) const override {
    return !operandType.isF32();
  }

  /// ldmatrix.x4 (one warp-wide load) over the stage buffers `sharedA`,
  /// `sharedB` ([k][tile index] where `kMajor`, else [tile index][k]). Lane l
  /// gives the address of row l % 8 of matrix l / 8; ldmatrix hands lane l the
  /// pair at row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of each matrix
  /// (with .trans: rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4), which is
  /// the mma.sync operand layout when the matrices are, in the operand's
  /// terms: A: rows 0-7 and 8-15 at k 0-7, then both at k 8-15 (a0a1,
  /// a2a3, a4a5, a6a7); B: columns 0-7 at k 0-7 and 8-15 (b0b1, b2b3 of the
  /// first half), then columns 8-15 likewise. A [tile][k] buffer's rows are
  /// the operand's rows (A) or columns (B): plain loads; a [k][tile] one's
  /// rows are k: .trans.
  /// `swizzled[i]`: operand i's stage buffers are swizzled
  /// (OutputBlock::stageSwizzles).
  FragmentLoader stageFragmentLoader(OpBuilder &b, Location loc, Value sharedA,
                                     Value sharedB, std::array<bool, 2> kMajor,
                                     std::array<bool, 2> swizzled, Value lane,
                                     Type operandType) const override {
    return [&b, loc, sharedA, sharedB, kMajor, swizzled, lane, operandType](
               unsigned input, Value base, Value k0) -> SmallVector<Value> {
      auto c = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      Value matrix = arith::DivUIOp::create(b, loc, lane, c(8));
      Value rowInMatrix = arith::RemUIOp::create(b, loc, lane, c(8));
      // Which of the two 8-row groups (A: rows, B: columns) and which 8
      // along k this lane's matrix is.
      Value low = arith::RemUIOp::create(b, loc, matrix, c(2));
      Value high = arith::DivUIOp::create(b, loc, matrix, c(2));
      Value tileGroup = input == 0 ? low : high;
      Value kGroup = input == 0 ? high : low;
      Value tileStart = arith::AddIOp::create(
          b, loc, base, arith::MulIOp::create(b, loc, tileGroup, c(8)));
      Value kStart = arith::AddIOp::create(
          b, loc, k0, arith::MulIOp::create(b, loc, kGroup, c(8)));
      bool transpose = kMajor[input];
      SmallVector<Value> address =
          transpose ? SmallVector<Value>{arith::AddIOp::create(b, loc, kStart,
                                                               rowInMatrix),
                                         tileStart}
                    : SmallVector<Value>{
                          arith::AddIOp::create(b, loc, tileStart, rowInMatrix),
                          kStart};
      Value shared = input == 0 ? sharedA : sharedB;
      if (swizzled[input])
        address[1] =
            OutputBlock::swizzledColumn(b, loc, shared, address[0], address[1]);
      auto fragmentType = VectorType::get({4, 2}, operandType);
      Value fragment = nvgpu::LdMatrixOp::create(
          b, loc, fragmentType, shared, address, transpose, /*numTiles=*/4);
      if (input == 0)
        return {fragment};
      // Registers 0-1 and 2-3, row by row (the NVVM lowering takes 1-D
      // extracts and inserts, not strided slices of 2-D vectors).
      auto halfType = VectorType::get({2, 2}, operandType);
      SmallVector<Value> halves;
      for (int64_t h = 0; h < 2; ++h) {
        Value half = arith::ConstantOp::create(b, loc, b.getZeroAttr(halfType));
        for (int64_t r = 0; r < 2; ++r)
          half = vector::InsertOp::create(
              b, loc,
              vector::ExtractOp::create(b, loc, fragment,
                                        ArrayRef<int64_t>{2 * h + r}),
              half, ArrayRef<int64_t>{r});
        halves.push_back(half);
      }
      return halves;
    };
  }

  /// One m16n8k16 mma.sync: A vector<4x2xT>, B vector<2x2xT>, C and the
  /// result vector<2x2xf32>. nvgpu.mma.sync covers float16; bfloat16 goes
  /// to nvvm.mma.sync directly, its pairs packed in 32-bit registers.
  static Value mmaSync(OpBuilder &b, Location loc, Value a, Value bFragment,
                       Value acc) {
    Type element = cast<VectorType>(a.getType()).getElementType();
    if (element.isF16())
      return nvgpu::MmaSyncOp::create(b, loc, a, bFragment, acc,
                                      ArrayRef<int64_t>{16, 8, 16});
    auto packed = [&](Value fragment, int64_t rows) {
      SmallVector<Value> registers;
      for (int64_t r = 0; r < rows; ++r) {
        Value pair =
            vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{r});
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), pair);
        registers.push_back(
            vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
      }
      return registers;
    };
    SmallVector<Value> c;
    for (int64_t i = 0; i < 4; ++i)
      c.push_back(vector::ExtractOp::create(b, loc, acc,
                                            ArrayRef<int64_t>{i / 2, i % 2}));
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, packed(a, 4), packed(bFragment, 2), c,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return vector::FromElementsOp::create(b, loc, VectorType::get({2, 2}, f32),
                                          elements);
  }

  bool exchangesLanePairs() const override { return true; }

  /// Where this lane's elements are after exchangeAccumulators, per
  /// subtile: element [i][q] at (g + 8i, base + q) with g = lane / 4,
  /// t = lane % 4 and base 0, 8, 4, 12 for t = 0..3 (even t: its own
  /// columns 2t, 2t+1 of the first 8-column half and its odd partner's;
  /// odd t: its even partner's columns of the second half and its own).
  SmallVector<OutputBlock::Position>
  exchangedPositions(OpBuilder &b, Location loc, Value lane, Value warpRow,
                     Value warpCol, int64_t subtileRows,
                     int64_t subtileCols) const override {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value row = arith::AddIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lane, c(4)), warpRow);
    Value t = arith::RemUIOp::create(b, loc, lane, c(4));
    Value base = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, t, c(2)),
                              c(8)),
        arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, t, c(2)),
                              c(4)));
    Value col = arith::AddIOp::create(b, loc, base, warpCol);
    SmallVector<OutputBlock::Position> positions;
    for (int64_t si = 0; si < subtileRows; ++si)
      for (int64_t sj = 0; sj < subtileCols; ++sj)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t q = 0; q < 4; ++q)
            positions.push_back(
                {arith::AddIOp::create(b, loc, row, c(kSubtile * si + 8 * i)),
                 arith::AddIOp::create(b, loc, col, c(kSubtile * sj + q))});
    return positions;
  }

  /// The accumulator elements (elementOffsets' order) rearranged into
  /// exchangedPositions' order: per subtile row, an even lane sends its
  /// pair of the second 8-column half to its odd partner (lane ^ 1) and
  /// receives the partner's pair of the first half; the odd lane the other
  /// way round. One xor shuffle per element pair.
  SmallVector<Value>
  exchangeAccumulators(OpBuilder &b, Location loc, Value lane,
                       ArrayRef<Value> elements) const override {
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(b, loc, lane,
                               arith::ConstantIndexOp::create(b, loc, 2)),
        arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> exchanged(elements.size());
    for (int64_t s = 0; s < int64_t(elements.size()) / 8; ++s)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          Value first = elements[8 * s + 2 * i + j];
          Value second = elements[8 * s + 4 + 2 * i + j];
          Value sent = arith::SelectOp::create(b, loc, odd, first, second);
          Value received =
              gpu::ShuffleOp::create(b, loc, sent, 1, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
          exchanged[8 * s + 4 * i + j] =
              arith::SelectOp::create(b, loc, odd, received, first);
          exchanged[8 * s + 4 * i + 2 + j] =
              arith::SelectOp::create(b, loc, odd, second, received);
        }
    return exchanged;
  }
};

} // namespace

std::unique_ptr<WarpMatrixInstructions> kiln::createMmaSyncInstructions() {
  return std::make_unique<MmaSyncInstructions>();
}
