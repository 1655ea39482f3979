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
           "Iteration-space points below which a workgroup is not worth it">,
    Option<"gpu", "gpu", "bool", "false",
           "Tile for GPU threads: one forall iteration per output element (or "
           "per row when a fused producer reduces); kiln.workgroups is then "
           "the number of threads">
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
    dims) and threads past the end do nothing. Any other kernel runs as one
    thread of one block (correct, and slow: the reports say so).

    The original function stays as a body-less declaration carrying the
    launch shape (`kiln.workgroups` blocks of `kiln.threads` threads) and the
    report attributes, for the artifact writer.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads per block of a mapped kernel">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

#endif
