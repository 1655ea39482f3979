//===- Contraction.cpp - MatMul, Gemm and Conv as linalg contractions ===//
#include "Common.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// acc + lhs * rhs (* alpha).
void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args,
                        std::optional<double> alpha) {
  Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
  if (alpha)
    product = arith::MulFOp::create(
        b, loc, scalarConst(b, loc, product.getType(), *alpha), product);
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], product).getResult());
}

/// A generic that sums the product of `inputs` into `init` (the
/// contractions below: every convolution form).
Value multiplyAccumulateGeneric(OpBuilder &b, Location loc, Type resultType,
                                ValueRange inputs, Value init,
                                ArrayRef<AffineMap> maps,
                                ArrayRef<utils::IteratorType> iterators) {
  return linalg::GenericOp::create(
             b, loc, resultType, inputs, init, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               multiplyAccumulate(nb, l, args, std::nullopt);
             })
      .getResult(0);
}

/// The linalg form of an ONNX MatMul of `lhs` and `rhs` (numpy matmul
/// broadcasting) into `resultType`.
Value buildMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  auto lhsShape = tensorTypeOf(lhs).getShape();
  auto rhsShape = tensorTypeOf(rhs).getShape();
  bool lhsVector = lhsShape.size() == 1, rhsVector = rhsShape.size() == 1;
  int64_t lhsBatch = lhsVector ? 0 : lhsShape.size() - 2;
  int64_t rhsBatch = rhsVector ? 0 : rhsShape.size() - 2;
  int64_t batch = std::max(lhsBatch, rhsBatch);
  // Loop dims: batch..., m?, k, n?. With n innermost, the inner loop walks
  // contiguous rows of B and of the result, which LLVM vectorizes.
  int64_t numDims = batch + (lhsVector ? 0 : 1) + (rhsVector ? 0 : 1) + 1;
  int64_t mDim = batch, kDim = batch + (lhsVector ? 0 : 1), nDim = kDim + 1;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  auto batchExprs = [&](ArrayRef<int64_t> shape, int64_t own) {
    SmallVector<AffineExpr> exprs;
    ArrayRef<int64_t> outBatch = resultType.getShape().take_front(batch);
    for (int64_t i = 0; i < own; ++i) {
      int64_t dim = i + batch - own;
      exprs.push_back(shape[i] == 1 && outBatch[dim] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : d(dim));
    }
    return exprs;
  };
  SmallVector<AffineExpr> lhsExprs = batchExprs(lhsShape, lhsBatch);
  if (!lhsVector)
    lhsExprs.push_back(d(mDim));
  lhsExprs.push_back(d(kDim));
  SmallVector<AffineExpr> rhsExprs = batchExprs(rhsShape, rhsBatch);
  rhsExprs.push_back(d(kDim));
  if (!rhsVector)
    rhsExprs.push_back(d(nDim));
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < batch; ++i)
    outExprs.push_back(d(i));
  if (!lhsVector)
    outExprs.push_back(d(mDim));
  if (!rhsVector)
    outExprs.push_back(d(nDim));
  SmallVector<AffineMap> maps = {AffineMap::get(numDims, 0, lhsExprs, ctx),
                                 AffineMap::get(numDims, 0, rhsExprs, ctx),
                                 AffineMap::get(numDims, 0, outExprs, ctx)};
  SmallVector<IteratorType> iterators(numDims, IteratorType::parallel);
  iterators[kDim] = IteratorType::reduction;
  Value init = filledTensor(b, loc, resultType, 0.0);
  return multiplyAccumulateGeneric(b, loc, resultType, ValueRange{lhs, rhs},
                                   init, maps, iterators);
}

/// Whether a value of `op`'s kernel broadcasts along some but not all of
/// the rows [0, rank - 1) of `resultType` (a query [B, 1, N] added to a
/// [B, S, N] product, as a Bahdanau attention does). Its epilogue could not
/// be computed over those rows flattened into one, and the product would
/// stay a whole temporary of the kernel.
static bool partlyBroadcastRows(MatMulOp op, RankedTensorType resultType) {
  int64_t rank = resultType.getRank();
  auto partly = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || tensor.getRank() > rank)
      return false;
    bool broadcast = false, full = false;
    int64_t lead = rank - tensor.getRank();
    for (int64_t i = 0; i + 1 < rank; ++i) {
      int64_t size = i < lead ? 1 : tensor.getDimSize(i - lead);
      if (resultType.getDimSize(i) == 1)
        continue;
      broadcast |= size == 1;
      full |= size == resultType.getDimSize(i);
    }
    return broadcast && full;
  };
  auto kernel = op->getParentOfType<func::FuncOp>();
  if (!kernel)
    return false;
  if (llvm::any_of(kernel.getArgumentTypes(), partly))
    return true;
  WalkResult found = kernel.walk([&](Operation *inner) {
    return llvm::any_of(inner->getOperandTypes(), partly)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

struct MatMulLowering : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto lhsType = tensorTypeOf(op.getLhs());
    auto rhsType = tensorTypeOf(op.getRhs());
    auto resultType = op.getType();
    // A batch of matrices times one matrix (a linear layer applied to
    // [S, B, E] activations, as nn.MultiheadAttention exports it) is one
    // matmul over all the batch's rows: A [b..., M, K] collapses to
    // [b * M, K] (an alias) and the result expands back. The register
    // tiles then take 8 rows at a time instead of a batch of M-row
    // products that each read all of B (ViT-B/16's in-projection
    // [197, 1, 768] x [768, 2304]: one workgroup at 33 GFLOP/s before).
    if (lhsType.getRank() > 2 && rhsType.getRank() == 2 &&
        lhsType.hasStaticShape() && resultType.hasStaticShape() &&
        !partlyBroadcastRows(op, resultType)) {
      Location loc = op.getLoc();
      int64_t rank = lhsType.getRank();
      ReassociationIndices rows;
      for (int64_t i = 0; i + 1 < rank; ++i)
        rows.push_back(i);
      SmallVector<ReassociationIndices> reassoc = {rows, {rank - 1}};
      int64_t m = 1;
      for (int64_t i : rows)
        m *= lhsType.getDimSize(i);
      Value lhs = tensor::CollapseShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({m, lhsType.getShape().back()},
                                lhsType.getElementType()),
          op.getLhs(), reassoc);
      auto flatType = RankedTensorType::get({m, resultType.getShape().back()},
                                            resultType.getElementType());
      Value flat = buildMatMul(rewriter, loc, lhs, op.getRhs(), flatType);
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, resultType, flat,
                                                         reassoc);
      return success();
    }
    rewriter.replaceOp(op, buildMatMul(rewriter, op.getLoc(), op.getLhs(),
                                       op.getRhs(), resultType));
    return success();
  }
};

struct GemmLowering : public OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    auto resultType = op.getType();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    // beta * C, broadcast to M x N, is the accumulator's initial value.
    Value init;
    if (op.getC() && beta != 0.0) {
      init = buildElementwise(
          rewriter, loc, op.getC(), resultType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            if (beta == 1.0)
              return args[0];
            return arith::MulFOp::create(
                b, l, scalarConst(b, l, args[0].getType(), beta), args[0]);
          });
    } else {
      init = filledTensor(rewriter, loc, resultType, 0.0);
    }
    // Loop order (m, k, n) when B is [K, N], so the inner loop walks rows of
    // B and of the result; (m, n, k) when B is [N, K], a contiguous dot.
    bool kInner = op.getTransB();
    AffineExpr m = getAffineDimExpr(0, ctx),
               n = getAffineDimExpr(kInner ? 1 : 2, ctx),
               k = getAffineDimExpr(kInner ? 2 : 1, ctx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0,
                       op.getTransA() ? ArrayRef<AffineExpr>{k, m}
                                      : ArrayRef<AffineExpr>{m, k},
                       ctx),
        AffineMap::get(3, 0,
                       op.getTransB() ? ArrayRef<AffineExpr>{n, k}
                                      : ArrayRef<AffineExpr>{k, n},
                       ctx),
        AffineMap::get(3, 0, {m, n}, ctx)};
    SmallVector<IteratorType> iterators = {
        IteratorType::parallel, IteratorType::parallel, IteratorType::parallel};
    iterators[kInner ? 2 : 1] = IteratorType::reduction;
    std::optional<double> scale;
    if (alpha != 1.0)
      scale = alpha;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{op.getA(), op.getB()}, init, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          multiplyAccumulate(b, l, args, scale);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Einsum: one generic whose loops are the output subscripts (parallel) then
/// the summed ones (reduction); the body multiplies every operand.
struct EinsumLowering : public OpRewritePattern<EinsumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(EinsumOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    SmallVector<int64_t> ranks;
    SmallVector<ArrayRef<int64_t>> shapes;
    for (Value v : op.getInputs()) {
      ranks.push_back(tensorTypeOf(v).getRank());
      shapes.push_back(tensorTypeOf(v).getShape());
    }
    std::string error;
    auto subscripts = parseEinsumEquation(op.getEquation(), ranks, error);
    if (failed(subscripts))
      return rewriter.notifyMatchFailure(op, error);
    auto sizes = einsumDimSizes(*subscripts, shapes, error);
    if (failed(sizes))
      return rewriter.notifyMatchFailure(op, error);
    std::string loops = subscripts->output;
    for (auto [ch, size] : *sizes)
      if (loops.find(ch) == std::string::npos)
        loops += ch;
    auto dimOf = [&](char ch) { return getAffineDimExpr(loops.find(ch), ctx); };
    SmallVector<AffineMap> maps;
    for (auto [term, shape] : llvm::zip(subscripts->inputs, shapes)) {
      SmallVector<AffineExpr> exprs;
      for (auto [ch, dim] : llvm::zip(term, shape))
        exprs.push_back(dim == 1 && sizes->at(ch) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : dimOf(ch));
      maps.push_back(AffineMap::get(loops.size(), 0, exprs, ctx));
    }
    SmallVector<AffineExpr> outExprs;
    for (char ch : subscripts->output)
      outExprs.push_back(dimOf(ch));
    maps.push_back(AffineMap::get(loops.size(), 0, outExprs, ctx));
    SmallVector<IteratorType> iterators(loops.size(), IteratorType::reduction);
    for (size_t i = 0; i < subscripts->output.size(); ++i)
      iterators[i] = IteratorType::parallel;
    Value init = filledTensor(rewriter, op.getLoc(), op.getType(), 0.0);
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), op.getType(), op.getInputs(), init, maps,
        iterators, [](OpBuilder &b, Location l, ValueRange args) {
          Value product = args[0];
          for (Value v : args.drop_front().drop_back())
            product = arith::MulFOp::create(b, l, product, v);
          linalg::YieldOp::create(
              b, l,
              arith::AddFOp::create(b, l, args.back(), product).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The bias of a conv broadcast over its [N, F, ...] result, or zeros.
Value convInit(OpBuilder &b, Location loc, ConvOp op) {
  auto resultType = op.getType();
  if (!op.getBias())
    return filledTensor(b, loc, resultType, 0.0);
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, getAffineDimExpr(1, b.getContext())),
      b.getMultiDimIdentityMap(rank)};
  return linalg::GenericOp::create(
             b, loc, resultType, op.getBias(), emptyTensor(b, loc, resultType),
             maps, SmallVector<IteratorType>(rank, IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

/// Depthwise convolution (one input and one output channel per group) as a
/// rank-preserving generic: loops n, c, o_1..o_{s-1}, k_1..k_s, o_s. Unlike
/// the general grouped form it needs no reshapes, so tiling can fuse it
/// with its consumers.
Value lowerDepthwise(OpBuilder &b, ConvOp op, Value paddedInput) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  int64_t spatial = op.getType().getRank() - 2;
  int64_t next = 0;
  int64_t nDim = next++, cDim = next++;
  SmallVector<int64_t> oDims(spatial), kDims(spatial);
  for (int64_t i = 0; i + 1 < spatial; ++i)
    oDims[i] = next++;
  for (int64_t i = 0; i < spatial; ++i)
    kDims[i] = next++;
  oDims[spatial - 1] = next++;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs = {d(nDim), d(cDim)};
  SmallVector<AffineExpr> wExprs = {d(cDim), getAffineConstantExpr(0, ctx)};
  SmallVector<AffineExpr> outExprs = {d(nDim), d(cDim)};
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(d(oDims[i]) * op.getStrides()[i] +
                     d(kDims[i]) * op.getDilations()[i]);
    wExprs.push_back(d(kDims[i]));
    outExprs.push_back(d(oDims[i]));
  }
  SmallVector<IteratorType> iterators(next, IteratorType::parallel);
  for (int64_t k : kDims)
    iterators[k] = IteratorType::reduction;
  SmallVector<AffineMap> maps = {AffineMap::get(next, 0, xExprs, ctx),
                                 AffineMap::get(next, 0, wExprs, ctx),
                                 AffineMap::get(next, 0, outExprs, ctx)};
  return linalg::GenericOp::create(
             b, loc, op.getType(), ValueRange{paddedInput, op.getWeight()},
             convInit(b, loc, op), maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               multiplyAccumulate(nb, l, args, std::nullopt);
             })
      .getResult(0);
}

/// lowerDepthwise for GPU kernels: the input is read in the body at its
/// unpadded position (readWindowElement), zero in the padding, so the
/// kernel neither pads a copy of the input per thread nor needs a padding
/// kernel before it.
Value lowerDepthwiseReadingPadding(OpBuilder &b, ConvOp op) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  int64_t spatial = op.getType().getRank() - 2;
  WindowLoops loops;
  int64_t next = 2;
  loops.oDims.resize(spatial);
  loops.kDims.resize(spatial);
  for (int64_t i = 0; i + 1 < spatial; ++i)
    loops.oDims[i] = next++;
  for (int64_t i = 0; i < spatial; ++i)
    loops.kDims[i] = next++;
  loops.oDims[spatial - 1] = next++;
  loops.strides = op.getStrides();
  loops.dilations = op.getDilations();
  loops.padsBegin = op.getPads().take_front(spatial);
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> wExprs = {d(loops.cDim),
                                    getAffineConstantExpr(0, ctx)};
  SmallVector<AffineExpr> outExprs = {d(loops.nDim), d(loops.cDim)};
  for (int64_t i = 0; i < spatial; ++i) {
    wExprs.push_back(d(loops.kDims[i]));
    outExprs.push_back(d(loops.oDims[i]));
  }
  SmallVector<IteratorType> iterators(next, IteratorType::parallel);
  for (int64_t k : loops.kDims)
    iterators[k] = IteratorType::reduction;
  SmallVector<AffineMap> maps = {AffineMap::get(next, 0, wExprs, ctx),
                                 AffineMap::get(next, 0, outExprs, ctx)};
  Value input = op.getInput();
  Type elementType = op.getType().getElementType();
  return linalg::GenericOp::create(
             b, loc, op.getType(), ValueRange{op.getWeight()},
             convInit(b, loc, op), maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value x =
                   readWindowElement(nb, l, input, loops, elementType, 0.0);
               multiplyAccumulate(nb, l, {x, args[0], args[1]}, std::nullopt);
             })
      .getResult(0);
}

/// Whether `op` is a pointwise convolution whose spatial dims can be read
/// as one: a 1x1 kernel at stride 1, no padding, no groups, static shapes
/// with at least two spatial dims, rows shorter than `rowsBelow` (any rows
/// when it is 0).
bool isFlattenablePointwise(ConvOp op, int64_t rowsBelow) {
  auto inType = tensorTypeOf(op.getInput());
  auto wType = tensorTypeOf(op.getWeight());
  auto resultType = op.getType();
  if (op.getGroup() != 1 || resultType.getRank() < 4 ||
      !inType.hasStaticShape() || !resultType.hasStaticShape())
    return false;
  for (int64_t i = 2; i < resultType.getRank(); ++i)
    if (wType.getDimSize(i) != 1 || op.getStrides()[i - 2] != 1 ||
        inType.getDimSize(i) != resultType.getDimSize(i))
      return false;
  return rowsBelow == 0 || resultType.getShape().back() < rowsBelow;
}

/// A pointwise convolution as a batched matmul over the flattened image:
/// out[n, f, p] = bias[f] + sum_c x[n, c, p] * w[f, c], p = h * W + w,
/// loops n, f, c, p with p innermost. One contiguous row of H*W outputs
/// instead of H rows of W: a 7x7 feature map gives the register tiles 49
/// columns instead of 7 (kiln-collapse-expanded-consumers then computes the
/// epilogue in the same flattened shape).
Value lowerPointwise(OpBuilder &b, ConvOp op) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  auto resultType = op.getType();
  Type elementType = resultType.getElementType();
  int64_t rank = resultType.getRank();
  auto inShape = tensorTypeOf(op.getInput()).getShape();
  int64_t pixels = 1;
  for (int64_t i = 2; i < rank; ++i)
    pixels *= resultType.getDimSize(i);
  ReassociationIndices spatialDims;
  for (int64_t i = 2; i < rank; ++i)
    spatialDims.push_back(i);
  SmallVector<ReassociationIndices> imageReassoc = {{0}, {1}, spatialDims};
  SmallVector<ReassociationIndices> weightReassoc = {{0}, {1}};
  for (int64_t i = 2; i < rank; ++i)
    weightReassoc.back().push_back(i);

  // Each operand keeps its own element type (the lowering of the
  // contraction's body handles mixed ones as the 4-D form does).
  auto flatType = [&](int64_t channels, Type element) {
    return RankedTensorType::get({inShape[0], channels, pixels}, element);
  };
  int64_t filters = resultType.getDimSize(1);
  Value input = tensor::CollapseShapeOp::create(
      b, loc,
      flatType(inShape[1], tensorTypeOf(op.getInput()).getElementType()),
      op.getInput(), imageReassoc);
  Value weight = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({filters, inShape[1]},
                            tensorTypeOf(op.getWeight()).getElementType()),
      op.getWeight(), weightReassoc);
  auto accType = flatType(filters, elementType);
  Value init;
  if (op.getBias()) {
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0, getAffineDimExpr(1, ctx)),
        b.getMultiDimIdentityMap(3)};
    init = linalg::GenericOp::create(
               b, loc, accType, op.getBias(), emptyTensor(b, loc, accType),
               maps, SmallVector<IteratorType>(3, IteratorType::parallel),
               [](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, args[0]);
               })
               .getResult(0);
  } else {
    init = filledTensor(b, loc, accType, 0.0);
  }
  // Loops n, f, c, p.
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(1), d(2)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx)};
  SmallVector<IteratorType> iterators = {
      IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
      IteratorType::parallel};
  Value flat = multiplyAccumulateGeneric(
      b, loc, accType, ValueRange{input, weight}, init, maps, iterators);
  return tensor::ExpandShapeOp::create(b, loc, resultType, flat, imageReassoc);
}

/// The bias of a channels-last conv broadcast along the last dim of
/// `accType`, or zeros.
Value channelsLastInit(OpBuilder &b, Location loc, ConvOp op,
                       RankedTensorType accType) {
  if (!op.getBias())
    return filledTensor(b, loc, accType, 0.0);
  int64_t rank = accType.getRank();
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, b.getContext())),
      b.getMultiDimIdentityMap(rank)};
  return linalg::GenericOp::create(
             b, loc, accType, op.getBias(), emptyTensor(b, loc, accType), maps,
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

/// Whether a channels-last conv is a matmul over its pixels: a 1x1 kernel
/// at stride 1 without padding, static shapes.
bool isChannelsLastPointwise(ConvOp op) {
  auto wType = tensorTypeOf(op.getWeight());
  if (!tensorTypeOf(op.getInput()).hasStaticShape() ||
      !op.getType().hasStaticShape())
    return false;
  for (int64_t i = 2; i < wType.getRank(); ++i)
    if (wType.getDimSize(i) != 1 || op.getStrides()[i - 2] != 1)
      return false;
  return llvm::all_of(op.getPads(), [](int64_t p) { return p == 0; });
}

/// A pointwise channels-last conv as one matmul over the flattened pixels
/// with the weight read k-major: out[p, f] = bias[f] + sum_c x[p, c] *
/// w[f, c], loops p, f, c. The input's and result's rows are contiguous
/// along K and N, like a linear layer's.
Value lowerChannelsLastPointwise(OpBuilder &b, ConvOp op) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  auto resultType = op.getType();
  auto inType = tensorTypeOf(op.getInput());
  auto wType = tensorTypeOf(op.getWeight());
  int64_t rank = resultType.getRank();
  int64_t pixels = resultType.getNumElements() / resultType.getShape().back();
  int64_t channels = inType.getShape().back();
  int64_t filters = resultType.getShape().back();
  ReassociationIndices pixelDims, weightDims = {1};
  for (int64_t i = 0; i + 1 < rank; ++i)
    pixelDims.push_back(i);
  for (int64_t i = 2; i < rank; ++i)
    weightDims.push_back(i);
  SmallVector<ReassociationIndices> imageReassoc = {pixelDims, {rank - 1}};
  Value input = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({pixels, channels}, inType.getElementType()),
      op.getInput(), imageReassoc);
  Value weight = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({filters, channels}, wType.getElementType()),
      op.getWeight(), SmallVector<ReassociationIndices>{{0}, weightDims});
  auto accType =
      RankedTensorType::get({pixels, filters}, resultType.getElementType());
  Value init = channelsLastInit(b, loc, op, accType);
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                 AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                 AffineMap::get(3, 0, {d(0), d(1)}, ctx)};
  SmallVector<IteratorType> iterators = {
      IteratorType::parallel, IteratorType::parallel, IteratorType::reduction};
  Value flat = multiplyAccumulateGeneric(
      b, loc, accType, ValueRange{input, weight}, init, maps, iterators);
  return tensor::ExpandShapeOp::create(b, loc, resultType, flat, imageReassoc);
}

/// A depthwise channels-last conv ([N, s..., C] * [C, 1, k...]) as one
/// generic, loops n, o_1..o_s, c, k_1..k_s: channels innermost, so
/// neighbouring GPU threads read neighbouring channels. With
/// `readPaddingInPlace` (GPU targets) the window reads its padding in
/// place (readWindowElement), else a padded copy.
Value lowerDepthwiseChannelsLast(OpBuilder &b, ConvOp op,
                                 bool readPaddingInPlace) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  auto resultType = op.getType();
  int64_t rank = resultType.getRank(), spatial = rank - 2;
  WindowLoops loops;
  loops.channelsLast = true;
  loops.cDim = rank - 1;
  for (int64_t i = 0; i < spatial; ++i) {
    loops.oDims.push_back(1 + i);
    loops.kDims.push_back(rank + i);
  }
  loops.strides = op.getStrides();
  loops.dilations = op.getDilations();
  loops.padsBegin = op.getPads().take_front(spatial);
  int64_t numDims = rank + spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs = {d(0)};
  SmallVector<AffineExpr> wExprs = {d(loops.cDim),
                                    getAffineConstantExpr(0, ctx)};
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(d(loops.oDims[i]) * op.getStrides()[i] +
                     d(loops.kDims[i]) * op.getDilations()[i]);
    wExprs.push_back(d(loops.kDims[i]));
  }
  xExprs.push_back(d(loops.cDim));
  SmallVector<IteratorType> iterators(numDims, IteratorType::parallel);
  for (int64_t k : loops.kDims)
    iterators[k] = IteratorType::reduction;
  AffineMap wMap = AffineMap::get(numDims, 0, wExprs, ctx);
  AffineMap outMap = AffineMap::getMultiDimMapWithTargets(
      numDims, llvm::to_vector(llvm::seq<unsigned>(0, rank)), ctx);
  Value init = channelsLastInit(b, loc, op, resultType);
  if (readPaddingInPlace) {
    Value input = op.getInput();
    Type elementType = resultType.getElementType();
    return linalg::GenericOp::create(
               b, loc, resultType, ValueRange{op.getWeight()}, init,
               ArrayRef<AffineMap>{wMap, outMap}, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value x =
                     readWindowElement(nb, l, input, loops, elementType, 0.0);
                 multiplyAccumulate(nb, l, {x, args[0], args[1]}, std::nullopt);
               })
        .getResult(0);
  }
  SmallVector<int64_t> noExtra(spatial, 0);
  Value input = padSpatial(b, loc, op.getInput(), op.getPads(), noExtra, 0.0,
                           /*firstSpatialDim=*/1);
  return multiplyAccumulateGeneric(
      b, loc, resultType, ValueRange{input, op.getWeight()}, init,
      {AffineMap::get(numDims, 0, xExprs, ctx), wMap, outMap}, iterators);
}

/// A grouped channels-last conv (kiln-split-conv-k's parts along K) as
/// one generic over [N, s..., G, C/G] * [G, F/G, C/G, k...] -> [N, o...,
/// G, F/G] views, loops n, o_1..o_s, g, f, c, k_1..k_s; a pointwise one at
/// stride 1 over the flattened pixels, loops p, g, f, c.
Value lowerGroupedChannelsLast(OpBuilder &b, ConvOp op, Value input) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  auto resultType = op.getType();
  Type elementType = resultType.getElementType();
  auto inType = tensorTypeOf(input);
  auto wType = tensorTypeOf(op.getWeight());
  int64_t rank = resultType.getRank(), spatial = rank - 2;
  int64_t groups = op.getGroup();
  int64_t filters = resultType.getShape().back();
  int64_t channelsPerGroup = wType.getDimSize(1);
  bool pointwise = isChannelsLastPointwise(op);
  auto expand = [&](Value v, ArrayRef<int64_t> shape,
                    SmallVector<ReassociationIndices> reassoc) -> Value {
    auto type = RankedTensorType::get(shape, tensorTypeOf(v).getElementType());
    return tensor::ExpandShapeOp::create(b, loc, type, v, reassoc);
  };
  // The image's dims (pixels, flattened when pointwise), then G, C/G.
  SmallVector<int64_t> xShape, outShape;
  SmallVector<ReassociationIndices> xReassoc, outReassoc;
  if (pointwise) {
    ReassociationIndices pixelDims;
    for (int64_t i = 0; i + 1 < rank; ++i)
      pixelDims.push_back(i);
    int64_t pixels = resultType.getNumElements() / filters;
    input = tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({pixels, inType.getShape().back()},
                              inType.getElementType()),
        input, SmallVector<ReassociationIndices>{pixelDims, {rank - 1}});
    xShape = {pixels, groups, channelsPerGroup};
    outShape = {pixels, groups, filters / groups};
    xReassoc = {{0}, {1, 2}};
  } else {
    for (int64_t i = 0; i + 1 < rank; ++i) {
      xShape.push_back(inType.getDimSize(i));
      outShape.push_back(resultType.getDimSize(i));
      xReassoc.push_back({i});
    }
    xShape.append({groups, channelsPerGroup});
    outShape.append({groups, filters / groups});
    xReassoc.push_back({rank - 1, rank});
  }
  int64_t imageDims = xShape.size() - 2;
  Value x = expand(input, xShape, xReassoc);
  SmallVector<int64_t> wShape = {groups, filters / groups, channelsPerGroup};
  SmallVector<ReassociationIndices> wReassoc = {{0, 1}, {2}};
  if (!pointwise)
    for (int64_t i = 0; i < spatial; ++i) {
      wShape.push_back(wType.getDimSize(i + 2));
      wReassoc.push_back({i + 3});
    }
  Value weight = op.getWeight();
  if (pointwise) {
    ReassociationIndices rest = {1};
    for (int64_t i = 2; i < rank; ++i)
      rest.push_back(i);
    weight = tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({filters, channelsPerGroup},
                              wType.getElementType()),
        weight, SmallVector<ReassociationIndices>{{0}, rest});
    wReassoc = {{0, 1}, {2}};
  }
  weight = expand(weight, wShape, wReassoc);
  auto accType = RankedTensorType::get(outShape, elementType);
  int64_t accRank = accType.getRank();
  Value init;
  if (op.getBias()) {
    Value bias = expand(op.getBias(), {groups, filters / groups}, {{0, 1}});
    SmallVector<AffineMap> maps = {
        AffineMap::get(accRank, 0,
                       {getAffineDimExpr(accRank - 2, ctx),
                        getAffineDimExpr(accRank - 1, ctx)},
                       ctx),
        b.getMultiDimIdentityMap(accRank)};
    init = linalg::GenericOp::create(
               b, loc, accType, bias, emptyTensor(b, loc, accType), maps,
               SmallVector<IteratorType>(accRank, IteratorType::parallel),
               [](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, args[0]);
               })
               .getResult(0);
  } else {
    init = filledTensor(b, loc, accType, 0.0);
  }
  // Dims: the image's (0 .. imageDims-1), g, f, c, then k_1..k_s.
  int64_t g = imageDims, f = g + 1, c = g + 2;
  int64_t numDims = c + 1 + (pointwise ? 0 : spatial);
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs, wExprs = {d(g), d(f), d(c)}, outExprs;
  for (int64_t i = 0; i < imageDims; ++i) {
    outExprs.push_back(d(i));
    if (pointwise || i == 0) {
      xExprs.push_back(d(i));
      continue;
    }
    int64_t k = c + i;
    xExprs.push_back(d(i) * op.getStrides()[i - 1] +
                     d(k) * op.getDilations()[i - 1]);
    wExprs.push_back(d(k));
  }
  xExprs.append({d(g), d(c)});
  outExprs.append({d(g), d(f)});
  SmallVector<IteratorType> iterators(numDims, IteratorType::reduction);
  for (int64_t i = 0; i <= f; ++i)
    iterators[i] = IteratorType::parallel;
  SmallVector<AffineMap> maps = {AffineMap::get(numDims, 0, xExprs, ctx),
                                 AffineMap::get(numDims, 0, wExprs, ctx),
                                 AffineMap::get(numDims, 0, outExprs, ctx)};
  Value result = multiplyAccumulateGeneric(
      b, loc, accType, ValueRange{x, weight}, init, maps, iterators);
  SmallVector<ReassociationIndices> collapse;
  if (pointwise) {
    result = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({outShape[0], filters}, elementType),
        result, SmallVector<ReassociationIndices>{{0}, {1, 2}});
    ReassociationIndices pixelDims;
    for (int64_t i = 0; i + 1 < rank; ++i)
      pixelDims.push_back(i);
    return tensor::ExpandShapeOp::create(
        b, loc, resultType, result,
        SmallVector<ReassociationIndices>{pixelDims, {rank - 1}});
  }
  for (int64_t i = 0; i + 1 < rank; ++i)
    collapse.push_back({i});
  collapse.push_back({rank - 1, rank});
  return tensor::CollapseShapeOp::create(b, loc, resultType, result, collapse);
}

/// A channels-last conv ([N, s..., C] * [F, C, k...] -> [N, o..., F],
/// group 1) as one generic, loops n, o_1..o_s, f, c, k_1..k_s: the
/// result's dims in order, then the reduction. Padding, if any, is a
/// tensor.pad of the spatial dims.
Value lowerChannelsLast(OpBuilder &b, ConvOp op) {
  if (op.getGroup() == 1 && isChannelsLastPointwise(op))
    return lowerChannelsLastPointwise(b, op);
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  auto resultType = op.getType();
  int64_t rank = resultType.getRank();
  int64_t spatial = rank - 2;
  Value input = op.getInput();
  if (llvm::any_of(op.getPads(), [](int64_t p) { return p != 0; })) {
    auto inType = tensorTypeOf(input);
    SmallVector<int64_t> shape(inType.getShape());
    SmallVector<OpFoldResult> low(rank, b.getIndexAttr(0)),
        high(rank, b.getIndexAttr(0));
    for (int64_t i = 0; i < spatial; ++i) {
      low[i + 1] = b.getIndexAttr(op.getPads()[i]);
      high[i + 1] = b.getIndexAttr(op.getPads()[i + spatial]);
      shape[i + 1] += op.getPads()[i] + op.getPads()[i + spatial];
    }
    input = tensor::PadOp::create(
        b, loc, RankedTensorType::get(shape, inType.getElementType()), input,
        low, high, scalarConst(b, loc, inType.getElementType(), 0.0));
  }
  if (op.getGroup() != 1)
    return lowerGroupedChannelsLast(b, op, input);
  // Dims: n = 0, o_i = 1 + i, f = rank - 1, c = rank, k_i = rank + 1 + i.
  int64_t f = rank - 1, c = rank, numDims = rank + 1 + spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs = {d(0)}, wExprs = {d(f), d(c)}, outExprs;
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(d(1 + i) * op.getStrides()[i] +
                     d(rank + 1 + i) * op.getDilations()[i]);
    wExprs.push_back(d(rank + 1 + i));
  }
  xExprs.push_back(d(c));
  for (int64_t i = 0; i < rank; ++i)
    outExprs.push_back(d(i));
  SmallVector<IteratorType> iterators(numDims, IteratorType::reduction);
  for (int64_t i = 0; i < rank; ++i)
    iterators[i] = IteratorType::parallel;
  SmallVector<AffineMap> maps = {AffineMap::get(numDims, 0, xExprs, ctx),
                                 AffineMap::get(numDims, 0, wExprs, ctx),
                                 AffineMap::get(numDims, 0, outExprs, ctx)};
  return multiplyAccumulateGeneric(
      b, loc, resultType, ValueRange{input, op.getWeight()},
      channelsLastInit(b, loc, op, resultType), maps, iterators);
}

struct ConvLowering : public OpRewritePattern<ConvOp> {
  ConvLowering(MLIRContext *ctx, int64_t flattenRowsBelow,
               bool readWindowPaddingInPlace)
      : OpRewritePattern(ctx), flattenRowsBelow(flattenRowsBelow),
        readWindowPaddingInPlace(readWindowPaddingInPlace) {}
  /// Pointwise convolutions with rows shorter than this (any when 0)
  /// compute over the flattened image.
  int64_t flattenRowsBelow;
  /// Depthwise convolutions read their padding in place (GPU targets).
  bool readWindowPaddingInPlace;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    auto resultType = op.getType();
    Type elementType = resultType.getElementType();
    int64_t spatial = resultType.getRank() - 2;
    int64_t groups = op.getGroup();
    auto inShape = tensorTypeOf(op.getInput()).getShape();
    auto wShape = tensorTypeOf(op.getWeight()).getShape();
    int64_t channelsPerGroup = inShape[1] / groups;
    int64_t filtersPerGroup = wShape[0] / groups;

    if (op.getChannelsLast()) {
      bool depthwiseCl = groups > 1 && wShape[1] == 1 && filtersPerGroup == 1;
      rewriter.replaceOp(op, depthwiseCl
                                 ? lowerDepthwiseChannelsLast(
                                       rewriter, op, readWindowPaddingInPlace)
                                 : lowerChannelsLast(rewriter, op));
      return success();
    }

    if (isFlattenablePointwise(op, flattenRowsBelow)) {
      rewriter.replaceOp(op, lowerPointwise(rewriter, op));
      return success();
    }
    bool depthwise =
        groups > 1 && channelsPerGroup == 1 && filtersPerGroup == 1;
    if (depthwise && readWindowPaddingInPlace) {
      rewriter.replaceOp(op, lowerDepthwiseReadingPadding(rewriter, op));
      return success();
    }
    SmallVector<int64_t> noExtra(spatial, 0);
    Value input =
        padSpatial(rewriter, loc, op.getInput(), op.getPads(), noExtra, 0.0);
    if (depthwise) {
      rewriter.replaceOp(op, lowerDepthwise(rewriter, op, input));
      return success();
    }
    Value weight = op.getWeight();

    // With groups, operate on [N, G, C/G, ...] and [G, F/G, C/G, ...] views.
    auto expand = [&](Value v, SmallVector<int64_t> shape,
                      SmallVector<ReassociationIndices> reassoc) -> Value {
      auto type = RankedTensorType::get(shape, elementType);
      return tensor::ExpandShapeOp::create(rewriter, loc, type, v, reassoc);
    };
    SmallVector<int64_t> outShape(resultType.getShape());
    bool grouped = groups > 1;
    if (grouped) {
      auto paddedShape = tensorTypeOf(input).getShape();
      SmallVector<int64_t> xShape = {paddedShape[0], groups, channelsPerGroup};
      SmallVector<int64_t> wgShape = {groups, filtersPerGroup, wShape[1]};
      SmallVector<ReassociationIndices> reassoc = {{0}, {1, 2}};
      for (int64_t i = 0; i < spatial; ++i) {
        xShape.push_back(paddedShape[i + 2]);
        wgShape.push_back(wShape[i + 2]);
        reassoc.push_back({i + 3});
      }
      SmallVector<ReassociationIndices> wReassoc = {{0, 1}};
      for (int64_t i = 0; i < spatial + 1; ++i)
        wReassoc.push_back({i + 2});
      input = expand(input, xShape, reassoc);
      weight = expand(weight, wgShape, wReassoc);
      outShape = {outShape[0], groups, filtersPerGroup};
      for (int64_t i = 0; i < spatial; ++i)
        outShape.push_back(resultType.getDimSize(i + 2));
    }
    auto accType = RankedTensorType::get(outShape, elementType);

    // Loop dims: n, [g], f, o_1..o_{s-1}, c, k_1..k_s, o_s. The last output
    // dim is innermost: the inner loop walks a contiguous output row and a
    // (strided) input row for one weight, which LLVM vectorizes, and the
    // output row stays in cache across the whole window.
    int64_t next = 0;
    int64_t nDim = next++;
    int64_t g = grouped ? next++ : -1;
    int64_t f = next++;
    SmallVector<int64_t> oDims(spatial), kDims(spatial);
    for (int64_t i = 0; i + 1 < spatial; ++i)
      oDims[i] = next++;
    int64_t c = next++;
    for (int64_t i = 0; i < spatial; ++i)
      kDims[i] = next++;
    oDims[spatial - 1] = next++;
    int64_t numDims = next;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> xExprs = {d(nDim)}, wExprs, outExprs = {d(nDim)};
    if (grouped) {
      xExprs.push_back(d(g));
      wExprs.push_back(d(g));
      outExprs.push_back(d(g));
    }
    xExprs.push_back(d(c));
    for (int64_t i = 0; i < spatial; ++i)
      xExprs.push_back(d(oDims[i]) * op.getStrides()[i] +
                       d(kDims[i]) * op.getDilations()[i]);
    wExprs.push_back(d(f));
    wExprs.push_back(d(c));
    for (int64_t i = 0; i < spatial; ++i)
      wExprs.push_back(d(kDims[i]));
    outExprs.push_back(d(f));
    for (int64_t i = 0; i < spatial; ++i)
      outExprs.push_back(d(oDims[i]));

    Value init;
    if (op.getBias()) {
      Value bias = op.getBias();
      if (grouped)
        bias = expand(bias, {groups, filtersPerGroup}, {{0, 1}});
      // Bias runs along the filter dim(s) of the accumulator.
      SmallVector<AffineExpr> biasExprs;
      if (grouped)
        biasExprs = {d(1), d(2)};
      else
        biasExprs = {d(1)};
      SmallVector<AffineMap> maps = {
          AffineMap::get(accType.getRank(), 0, biasExprs, ctx),
          rewriter.getMultiDimIdentityMap(accType.getRank())};
      init = linalg::GenericOp::create(
                 rewriter, loc, accType, bias,
                 emptyTensor(rewriter, loc, accType), maps,
                 SmallVector<IteratorType>(accType.getRank(),
                                           IteratorType::parallel),
                 [](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(b, l, args[0]);
                 })
                 .getResult(0);
    } else {
      init = filledTensor(rewriter, loc, accType, 0.0);
    }

    SmallVector<IteratorType> iterators(numDims, IteratorType::parallel);
    iterators[c] = IteratorType::reduction;
    for (int64_t kDim : kDims)
      iterators[kDim] = IteratorType::reduction;
    SmallVector<AffineMap> maps = {AffineMap::get(numDims, 0, xExprs, ctx),
                                   AffineMap::get(numDims, 0, wExprs, ctx),
                                   AffineMap::get(numDims, 0, outExprs, ctx)};
    Value result = linalg::GenericOp::create(
                       rewriter, loc, accType, ValueRange{input, weight}, init,
                       maps, iterators,
                       [](OpBuilder &b, Location l, ValueRange args) {
                         multiplyAccumulate(b, l, args, std::nullopt);
                       })
                       .getResult(0);
    if (grouped) {
      SmallVector<ReassociationIndices> reassoc = {{0}, {1, 2}};
      for (int64_t i = 0; i < spatial; ++i)
        reassoc.push_back({i + 3});
      result = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                               result, reassoc);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::lowering::populateContractionPatterns(
    RewritePatternSet &patterns, int64_t flattenRowsBelow,
    bool readWindowPaddingInPlace) {
  patterns.add<MatMulLowering, GemmLowering, EinsumLowering>(
      patterns.getContext());
  patterns.add<ConvLowering>(patterns.getContext(), flattenRowsBelow,
                             readWindowPaddingInPlace);
}
