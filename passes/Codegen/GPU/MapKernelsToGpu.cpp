//===- MapKernelsToGpu.cpp - kernels as gpu.func, one thread per iteration ===//
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_MAPKERNELSTOGPU
#include "kiln/Passes/CodegenPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr StringLiteral kGpuModuleName = "kiln_kernels";

/// The kernel's forall when it is the only op with side effects at the top
/// level and has static bounds: then its iterations are independent and can
/// each be one thread. Null otherwise.
scf::ForallOp parallelForall(func::FuncOp func) {
  scf::ForallOp forall;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto loop = dyn_cast<scf::ForallOp>(op)) {
      if (forall)
        return nullptr;
      forall = loop;
    } else if (!isMemoryEffectFree(&op) && !isa<memref::GetGlobalOp>(op)) {
      return nullptr;
    }
  }
  if (!forall || !forall.getResults().empty())
    return nullptr;
  for (auto bounds : {forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                      forall.getMixedStep()})
    for (OpFoldResult b : bounds)
      if (!getConstantIntValue(b))
        return nullptr;
  return forall;
}

/// Iterations of each dim of `forall` (static bounds).
SmallVector<int64_t> tripCounts(scf::ForallOp forall) {
  SmallVector<int64_t> counts;
  for (auto [lb, ub, step] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                 forall.getMixedStep())) {
    int64_t l = *getConstantIntValue(lb), u = *getConstantIntValue(ub),
            s = *getConstantIntValue(step);
    counts.push_back(u > l ? (u - l + s - 1) / s : 0);
  }
  return counts;
}

struct MapKernelsToGpuPass
    : public kiln::impl::MapKernelsToGpuBase<MapKernelsToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp kernels = getOperation();
    SmallVector<func::FuncOp> funcs;
    for (auto func : kernels.getOps<func::FuncOp>())
      if (func->hasAttr(kiln::attrs::kKernel) && !func.isExternal())
        funcs.push_back(func);
    if (funcs.empty())
      return;
    kernels->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                     UnitAttr::get(&getContext()));
    OpBuilder builder(&getContext());
    builder.setInsertionPointToEnd(kernels.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(builder, kernels.getLoc(), kGpuModuleName);
    for (func::FuncOp func : funcs)
      if (failed(convert(func, gpuModule)))
        return signalPassFailure();
    // Constant tables (from bufferized tensor constants) live beside the
    // kernels that read them, in device global memory.
    for (auto global :
         llvm::make_early_inc_range(kernels.getOps<memref::GlobalOp>()))
      global->moveBefore(gpuModule.getBody(), gpuModule.getBody()->begin());
  }

  /// Threads per block for `needed` threads whose iterations take `lanes`
  /// each: threadsPerBlock, fewer where that would make fewer blocks than
  /// minBlocks (a block runs on one SM: 224 warps of 16x16 matrix tiles
  /// were 28 blocks of 8 warps, on 28 of an H200's 132 SMs), down to one
  /// warp; always whole iterations.
  int64_t threadsFor(int64_t needed, int64_t lanes) const {
    int64_t unit = std::max<int64_t>(warpSize, lanes);
    int64_t threads =
        std::clamp<int64_t>((needed + unit - 1) / unit * unit, unit,
                            std::max<int64_t>(unit, threadsPerBlock));
    if ((needed + threads - 1) / threads >= minBlocks)
      return threads;
    return std::max<int64_t>(unit, needed / minBlocks / unit * unit);
  }

  LogicalResult convert(func::FuncOp func, gpu::GPUModuleOp gpuModule) {
    IRRewriter rewriter(&getContext());
    scf::ForallOp forall = parallelForall(func);
    int64_t threads = 1, blocks = 1, total = 1;
    // kiln-distribute-rows-to-lanes gives each iteration a warp's lanes.
    int64_t lanes = 1;
    if (auto attr = func->getAttrOfType<IntegerAttr>(kiln::attrs::kLanes))
      lanes = attr.getInt();
    if (forall) {
      for (int64_t count : tripCounts(forall))
        total *= count;
      int64_t needed = total * lanes;
      threads = threadsFor(needed, lanes);
      // A cooperative iteration (warps sharing workgroup memory, meeting
      // at barriers) is one whole block.
      if (func->hasAttr(kiln::attrs::kCooperative))
        threads = lanes;
      blocks = std::max<int64_t>(1, (needed + threads - 1) / threads);
    } else {
      // Serial: every loop runs in the one thread.
      SmallVector<scf::ForallOp> loops;
      func.walk([&](scf::ForallOp loop) { loops.push_back(loop); });
      for (scf::ForallOp loop : loops) {
        rewriter.setInsertionPoint(loop);
        (void)scf::forallToForLoop(rewriter, loop);
      }
    }

    // The kernel's parameters are its buffers; the CPU ABI's trailing
    // workgroup id and count have no meaning on the GPU.
    Block &body = func.getBody().front();
    SmallVector<Type> buffers;
    for (BlockArgument arg : body.getArguments())
      if (isa<MemRefType>(arg.getType()))
        buffers.push_back(arg.getType());
    for (BlockArgument arg :
         llvm::drop_begin(body.getArguments(), buffers.size()))
      if (!arg.use_empty())
        return func.emitError("GPU kernel uses its CPU workgroup arguments");
    body.eraseArguments(buffers.size(),
                        body.getNumArguments() - buffers.size());
    passEmptyBuffersAsOneElement(rewriter, body, buffers);

    rewriter.setInsertionPointToEnd(gpuModule.getBody());
    auto gpuFunc =
        gpu::GPUFuncOp::create(rewriter, func.getLoc(), func.getName(),
                               rewriter.getFunctionType(buffers, {}));
    gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                     rewriter.getUnitAttr());
    gpuFunc.setKnownBlockSizeAttr(
        rewriter.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
    // The memory plan keeps a dispatch's results apart from its inputs, so
    // no buffer is written through another's pointer: loads can be
    // reordered around stores and accumulators kept in registers. Every
    // buffer starts 64-byte aligned (arena slots, weights, cuMemAlloc), which
    // lets neighbouring loads merge into vector loads.
    for (unsigned i = 0; i < buffers.size(); ++i) {
      gpuFunc.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                         rewriter.getUnitAttr());
      gpuFunc.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                         rewriter.getI64IntegerAttr(64));
    }
    gpuFunc.getBody().getBlocks().clear();
    gpuFunc.getBody().takeBody(func.getBody());
    Block &entry = gpuFunc.getBody().front();
    Operation *ret = entry.getTerminator();
    rewriter.setInsertionPoint(ret);
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(ret);
    allowFusedMultiplyAdd(gpuFunc);
    eraseWriteOnlyHeapBuffers(rewriter, gpuFunc);
    if (failed(checkNoHeapBuffers(gpuFunc)))
      return failure();
    FailureOr<int64_t> workgroupBytes =
        allocationsAsAttributions(rewriter, gpuFunc);
    if (failed(workgroupBytes))
      return failure();
    if (forall && total == 0)
      rewriter.eraseOp(forall); // an empty iteration space does nothing
    else if (forall)
      mapToThreads(rewriter, forall, threads, total, lanes);

    // The declaration left behind carries the launch shape for the writer.
    func.setPrivate();
    auto i64 = rewriter.getI64Type();
    func->setAttr(kiln::attrs::kWorkgroups,
                  rewriter.getIntegerAttr(i64, blocks));
    func->setAttr(kiln::attrs::kThreads, rewriter.getIntegerAttr(i64, threads));
    if (*workgroupBytes > 0)
      func->setAttr(kiln::attrs::kWorkgroupMemory,
                    rewriter.getIntegerAttr(i64, *workgroupBytes));
    if (int64_t privateBytes = threadStackBytes(gpuFunc))
      func->setAttr(kiln::attrs::kPrivateMemory,
                    rewriter.getIntegerAttr(i64, privateBytes));
    return success();
  }

  /// Bytes of the arrays each thread keeps in local (CUDA) or scratch
  /// (AMD) memory: static allocas that some access indexes by a loop LLVM
  /// will not unroll (more than kUnrolledTripCount iterations, or a
  /// dynamic count). The rest (register tiles, a thread's short runs) are
  /// indexed by constants once their loops are unrolled, and LLVM keeps
  /// them in registers. Such arrays are slow, every access a round trip to
  /// memory (kiln-onnx-test --max-thread-private-bytes fails a model over
  /// a limit).
  static constexpr int64_t kUnrolledTripCount = 32;

  static int64_t threadStackBytes(gpu::GPUFuncOp func) {
    int64_t bytes = 0;
    func.walk([&](memref::AllocaOp alloca) {
      MemRefType type = alloca.getType();
      if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
          !indexedByLongLoop(alloca))
        return;
      bytes += type.getNumElements() *
               llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    });
    return bytes;
  }

  /// Some load or store of `alloca` (directly or through a view) has an
  /// index computed from the induction variable of a loop of more than
  /// kUnrolledTripCount iterations.
  static bool indexedByLongLoop(memref::AllocaOp alloca) {
    SmallVector<Value> buffers = {alloca.getResult()};
    while (!buffers.empty()) {
      Value buffer = buffers.pop_back_val();
      for (Operation *user : buffer.getUsers()) {
        if (isa<ViewLikeOpInterface>(user)) {
          llvm::append_range(buffers, user->getResults());
          continue;
        }
        for (Value operand : user->getOperands())
          if (operand.getType().isIndex() && dependsOnLongLoop(operand))
            return true;
      }
    }
    return false;
  }

  static bool dependsOnLongLoop(Value index) {
    SmallVector<Value> work = {index};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
        if (!loop || arg != loop.getInductionVar())
          continue;
        std::optional<int64_t> trips = constantTripCount(loop);
        if (!trips || *trips > kUnrolledTripCount)
          return true;
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def && seen.insert(def).second)
        llvm::append_range(work, def->getOperands());
    }
    return false;
  }

  static std::optional<int64_t> constantTripCount(scf::ForOp loop) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0)
      return std::nullopt;
    return llvm::divideCeil(std::max<int64_t>(*ub - *lb, 0), *step);
  }

  /// Buffers allocated in workgroup memory (a block's shared operand
  /// stages) become the kernel's workgroup attributions: shared memory,
  /// one copy per block, aligned as the allocation asks (vector loads from
  /// a stage need 16 bytes; the lowering otherwise aligns a buffer only to
  /// its element). Returns their bytes; fails, naming the kernel, when
  /// they add up to more than a block may use (workgroupMemoryBytes): the
  /// driver would refuse to launch it.
  FailureOr<int64_t> allocationsAsAttributions(IRRewriter &rewriter,
                                               gpu::GPUFuncOp func) const {
    SmallVector<memref::AllocOp> allocs;
    int64_t bytes = 0;
    func.walk([&](memref::AllocOp alloc) {
      if (!gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(alloc.getType()))
        return;
      allocs.push_back(alloc);
      MemRefType type = alloc.getType();
      bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
    });
    if (bytes > workgroupMemoryBytes)
      return func.emitError("GPU kernel ")
             << func.getName() << " needs " << bytes
             << " bytes of workgroup memory, more than the "
             << int64_t(workgroupMemoryBytes)
             << " a block may use on this target";
    for (memref::AllocOp alloc : allocs) {
      BlockArgument buffer =
          func.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
      if (std::optional<uint64_t> alignment = alloc.getAlignment())
        func.setWorkgroupAttributionAttr(
            func.getNumWorkgroupAttributions() - 1, "llvm.align",
            rewriter.getI64IntegerAttr(*alignment));
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.replaceOp(alloc, buffer);
    }
    return bytes;
  }

  /// Heap buffers (memref.alloc outside workgroup memory) that the kernel
  /// only stores to: what is left of a block's accumulator tile once
  /// kiln-contract-with-matrix-cores keeps each lane's fragments in
  /// registers. On the GPU each would be a malloc per thread (a 128x128
  /// float32 tile: 64 KiB, from a device heap of 8 MiB) that LLVM does not
  /// delete, so they go here, with their stores.
  static void eraseWriteOnlyHeapBuffers(IRRewriter &rewriter,
                                        gpu::GPUFuncOp func) {
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) {
      if (!gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(alloc.getType()))
        allocs.push_back(alloc);
    });
    for (memref::AllocOp alloc : allocs) {
      bool writeOnly = llvm::all_of(alloc->getUses(), [](OpOperand &use) {
        Operation *user = use.getOwner();
        if (auto store = dyn_cast<memref::StoreOp>(user))
          return use.get() == store.getMemRef();
        if (auto store = dyn_cast<vector::StoreOp>(user))
          return use.get() == store.getBase();
        return isa<memref::DeallocOp>(user);
      });
      if (!writeOnly)
        continue;
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        rewriter.eraseOp(user);
      rewriter.eraseOp(alloc);
    }
  }

  /// A heap buffer left in a kernel would be a device malloc per thread:
  /// slow, and a null pointer (an illegal address) once the 8 MiB device
  /// heap runs out. None should be left; one that is, is a code generator
  /// bug, reported with the kernel's name instead of a fault at run time.
  static LogicalResult checkNoHeapBuffers(gpu::GPUFuncOp func) {
    WalkResult result = func.walk([&](memref::AllocOp alloc) {
      if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(alloc.getType()))
        return WalkResult::advance();
      alloc.emitError("GPU kernel ")
          << func.getName() << " allocates a " << alloc.getType()
          << " per thread on the device heap";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  /// Lets a multiply feeding an add become one fma instruction, as nvcc
  /// does by default (-fmad=true): faster, and rounded once instead of twice.
  static void allowFusedMultiplyAdd(gpu::GPUFuncOp func) {
    auto contract = [](auto op) {
      op.setFastmath(op.getFastmath() | arith::FastMathFlags::contract);
    };
    func.walk([&](arith::MulFOp op) { contract(op); });
    func.walk([&](arith::AddFOp op) { contract(op); });
    func.walk([&](arith::SubFOp op) { contract(op); });
  }

  /// A bare pointer cannot stand for a zero-element memref (the NVVM
  /// lowering rejects it), so such a parameter becomes memref<1xT> and the
  /// body sees it through a reinterpret_cast to its real, empty type.
  static void passEmptyBuffersAsOneElement(IRRewriter &rewriter, Block &body,
                                           SmallVectorImpl<Type> &buffers) {
    rewriter.setInsertionPointToStart(&body);
    for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
      auto type = cast<MemRefType>(arg.getType());
      if (!type.hasStaticShape() || type.getNumElements() != 0)
        continue;
      auto carrier = MemRefType::get({1}, type.getElementType());
      arg.setType(carrier);
      buffers[i] = carrier;
      SmallVector<int64_t> strides(type.getRank(), 1);
      for (int64_t d = type.getRank() - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * type.getDimSize(d + 1);
      auto view = memref::ReinterpretCastOp::create(rewriter, arg.getLoc(),
                                                    type, arg, /*offset=*/0,
                                                    type.getShape(), strides);
      rewriter.replaceAllUsesExcept(arg, view, view);
    }
  }

  /// Replaces `forall` by its body, run by the thread (or the `lanes`
  /// consecutive threads) whose linear id is the iteration's row-major
  /// index; ids past `total` skip it.
  void mapToThreads(IRRewriter &rewriter, scf::ForallOp forall, int64_t threads,
                    int64_t total, int64_t lanes) {
    Location loc = forall.getLoc();
    rewriter.setInsertionPoint(forall);
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    Value block = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x);
    Value thread = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    Value linear = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, block, constant(threads)), thread);
    if (lanes > 1)
      linear = arith::DivUIOp::create(rewriter, loc, linear, constant(lanes));
    Value inRange = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, linear, constant(total));
    auto guard = scf::IfOp::create(rewriter, loc, inRange, /*withElse=*/false);
    rewriter.setInsertionPointToStart(guard.thenBlock());

    SmallVector<int64_t> counts = tripCounts(forall);
    SmallVector<Value> ivs(counts.size());
    Value rest = linear;
    for (int64_t d = int64_t(counts.size()) - 1; d >= 0; --d) {
      Value index = rest;
      if (d > 0) {
        index =
            arith::RemUIOp::create(rewriter, loc, rest, constant(counts[d]));
        rest = arith::DivUIOp::create(rewriter, loc, rest, constant(counts[d]));
      }
      int64_t lb = *getConstantIntValue(forall.getMixedLowerBound()[d]);
      int64_t step = *getConstantIntValue(forall.getMixedStep()[d]);
      ivs[d] = arith::AddIOp::create(
          rewriter, loc, constant(lb),
          arith::MulIOp::create(rewriter, loc, index, constant(step)));
    }
    Block *body = forall.getBody();
    rewriter.eraseOp(body->getTerminator());
    rewriter.inlineBlockBefore(body, guard.thenBlock()->getTerminator(), ivs);
    rewriter.eraseOp(forall);
  }
};

} // namespace

func::FuncOp kiln::hostDeclaration(ModuleOp kernels, gpu::GPUFuncOp func) {
  auto declaration = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(kernels, func.getName()));
  if (!declaration)
    func.emitError("GPU kernel ")
        << func.getName() << " has no host declaration";
  return declaration;
}
