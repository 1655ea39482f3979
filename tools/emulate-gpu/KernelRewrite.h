//===- KernelRewrite.h - a gpu.func as a CPU function -----------*- C++ -*-===//
//
// kiln-emulate-gpu turns a kernel's gpu.func into func.func
// @emulated_<name>(buffers..., workgroup buffers..., block id, thread id):
// GPU ids become arguments, barriers, shuffles and each instruction
// family's ops become calls of the device's runtime functions (Device.h).
// Each family rewrites its own ops (WarpMatrix.cpp, AsyncCopies.cpp,
// Warpgroups.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_EMULATEGPU_KERNELREWRITE_H
#define KILN_TOOLS_EMULATEGPU_KERNELREWRITE_H

#include "MemoryTraffic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Path.h"

#include <optional>

namespace kiln::emulator {

/// `type` in the host's one address space.
mlir::MemRefType withoutMemorySpace(mlir::MemRefType type);

/// The byte address of `memref[indices]`: the buffer's aligned pointer plus
/// the view's offset and the indices times its strides.
mlir::Value byteAddress(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value memref, mlir::ValueRange indices);

/// The kernel's loads and stores that --memory-traffic instruments: which
/// entry-block arguments are global buffers and which workgroup buffers,
/// and the sites found so far.
struct AccessTracer {
  unsigned globalBuffers = 0, workgroupBuffers = 0;
  std::vector<AccessSite> sites;

  /// Where `memref` lives, from the buffer it is a view of; none for
  /// private arrays and constant tables (registers and the constant cache
  /// on the device), which are not traced.
  std::optional<MemorySpace> spaceOf(mlir::Value memref) const {
    while (auto view = memref.getDefiningOp<mlir::ViewLikeOpInterface>())
      memref = view.getViewSource();
    auto argument = dyn_cast<mlir::BlockArgument>(memref);
    if (!argument || !argument.getOwner()->isEntryBlock())
      return std::nullopt;
    if (argument.getArgNumber() < globalBuffers)
      return MemorySpace::Global;
    if (argument.getArgNumber() < globalBuffers + workgroupBuffers)
      return MemorySpace::Workgroup;
    return std::nullopt;
  }

  /// Whether the innermost loop around `op` has at most 16 iterations,
  /// known here: LLVM unrolls those (4-wide elementwise tiles).
  static bool inUnrolledLoop(mlir::Operation *op) {
    auto loop = op->getParentOfType<mlir::scf::ForOp>();
    if (!loop)
      return false;
    std::optional<int64_t> lower =
        mlir::getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> upper =
        mlir::getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = mlir::getConstantIntValue(loop.getStep());
    return lower && upper && step && *step > 0 &&
           (*upper - *lower + *step - 1) / *step <= 16;
  }

  /// Calls kiln_emu_access before `op`, which reads (or with `store`
  /// writes) `bytes` at `memref[indices]`.
  void trace(mlir::OpBuilder &b, mlir::Operation *op, mlir::Value memref,
             mlir::ValueRange indices, mlir::Value bytes, bool store) {
    std::optional<MemorySpace> space = spaceOf(memref);
    if (!space)
      return;
    std::string where;
    llvm::raw_string_ostream os(where);
    os << op->getName();
    if (auto file = dyn_cast<mlir::FileLineColLoc>(op->getLoc()))
      os << " at " << llvm::sys::path::filename(file.getFilename().getValue())
         << ":" << file.getLine() << ":" << file.getColumn();
    mlir::Location loc = op->getLoc();
    mlir::func::CallOp::create(
        b, loc, "kiln_emu_access", mlir::TypeRange{},
        mlir::ValueRange{
            mlir::arith::ConstantIntOp::create(b, loc, sites.size(), 64),
            byteAddress(b, loc, memref, indices), bytes});
    sites.push_back({where, *space, store, inUnrolledLoop(op)});
  }
  void trace(mlir::OpBuilder &b, mlir::Operation *op, mlir::Value memref,
             mlir::ValueRange indices, int64_t bytes, bool store) {
    trace(b, op, memref, indices,
          mlir::arith::ConstantIntOp::create(b, op->getLoc(), bytes, 64),
          store);
  }

  /// Loads and stores of scalars and vectors.
  void traceLoadOrStore(mlir::OpBuilder &b, mlir::Operation *op) {
    auto elementBytes = [](mlir::Value memref) {
      return cast<mlir::MemRefType>(memref.getType()).getElementTypeBitWidth() /
             8;
    };
    if (auto load = dyn_cast<mlir::memref::LoadOp>(op))
      trace(b, op, load.getMemRef(), load.getIndices(),
            elementBytes(load.getMemRef()), false);
    else if (auto store = dyn_cast<mlir::memref::StoreOp>(op))
      trace(b, op, store.getMemRef(), store.getIndices(),
            elementBytes(store.getMemRef()), true);
    else if (auto load = dyn_cast<mlir::vector::LoadOp>(op))
      trace(b, op, load.getBase(), load.getIndices(),
            load.getVectorType().getNumElements() *
                elementBytes(load.getBase()),
            false);
    else if (auto store = dyn_cast<mlir::vector::StoreOp>(op))
      trace(b, op, store.getBase(), store.getIndices(),
            store.getVectorType().getNumElements() *
                elementBytes(store.getBase()),
            true);
  }
};

/// Rewrites `op` when it is an op of the family; none when it is not.
std::optional<mlir::LogicalResult> rewriteWarpMatrixOp(mlir::OpBuilder &b,
                                                       mlir::Operation *op,
                                                       int64_t warpSize,
                                                       AccessTracer *tracer);
std::optional<mlir::LogicalResult> rewriteAsyncCopyOp(mlir::OpBuilder &b,
                                                      mlir::Operation *op,
                                                      AccessTracer *tracer);
std::optional<mlir::LogicalResult> rewriteWarpgroupOp(mlir::OpBuilder &b,
                                                      mlir::Operation *op);

/// Turns `kernel` into func.func @emulated_<name>(buffers..., workgroup
/// buffers..., block id, thread id) in `module`. With `tracer`, its global
/// and workgroup-memory accesses call kiln_emu_access first.
mlir::LogicalResult emulateKernel(mlir::ModuleOp module,
                                  mlir::gpu::GPUFuncOp kernel, int64_t warpSize,
                                  AccessTracer *tracer);

} // namespace kiln::emulator

#endif
