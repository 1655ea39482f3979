//===- ConfigureGpuKernels.cpp - each GPU kernel's threads or blocks ------===//
//
// The GPU's kernel config: what one forall iteration of a kernel's root op
// is, a thread and its register tile or a block's output block
// (BlockTileSizes.cpp), and its tile sizes. kiln-tile-and-distribute
// applies it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Passes/Passes.h"

#include "BlockTileSizes.h"

#include "mlir/Interfaces/TilingInterface.h"

namespace kiln {
#define GEN_PASS_DEF_CONFIGUREGPUKERNELS
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ConfigureGpuKernelsPass
    : public kiln::impl::ConfigureGpuKernelsBase<ConfigureGpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    setKernelConfig(getOperation(),
                    [&](TilingInterface root) { return kernelConfig(root); });
  }

  /// The config of a kernel whose root is `root`; null when the kernel
  /// runs as one thread (a root without a parallel loop of more than one
  /// iteration, or with dynamic extents).
  KernelConfigAttr kernelConfig(TilingInterface root) {
    OpBuilder builder(root);
    SmallVector<Range> domain = root.getIterationDomain(builder);
    SmallVector<utils::IteratorType> iterators = root.getLoopIteratorTypes();
    bool parallel = false;
    for (auto [i, range] : llvm::enumerate(domain)) {
      std::optional<int64_t> size = getConstantIntValue(range.size);
      if (!size)
        return {};
      parallel |= iterators[i] == utils::IteratorType::parallel && *size > 1;
    }
    if (!parallel || !hasTileableResults(root))
      return {};
    if (std::optional<SmallVector<int64_t>> tile =
            blockTileSizes(root, domain.size(), blockOptions()))
      return KernelConfigAttr::get(&getContext(), Tiling::Blocks, *tile);
    return threadConfig(root, domain, iterators);
  }

  BlockTileOptions blockOptions() const {
    BlockTileOptions options;
    options.matrixTile = matrixTile;
    options.matrixBlockRows = matrixBlockRows;
    options.matrixBlockCols = matrixBlockCols;
    options.threadBlocks = threadBlocks;
    options.minBlockThreads = minBlockThreads;
    options.matrixFloat32 = matrixFloat32;
    options.workgroupMemoryBytes = workgroupMemoryBytes;
    options.wideMatrixBlocks = wideMatrixBlocks;
    return options;
  }

  /// One forall iteration per thread. Every parallel loop of the
  /// root gets tile size 1, so that neighbouring threads write neighbouring
  /// elements (coalesced stores). When a producer fused into the kernel
  /// reduces (softmax, normalizations), the innermost parallel loop stays
  /// whole: a thread then computes a whole row and each row's reduction runs
  /// once instead of once per element; when it reduces outer loops
  /// instead (outerReducedAxes), those stay whole.
  KernelConfigAttr threadConfig(TilingInterface root, ArrayRef<Range> domain,
                                ArrayRef<utils::IteratorType> iterators) {
    // A reduction whose result is smaller than the root's (a row statistic
    // broadcast back over the row); a contraction producing the root's
    // whole input, like a conv under its ReLU, does not count.
    int64_t rootElements = 1;
    for (Range range : domain)
      rootElements *= *getConstantIntValue(range.size);
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type != utils::IteratorType::parallel)
        rootElements /=
            std::max<int64_t>(1, *getConstantIntValue(domain[i].size));
    // A contraction under a broadcast (a squeeze-excitation scale: a 1x1
    // convolution of the pooled map scaling every pixel) does not count
    // either: each thread computes the few outputs it scales.
    bool producerReduces = false;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      if (op.getOperation() == root.getOperation() ||
          op.getNumReductionLoops() == 0 ||
          linalg::isaContractionOpInterface(op))
        return;
      for (Value init : op.getDpsInits())
        if (auto type = dyn_cast<ShapedType>(init.getType()))
          if (type.hasStaticShape() && type.getNumElements() < rootElements)
            producerReduces = true;
    });
    int64_t innermost = -1;
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type == utils::IteratorType::parallel)
        innermost = i;
    SmallVector<int64_t> registerTile =
        producerReduces ? SmallVector<int64_t>(domain.size(), 1)
                        : registerTileSizes(root, rootElements, domain.size());
    keepEnoughThreads(registerTile, rootElements);
    // Runs of a memory-bound kernel come after the thread floor, which is
    // for register tiles: what fills the memory system is the bytes in
    // flight, the same for a run of 8 halves in one 16-byte access as for
    // 8 threads of 2 bytes, and the run takes an eighth of the
    // instructions (MobileNetV2's float16 residual adds at batch 32, 250K
    // elements, would otherwise be one element a thread).
    if (!producerReduces && innermost >= 0)
      vectorTile(root, registerTile, domain, innermost);
    if (auto pad = dyn_cast<tensor::PadOp>(root.getOperation()))
      vectorTilePad(pad, registerTile);
    // A row kernel leaves its innermost loop, the reduced row, to the
    // iteration (kiln-distribute-rows-to-lanes gives it a warp). A
    // reduction over an outer axis (a detection head's Softmax over the 16
    // bins of [1, 16, 4, anchors]) leaves that axis instead: each thread
    // walks it in a loop for one position of the innermost loop, so that
    // neighbouring threads read neighbouring elements and no thread keeps
    // a row of statistics on its stack.
    llvm::SmallDenseSet<int64_t> reducedAxes =
        outerReducedAxes(root, innermost);
    auto leftWhole = [&](int64_t i) {
      if (!producerReduces)
        return false;
      return reducedAxes.empty() ? i == innermost : reducedAxes.contains(i);
    };
    SmallVector<int64_t> tileSizes(domain.size(), 0);
    int64_t threads = 1;
    for (auto [i, range] : llvm::enumerate(domain)) {
      if (iterators[i] != utils::IteratorType::parallel || leftWhole(i))
        continue;
      tileSizes[i] = registerTile[i];
      threads *= *getConstantIntValue(range.size) / registerTile[i];
    }
    if (threads <= 1)
      return {};
    return KernelConfigAttr::get(&getContext(), Tiling::Threads, tileSizes);
  }

  /// Outputs per thread when the kernel computes a contraction (matmul,
  /// conv), as the root or under an elementwise epilogue: a kRegisterTile x
  /// kRegisterTile block over the contraction's innermost parallel loop
  /// that only its first input uses (matmul M, conv output width) and the
  /// one that only its second input uses (matmul N, conv filters). Each
  /// element the thread loads then serves kRegisterTile multiply-adds
  /// instead of one. Loops whose extent kRegisterTile does not divide stay
  /// at 1. The sizes are returned for the root's loops.
  static SmallVector<int64_t> registerTileSizes(TilingInterface root,
                                                int64_t rootElements,
                                                size_t numLoops) {
    constexpr int64_t kRegisterTile = 4;
    auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    SmallVector<int64_t> sizes(numLoops, 1);
    if (!rootOp || rootOp.getNumDpsInits() != 1)
      return sizes;
    // The contraction: the root itself, or the one producer that reduces
    // into a tensor as large as the root's result.
    linalg::LinalgOp contraction;
    if (rootOp.getNumReductionLoops() > 0) {
      contraction = rootOp;
    } else {
      int found = 0;
      root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
        if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1)
          return;
        auto type = dyn_cast<ShapedType>(op.getDpsInits()[0].getType());
        if (type && type.hasStaticShape() &&
            type.getNumElements() == rootElements) {
          contraction = op;
          ++found;
        }
      });
      if (found != 1)
        return sizes;
    }
    // A window generic that reads its input in its body (a depthwise
    // convolution or pooling reading its padding in place: one input
    // operand) keeps one output per thread: with 4 along the row, a warp's
    // lanes read 4 * stride elements apart, one 2- or 4-byte load each
    // (the clamped indices hide the neighbours from the vectorizer):
    // MobileNetV2's stride-2 depthwise convolutions used 18% of the
    // sectors they fetched (kiln-emulate-gpu --memory-traffic), where
    // consecutive lanes on consecutive outputs read one run. Channels-last
    // depthwise convolutions take a run of channels instead
    // (channelRunTile).
    if (contraction.getNumDpsInputs() < 2) {
      channelRunTile(contraction, rootOp, sizes);
      return sizes;
    }
    SmallVector<int64_t> ranges = contraction.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators =
        contraction.getIteratorTypesArray();
    AffineMap contractionOut =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
    AffineMap first =
        contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(0));
    AffineMap second =
        contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(1));
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (contractionOut.getNumResults() != rootOut.getNumResults())
      return sizes;
    auto pick = [&](AffineMap uses, AffineMap excludes) {
      for (int64_t i = int64_t(ranges.size()) - 1; i >= 0; --i)
        if (iterators[i] == utils::IteratorType::parallel &&
            uses.isFunctionOfDim(i) && !excludes.isFunctionOfDim(i) &&
            ranges[i] % kRegisterTile == 0)
          return i;
      return int64_t(-1);
    };
    for (int64_t loop : {pick(first, second), pick(second, first)}) {
      if (loop < 0)
        continue;
      // The result dim the contraction's loop writes, and the root loop
      // that writes the same dim.
      std::optional<unsigned> dim = contractionOut.getResultPosition(
          getAffineDimExpr(loop, contraction.getContext()));
      if (!dim)
        continue;
      if (auto rootLoop = dyn_cast<AffineDimExpr>(rootOut.getResult(*dim)))
        sizes[rootLoop.getPosition()] = kRegisterTile;
    }
    return sizes;
  }

  /// A depthwise convolution on channels-last activations (a window
  /// generic whose one operand is its weight, read along the channels like
  /// the output: [1][kh][kw][C], kiln-channels-last-conv-weights): 16 bytes
  /// of neighbouring channels per thread, 8 at 16 bits and 4 at 32, when
  /// they divide the channels. The input, the weight and the output are
  /// all contiguous along them, so a thread's loads and store of them merge
  /// into 128-bit accesses, and one window's index arithmetic and padding
  /// checks serve all of them (with one channel a thread, MobileNetV2's
  /// float16 depthwise kernels spent about 150 instructions an output).
  /// `sizes` are the root's loops; the root writes the contraction's
  /// output dims through its own output map.
  static void channelRunTile(linalg::LinalgOp contraction,
                             linalg::LinalgOp rootOp,
                             SmallVector<int64_t> &sizes) {
    constexpr int64_t kRunBits = 128;
    if (contraction.getNumDpsInputs() != 1)
      return;
    AffineMap out =
        contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
    AffineMap weight =
        contraction.getMatchingIndexingMap(contraction.getDpsInputOperand(0));
    AffineMap rootOut =
        rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
    if (out.getNumResults() == 0 || weight.getNumResults() == 0 ||
        out.getNumResults() != rootOut.getNumResults())
      return;
    auto channel = dyn_cast<AffineDimExpr>(out.getResults().back());
    auto rootChannel = dyn_cast<AffineDimExpr>(rootOut.getResults().back());
    if (!channel || !rootChannel ||
        contraction.getIteratorTypesArray()[channel.getPosition()] !=
            utils::IteratorType::parallel)
      return;
    Type element;
    if (weight.getResults().back() == channel)
      element = getElementTypeOrSelf(
          contraction.getDpsInputOperand(0)->get().getType());
    else if (!weight.isFunctionOfDim(channel.getPosition()))
      element = channelReadElement(contraction, channel.getPosition());
    if (!element || !element.isIntOrFloat() ||
        element.getIntOrFloatBitWidth() < 8)
      return;
    int64_t run = kRunBits / element.getIntOrFloatBitWidth();
    if (contraction.getStaticLoopRanges()[channel.getPosition()] % run != 0)
      return;
    sizes[rootChannel.getPosition()] = run;
  }

  /// A pooling window (its one operand only the window's shape): the
  /// element type of the input its body reads (tensor.extract) when every
  /// such read takes the channel loop's index as its last, so that a run
  /// of channels is a run of memory; null otherwise. MaxPool's float16
  /// kernel read 2 bytes in each of 9 loads an output (101 instructions).
  static Type channelReadElement(linalg::LinalgOp window, unsigned channel) {
    Type element;
    WalkResult walk = window->walk([&](tensor::ExtractOp read) {
      auto index =
          read.getIndices().empty()
              ? nullptr
              : read.getIndices().back().getDefiningOp<linalg::IndexOp>();
      Type type = read.getTensor().getType().getElementType();
      if (!index || index.getDim() != channel || (element && element != type))
        return WalkResult::interrupt();
      element = type;
      return WalkResult::advance();
    });
    return walk.wasInterrupted() ? Type() : element;
  }

  /// Elementwise kernels: neighbouring elements of the innermost loop per
  /// thread, so that a thread's loads and stores of contiguous operands
  /// merge into 128-bit accesses (the kernel pointers are 64-byte aligned):
  /// 16 bytes of the kernel's widest element, at least kMinVectorWidth
  /// elements (4 floats; 8 halves, where 4 made 64-bit accesses and twice
  /// the instructions a byte). Only for roots whose loops are all parallel
  /// and whose innermost extent the width divides.
  static void vectorTile(TilingInterface root, SmallVector<int64_t> &tile,
                         ArrayRef<Range> domain, int64_t innermost) {
    constexpr int64_t kMinVectorWidth = 4;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
    int64_t extent = *getConstantIntValue(domain[innermost].size);
    if (!linalgOp || linalgOp.getNumReductionLoops() > 0 ||
        llvm::any_of(tile, [](int64_t t) { return t > 1; }) ||
        extent % kMinVectorWidth != 0)
      return;
    bool kernelReduces = false;
    int64_t widestBytes = 1;
    root->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp op) {
      kernelReduces |= op.getNumReductionLoops() > 0;
      for (Value operand : op->getOperands())
        if (auto type = dyn_cast<ShapedType>(operand.getType()))
          widestBytes = std::max<int64_t>(
              widestBytes, llvm::divideCeil(type.getElementTypeBitWidth(), 8));
    });
    if (!kernelReduces)
      tile[innermost] = runDividing(extent, widestBytes, kMinVectorWidth);
  }

  /// Elements of `elementBytes` bytes in a 16-byte run, at least `least`,
  /// halved until the run divides `extent`.
  static int64_t runDividing(int64_t extent, int64_t elementBytes,
                             int64_t least = 1) {
    constexpr int64_t kRunBytes = 16;
    int64_t run = std::max(least, kRunBytes / elementBytes);
    while (run > 1 && extent % run != 0)
      run /= 2;
    return run;
  }

  /// A padding kernel (a convolution's input with its border of zeros,
  /// channels last): one thread per element made 100 SASS instructions for
  /// each 16-bit element, index arithmetic around a 2-byte load and store.
  /// A thread instead copies a 16-byte run of the innermost dim when that
  /// dim is not padded and the run divides it (8 channels of float16).
  /// Each tile is then wholly padding or wholly input (the padded dims'
  /// tiles stay 1), which kiln-decompose-pads turns into a fill or a plain
  /// copy.
  static void vectorTilePad(tensor::PadOp pad, SmallVector<int64_t> &tile) {
    RankedTensorType type = pad.getResultType();
    int64_t innermost = type.getRank() - 1;
    int64_t elementBits = type.getElementTypeBitWidth();
    if (innermost < 0 || elementBits % 8 != 0 || type.isDynamicDim(innermost) ||
        llvm::any_of(tile, [](int64_t t) { return t > 1; }))
      return;
    std::optional<int64_t> low =
        getConstantIntValue(pad.getMixedLowPad()[innermost]);
    std::optional<int64_t> high =
        getConstantIntValue(pad.getMixedHighPad()[innermost]);
    if (low != 0 || high != 0)
      return;
    tile[innermost] = runDividing(type.getDimSize(innermost), elementBits / 8);
  }

  /// Register tiles divide the number of threads; a kernel with too few
  /// threads leaves most of the GPU idle (measured on an H200: ResNet-50 at
  /// batch 1 got slower with 4x4 tiles, batch 32 three times faster). The
  /// tile shrinks, one dim at a time, until at least `minThreads` threads
  /// remain or it is 1x1.
  void keepEnoughThreads(SmallVector<int64_t> &tile, int64_t outputs) {
    auto threads = [&] {
      int64_t perThread = 1;
      for (int64_t t : tile)
        perThread *= t;
      return outputs / perThread;
    };
    for (int64_t i = int64_t(tile.size()) - 1; i >= 0 && threads() < minThreads;
         --i)
      tile[i] = 1;
  }
};

} // namespace
