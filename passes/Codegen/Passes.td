//===- Passes.td - code generation passes -------------------*- tablegen -*-===//
#ifndef KILN_PASSES_CODEGEN_TD
#define KILN_PASSES_CODEGEN_TD

include "mlir/Pass/PassBase.td"

def PrepareKernelTiling
    : Pass<"kiln-prepare-kernel-tiling", "mlir::func::FuncOp"> {
  let summary = "Rewrites a kernel so that tiling its root fuses every producer";
  let description = [{
    Before a kernel's config is chosen: a linalg op with an empty loop (a
    zero-size dim) is replaced by its inits, which it would return
    unchanged; an accumulator the kernel reads from
    an input (Gemm's C) gets a `linalg.copy` producer, which tiling fuses so
    that each iteration copies its own part; with `reorder-pads`, a padding
    moves in front of a reshape or a widening, next to the slices tiling
    takes (GPU blocks keep it whole or read it in place).
  }];
  let options = [
    Option<"reorderPads", "reorder-pads", "bool", "false",
           "Move tensor.pad before the expand_shape and the widening generic "
           "that consume it (GPU targets)">
  ];
}

def ConfigureCpuKernels
    : Pass<"kiln-configure-cpu-kernels", "mlir::func::FuncOp"> {
  let summary = "Chooses each CPU kernel's workgroups (its kiln.config)";
  let description = [{
    Finds the root of a kernel (the tileable op whose result the kernel
    writes) and chooses the loop to split into workgroups and the tile size:
    at most `max-workgroups` of them, each at least
    `min-work-per-workgroup` points, in whole register tiles where the
    kernel is a contraction. Records `kiln.config = #kiln.config<workgroups,
    ...>`, which kiln-tile-and-distribute applies. Kernels that one
    workgroup runs get no config.
  }];
  let options = [
    Option<"maxWorkgroups", "max-workgroups", "int64_t", "64",
           "Upper bound on the grid size of one kernel">,
    Option<"minWorkPerWorkgroup", "min-work-per-workgroup", "int64_t", "4096",
           "Iteration-space points below which a workgroup is not worth it">,
    Option<"registerRows", "register-rows", "int64_t", "8",
           "rows of kiln-contract-with-vector-registers' tiles; a "
           "contraction's row loop is split only in multiples of it">,
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "elements of one vector register; a contraction's vector "
           "loop is split only in multiples of two of them">,
    Option<"quadRows", "quad-rows", "int64_t", "4",
           "rows (M) of an int8 quad einsum split in multiples of it: "
           "kiln-contract-int8-quads' register tile (4), or its AMX "
           "blocks (16) with matrix tiles">
  ];
}

def ConfigureGpuKernels
    : Pass<"kiln-configure-gpu-kernels", "mlir::func::FuncOp"> {
  let summary = "Chooses each GPU kernel's threads or blocks (its kiln.config)";
  let description = [{
    Finds the root of a kernel and chooses what one forall iteration of it
    is: an output block of a contraction (matrix instructions' with
    `matrix-tile`, else thread tiles' with `thread-blocks`), or one thread
    with its register tile (a run of 16 bytes of an elementwise kernel, a
    4x4 tile of a contraction, kept while `min-threads` threads remain).
    Records `kiln.config = #kiln.config<blocks|threads, ...>`, which
    kiln-tile-and-distribute applies.
  }];
  let options = [
    Option<"minThreads", "min-threads", "int64_t", "65536",
           "fewest threads a kernel keeps when outputs are grouped into "
           "register tiles (about two waves of 256-thread blocks on 132 SMs)">,
    Option<"matrixTile", "matrix-tile", "int64_t", "0",
           "output tile (rows and columns) per forall iteration for "
           "matmul-shaped contractions of 16-bit floats, which "
           "kiln-contract-with-matrix-cores gives to a warp's matrix "
           "instructions; 0: none">,
    Option<"matrixBlockRows", "matrix-block-rows", "int64_t", "0",
           "output rows of one block of a matrix-tile kernel (a "
           "multiple of matrix-tile dividing M); 0: chosen per kernel">,
    Option<"matrixBlockCols", "matrix-block-cols", "int64_t", "0",
           "output columns of one block of a matrix-tile kernel (a "
           "multiple of matrix-tile dividing N); 0: chosen per kernel">,
    Option<"threadBlocks", "thread-blocks", "bool", "false",
           "contractions (matmuls, convolutions) that matrix-tile does "
           "not take get output blocks of up to 128x128 per forall iteration, "
           "which kiln-contract-with-thread-tiles gives to a block of threads">,
    Option<"minBlockThreads", "min-block-threads", "int64_t", "32",
           "fewest threads of a thread-blocks block (a warp; 64 for AMD's "
           "wavefronts, whose lanes a smaller block would leave idle)">,
    Option<"matrixFloat32", "matrix-f32", "bool", "false",
           "With matrix-tile: float32 matmuls too (TF32 tensor cores, "
           "--allow-tf32)">,
    Option<"workgroupMemoryBytes", "workgroup-memory-bytes", "int64_t",
           "kiln::kStaticWorkgroupBytes",
           "workgroup memory a block may use; 16-bit matrix blocks are "
           "256 columns wide only where four of their stages of 32 along K "
           "fit it">,
    Option<"wideMatrixBlocks", "wide-matrix-blocks", "bool", "false",
           "16-bit matrix blocks may be 256 columns wide (warpgroup "
           "matrix instructions, sm_90a); without it they are at most 128 "
           "columns wide unless matrix-block-cols says otherwise">
  ];
}

def TileAndDistribute : Pass<"kiln-tile-and-distribute", "mlir::func::FuncOp"> {
  let summary = "Tiles a kernel's root op as its kiln.config says and fuses its producers";
  let description = [{
    Tiles the root of each kernel with a `kiln.config` into an `scf.forall`
    of the config's tile sizes and fuses every producer into the loop. The
    number of iterations becomes the kernel's grid size, recorded as
    `kiln.workgroups`; kernels without a config (or whose tiling fails) run
    as one workgroup. Records the kernel's `kiln.flops` for reports.
  }];
  let options = [
    Option<"gpu", "gpu", "bool", "false",
           "GPU kernels: small scratch tensors made before the loop become "
           "each iteration's own">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

def FuseElementwiseProducers
    : Pass<"kiln-fuse-elementwise-producers", "mlir::func::FuncOp"> {
  let summary = "Folds elementwise producers into their consumers' bodies";
  let description = [{
    Before tiling, inside each kernel: a `linalg.generic` that only widens
    (`arith.extf`) its input is fused into every `linalg.generic` that reads
    it (a matmul then becomes `extf(a) * extf(b) + acc` with float32
    accumulation, which matrix-core code generation matches); any other
    all-parallel generic with a single use is fused into a consumer that
    reads it element for element. Chains of elementwise ops (LayerNorm's
    normalize, scale and bias; a matmul's bias, activation and rounding)
    then compute in registers instead of through tile-sized temporaries.
    Producers read with a broadcast, or used twice, are left to tiling's
    producer fusion. Chains fuse in rounds, each a matching of disjoint
    producer-consumer pairs, so that a chain of n generics costs
    O(n log n) body copies instead of O(n^2).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect"];
}

def CollapseReductionLoops
    : Pass<"kiln-collapse-reduction-loops", "mlir::func::FuncOp"> {
  let summary = "Collapses a reduction's adjacent reduction loops into one (GPU row kernels)";
  let description = [{
    Before a GPU kernel is configured: a `linalg.generic` that reduces one
    kernel input over two or more adjacent loops, every operand indexed by
    loops alone and reading them as adjacent dims in order
    (GlobalAveragePool's H and W), reduces over one loop instead, its operands read through
    collapsed views. Its rows then go to warps or blocks
    (`kiln-distribute-rows-to-lanes`), where with two reduction loops each
    thread reduced a whole map alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def FoldExpandShapesIntoConsumers
    : Pass<"kiln-fold-expand-shapes-into-consumers", "mlir::func::FuncOp"> {
  let summary = "Computes the elementwise consumers of a flattened root in its flattened shape";
  let description = [{
    Before tiling, inside each kernel: an elementwise `linalg.generic` that
    reads a `tensor.expand_shape` of another generic's result (a pointwise
    convolution computes [N, F, H*W] for the model's [N, F, H, W]) is
    collapsed to the producer's shape, its other operands read through
    `tensor.collapse_shape`, and the kernel's result is written through a
    `memref.collapse_shape` view of the output buffer. Inputs of such a
    consumer that index unit dims by the constant 0 (a Mul by a [1]
    scalar) are first read without those dims (a 0-d tensor), which the
    collapse needs. The epilogue can then be tiled and fused with its
    producer and kept in registers. The other way round, an elementwise
    consumer of a `tensor.collapse_shape` of a contraction's result is
    expanded to the result's shape. Reshape chains (a collapse of an
    expand: MobileNetV3's squeeze-excitation scale, [N, C, 1] to
    [N, C, 1, 1] to [N, C]) are composed first. Consumers that reduce, and
    reshapes of anything but a generic, are left alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::tensor::TensorDialect"];
}

def MapForallToWorkgroups : Pass<"kiln-map-forall-to-workgroups", "mlir::func::FuncOp"> {
  let summary = "Replaces a kernel's scf.forall by a loop over the workgroup's iterations";
  let description = [{
    After bufferization a kernel's workgroup loop is an `scf.forall` with no
    results. The runtime calls the kernel once per workgroup id; workgroup
    `id` of `count` runs iterations id, id + count, ... (an `scf.for`), so
    the body runs once under the count the kernel was compiled for, and a
    different count in the artifact still covers each iteration once and
    none past the loop's end.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::affine::AffineDialect", "mlir::scf::SCFDialect"];
}

def DecomposePads : Pass<"kiln-decompose-pads", "mlir::func::FuncOp"> {
  let summary = "Writes each tensor.pad as a fill and an insert of its source";
  let description = [{
    Before bufferization, inside each kernel: `tensor.pad` with a constant
    value becomes `tensor.empty`, `linalg.fill` and `tensor.insert_slice`.
    A padded tile then bufferizes into the kernel's output buffer (the
    empty tensor is eliminated into it) instead of a per-workgroup
    temporary that is filled, written and copied again.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ExpandMemrefCopies : Pass<"kiln-expand-memref-copies", "mlir::func::FuncOp"> {
  let summary = "Rewrites memref.copy as linalg.copy";
  let description = [{
    `memref.copy` between strided views lowers to a call of the MLIR runner
    library, which kernels cannot link. `linalg.copy` lowers to plain loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def AddCpuKernelAbi : Pass<"kiln-add-cpu-kernel-abi", "mlir::ModuleOp"> {
  let summary = "Wraps each lowered kernel in the runtime's C calling convention";
  let description = [{
    Runs on the LLVM-dialect kernels module. For every function marked
    `kiln.kernel`, renames it `<name>_impl` (internal) and adds
    `void <name>(void **bindings, int64_t workgroup_id, int64_t workgroup_count)`,
    which loads one data pointer per memref argument (shapes from the
    `kiln.abi` attribute) and calls the implementation.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def PromoteTemporariesToStack
    : Pass<"kiln-promote-temporaries-to-stack", "mlir::func::FuncOp"> {
  let summary = "Turns small statically shaped temporaries into stack allocations";
  let description = [{
    A GPU thread cannot call the host allocator and the device heap is small
    and slow, so every `memref.alloc` of at most `max-bytes` bytes with a
    static shape becomes a `memref.alloca` (registers or local memory), and
    its `memref.dealloc` goes away. Larger temporaries are left alone.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", "16384",
           "Largest temporary placed on the stack">
  ];
}

def MapKernelsToGpu : Pass<"kiln-map-kernels-to-gpu", "mlir::ModuleOp"> {
  let summary = "Turns each bufferized kernel into a gpu.func, one thread per forall iteration";
  let description = [{
    Runs on the kernels module. Every `kiln.kernel` function becomes a
    `gpu.func` in one `gpu.module @kiln_kernels`, so that a single device
    image holds every kernel. A kernel whose only side effects are one
    `scf.forall` is mapped onto a 1-D grid: each thread takes the iteration
    `blockIdx.x * blockDim.x + threadIdx.x` (delinearized over the loop's
    dims) and threads past the end do nothing; `kiln.lanes` consecutive
    threads share an iteration (a warp per row, a warp per matrix tile).
    Blocks have `threads-per-block` threads, fewer (down to a warp) where
    that would leave the kernel fewer than `min-blocks` blocks: each block
    runs on one SM. A `kiln.cooperative` kernel's iteration is one whole block of
    `kiln.lanes` threads, and its workgroup-memory allocations become the
    gpu.func's workgroup attributions (their bytes in
    `kiln.workgroup_memory` on the declaration). Any other kernel runs as one
    thread of one block (correct, and slow: the reports say so).

    The original function stays as a body-less declaration carrying the
    launch shape (`kiln.workgroups` blocks of `kiln.threads` threads) and the
    report attributes, for the artifact writer.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads per block of a mapped kernel">,
    Option<"minBlocks", "min-blocks", "int64_t", "132",
           "Fewer threads per block (down to a warp) where the kernel would "
           "otherwise have fewer blocks than this (an H200's SMs)">,
    Option<"warpSize", "warp-size", "int64_t", "32",
           "Threads of a warp (64: an AMD wavefront), the smallest block">,
    Option<"workgroupMemoryBytes", "workgroup-memory-bytes", "int64_t",
           "kiln::kStaticWorkgroupBytes",
           "Most workgroup memory a block may use: a kernel needing more is "
           "an error naming it">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def DistributeCopiesToThreads
    : Pass<"kiln-distribute-copies-to-threads", "mlir::func::FuncOp"> {
  let summary = "Runs a GPU kernel that only copies (Split, Concat, slices) with a thread per element";
  let description = [{
    A bufferized kernel whose only work is `linalg.copy` ops at its top
    level (a Split's slice, a Concat's inputs into their places) has no
    forall, so the GPU would run it in one thread. When the copies are
    independent (none reads a buffer another writes; copies into one
    buffer write disjoint static subviews), they become one `scf.forall`
    over the largest copy's elements in which iteration `i` copies element
    `i` (row-major) of every copy that has one. Other kernels are left
    alone.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def DistributeRowsToLanes
    : Pass<"kiln-distribute-rows-to-lanes", "mlir::func::FuncOp"> {
  let summary = "Runs each row of a GPU row-reduction kernel on the threads of a warp or block";
  let description = [{
    For a bufferized kernel whose forall iterations each own one row (GPU
    tiling keeps the row whole when a fused producer reduces it: softmax,
    normalizations, reductions over the last dim), gives each row `lanes`
    threads (a warp or wavefront), or a block of up to `max-row-threads`
    when a warp would have to hold more than `row-registers` elements per
    thread. Thread `t` takes the row's elements in runs of 4 (`4t + 4Tk +
    i`, T threads) when 4T divides the row, else `t + Tk`: reads and
    writes are coalesced and the runs become 128-bit accesses.

    When the row fits (at most `row-registers` elements per thread), each
    op becomes straight-line code over the thread's positions and a value
    loaded or stored at a position is reused by the ops after it: softmax
    and LayerNorm read their input from memory once. Longer rows get a loop
    per op. A reduction folds each thread's elements into a partial result,
    combines a warp's partials with `gpu.shuffle xor` and, in a block, the
    warps' totals through workgroup memory after a barrier, leaving the
    total in every thread, so the ops after it need nothing more. Marks the
    kernel `kiln.lanes` (threads per row; `kiln.cooperative` for a block)
    for kiln-map-kernels-to-gpu. A kernel without a forall that reduces
    whole tensors (ReduceSum or ReduceMean over every axis, a loss: tiling
    found no parallel loop, so it would be ONE GPU thread) is made one row
    first: its ops' loops longer than 1 are merged into one over 1-D views
    of contiguous operands, and the ops moved into a forall of one
    iteration. Kernels it cannot prove safe (other access patterns,
    non-associative reductions, row not the last dim) are left alone.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "32",
           "Threads of a warp: 32 (NVIDIA) or 64 (a CDNA wavefront)">,
    Option<"maxRowThreads", "max-row-threads", "int64_t", "1024",
           "Most threads (a block) given to one row">,
    Option<"rowRegisters", "row-registers", "int64_t", "32",
           "Most elements of a row a thread keeps in registers">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect"];
}

def ContractInt8Quads
    : Pass<"kiln-contract-int8-quads", "mlir::func::FuncOp"> {
  let summary = "Computes CPU einsums of uint8 by int8 quads with integer "
                "dot products";
  let description = [{
    The einsum of kiln-pack-int8-matmul-weights, `...mqt,bqwt->...mbw`
    over a uint8 A [..., M, Q, 4] and an int8 B [N/16, Q, 16, 4] (both
    widened to float32 in the body) into float32, in a bufferized CPU
    kernel: tiles of up to `rows` rows by up to `panels` panels of 16
    outputs keep int32 accumulators in vector registers through the whole
    reduction. Each step loads one 64-byte quad of each panel and
    broadcasts 4 bytes of each row of A into the dot products of
    `instructions`: `vpdpbusd` (llvm.x86.avx512.vpdpbusd.512, 64 products
    per instruction; with avx-vnni two 256-bit ones), or with avx2 both
    operands widened to 16 bits into four `vpmaddwd` (pairs of products)
    whose pair sums are added after the reduction. The sums are converted
    to float32 and added to the output once. Exact: every product fits 16
    bits and every sum int32 (Q * 4 <= 65536).

    With `matrix-tiles` (a CPU with AMX-INT8), blocks of 16 rows by two
    panels take AMX tiles instead, where K is a multiple of 64 and at most
    `max-tile-depth`: per 64 bytes of K, a tile of A's 16 rows (16 x 64
    bytes, row stride K) and one of each panel's 16 quads of B (16 x 64
    bytes, contiguous: B's layout is the tile's) into `tdpbusd` (16 x 16
    int32 sums, 16384 products per instruction); the K steps are unrolled
    (tiles are not loop-carried values), and each block's sums go through
    a 16 x 16 int32 scratch to the output. Rows past the last block of 16
    take the vector tiles.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", "4", "Rows (M) of a register tile">,
    Option<"instructions", "instructions", "std::string", "\"avx512-vnni\"",
           "The dot products' x86 ISA: avx512-vnni (vpdpbusd, 512 bits), "
           "avx-vnni (vpdpbusd, 256 bits) or avx2 (vpmaddwd on bytes "
           "widened to 16 bits)">,
    Option<"panels", "panels", "int64_t", "4",
           "Panels of 16 outputs of a register tile">,
    Option<"matrixTiles", "matrix-tiles", "bool", "false",
           "Blocks of 16 rows on AMX tiles (tdpbusd)">,
    Option<"maxTileDepth", "max-tile-depth", "int64_t", "8192",
           "The largest K taken on AMX tiles (its steps of 64 are "
           "unrolled)">
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::amx::AMXDialect"];
}

def ContractInt8ConvQuads
    : Pass<"kiln-contract-int8-conv-quads", "mlir::func::FuncOp"> {
  let summary = "Computes CPU convolutions of uint8 by int8 quads with "
                "integer dot products";
  let description = [{
    The convolution of kiln-pack-int8-conv-weights in a bufferized CPU
    kernel: a contraction `out += uitofp(X) * sitofp(W)` whose X (uint8)
    reads `4 * v + k` along its innermost dim, v the output's innermost
    loop and k a reduction loop of a multiple of 4 that is W's (int8)
    innermost dim, with one parallel loop (the filters) that only W and
    the output use. Tiles of up to `rows` filters by up to `panels`
    panels of 16 outputs along v keep int32 accumulators in vector
    registers through every reduction loop; each step loads 64 bytes of X
    per panel (16 outputs' 4 channels) and broadcasts 4 bytes of W per
    filter into the dot products of `instructions` (as
    kiln-contract-int8-quads). A row's last panel under 16 outputs uses
    masked loads and stores. The sums are converted to the output's type
    (float32, or float64 for integer sums that may pass 2^24) and added
    to the output once.

    With `matrix-tiles` (a CPU with AMX-INT8), a 1x1 convolution whose
    outputs form one row (C a multiple of 64, at most `max-tile-depth`)
    takes AMX tiles in blocks of 16 filters by two panels: per 64 bytes
    of C, a tile of 16 filters' weights (16 x 64 bytes, row stride C)
    and, per panel, one of X's 16 quads of channels of 16 outputs (16 x
    64 bytes, row stride X's between quads) into `tdpbsud` (signed
    weights by unsigned activations, 16 x 16 int32 sums); the steps are
    unrolled, and each block's sums go through a 16 x 16 int32 scratch
    to the epilogue. A last panel of fewer outputs takes narrower tiles
    (16 x 4n bytes of X, 16 x n sums; stored under a mask), and filters
    past the last block take the vector tiles: on AMX, a panel of one
    output costs a whole panel's vpdpbusd steps.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", "4", "Filters of a register tile">,
    Option<"instructions", "instructions", "std::string", "\"avx512-vnni\"",
           "The dot products' x86 ISA: avx512-vnni (vpdpbusd, 512 bits), "
           "avx-vnni (vpdpbusd, 256 bits) or avx2 (vpmaddwd on bytes "
           "widened to 16 bits)">,
    Option<"panels", "panels", "int64_t", "4",
           "Panels of 16 outputs of a register tile">,
    Option<"matrixTiles", "matrix-tiles", "bool", "false",
           "1x1 convolutions in blocks of 16 filters on AMX tiles "
           "(tdpbsud)">,
    Option<"maxTileDepth", "max-tile-depth", "int64_t", "8192",
           "The largest C taken on AMX tiles (its steps of 64 are "
           "unrolled)">
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::amx::AMXDialect"];
}

def ContractWithVectorRegisters
    : Pass<"kiln-contract-with-vector-registers", "mlir::func::FuncOp"> {
  let summary = "Computes CPU matmuls and convolutions as register tiles of vector FMAs";
  let description = [{
    For each contraction `acc + a * b` of a bufferized CPU kernel into
    float32 (inputs float32 or widened from 16 bits) whose output's
    innermost loop is contiguous in one input and absent from the other
    (a matmul with B not transposed; a stride-1 convolution along its output
    width): tiles of up to `register-rows` rows (M, or filters) by up to two
    vectors of `vector-width` elements keep their accumulators in vector
    registers for the whole reduction; each step loads one vector of the
    first input and broadcasts one element of the other per row into a
    `vector.fma`. Remainders get narrower tiles of the same form. Other
    contractions and every other op are left alone. Sets
    `kiln.register_tile` = [rows, width].
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "Elements of one vector register (16 floats: AVX-512)">,
    Option<"registerRows", "register-rows", "int64_t", "8",
           "Rows of a tile (kiln-tile-and-distribute's register-rows)">
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def VectorizeReductionRows
    : Pass<"kiln-vectorize-reduction-rows", "mlir::func::FuncOp"> {
  let summary = "Computes a CPU kernel's reductions a vector of outputs at a time, along the output row";
  let description = [{
    For each linalg.generic of a bufferized CPU kernel with reduction
    loops after its output's innermost loop (a pooling window, a depthwise
    filter, a sum over a middle axis), whose body is scalar arith and math,
    and whose operands read by the body either do not depend on that loop
    or run along it in their innermost dim, contiguously or 2 to 4
    elements apart (a strided pooling window or depthwise filter: s
    vectors' worth loaded, every s-th lane kept): loops over the
    other dims in their order, reductions included, around a loop over the
    output row in steps of `vector-width` that loads, computes and stores
    vectors (a masked step for the row's remainder). Each output then
    takes one vector operation per reduction step instead of a chain of
    dependent scalar ones. Ops whose operands would be read across rows (a
    reduction over the innermost axis, a transposed matmul) are left to
    the loops of convert-linalg-to-loops. Runs after
    kiln-contract-with-vector-registers, on the ops it left.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "Elements of one vector (16 floats: AVX-512)">
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def ConfigureGpuContractions
    : Pass<"kiln-configure-gpu-contractions", "mlir::func::FuncOp"> {
  let summary = "Chooses how each GPU block computes its output block of a contraction (its kiln.contraction)";
  let description = [{
    The second half of the GPU kernel config, made where its facts are
    known: on a bufferized kernel whose forall iteration is one output
    block of a contraction (kiln-configure-gpu-kernels' `blocks`), after
    tiling fixed the block's extents and bufferization the operands'
    layouts. Chooses matrix instructions when they take the block (16-bit
    operands, or float32 as TF32 with `tf32=true`; rows and columns
    multiples of 16 up to 128 and 256, padded when that wastes at most a
    quarter): warps of up to 64x64 (16x16 subtiles), or with `wgmma=true`
    one warpgroup per 64 rows, and the stage pipeline: the depth along K
    (32 or 16), cp.async buffers per operand (as many as fit
    `workgroup-memory-bytes`, up to four, five with a wgmma group left
    running) or two filled from registers, and the wgmma groups a stage
    leaves running (`wgmma-groups-in-flight`). Otherwise thread tiles: up
    to 8x8 outputs per thread, stages of up to 16 along K. Records
    `kiln.contraction = #kiln.contraction<...>`, which
    kiln-contract-with-matrix-cores or kiln-contract-with-thread-tiles
    builds, and the artifact's kernel report and kiln-emulate-gpu read.
  }];
  let options = [
    Option<"arch", "arch", "std::string", "\"nvidia\"",
           "Matrix instructions: nvidia (mma.sync, sm_80+), amd (MFMA, CDNA), "
           "or none (thread tiles only)">,
    Option<"tf32", "tf32", "bool", "false",
           "nvidia: float32 matmuls too, as TF32 (mma.sync m16n8k8, 10-bit "
           "mantissa products, float32 accumulation)">,
    Option<"workgroupMemoryBytes", "workgroup-memory-bytes", "int64_t",
           "kiln::kStaticWorkgroupBytes",
           "Workgroup memory a block may use (the target's limit; above 48 "
           "KiB a CUDA kernel takes it as dynamic shared memory)">,
    Option<"wgmma", "wgmma", "bool", "false",
           "nvidia: warpgroup matrix instructions (wgmma.mma_async, "
           "sm_90a only) for blocks of 64 or 128 rows">,
    Option<"wgmmaGroupsInFlight", "wgmma-groups-in-flight", "int64_t", "1",
           "wgmma: groups a stage leaves running when it ends (0 or 1)">
  ];
}

def ContractWithMatrixCores
    : Pass<"kiln-contract-with-matrix-cores", "mlir::func::FuncOp"> {
  let summary = "Computes the output blocks kiln.contraction puts on warps or warpgroups with tensor-core / MFMA instructions";
  let description = [{
    For a bufferized GPU kernel whose forall iteration is one output block
    of a contraction `acc + extf(a) * extf(b)` (a matmul, or a convolution
    as implicit GEMM whose window loops run around the K steps) and whose
    `kiln.contraction` (kiln-configure-gpu-contractions) gives the block to
    `warps` or `warpgroups`, builds what the config says: `arch=nvidia`,
    32-lane warps running two `nvgpu.mma.sync` m16n8k16 per 16x16 subtile
    and step of 16 along K (m16n8k8 for TF32); `arch=amd`, 64-lane
    wavefronts running one `amdgpu.mfma` 16x16x16. A 16x16 block is one
    warp whose lanes load their fragments straight from global memory. A
    larger block is one GPU block of warps, each computing its `tile`: K
    goes in stages of `stage_k` that all threads copy into workgroup memory
    (coalesced along the dim contiguous in global memory; rows padded by 16
    bytes or swizzled against bank conflicts). With no cp.async buffers,
    two buffers per operand, software-pipelined: each iteration loads the
    stage after next into registers, runs its own stage from one buffer,
    stores the next into the other and meets the others at one
    `gpu.barrier` (OutputBlock::emitStagedReductionLoop). With
    `stage_buffers` (NVIDIA, where every copy is a whole 16-byte run) the
    stages are copied by `cp.async`, one commit group per stage, each
    waited for at the top of the iteration that computes it. On NVIDIA the
    warps load their fragments with one `nvgpu.ldmatrix` x4 per 16x16
    piece of a 16-bit operand (each operand's buffer in its global order,
    `.trans` for [k][tile] ones). Warpgroups (sm_90a) issue
    `nvvm.wgmma.mma_async` m64nNk16 (N the block's columns) with both
    operands read from the stage buffers through matrix descriptors: the
    buffers hold 8x16-byte core matrices (OutputBlock::coreMatrixStages),
    each stage's instructions are one wgmma group, and with
    `groups_in_flight = 1` a stage leaves its group running and waits for
    the previous stage's (`wgmma.wait_group 1`), the buffer refilled being
    the one of two stages before. Such kernels are marked
    `kiln.cooperative` (one forall iteration per GPU block). The block's
    other ops (the accumulator's fill, the elementwise epilogue) run in
    each lane only at the output elements its accumulator fragments hold.
    Sets `kiln.lanes` (threads per iteration). Kernels of any other form
    are left alone.
  }];
  let options = [
    Option<"arch", "arch", "std::string", "\"nvidia\"",
           "Matrix instructions: nvidia (mma.sync, wgmma) or amd (MFMA)">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::vector::VectorDialect",
                           "mlir::nvgpu::NVGPUDialect", "mlir::NVVM::NVVMDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::amdgpu::AMDGPUDialect",
                           "mlir::scf::SCFDialect", "mlir::affine::AffineDialect"];
}

def ContractWithThreadTiles
    : Pass<"kiln-contract-with-thread-tiles", "mlir::func::FuncOp"> {
  let summary = "Computes output blocks of matmuls and convolutions with a block of threads staging operands in shared memory";
  let description = [{
    For a bufferized GPU kernel whose forall iteration is one output block
    of a contraction `acc + a * b` (a matmul, or a convolution as implicit
    GEMM whose window loops run around the K steps; float32 operands, or
    16-bit ones widened by `extf`) and whose `kiln.contraction`
    (kiln-configure-gpu-contractions) gives the block to `threads`: the
    block becomes the work of one GPU block of threads, each computing its
    `tile` of outputs (8 along a side as two runs of 4 half the side
    apart). Per stage of `stage_k` along K, all threads copy the block's
    slices of both operands into workgroup memory, k-major and padded by
    16 bytes (coalesced along the dim contiguous in global memory), two
    buffers per operand, pipelined as for kiln-contract-with-matrix-cores
    (the global loads of the stage after next in flight while this one is
    computed, one `gpu.barrier` per stage); each thread runs the stage's
    outer products, each run of its rows and columns at each k one vector
    load. Threads are numbered along the output's contiguous dim. Sets
    `kiln.cooperative` and `kiln.lanes` (threads per block); the block's
    other ops (the fill, the elementwise epilogue) run in each thread only
    at its outputs.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::vector::VectorDialect",
                           "mlir::scf::SCFDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def DynamicWorkgroupMemory
    : Pass<"kiln-dynamic-workgroup-memory", "mlir::ModuleOp"> {
  let summary = "Moves a CUDA kernel's shared buffers over 48 KiB into dynamic shared memory";
  let description = [{
    Runs on the kernels module after kiln-map-kernels-to-gpu (cuda target).
    A block may declare at most 48 KiB of shared memory statically; more,
    up to the chip's opt-in limit, must be dynamic shared memory. A
    `gpu.func` whose workgroup attributions add up to more loses them:
    each becomes a `memref.view` at its offset (128-byte aligned) into
    `gpu.dynamic_shared_memory`, and the kernel's host declaration gets
    `kiln.dynamic_workgroup_memory` (bytes), which the artifact records and
    the runtime passes at launch after raising the kernel's limit. Smaller
    kernels keep their static buffers.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def AddGpuKernelSignatures
    : Pass<"kiln-add-gpu-kernel-signatures", "mlir::ModuleOp"> {
  let summary = "Exports what each GPU kernel was compiled for beside its code";
  let description = [{
    Runs on the kernels module after kiln-map-kernels-to-gpu (and, on the
    cuda target, kiln-dynamic-workgroup-memory). Each kernel `gpu.func`
    gets a constant `llvm.mlir.global` `<kernel>__signature` of i64 words
    in global memory (address space 1): its binding count, its blocks, its
    threads per block, its dynamic shared memory in bytes, then the bytes it
    reaches in each binding, read from the host declaration's launch
    attributes and buffer types. The runtime reads it through the driver
    when it loads the image and refuses a dispatch that does not match.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ExternDynamicSharedMemory
    : Pass<"kiln-extern-dynamic-shared-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Declares a CUDA kernel's dynamic shared memory as .extern";
  let description = [{
    After convert-gpu-to-nvvm: the zero-length global in shared memory that
    `gpu.dynamic_shared_memory` lowers to is internal, which NVPTX demotes
    into the kernel as a one-byte static `.shared` variable that the kernel
    then overruns into its dynamic shared memory. Made external, it prints
    as `.extern .shared .align 16 .b8 __dynamic_shmem__0[];`, the start of
    the block's dynamic shared memory, as CUDA C++'s `extern __shared__`
    arrays do.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def NarrowGpuIndices : Pass<"kiln-narrow-gpu-indices", "mlir::ModuleOp"> {
  let summary = "32-bit index arithmetic in GPU kernels whose values fit it";
  let description = [{
    After kiln-map-kernels-to-gpu: a gpu.module whose buffers each span
    fewer than 2^31 bytes, whose index constants fit 32 bits and whose
    kernels launch fewer than 2^31 threads (the `kiln.workgroups` and
    `kiln.threads` of their host declarations) gets a data layout with
    32-bit indices, which the lowering to NVVM follows: address arithmetic
    in single 32-bit instructions instead of pairs with carries, and half
    the registers for it. Other modules are left alone.
  }];
  let dependentDialects = ["mlir::DLTIDialect"];
}

def ConvertNvgpuToNvvm : Pass<"kiln-convert-nvgpu-to-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lowers nvgpu ops (ldmatrix, mma.sync, cp.async) at the module's index width";
  let description = [{
    Upstream's convert-nvgpu-to-nvvm with a type converter built from the
    gpu.module's data layout, so that a module given 32-bit indices by
    kiln-narrow-gpu-indices lowers its nvgpu ops with the same index type
    as convert-gpu-to-nvvm lowers the rest.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect"];
}

def GroupThreadAccesses : Pass<"kiln-group-thread-accesses", "mlir::gpu::GPUFuncOp"> {
  let summary = "Unrolls a thread's run of elements with its loads first and its stores last";
  let description = [{
    Elementwise kernels give each thread a run of neighbouring elements so
    that its accesses of contiguous operands merge into 128-bit ones, which
    LLVM's load-store vectorizer only does for accesses close together. A
    loop of at most 16 iterations with no carried values, a straight-line
    body and a store is unrolled, and what it unrolled is ordered as the
    loads (with the index arithmetic they need), the computation, the
    stores. Only where no buffer is both loaded and stored in it and
    nothing else touches memory (kernel arguments are noalias).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def HoistStaticAllocas : Pass<"kiln-hoist-static-allocas", "mlir::gpu::GPUFuncOp"> {
  let summary = "Moves a GPU kernel's fixed-size stack buffers to its entry block";
  let description = [{
    Temporaries promoted to the stack sit where their allocation was: inside
    the bounds guard or a loop of the kernel. There LLVM sees a dynamic stack
    allocation, which the AMDGPU backend cannot select at all and which
    NVPTX keeps in local memory (SROA and mem2reg only promote entry-block
    allocas to registers). Every `memref.alloca` with a static shape moves
    to the start of the kernel's entry block, also out of inner allocation
    scopes (loop bodies, `memref.alloca_scope`): no buffer of a scope can be
    used after the scope ends, so one buffer per thread serves every entry
    that used a fresh one (the contents of a new alloca are undefined
    anyway). Each GPU thread has its own stack, so nothing is shared.
  }];
}

def AllocasToPrivateAddressSpace
    : Pass<"kiln-allocas-to-private-address-space", "mlir::LLVM::LLVMFuncOp"> {
  let summary = "Puts a kernel's stack allocations in the GPU's private address space";
  let description = [{
    `memref.alloca` lowers to an `llvm.alloca` in the generic address space
    (0), which the AMDGPU backend cannot select: its stack lives in the
    private address space (5, "A5" in the data layout). Each such alloca
    becomes an alloca in `address-space`, cast back to a generic pointer for
    its users, as clang emits for AMDGPU; LLVM's address-space inference
    then turns the accesses into private (scratch or register) ones.
  }];
  let options = [
    Option<"addressSpace", "address-space", "unsigned", "5",
           "The target's alloca address space">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ExpandBFloat16Casts : Pass<"kiln-expand-bfloat16-casts"> {
  let summary = "Rounds to and widens from bfloat16 with integer arithmetic";
  let description = [{
    `arith.truncf` to bfloat16 and `arith.extf` from it become integer
    operations (MLIR's bfloat16 expansion: round to nearest even, NaN kept
    a quiet NaN). The CPU target runs it: without AVX512-BF16, LLVM would
    call `__truncsfbf2`, which the kernel object cannot resolve where the
    system's libgcc lacks it (Debian 12).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def RelaxClampsBeforeIntegerCasts
    : Pass<"kiln-relax-clamps-before-integer-casts"> {
  let summary = "Drops NaN and signed-zero ordering from clamps that only feed a float-to-integer conversion";
  let description = [{
    `arith.maximumf`/`minimumf` (and `maxnumf`/`minnumf`) chains read only
    by an `arith.fptoui` or `arith.fptosi` (QuantizeLinear's saturation)
    get the `nnan` and `nsz` fast-math flags: a NaN converts to poison
    whatever the clamp returns and both zeros convert to 0, so the result
    is the same, and x86 computes each clamp with one vmaxps/vminps instead
    of a compare and a blend more. The CPU target runs it.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def ApproximateMath : Pass<"kiln-approximate-math"> {
  let summary = "Rewrites math functions into arithmetic (no libdevice needed)";
  let description = [{
    Without a CUDA toolkit there is no libdevice to link, and the NVVM
    lowering of `math.exp`, `math.erf`, ... would leave calls to `__nv_*`
    functions that no driver resolves. This pass expands hyperbolic, power
    and rounding functions and replaces the rest by MLIR's polynomial
    approximations (computing f16/bf16 in f32), so that the PTX is
    self-contained. f64 functions have no approximation; the cuda target
    names any that remain. With `functions`, only those are approximated
    (the CPU target: math.exp, math.erf and math.tanh, whose libm calls would otherwise
    keep softmax, GELU and sigmoid loops scalar).
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "Approximate only these math ops (math.exp, math.erf, ...); "
               "default: all, after expanding the others into them">
  ];
  let dependentDialects = ["mlir::math::MathDialect", "mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect"];
}

def LibdeviceToIntrinsics : Pass<"kiln-libdevice-to-intrinsics"> {
  let summary = "Replaces calls of simple libdevice functions by LLVM intrinsics";
  let description = [{
    The NVVM lowering turns `math.floor`, `math.sqrt`, `math.absf`, ... into
    calls of libdevice's `__nv_floorf`, ... even where PTX has an
    instruction. Without a toolkit (no libdevice to link) this pass puts the
    LLVM intrinsics back (`llvm.intr.floor`, ...), which the NVPTX backend
    emits as single instructions.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif
