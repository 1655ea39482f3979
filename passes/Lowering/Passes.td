//===- Passes.td - lowering passes --------------------------*- tablegen -*-===//
#ifndef KILN_PASSES_LOWERING_TD
#define KILN_PASSES_LOWERING_TD

include "mlir/Pass/PassBase.td"

def OutlineDispatches : Pass<"kiln-outline-dispatches", "mlir::ModuleOp"> {
  let summary = "Moves each kiln.dispatch_region into a kernel function";
  let description = [{
    Each region of `@main` becomes `func.func @dispatch_<i>_<node>` in a nested
    `module @kernels`, taking one memref per input and per result followed by
    the workgroup id and count (`index`). The body reads its inputs through
    `bufferization.to_tensor` and writes its results with
    `bufferization.materialize_in_destination`, so one-shot bufferization can
    write them in place. The region is replaced by `kiln.dispatch`. The kernel
    records the ONNX nodes it computes in `kiln.nodes`; the kernels module
    records the target in `kiln.target`.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "The target the kernels are compiled for (cpu, cuda:<chips>)">
  ];
  let dependentDialects = ["kiln::KilnDialect", "mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def DeduplicateKernels : Pass<"kiln-deduplicate-kernels", "mlir::ModuleOp"> {
  let summary = "Compiles identical kernels once";
  let description = [{
    Kernels of the nested `module @kernels` whose function types,
    attributes (but for `kiln.nodes`) and bodies are the same op for op,
    ignoring locations, are one kernel: every `kiln.dispatch` of such a
    group names the group's first kernel, and the others are erased. Each
    dispatch first takes its kernel's `kiln.nodes`, so that what every
    launch computes stays named. Repeated layers (BERT's encoder layers,
    ResNet's bottleneck blocks) are then generated and compiled once.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ConvertKilnToLinalg : Pass<"kiln-convert-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers kiln compute ops to linalg, tensor and arith on tensors";
  let description = [{
    Elementwise ops become `linalg.generic` with broadcasting indexing maps;
    MatMul/Gemm/Conv/pooling become `linalg.generic` contractions over padded
    inputs (`tensor.pad`); reductions and softmax become reduction generics.
    Every kiln compute op is illegal afterwards, so an op without a lowering
    is reported by name. A pointwise convolution (1x1, stride 1, no padding
    or groups) whose output rows are shorter than `flatten-rows-below`
    computes over the flattened image, [N, F, H*W], as a batched matmul.
    With `read-window-padding-in-place`, depthwise convolutions and pooling
    read each window element at its unpadded position, clamped into the
    input and replaced by the padding value outside it. With
    `concat-by-element`, a concatenation that other ops of its kernel
    consume becomes a parallel generic whose body reads each element from
    the input that holds it (scf.if per boundary), which tiling fuses into
    its consumers' tiles; otherwise (and when the kernel only writes it out)
    it inserts each input into the result.
  }];
  let options = [
    Option<"flattenRowsBelow", "flatten-rows-below", "int64_t",
           "kiln::kFlattenImageRowsBelow",
           "Pointwise convolutions with output rows shorter than this compute "
           "over the flattened image; 0: every one (the GPU targets: M = H*W "
           "for the matmul blocks)">,
    Option<"readWindowPaddingInPlace", "read-window-padding-in-place", "bool",
           "false",
           "Depthwise convolutions and pooling read their padding in place "
           "(index checks in the generic's body) instead of from a padded "
           "copy of the input (the GPU targets: tiled to threads, the copy "
           "would be a padded tile per thread)">,
    Option<"concatByElement", "concat-by-element", "bool", "false",
           "Concatenations consumed inside their kernel become generics "
           "reading each element from the input that holds it (the GPU "
           "targets: the inserted slices' copies would stay outside the "
           "tiled loop and make the kernel one thread)">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect"];
}

#endif
