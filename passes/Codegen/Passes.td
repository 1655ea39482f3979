//===- Passes.td - code generation passes -------------------*- tablegen -*-===//
#ifndef KILN_PASSES_CODEGEN_TD
#define KILN_PASSES_CODEGEN_TD

include "mlir/Pass/PassBase.td"

def TileAndDistribute : Pass<"kiln-tile-and-distribute", "mlir::func::FuncOp"> {
  let summary = "Tiles a kernel's root op into workgroups and fuses its producers";
  let description = [{
    Finds the root of a kernel (the tileable op whose result the kernel
    writes), tiles its outermost parallel loop with extent > 1 into an
    `scf.forall` of at most `max-workgroups` iterations, and fuses every
    producer into the loop. The number of iterations becomes the kernel's
    grid size, recorded as `kiln.workgroups`. Kernels without a tileable
    root run as one workgroup.
  }];
  let options = [
    Option<"maxWorkgroups", "max-workgroups", "int64_t", "64",
           "Upper bound on the grid size of one kernel">,
    Option<"minWorkPerWorkgroup", "min-work-per-workgroup", "int64_t", "4096",
           "Iteration-space points below which a workgroup is not worth it">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

def MapForallToWorkgroups : Pass<"kiln-map-forall-to-workgroups", "mlir::func::FuncOp"> {
  let summary = "Replaces a kernel's scf.forall by the workgroup id argument";
  let description = [{
    After bufferization a kernel's workgroup loop is an `scf.forall` with no
    results. The runtime calls the kernel once per workgroup id, so the loop
    body runs once, with its induction variable set from the id argument.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::affine::AffineDialect"];
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

#endif
