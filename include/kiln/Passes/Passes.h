//===- Passes.h - every kiln pass -------------------------------*- C++ -*-===//
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "kiln/Dialect/KilnDialect.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// Where a value of a dynamic-batch graph carries the batch: dim `dim`
/// holds the batch times `inner` (batch elements outermost in it), as
/// kiln-check-batch-independence tracks it.
struct BatchDim {
  int64_t dim = 0;
  int64_t inner = 1;
  /// Dim `dim` holds `outer` runs of the batch times `inner` (a reshape
  /// merged the batch with dims before it: [T, B, H] as [T*B, H]).
  int64_t outer = 1;
  /// For a constant of indices into a value whose batch was merged with
  /// the dims after it: batch element b's slice holds element 0's plus
  /// b * step (0 for every other value).
  int64_t step = 0;
  bool operator==(const BatchDim &other) const {
    return dim == other.dim && inner == other.inner && outer == other.outer &&
           step == other.step;
  }
  bool operator!=(const BatchDim &other) const { return !(*this == other); }
};
/// The batch dim of every value of `func` that carries the batch of its
/// kiln.batched arguments; fails, naming the node, where an op would mix
/// batch elements (CheckBatchIndependence.cpp).
mlir::FailureOr<llvm::DenseMap<mlir::Value, BatchDim>>
analyzeBatchDims(mlir::func::FuncOp func);
/// Checks `other`, the same model imported with a batch of `otherBatch`,
/// against `chunk`: the same ops and attributes, each type differing only
/// in the batch dim analyzeBatchDims finds at the larger batch, each
/// constant the same or holding one slice per batch element; else a value
/// depends on the batch size. Records the batch dims on `chunk`'s ops
/// (kiln.batch_dim), where the pass reads them.
mlir::LogicalResult checkBatchDimsAt(mlir::func::FuncOp chunk,
                                     mlir::func::FuncOp other,
                                     int64_t otherBatch);

/// Workgroup (shared) memory one GPU block may declare statically: CUDA's
/// limit without the dynamic opt-in (AMD's LDS holds 64 KiB). The default
/// budget of the staged contractions and of kiln-map-kernels-to-gpu; the
/// cuda target raises it to the chip's limit, and
/// kiln-dynamic-workgroup-memory moves larger kernels' buffers into
/// dynamic shared memory. (Before the pass declarations: their options
/// default to it.)
constexpr int64_t kStaticWorkgroupBytes = 48 * 1024;

/// Pointwise (1x1, stride 1) convolutions whose output rows are shorter
/// than this compute over the flattened image ([N, F, H*W]): rows of 7 or
/// 14 would leave most lanes of a CPU vector register (16 floats with
/// AVX-512) idle. Longer rows stay as they are: split by image rows, each
/// workgroup keeps its slice of the input in cache while it walks the
/// filters, which measured faster on 28x28 maps (ResNet-50 layer2: 0.71 ms
/// by rows, 0.87 ms flattened and split by filters).
/// kiln-split-pointwise-conv-stride gives strided ones of the same rows
/// stride 1.
constexpr int64_t kFlattenImageRowsBelow = 16;

/// Outputs one GPU block computes for a small contraction, as
/// kiln-tile-and-distribute's blocks come out for them (32x32, roughly):
/// what kiln-split-matmul-k and kiln-split-conv-k count blocks in.
constexpr int64_t kSmallContractionBlockOutputs = 32 * 32;
/// The shortest part of K those splits give a block of its own: a few
/// stages of 16.
constexpr int64_t kSplitKMinPart = 128;

// Each generated file #undefs the macro it reads.
#define GEN_PASS_DECL
#include "kiln/Passes/FusionPasses.h.inc"
#define GEN_PASS_DECL
#include "kiln/Passes/LoweringPasses.h.inc"
#define GEN_PASS_DECL
#include "kiln/Passes/CodegenPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Passes/FusionPasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "kiln/Passes/LoweringPasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "kiln/Passes/CodegenPasses.h.inc"

/// True when `op` (in a linalg body) widens its operand to float32 for the
/// op that reads it: `arith.extf` of a 16-bit float (--precision, 16-bit
/// models) or `arith.sitofp` of an 8- or 16-bit integer (a weight that
/// kiln-narrow-integer-weights stored narrow).
bool isScalarWidening(mlir::Operation *op);

/// `value` (a scalar or vector of 16-bit floats or of 8- or 16-bit
/// integers) widened to `type` as isScalarWidening's ops do.
mlir::Value createScalarWidening(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value value, mlir::Type type);

/// True when the generic's body is `acc + a' * b'` (either order), where
/// each of `a'`, `b'` is its input or a widening of it (isScalarWidening),
/// optionally times `s`
/// defined outside the body (Gemm's alpha), whose value is then stored in
/// `scale`.
bool isMultiplyAdd(mlir::linalg::GenericOp op, mlir::Value &scale);

/// The loops of a contraction that CPU vector registers compute
/// (kiln-contract-with-vector-registers): `acc + a * b [* scale]` (inputs
/// possibly widened by extf) into float32, whose output's innermost dim is
/// a parallel loop `vector` that one input (`vectorInput`) indexes only in
/// its innermost dim, with a constant step `vectorStride` of at most
/// kMaxVectorStride
/// (`d`, `d + kw`, `2 * d + kw`), and the other input not at all; `rows`:
/// the innermost other output loop that only the other input uses (a
/// matmul's M, a convolution's filters), or -1. Matmuls (B not
/// transposed) and convolutions.
/// The largest step of a register tile's vector input along its vector
/// loop: a strided convolution's inputs are loaded as one span and every
/// step-th element kept, and past this the span wastes too much.
constexpr int64_t kMaxVectorStride = 4;

/// The int8 quads of kiln-pack-int8-matmul-weights, as x86's `vpdpbusd`
/// reads them (kiln-contract-int8-quads): 16 int32 lanes, each adding 4
/// products of bytes.
constexpr int64_t kQuadLanes = 16;
constexpr int64_t kQuadDepth = 4;
/// Rows of an AMX tile, the blocks kiln-contract-int8-quads{matrix-tiles}
/// computes (kiln-configure-cpu-kernels splits M in multiples of it).
constexpr int64_t kAmxTileRows = 16;
/// Bytes of an AMX tile's row: the K (C) a tile step takes.
constexpr int64_t kAmxTileBytes = 64;
/// Panels of 16 outputs in one register tile of kiln-contract-int8-quads
/// (its `panels` option): kiln-configure-cpu-kernels splits the panels
/// into workgroups in multiples of it.
constexpr int64_t kQuadTilePanels = 4;

/// Whether `op` is kiln-pack-int8-matmul-weights' einsum `...mqt,bqwt->
/// ...mbw` of uint8 by int8 quads (widened to float32 in its body), which
/// kiln-contract-int8-quads computes with vpdpbusd.
bool isInt8QuadEinsum(mlir::linalg::LinalgOp op);

/// Whether `op` is kiln-pack-int8-conv-weights' convolution of uint8 by
/// int8 quads, which kiln-contract-int8-conv-quads computes with vpdpbusd;
/// `filters` is set to its loop of filters (the tiles' rows) and `vector`
/// to its output's innermost loop.
bool isInt8QuadConv(mlir::linalg::LinalgOp op, int64_t *filters = nullptr,
                    int64_t *vector = nullptr);

/// For an isInt8QuadConv over a 1x1 window (every reduction loop but the
/// quads of channels and the 4 bytes of a quad has one iteration): the
/// bytes of its channels, C, which kiln-contract-int8-conv-quads{matrix-
/// tiles} takes on AMX tiles in steps of 64. Else 0.
int64_t int8PointwiseConvDepth(mlir::linalg::LinalgOp op);

struct VectorContractionLoops {
  int64_t vector = -1, rows = -1, vectorStride = 1;
  /// A parallel loop only the vector input and the output use (a
  /// convolution's output rows), or -1: short vectors take several of its
  /// values per tile, so that each broadcast serves several FMAs.
  int64_t block = -1;
  unsigned vectorInput = 0;
  llvm::SmallVector<int64_t> ranges; ///< static extent of every loop
  mlir::Value scale;                 ///< Gemm's alpha, or null
};
std::optional<VectorContractionLoops>
matchVectorContraction(mlir::linalg::LinalgOp op);

/// Whether transposing a tensor of `shape` by `perm` moves only dims of
/// size 1, so that a reshape does the same: the other dims keep their
/// order. (Comparing the sizes would not do: [2, 8, 8, 8] is the same
/// shape in both layouts.)
bool movesOnlyUnitDims(llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> perm);

/// A memref whose innermost dim is contiguous: vector loads and stores
/// along it are plain.
bool hasUnitInnerStride(mlir::Value memref);

/// An elementwise generic's body (scalar ops, no regions) cloned on
/// vectors of `width`: its arguments are what `mapping` holds for them,
/// values from outside the body are broadcast and constants splat. Returns
/// the vector of what it yields (the register tiles' epilogues).
mlir::Value cloneBodyOnVectors(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Block &body, mlir::IRMapping &mapping,
                               int64_t width);

/// How much `expr` grows when loop `dim` (of `numDims`) grows by 1, if
/// that is a constant.
std::optional<int64_t> stepOf(mlir::AffineExpr expr, int64_t dim,
                              unsigned numDims);

/// The loops of a contraction that matrix instructions can compute
/// (kiln-contract-with-matrix-cores): `acc + extf(a) * extf(b) [* scale]`
/// over 16-bit float inputs (or `acc + a * b` over float32 ones, for TF32)
/// into float32; M, N: output dims only the first / only the second input
/// uses; K: a reduction loop both index directly; other reduction loops
/// (a convolution's window) iterate around K: matmuls and convolutions
/// as implicit GEMM.
/// The most rows (M) a GPU contraction of constant weights computes as dot
/// products, a warp per output reading A's row and B's row (B stored N x K
/// by kiln-transpose-weights): a matrix block would pad the rows to 16 and
/// read B once, but splitting K to fill the chip leaves a few dozen blocks
/// (MTCNN's 1152 x 256 Dense layer at batch 3: 32).
constexpr int64_t kMaxGpuDotProductRows = 4;

struct MatrixContractionLoops {
  int64_t m = -1, n = -1, k = -1;
  /// Positions of M and N among the output's dims.
  int64_t outM = -1, outN = -1;
  /// A convolution's output rows: the loop of the output dim just outside
  /// M (its height), which only the first input uses too, and its position
  /// among the output's dims; -1 for none. A block may then take several
  /// whole rows (rows x width outputs along M), which short rows (ResNet's
  /// 56, 28, 14 and 7 pixels) need for 16-row matrix tiles and 8-output
  /// thread tiles.
  int64_t mOuter = -1, outMOuter = -1;
  /// Other reduction loops (a convolution's window), iterated around K.
  llvm::SmallVector<int64_t> window;
  llvm::SmallVector<int64_t> ranges; ///< static extent of every loop
  mlir::Type operandType;            ///< f16, bf16 (or f32: TF32)
  mlir::Value scale; ///< multiplies each product (Gemm's alpha), or null
};
std::optional<MatrixContractionLoops>
matchMatrixContraction(mlir::linalg::LinalgOp op, bool allowFloat32 = false);

/// True when `value` is a 16-bit float widened to float32 by a kiln.cast
/// (CastOp::isWidening: --precision=f16|bf16, 16-bit models): the op that
/// reads it loads 16-bit values, and a contraction takes matrix
/// instructions.
inline bool isWidened(mlir::Value value) {
  auto cast = value.getDefiningOp<CastOp>();
  return cast && cast.isWidening();
}

/// True when `value` is a float32 weight stored as 8- or 16-bit integers
/// (kiln-narrow-integer-weights): a kiln.cast to float32 of such a
/// constant. The contraction that reads it loads the integers and widens
/// them in registers.
inline bool isNarrowedWeight(mlir::Value value) {
  auto cast = value.getDefiningOp<CastOp>();
  if (!cast || !cast.getInput().getDefiningOp<ConstantOp>() ||
      !mlir::getElementTypeOrSelf(cast.getType()).isF32())
    return false;
  mlir::Type from = mlir::getElementTypeOrSelf(cast.getInput().getType());
  return from.isSignlessInteger(8) || from.isSignlessInteger(16);
}

/// The rows that 16-row matrix tiles compute for a block of `rows` outputs
/// along M (kiln-contract-with-matrix-cores): `rows` itself when 16
/// divides it, else rounded up to a multiple of 16 when that adds at most
/// a quarter and stays within 128 (a 7x7 map's 49 pixels: 64; seven
/// 14-pixel rows, 98: 112). The rows past `rows` compute from copies of
/// the last one and are never stored. 0 when neither holds.
int64_t paddedMatrixRows(int64_t rows);

/// The K that matrix instructions (16 along K per step) compute for a
/// contraction of `k` along K: `k` when 16 divides it, else the next
/// multiple of 16 when that adds at most a quarter (MobileNet's 24-, 40-
/// and 72-channel layers: 32, 48, 80); the operands read zero past `k`.
/// 0 when neither holds.
int64_t paddedMatrixK(int64_t k);

/// The rows kiln-contract-with-thread-tiles computes for a block of `rows`
/// outputs along M when 4 does not divide it: paddedMatrixRows' (a 7x7
/// map's 49 pixels as 64), else the next multiple of 4, so that every
/// thread owns a run of 4 rows rather than 1 or 2; the rows past `rows`
/// are padded (OutputBlock::padRows) and never stored.
int64_t threadTileRows(int64_t rows);

/// The rows kiln-contract-with-thread-tiles computes for a block of `rows`
/// x `cols` outputs: threadTileRows(rows), unless that would leave the
/// block fewer threads than a warp (then `rows`).
int64_t threadBlockRows(int64_t rows, int64_t cols);

/// The threads kiln-contract-with-thread-tiles gives a block of `rows` x
/// `cols` outputs: threadTileExtent outputs per thread along each side of
/// the rows it computes (threadBlockRows) and the columns.
int64_t threadBlockThreads(int64_t rows, int64_t cols);

/// Outputs per thread along one side of a block in
/// kiln-contract-with-thread-tiles: 8 on sides of 96 or more that it
/// divides (two runs of 4, half the side apart), else 4, 2 or 1, whichever
/// divides it first.
int64_t threadTileExtent(int64_t blockExtent);
/// The longest run of consecutive outputs a thread owns along a block side
/// (threadTileExtent up to 4): what one vector load of a stage row gives.
int64_t threadTileRun(int64_t blockExtent);
/// The K of one shared-memory stage of kiln-contract-with-thread-tiles: the
/// largest of 16, 8, 4 that divides `k`, else k's largest divisor up to 16.
int64_t stageDepth(int64_t k);

/// A kernel's root (kiln-configure-*-kernels, kiln-tile-and-distribute):
/// the tileable op whose result the kernel writes, looking through
/// reshapes; null when there is none.
mlir::TilingInterface findKernelRoot(mlir::func::FuncOp kernel);

/// Exports `name`, a constant global of i64 words placed before `at`: the
/// words of `header`, then the bytes the kernel reaches in each of
/// `buffers` (static memrefs; an error on `at` otherwise). The CPU
/// (kiln-add-cpu-kernel-abi) and GPU (kiln-add-gpu-kernel-signatures)
/// kernel signatures, which the runtime checks each dispatch against.
mlir::LogicalResult addKernelSignature(mlir::Operation *at,
                                       llvm::StringRef name,
                                       llvm::ArrayRef<int64_t> header,
                                       llvm::ArrayRef<mlir::MemRefType> buffers,
                                       unsigned addressSpace);

/// The host declaration of GPU kernel `func` in `kernels` (the function
/// kiln-map-kernels-to-gpu made it from, which keeps its launch and
/// buffer facts); null, with an error on `func`, when there is none.
mlir::func::FuncOp hostDeclaration(mlir::ModuleOp kernels,
                                   mlir::gpu::GPUFuncOp func);

/// Sets the kiln.config of `kernel` (a function with kiln.kernel and a
/// root) to what `choose` makes of its root; none when `choose` gives
/// null or a linalg op of the kernel has an empty loop (the kernel runs as
/// one workgroup or thread).
void setKernelConfig(
    mlir::func::FuncOp kernel,
    llvm::function_ref<KernelConfigAttr(mlir::TilingInterface root)> choose);

/// Whether tiling can take `op`: every result of a linalg op is written
/// through a projected permutation (not a keepdims reduction's constant
/// indices).
bool hasTileableResults(mlir::Operation *op);

/// The root's loops that a reduction producing one of its operands
/// reduced (the loops that operand's indexing map leaves out), when the
/// innermost parallel loop `innermost` is not one of them; empty
/// otherwise.
llvm::SmallDenseSet<int64_t> outerReducedAxes(mlir::TilingInterface root,
                                              int64_t innermost);

inline void registerKilnPasses() {
  registerFusionPasses();
  registerLoweringPasses();
  registerCodegenPasses();
}

} // namespace kiln

#endif
