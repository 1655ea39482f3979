//===- WarpMatrix.cpp - mma.sync, ldmatrix and MFMA on emulated warps -----===//
//
// The warp-wide matrix instructions, written from the PTX ISA (mma.sync
// m16n8k16 and m16n8k8 TF32 fragment layouts, ldmatrix) and AMD's matrix
// instruction tables (v_mfma 16x16x16), independently of the code
// generator: each lane's operands go through the block's exchange slots,
// and every lane computes its part of the result from all of them.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "KernelRewrite.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace kiln::emulator;

namespace {

/// Which warp-wide instruction a kiln_emu_matrix call is.
enum MatrixKind : int64_t { kMmaF16 = 0, kMmaTf32 = 1, kMfma16 = 2 };

/// Computes this lane's D of one warp-wide matrix instruction from every
/// lane's A, B, C slots. Layouts (g = lane / 4, t = lane % 4):
///   mma.sync m16n8k16 (PTX ISA): a0,a1 A[g][2t+j]; a2,a3 A[g+8][2t+j];
///     a4,a5 A[g][2t+8+j]; a6,a7 A[g+8][2t+8+j]; b0,b1 B[2t+j][g];
///     b2,b3 B[2t+8+j][g]; c/d 0,1 at [g][2t+j], 2,3 at [g+8][2t+j].
///   mma.sync m16n8k8 TF32: a0 A[g][t], a1 A[g+8][t], a2 A[g][t+4],
///     a3 A[g+8][t+4]; b0 B[t][g], b1 B[t+4][g]; C/D as above.
///   v_mfma_f32_16x16x16 (wave 64, q = lane / 16, c = lane % 16):
///     a_i A[c][4q+i]; b_i B[4q+i][c]; c/d_i at [4q+i][c].
void computeMatrix(ThreadBlock &block, int lane0, int lane, MatrixKind kind) {
  const int rows = 16, cols = kind == kMfma16 ? 16 : 8;
  const int depth = kind == kMmaTf32 ? 8 : 16;
  float a[16][16] = {}, b[16][16] = {}, c[16][16] = {};
  int lanes = kind == kMfma16 ? 64 : 32;
  for (int l = 0; l < lanes; ++l) {
    const float *s = &block.slots[size_t(lane0 + l) * kSlot];
    int g = l / 4, t = l % 4, q = l / 16, col = l % 16;
    switch (kind) {
    case kMmaF16:
      for (int j = 0; j < 2; ++j) {
        a[g][2 * t + j] = s[j];
        a[g + 8][2 * t + j] = s[2 + j];
        a[g][2 * t + 8 + j] = s[4 + j];
        a[g + 8][2 * t + 8 + j] = s[6 + j];
        b[2 * t + j][g] = s[8 + j];
        b[2 * t + 8 + j][g] = s[10 + j];
        c[g][2 * t + j] = s[12 + j];
        c[g + 8][2 * t + j] = s[14 + j];
      }
      break;
    case kMmaTf32:
      a[g][t] = s[0];
      a[g + 8][t] = s[1];
      a[g][t + 4] = s[2];
      a[g + 8][t + 4] = s[3];
      b[t][g] = s[8];
      b[t + 4][g] = s[9];
      for (int j = 0; j < 2; ++j) {
        c[g][2 * t + j] = s[12 + j];
        c[g + 8][2 * t + j] = s[14 + j];
      }
      break;
    case kMfma16:
      for (int i = 0; i < 4; ++i) {
        a[col][4 * q + i] = s[i];
        b[4 * q + i][col] = s[8 + i];
        c[4 * q + i][col] = s[12 + i];
      }
      break;
    }
  }
  auto d = [&](int r, int n) {
    double sum = c[r][n];
    for (int k = 0; k < depth; ++k)
      sum += double(a[r][k]) * double(b[k][n]);
    return float(sum);
  };
  (void)rows;
  (void)cols;
  float *out = &block.slots[size_t(lane0 + lane) * kSlot + 16];
  int g = lane / 4, t = lane % 4, q = lane / 16, col = lane % 16;
  if (kind == kMfma16) {
    for (int i = 0; i < 4; ++i)
      out[i] = d(4 * q + i, col);
    return;
  }
  out[0] = d(g, 2 * t);
  out[1] = d(g, 2 * t + 1);
  out[2] = d(g + 8, 2 * t);
  out[3] = d(g + 8, 2 * t + 1);
}

} // namespace

/// One warp-wide matrix instruction: `scratch` (a memref<20xf32>) holds
/// this lane's operands and receives its result.
extern "C" void kiln_emu_matrix(float *, float *scratch, int64_t offset,
                                int64_t, int64_t, int64_t kind) {
  ThreadBlock &block = *currentBlock;
  int warpSize = kind == kMfma16 ? 64 : 32;
  int64_t thread = scheduler.current();
  int warp = thread / warpSize, lane = thread % warpSize;
  float *slot = &block.slots[size_t(thread) * kSlot];
  std::copy(scratch + offset, scratch + offset + 16, slot);
  Barrier &warpBarrier = *block.warpBarriers[warp];
  warpBarrier.arriveAndWait();
  computeMatrix(block, warp * warpSize, lane, MatrixKind(kind));
  std::copy(slot + 16, slot + 20, scratch + offset + 16);
  // No lane overwrites its slots (next instruction) before all have read.
  warpBarrier.arriveAndWait();
}

/// nvgpu.ldmatrix x4: `scratch` (a memref<20xf32>) holds this lane's row,
/// the 8 16-bit elements at the address it gave, in [0, 8), and receives
/// its fragment in [8, 16). PTX ISA: lanes 8m..8m+7 give rows 0-7 of
/// matrix m; lane l receives, of each matrix m, the pair at row l / 4,
/// columns 2 (l % 4) and 2 (l % 4) + 1; with .trans (`transpose` 1), at
/// rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4.
extern "C" void kiln_emu_ldmatrix(float *, float *scratch, int64_t offset,
                                  int64_t, int64_t, int64_t transpose,
                                  int64_t address) {
  if (address % 16)
    noteMisaligned("an ldmatrix row", address, 16);
  ThreadBlock &block = *currentBlock;
  int64_t thread = scheduler.current();
  int warp = thread / 32, lane = thread % 32;
  float *slot = &block.slots[size_t(thread) * kSlot];
  std::copy(scratch + offset, scratch + offset + 8, slot);
  Barrier &warpBarrier = *block.warpBarriers[warp];
  warpBarrier.arriveAndWait();
  for (int m = 0; m < 4; ++m)
    for (int j = 0; j < 2; ++j) {
      int row = transpose ? 2 * (lane % 4) + j : lane / 4;
      int column = transpose ? lane / 4 : 2 * (lane % 4) + j;
      scratch[offset + 8 + 2 * m + j] =
          block.slots[size_t(warp * 32 + 8 * m + row) * kSlot + column];
    }
  warpBarrier.arriveAndWait();
}

namespace {

/// A warp-wide matrix op as a call of kiln_emu_matrix through a scratch
/// buffer: operands (vectors) widened to f32 at A [0, 8), B [8, 12), C
/// [12, 16); returns the `results` result elements read back from [16, 20).
SmallVector<Value> callMatrixOp(OpBuilder &b, Location loc, Value a, Value bv,
                                Value c, MatrixKind kind, int64_t results) {
  auto f32 = b.getF32Type();
  auto scratchType = MemRefType::get({kSlot}, f32);
  Value scratch = memref::AllocaOp::create(b, loc, scratchType);
  auto store = [&](Value vector, int64_t base) {
    auto type = cast<VectorType>(vector.getType());
    Value flat = vector::ShapeCastOp::create(
        b, loc, VectorType::get({type.getNumElements()}, type.getElementType()),
        vector);
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      Value element = vector::ExtractOp::create(b, loc, flat, i);
      if (!element.getType().isF32())
        element = arith::ExtFOp::create(b, loc, f32, element);
      memref::StoreOp::create(
          b, loc, element, scratch,
          ValueRange{arith::ConstantIndexOp::create(b, loc, base + i)});
    }
  };
  store(a, 0);
  store(bv, 8);
  store(c, 12);
  func::CallOp::create(
      b, loc, "kiln_emu_matrix", TypeRange{},
      ValueRange{scratch, arith::ConstantIntOp::create(b, loc, kind, 64)});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < results; ++i)
    elements.push_back(memref::LoadOp::create(
        b, loc, scratch,
        ValueRange{arith::ConstantIndexOp::create(b, loc, 16 + i)}));
  return elements;
}

/// Replaces a matrix op whose operands and result are vectors (nvgpu
/// mma.sync, amdgpu mfma) by callMatrixOp.
LogicalResult emulateMatrixOp(OpBuilder &b, Operation *op, Value a, Value bv,
                              Value c, MatrixKind kind) {
  Location loc = op->getLoc();
  auto resultType = cast<VectorType>(op->getResult(0).getType());
  SmallVector<Value> elements =
      callMatrixOp(b, loc, a, bv, c, kind, resultType.getNumElements());
  op->getResult(0).replaceAllUsesWith(
      vector::FromElementsOp::create(b, loc, resultType, elements));
  op->erase();
  return success();
}

/// nvvm.mma.sync m16n8k16 of bfloat16 (kiln-contract-with-matrix-cores
/// packs each pair of a fragment in an i32, as the instruction's registers
/// hold them; nvgpu.mma.sync does not take bfloat16): the pairs unpacked,
/// and the result struct rebuilt from the emulated elements (its
/// llvm.extractvalue users stay as they are).
LogicalResult emulateBFloat16Mma(OpBuilder &b, NVVM::MmaOp mma) {
  Location loc = mma.getLoc();
  NVVM::MMAShapeAttr shape = mma.getShape();
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
      mma.getMultiplicandAPtxType() != NVVM::MMATypes::bf16 ||
      mma.getMultiplicandBPtxType() != NVVM::MMATypes::bf16 ||
      mma.getOperandC().size() != 4)
    return mma.emitError("only nvvm.mma.sync m16n8k16 of bfloat16 is "
                         "emulated");
  auto pairs = [&](ValueRange words) -> Value {
    SmallVector<Value> elements;
    auto pairType = VectorType::get({2}, b.getBF16Type());
    for (Value word : words) {
      Value pair = vector::BitCastOp::create(
          b, loc, pairType,
          vector::FromElementsOp::create(
              b, loc, VectorType::get({1}, b.getI32Type()), word));
      for (int64_t j = 0; j < 2; ++j)
        elements.push_back(vector::ExtractOp::create(b, loc, pair, j));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({int64_t(elements.size())}, b.getBF16Type()),
        elements);
  };
  Value c = vector::FromElementsOp::create(
      b, loc, VectorType::get({4}, b.getF32Type()), mma.getOperandC());
  SmallVector<Value> elements =
      callMatrixOp(b, loc, pairs(mma.getOperandA()), pairs(mma.getOperandB()),
                   c, kMmaF16, 4);
  Value result = LLVM::UndefOp::create(b, loc, mma.getType());
  for (auto [i, element] : llvm::enumerate(elements))
    result = LLVM::InsertValueOp::create(b, loc, result, element,
                                         ArrayRef<int64_t>{int64_t(i)});
  mma.getResult().replaceAllUsesWith(result);
  mma->erase();
  return success();
}

/// nvgpu.ldmatrix x4 of 16-bit elements as a call of kiln_emu_ldmatrix:
/// the lane's row through a scratch buffer, its fragment back.
LogicalResult emulateLdMatrix(OpBuilder &b, nvgpu::LdMatrixOp ldmatrix,
                              int64_t warpSize, AccessTracer *tracer) {
  Operation *op = ldmatrix;
  Location loc = op->getLoc();
  auto type = cast<VectorType>(ldmatrix.getRes().getType());
  if (ldmatrix.getNumTiles() != 4 ||
      type.getShape() != ArrayRef<int64_t>{4, 2} ||
      type.getElementTypeBitWidth() != 16 || warpSize != 32)
    return op->emitError("only ldmatrix.x4 of 16-bit elements is "
                         "emulated");
  Type element = type.getElementType();
  auto f32 = b.getF32Type();
  Value scratch =
      memref::AllocaOp::create(b, loc, MemRefType::get({kSlot}, f32));
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Each lane reads its row: 8 lanes' rows make a matrix, one
  // wavefront when they fall in distinct banks.
  if (tracer)
    tracer->trace(b, op, ldmatrix.getSrcMemref(), ldmatrix.getIndices(), 16,
                  false);
  Value row =
      vector::LoadOp::create(b, loc, VectorType::get({8}, element),
                             ldmatrix.getSrcMemref(), ldmatrix.getIndices());
  for (int64_t i = 0; i < 8; ++i)
    memref::StoreOp::create(
        b, loc,
        arith::ExtFOp::create(
            b, loc, f32, vector::ExtractOp::create(b, loc, row, i).getResult()),
        scratch, ValueRange{index(i)});
  func::CallOp::create(
      b, loc, "kiln_emu_ldmatrix", TypeRange{},
      ValueRange{
          scratch,
          arith::ConstantIntOp::create(b, loc, ldmatrix.getTranspose() ? 1 : 0,
                                       64),
          byteAddress(b, loc, ldmatrix.getSrcMemref(), ldmatrix.getIndices())});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < 8; ++i)
    elements.push_back(arith::TruncFOp::create(
        b, loc, element,
        memref::LoadOp::create(b, loc, scratch, ValueRange{index(8 + i)})
            .getResult()));
  ldmatrix.getRes().replaceAllUsesWith(
      vector::FromElementsOp::create(b, loc, type, elements));
  op->erase();
  return success();
}

} // namespace

std::optional<LogicalResult>
kiln::emulator::rewriteWarpMatrixOp(OpBuilder &b, Operation *op,
                                    int64_t warpSize, AccessTracer *tracer) {
  if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op))
    return emulateLdMatrix(b, ldmatrix, warpSize, tracer);
  if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    auto shape = mma.getMmaShapeAsArray();
    bool isTf32 = shape[2] == 8;
    if (shape[0] != 16 || shape[1] != 8 || (shape[2] != 16 && !isTf32))
      return op->emitError("mma.sync shape not emulated");
    return emulateMatrixOp(b, op, mma.getMatrixA(), mma.getMatrixB(),
                           mma.getMatrixC(), isTf32 ? kMmaTf32 : kMmaF16);
  }
  if (auto mma = dyn_cast<NVVM::MmaOp>(op))
    return emulateBFloat16Mma(b, mma);
  if (auto mfma = dyn_cast<amdgpu::MFMAOp>(op)) {
    if (mfma.getM() != 16 || mfma.getN() != 16 || mfma.getK() != 16 ||
        mfma.getBlocks() != 1)
      return op->emitError("mfma shape not emulated");
    return emulateMatrixOp(b, op, mfma.getSourceA(), mfma.getSourceB(),
                           mfma.getDestC(), kMfma16);
  }
  return std::nullopt;
}

void kiln::emulator::declareWarpMatrixRuntime(ModuleOp module) {
  Builder b(module.getContext());
  auto scratch = MemRefType::get({kSlot}, b.getF32Type());
  declareRuntimeFunction(module, "kiln_emu_matrix", {scratch, b.getI64Type()});
  declareRuntimeFunction(module, "kiln_emu_ldmatrix",
                         {scratch, b.getI64Type(), b.getI64Type()});
}

void kiln::emulator::addWarpMatrixSymbols(
    llvm::orc::SymbolMap &symbols, llvm::orc::MangleAndInterner &interner) {
  addRuntimeSymbols(symbols, interner,
                    {KILN_EMU_RUNTIME_FUNCTION(kiln_emu_matrix),
                     KILN_EMU_RUNTIME_FUNCTION(kiln_emu_ldmatrix)});
}
