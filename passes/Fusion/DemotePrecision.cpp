//===- DemotePrecision.cpp - store float32 tensors in 16 bits
//--------------===//
//
// `--precision=f16|bf16` chooses the type a float32 model keeps its tensors
// in: weights are converted once at compile time, inputs are rounded where
// they enter, and every float32 value an op produces is rounded to the
// 16-bit type before it leaves the op. Ops still compute in float32: each
// consumer widens its 16-bit operands with a cast of its own, which
// kiln-form-dispatch-regions keeps beside the consumer (a contraction then
// reads 16-bit operands and accumulates in float32, as tensor cores do), so
// kernels read and write half the bytes. Outputs are widened back to
// float32 for the caller.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln {
#define GEN_PASS_DEF_DEMOTEPRECISION
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isFloat32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// `value`'s bits as a bfloat16, rounded to nearest even: the upper half
/// of its float32 bits, rounded (a carry into the exponent is the correct
/// next value, infinity past the largest); NaN stays a quiet NaN.
uint16_t roundToBFloat16(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x0040u);
  uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t((bits + roundingBias) >> 16);
}

/// `value`'s bits in the 16-bit float type `narrow`, rounded to nearest
/// even. Per element of every weight (BERT-base: 110 million), so not
/// through APFloat (about 100 ns each, seconds per model): float16 by the
/// compiler's own conversion (F16C or compiler-rt's, both round to nearest
/// even), bfloat16 by roundToBFloat16 (test/Passes/Fusion/DemotePrecision.mlir
/// checks both against APFloat's values at the rounding boundaries).
uint16_t roundTo(const llvm::fltSemantics &narrow, float value) {
  if (&narrow == &APFloat::BFloat())
    return roundToBFloat16(value);
  assert(&narrow == &APFloat::IEEEhalf() && "float16 or bfloat16");
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(value));
}

#if defined(__x86_64__)
/// Eight elements at a time with F16C (x86-64 CPUs since 2012), whose
/// conversion rounds to nearest even as roundTo does; the build targets
/// plain x86-64, so it is chosen at run time. The last n % 8 by roundTo.
__attribute__((target("avx,f16c"))) void
roundToFloat16WithF16C(ArrayRef<float> in, uint16_t *out) {
  size_t i = 0;
  for (; i + 8 <= in.size(); i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in.data() + i),
                                     _MM_FROUND_TO_NEAREST_INT));
  for (; i < in.size(); ++i)
    out[i] = roundTo(APFloat::IEEEhalf(), in[i]);
}
#endif

/// `in` rounded to `narrow` into `out` (as many elements).
void roundAll(const llvm::fltSemantics &narrow, ArrayRef<float> in,
              uint16_t *out) {
#if defined(__x86_64__)
  if (&narrow == &APFloat::IEEEhalf() && __builtin_cpu_supports("f16c"))
    return roundToFloat16WithF16C(in, out);
#endif
  for (float f : in)
    *out++ = roundTo(narrow, f);
}

/// The constant `value` (float32) converted to `narrow`; failure when its
/// storage is not readable.
FailureOr<ElementsAttr> convertConstant(ElementsAttr value, FloatType narrow) {
  auto type = cast<RankedTensorType>(value.getType()).clone(narrow);
  const llvm::fltSemantics &semantics = narrow.getFloatSemantics();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return ElementsAttr(dense.mapValues(narrow, [&](const APFloat &f) {
      return APInt(16, roundTo(semantics, f.convertToFloat()));
    }));
  auto resource = dyn_cast<DenseF32ResourceElementsAttr>(value);
  if (!resource)
    return failure();
  std::optional<ArrayRef<float>> floats = resource.tryGetAsArrayRef();
  if (!floats)
    return failure();
  // Rounded straight into the new blob: a copy of BERT-base's 220 MB
  // costs the compile about a second of page faults on a VM.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      floats->size() * sizeof(uint16_t), alignof(uint16_t));
  roundAll(semantics, *floats,
           reinterpret_cast<uint16_t *>(blob.getMutableData().data()));
  std::string name = (resource.getRawHandle().getKey() + "." +
                      (narrow.isBF16() ? "bf16" : "f16"))
                         .str();
  return ElementsAttr(
      DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

struct DemotePrecisionPass
    : public kiln::impl::DemotePrecisionBase<DemotePrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision == "f32")
      return;
    if (precision != "f16" && precision != "bf16") {
      getOperation().emitError("unknown precision '")
          << precision << "' (f32, f16 or bf16)";
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    narrow = precision == "f16" ? FloatType(b.getF16Type())
                                : FloatType(b.getBF16Type());
    func::FuncOp func = getOperation();
    // Collected first: the casts added below produce float32 values too.
    SmallVector<Value> values;
    for (BlockArgument arg : func.getArguments())
      if (isFloat32Tensor(arg.getType()))
        values.push_back(arg);
    func.walk([&](Operation *op) {
      if (!isa<KilnDialect>(op->getDialect()) || op->getNumRegions() > 0 ||
          !op->getParentOfType<func::FuncOp>() ||
          op->getParentOp() != func.getOperation())
        return;
      for (Value result : op->getResults())
        if (isFloat32Tensor(result.getType()) && !result.use_empty())
          values.push_back(result);
    });
    for (Value value : values)
      if (failed(demote(b, value)))
        return signalPassFailure();
    for (Operation *op : replaced)
      op->erase();
    SmallVector<Operation *> movers;
    func.walk([&](Operation *op) {
      if (movesDataOnly(op))
        movers.push_back(op);
    });
    for (Operation *op : movers)
      moveDataIn16Bits(op);
  }

  /// `op` only moves elements (movesDataOnly), reads widened 16-bit values
  /// and its results are only rounded back to that type: it takes the
  /// 16-bit values and produces 16-bit results instead of widening them and
  /// rounding its result again (which would make a kernel of the rounding,
  /// where a reshape is otherwise an alias).
  void moveDataIn16Bits(Operation *op) {
    SmallVector<CastOp> widenings;
    for (Value operand : op->getOperands()) {
      if (!isFloat32Tensor(operand.getType()))
        continue;
      auto widen = operand.getDefiningOp<CastOp>();
      if (!widen || getElementTypeOrSelf(widen.getInput().getType()) != narrow)
        return;
      widenings.push_back(widen);
    }
    SmallVector<CastOp> roundings;
    for (Value result : op->getResults()) {
      if (!isFloat32Tensor(result.getType()) || !result.hasOneUse())
        return;
      auto round = dyn_cast<CastOp>(*result.getUsers().begin());
      if (!round || getElementTypeOrSelf(round.getType()) != narrow)
        return;
      roundings.push_back(round);
    }
    if (widenings.empty() || roundings.empty())
      return;
    for (OpOperand &operand : op->getOpOperands())
      if (auto widen = operand.get().getDefiningOp<CastOp>();
          widen && llvm::is_contained(widenings, widen))
        operand.set(widen.getInput());
    for (auto [result, round] : llvm::zip(op->getResults(), roundings)) {
      result.setType(round.getType());
      round.getResult().replaceAllUsesWith(result);
      round.erase();
    }
    for (CastOp widen : widenings)
      if (widen->use_empty())
        widen.erase();
  }

  /// Replaces each use of `value` by a widening cast of its 16-bit copy.
  LogicalResult demote(OpBuilder &b, Value value) {
    Location loc = value.getLoc();
    auto narrowType = cast<RankedTensorType>(value.getType()).clone(narrow);
    Value stored;
    if (auto constant = value.getDefiningOp<ConstantOp>()) {
      FailureOr<ElementsAttr> converted =
          convertConstant(constant.getValue(), narrow);
      if (failed(converted))
        return constant.emitError("cannot read this float32 constant to "
                                  "convert it to ")
               << narrow;
      b.setInsertionPoint(constant);
      stored = ConstantOp::create(b, loc, *converted);
      replaced.push_back(constant);
    } else {
      if (auto arg = dyn_cast<BlockArgument>(value))
        b.setInsertionPointToStart(arg.getOwner());
      else
        b.setInsertionPointAfter(value.getDefiningOp());
      stored = CastOp::create(b, loc, narrowType, value);
    }
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      if (use.getOwner() == stored.getDefiningOp())
        continue;
      b.setInsertionPoint(use.getOwner());
      use.set(CastOp::create(b, loc, value.getType(), stored));
    }
    return success();
  }

  FloatType narrow;
  /// Float32 constants whose uses now read their 16-bit copies.
  SmallVector<Operation *> replaced;
};

} // namespace
