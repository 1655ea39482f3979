//===- DataMovement.cpp - transpose, concat, reshape, gather, slice, pad --===//
#include "Common.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

/// An ONNX index as an `index` value: negative counts from the end, and
/// out-of-range values are clamped so that a bad index cannot read outside
/// the tensor.
Value clampIndex(OpBuilder &b, Location l, Value raw, int64_t size) {
  Value index = arith::IndexCastOp::create(b, l, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value negative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = arith::AddIOp::create(
      b, l, index, arith::ConstantIndexOp::create(b, l, size));
  index = arith::SelectOp::create(b, l, negative, wrapped, index);
  Value last = arith::ConstantIndexOp::create(b, l, size - 1);
  return arith::MaxSIOp::create(b, l, zero,
                                arith::MinSIOp::create(b, l, index, last));
}

/// A parallel generic over `resultType` that copies `input` read through
/// `inputMap`.
Value copyThroughMap(OpBuilder &b, Location loc, Value input,
                     AffineMap inputMap, RankedTensorType resultType) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps = {inputMap, b.getMultiDimIdentityMap(rank)};
  return linalg::GenericOp::create(
             b, loc, resultType, input, emptyTensor(b, loc, resultType), maps,
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Data movement and constants
//===----------------------------------------------------------------------===//

/// A parallel generic over `resultType` whose elements are `source` read at
/// the coordinates `coords` builds from the loop indices and the elements of
/// `inputs` (read through `inputMaps`): gathers, reversed slices, pads.
using CoordsFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;
Value readAtCoords(OpBuilder &b, Location loc, RankedTensorType resultType,
                   Value source, ValueRange inputs,
                   ArrayRef<AffineMap> inputMaps, CoordsFn coords) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps.begin(), inputMaps.end());
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
             b, loc, resultType, inputs, emptyTensor(b, loc, resultType), maps,
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               SmallVector<Value> at = coords(nb, l, args.drop_back());
               linalg::YieldOp::create(
                   nb, l,
                   tensor::ExtractOp::create(nb, l, source, at).getResult());
             })
      .getResult(0);
}

struct TransposeLowering : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), op.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

/// The element of a concatenation along `axis` at `at` (its result's
/// coordinates), read from input `piece` (whose first position along the
/// axis is starts[piece]) or a later one: a chain of scf.if, one per
/// boundary, so that only the input that holds the element is read.
Value readConcatElement(OpBuilder &b, Location l, ValueRange inputs,
                        ArrayRef<int64_t> starts, ArrayRef<Value> at,
                        int64_t axis, size_t piece) {
  auto readPiece = [&](OpBuilder &nb, Location nl) -> Value {
    SmallVector<Value> local(at);
    if (starts[piece] != 0)
      local[axis] = arith::SubIOp::create(
          nb, nl, at[axis],
          arith::ConstantIndexOp::create(nb, nl, starts[piece]));
    return tensor::ExtractOp::create(nb, nl, inputs[piece], local);
  };
  if (piece + 1 == inputs.size())
    return readPiece(b, l);
  Value inPiece = arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::ult, at[axis],
      arith::ConstantIndexOp::create(b, l, starts[piece + 1]));
  auto choice = scf::IfOp::create(
      b, l, inPiece,
      [&](OpBuilder &nb, Location nl) {
        scf::YieldOp::create(nb, nl, readPiece(nb, nl));
      },
      [&](OpBuilder &nb, Location nl) {
        scf::YieldOp::create(
            nb, nl,
            readConcatElement(nb, nl, inputs, starts, at, axis, piece + 1));
      });
  return choice.getResult(0);
}

/// Concatenations become insert_slices of each input into the result;
/// with `byElement` (the GPU targets), one that other ops of its kernel
/// consume becomes instead a parallel generic whose body reads each element
/// from the input that holds it (readConcatElement). Tiling fuses that
/// generic into its consumers' tiles like any elementwise producer, where
/// the insert_slices would stay outside the tiled loop: their copies into a
/// temporary made the whole kernel one GPU thread (ViT's class token
/// concatenated before the position embedding's add: 151296 elements).
struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  ConcatLowering(MLIRContext *context, bool byElement)
      : OpRewritePattern(context), byElement(byElement) {}
  bool byElement;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (byElement && hasConsumerInKernel(op)) {
      rewriter.replaceOp(op, concatByElement(rewriter, op));
      return success();
    }
    if (succeeded(copyIntoOutput(rewriter, op)))
      return success();
    Value result = emptyTensor(rewriter, loc, op.getType());
    forEachPlacedInput(op, [&](Value input, ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> strides) {
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, ValueRange{}, ValueRange{},
          ValueRange{}, offsets, sizes, strides);
    });
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Calls `place` with each input that holds elements and its offsets,
  /// sizes and strides in the result. An input empty along the axis holds
  /// none, and its offset (the result's extent, when it comes last) is out
  /// of bounds.
  static void
  forEachPlacedInput(ConcatOp op,
                     function_ref<void(Value, ArrayRef<int64_t>,
                                       ArrayRef<int64_t>, ArrayRef<int64_t>)>
                         place) {
    int64_t rank = op.getType().getRank(), axis = op.getAxis(), offset = 0;
    for (Value input : op.getInputs()) {
      ArrayRef<int64_t> shape = tensorTypeOf(input).getShape();
      if (shape[axis] == 0)
        continue;
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets[axis] = offset;
      place(input, offsets, shape, strides);
      offset += shape[axis];
    }
  }

  /// A concatenation that is only the kernel's output: each input is
  /// written to its slice of the output buffer. One-shot bufferization's
  /// analysis of the chain of insert_slices grows with the cube of its
  /// length (an LSTM's outputs of 256 steps: two minutes); these copies
  /// need none.
  static LogicalResult copyIntoOutput(PatternRewriter &rewriter, ConcatOp op) {
    if (!op->hasOneUse())
      return failure();
    auto write =
        dyn_cast<bufferization::MaterializeInDestinationOp>(*op->user_begin());
    auto output =
        write ? dyn_cast<TypedValue<MemRefType>>(write.getDest()) : nullptr;
    if (!output || !write.getRestrict() || !write.getWritable())
      return failure();
    Location loc = op.getLoc();
    forEachPlacedInput(op, [&](Value input, ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> strides) {
      Value slice = memref::SubViewOp::create(rewriter, loc, output, offsets,
                                              sizes, strides);
      auto copy = bufferization::MaterializeInDestinationOp::create(
          rewriter, loc, input, slice);
      copy.setRestrict(true);
      copy.setWritable(true);
    });
    rewriter.eraseOp(write);
    rewriter.eraseOp(op);
    return success();
  }

  /// True when an op of the kernel computes with the concatenation (not
  /// only writes it to the kernel's output).
  static bool hasConsumerInKernel(ConcatOp op) {
    return llvm::any_of(op->getUsers(), [](Operation *user) {
      return !isa<bufferization::MaterializeInDestinationOp, func::ReturnOp>(
          user);
    });
  }

  static Value concatByElement(PatternRewriter &rewriter, ConcatOp op) {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank(), axis = op.getAxis(), start = 0;
    // Inputs empty along the axis hold no element.
    SmallVector<Value> inputs;
    SmallVector<int64_t> starts;
    for (Value input : op.getInputs()) {
      int64_t extent = tensorTypeOf(input).getDimSize(axis);
      if (extent == 0)
        continue;
      inputs.push_back(input);
      starts.push_back(start);
      start += extent;
    }
    return linalg::GenericOp::create(
               rewriter, loc, type, ValueRange{},
               emptyTensor(rewriter, loc, type),
               SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
               SmallVector<IteratorType>(rank, IteratorType::parallel),
               [&](OpBuilder &b, Location l, ValueRange) {
                 SmallVector<Value> at;
                 for (int64_t d = 0; d < rank; ++d)
                   at.push_back(linalg::IndexOp::create(b, l, d));
                 linalg::YieldOp::create(
                     b, l,
                     readConcatElement(b, l, inputs, starts, at, axis, 0));
               })
        .getResult(0);
  }
};

struct ReshapeLowering : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    // Collapse to 1-D, then expand: both are views after bufferization.
    Location loc = op.getLoc();
    auto inType = op.getInput().getType();
    auto flatType = RankedTensorType::get({inType.getNumElements()},
                                          inType.getElementType());
    Value flat = op.getInput();
    if (inType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, flatType, flat,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, inType.getRank()))});
    Value result = flat;
    if (op.getType().getRank() != 1)
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, op.getType(), flat,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, op.getType().getRank()))});
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConstantLowering : public OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getValue());
    return success();
  }
};

/// Gather: a parallel generic over the result that reads its index operand
/// through a projected map and extracts from the input at that index.
struct GatherLowering : public OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    int64_t axis = op.getAxis();
    int64_t indexRank = op.getIndices().getType().getRank();
    int64_t rank = op.getType().getRank();
    int64_t axisSize = op.getInput().getType().getDimSize(axis);
    AffineMap indexMap =
        AffineMap::get(rank, 0, dimRange(ctx, axis, indexRank), ctx);
    rewriter.replaceOp(
        op,
        readAtCoords(rewriter, op.getLoc(), op.getType(), op.getInput(),
                     op.getIndices(), indexMap,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       SmallVector<Value> coords;
                       for (int64_t d = 0; d < axis; ++d)
                         coords.push_back(linalg::IndexOp::create(b, l, d));
                       coords.push_back(clampIndex(b, l, args[0], axisSize));
                       for (int64_t d = axis + indexRank; d < rank; ++d)
                         coords.push_back(linalg::IndexOp::create(b, l, d));
                       return coords;
                     }));
    return success();
  }
};

/// GatherElements: the index operand has the result's shape; each element
/// replaces its `axis` coordinate by the (normalized, clamped) index.
struct GatherElementsLowering : public OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank(), axis = op.getAxis();
    int64_t axisSize = op.getInput().getType().getDimSize(axis);
    rewriter.replaceOp(
        op, readAtCoords(rewriter, op.getLoc(), op.getType(), op.getInput(),
                         op.getIndices(), rewriter.getMultiDimIdentityMap(rank),
                         [&](OpBuilder &b, Location l, ValueRange args) {
                           SmallVector<Value> coords;
                           for (int64_t d = 0; d < rank; ++d)
                             coords.push_back(
                                 d == axis
                                     ? clampIndex(b, l, args[0], axisSize)
                                     : (Value)linalg::IndexOp::create(b, l, d));
                           return coords;
                         }));
    return success();
  }
};

/// How a scatter combines the value already there with an update.
Value scatterCombine(OpBuilder &b, Location l, StringRef reduction, Value acc,
                     Value update) {
  bool isFloat = isa<FloatType>(acc.getType());
  if (reduction == "add")
    return isFloat ? (Value)arith::AddFOp::create(b, l, acc, update)
                   : (Value)arith::AddIOp::create(b, l, acc, update);
  if (reduction == "mul")
    return isFloat ? (Value)arith::MulFOp::create(b, l, acc, update)
                   : (Value)arith::MulIOp::create(b, l, acc, update);
  if (reduction == "max")
    return isFloat ? (Value)arith::MaximumFOp::create(b, l, acc, update)
                   : (Value)arith::MaxSIOp::create(b, l, acc, update);
  if (reduction == "min")
    return isFloat ? (Value)arith::MinimumFOp::create(b, l, acc, update)
                   : (Value)arith::MinSIOp::create(b, l, acc, update);
  return update;
}

/// ScatterND as a generic over (result position p, update position q): p
/// takes update q when the index tuple of q's slice addresses p's leading k
/// coordinates and their trailing coordinates agree.
struct ScatterNDLowering : public OpRewritePattern<ScatterNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterNDOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    auto inShape = op.getType().getShape();
    int64_t rank = inShape.size();
    int64_t updateRank = op.getUpdates().getType().getRank();
    int64_t k = op.getIndices().getType().getShape().back();
    int64_t outer = updateRank - (rank - k); // index tuples' dims
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank + updateRank, 0, dimRange(ctx, rank, updateRank),
                       ctx),
        AffineMap::get(rank + updateRank, 0, dimRange(ctx, 0, rank), ctx)};
    SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    iterators.append(updateRank, IteratorType::reduction);
    Value indices = op.getIndices();
    StringRef reduction = op.getReduction();
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), op.getType(), op.getUpdates(), op.getInput(),
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value hit = arith::ConstantIntOp::create(b, l, 1, 1);
          SmallVector<Value> at;
          for (int64_t d = 0; d < outer; ++d)
            at.push_back(linalg::IndexOp::create(b, l, rank + d));
          at.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            at.back() = arith::ConstantIndexOp::create(b, l, j);
            Value raw = tensor::ExtractOp::create(b, l, indices, at);
            Value target = clampIndex(b, l, raw, inShape[j]);
            hit = arith::AndIOp::create(
                b, l, hit,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, target,
                                      linalg::IndexOp::create(b, l, j)));
          }
          for (int64_t t = 0; t < rank - k; ++t)
            hit = arith::AndIOp::create(
                b, l, hit,
                arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq,
                    linalg::IndexOp::create(b, l, k + t),
                    linalg::IndexOp::create(b, l, rank + outer + t)));
          Value acc = args[1];
          Value combined = scatterCombine(b, l, reduction, acc, args[0]);
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, hit, combined, acc).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// ScatterElements as a generic over (result position p, update position q):
/// p takes update q when q addresses it. Quadratic in size, which is fine
/// for the index-sized tensors it is used on; later updates win.
struct ScatterElementsLowering : public OpRewritePattern<ScatterElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterElementsOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    int64_t rank = op.getType().getRank(), axis = op.getAxis();
    int64_t axisSize = op.getType().getDimSize(axis);
    SmallVector<AffineMap> maps = {
        AffineMap::get(2 * rank, 0, dimRange(ctx, rank, rank), ctx),
        AffineMap::get(2 * rank, 0, dimRange(ctx, rank, rank), ctx),
        AffineMap::get(2 * rank, 0, dimRange(ctx, 0, rank), ctx)};
    SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    iterators.append(rank, IteratorType::reduction);
    StringRef reduction = op.getReduction();
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), op.getType(),
        ValueRange{op.getIndices(), op.getUpdates()}, op.getInput(), maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value target = clampIndex(b, l, args[0], axisSize);
          Value hit =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, target,
                                    linalg::IndexOp::create(b, l, axis));
          for (int64_t d = 0; d < rank; ++d) {
            if (d == axis)
              continue;
            Value same =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                      linalg::IndexOp::create(b, l, d),
                                      linalg::IndexOp::create(b, l, rank + d));
            hit = arith::AndIOp::create(b, l, hit, same);
          }
          Value acc = args[2];
          Value combined = scatterCombine(b, l, reduction, acc, args[1]);
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, hit, combined, acc).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Slices with positive steps are tensor.extract_slice (a view once
/// bufferized); with a negative step, a generic computes each source index.
/// A generic cannot read the input through `d * step + start` maps: linalg
/// would infer its loop bounds from an identity dim of the input.
/// `op` (positive steps) as a parallel generic whose input map is
/// d_i -> starts_i + steps_i * d_i.
Value stridedCopy(OpBuilder &b, Location loc, SliceOp op) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = op.getType().getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(getAffineDimExpr(d, ctx) * op.getSteps()[d] +
                    op.getStarts()[d]);
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, ctx),
                                 b.getMultiDimIdentityMap(rank)};
  return linalg::GenericOp::create(
             b, loc, op.getType(), op.getInput(),
             emptyTensor(b, loc, op.getType()), maps,
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

struct SliceLowering : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto starts = op.getStarts(), steps = op.getSteps();
    auto sizes = op.getType().getShape();
    if (llvm::all_of(steps, [](int64_t s) { return s == 1; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, op.getType(), op.getInput(), ValueRange{}, ValueRange{},
          ValueRange{}, starts, sizes, steps);
      return success();
    }
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; }) &&
        op.getType().hasStaticShape()) {
      // A strided slice as a generic reading start + step * i: unlike an
      // extract_slice, its kernel can be split into workgroups (a
      // subsampling kernel of 256x28x28 ran on one thread: 0.22 ms).
      rewriter.replaceOp(op, stridedCopy(rewriter, loc, op));
      return success();
    }
    int64_t rank = op.getType().getRank();
    rewriter.replaceOp(
        op,
        readAtCoords(rewriter, loc, op.getType(), op.getInput(), {}, {},
                     [&](OpBuilder &b, Location l, ValueRange) {
                       SmallVector<Value> coords;
                       for (int64_t d = 0; d < rank; ++d) {
                         Value i = linalg::IndexOp::create(b, l, d);
                         Value scaled = arith::MulIOp::create(
                             b, l, i,
                             arith::ConstantIndexOp::create(b, l, steps[d]));
                         coords.push_back(arith::AddIOp::create(
                             b, l, scaled,
                             arith::ConstantIndexOp::create(b, l, starts[d])));
                       }
                       return coords;
                     }));
    return success();
  }
};

/// Tile: element i of each dim reads element i mod n of the input.
struct TileLowering : public OpRewritePattern<TileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TileOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    auto inShape = op.getInput().getType().getShape();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < (int64_t)inShape.size(); ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) %
                      std::max<int64_t>(inShape[d], 1));
    rewriter.replaceOp(
        op, copyThroughMap(rewriter, op.getLoc(), op.getInput(),
                           AffineMap::get(inShape.size(), 0, exprs, ctx),
                           op.getType()));
    return success();
  }
};

/// Pad: constant mode is tensor.pad; edge and reflect modes compute the
/// source index of every result element.
struct PadLowering : public OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = op.getType().getRank();
    auto pads = op.getPads();
    Type elementType = op.getType().getElementType();
    if (op.getMode() == "constant") {
      SmallVector<OpFoldResult> low, high;
      for (int64_t d = 0; d < rank; ++d) {
        low.push_back(rewriter.getIndexAttr(pads[d]));
        high.push_back(rewriter.getIndexAttr(pads[d + rank]));
      }
      Value value = scalarConst(rewriter, loc, elementType,
                                op.getValue().convertToDouble());
      rewriter.replaceOpWithNewOp<tensor::PadOp>(
          op, op.getType(), op.getInput(), low, high, value);
      return success();
    }
    bool reflect = op.getMode() == "reflect";
    auto inShape = op.getInput().getType().getShape();
    rewriter.replaceOp(
        op, readAtCoords(
                rewriter, loc, op.getType(), op.getInput(), {}, {},
                [&](OpBuilder &b, Location l, ValueRange) {
                  SmallVector<Value> coords;
                  for (int64_t d = 0; d < rank; ++d) {
                    Value i = arith::SubIOp::create(
                        b, l, linalg::IndexOp::create(b, l, d),
                        arith::ConstantIndexOp::create(b, l, pads[d]));
                    Value zero = arith::ConstantIndexOp::create(b, l, 0);
                    Value last =
                        arith::ConstantIndexOp::create(b, l, inShape[d] - 1);
                    if (reflect) {
                      // One reflection at each edge: -i before, 2*last - i
                      // after.
                      i = arith::MaxSIOp::create(
                          b, l, i, arith::SubIOp::create(b, l, zero, i));
                      Value twiceLast = arith::ConstantIndexOp::create(
                          b, l, 2 * (inShape[d] - 1));
                      i = arith::MinSIOp::create(
                          b, l, i, arith::SubIOp::create(b, l, twiceLast, i));
                    }
                    coords.push_back(arith::MaxSIOp::create(
                        b, l, zero, arith::MinSIOp::create(b, l, i, last)));
                  }
                  return coords;
                }));
    return success();
  }
};

} // namespace

void kiln::lowering::populateDataMovementPatterns(RewritePatternSet &patterns,
                                                  bool concatByElement) {
  patterns.add<ConcatLowering>(patterns.getContext(), concatByElement);
  patterns.add<TransposeLowering, ReshapeLowering, ConstantLowering,
               GatherLowering, GatherElementsLowering, ScatterElementsLowering,
               ScatterNDLowering, SliceLowering, TileLowering, PadLowering>(
      patterns.getContext());
}

void kiln::populateKilnToLinalgPatterns(RewritePatternSet &patterns,
                                        int64_t flattenImageRowsBelow,
                                        bool readWindowPaddingInPlace,
                                        bool concatByElement) {
  populateElementwisePatterns(patterns);
  populateContractionPatterns(patterns, flattenImageRowsBelow,
                              readWindowPaddingInPlace);
  populatePoolingPatterns(patterns, readWindowPaddingInPlace);
  populateReductionPatterns(patterns);
  populateDataMovementPatterns(patterns, concatByElement);
}
