//===- ConfigureCpuKernels.cpp - each CPU kernel's workgroups -------------===//
//
// The CPU's kernel config: which loop of a kernel's root op is split into
// workgroups, and in tiles of what size. kiln-tile-and-distribute applies it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/Interfaces/TilingInterface.h"

#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_CONFIGURECPUKERNELS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Iteration-space points of every tileable op of the kernel: the work that
/// the producers fused into the root's tiles add to it.
int64_t kernelWork(func::FuncOp func) {
  int64_t total = 0;
  func.walk([&](TilingInterface op) {
    OpBuilder builder(op);
    int64_t points = 1;
    for (Range range : op.getIterationDomain(builder))
      points *=
          std::max<int64_t>(getConstantIntValue(range.size).value_or(1), 1);
    total += points;
  });
  return total;
}

/// A root loop to split into workgroups, the multiple its tiles should
/// be, and how strictly.
struct Split {
  enum class Tiles {
    /// Equal tiles, multiples of the granularity where such divide the
    /// loop, else of fewer (evenTileSize).
    Even,
    /// Whole multiples, the last tile taking the rest (AMX blocks of an
    /// einsum's rows, the rest on vector tiles).
    WholeBlocks,
    /// Equal tiles that are whole multiples, else no split (a 1x1
    /// convolution's rows on AMX tiles, whose blocks need static extents).
    EvenMultiples,
  };
  int64_t loop, granularity;
  Tiles tiles = Tiles::Even;
  bool operator==(const Split &other) const {
    return loop == other.loop && granularity == other.granularity &&
           tiles == other.tiles;
  }
};

struct ConfigureCpuKernelsPass
    : public kiln::impl::ConfigureCpuKernelsBase<ConfigureCpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    setKernelConfig(getOperation(), [&](TilingInterface root) {
      std::optional<SmallVector<int64_t>> sizes = workgroupTileSizes(root);
      return sizes ? KernelConfigAttr::get(&getContext(), Tiling::Workgroups,
                                           *sizes)
                   : KernelConfigAttr();
    });
  }

  /// The tile sizes that split one loop of `root` into workgroups (0 for
  /// the others); none when the kernel runs as one workgroup.
  std::optional<SmallVector<int64_t>> workgroupTileSizes(TilingInterface root) {
    OpBuilder builder(root);
    SmallVector<Range> domain = root.getIterationDomain(builder);
    SmallVector<utils::IteratorType> iterators = root.getLoopIteratorTypes();
    int64_t innermost = -1;
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type == utils::IteratorType::parallel)
        innermost = i;
    // Workgroups split one loop, not one that a producing reduction
    // reduces (a Softmax over axis 1): each would recompute the reduction.
    llvm::SmallDenseSet<int64_t> reducedAxes =
        outerReducedAxes(root, innermost);
    int64_t dim = -1, extent = 0;
    for (auto [i, range] : llvm::enumerate(domain)) {
      std::optional<int64_t> size = getConstantIntValue(range.size);
      if (!size)
        return std::nullopt;
      if (dim < 0 && iterators[i] == utils::IteratorType::parallel &&
          *size > 1 && !reducedAxes.contains(i)) {
        dim = i;
        extent = *size;
      }
    }
    if (dim < 0 || !hasTileableResults(root))
      return std::nullopt;
    int64_t total = kernelWork(root->getParentOfType<func::FuncOp>());
    auto tileSizeFor = [&](int64_t extent, int64_t granularity, bool even) {
      int64_t wanted = std::min<int64_t>(
          {maxWorkgroups, extent,
           std::max<int64_t>(
               1, total / std::max<int64_t>(1, minWorkPerWorkgroup))});
      int64_t size = (extent + wanted - 1) / wanted;
      return even ? evenTileSize(extent, size, granularity)
                  : std::min<int64_t>(extent, size);
    };
    int64_t tileSize = 0;
    SmallVector<Split> splits = splitsAroundQuads(root, domain, quadRows);
    if (splits.empty())
      for (auto [loop, granularity] :
           splitsAroundRegisterTiles(root, domain, iterators))
        splits.push_back({loop, granularity});
    // The first split, in order of preference, whose even tiles make more
    // than one workgroup: a prime extent has no even tiles (SqueezeNet's
    // 109 output rows ran as one workgroup; its 96 filters split in 12).
    for (const Split &split : splits) {
      int64_t splitExtent = *getConstantIntValue(domain[split.loop].size);
      int64_t size =
          split.tiles == Split::Tiles::WholeBlocks
              ? llvm::alignTo(tileSizeFor(splitExtent, split.granularity,
                                          /*even=*/false),
                              split.granularity)
              : tileSizeFor(splitExtent, split.granularity, /*even=*/true);
      if (split.tiles == Split::Tiles::EvenMultiples &&
          size % split.granularity != 0)
        continue;
      if (size < splitExtent) {
        dim = split.loop;
        extent = splitExtent;
        tileSize = size;
        break;
      }
    }
    if (!tileSize) {
      // Without register tiles, any tiles; with them, none fit evenly.
      if (!splits.empty())
        return std::nullopt;
      tileSize = tileSizeFor(extent, 1, /*even=*/false);
    }
    int64_t tiles = (extent + tileSize - 1) / tileSize;
    if (tiles <= 1)
      return std::nullopt;

    SmallVector<int64_t> sizes(domain.size(), 0);
    sizes[dim] = tileSize;
    return sizes;
  }

  /// CPU: the root loop to split into workgroups, and the multiple of
  /// which its tiles must be, when the kernel computes a contraction that
  /// kiln-contract-with-vector-registers turns into register tiles
  /// (rows x vector). A loop outside those tiles (a convolution's output
  /// rows, a batch) is split first; otherwise the row loop, in multiples of
  /// `registerRows` so that every workgroup gets whole register tiles
  /// (also when the outer loop is shorter than kMinWorkgroups and the row
  /// loop has at least as many register tiles)
  /// (split one row per workgroup, each would run one-row tiles). The
  /// vector loop is split only when nothing else is, in whole tiles of two
  /// vectors. None when the kernel has no such
  /// contraction. `all` gets every candidate split (outer, row, vector).
  static constexpr int64_t kMinWorkgroups = 16;

  /// A tile size of at least `least` that divides `extent`: a tile that
  /// does not divide its loop gives every tile dynamic sizes, and register
  /// tiles need static ones (MobileNetV2's 1280 filters in tiles of 24 ran
  /// scalar loops; in tiles of 32, 8.7x faster). The smallest multiple of
  /// `granularity` that divides, unless it is over twice `least` and over
  /// one granule (too few workgroups): then the smallest divisor.
  static int64_t evenTileSize(int64_t extent, int64_t least,
                              int64_t granularity) {
    auto smallestDivisor = [&](int64_t step) {
      for (int64_t size = llvm::alignTo(least, step); size <= extent;
           size += step)
        if (extent % size == 0)
          return size;
      return extent;
    };
    int64_t aligned = smallestDivisor(granularity);
    if (aligned <= std::max(2 * least, granularity))
      return aligned;
    // Else a multiple of 8 (a half AVX-512 vector; a whole AVX one): 1000
    // classes in tiles of 40 (32 + 8 wide), not 20 (16 + 4).
    if (granularity % 8 == 0) {
      aligned = smallestDivisor(8);
      if (aligned <= 3 * least)
        return aligned;
    }
    return smallestDivisor(1);
  }

  /// The loops to split, most preferred first (see splitAroundRegisterTiles),
  /// each with the multiple its tiles must be; the others follow as
  /// fallbacks, for a preferred loop that has no even tiles.
  SmallVector<std::pair<int64_t, int64_t>>
  splitsAroundRegisterTiles(TilingInterface root, ArrayRef<Range> domain,
                            ArrayRef<utils::IteratorType> iterators) {
    SmallVector<std::pair<int64_t, int64_t>> splits;
    std::optional<std::pair<int64_t, int64_t>> preferred =
        splitAroundRegisterTiles(root, domain, iterators, splits);
    if (!preferred)
      return {};
    llvm::erase(splits, *preferred);
    splits.insert(splits.begin(), *preferred);
    return splits;
  }

  std::optional<std::pair<int64_t, int64_t>>
  splitAroundRegisterTiles(TilingInterface root, ArrayRef<Range> domain,
                           ArrayRef<utils::IteratorType> iterators,
                           SmallVectorImpl<std::pair<int64_t, int64_t>> &all) {
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    if (!rootOp || rootOp.getNumDpsInits() != 1)
      return std::nullopt;
    auto rootType = dyn_cast<ShapedType>(rootOp.getDpsInits()[0].getType());
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (!rootType || !rootOut.isProjectedPermutation())
      return std::nullopt;
    linalg::LinalgOp contraction;
    std::optional<VectorContractionLoops> loops;
    int found = 0;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      auto type = dyn_cast<ShapedType>(
          op.getDpsInits().empty() ? Type() : op.getDpsInits()[0].getType());
      if (!type || type.getShape() != rootType.getShape())
        return;
      if (auto match = matchVectorContraction(op)) {
        contraction = op;
        loops = match;
        ++found;
      }
    });
    if (found != 1)
      return std::nullopt;
    AffineMap out =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
    std::optional<std::pair<int64_t, int64_t>> outerSplit, rowSplit,
        vectorSplit;
    int64_t outerExtent = 0, rowTiles = 0;
    for (auto [r, expr] : llvm::enumerate(rootOut.getResults())) {
      int64_t rootLoop = cast<AffineDimExpr>(expr).getPosition();
      int64_t loop = cast<AffineDimExpr>(out.getResult(r)).getPosition();
      int64_t extent = *getConstantIntValue(domain[rootLoop].size);
      if (iterators[rootLoop] != utils::IteratorType::parallel || extent <= 1)
        continue;
      if (loop == loops->vector) {
        vectorSplit = {rootLoop, 2 * vectorWidth};
      } else if (loop == loops->rows) {
        rowSplit = {rootLoop, registerRows};
        rowTiles = extent / registerRows;
      } else if (!outerSplit) {
        // Two of the block loop (a convolution's output rows) per
        // workgroup, so that short vectors still make register tiles of
        // two rows (see blocksPerTile in ContractWithVectorRegisters).
        outerSplit = {rootLoop, loop == loops->block ? 2 : 1};
        outerExtent = extent;
      }
    }
    for (auto candidate : {outerSplit, rowSplit, vectorSplit})
      if (candidate)
        all.push_back(*candidate);
    // A short outer loop (a 7x7 feature map's 7 rows) would leave threads
    // idle: 7 workgroups on 2 threads run as 4 + 3. Many row tiles (2048
    // filters) split more evenly.
    if (outerSplit && rowSplit && outerExtent < kMinWorkgroups &&
        rowTiles >= kMinWorkgroups)
      return rowSplit;
    if (outerSplit)
      return outerSplit;
    // Each workgroup of a row split reads all of the vector input (a
    // matmul's B), each of a vector split all of the other: split so that
    // the larger one is read once (BERT's 768 x 3072 weights against 128
    // rows of activations: 4.2 -> 3.0 ms per matmul).
    if (rowSplit && vectorSplit &&
        operandBytes(contraction, loops->vectorInput) >
            operandBytes(contraction, 1 - loops->vectorInput) &&
        vectorTiles(domain, *vectorSplit) >= kMinWorkgroups)
      return vectorSplit;
    return rowSplit ? rowSplit : vectorSplit;
  }

  /// For a kernel of int8 quads (isInt8QuadEinsum): its panels, in whole
  /// register tiles of kQuadTilePanels, else its rows (M) in multiples of
  /// `quadRows` (a register tile's 4, or an AMX block's 16: whole blocks,
  /// the last tile shorter).
  /// Every workgroup then reads A (activations, in cache) and its own
  /// panels of the weights, once; split along M, each would read all of
  /// them and run tiles of fewer rows than a register tile holds.
  static SmallVector<Split> splitsAroundQuads(TilingInterface root,
                                              ArrayRef<Range> domain,
                                              int64_t quadRows) {
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    if (!rootOp || rootOp.getNumDpsInits() != 1)
      return {};
    linalg::LinalgOp einsum, conv;
    int64_t filters = -1, vector = -1;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      if (isInt8QuadEinsum(op))
        einsum = op;
      else if (isInt8QuadConv(op, &filters, &vector))
        conv = op;
    });
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (!einsum && conv)
      return splitsAroundQuadConv(rootOut, conv, filters, vector, domain,
                                  quadRows);
    if (!einsum || !rootOut.isProjectedPermutation() ||
        rootOut.getNumResults() !=
            cast<ShapedType>(einsum.getDpsInits()[0].getType()).getRank())
      return {};
    int64_t rank = rootOut.getNumResults();
    auto rootLoop = [&](int64_t result) {
      return int64_t(
          cast<AffineDimExpr>(rootOut.getResult(result)).getPosition());
    };
    Split byPanels{rootLoop(rank - 2), kQuadTilePanels};
    Split byRows{rootLoop(rank - 3), quadRows};
    if (quadRows == kAmxTileRows)
      byRows.tiles = Split::Tiles::WholeBlocks;
    SmallVector<Split> splits;
    for (const Split &split : {byPanels, byRows})
      if (getConstantIntValue(domain[split.loop].size).value_or(1) > 1)
        splits.push_back(split);
    return splits;
  }

  /// For a convolution of int8 quads (isInt8QuadConv): its filters in
  /// fours (the register tile's rows) when its weights outweigh its input
  /// (each workgroup reads its own filters' weights once: ResNet-50's 7x7
  /// layers, 2.4 MB of weights for 25 KB of pixels), else its output rows,
  /// else its row's outputs in whole register tiles; the others follow.
  /// A 1x1 convolution on AMX tiles (`quadRows` 16) splits its filters in
  /// whole blocks of 16, and its rows so that each workgroup's outputs
  /// are whole pairs of panels (4 rows of 56), equal tiles of both.
  static SmallVector<Split>
  splitsAroundQuadConv(AffineMap rootOut, linalg::LinalgOp conv,
                       int64_t filters, int64_t vector, ArrayRef<Range> domain,
                       int64_t quadRows) {
    AffineMap convOut = conv.getMatchingIndexingMap(conv.getDpsInitOperand(0));
    if (!rootOut.isProjectedPermutation() ||
        rootOut.getNumResults() != convOut.getNumResults())
      return {};
    int64_t rank = convOut.getNumResults();
    // The root's loop over the same output dim as the conv's loop `loop`.
    auto rootLoop = [&](int64_t loop) -> int64_t {
      std::optional<unsigned> result = convOut.getResultPosition(
          getAffineDimExpr(loop, convOut.getContext()));
      return cast<AffineDimExpr>(rootOut.getResult(*result)).getPosition();
    };
    int64_t rowsLoop =
        cast<AffineDimExpr>(rootOut.getResult(rank - 2)).getPosition();
    Split byFilters{rootLoop(filters), 4};
    Split byRows{rowsLoop, 1};
    Split byOutputs{rootLoop(vector), kQuadLanes * kQuadTilePanels};
    std::optional<int64_t> rowLength =
        getConstantIntValue(domain[rootLoop(vector)].size);
    // kiln-contract-int8-conv-quads takes C in whole tile rows on AMX.
    int64_t depth = int8PointwiseConvDepth(conv);
    if (quadRows == kAmxTileRows && depth > 0 && depth % kAmxTileBytes == 0 &&
        rowLength) {
      byFilters = {byFilters.loop, kAmxTileRows, Split::Tiles::EvenMultiples};
      byRows = {rowsLoop, 2 * kQuadLanes / std::gcd(*rowLength, 2 * kQuadLanes),
                Split::Tiles::EvenMultiples};
    }
    SmallVector<Split> order = {byRows, byOutputs, byFilters};
    if (operandBytes(conv, 1) > operandBytes(conv, 0))
      order = {byFilters, byRows, byOutputs};
    SmallVector<Split> splits;
    for (const Split &split : order)
      if (getConstantIntValue(domain[split.loop].size).value_or(1) > 1 &&
          !llvm::is_contained(splits, split))
        splits.push_back(split);
    return splits;
  }

  static int64_t operandBytes(linalg::LinalgOp op, unsigned input) {
    auto type = dyn_cast<ShapedType>(op.getDpsInputs()[input].getType());
    if (!type || !type.hasStaticShape())
      return 0;
    return type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }

  static int64_t vectorTiles(ArrayRef<Range> domain,
                             std::pair<int64_t, int64_t> split) {
    return *getConstantIntValue(domain[split.first].size) / split.second;
  }
};

} // namespace
