//===- Passes.td - fusion passes ----------------------------*- tablegen -*-===//
#ifndef KILN_PASSES_FUSION_TD
#define KILN_PASSES_FUSION_TD

include "mlir/Pass/PassBase.td"

def FormDispatchRegions : Pass<"kiln-form-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Groups kiln ops into kiln.dispatch_region ops, one per kernel";
  let description = [{
    Every compute op gets a region of its own. Elementwise consumers whose
    only producer-side input comes from a region's single-use result join
    that region, so a chain such as conv → add → relu is one kernel. When
    that region and the regions of the consumer's other single-use operands
    are all elementwise (slices and one-element lookups, a Gather from a
    1-D table or a GatherElements, included) of the consumer's shape, they
    join as one: an LSTM cell's gates, each a slice of the gate matmul and
    an activation, become one kernel for the new cell state, and a level of
    a tree walk two kernels. Constants
    and reshapes stay outside: weights are buffers, and reshapes of contiguous
    data are aliases, not kernels. Small constants (≤ 16 elements) are cloned
    into the regions that use them, so they become immediates. With
    `fuse-attention`, a last-dim softmax joins the region of the matmul
    (with its scale and mask epilogue) that produces its input, and a
    matmul of that softmax joins it too: attention is one kernel. With
    `fuse-conv-padding`, a convolution's zero padding (a `kiln.pad` of
    kiln-split-conv-padding, of spatial dims only: the channels-last
    layout's) joins the convolution's region instead of being a kernel of
    its own; the GPU targets' blocks then read the input through it in
    place (kiln-tile-and-distribute keeps it whole, OutputBlock's padded
    input) instead of a padded copy being written and read back.
    With `absorb-dequantized-operands`, an elementwise chain that
    dequantizes 8-bit integers (a cast to float32, then ops with
    constants: minus the zero point, times the scale) for one op of
    another region joins that region ahead of it: a QDQ model's residual
    add then loads the shortcut's bytes instead of another kernel storing
    their float32 values for it. An outer product of smaller operands (an
    elementwise op whose result has more elements than each operand that
    is not a constant: a per-pixel sum times per-filter offsets) read by
    one elementwise op joins that op's region ahead of it, which
    recomputes it instead of another kernel storing every element.
  }];
  let options = [
    Option<"fuseElementwise", "fuse-elementwise", "bool", "true",
           "Fuse elementwise consumers into their producer's region">,
    Option<"fuseConvPadding", "fuse-conv-padding", "bool", "false",
           "A channels-last convolution's spatial zero padding joins the "
           "convolution's region (the GPU targets, which read it in place)">,
    Option<"fuseAttention", "fuse-attention", "bool", "false",
           "Attention, Softmax(Q·Kᵀ [·s] [+ mask])·V over the last dim, as "
           "one region (the CPU target; GPU targets keep three kernels)">,
    Option<"absorbDequantizedOperands", "absorb-dequantized-operands", "bool",
           "false",
           "An operand dequantized from 8-bit integers for one op is "
           "dequantized in that op's region (the CPU target)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FoldEmptyResults : Pass<"kiln-fold-empty-results", "mlir::func::FuncOp"> {
  let summary = "Replaces ops whose results have no element by empty constants";
  let description = [{
    An op of the `kiln` dialect without side effects or regions whose every
    result is a static tensor with a zero-size dim computes nothing: each
    result becomes a `kiln.constant` of no element, so that no kernel is
    made for it (and no lowering or tiler meets loops of no iteration). An
    op with a non-empty result (a reduction over an empty axis, a padding of
    an empty tensor) is kept.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def DropRepeatedQuantization
    : Pass<"kiln-drop-repeated-quantization", "mlir::func::FuncOp"> {
  let summary = "Drops a quantize-dequantize pair whose input is on its grid";
  let description = [{
    Matches dequantize(quantize(x)) as the importer writes it, (cast(clip(
    round(x / s) + z, lo, hi)) - z) * s with splat float32 s and z, and
    replaces it by x when x already holds only values of that grid: x is
    such a pair of the same scale, zero point and integer type (a clip
    range within this one's), or data moved from such values by reshape,
    transpose, slice, expand, concat, or a max pool whose every window holds
    an input element. The replacement is exact: on the grid the pair gives
    its input back bit for bit. Scales outside [2^-100, 2^100] are left.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def CheckBatchIndependence
    : Pass<"kiln-check-batch-independence", "mlir::func::FuncOp"> {
  let summary = "Refuses a dynamic batch whose elements some op would mix";
  let description = [{
    With arguments marked `kiln.batched` (kiln-compile --dynamic-batch),
    the artifact runs a batch of any size as chunks of the compiled one.
    Every value gets the dim that carries the batch (or none, for values
    computed from weights alone); an op that would combine elements of
    that dim — a reduction, softmax or layer norm over it, a reshape
    moving it inside another dim, a concat along it, a matmul contracting
    it, a gather across it, a broadcast against a weight that varies along
    it, an op whose treatment of it is unknown — is an error naming the
    node. An op's `kiln.batch_dim` (recorded by the driver from the model
    imported at a second batch size) is taken over the rules' own answer.
    Results that carry the batch must carry it whole in one dim and are
    marked `kiln.batched` with that dim. Without batched arguments it does nothing.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ComputeHalfInSingle : Pass<"kiln-compute-f16-in-f32", "mlir::func::FuncOp"> {
  let summary = "Computes float16 ops in float32, rounding each result to float16";
  let description = [{
    A float16 model keeps float16 tensors between ops, but summing a row,
    a dot product or a convolution window in float16 loses digits with
    every term. As onnxruntime does on the CPU, every kiln op with a float16
    operand or result (other than `kiln.cast` and `kiln.constant`) is
    rebuilt on float32: its float16 operands are cast up, it computes and
    accumulates in float32, and each float16 result is rounded back with a
    cast, so values between ops keep float16 precision. Ops that only move
    elements (reshape, transpose, slice, gather, concat, expand, tile) stay
    in float16: they are exact.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def DemotePrecision : Pass<"kiln-demote-precision", "mlir::func::FuncOp"> {
  let summary = "Keeps float32 tensors in float16 or bfloat16 between ops";
  let description = [{
    `--precision=f16|bf16`: float32 weights are converted at compile time,
    inputs are rounded where they enter, and each float32 result is rounded
    to the 16-bit type. Every consumer widens its operands with a
    `kiln.cast` of its own, so ops still compute in float32 (a contraction
    accumulates in float32 over 16-bit operands, as tensor cores do) while
    kernels move half the bytes. Outputs are widened back to float32.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"f32\"",
           "Storage type of float32 tensors: f32 (no change), f16 or bf16">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def RecognizeLayerNorm : Pass<"kiln-recognize-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Folds the ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div chain into kiln.layer_norm";
  let description = [{
    `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)` over the last dim,
    with the square as `d * d` or `d ^ 2` and every intermediate used only
    inside the chain, becomes one `kiln.layer_norm`: one kernel instead of
    three (the centered values have two consumers, which elementwise fusion
    does not duplicate). Chains over other axes, or whose intermediates are
    used elsewhere (LayerNormalization's Mean output), are left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def RecognizeActivations : Pass<"kiln-recognize-activations", "mlir::func::FuncOp"> {
  let summary = "Folds decomposed GELU, SiLU and HardSwish into one kiln op each";
  let description = [{
    `x * 0.5 * (1 + erf(x / sqrt(2)))` becomes `kiln.gelu`,
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` becomes
    `kiln.gelu_tanh` (the cube as `Pow(x, 3)` or `x * x * x`),
    `x * sigmoid(x)` becomes `kiln.silu` and `x * hard_sigmoid(x; 1/6, 1/2)`
    becomes `kiln.hard_swish`, whatever the order of the multiplications.
    In the decomposed form x has two consumers, so the activation cannot
    fuse into x's producer (a MatMul's bias add, a Conv) and runs as a
    kernel of its own; as one op it is that kernel's epilogue. Products with
    other factors, other constants, or a different value in place of x are
    left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def TransposeWeights : Pass<"kiln-transpose-weights", "mlir::func::FuncOp"> {
  let summary = "Stores the constant B of a Gemm with transB as K x N";
  let description = [{
    `kiln.gemm %a, %w {transB = true}` with a float32 constant `%w` (N x K;
    dense or a resource blob, as PyTorch exports Linear layers on 2-D
    inputs) reads a new constant that holds `%w` transposed, with transB
    false: the kernel's B is then contiguous along N, which the CPU's
    register tiles need. Non-constant or non-float32 B is left alone. A
    Gemm whose A has at most `max-rows` rows and whose K is at least
    `one-row-min-k` stores B N x K instead (transB): each output then reads
    a contiguous row of B (a GPU warp per output, coalesced,
    kiln-distribute-rows-to-lanes; on the CPU a vector dot product per
    output instead of a register tile walking a column panel at a stride
    of N). A `kiln.matmul` of such rows by a constant float32 matrix (a
    Keras Dense layer at batch 1) becomes that Gemm first.
  }];
  let options = [
    Option<"oneRowMinK", "one-row-min-k", "int64_t", "0",
           "A Gemm of at most max-rows rows reads B N x K when K is at "
           "least this (0: never)">,
    Option<"maxRows", "max-rows", "int64_t", "1",
           "The most rows (M) a Gemm that reads B N x K may have">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PackMatMulWeights
    : Pass<"kiln-pack-matmul-weights", "mlir::func::FuncOp"> {
  let summary = "Stores a matmul's constant B as column panels";
  let description = [{
    A `kiln.matmul` of A [..., M, K] by a float32 constant B [K, N] (or a
    `kiln.gemm` A * B + C without transposes, alpha and beta 1) of at
    least `min-bytes` (with at most `max-rows` rows of outputs when it is
    positive) and N a multiple of two `panel-width`s, reads B stored as panels
    Bp [N / P, K, P] (Bp[b, k, w] = B[k, b * P + w]) through
    `kiln.einsum` `...mk,bkw->...mbw`, reshaped back to [..., M, N] (the
    same elements in the same order). The CPU's register tiles then read
    each panel as one contiguous stream instead of K runs of P floats,
    N * 4 bytes apart: a few-row matmul is bound by reading B from memory,
    and the prefetchers follow one stream, not K; a matmul of many rows
    reads each panel again per tile of rows, from few pages instead of K
    (BERT-base's 768 x 3072 weights: 12 KiB rows, 3072 pages). One packed
    copy per weight however many matmuls read it.
  }];
  let options = [
    Option<"panelWidth", "panel-width", "int64_t", "32",
           "Columns of one panel (P): the register tile's width">,
    Option<"maxRows", "max-rows", "int64_t", "0",
           "The most output rows (M) of a matmul whose weight is packed "
           "(0: any)">,
    Option<"minBytes", "min-bytes", "int64_t", "262144",
           "The least bytes of a weight that is packed">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PackInt8MatMulWeights
    : Pass<"kiln-pack-int8-matmul-weights", "mlir::func::FuncOp"> {
  let summary = "Computes a matmul of uint8 values by int8 weights as "
                "4-way integer dot products";
  let description = [{
    A `kiln.matmul` of A = cast<f32>(X) [- z] (X uint8 [..., M, K], z one
    float32 value: a dynamically quantized activation minus its zero
    point) by a float32 constant B [K, N] whose every element is an
    integer int8 holds (int8 weights minus a zero point of 0), K a
    multiple of 4 and N at least 16, becomes

      einsum(`...mqt,bqwt->...mbw`, cast<f32>(X as [..., M, K/4, 4]),
             cast<f32>(Bq)) reshaped to [..., M, N]  [- z * colsum(B)]

    with Bq int8 [ceil(N/16), K/4, 16, 4], Bq[b, q, w, t] = B[4q + t,
    16b + w] (zero past N; the padding columns are sliced off the sums):
    the layout of x86's `vpdpbusd`, which adds the four products of 4
    uint8 and 4 int8 values to each of 16 int32 lanes
    (kiln-contract-int8-quads computes the einsum with it). The zero
    point's share of every sum, z times B's column sum, is subtracted
    after. The integer sums are exact in int32 (K at most 65536), and
    equal to the float32 sums whenever those were exact (the importer
    sums integers in float32 only where every partial sum stays below
    2^24).

    A QDQ model's matmul, A = (cast<f32>(X) [- z]) * s (s a constant) by
    weights the importer dequantized, float32(Q * scale[n]) for int8 Q
    (one scale, or one per column; found from each column's largest value
    and checked against every one), takes the same einsum over Q, then
    multiplies by s * scale[n]: the integer sum of products computed
    exactly and scaled once, as onnxruntime's int8 kernels compute it,
    where the float32 path rounds every product and partial sum.

    Integer weights of 9 bits (uint8 weights minus their zero point: a
    column spans at most 256 values) are moved into int8 by an offset per
    column, c[n] (the column's smallest plus 128, 0 where it fits), and
    each row's sum of X's bytes (a reduce_sum, exact in float32) times
    c[n] is added to the einsum's sums. An unscaled integer matmul sums in
    float64 where a partial sum (255 * (sum_k |Q[k, n]| + |c[n]| * K) + z
    * |sum_k B[k, n]|) may reach 2^24, as a float64 one does, and is
    converted to its type once: the int32 result stays exact.
  }];
  let options = [
    Option<"minWeightElements", "min-weight-elements", "int64_t", "16384",
           "The fewest elements of a weight whose matmul takes quads (a "
           "smaller one costs a few microseconds either way)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PackInt8ConvWeights
    : Pass<"kiln-pack-int8-conv-weights", "mlir::func::FuncOp"> {
  let summary = "Computes a convolution of uint8 values by int8 weights as "
                "4-way integer dot products";
  let description = [{
    A 2-D `kiln.conv` (NCHW, no groups or dilation, stride s <= 4) of a QDQ
    model's dequantized activations, x = (cast<f32>(X) - z) * s (X uint8
    [N, C, H, W], z and s constants), by weights on an int8 grid,
    float32(Q[f] * scale[f]) (one scale, or one per filter, found and
    checked as kiln-pack-int8-matmul-weights does; or Q * scale left to a
    kernel by the importer), becomes a convolution of X's bytes in quads
    of channels by Q's:

      Xq = X padded with z (the padding, C to a multiple of 4, W to a
           multiple of s) as [N, C/4, H * s, W / s * 4],
           Xq[n, q, s*y + ph, 4*x + t] = X[n, 4q + t, y, s*x + ph]
      Wq = Q as int8 [F, C/4, s * KH, 4 * ceil(KW / s)],
           Wq[f, q, s*i + ph, 4*j + t] = Q[f, 4q + t, i, s*j + ph]
      y  = (conv(cast<f32>(Xq), cast<f32>(Wq), strides [s * s, 4])
            - z * sum(Q[f])) * (s * scale[f]) [+ bias]

    Each output sums, for every tap, 4 channels' products of 4 contiguous
    bytes of Xq and of Wq, and 16 outputs along a row read 64 contiguous
    bytes of Xq: the operands of x86's `vpdpbusd`, which
    kiln-contract-int8-conv-quads computes the convolution with. A
    stride-s convolution's column phases become rows, so every
    convolution reads its row with stride 4. Padding X with its zero
    point is padding x with zeros, and z * sum(Q[f]) is every tap's share
    of the zero point, so the sums are those of the dequantized
    convolution, exact in int32, scaled once. Zeros padded around x
    (kiln-split-conv-padding), a slice of it
    (kiln-split-pointwise-conv-stride) and a max pooling of it (the
    largest dequantized value is the dequantized largest byte) are done to
    X's bytes instead, once for all the convolutions that read them.

    A convolution whose output rows fill less than half a vector (7 of a
    7x7 map's outputs in 16 lanes; not a 1x1, whose contiguous rows are
    one) with at least 16 filters and 16384 weights becomes a matmul of
    patches instead: X padded with z, channels-last, cut into each tap's
    strided window and stacked as patches [N, Ho * Wo, KH * KW * C]
    (uint8, at most 4 MiB), dequantized, times Q as [KH * KW * C, F]
    scaled per filter, plus the bias, transposed back to NCHW.
    kiln-pack-int8-matmul-weights, which runs after this pass, packs that
    matmul: its vectors lie along the filters, every lane used.

    An integer convolution (ConvInteger's, QLinearConv's: no scale s, the
    result an exact integer sum, float32 or float64 as the importer chose)
    takes quads too, of X minus a constant zero point or one known at run
    time (DynamicQuantizeLinear's, cast from one uint8 Z: X is then padded
    with Z as (X - Z) padded with 0, plus Z, in uint8's wrapping
    arithmetic).
    Its integer weights W may span 9 bits (uint8 weights minus their zero
    point): a filter outside int8 takes an offset o[f] (its smallest plus
    128) so that Q = W - o is int8, and

      y = conv(Xq, Wq) + o[f] * windowSum - z * sum(W[f])

    where windowSum, each output's sum of X's padded bytes, is the
    convolution of Xq by one filter of ones (exact in float32). The sums
    stay float32 where every partial sum (255 * (sum |Q[f]| + |o[f]| *
    taps) + 255 * |sum(W[f])|) stays below 2^24, else float64, and are
    cast back to the result's type: the same integers. On a narrow map its
    patches are multiplied by W itself, in the sums' type, and
    kiln-pack-int8-matmul-weights moves W into int8 as it does a
    matmul's.
  }];
  let options = [
    Option<"minWeightElements", "min-weight-elements", "int64_t", "4096",
           "The fewest elements of a weight whose convolution takes quads"
           " (a smaller one costs a few microseconds either way)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PackedWeights : Pass<"kiln-packed-weights", "mlir::func::FuncOp"> {
  let summary = "Matmuls by 4-bit weights: read packed (CPU) or folded to float32";
  let description = [{
    A `kiln.matmul` whose B is a reshape to [K, N] of a [blocks, 2,
    block/2, N] chain of elementwise ops on constants that converts bytes
    to floats (the importer's MatMulNBits and DequantizeLinear of 4-bit
    weights: values two to a byte, unpacked and scaled per block) becomes an einsum of A as [...,
    blocks, 2, block/2] by the chain, which kiln-form-dispatch-regions
    then puts in the contraction's kernel: the kernel reads the bytes.
    With `fold` the chain and the reshape are computed instead: a float32
    [K, N] constant (targets whose contraction kernels read float
    operands).
  }];
  let options = [
    Option<"fold", "fold", "bool", "false",
           "Compute the unpacked weights at compile time">
  ];
}

def NarrowIntegerWeights
    : Pass<"kiln-narrow-integer-weights", "mlir::func::FuncOp"> {
  let summary = "Stores integer-valued float32 weights as int8 or int16";
  let description = [{
    The float32 constant B of a `kiln.matmul` or `kiln.gemm` (or the
    panels of kiln-pack-matmul-weights' einsum) whose every
    element is an integer that int8 (else int16) holds exactly (a
    dynamically quantized model's int8 weights minus their zero point) is
    stored in that type, and the contraction reads a `kiln.cast` of it to
    float32, one per contraction. kiln-form-dispatch-regions puts each cast
    in its contraction's kernel, which loads the narrow integers and
    converts them in registers: the same values from a quarter (a half) of
    the bytes. Only weights of at least `min-bytes` read for at most
    `max-rows` rows of outputs (memory-bound: each element is loaded once
    per row); a -0.0 or any other value the type does not hold leaves the
    weight as it is.
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", "64",
           "The most output rows (M) of a contraction whose weight is "
           "narrowed">,
    Option<"minBytes", "min-bytes", "int64_t", "65536",
           "The least float32 bytes of a weight that is narrowed">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SplitConvPadding : Pass<"kiln-split-conv-padding", "mlir::func::FuncOp"> {
  let summary = "Moves a convolution's zero padding into its own kiln.pad";
  let description = [{
    A padded convolution pads its whole input inside the kernel, and every
    workgroup of the kernel would do it again. As a separate `kiln.pad` the
    padding becomes its own (tiled) kernel that runs once, and the
    convolution reads a padded buffer with no bounds logic. With
    `split-depthwise=false` (every target's pipeline), depthwise
    convolutions keep their padding: on the CPU a workgroup's channels read
    only the same input channels, so each channel is padded once, in the
    workgroup's cache, instead of a padded copy of the input being written
    and read back (MobileNetV2: 18 padding kernels, 0.78 ms of 4.9); GPU
    kernels read the padding in place (kiln-convert-to-linalg's
    read-window-padding-in-place).
  }];
  let options = [
    Option<"splitDepthwise", "split-depthwise", "bool", "true",
           "Also split the padding of depthwise convolutions">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PatchifyConvsAsEinsums
    : Pass<"kiln-patchify-convs-as-einsums", "mlir::func::FuncOp"> {
  let summary = "Convolutions whose windows tile the image as einsums over patches";
  let description = [{
    A convolution with stride equal to its kernel and no padding (ViT's
    and CLIP's patch embeddings, an audio model's frames) becomes a
    `kiln.einsum` over the input reshaped into patches
    (`[N, C, H/p, p, W/q, q]`, an alias; the rows and columns past the last
    whole window sliced off first) and the weight, plus the bias: its K
    is then the window's width (16, 32) instead of the input channels
    (3), so that GPU targets compute it with matrix instructions. Windows
    narrower than matrix instructions take (paddedMatrixK: Swin's and
    ConvNeXt's 4x4) are left alone there. With `vector-registers` (the
    CPU) windows of any width qualify and the einsum is
    `ncubva,cbao->nuvo`: the constant weight stored [C, p, q, O] so that
    register tiles load vectors of filters and broadcast the patches'
    values (a stride past kMaxVectorStride left the convolution scalar
    reductions); a result not read as tokens is transposed back to
    [N, O, H', W'], which is done only for windows wider than
    kMaxVectorStride (narrower ones keep the convolution's own tiles). A
    1-D convolution of such windows becomes `ncva,cao->nvo` over frames
    `[N, C, T/q, q]` there, transposed back.
  }];
  let options = [
    Option<"vectorRegisters", "vector-registers", "bool", "false",
           "CPU register tiles: windows of any width, summed along the "
           "filters of a weight stored [C][p][q][O]">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def CancelLayoutTransposes
    : Pass<"kiln-cancel-layout-transposes", "mlir::func::FuncOp"> {
  let summary = "Transposes that undo each other across elementwise ops cancel";
  let description = [{
    `transpose<q>(f(transpose<p>(x)))`, where q undoes p and f is a chain
    of single-use elementwise ops whose other operands are constants
    (tf2onnx wraps each batch normalization and activation of a CNN in
    NCHW -> NHWC -> NCHW transposes), becomes `f'(x)`: f computed in x's
    layout, its constants transposed (folded), both transposes gone.
    Transposes that meet no inverse along such a chain stay.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def GatherBeforeTranspose
    : Pass<"kiln-gather-before-transpose", "mlir::func::FuncOp"> {
  let summary = "Gathers of one index ahead of the transpose they read; "
                "transposes of unit dims as reshapes";
  let description = [{
    `gather(transpose(x), i)` with a rank-0 index becomes the transpose of
    the gather on x's matching axis (PyTorch's MultiheadAttention takes q,
    k and v from a transpose of its whole packed projection: that copy
    goes away), and a transpose that keeps the order of the dims longer
    than 1 becomes a reshape (an alias).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SpaceToDepthStridedConvs
    : Pass<"kiln-space-to-depth-strided-convs", "mlir::func::FuncOp"> {
  let summary = "Strided convolutions over few input channels as stride-1 "
                "ones over space-to-depth blocks";
  let description = [{
    A convolution at stride s >= 2 with overlapping windows (kernel > s;
    patch embeddings are kiln-patchify-convs-as-einsums') over fewer input
    channels C than matrix
    instructions take as K (paddedMatrixK: an image's 3), where C*s*s
    they do take (12 as 16 at stride 2), with a float32 constant weight,
    becomes a stride-1 convolution over the input cut into s x s blocks
    stacked as channels (a `kiln.pad` whose begin pad is a multiple of s,
    a reshape, a transpose and a reshape: [N, C*s*s, H/s, W/s]) with the
    weight rearranged the same way at compile time (shifted and padded
    with zeros to whole blocks). ResNet's 7x7 stride-2 first convolution
    becomes a 4x4 one over 12 channels. Run before
    kiln-demote-precision (float32 weights only).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ChannelsLastConvWeights
    : Pass<"kiln-channels-last-conv-weights", "mlir::func::FuncOp"> {
  let summary = "Stores the constant weights of KxK convolutions as "
                "[F][kh][kw][C], read through a transpose";
  let description = [{
    A convolution (not depthwise) whose window is more than one element and
    whose weight is a constant (float32, or 16-bit behind a widening
    `kiln.cast`) reads a new constant holding the weight as [F][kh][kw][C]
    through a `kiln.transpose` back to [F][C][kh][kw]. The transpose joins
    the convolution's kernel (kiln-form-dispatch-regions) and folds into
    its indexing map (kiln-fuse-elementwise-producers): the GPU kernels,
    which stage K as input channels at one window position, then read runs
    contiguous along C instead of one element kh*kw apart from the next.
    GPU targets.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ChannelsLastActivations
    : Pass<"kiln-channels-last-activations", "mlir::func::FuncOp"> {
  let summary = "Computes convolutions without groups on NHWC activations";
  let description = [{
    Every 2-D `kiln.conv` without groups becomes a `channels_last` one
    between a transpose to NHWC and one back to NCHW. The transposes back
    then move down through the elementwise ops and constant pads that read
    them, and adjacent transposes compose, so that between convolutions
    they cancel: the GPU kernels read A's rows (pixels) and write the
    result's rows contiguous along channels. Transposes remain where a
    chain of convolutions starts or ends (a flatten, the model's input and
    output): each is a kernel, so the function is rewritten only where a
    trial on a copy leaves at least `min-convs-per-transpose` convolutions
    per transpose it adds. GPU targets (--channels-last-activations).
  }];
  let options = [
    Option<"minConvsPerTranspose", "min-convs-per-transpose", "int64_t",
           /*default=*/"2",
           "Convolutions converted per transpose added, at least (0: always)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KMajorMatMulWeights
    : Pass<"kiln-k-major-matmul-weights", "mlir::func::FuncOp"> {
  let summary = "Stores a MatMul's 16-bit constant weight [N][K], read "
                "through a transpose";
  let description = [{
    A `kiln.matmul` whose B is a 2-D 16-bit constant behind its widening
    `kiln.cast` (the matmuls that take tensor cores) reads a new constant
    holding it transposed, [N][K], through a `kiln.transpose`, which
    kiln-fold-transposes-into-contractions folds into the matmul (a
    permuted einsum): tensor-core fragments loaded from global memory then
    read B contiguous along K, 8 bytes a lane. GPU targets.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def DropPaddingOnlyTaps
    : Pass<"kiln-drop-padding-only-taps", "mlir::func::FuncOp"> {
  let summary = "Drops the window taps of a convolution that read only its padding";
  let description = [{
    A dilated convolution on a map smaller than its dilation (DeepLabV3's
    ASPP at rates 12-36 on a 3x3 map) has taps that read zero padding at
    every output pixel. Its weight is cut to the span of taps that read
    the image somewhere (a constant is stored cut; any other weight is read
    through a `kiln.slice`) and its padding shrinks by the dropped taps'
    reach: the same output from fewer taps and a smaller padded copy. A
    convolution whose cut would need negative padding, or whose every tap
    reads padding, is left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ConvColumnsAsRows
    : Pass<"kiln-conv-columns-as-rows", "mlir::func::FuncOp"> {
  let summary = "Computes a convolution one column wide as one row wide";
  let description = [{
    A 2-D convolution over a [N, C, H, 1] image with a [kh, 1] window (a
    Conv1D as tf2onnx exports it) has one-pixel output rows, which every
    convolution kernel tiles or vectorizes along. It becomes a convolution
    over the image reshaped to [N, C, 1, H] with a [1, kh] window, and its
    result is reshaped back: reshapes that only move a unit dim, no copies.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SplitPointwiseConvStride
    : Pass<"kiln-split-pointwise-conv-stride", "mlir::func::FuncOp"> {
  let summary = "Subsamples a strided 1x1 convolution's input with its own kiln.slice";
  let description = [{
    A 1x1 convolution at stride s (ResNet's downsample convolutions)
    becomes a `kiln.slice` taking every s-th pixel, its own small copy
    kernel, and a stride-1 convolution: onto short rows (14x14 and 7x7 maps)
    the linalg lowering computes it over the flattened image (`[N, F, H*W]`,
    see `kFlattenImageRowsBelow`); onto long ones its vectors load plainly
    instead of as a masked span and a shuffle. Padded, grouped and
    larger-kernel convolutions are left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FoldTransposesIntoContractions
    : Pass<"kiln-fold-transposes-into-contractions", "mlir::func::FuncOp"> {
  let summary = "Folds a transpose that only feeds a matmul or einsum (or only reads its result) into it as a kiln.einsum";
  let description = [{
    `matmul(transpose(x), b)` becomes `einsum(x, b)` with x's subscripts
    permuted, and `transpose(matmul(a, b))` an einsum whose output
    subscripts are permuted (a kiln.cast between the two moves to the other
    side), when the transpose has no other use and the permuted operand's
    (or result's) innermost dim is one of the contraction's M, N or K. For
    GPU targets, where each transpose is otherwise a copy kernel: attention
    as PyTorch exports it has four per layer (queries, keys and values
    into heads, the context back).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def MoveReshapesAfterElementwise
    : Pass<"kiln-move-reshapes-after-elementwise", "mlir::func::FuncOp"> {
  let summary = "Computes an elementwise op before the reshape it reads, so that it fuses into the reshaped value's kernel";
  let description = [{
    `op(reshape(x), y...)` becomes `reshape(op(x, reshape(y)...))` when the
    reshape has no other use and reads a computed value, and every operand
    has the op's shape (no broadcasting). Reshapes are aliases that
    kiln-form-dispatch-regions keeps outside kernels; moved after the op,
    they no longer stand between a kernel and its elementwise epilogue
    (GPT-2's Gemm on [B*S, E] followed by GELU or a residual add on
    [B, S, E]). Casts and Expand are left alone.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SplitMatMulK : Pass<"kiln-split-matmul-k", "mlir::func::FuncOp"> {
  let summary = "Splits a float32 matmul with few outputs and a long K into K parts summed by a second kernel (GPU)";
  let description = [{
    A float32 `kiln.matmul` of A [..., M, K] and a 2-D B [K, N] whose
    outputs make fewer than `max-blocks` blocks of 32x32 and whose K is at
    least `min-k` becomes `reduce_sum(einsum("...msk,skn->s...mn",
    reshape(A), reshape(B)), axes = [0])` with S = 8, 4 or 2 parts (each a
    multiple of 16 and at least 128 long; at most 4 x max-blocks blocks):
    S times as many GPU blocks, each with an S times shorter reduction
    loop, plus one kernel that adds the parts and runs the matmul's
    elementwise epilogue. For GPU targets, where such a matmul (BERT at
    batch 1) leaves most SMs idle and each block waits on its loads.
  }];
  let options = [
    Option<"minK", "min-k", "int64_t", "512",
           "Shortest K that is split">,
    Option<"maxBlocks", "max-blocks", "int64_t", "264",
           "Matmuls with at least this many 32x32 output blocks (two per "
           "SM of an H200) are left alone">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SplitReductions : Pass<"kiln-split-reductions", "mlir::func::FuncOp"> {
  let summary = "Splits a long reduction with few outputs into parts reduced by a second kernel (GPU)";
  let description = [{
    A float `kiln.reduce_sum`, `reduce_mean`, `reduce_max` or `reduce_min`
    over adjacent axes of at least `min-elements` elements, with fewer than
    `min-outputs` outputs and at least `min-run` elements reduced into
    each (`min-strided-run` when the reduced axes are not the innermost:
    each output is then one thread walking a strided run, where an
    innermost run gets a warp), reduces its input reshaped to
    [pre..., S, R/S, post...] over the R/S axis and then over the S axis
    (S a power of two up to 256 that divides the run into parts of at least
    32, the fewest that reach `min-outputs` outputs): S times as many GPU
    threads in the first kernel, each over an S times shorter part. For GPU
    targets, where such a reduction (a channels-last GlobalAveragePool of a
    large map) ran as one thread per output; and for the CPU, with
    `min-outputs` its workgroups, where a reduction of a whole tensor
    (DynamicQuantizeLinear's range) ran on one core.
  }];
  let options = [
    Option<"minOutputs", "min-outputs", "int64_t", "8192",
           "Reductions with at least this many outputs are left alone">,
    Option<"minRun", "min-run", "int64_t", "1024",
           "Shortest run of elements per output that is split">,
    Option<"minStridedRun", "min-strided-run", "int64_t", "64",
           "Shortest run that is split when the reduced axes are not the "
           "innermost">,
    Option<"minElements", "min-elements", "int64_t", "262144",
           "Reductions of fewer input elements (1 MiB of float32) are left "
           "alone: a warp or block per row reads them fast enough, and a "
           "second kernel would cost more than it saves">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SplitConvK : Pass<"kiln-split-conv-k", "mlir::func::FuncOp"> {
  let summary = "Splits a float32 convolution with few outputs and many input channels into channel parts summed by a second kernel (GPU)";
  let description = [{
    The convolution sibling of `kiln-split-matmul-k`. A float32
    `kiln.conv` (one group, static shapes; both operands float32 or both
    widened from 16 bits, which are split before their widening and keep
    tensor cores) whose outputs make fewer than
    `max-blocks` blocks of 32x32 and whose K (input channels x window) is
    at least `min-k` is computed in S = 8, 4 or 2 parts along its input
    channels (each a multiple of 16 channels and at least 128 products per
    output; at most 4 x max-blocks blocks), summed by `kiln.reduce_sum`,
    then the bias added. A 1x1 convolution at stride 1 without padding
    becomes `einsum("nskp,fsk->snfp")` over reshaped (not copied) operands;
    any other one a grouped convolution (group = S) over its constant
    weight, rearranged once at compile time into the groups' order
    (non-constant weights are left alone). For GPU targets: ResNet-50 at
    batch 1 (14x14 and 7x7 maps, 256 to 2048 channels), whose convolutions
    otherwise leave most SMs idle.
  }];
  let options = [
    Option<"minK", "min-k", "int64_t", "512",
           "Shortest K (input channels x window) that is split">,
    Option<"maxBlocks", "max-blocks", "int64_t", "264",
           "Convolutions with at least this many 32x32 output blocks (two "
           "per SM of an H200) are left alone">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif
