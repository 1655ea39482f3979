//===- FoldTransposesIntoContractions.cpp - read permuted, not copied
//------===//
//
// Attention as PyTorch exports it moves every head through a transpose:
//
//   q = transpose(reshape(x·Wq + bq), [0,2,1,3])     [B, H, S, D]
//   k = transpose(reshape(x·Wk + bk), [0,2,3,1])     [B, H, D, S]
//   v = transpose(reshape(x·Wv + bv), [0,2,1,3])     [B, H, S, D]
//   o = reshape(transpose(softmax(q·k)·v, [0,2,1,3]))  [B, S, H·D]
//
// On a GPU each transpose is a copy kernel (four of BERT-base's sixteen per
// layer). A contraction can read an operand in any dim order and write its
// result in any, so a transpose that only feeds one (or only reads one's
// result) folds into it: the contraction becomes a kiln.einsum whose
// subscripts carry the permutation,
//
//   scores  = einsum("bshd,bthd->bhst", q', k')       (q', k': the reshapes)
//   context = einsum("bhst,bthd->bshd", p, v')        (o is a reshape of it)
//
// and the reshapes between are aliases, not kernels. A widening or
// narrowing kiln.cast between the transpose and the contraction
// (--precision=f16) is elementwise and moves to the other side.
//
// Only where the contraction's kernel still reads and writes along
// contiguous memory: the folded operand's innermost dim must be one of the
// contraction's M, N or K (not a batch dim, which would make every load a
// gather), as must the folded result's. Two-operand matmuls and einsums.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDTRANSPOSESINTOCONTRACTIONS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A two-operand matmul or einsum as subscripts, one letter per dim: the
/// matmul's batch dims (right-aligned, numpy broadcasting) then m, k / k, n.
std::optional<EinsumSubscripts> subscriptsOf(Operation *op) {
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    int64_t lhsRank = tensorType(matmul.getLhs()).getRank();
    int64_t rhsRank = tensorType(matmul.getRhs()).getRank();
    if (lhsRank < 2 || rhsRank < 2)
      return std::nullopt;
    int64_t batch = std::max(lhsRank, rhsRank) - 2;
    if (batch > 10)
      return std::nullopt;
    std::string batchLetters = std::string("abcdefghij").substr(0, batch);
    EinsumSubscripts terms;
    terms.inputs.push_back(batchLetters.substr(batch - (lhsRank - 2)) + "mk");
    terms.inputs.push_back(batchLetters.substr(batch - (rhsRank - 2)) + "kn");
    terms.output = batchLetters + "mn";
    return terms;
  }
  auto einsum = dyn_cast<EinsumOp>(op);
  if (!einsum || einsum.getInputs().size() != 2)
    return std::nullopt;
  SmallVector<int64_t> ranks;
  for (Value input : einsum.getInputs())
    ranks.push_back(tensorType(input).getRank());
  std::string error;
  FailureOr<EinsumSubscripts> terms =
      parseEinsumEquation(einsum.getEquation(), ranks, error);
  if (failed(terms))
    return std::nullopt;
  // Broadcast dims (`...`) parse as digits; give them unused upper-case
  // letters so that the equation can be written back without `...`.
  std::string used = terms->output;
  for (const std::string &term : terms->inputs)
    used += term;
  std::map<char, char> renamed;
  char next = 'A';
  auto rename = [&](std::string &term) -> bool {
    for (char &ch : term) {
      if (llvm::isAlpha(ch))
        continue;
      if (!renamed.count(ch)) {
        while (next <= 'Z' && used.find(next) != std::string::npos)
          ++next;
        if (next > 'Z')
          return false;
        renamed[ch] = next++;
      }
      ch = renamed[ch];
    }
    return true;
  };
  for (std::string &term : terms->inputs)
    if (!rename(term))
      return std::nullopt;
  if (!rename(terms->output))
    return std::nullopt;
  return *terms;
}

std::string equationOf(const EinsumSubscripts &terms) {
  return terms.inputs[0] + "," + terms.inputs[1] + "->" + terms.output;
}

/// A letter the contraction's kernel can walk memory along: summed (K), or
/// in the output and one operand only (M, N); not a batch letter.
bool isMatrixLetter(const EinsumSubscripts &terms, char letter) {
  bool inOutput = terms.output.find(letter) != std::string::npos;
  int operands = 0;
  for (const std::string &term : terms.inputs)
    operands += term.find(letter) != std::string::npos;
  return !inOutput || operands == 1;
}

/// `v`'s single user, or null.
Operation *onlyUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// `v`, or the input of the kiln.cast that `v` is (`cast`: that cast, else
/// null) when `v` has no other use; null when it has.
Value throughSingleUseCast(Value v, CastOp &cast) {
  cast = v.getDefiningOp<CastOp>();
  if (!cast)
    return v;
  return v.hasOneUse() ? cast.getInput() : Value();
}

/// The transpose that `operand` is, possibly behind one kiln.cast, when
/// each has no other use; null otherwise.
TransposeOp transposeFeeding(Value operand, CastOp &castBetween) {
  Value source = throughSingleUseCast(operand, castBetween);
  auto transpose = source ? source.getDefiningOp<TransposeOp>() : nullptr;
  if (!transpose || !source.hasOneUse())
    return nullptr;
  return transpose;
}

/// contraction(..., [cast](transpose(x)), ...) -> einsum(..., [cast](x), ...)
/// with x's subscripts permuted.
struct FoldOperandTranspose : public RewritePattern {
  FoldOperandTranspose(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<MatMulOp, EinsumOp>(op))
      return failure();
    std::optional<EinsumSubscripts> terms = subscriptsOf(op);
    if (!terms)
      return failure();
    for (unsigned i = 0; i < 2; ++i) {
      CastOp castBetween;
      TransposeOp transpose = transposeFeeding(op->getOperand(i), castBetween);
      if (!transpose)
        continue;
      // Operand dim d is the transpose's input dim perm[d].
      ArrayRef<int64_t> perm = transpose.getPerm();
      std::string sourceTerm(perm.size(), ' ');
      for (auto [d, p] : llvm::enumerate(perm))
        sourceTerm[p] = terms->inputs[i][d];
      if (!isMatrixLetter(*terms, sourceTerm.back()))
        continue;
      Value source = transpose.getInput();
      // The cast now widens the untransposed operand: no ONNX value.
      if (castBetween)
        source = CastOp::create(
            rewriter, withoutOnnxValues(castBetween.getLoc()),
            tensorType(source).clone(tensorType(castBetween).getElementType()),
            source);
      EinsumSubscripts folded = *terms;
      folded.inputs[i] = sourceTerm;
      SmallVector<Value> operands(op->getOperands());
      operands[i] = source;
      // The kernel also does the transpose node's work, but computes the
      // contraction's value, not the transpose's; it is named after the
      // contraction (the first location).
      Location loc = rewriter.getFusedLoc(
          {op->getLoc(), withoutOnnxValues(transpose.getLoc())});
      Value einsum =
          EinsumOp::create(rewriter, loc, op->getResult(0).getType(), operands,
                           rewriter.getStringAttr(equationOf(folded)));
      rewriter.replaceOp(op, einsum);
      return success();
    }
    return failure();
  }
};

/// transpose([cast](contraction(a, b))) -> [cast](einsum(a, b)) with the
/// output subscripts permuted.
struct FoldResultTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    CastOp castBetween;
    Value input = throughSingleUseCast(transpose.getInput(), castBetween);
    if (!input)
      return failure();
    Operation *contraction = input.getDefiningOp();
    if (!contraction || !isa<MatMulOp, EinsumOp>(contraction) ||
        !onlyUser(input))
      return failure();
    std::optional<EinsumSubscripts> terms = subscriptsOf(contraction);
    if (!terms)
      return failure();
    EinsumSubscripts folded = *terms;
    for (auto [d, p] : llvm::enumerate(transpose.getPerm()))
      folded.output[d] = terms->output[p];
    if (!isMatrixLetter(folded, folded.output.back()))
      return failure();
    auto resultType = transpose.getType().clone(
        tensorType(contraction->getResult(0)).getElementType());
    // The einsum computes the transpose node's value (the latest node).
    Location loc =
        rewriter.getFusedLoc({contraction->getLoc(), transpose.getLoc()});
    Value result =
        EinsumOp::create(rewriter, loc, resultType, contraction->getOperands(),
                         rewriter.getStringAttr(equationOf(folded)));
    // The cast now rounds the transposed value: the transpose node's.
    if (castBetween)
      result = CastOp::create(
          rewriter,
          rewriter.getFusedLoc({castBetween.getLoc(), transpose.getLoc()}),
          transpose.getType(), result);
    rewriter.replaceOp(transpose, result);
    return success();
  }
};

struct FoldTransposesIntoContractionsPass
    : public kiln::impl::FoldTransposesIntoContractionsBase<
          FoldTransposesIntoContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldOperandTranspose, FoldResultTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
