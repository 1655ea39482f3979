//===- BlockTileSizes.cpp - a GPU contraction's output blocks -------------===//
#include "BlockTileSizes.h"

#include "kiln/Passes/Passes.h"

using namespace mlir;
using namespace kiln;

namespace {

/// The choice of one kernel's output block under `options`.
struct BlockChooser : BlockTileOptions {
  explicit BlockChooser(const BlockTileOptions &options)
      : BlockTileOptions(options) {}

  /// Tile sizes of the root's loops when the kernel is a contraction
  /// (matchMatrixContraction: a matmul, or a convolution as implicit GEMM
  /// with M its output width and N its filters), the root or its only
  /// reducing producer under an elementwise epilogue: one output block per
  /// forall iteration (matrixBlock when matrix instructions take it,
  /// threadBlock otherwise), unit tiles over the other parallel loops.
  /// None when neither applies.
  /// At most kMaxGpuDotProductRows rows whose operands both run along K
  /// (B stored N x K): threads, a warp per output, compute them as dot
  /// products (kiln-distribute-rows-to-lanes).
  static bool isFewDotProducts(linalg::LinalgOp contraction,
                               const MatrixContractionLoops &loops) {
    if (loops.ranges[loops.m] > kMaxGpuDotProductRows || !loops.window.empty())
      return false;
    return llvm::all_of(contraction.getDpsInputOperands(), [&](OpOperand *in) {
      AffineMap map = contraction.getMatchingIndexingMap(in);
      return map.getNumResults() > 0 &&
             map.getResults().back() ==
                 getAffineDimExpr(loops.k, contraction.getContext());
    });
  }

  std::optional<SmallVector<int64_t>> blockTileSizes(TilingInterface root,
                                                     size_t numLoops) {
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    if ((matrixTile <= 0 && !threadBlocks) || !rootOp ||
        rootOp.getNumDpsInits() != 1)
      return std::nullopt;
    SmallVector<linalg::LinalgOp> reducing;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() > 0)
        reducing.push_back(op);
    });
    if (reducing.size() != 1)
      return std::nullopt;
    linalg::LinalgOp contraction = reducing.front();
    std::optional<MatrixContractionLoops> loops =
        matchMatrixContraction(contraction, /*allowFloat32=*/true);
    if (!loops || isFewDotProducts(contraction, *loops))
      return std::nullopt;
    auto contractionType =
        dyn_cast<ShapedType>(contraction.getDpsInits()[0].getType());
    auto rootType = dyn_cast<ShapedType>(rootOp.getDpsInits()[0].getType());
    if (!contractionType || !rootType ||
        contractionType.getShape() != rootType.getShape())
      return std::nullopt;
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (!rootOut.isProjectedPermutation() ||
        rootOut.getNumResults() != contractionType.getRank())
      return std::nullopt;
    SmallVector<int64_t> sizes(numLoops, 0);
    SmallVector<int64_t> rootRanges = rootOp.getStaticLoopRanges();
    int64_t otherIterations = 1;
    for (auto [i, type] : llvm::enumerate(rootOp.getIteratorTypesArray()))
      if (type == utils::IteratorType::parallel) {
        sizes[i] = 1;
        otherIterations *= rootRanges[i];
      }
    int64_t width = loops->ranges[loops->m], n = loops->ranges[loops->n];
    auto rootLoop = [&](int64_t outPosition) {
      return cast<AffineDimExpr>(rootOut.getResult(outPosition)).getPosition();
    };
    // Blocks of whole output rows where a convolution's rows are short
    // (ResNet's 56, 28, 14 and 7 pixels): M is then rows x width, whose
    // 112 outputs of two rows of 56 make seven 16-row matrix tiles or 8
    // outputs per thread where one row made neither. Taken when they get
    // matrix instructions that one row does not (or only padded), or as
    // many blocks as one row gets (up to kMinMatrixBlocks): a row can be
    // split further; or when --matrix-block asks for them.
    std::optional<Block> row =
        chooseBlock(*loops, width, n, otherIterations / (width * n), 1);
    if (loops->mOuter >= 0 && width < kShortRow) {
      int64_t m = width * loops->ranges[loops->mOuter];
      std::optional<Block> rows =
          chooseBlock(*loops, m, n, otherIterations / (m * n), width);
      bool asked = rows && rows->rows == matrixBlockRows &&
                   rows->cols == matrixBlockCols; // --matrix-block
      // Matrix tiles without padding beat padded ones (a 28-pixel row as
      // 32 rows) as they beat none.
      auto padded = [&](const Block &block) {
        return block.matrix && block.rows % matrixTile != 0;
      };
      if (rows && (!row || asked ||
                   (rows->matrix &&
                    (!row->matrix || (padded(*row) && !padded(*rows)))) ||
                   (rows->matrix == row->matrix &&
                    rows->blocks >= std::min(kMinMatrixBlocks, row->blocks)))) {
        sizes[rootLoop(loops->outMOuter)] = rows->rows / width;
        sizes[rootLoop(loops->outM)] = width;
        sizes[rootLoop(loops->outN)] = rows->cols;
        return sizes;
      }
    }
    if (!row)
      return std::nullopt;
    // The root's loops that write the output dims where the contraction
    // has M and N.
    sizes[rootLoop(loops->outM)] = row->rows;
    sizes[rootLoop(loops->outN)] = row->cols;
    return sizes;
  }

  /// Output rows shorter than this (a thread tile's 8 outputs along M need
  /// 96) make blocks of several rows.
  static constexpr int64_t kShortRow = 96;

  /// An output block: rows along M x columns along N, whether matrix
  /// instructions take it, and how many blocks the kernel has.
  struct Block {
    int64_t rows = 0, cols = 0;
    bool matrix = false;
    int64_t blocks = 0;
  };

  /// The output block of a contraction with `m` x `n` outputs times
  /// `otherIterations`: matrix instructions' when they take it, else
  /// thread tiles'; rows a multiple of `rowQuantum` (whole convolution
  /// rows). None when neither gives more than one block: a single block
  /// would be a forall of one iteration, which canonicalization folds
  /// away, and the kernel would run as one thread; such a kernel keeps
  /// per-thread tiles instead.
  std::optional<Block> chooseBlock(const MatrixContractionLoops &loops,
                                   int64_t m, int64_t n,
                                   int64_t otherIterations,
                                   int64_t rowQuantum) const {
    auto counted = [&](std::optional<std::pair<int64_t, int64_t>> size,
                       bool matrix) -> std::optional<Block> {
      if (!size || size->first <= 0 || size->second <= 0)
        return std::nullopt;
      int64_t blocks =
          blockCount(otherIterations, m, n, size->first, size->second);
      if (blocks <= 1)
        return std::nullopt;
      return Block{size->first, size->second, matrix, blocks};
    };
    std::optional<Block> block;
    if (takesMatrixInstructions(loops))
      block = counted(matrixBlock(m, n, otherIterations, rowQuantum,
                                  widestMatrixColumns(loops)),
                      true);
    if (!block && threadBlocks)
      block = counted(threadBlock(m, n, otherIterations, rowQuantum), false);
    return block;
  }

  /// 16-bit operands (float32 ones too with matrixFloat32) whose N
  /// `matrixTile` divides or has blocks of columns it pads
  /// (paddedColumns: 24 filters as 32), and whose K it divides or pads
  /// (paddedMatrixK: 24 channels as 32; M's blocks are matrixBlock's to
  /// find).
  bool takesMatrixInstructions(const MatrixContractionLoops &loops) const {
    if (matrixTile <= 0 || (loops.operandType.isF32() && !matrixFloat32))
      return false;
    int64_t n = loops.ranges[loops.n];
    return (n % matrixTile == 0 || paddedColumns(n, 128) > 0) &&
           paddedMatrixK(loops.ranges[loops.k]) > 0;
  }

  /// The largest block of columns up to `most` that divides `n` and that
  /// matrix tiles compute padded as they pad rows (paddedMatrixRows: 24
  /// as 32; 1000 classes in blocks of 125 as 128), or 0.
  static int64_t paddedColumns(int64_t n, int64_t most) {
    for (int64_t size = std::min<int64_t>(most, 128); size > 0; --size)
      if (n % size == 0 && paddedMatrixRows(size) > 0)
        return size;
    return 0;
  }

  /// The output block (rows x columns) of one forall iteration that
  /// kiln-contract-with-thread-tiles gives to a block of threads, each
  /// computing threadTileExtent(rows) x threadTileExtent(columns) outputs.
  /// Per side its largest divisor from 16 to 128 that is a multiple of 4
  /// (whole runs of 4 per thread: 128 of 4096, 112 of a 56x56 image's
  /// 3136 pixels, 28 of 196), else the whole side when at most 64 (a
  /// 14-pixel row), else its largest divisor from 8 to 64; halved, the
  /// larger side first, while the kernel would have fewer than
  /// kMinMatrixBlocks blocks and the block keeps minBlockThreads threads
  /// (a warp; a wavefront on AMD). None when no such block has that many
  /// (a matrix-vector product: per-thread tiles then). Larger blocks read
  /// each operand element from global memory fewer times, and their 8x8
  /// thread tiles do 64 FMAs per four 16-byte workgroup loads (a 4x4
  /// tile: 16 per two). Rows stay multiples of `rowQuantum`. A side that
  /// nothing divides (197 tokens) takes shiftedSide's blocks.
  std::optional<std::pair<int64_t, int64_t>>
  threadBlock(int64_t m, int64_t n, int64_t otherIterations,
              int64_t rowQuantum) const {
    auto largestOf = [](int64_t extent, int64_t quantum) -> int64_t {
      for (int64_t size = 128; size >= 16; size -= 4)
        if (extent % size == 0 && size % quantum == 0)
          return size;
      if (extent <= 64)
        return extent;
      for (int64_t size = 64; size >= 8; --size)
        if (extent % size == 0 && size % quantum == 0)
          return size;
      return 0;
    };
    auto largest = [&](int64_t extent) { return largestOf(extent, 1); };
    // Threads are counted as kiln-contract-with-thread-tiles lays the
    // block out (threadBlockThreads: 49 rows padded to 64 unless that
    // leaves fewer than a warp). --matrix-block, when it divides M and N
    // into blocks of 32 to 1024 threads.
    if (matrixBlockRows > 0 && matrixBlockCols > 0 &&
        m % matrixBlockRows == 0 && matrixBlockRows % rowQuantum == 0 &&
        n % matrixBlockCols == 0 &&
        threadBlockThreads(matrixBlockRows, matrixBlockCols) >=
            minBlockThreads &&
        threadBlockThreads(matrixBlockRows, matrixBlockCols) <= 1024)
      return std::pair<int64_t, int64_t>(matrixBlockRows, matrixBlockCols);
    int64_t rows = largestOf(m, rowQuantum), cols = largest(n);
    // Sides that nothing divides (197 tokens): shifted blocks.
    if (rows == 0 && rowQuantum == 1)
      rows = shiftedSide(m, 16);
    if (cols == 0)
      cols = shiftedSide(n, 16);
    if (rows == 0 || cols == 0 ||
        threadBlockThreads(rows, cols) < minBlockThreads)
      return std::nullopt;
    auto blocks = [&] { return blockCount(otherIterations, m, n, rows, cols); };
    auto halvable = [&](int64_t side, int64_t other, bool isRows) {
      if (side % 2 != 0 || side / 2 < 8 ||
          (isRows && (side / 2) % rowQuantum != 0))
        return false;
      return isRows ? threadBlockThreads(side / 2, other) >= minBlockThreads
                    : threadBlockThreads(other, side / 2) >= minBlockThreads;
    };
    while (blocks() < kMinMatrixBlocks) {
      if (rows >= cols && halvable(rows, cols, true))
        rows /= 2;
      else if (halvable(cols, rows, false))
        cols /= 2;
      else if (halvable(rows, cols, true))
        rows /= 2;
      else
        break;
    }
    return std::pair(rows, cols);
  }

  /// The widest block of columns a matrix kernel may take: 256 for 16-bit
  /// operands on warpgroup matrix instructions (wide-matrix-blocks) reduced
  /// over at least kWideBlockReduction products per output (K times a
  /// convolution's window), 128 otherwise. A 128x256 block (two warpgroups
  /// of m64n256) reads 384 operand elements per step along K for 32768
  /// products where two 128x128 blocks read 512: a quarter less of the L2
  /// traffic that bounds a large f16 matmul's blocks (cuBLAS's and
  /// CUTLASS's largest f16 tiles are 128x256 and 256x128 for that reason),
  /// given a deep pipeline (four stage buffers of 32 along K: 96 KiB of
  /// dynamic shared memory; not in the 48 KiB a block declares statically).
  /// mma.sync blocks stay 128 wide: eight warps of 64x64 take about 210
  /// registers a thread, so one block fills an SM's registers where 128x128
  /// blocks keep two, and on an H200 the 4096^3 f16 matmul ran 0.414 ms in
  /// 128x256 blocks against 0.322 ms in 128x128 ones (the 2026-12-04 GPU
  /// check; wgmma's 128x256 blocks ran 0.758 ms against 1.005).
  int64_t widestMatrixColumns(const MatrixContractionLoops &loops) const {
    if (!wideMatrixBlocks || !loops.operandType || loops.operandType.isF32())
      return 128;
    int64_t reduction = loops.ranges[loops.k];
    for (int64_t dim : loops.window)
      reduction *= loops.ranges[dim];
    int64_t elementBytes = loops.operandType.getIntOrFloatBitWidth() / 8;
    int64_t deepPipelineBytes =
        kWideBlockBuffers * (128 + 256) * kWideBlockStageK * elementBytes;
    return reduction >= kWideBlockReduction &&
                   workgroupMemoryBytes >= deepPipelineBytes
               ? 256
               : 128;
  }

  /// The pipeline 128x256 blocks need (widestMatrixColumns): buffers per
  /// operand and their depth along K.
  static constexpr int64_t kWideBlockBuffers = 4, kWideBlockStageK = 32;

  /// Products per output from which 16-bit blocks may be 256 columns wide
  /// (widestMatrixColumns): 16 stages of 32 along K, of which a pipeline's
  /// first (up to four buffers) are at most a quarter.
  static constexpr int64_t kWideBlockReduction = 512;

  /// Fewest GPU blocks a matrix kernel keeps when its output blocks grow:
  /// two per SM of an H200 (132 SMs), so that no SM idles while another
  /// runs two.
  static constexpr int64_t kMinMatrixBlocks = 264;

  /// GPU blocks of `rows` x `cols` over `m` x `n` outputs, times
  /// `otherIterations`; a side that its block does not divide gets one
  /// more, shifted back (shiftedSide).
  static int64_t blockCount(int64_t otherIterations, int64_t m, int64_t n,
                            int64_t rows, int64_t cols) {
    return otherIterations * llvm::divideCeil(m, rows) *
           llvm::divideCeil(n, cols);
  }

  /// A block side for an extent that no candidate divides or pads (ViT's
  /// 197 tokens, a prime): the largest power of two from 128 down to
  /// `least` whose blocks, the last shifted back to end with the extent
  /// (tileMatrix; it recomputes part of the one before it), compute at
  /// most a quarter more than the extent (197 in blocks of 128: 256). 0
  /// when none does (an extent under `least`, or 17: 32 for 17).
  static int64_t shiftedSide(int64_t extent, int64_t least) {
    for (int64_t size = 128; size >= least && size > 0; size /= 2) {
      int64_t computed = llvm::alignTo(extent, size);
      if (size <= extent && 4 * (computed - extent) <= computed)
        return size;
    }
    return 0;
  }

  /// Rows of a block of whole convolution rows (`width` outputs each) on a
  /// map of `height` rows that no such block divides or pads (Inception's
  /// 35x35 and 17x17 maps: 35 and 17 have no divisor whose rows make a
  /// multiple of 16 or pad to one within a quarter): r whole rows (r x
  /// width at most 128 outputs, paddedMatrixRows pads them), the last
  /// block shifted back to end with the map (tileMatrix), for the r that
  /// computes the fewest outputs in all (ceil(height / r) blocks of
  /// padded rows; the more rows on a tie: fewer blocks), if that is at
  /// most half as many again as the map has (35: 3 rows of 105 as 112,
  /// 12 blocks, 10% more; 17: 6 rows of 102 as 112, 3 blocks, 16% more).
  /// At most `mostRows` rows (smaller blocks while the kernel needs more).
  /// 0 when none is.
  static int64_t shiftedWholeRowsBlock(int64_t height, int64_t width,
                                       int64_t mostRows = 128) {
    int64_t best = 0, bestComputed = 0;
    for (int64_t r = 1; r < height && r <= mostRows && r * width <= 128; ++r) {
      int64_t padded = paddedMatrixRows(r * width);
      if (padded == 0)
        continue;
      int64_t computed = llvm::divideCeil(height, r) * padded;
      if (best == 0 || computed <= bestComputed) {
        best = r;
        bestComputed = computed;
      }
    }
    if (best == 0 || 2 * bestComputed > 3 * height * width)
      return 0;
    return best * width;
  }

  /// The output block (rows x columns) of one forall iteration, which
  /// kiln-contract-with-matrix-cores gives to one GPU block of warps that
  /// stage their operands through shared memory. The options' sizes when
  /// they divide M and N; else per side the largest of 128, 64, 32 and 16
  /// (matrixTile) that divides it (256 columns beside 128 rows up to
  /// `widestColumns`), halved, the larger side first, while the
  /// kernel would have fewer than kMinMatrixBlocks blocks. Larger blocks
  /// read each operand element from global memory fewer times (M / rows
  /// times for B, N / columns for A); too few leave SMs idle. Rows stay
  /// multiples of `rowQuantum` (whole convolution rows: 112 for rows of
  /// 56, 28 or 14, the multiples of 16 up to 128 then being candidates).
  /// Where no multiple of 16 divides M into such rows (14x14 and 7x7 maps,
  /// as rows or flattened), the largest that paddedMatrixRows pads (98 of
  /// 196 as 112, 49 as 64), halved to the next such while the block count
  /// needs it and the columns cannot halve. Where neither exists (ViT's 197
  /// tokens: a prime), blocks of shiftedSide, the last shifted back; of
  /// whole convolution rows, shiftedWholeRowsBlock's. None when no block
  /// exists.
  std::optional<std::pair<int64_t, int64_t>>
  matrixBlock(int64_t m, int64_t n, int64_t otherIterations, int64_t rowQuantum,
              int64_t widestColumns) const {
    auto fits = [&](int64_t size, int64_t extent, int64_t quantum) {
      return size >= matrixTile && size % matrixTile == 0 &&
             extent % size == 0 && size % quantum == 0;
    };
    // Rows that matrix tiles compute padded (paddedMatrixRows).
    auto fitsPadded = [&](int64_t size) {
      return size > 0 && m % size == 0 && size % rowQuantum == 0 &&
             paddedMatrixRows(size) > 0;
    };
    // --matrix-block; its rows may be padded ones (98: 112 on 14-pixel rows).
    if ((fits(matrixBlockRows, m, rowQuantum) || fitsPadded(matrixBlockRows)) &&
        fits(matrixBlockCols, n, 1))
      return std::pair(matrixBlockRows, matrixBlockCols);
    // Powers of two first; other multiples of 16 (warps of 16 rows) for
    // whole convolution rows, or when `anyMultiple`.
    auto largest = [&](int64_t extent, int64_t quantum,
                       bool anyMultiple) -> int64_t {
      for (int64_t size : {128, 64, 32})
        if (fits(size, extent, quantum))
          return size;
      if (quantum > 1 || anyMultiple)
        for (int64_t size = 128; size > matrixTile; size -= matrixTile)
          if (fits(size, extent, quantum))
            return size;
      return fits(matrixTile, extent, quantum) ? matrixTile : 0;
    };
    // Padded rows: the largest candidate up to `most`, or 0.
    auto largestPadded = [&](int64_t most) -> int64_t {
      for (int64_t size = std::min<int64_t>(most, 128); size > 0; --size)
        if (fitsPadded(size))
          return size;
      return 0;
    };
    int64_t rows = largest(m, rowQuantum, /*anyMultiple=*/false),
            cols = largest(n, 1, /*anyMultiple=*/false);
    // Rows that no power of two above 16 divides (a 112-pixel row) in one
    // block of their largest multiple of 16, not seven of 16 rows that each
    // stage all the block's weights (a batch-32 stem: 25088 one-warp
    // blocks loading 4 KiB of weights for 1 KiB of image each), where that
    // keeps kMinMatrixBlocks blocks.
    if (rows == matrixTile) {
      int64_t wider = largest(m, rowQuantum, /*anyMultiple=*/true);
      if (cols > 0 &&
          blockCount(otherIterations, m, n, wider, cols) >= kMinMatrixBlocks)
        rows = wider;
    }
    // 256 columns only beside 128 rows (widestMatrixColumns); the halving
    // below takes the wider side first, back to 128x128 when 256 columns
    // leave too few blocks.
    if (widestColumns >= 256 && rows == 128 && cols == 128 && fits(256, n, 1))
      cols = 256;
    bool padded = rows == 0;
    if (padded)
      rows = largestPadded(128);
    // Columns that no multiple of 16 divides into (24 filters) are padded
    // likewise.
    bool paddedCols = cols == 0;
    if (paddedCols)
      cols = paddedColumns(n, 128);
    // Sides that neither divides nor pads: shifted blocks; of whole
    // convolution rows when the block takes rows (shiftedWholeRows).
    bool shiftedRows = rows == 0 && rowQuantum == 1;
    if (shiftedRows) {
      rows = shiftedSide(m, matrixTile);
      padded = false;
    }
    bool shiftedWholeRows = rows == 0 && rowQuantum > 1;
    if (shiftedWholeRows) {
      rows = shiftedWholeRowsBlock(m / rowQuantum, rowQuantum);
      padded = false;
    }
    bool shiftedCols = cols == 0;
    if (shiftedCols) {
      cols = shiftedSide(n, matrixTile);
      paddedCols = false;
    }
    if (rows == 0 || cols == 0)
      return std::nullopt;
    // Rows that 32 does not divide (112) take warps of 16 rows: seven per
    // 64 columns, and a 112 x 128 block's 448 threads would leave each
    // 128 registers, under what its pipelined stage loads need (ptxas
    // spilled).
    if (paddedMatrixRows(rows) % 32 != 0 && paddedMatrixRows(cols) > 64)
      cols = paddedCols ? paddedColumns(n, 64) : 64;
    if (cols == 0)
      return std::nullopt;
    auto blocks = [&] { return blockCount(otherIterations, m, n, rows, cols); };
    while (blocks() < kMinMatrixBlocks) {
      // Halving padded rows (or shifted whole rows) may waste more of the
      // matrix tiles: columns first.
      int64_t halfRows = padded ? largestPadded(rows / 2)
                         : shiftedWholeRows
                             ? shiftedWholeRowsBlock(m / rowQuantum, rowQuantum,
                                                     rows / rowQuantum / 2)
                             : rows / 2;
      bool rowsHalve = padded || shiftedWholeRows
                           ? halfRows > 0
                           : rows > matrixTile &&
                                 (shiftedRows || fits(halfRows, m, rowQuantum));
      int64_t halfCols = paddedCols ? paddedColumns(n, cols / 2) : cols / 2;
      bool colsHalve = paddedCols ? halfCols > 0
                                  : cols > matrixTile &&
                                        (shiftedCols || fits(halfCols, n, 1));
      if (rowsHalve &&
          (!colsHalve || (!padded && !shiftedWholeRows && rows >= cols)))
        rows = halfRows;
      else if (colsHalve)
        cols = halfCols;
      else
        break;
    }
    return std::pair(rows, cols);
  }
};

} // namespace

std::optional<SmallVector<int64_t>>
kiln::blockTileSizes(TilingInterface root, size_t numLoops,
                     const BlockTileOptions &options) {
  return BlockChooser(options).blockTileSizes(root, numLoops);
}
