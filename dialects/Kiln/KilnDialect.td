//===- KilnDialect.td - the kiln dialect -------------------*- tablegen -*-===//
//
// The kiln dialect holds a model as a graph of tensor ops with ONNX semantics
// (numpy broadcasting, NCHW layouts). Every op infers its result type from its
// operands and attributes, so the importer never has to compute shapes itself.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor-level ops for deep-learning graphs imported from ONNX";
  let description = [{
    Ops on ranked tensors with ONNX semantics. Weights are `kiln.constant` ops
    whose value is a `dense_resource` blob. `kiln.dispatch_region` groups ops
    that become one kernel; `kiln.dispatch` calls an outlined kernel.
  }];
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// The most elements a folder computes. None by default: canonicalization
    /// leaves constants in the form the passes gave them (a widening cast of
    /// float16 weights stays a cast, and they stay stored in 16 bits). The
    /// importer raises it while it computes a model's constant subgraphs
    /// (FoldLimitScope). Folds to an operand (a cast to the same type) do
    /// not count.
    int64_t maxFoldedElements = 0;
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];

  // What passes record on kernels for the passes after them, the artifact
  // writer, the reports and kiln-emulate-gpu. Declared here, each with its
  // type; the dialect's verifier refuses any other `kiln.` attribute and any
  // of these with another type. Names: KilnDialect::<Name>AttrHelper
  // ::getNameStr(), or the kiln::attrs constants of KilnDialect.h.
  let discardableAttrs = (ins
    // The module of outlined kernels: the --target it is compiled for.
    "::mlir::StringAttr":$target,
    // A function that is a kernel (kiln-outline-dispatches).
    "::mlir::UnitAttr":$kernel,
    // A kernel's ONNX nodes, and a dispatch's ONNX value names per result.
    "::mlir::ArrayAttr":$nodes,
    "::mlir::ArrayAttr":$onnx_values,
    // A kernel's arguments, in order: which are inputs, outputs, constants.
    "::mlir::ArrayAttr":$abi,
    // Floating-point operations of one run of the kernel.
    "::mlir::IntegerAttr":$flops,
    // Tiling: workgroups (CPU) or blocks (GPU), and the threads per block.
    "::mlir::IntegerAttr":$workgroups,
    "::mlir::IntegerAttr":$threads,
    // The tile of one workgroup: [dim, size] (kiln-tile-and-distribute).
    "::mlir::DenseI64ArrayAttr":$tile,
    // A GPU block's matrix-instruction output block [rows, columns].
    "::mlir::DenseI64ArrayAttr":$matrix_tile,
    // How a kernel's root is tiled (kiln-configure-cpu-kernels,
    // kiln-configure-gpu-kernels; applied by kiln-tile-and-distribute).
    "::kiln::KernelConfigAttr":$config,
    // The CPU's register tile [rows, vector width].
    "::mlir::DenseI64ArrayAttr":$register_tile,
    // How a GPU block computes its output block of a contraction: threads,
    // warps or warpgroups, the instruction, their tiles and the stage
    // pipeline (kiln-configure-gpu-contractions).
    "::kiln::ContractionConfigAttr":$contraction,
    // Threads a kernel's block needs, and whether they cooperate (share
    // workgroup memory and barriers) rather than each owning outputs.
    "::mlir::IntegerAttr":$lanes,
    "::mlir::UnitAttr":$cooperative,
    // Bytes per block of workgroup memory, of it dynamic shared memory,
    // and per thread of private (local, scratch) memory.
    "::mlir::IntegerAttr":$workgroup_memory,
    "::mlir::IntegerAttr":$dynamic_workgroup_memory,
    "::mlir::IntegerAttr":$private_memory,
    // On @main: the shape-like inputs the runtime checks before a run, one
    // dictionary per guard (rule, node, op_type, input, data_shape, params,
    // expected; runtime/schema/artifact.fbs, ShapeGuard).
    "::mlir::ArrayAttr":$shape_guards,
    // On an op of a dynamic-batch graph whose result carries the batch:
    // [dim, inner, outer, step], where (attrs::kBatchDim, BatchDim).
    "::mlir::DenseI64ArrayAttr":$batch_dim
  );
  // kiln.name on @main's arguments and results: the ONNX graph input or
  // output each one is.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_TD
