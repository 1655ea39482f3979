//===- KernelCheck.cpp - one kernel emulated against its reference --------===//
#include "KernelCheck.h"

#include "Device.h"
#include "KernelRewrite.h"

#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Pipeline/Pipeline.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/thread.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace kiln::emulator;

namespace {

/// Allocates bytes 256-byte aligned, as the runtime's arena places every
/// tensor on the GPU: --memory-traffic counts 32-byte sectors and banks
/// from the addresses.
/// With an arena (workgroup buffers), allocates from it.
template <typename T> struct DeviceAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{256};
  WorkgroupArena *arena = nullptr;
  DeviceAlignedAllocator() = default;
  explicit DeviceAlignedAllocator(WorkgroupArena *arena) : arena(arena) {}
  template <typename U>
  DeviceAlignedAllocator(const DeviceAlignedAllocator<U> &other)
      : arena(other.arena) {}
  T *allocate(size_t count) {
    if (arena)
      return reinterpret_cast<T *>(arena->allocate(count * sizeof(T)));
    return static_cast<T *>(::operator new(count * sizeof(T), kAlignment));
  }
  void deallocate(T *pointer, size_t) {
    if (!arena)
      ::operator delete(pointer, kAlignment);
  }
  bool operator==(const DeviceAlignedAllocator &other) const {
    return arena == other.arena;
  }
};

/// A host buffer for one memref argument, with its descriptor fields
/// (allocated, aligned, offset, sizes, strides) for a packed call.
struct Buffer {
  MemRefType type;
  std::vector<uint8_t, DeviceAlignedAllocator<uint8_t>> bytes;
  void *pointer = nullptr;
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;

  explicit Buffer(MemRefType t, WorkgroupArena *arena = nullptr)
      : type(t), bytes(DeviceAlignedAllocator<uint8_t>(arena)) {
    bytes.resize(std::max<int64_t>(1, t.getNumElements()) * elementBytes());
    pointer = bytes.data();
    describeAs(t);
  }
  /// The sizes and strides a parameter of `t` is passed: the buffer's own
  /// type, or the memref<1xT> a GPU kernel takes an empty buffer as.
  void describeAs(MemRefType t) {
    sizes.assign(t.getShape().begin(), t.getShape().end());
    strides.assign(t.getRank(), 1);
    for (int64_t d = t.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * sizes[d + 1];
  }
  /// A byte per boolean (i1), as the runtime and both code generators
  /// store them.
  int64_t elementBytes() const {
    return std::max<int64_t>(1,
                             type.getElementType().getIntOrFloatBitWidth() / 8);
  }
  int64_t count() const { return type.getNumElements(); }
  /// Element `i` of an integer buffer of element type T.
  template <typename T> double getInteger(int64_t i) const {
    return double(reinterpret_cast<const T *>(bytes.data())[i]);
  }
  /// Stores `v` rounded down, or T's lowest value for NaN (an unwritten
  /// output's poison).
  template <typename T> void setInteger(int64_t i, double v) {
    reinterpret_cast<T *>(bytes.data())[i] =
        std::isnan(v) ? std::numeric_limits<T>::min() : T(std::floor(v));
  }
  double get(int64_t i) const {
    Type t = type.getElementType();
    if (t.isInteger(1)) // the byte: 0xff (unwritten) differs from 0 and 1
      return double(bytes[i]);
    switch (t.isInteger() ? t.getIntOrFloatBitWidth() : 0) {
    case 64:
      return getInteger<int64_t>(i);
    case 32:
      return getInteger<int32_t>(i);
    case 16:
      return getInteger<int16_t>(i);
    case 8:
      return getInteger<int8_t>(i);
    }
    if (t.isF64())
      return reinterpret_cast<const double *>(bytes.data())[i];
    if (t.isF32())
      return reinterpret_cast<const float *>(bytes.data())[i];
    uint16_t raw = reinterpret_cast<const uint16_t *>(bytes.data())[i];
    const llvm::fltSemantics &sem =
        t.isF16() ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
    return llvm::APFloat(sem, llvm::APInt(16, raw)).convertToDouble();
  }
  bool isInteger() const { return type.getElementType().isInteger(); }
  /// Integer buffers (indices) take `v` rounded down (setInteger).
  void set(int64_t i, double v) {
    Type t = type.getElementType();
    if (t.isInteger(1)) { // booleans: the low bit of v rounded down
      bytes[i] = std::isnan(v) ? 0xff : uint8_t(int64_t(std::floor(v)) & 1);
      return;
    }
    switch (t.isInteger() ? t.getIntOrFloatBitWidth() : 0) {
    case 64:
      return setInteger<int64_t>(i, v);
    case 32:
      return setInteger<int32_t>(i, v);
    case 16:
      return setInteger<int16_t>(i, v);
    case 8:
      return setInteger<int8_t>(i, v);
    }
    if (t.isF64()) {
      reinterpret_cast<double *>(bytes.data())[i] = v;
      return;
    }
    if (t.isF32()) {
      reinterpret_cast<float *>(bytes.data())[i] = float(v);
      return;
    }
    llvm::APFloat value(v);
    bool lost;
    value.convert(t.isF16() ? llvm::APFloat::IEEEhalf()
                            : llvm::APFloat::BFloat(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    reinterpret_cast<uint16_t *>(bytes.data())[i] =
        value.bitcastToAPInt().getZExtValue();
  }
  /// Appends the addresses of the descriptor fields; they stay valid while
  /// this buffer does not move.
  void appendArgs(SmallVectorImpl<void *> &args) {
    pointer = bytes.data(); // copies of a buffer point to their own bytes
    args.push_back(&pointer);
    args.push_back(&pointer);
    args.push_back(&offset);
    for (int64_t &s : sizes)
      args.push_back(&s);
    for (int64_t &s : strides)
      args.push_back(&s);
  }
};

bool supported(Type t) {
  auto memref = dyn_cast<MemRefType>(t);
  return memref && memref.hasStaticShape() &&
         (memref.getElementType().isF64() || memref.getElementType().isF32() ||
          memref.getElementType().isF16() || memref.getElementType().isBF16() ||
          llvm::any_of(std::array{1u, 8u, 16u, 32u, 64u}, [&](unsigned width) {
            return memref.getElementType().isInteger(width);
          }));
}

/// Runs `pipeline` (the passes inside a builtin.module(...)) on `module`.
LogicalResult runPipeline(ModuleOp module, StringRef pipeline) {
  PassManager pm = PassManager::on<ModuleOp>(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  return pm.run(module);
}

constexpr StringLiteral kToLLVM =
    "expand-strided-metadata,lower-affine,convert-vector-to-scf,"
    "convert-vector-to-llvm,finalize-memref-to-llvm,convert-scf-to-cf,"
    "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-"
    "cf-to-llvm,"
    "convert-func-to-llvm,convert-index-to-llvm,convert-ub-to-llvm,"
    "reconcile-unrealized-casts";

/// Prints why kernel `name` is not emulated; not a failure.
LogicalResult skip(StringRef name, const Twine &why) {
  llvm::outs() << name << ": skipped: " << why << "\n";
  return success();
}

/// Stack of the thread that runs a reference: its bufferized temporaries
/// are stack allocations as large as the kernel's outputs (a 1x1
/// convolution's float32 accumulators over MobileNetV2's 2x112x112x96
/// outputs: 9.6 MB, past the main thread's 8 MB). Reserved, not committed:
/// pages are only touched as the reference uses them.
constexpr unsigned kReferenceStackBytes = 1u << 30;

/// Runs the kernel's reference (its own loops, one workgroup) on `buffers`.
LogicalResult runReference(ExecutionEngine &engine,
                           std::vector<Buffer> &buffers) {
  int64_t workgroup = 0, workgroupCount = 1;
  SmallVector<void *> args;
  for (Buffer &buffer : buffers)
    buffer.appendArgs(args);
  args.push_back(&workgroup);
  args.push_back(&workgroupCount);
  std::optional<std::string> error;
  llvm::thread reference(std::optional<unsigned>(kReferenceStackBytes), [&] {
    if (llvm::Error e = engine.invokePacked("reference", args))
      error = llvm::toString(std::move(e));
  });
  reference.join();
  if (error) {
    llvm::errs() << "error: " << *error << "\n";
    return failure();
  }
  return success();
}

/// Runs the reference again on `initial` (the buffers before its first
/// run, which gave `first`) with every output (a buffer the first run
/// changed) filled with NaN: an element still NaN afterwards was never
/// written, or was computed from the output's old contents, which the
/// runtime leaves undefined (arena bytes that other tensors used). Either
/// is a tiling bug (tiles that miss part of the output) that comparing the
/// emulated kernel with the reference cannot show: both start from the
/// same buffers and both keep the same stale elements.
LogicalResult checkOutputsWritten(ExecutionEngine &engine, StringRef name,
                                  const std::vector<Buffer> &initial,
                                  const std::vector<Buffer> &first) {
  std::vector<Buffer> poisoned(initial);
  SmallVector<size_t> outputs;
  for (size_t i = 0; i < poisoned.size(); ++i) {
    if (poisoned[i].bytes == first[i].bytes)
      continue;
    outputs.push_back(i);
    for (int64_t e = 0; e < poisoned[i].count(); ++e)
      poisoned[i].set(e, NAN);
  }
  if (failed(runReference(engine, poisoned)))
    return failure();
  for (size_t i : outputs)
    for (int64_t e = 0; e < poisoned[i].count(); ++e)
      if (std::isnan(poisoned[i].get(e)) && !std::isnan(first[i].get(e))) {
        llvm::outs() << name << ": the kernel never writes element " << e
                     << " of buffer " << i
                     << " (or reads its old value): NOT WRITTEN\n";
        return failure();
      }
  return success();
}

} // namespace

/// Emulates `kernel` against its reference; prints the result and returns
/// whether it matched (kernels that cannot be emulated are skipped).
LogicalResult kiln::emulator::checkKernel(func::FuncOp kernelFunc,
                                          const EmulatorOptions &options,
                                          EmulationTotals &totals) {
  MLIRContext *context = kernelFunc.getContext();
  std::string nameStorage = kernelFunc.getName().str();
  StringRef name = nameStorage;
  OwningOpRef<ModuleOp> module(ModuleOp::create(kernelFunc.getLoc()));
  module->getBody()->push_back(kernelFunc->clone());
  auto original = *module->getOps<func::FuncOp>().begin();
  SmallVector<Type> argTypes(original.getArgumentTypes());
  int64_t buffers = 0;
  while (buffers < int64_t(argTypes.size()) && supported(argTypes[buffers]))
    ++buffers;
  if (buffers + 2 != int64_t(argTypes.size()))
    return skip(
        name, "arguments other than static f64/f32/f16/bf16/i1/i8/i16/i32/i64 "
              "buffers");
  if (options.bufferize) {
    PassManager pm = PassManager::on<ModuleOp>(context);
    kiln::addGpuBufferizePasses(pm);
    if (failed(pm.run(*module)))
      return failure();
  }

  OwningOpRef<ModuleOp> reference(cast<ModuleOp>(module->clone()));
  for (auto func : reference->getOps<func::FuncOp>())
    if (func.getName() == name)
      func.setName("reference");
  int64_t warpSize = options.target.warpSize;
  PassManager gpuPipeline = PassManager::on<ModuleOp>(context);
  kiln::addGpuThreadMappingPasses(gpuPipeline, options.target,
                                  options.wgmmaGroupsInFlight);
  if (failed(gpuPipeline.run(*module)) ||
      failed(runPipeline(*reference, "func.func(scf-forall-to-for),"
                                     "func.func(convert-linalg-to-loops)")))
    return failure();
  func::FuncOp declaration;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.getName() == name)
      declaration = func;
  int64_t blocks =
      declaration->getAttrOfType<IntegerAttr>(kiln::attrs::kWorkgroups)
          .getInt();
  int64_t threads =
      declaration->getAttrOfType<IntegerAttr>(kiln::attrs::kThreads).getInt();
  std::string cores;
  if (auto contraction = declaration->getAttrOfType<ContractionConfigAttr>(
          kiln::attrs::kContraction)) {
    ArrayRef<int64_t> tile = contraction.getTile();
    cores = contraction.getUnit() == ContractionUnit::Threads
                ? "thread tiles " + std::to_string(tile[0]) + "x" +
                      std::to_string(tile[1])
                : contraction.getInstruction().str();
  }
  declaration.erase();
  if (blocks * threads > options.maxThreads)
    return skip(name, Twine(blocks * threads) + " GPU threads (--max-threads)");
  auto gpuModule = *module->getOps<gpu::GPUModuleOp>().begin();
  auto kernel = *gpuModule.getOps<gpu::GPUFuncOp>().begin();
  SmallVector<MemRefType> parameters;
  for (Type type : kernel.getArgumentTypes())
    parameters.push_back(cast<MemRefType>(type));
  SmallVector<MemRefType> shared;
  for (BlockArgument arg : kernel.getWorkgroupAttributions())
    shared.push_back(withoutMemorySpace(cast<MemRefType>(arg.getType())));
  AccessTracer tracer;
  if (failed(emulateKernel(*module, kernel, warpSize,
                           options.memoryTraffic ? &tracer : nullptr)))
    return failure();
  // Constant tables live in the gpu.module; the emulated kernel reads them
  // from the host module.
  for (auto global :
       llvm::make_early_inc_range(gpuModule.getOps<memref::GlobalOp>()))
    global->moveBefore(module->getBody(), module->getBody()->end());
  gpuModule.erase();
  module->walk([](Operation *op) { op->removeAttr("gpu.container_module"); });
  declareDeviceRuntime(*module);
  declareWarpMatrixRuntime(*module);
  declareAsyncCopyRuntime(*module);
  declareWarpgroupRuntime(*module);
  // Bounds checks in the emulated kernel only (the reference is the
  // kernel's own loops): an index past a view's extent that stays inside
  // the buffer would otherwise go unnoticed here and fault or corrupt on a
  // GPU.
  if (options.checkBounds) {
    if (failed(runPipeline(*module, "generate-runtime-verification")))
      return failure();
    // Each check reports through kiln_emu_out_of_bounds: cf.assert would
    // abort without its message.
    boundsMessages.clear();
    module->walk([&](cf::AssertOp check) {
      OpBuilder at(check);
      Location loc = check.getLoc();
      Value failed = arith::XOrIOp::create(
          at, loc, check.getArg(), arith::ConstantIntOp::create(at, loc, 1, 1));
      auto report =
          scf::IfOp::create(at, loc, failed, /*withElseRegion=*/false);
      at.setInsertionPoint(report.thenBlock()->getTerminator());
      func::CallOp::create(at, loc, "kiln_emu_out_of_bounds", TypeRange{},
                           ValueRange{arith::ConstantIntOp::create(
                               at, loc, int64_t(boundsMessages.size()), 64)});
      boundsMessages.push_back(check.getMsg().str());
      check.erase();
    });
  }
  // Both functions in one module; constant tables (same names, same
  // values: both come from bufferizing the same kernel) once.
  SymbolTable symbols(*module);
  for (Operation &op :
       llvm::make_early_inc_range(reference->getBody()->getOperations())) {
    if (auto global = dyn_cast<memref::GlobalOp>(op))
      if (symbols.lookup(global.getSymName()))
        continue;
    op.moveBefore(module->getBody(), module->getBody()->end());
  }
  if (options.dump)
    module->print(llvm::errs());
  if (failed(runPipeline(*module, kToLLVM)))
    return failure();

  auto optimize = makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine) {
    llvm::errs() << "error: JIT: " << llvm::toString(engine.takeError())
                 << "\n";
    return failure();
  }
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    addDeviceSymbols(symbols, interner);
    addWarpMatrixSymbols(symbols, interner);
    addAsyncCopySymbols(symbols, interner);
    addWarpgroupSymbols(symbols, interner);
    return symbols;
  });

  // Pseudo-random inputs in [-1, 1), the same for both runs; integers
  // (indices, which the kernels clamp into range and wrap when negative) in
  // [-8, 8).
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<Buffer> expected, actual;
  for (int64_t i = 0; i < buffers; ++i) {
    expected.emplace_back(cast<MemRefType>(argTypes[i]));
    double scale = expected.back().isInteger() ? 8.0 : 1.0;
    for (int64_t e = 0; e < expected.back().count(); ++e)
      expected.back().set(e, scale * uniform(random));
    actual.push_back(expected.back());
  }
  if (failed(runReference(**engine, expected)) ||
      failed(checkOutputsWritten(**engine, name, actual, expected)))
    return failure();

  auto entry = (*engine)->lookupPacked(("emulated_" + name).str());
  if (!entry) {
    llvm::errs() << "error: " << llvm::toString(entry.takeError()) << "\n";
    return failure();
  }
  ThreadBlock device(threads, warpSize);
  WorkgroupArena arena;
  workgroupArena = &arena;
  std::vector<Buffer> sharedBuffers;
  sharedBuffers.reserve(shared.size());
  for (MemRefType type : shared)
    sharedBuffers.emplace_back(type, &arena); // reserved: no buffer moves
  currentKernel = name.str();
  globalRanges.clear();
  workgroupRanges.clear();
  for (Buffer &buffer : actual)
    globalRanges.push_back({buffer.bytes.data(), buffer.bytes.size()});
  for (Buffer &buffer : sharedBuffers)
    workgroupRanges.push_back({buffer.bytes.data(), buffer.bytes.size()});
  misalignedAccess.clear();
  auto resetShared = [&] {
    for (Buffer &buffer : sharedBuffers)
      for (int64_t e = 0; e < buffer.count(); ++e)
        buffer.set(e, NAN);
  };
  // Descriptor fields every thread passes (read only).
  SmallVector<void *> kernelArgs;
  for (auto [buffer, parameter] : llvm::zip(actual, parameters)) {
    buffer.describeAs(parameter);
    buffer.appendArgs(kernelArgs);
  }
  for (Buffer &buffer : sharedBuffers)
    buffer.appendArgs(kernelArgs);
  // The threads of a block run the blocks one after another, meeting at
  // the block barrier between blocks, when workgroup memory goes back to
  // NaN.
  currentBlock = &device;
  resetAsyncCopies(threads, options.checkBounds,
                   options.target.matrix == kiln::MatrixInstructions::Wgmma);
  resetWarpgroups(threads);
  traffic.start(std::move(tracer.sites), threads, warpSize);
  scheduler.run(threads, [&](int64_t thread) {
    int64_t blockId = 0, threadId = thread;
    SmallVector<void *> threadArgs(kernelArgs);
    threadArgs.push_back(&blockId);
    threadArgs.push_back(&threadId);
    for (int64_t block = 0; block < blocks; ++block) {
      if (thread == 0)
        resetShared();
      device.barrier.arriveAndWait();
      blockId = block;
      startWarpgroupBlock(thread);
      (*entry)(threadArgs.data());
      device.barrier.arriveAndWait();
      // Every thread has finished the block; none starts the next before
      // thread 0 arrives at its first barrier.
      if (thread == 0)
        traffic.finishBlock();
    }
  });

  std::string wgmmaFault = warpgroupFault();
  if (asyncCopiesOutOfBounds()) {
    llvm::outs() << name << ": " << blocks << " blocks x " << threads
                 << " threads: a cp.async copies outside the kernel's "
                    "buffers: OUT OF BOUNDS\n";
    return failure();
  }
  if (!wgmmaFault.empty()) {
    llvm::outs() << name << ": " << blocks << " blocks x " << threads
                 << " threads: " << wgmmaFault << ": WGMMA FAULT\n";
    return failure();
  }
  if (!misalignedAccess.empty()) {
    llvm::outs() << name << ": " << blocks << " blocks x " << threads
                 << " threads: " << misalignedAccess << ": MISALIGNED\n";
    return failure();
  }
  double worst = 0;
  int64_t worstAt = -1, worstBuffer = -1;
  for (int64_t i = 0; i < buffers; ++i)
    for (int64_t e = 0; e < expected[i].count(); ++e) {
      double want = expected[i].get(e), got = actual[i].get(e);
      // Inputs are finite, but a real model's kernel may still make a NaN
      // of them (the reference loops too: a log of a negative random
      // value): NaN where the reference has NaN agrees; anywhere else it
      // is a wrong result.
      double error = std::isnan(got) && std::isnan(want) ? 0
                     : std::isnan(got) || std::isnan(want)
                         ? INFINITY
                         : std::fabs(got - want) / (1 + std::fabs(want));
      if (error > worst || worstAt < 0) {
        worst = error;
        worstAt = e;
        worstBuffer = i;
      }
    }
  llvm::outs() << name << ": " << blocks << " blocks x " << threads
               << " threads" << (cores.empty() ? "" : ", " + cores) << ", "
               << shared.size() << " workgroup buffers: max error " << worst;
  if (worst > options.tolerance) {
    llvm::outs() << " at buffer " << worstBuffer << " element " << worstAt
                 << " (reference " << expected[worstBuffer].get(worstAt)
                 << ", emulated " << actual[worstBuffer].get(worstAt)
                 << "): MISMATCH\n";
    return failure();
  }
  llvm::outs() << ": OK\n";
  if (options.memoryTraffic) {
    traffic.print(llvm::outs(), name, options.memoryTrafficSites);
    TrafficByKind kernel = traffic.byKind();
    for (size_t kind = 0; kind < kernel.size(); ++kind)
      totals.traffic[kind].add(kernel[kind]);
    ++totals.kernels;
  }
  return success();
}
