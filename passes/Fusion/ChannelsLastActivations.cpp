//===- ChannelsLastActivations.cpp - convolutions on NHWC activations -----===//
//
// ONNX convolutions are NCHW: a pixel's channels lie H*W apart. The GPU
// kernels compute a convolution as an implicit GEMM with pixels along M and
// input channels along K, so an NCHW input gives each row of A (one pixel)
// its K elements H*W apart, and a 3x3 convolution's stage reads runs of a
// padded row that start at odd columns: at 16 bits, one element a load
// (ResNet-50's layer3 3x3 convolutions: ~25 instructions per mma.sync,
// bench/RESULTS.md). The accumulators leave as pairs of filters H*W apart.
//
// Channels-last (NHWC) activations make both sides contiguous: A's rows
// are runs of C (16-byte copies, like a linear layer's), and the result's
// rows runs of F. This pass rewrites every 2-D convolution without groups
// as a `channels_last` one between two transposes,
//
//   y = conv(x)  ->  y =
//   transpose<NHWC->NCHW>(conv_cl(transpose<NCHW->NHWC>(x)))
//
// then moves the NHWC->NCHW transposes down through the elementwise ops
// and constant pads that read them (an op whose operands are all such
// transposes, or scalars, computes in NHWC) and composes adjacent
// transposes, so that between two convolutions -- conv, bias, ReLU,
// residual add, the next convolution's padding -- the transposes cancel.
// What remains are transposes where the chain leaves the convolutions
// (pooling, a flatten, the model's input and output): kernels of their own.
//
// Ops that now compute an NHWC tensor claim no ONNX value (kiln-bisect
// compares what it finds by name); the transposes that restore NCHW do.
//
//===----------------------------------------------------------------------===//
#include "Widening.h"

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_CHANNELSLASTACTIVATIONS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

bool kiln::movesOnlyUnitDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  int64_t last = -1;
  for (int64_t d : perm) {
    if (shape[d] == 1)
      continue;
    if (d < last)
      return false;
    last = d;
  }
  return true;
}

namespace {

constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};
constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2};

/// The NHWC activation that `v` restores to NCHW, if `v` is such a
/// transpose. Not a constant's: kiln-channels-last-conv-weights reads a
/// weight stored [F][kh][kw][C] through the same permutation, and that
/// transpose must stay on the constant to fold into its convolution.
Value channelsLastSource(Value v) {
  auto transpose = v.getDefiningOp<TransposeOp>();
  if (!transpose || transpose.getPerm() != ArrayRef(kToChannelsFirst) ||
      transpose.getInput().getDefiningOp<ConstantOp>())
    return {};
  return transpose.getInput();
}

Value transposeTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  return TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(perm));
}

/// [N, C, H, W] -> [N, H, W, C].
RankedTensorType channelsLastType(RankedTensorType nchw) {
  auto shape = nchw.getShape();
  return nchw.clone({shape[0], shape[2], shape[3], shape[1]});
}

/// A per-dim NCHW list (a slice's starts, the begin or end pads) in NHWC
/// order.
SmallVector<int64_t> perDimChannelsLast(ArrayRef<int64_t> nchw) {
  SmallVector<int64_t> nhwc;
  for (int64_t d : kToChannelsLast)
    nhwc.push_back(nchw[d]);
  return nhwc;
}

/// A pad's begin then end pads of NCHW dims, for the NHWC dims.
SmallVector<int64_t> padsChannelsLast(ArrayRef<int64_t> pads) {
  SmallVector<int64_t> nhwc = perDimChannelsLast(pads.take_front(4));
  llvm::append_range(nhwc, perDimChannelsLast(pads.drop_front(4)));
  return nhwc;
}

/// Replaces `op`'s NCHW result by the transpose back of `moved`, what the
/// op now computes in NHWC; the transpose claims the op's ONNX value.
void replaceByTransposeBack(PatternRewriter &rewriter, Operation *op,
                            Value moved) {
  rewriter.replaceOpWithNewOp<TransposeOp>(
      op, op->getResult(0).getType(), moved,
      rewriter.getDenseI64ArrayAttr(kToChannelsFirst));
}

/// A convolution this pass computes on NHWC activations: 2-D, static
/// shapes, NCHW (depthwise ones too: their windows read neighbouring
/// channels in neighbouring threads).
bool isConvertible(ConvOp conv) {
  auto inType = dyn_cast<RankedTensorType>(conv.getInput().getType());
  return !conv.getChannelsLast() && inType && inType.getRank() == 4 &&
         inType.hasStaticShape() && conv.getType().hasStaticShape();
}

/// `value` transposed to NHWC, one transpose per value, placed right after
/// its definition so that every convolution reading it can use it.
Value channelsLastOf(Value value, DenseMap<Value, Value> &transposed) {
  Value &entry = transposed[value];
  if (entry)
    return entry;
  OpBuilder b(value.getContext());
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
  entry =
      transposeTo(b, withoutOnnxValues(value.getLoc()), value, kToChannelsLast);
  return entry;
}

void convertToChannelsLast(ConvOp conv, DenseMap<Value, Value> &transposed) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  // A 16-bit input widened for the convolution (--precision) is
  // transposed as it is and widened after: the transpose moves half the
  // bytes, and the widening stays the convolution's prologue.
  Value input = conv.getInput();
  Value stored = storedValue(input);
  Value narrow = channelsLastOf(stored, transposed);
  if (stored != input)
    narrow = CastOp::create(b, withoutOnnxValues(input.getLoc()),
                            cast<RankedTensorType>(narrow.getType())
                                .clone(getElementTypeOrSelf(input.getType())),
                            narrow);
  input = narrow;
  auto converted = cast<ConvOp>(b.clone(*conv));
  converted->setOperand(0, input);
  converted.setChannelsLast(true);
  converted.getResult().setType(channelsLastType(conv.getType()));
  converted->setLoc(withoutOnnxValues(loc));
  // The transpose back claims the convolution's ONNX value.
  Value restored = transposeTo(b, loc, converted, kToChannelsFirst);
  conv.getResult().replaceAllUsesWith(restored);
  conv.erase();
}

/// `operand` reshaped to `shape` (a broadcast operand in channels-last
/// order). A 16-bit constant widened to float32 (--precision=f16: a
/// normalization's scale) is reshaped before its widening, so that the
/// reshape folds into the constant and the widening stays one op that the
/// consumer's kernel absorbs; reshaped after, the widening was a kernel of
/// its own per constant (paddle2onnx's PicoDet: 377 of them).
Value broadcastInChannelsLast(PatternRewriter &rewriter, Value operand,
                              ArrayRef<int64_t> shape) {
  Location loc = withoutOnnxValues(operand.getLoc());
  auto type = cast<RankedTensorType>(operand.getType());
  auto widen = operand.getDefiningOp<CastOp>();
  if (widen && widen.getInput().getDefiningOp<ConstantOp>()) {
    Value input = widen.getInput();
    Value reshaped = ReshapeOp::create(
        rewriter, loc, cast<RankedTensorType>(input.getType()).clone(shape),
        input);
    return CastOp::create(rewriter, loc, type.clone(shape), reshaped);
  }
  return ReshapeOp::create(rewriter, loc, type.clone(shape), operand);
}

/// The NHWC shape of an operand that an elementwise op broadcasts to its
/// NCHW result, when that is a reshape: the operand's shape, ones prepended
/// to rank 4, may only move dims of size 1 (a scalar, a per-channel bias
/// [C, 1, 1] -> [1, 1, 1, C]).
std::optional<SmallVector<int64_t>> broadcastShapeInChannelsLast(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > 4)
    return std::nullopt;
  SmallVector<int64_t> nchw(4 - type.getRank(), 1);
  llvm::append_range(nchw, type.getShape());
  if (!movesOnlyUnitDims(nchw, kToChannelsLast))
    return std::nullopt;
  return perDimChannelsLast(nchw);
}

/// op(transpose<NHWC->NCHW>(a), ...) -> transpose<NHWC->NCHW>(op(a, ...))
/// for an elementwise op whose operands are all such transposes of one
/// shape, or scalars.
struct SinkThroughElementwise : public RewritePattern {
  SinkThroughElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || isa<ExpandOp>(op) || op->getNumResults() != 1)
      return failure();
    // A widening cast moves the transpose to values twice as wide: only
    // where the layout carries on past its users.
    if (isWidened(op->getResult(0)) &&
        !llvm::all_of(op->getUsers(), [](Operation *user) {
          return isElementwise(user) ||
                 isa<ConvOp, PadOp, SliceOp, MaxPoolOp, AveragePoolOp,
                     ReduceMeanOp, ReduceMaxOp, ReduceSumOp>(user);
        }))
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || resultType.getRank() != 4 ||
        !resultType.hasStaticShape())
      return failure();
    // Every check before the first new op: a pattern that fails must leave
    // the IR as it was.
    SmallVector<Value> sources;
    SmallVector<std::optional<SmallVector<int64_t>>> broadcastShapes;
    bool anyTransposed = false;
    for (Value operand : op->getOperands()) {
      Value source = channelsLastSource(operand);
      if (source && cast<RankedTensorType>(operand.getType()).getShape() !=
                        resultType.getShape())
        source = {};
      sources.push_back(source);
      anyTransposed |= bool(source);
      broadcastShapes.push_back(source ? std::nullopt
                                       : broadcastShapeInChannelsLast(operand));
      if (!source && !broadcastShapes.back())
        return failure();
    }
    if (!anyTransposed)
      return failure();
    SmallVector<Value> operands;
    for (auto [operand, source, shape] :
         llvm::zip(op->getOperands(), sources, broadcastShapes)) {
      auto type = cast<RankedTensorType>(operand.getType());
      if (source)
        operands.push_back(source);
      else if (type.getShape() == ArrayRef(*shape))
        operands.push_back(operand);
      else
        operands.push_back(broadcastInChannelsLast(rewriter, operand, *shape));
    }
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(operands);
    moved->getResult(0).setType(channelsLastType(resultType));
    moved->setLoc(withoutOnnxValues(op->getLoc()));
    replaceByTransposeBack(rewriter, op, moved->getResult(0));
    return success();
  }
};

/// pad(transpose<NHWC->NCHW>(a)) -> transpose<NHWC->NCHW>(pad(a)), the
/// pads permuted alike.
struct SinkThroughPad : public OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PadOp pad,
                                PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(pad.getInput());
    auto resultType = dyn_cast<RankedTensorType>(pad.getType());
    if (!source || !resultType || !resultType.hasStaticShape())
      return failure();
    auto moved = PadOp::create(
        rewriter, withoutOnnxValues(pad.getLoc()), channelsLastType(resultType),
        source, rewriter.getDenseI64ArrayAttr(padsChannelsLast(pad.getPads())),
        pad.getModeAttr(), pad.getValueAttr());
    replaceByTransposeBack(rewriter, pad, moved);
    return success();
  }
};

/// transpose<NCHW->NHWC>(pad(a)) -> pad(transpose<NCHW->NHWC>(a)) for a pad
/// only the transpose reads: where a chain of convolutions starts with a
/// padded input (kiln-split-conv-padding's), the transpose then meets the
/// value before the pad, which other convolutions may read in NHWC too.
struct HoistThroughPad : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto pad = transpose.getInput().getDefiningOp<PadOp>();
    if (transpose.getPerm() != ArrayRef(kToChannelsLast) || !pad ||
        !pad->hasOneUse())
      return failure();
    auto inType = dyn_cast<RankedTensorType>(pad.getInput().getType());
    if (!inType || !inType.hasStaticShape())
      return failure();
    // Another convolution may read the pad's input in NHWC already.
    Value input;
    for (Operation *user : pad.getInput().getUsers())
      if (auto existing = dyn_cast<TransposeOp>(user);
          existing && existing.getPerm() == ArrayRef(kToChannelsLast) &&
          existing->isBeforeInBlock(pad))
        input = existing;
    if (!input)
      input = transposeTo(rewriter, transpose.getLoc(), pad.getInput(),
                          kToChannelsLast);
    rewriter.replaceOpWithNewOp<PadOp>(
        transpose, transpose.getType(), input,
        rewriter.getDenseI64ArrayAttr(padsChannelsLast(pad.getPads())),
        pad.getModeAttr(), pad.getValueAttr());
    return success();
  }
};

/// The groups of consecutive dims of `source` whose products are the dims
/// of `merged`, when a reshape from one to the other only merges dims.
std::optional<SmallVector<ReassociationIndices>>
mergedGroups(ArrayRef<int64_t> source, ArrayRef<int64_t> merged) {
  SmallVector<ReassociationIndices> groups;
  size_t d = 0;
  for (int64_t size : merged) {
    ReassociationIndices group;
    int64_t product = 1;
    while (d < source.size() && (group.empty() || product < size)) {
      product *= source[d];
      group.push_back(d++);
    }
    if (group.empty() || product != size)
      return std::nullopt;
    groups.push_back(group);
  }
  for (; d < source.size(); ++d) {
    if (source[d] != 1)
      return std::nullopt;
    groups.back().push_back(d);
  }
  return groups;
}

/// transpose<NCHW->NHWC>(reshape(transpose<p>(a))) where the reshape only
/// merges dims (kiln-space-to-depth-strided-convs' stem: [N, C, 2, 2, H,
/// W] -> [N, 4C, H, W]): the merged groups are permuted instead, ahead of
/// the reshape, which composes with p. One transpose kernel of the image
/// where there were two.
struct HoistThroughMergingReshape : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto reshape = transpose.getInput().getDefiningOp<ReshapeOp>();
    if (transpose.getPerm() != ArrayRef(kToChannelsLast) || !reshape ||
        !reshape->hasOneUse())
      return failure();
    auto inner = reshape.getInput().getDefiningOp<TransposeOp>();
    auto innerType = dyn_cast<RankedTensorType>(reshape.getInput().getType());
    auto mergedType = dyn_cast<RankedTensorType>(reshape.getType());
    if (!inner || !inner->hasOneUse() || !innerType || !mergedType ||
        !innerType.hasStaticShape() || !mergedType.hasStaticShape())
      return failure();
    std::optional<SmallVector<ReassociationIndices>> groups =
        mergedGroups(innerType.getShape(), mergedType.getShape());
    if (!groups)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t group : kToChannelsLast)
      llvm::append_range(perm, (*groups)[group]);
    Value permuted =
        transposeTo(rewriter, transpose.getLoc(), reshape.getInput(), perm);
    rewriter.replaceOpWithNewOp<ReshapeOp>(transpose, transpose.getType(),
                                           permuted);
    return success();
  }
};

/// slice(transpose<NHWC->NCHW>(a)) -> transpose<NHWC->NCHW>(slice(a)), the
/// starts and steps permuted alike (kiln-split-pointwise-conv-stride's
/// subsampling).
struct SinkThroughSlice : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(slice.getInput());
    auto resultType = dyn_cast<RankedTensorType>(slice.getType());
    if (!source || !resultType || !resultType.hasStaticShape())
      return failure();
    auto moved = SliceOp::create(
        rewriter, withoutOnnxValues(slice.getLoc()),
        channelsLastType(resultType), source,
        rewriter.getDenseI64ArrayAttr(perDimChannelsLast(slice.getStarts())),
        rewriter.getDenseI64ArrayAttr(perDimChannelsLast(slice.getSteps())));
    replaceByTransposeBack(rewriter, slice, moved);
    return success();
  }
};

/// pool(transpose<NHWC->NCHW>(a)) -> transpose<NHWC->NCHW>(pool_cl(a)):
/// max and average pooling window the spatial dims of either layout.
template <typename PoolOp>
struct SinkThroughPool : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(PoolOp pool,
                                PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(pool.getInput());
    auto resultType = dyn_cast<RankedTensorType>(pool.getType());
    if (!source || pool.getChannelsLast() || !resultType ||
        !resultType.hasStaticShape())
      return failure();
    auto moved = cast<PoolOp>(rewriter.clone(*pool));
    moved->setOperand(0, source);
    moved.setChannelsLast(true);
    moved.getResult().setType(channelsLastType(resultType));
    moved->setLoc(withoutOnnxValues(pool.getLoc()));
    replaceByTransposeBack(rewriter, pool, moved.getResult());
    return success();
  }
};

/// reduce(transpose<NHWC->NCHW>(a)) over spatial dims (a global pooling):
/// the same reduction of a, the axes permuted, where the dims it keeps lie
/// in the same order in both layouts. With keepdims the reduced dims stay
/// as 1s, so the transpose back remains (UnitDimTransposeToReshape then
/// makes it a reshape once nothing elementwise reads it); without, the
/// results are equal.
template <typename ReduceOp>
struct SinkThroughReduction : public OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp reduce,
                                PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(reduce.getInput());
    auto resultType = dyn_cast<RankedTensorType>(reduce.getType());
    if (!source || !resultType || !resultType.hasStaticShape())
      return failure();
    SmallVector<int64_t> axes;
    for (int64_t a : reduce.getAxes())
      axes.push_back(kToChannelsFirst[a]);
    llvm::sort(axes);
    auto sourceType = cast<RankedTensorType>(source.getType());
    SmallVector<int64_t> shape;
    SmallVector<int64_t> keptOrder;
    for (int64_t d = 0; d < 4; ++d) {
      bool reduced = llvm::is_contained(axes, d);
      if (reduced && !reduce.getKeepdims())
        continue;
      shape.push_back(reduced ? 1 : sourceType.getDimSize(d));
      if (!reduced)
        keptOrder.push_back(d);
    }
    // The kept dims' NCHW order, as NHWC dims, must be the NHWC order.
    SmallVector<int64_t> keptInOnnxOrder;
    for (int64_t i = 0; i < 4; ++i)
      if (!llvm::is_contained(reduce.getAxes(), i))
        keptInOnnxOrder.push_back(kToChannelsFirst[i]);
    if (keptInOnnxOrder != keptOrder)
      return failure();
    Value moved = ReduceOp::create(
        rewriter, withoutOnnxValues(reduce.getLoc()), resultType.clone(shape),
        source, rewriter.getDenseI64ArrayAttr(axes), reduce.getKeepdimsAttr());
    if (reduce.getKeepdims())
      replaceByTransposeBack(rewriter, reduce, moved);
    else
      rewriter.replaceOp(reduce, moved);
    return success();
  }
};

/// A transpose back to NCHW that moves only dims of size 1 (a global
/// pooling's [N, 1, 1, C]) is a reshape: no kernel. Once no elementwise op
/// reads it, so that those take the transpose along first (a narrowing
/// cast then stays in the pooling's kernel).
struct UnitDimTransposeToReshape : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(transpose);
    if (!source || llvm::any_of(transpose->getUsers(), [](Operation *user) {
          return isElementwise(user);
        }))
      return failure();
    if (!movesOnlyUnitDims(cast<RankedTensorType>(source.getType()).getShape(),
                           kToChannelsFirst))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(transpose, transpose.getType(),
                                           source);
    return success();
  }
};

/// transpose<q>(transpose<p>(a)) -> transpose<p o q>(a): the pair between
/// two channels-last convolutions becomes the identity, which folds away.
struct ComposeTransposes : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> composed;
    for (int64_t d : outer.getPerm())
      composed.push_back(inner.getPerm()[d]);
    rewriter.replaceOpWithNewOp<TransposeOp>(
        outer, outer.getType(), inner.getInput(),
        rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};

/// Rewrites every convertible convolution of `func` and moves the
/// transposes; the number converted.
FailureOr<int64_t> convertFunction(func::FuncOp func) {
  SmallVector<ConvOp> convs;
  func.walk([&](ConvOp conv) {
    if (isConvertible(conv))
      convs.push_back(conv);
  });
  DenseMap<Value, Value> transposed;
  for (ConvOp conv : convs)
    convertToChannelsLast(conv, transposed);
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  patterns.add<SinkThroughElementwise>(ctx);
  patterns
      .add<SinkThroughPad, HoistThroughPad, HoistThroughMergingReshape,
           SinkThroughSlice, SinkThroughPool<MaxPoolOp>,
           SinkThroughPool<AveragePoolOp>, SinkThroughReduction<ReduceMeanOp>,
           SinkThroughReduction<ReduceMaxOp>, SinkThroughReduction<ReduceSumOp>,
           UnitDimTransposeToReshape, ComposeTransposes>(ctx);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  return int64_t(convs.size());
}

/// The transposes between layouts left in `func`: each a kernel that
/// moves its whole tensor.
int64_t countLayoutTransposes(func::FuncOp func) {
  int64_t count = 0;
  func.walk([&](TransposeOp transpose) {
    ArrayRef<int64_t> perm = transpose.getPerm();
    count += (perm == ArrayRef(kToChannelsLast) ||
              perm == ArrayRef(kToChannelsFirst)) &&
             !transpose.getInput().getDefiningOp<ConstantOp>();
  });
  return count;
}

struct ChannelsLastActivationsPass
    : public kiln::impl::ChannelsLastActivationsBase<
          ChannelsLastActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // A trial on a copy first: each transpose left where a chain of
    // convolutions starts or ends is a kernel of its own, so a graph whose
    // chains are short (a single convolution between two transposes)
    // keeps NCHW.
    int64_t before = countLayoutTransposes(func);
    auto trial = cast<func::FuncOp>(func->clone());
    FailureOr<int64_t> converted = convertFunction(trial);
    int64_t added = countLayoutTransposes(trial) - before;
    trial->erase();
    if (failed(converted))
      return signalPassFailure();
    if (*converted == 0 || minConvsPerTranspose * added > *converted)
      return;
    if (failed(convertFunction(func)))
      signalPassFailure();
  }
};

} // namespace
