//===- KernelRewrite.cpp - a gpu.func as a CPU function -------------------===//
#include "KernelRewrite.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace kiln::emulator;

MemRefType kiln::emulator::withoutMemorySpace(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout(), Attribute());
}

Value kiln::emulator::byteAddress(OpBuilder &b, Location loc, Value memref,
                                  ValueRange indices) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = meta.getOffset();
  for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  auto type = cast<MemRefType>(memref.getType());
  Value bytes =
      arith::MulIOp::create(b, loc, linear,
                            arith::ConstantIndexOp::create(
                                b, loc, type.getElementTypeBitWidth() / 8));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    arith::AddIOp::create(b, loc, base, bytes));
}

/// `op` rewritten by its instruction family; none when no family has it.
static std::optional<LogicalResult> rewriteInstruction(OpBuilder &b,
                                                       Operation *op,
                                                       int64_t warpSize,
                                                       AccessTracer *tracer) {
  if (auto rewritten = rewriteWarpMatrixOp(b, op, warpSize, tracer))
    return rewritten;
  if (auto rewritten = rewriteAsyncCopyOp(b, op, tracer))
    return rewritten;
  return rewriteWarpgroupOp(b, op);
}

LogicalResult kiln::emulator::emulateKernel(ModuleOp module,
                                            gpu::GPUFuncOp kernel,
                                            int64_t warpSize,
                                            AccessTracer *tracer) {
  OpBuilder b(module.getContext());
  if (tracer) {
    tracer->globalBuffers = kernel.getNumArguments();
    tracer->workgroupBuffers = kernel.getNumWorkgroupAttributions();
  }
  b.setInsertionPointToEnd(module.getBody());
  Region &body = kernel.getBody();
  Block &entry = body.front();
  for (BlockArgument arg : entry.getArguments())
    if (auto type = dyn_cast<MemRefType>(arg.getType()))
      arg.setType(withoutMemorySpace(type));
  Value blockId = entry.addArgument(b.getIndexType(), kernel.getLoc());
  Value threadId = entry.addArgument(b.getIndexType(), kernel.getLoc());
  auto func = func::FuncOp::create(
      b, kernel.getLoc(), ("emulated_" + kernel.getName()).str(),
      b.getFunctionType(entry.getArgumentTypes(), {}));
  func.getBody().takeBody(body);

  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  // Views of workgroup buffers (a stage of a pair) live where the buffers
  // now do.
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (auto type = dyn_cast<MemRefType>(result.getType()))
        result.setType(withoutMemorySpace(type));
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (tracer)
      tracer->traceLoadOrStore(b, op);
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      if (id.getDimension() != gpu::Dimension::x)
        return op->emitError("only 1-D blocks are emulated");
      id.replaceAllUsesWith(threadId);
      op->erase();
    } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      if (id.getDimension() != gpu::Dimension::x)
        return op->emitError("only 1-D grids are emulated");
      id.replaceAllUsesWith(blockId);
      op->erase();
    } else if (isa<gpu::LaneIdOp>(op)) {
      op->getResult(0).replaceAllUsesWith(arith::RemUIOp::create(
          b, loc, threadId, arith::ConstantIndexOp::create(b, loc, warpSize)));
      op->erase();
    } else if (isa<gpu::BarrierOp>(op)) {
      func::CallOp::create(b, loc, "kiln_emu_barrier", TypeRange{},
                           ValueRange{});
      op->erase();
    } else if (isa<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, loc);
      op->erase();
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      // Whole-warp xor shuffles of 32-bit values (kiln-distribute-rows-to-
      // lanes' reductions): every partner lane exists.
      Type type = shuffle.getValue().getType();
      std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
      if (shuffle.getMode() != gpu::ShuffleMode::XOR || !width ||
          *width != warpSize || type.getIntOrFloatBitWidth() != 32)
        return op->emitError("only whole-warp xor shuffles of 32-bit values "
                             "are emulated");
      Value bits = shuffle.getValue();
      if (!type.isInteger(32))
        bits = arith::BitcastOp::create(b, loc, b.getI32Type(), bits);
      Value result =
          func::CallOp::create(b, loc, "kiln_emu_shuffle_xor", b.getI32Type(),
                               ValueRange{bits, shuffle.getOffset()})
              .getResult(0);
      if (!type.isInteger(32))
        result = arith::BitcastOp::create(b, loc, type, result);
      shuffle.getShuffleResult().replaceAllUsesWith(result);
      shuffle.getValid().replaceAllUsesWith(
          arith::ConstantIntOp::create(b, loc, 1, 1));
      op->erase();
    } else if (std::optional<LogicalResult> rewritten =
                   rewriteInstruction(b, op, warpSize, tracer)) {
      if (failed(*rewritten))
        return failure();
    } else if (op->getDialect() &&
               isa<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect,
                   amdgpu::AMDGPUDialect>(op->getDialect())) {
      return op->emitError("not emulated on the CPU");
    }
  }
  // cp.async tokens carried by loops (a stage's group, waited for in the
  // next iteration) are placeholders now.
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (isa<nvgpu::DeviceAsyncTokenType>(result.getType()))
        result.setType(b.getIndexType());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          if (isa<nvgpu::DeviceAsyncTokenType>(argument.getType()))
            argument.setType(b.getIndexType());
  });
  return success();
}
