//===- MfmaInstructions.cpp - AMD's v_mfma 16x16x16 on a wavefront --------===//
//
// One amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16{f16,bf16_1k}) per 16x16
// subtile and step of 16 along K, by a wavefront of 64 lanes. Fragments
// (AMD's matrix instruction tables): A [i] at (lane % 16,
// k0 + 4 (lane / 16) + i); B [i] at (k0 + 4 (lane / 16) + i, lane % 16);
// accumulator element [i] at (4 (lane / 16) + i, lane % 16).
//
//===----------------------------------------------------------------------===//
#include "../GPU/MatrixInstructions.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kiln;

namespace {

class MfmaInstructions : public WarpMatrixInstructions {
public:
  int64_t lanes() const override { return 64; }
  bool takesTf32() const override { return false; }
  bool sharesWarpgroupLayout() const override { return false; }
  int64_t stepK(Type) const override { return kSubtile; }
  std::string name(Type) const override { return "mfma 16x16x16"; }

  std::pair<Value, Value> laneOrigin(OpBuilder &b, Location loc,
                                     Value lane) const override {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value row = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(4));
    Value col = arith::RemUIOp::create(b, loc, lane, c(16));
    return {row, col};
  }

  SmallVector<std::pair<int64_t, int64_t>> elementOffsets() const override {
    return {{0, 0}, {1, 0}, {2, 0}, {3, 0}};
  }

  Value packAccumulator(OpBuilder &b, Location loc,
                        ArrayRef<Value> four) const override {
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({4}, b.getF32Type()), four);
  }

  Value accumulatorElement(OpBuilder &b, Location loc, Value acc,
                           int64_t i) const override {
    return vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{i});
  }

  SmallVector<Value>
  emitStep(OpBuilder &b, Location loc, ElementLoader load, Type operandType,
           Value lane, ArrayRef<Value> rowBases, ArrayRef<Value> colBases,
           Value k0, ValueRange accs, const FragmentLoader &) const override {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value column = arith::RemUIOp::create(b, loc, lane, c(16));
    Value kq = arith::AddIOp::create(
        b, loc, k0,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(4)));
    auto fragmentAt = [&](unsigned input, Value base) {
      Value index = arith::AddIOp::create(b, loc, base, column);
      SmallVector<std::pair<Value, Value>> elements;
      for (int64_t i = 0; i < 4; ++i)
        elements.push_back({index, addIndex(b, loc, kq, i)});
      return loadFragment(b, loc, load, input, operandType, elements, {4});
    };
    SmallVector<Value> aFragments, bFragments;
    for (Value rowBase : rowBases)
      aFragments.push_back(fragmentAt(0, rowBase));
    for (Value colBase : colBases)
      bFragments.push_back(fragmentAt(1, colBase));
    auto i32 = [&](int64_t v) { return b.getI32IntegerAttr(v); };
    SmallVector<Value> next;
    for (auto [si, a] : llvm::enumerate(aFragments))
      for (auto [sj, bFragment] : llvm::enumerate(bFragments))
        next.push_back(amdgpu::MFMAOp::create(
            b, loc, VectorType::get({4}, b.getF32Type()), i32(16), i32(16),
            i32(16), i32(1), a, bFragment, accs[si * bFragments.size() + sj]));
    return next;
  }
};

} // namespace

std::unique_ptr<WarpMatrixInstructions> kiln::createMfmaInstructions() {
  return std::make_unique<MfmaInstructions>();
}
