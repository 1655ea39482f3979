//===- kiln-emulate-gpu.cpp - run GPU kernels on the CPU, thread by thread ===//
//
// Checks the GPU code generation of tiled kernels without a GPU; the
// emulator is the library in emulate-gpu/ (KernelCheck.h: a kernel against
// its reference; Device.h: the device; one file per instruction family).
// For each
// `kiln.kernel` function of the input (bufferized and tiled, as
// kiln-contract-with-matrix-cores and kiln-map-kernels-to-gpu get them),
// two versions are JIT-compiled for this CPU:
//
//   reference: the same function with its forall run as loops;
//   emulated:  the GPU kernel pipeline's gpu.func (matrix instructions,
//              lanes, workgroup memory, barriers), turned into a function of
//              (buffers, workgroup buffers, block id, thread id).
//
// Both run on the same pseudo-random buffers; the emulated kernel runs block
// after block, each GPU thread of a block a fiber (Boost.Context: its own
// stack, switched in user space), so that `gpu.barrier` and the warp-wide
// matrix instructions (which exchange fragments between lanes) behave as
// on the device. One OS thread runs them all, in a fixed order that flips
// at every block barrier: the same result on every run, and a missing
// barrier shows whichever way the data crosses between threads. Their
// semantics here are written from the PTX ISA (mma.sync m16n8k16 and m16n8k8
// TF32 fragment layouts, ldmatrix, cp.async landing at its wait, wgmma's matrix
// descriptors and core-matrix layouts, read from workgroup memory kept in
// one 256 KiB-aligned arena so that a descriptor's address bits decode;
// a cp.async into what a wgmma not yet waited for reads fails the kernel,
// as does a wgmma reading what a cp.async wrote with no fence.proxy.async
// by its thread after it landed: emulate-gpu/ProxyFences.h, or starting
// on accumulators other instructions wrote with no wgmma.fence between:
// emulate-gpu/WgmmaFences.h) and AMD's
// matrix instruction tables (v_mfma 16x16x16),
// independently of the code generator. Workgroup memory starts as NaN, so a
// read of a value no thread wrote shows up as a wrong result. Every buffer
// is compared afterwards; the tool fails when any differs by more than the
// tolerance. With --check-bounds (the default) every memref load and store
// of the emulated kernel is checked against its view
// (generate-runtime-verification) and every cp.async against the kernel's
// buffers: an access past a view that a wrong result would not show (a
// padded row's load, whose result is never stored) fails the run too.
//
//   kiln-emulate-gpu kernels.mlir --target=cuda [--allow-tf32]
//   kiln-emulate-gpu kernels.mlir --target=cuda:sm_90a   (wgmma)
//   kiln-emulate-gpu kernels.mlir --target=rocm
//
//===----------------------------------------------------------------------===//
#include "emulate-gpu/KernelCheck.h"

#include "kiln/Dialect/KilnDialect.h"
#include "kiln/Passes/Passes.h"
#include "kiln/Pipeline/CompileFlags.h"

#include "mlir/Dialect/MemRef/Transforms/RuntimeOpVerification.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;

static llvm::cl::OptionCategory toolCategory("kiln-emulate-gpu flags");
static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<kernels.mlir>"),
                                            llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> bufferize(
    "bufferize",
    llvm::cl::desc("Kernels are tiled tensor code (kiln-compile --compile-to="
                   "tiled): bufferize them as the GPU targets do first"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<int64_t> maxThreads(
    "max-threads",
    llvm::cl::desc("Skip kernels with more GPU threads than this, all blocks "
                   "together (each runs as a fiber here)"),
    llvm::cl::init(200000), llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool>
    dump("dump",
         llvm::cl::desc("Print the module of both functions before "
                        "lowering to LLVM"),
         llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> checkBounds(
    "check-bounds",
    llvm::cl::desc("Check every load and store of the emulated kernel "
                   "against its memref's bounds (generate-runtime-"
                   "verification: a violation aborts with the op) and every "
                   "cp.async against the buffers it copies between"),
    llvm::cl::init(true), llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> kernelFilter(
    "kernels",
    llvm::cl::desc("Emulate only the kernels whose names match this regular "
                   "expression (a few kernels of a full-size model)"),
    llvm::cl::init(""), llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> memoryTraffic(
    "memory-traffic",
    llvm::cl::desc("Count how each kernel's warps use global memory (32-byte "
                   "sectors per request against the bytes asked for) and "
                   "workgroup memory (wavefronts per request against the "
                   "conflict-free count), and print it after its result"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> memoryTrafficSites(
    "memory-traffic-sites",
    llvm::cl::desc("With --memory-traffic, also a line per load or store "
                   "that takes more sectors or wavefronts than its bytes "
                   "need, named by op and location"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<double> tolerance(
    "tolerance",
    llvm::cl::desc("Largest |emulated - reference| / (1 + |reference|)"),
    llvm::cl::init(1e-2), llvm::cl::cat(toolCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerAllPasses();
  kiln::registerKilnPasses();
  kiln::registerCompileFlags(kiln::CompileFlagSet::Target, "cuda");
  kiln::hideForeignFlags(toolCategory);
  kiln::printKilnVersionOnVersionFlag();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Runs tiled GPU kernels on the CPU against their reference\n");
  std::string error;
  FailureOr<kiln::CompileOptions> options =
      kiln::compileOptionsFromFlags(error);
  FailureOr<kiln::TargetDescription> described = llvm::failure();
  if (llvm::succeeded(options))
    described = kiln::describeTarget(*options, error);
  if (succeeded(described) && !described->isGpu())
    error = "--target=" + described->name +
            " is not a GPU target (cuda, "
            "cuda:sm_90a, rocm, ...)";
  if (!error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return 2;
  }
  kiln::emulator::EmulatorOptions emulator;
  emulator.target = *described;
  emulator.wgmmaGroupsInFlight = options->wgmmaGroupsInFlight;
  emulator.bufferize = bufferize;
  emulator.maxThreads = maxThreads;
  emulator.dump = dump;
  emulator.checkBounds = checkBounds;
  emulator.memoryTraffic = memoryTraffic;
  emulator.memoryTrafficSites = memoryTrafficSites;
  emulator.tolerance = tolerance;
  DialectRegistry registry;
  registerAllDialects(registry);
  memref::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<kiln::KilnDialect>();
  MLIRContext context(registry);
  context.disableMultithreading();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(inputFile, &context);
  if (!module)
    return 2;
  // Kernels anywhere in the input (kiln-compile's phases nest them in a
  // module of their own).
  llvm::Regex filter(kernelFilter.empty() ? std::string(".*")
                                          : kernelFilter.getValue());
  std::string filterError;
  if (!filter.isValid(filterError)) {
    llvm::errs() << "error: --kernels=" << kernelFilter << ": " << filterError
                 << "\n";
    return 2;
  }
  SmallVector<func::FuncOp> kernels;
  module->walk([&](func::FuncOp func) {
    if (func->hasAttr(kiln::attrs::kKernel) && !func.isExternal() &&
        filter.match(func.getName()))
      kernels.push_back(func);
  });
  if (kernels.empty()) {
    llvm::errs() << "error: " << inputFile << " has no kiln.kernel function"
                 << (kernelFilter.empty() ? "" : " matching --kernels") << "\n";
    return 2;
  }
  int failures = 0;
  kiln::emulator::EmulationTotals totals;
  for (func::FuncOp kernel : kernels)
    failures += failed(kiln::emulator::checkKernel(kernel, emulator, totals));
  // A whole model's totals, to compare two compilations of it.
  if (memoryTraffic && totals.kernels > 1)
    kiln::emulator::printTraffic(
        llvm::outs(), "all " + std::to_string(totals.kernels) + " kernels",
        totals.traffic);
  return failures ? 1 : 0;
}
