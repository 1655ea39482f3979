//===- CompileFlags.cpp - the compile options as command-line flags -------===//
#include "kiln/Pipeline/CompileFlags.h"

#include "kiln/Passes/Passes.h"
#include "kiln/Pipeline/Pipeline.h"

#include "kiln/version.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Config/llvm-config.h"

#include <memory>

using namespace mlir;
using namespace kiln;
namespace cl = llvm::cl;

cl::OptionCategory &kiln::targetFlagCategory() {
  static cl::OptionCategory category("Target flags",
                                     "What the kernels are compiled for");
  return category;
}

cl::OptionCategory &kiln::codegenFlagCategory() {
  static cl::OptionCategory category(
      "Code generation flags",
      "How the graph is fused, tiled and generated (defaults per target)");
  return category;
}

namespace {

/// --split-matmul-k and the other strategies that are on for GPU targets
/// only unless forced.
enum class GpuDefault { Auto, On, Off };

auto gpuDefaultValues() {
  return cl::values(
      clEnumValN(GpuDefault::Auto, "auto", "on GPU targets only (default)"),
      clEnumValN(GpuDefault::On, "on",
                 "on every target (the CPU too, to check it)"),
      clEnumValN(GpuDefault::Off, "off", "never"));
}

/// The values of a strategy that is on for every target unless turned off.
auto everyTargetValues() {
  return cl::values(
      clEnumValN(GpuDefault::Auto, "auto", "on every target (default)"),
      clEnumValN(GpuDefault::On, "on", "on every target"),
      clEnumValN(GpuDefault::Off, "off", "never"));
}

std::optional<bool> forced(GpuDefault value) {
  if (value == GpuDefault::Auto)
    return std::nullopt;
  return value == GpuDefault::On;
}

/// One row of the flag reference: the values a flag takes and its default
/// as the reference prints them.
struct FlagRow {
  const cl::Option *option;
  std::string values;
  std::string defaultValue;
};

// A flag's default as the reference prints it, read from its cl::init.
std::string defaultText(const cl::opt<std::string> &flag) {
  return flag.getDefault().hasValue() ? flag.getDefault().getValue() : "";
}
std::string defaultText(const cl::opt<int64_t> &flag) {
  return std::to_string(flag.getDefault().getValue());
}
std::string defaultText(const cl::opt<bool> &flag) {
  bool on = flag.getDefault().hasValue() && flag.getDefault().getValue();
  return on ? "true" : "false";
}
/// gpuDefaultValues() lists the values in the enum's order.
std::string defaultText(cl::opt<GpuDefault> &flag) {
  return flag.getParser()
      .getOption(unsigned(flag.getDefault().getValue()))
      .str();
}

/// The values an enumerated flag takes, from its parser.
std::string choices(cl::opt<GpuDefault> &flag) {
  std::string text;
  for (unsigned i = 0, e = flag.getParser().getNumOptions(); i < e; ++i)
    text += (i ? ", " : "") + flag.getParser().getOption(i).str();
  return text;
}

/// `values` describes what the flag takes where its value_desc does not;
/// `whenUnset` stands for an empty default.
template <typename T>
FlagRow row(cl::opt<T> &flag, std::string values = "",
            std::string whenUnset = "") {
  std::string defaultValue = defaultText(flag);
  return {&flag, std::move(values),
          defaultValue.empty() ? std::move(whenUnset) : defaultValue};
}

struct TargetFlags {
  cl::opt<std::string> target{
      "target",
      cl::desc("cpu; cuda[:CHIPS] with CHIPS a comma list of sm_80, sm_86, "
               "sm_89, sm_90, sm_90a (default sm_90; sm_90a alone adds "
               "wgmma); rocm[:CHIPS] with gfx90a, gfx942 (default gfx942)"),
      cl::init("cpu"), cl::cat(targetFlagCategory())};
  cl::opt<std::string> cpu{
      "cpu", cl::desc("LLVM CPU for --target=cpu (native: this machine's CPU)"),
      cl::init("native"), cl::cat(targetFlagCategory())};
  cl::opt<std::string> cudaToolkit{
      "cuda-toolkit",
      cl::desc("CUDA toolkit folder for ptxas and libdevice (default: "
               "$CUDA_HOME, $CUDA_PATH, /usr/local/cuda); 'none' emits PTX "
               "for the driver to compile, with math that needs no "
               "libdevice"),
      cl::value_desc("DIR"), cl::cat(targetFlagCategory())};
  cl::opt<std::string> rocmPath{
      "rocm-path",
      cl::desc("For rocm targets: a ROCm install (llvm/bin/ld.lld, "
               "amdgcn/bitcode) (default: $ROCM_PATH, /opt/rocm, then the "
               "layout the build assembled from lld-22 and "
               "rocm-device-libs)"),
      cl::value_desc("DIR"), cl::cat(targetFlagCategory())};
  cl::opt<bool> allowTf32{
      "allow-tf32",
      cl::desc("cuda: run float32 matmuls and convolutions on tensor cores "
               "as TF32 (10-bit mantissa products, float32 accumulation)"),
      cl::cat(targetFlagCategory())};
  cl::opt<int64_t> workgroupMemoryLimit{
      "workgroup-memory-limit",
      cl::desc("cuda: most shared memory one GPU block may use, in bytes; "
               "the stage pipelines of tensor-core blocks are sized to it "
               "(0: what every chip of the target allows, 227 KiB on "
               "sm_90, 163 KiB on sm_80, 99 KiB on sm_86/sm_89; over 48 KiB "
               "is dynamic shared memory)"),
      cl::value_desc("BYTES"), cl::init(0), cl::cat(targetFlagCategory())};
  cl::opt<int64_t> wgmmaGroupsInFlight{
      "wgmma-groups-in-flight",
      cl::desc("cuda:sm_90a: groups of wgmma instructions a pipeline stage "
               "leaves running into the next: 1 (the stage waits for the "
               "previous stage's) or 0 (each stage waits for its own)"),
      cl::value_desc("N"), cl::init(1), cl::cat(targetFlagCategory())};

  std::vector<FlagRow> rows() {
    return {row(target, "cpu, cuda[:CHIPS], rocm[:CHIPS]"),
            row(cpu, "an LLVM CPU name"),
            row(cudaToolkit, "", "searched"),
            row(rocmPath, "", "searched"),
            row(allowTf32),
            row(workgroupMemoryLimit),
            row(wgmmaGroupsInFlight, "0, 1")};
  }
};

struct CodegenFlags {
  cl::opt<std::string> precision{
      "precision",
      cl::desc("Type float32 tensors are kept in between ops: f32, f16 or "
               "bf16; ops compute and accumulate in float32, matmuls on GPUs "
               "use tensor cores"),
      cl::init("f32"), cl::cat(codegenFlagCategory())};
  cl::opt<int64_t> maxWorkgroups{
      "max-workgroups", cl::desc("Upper bound on a CPU kernel's workgroups"),
      cl::value_desc("N"), cl::init(64), cl::cat(codegenFlagCategory())};
  cl::opt<std::string> registerTile{
      "register-tile",
      cl::desc("cpu: register tiles of matmuls and convolutions as "
               "ROWSxVECTOR (rows x floats per vector register; tiles are "
               "up to two vectors wide); default 8x16 with AVX-512, 6x8 "
               "otherwise"),
      cl::value_desc("RxV"), cl::cat(codegenFlagCategory())};
  cl::opt<std::string> matrixBlock{
      "matrix-block",
      cl::desc("cuda, rocm: output block of one GPU block of a tensor-core / "
               "MFMA matmul or convolution, as ROWSxCOLUMNS (multiples of "
               "16, rows up to 128, columns up to 256; used where they "
               "divide the kernel's M and N). 16x16 is one warp reading "
               "global memory; larger blocks stage operands through shared "
               "memory. Default: chosen per kernel"),
      cl::value_desc("RxC"), cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> splitMatMulK{
      "split-matmul-k",
      cl::desc("Split float32 matmuls with few outputs and a long K into K "
               "parts summed by a second kernel (kiln-split-matmul-k)"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> splitConvK{
      "split-conv-k",
      cl::desc("Split convolutions (float32, or widened from 16 bits by "
               "--precision) with few outputs and many input channels into "
               "channel parts summed by a second kernel (kiln-split-conv-k)"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> windowPaddingInPlace{
      "window-padding-in-place",
      cl::desc("Depthwise convolutions and pooling read their padding in "
               "place (index checks) instead of from a padded copy of their "
               "input"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<bool> convPaddingInPlace{
      "conv-padding-in-place",
      cl::desc("GPU targets: a convolution's zero padding joins its kernel, "
               "whose blocks read the input through it in place, instead of "
               "a padding kernel writing a padded copy (off by default: "
               "each stage load then tests a mask)"),
      cl::init(false), cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> patchifyConvs{
      "patchify-convs",
      cl::desc("Convolutions whose windows tile the image (ViT's patch "
               "embedding, an audio model's frames) as einsums over patches "
               "(kiln-patchify-convs-as-einsums)"),
      everyTargetValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> spaceToDepthConvs{
      "space-to-depth-convs",
      cl::desc("Strided convolutions over few input channels (an image's 3) "
               "as stride-1 ones over space-to-depth blocks "
               "(kiln-space-to-depth-strided-convs; auto: GPU targets at "
               "--precision=f16/bf16 or with --allow-tf32)"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> channelsLastConvWeights{
      "channels-last-conv-weights",
      cl::desc("Store the constant weights of KxK convolutions as "
               "[F][kh][kw][C], read through a transpose that folds into the "
               "kernel (kiln-channels-last-conv-weights)"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> channelsLastActivations{
      "channels-last-activations",
      cl::desc("Compute 2-D convolutions, and the ops between them, on NHWC "
               "activations, with transposes only where a chain of them "
               "starts or ends (kiln-channels-last-activations; auto: GPU "
               "targets, where it adds at most one transpose per two "
               "convolutions; on: always)"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<GpuDefault> kMajorMatMulWeights{
      "k-major-matmul-weights",
      cl::desc("Store the 16-bit constant weights of MatMuls as [N][K], read "
               "through a transpose that folds into the matmul "
               "(kiln-k-major-matmul-weights)"),
      gpuDefaultValues(), cl::init(GpuDefault::Auto),
      cl::cat(codegenFlagCategory())};
  cl::opt<bool> narrowGpuIndices{
      "narrow-gpu-indices",
      cl::desc("32-bit index arithmetic in cuda kernels whose buffers span "
               "under 2 GiB and whose launches have under 2^31 threads "
               "(kiln-narrow-gpu-indices; off by default: fewer integer "
               "instructions, but fewer 128-bit loads and stores)"),
      cl::init(false), cl::cat(codegenFlagCategory())};
  cl::opt<bool> narrowIntegerWeights{
      "narrow-integer-weights",
      cl::desc("cpu: store float32 weights of few-row matmuls whose values "
               "are all integers that int8 (else int16) holds as that type, "
               "widened in the matmul's kernel (kiln-narrow-integer-weights: "
               "dynamically quantized models read a quarter of the bytes)"),
      cl::init(true), cl::cat(codegenFlagCategory())};
  cl::opt<bool> packMatMulWeights{
      "pack-matmul-weights",
      cl::desc("cpu: store the constant weights of matmuls as column "
               "panels of the register tile's width, each read as one "
               "contiguous stream (kiln-pack-matmul-weights)"),
      cl::init(true), cl::cat(codegenFlagCategory())};
  cl::opt<bool> int8DotProducts{
      "int8-dot-products",
      cl::desc("cpu with AVX2: compute matmuls and QDQ convolutions of "
               "uint8 activations by int8 weights as 4-way integer dot "
               "products: vpdpbusd with AVX-512 VNNI (512 bits) or AVX-VNNI "
               "(256), else vpmaddwd on bytes widened to 16 bits "
               "(kiln-pack-int8-matmul-weights, kiln-contract-int8-quads, "
               "kiln-pack-int8-conv-weights, kiln-contract-int8-conv-quads)"),
      cl::init(true), cl::cat(codegenFlagCategory())};
  cl::opt<bool> int8MatrixTiles{
      "int8-matrix-tiles",
      cl::desc("cpu with AMX-INT8: compute those matmuls' blocks of 16 rows "
               "and 1x1 convolutions' blocks of 16 filters on AMX tiles "
               "(kiln-contract-int8-quads{matrix-tiles}, kiln-contract-"
               "int8-conv-quads{matrix-tiles}); the runtime asks Linux for "
               "the tile state"),
      cl::init(true), cl::cat(codegenFlagCategory())};
  cl::opt<bool> splatWeights{
      "splat-weights",
      cl::desc("Benchmark artifact: leave float32 weights of 64+ elements "
               "out and let the runtime fill them with 0.01 (outputs are "
               "then meaningless; a large model's artifact stays small)"),
      cl::cat(codegenFlagCategory())};

  std::vector<FlagRow> rows() {
    return {row(precision, "f32, f16, bf16"),
            row(maxWorkgroups),
            row(registerTile, "", "per CPU"),
            row(matrixBlock, "", "per kernel"),
            row(splitMatMulK, choices(splitMatMulK)),
            row(splitConvK, choices(splitConvK)),
            row(windowPaddingInPlace, choices(windowPaddingInPlace)),
            row(convPaddingInPlace),
            row(patchifyConvs, choices(patchifyConvs)),
            row(spaceToDepthConvs, choices(spaceToDepthConvs)),
            row(channelsLastConvWeights, choices(channelsLastConvWeights)),
            row(channelsLastActivations, choices(channelsLastActivations)),
            row(kMajorMatMulWeights, choices(kMajorMatMulWeights)),
            row(narrowGpuIndices),
            row(narrowIntegerWeights),
            row(packMatMulWeights),
            row(int8DotProducts),
            row(int8MatrixTiles),
            row(splatWeights)};
  }
};

std::unique_ptr<TargetFlags> targetFlags;
std::unique_ptr<CodegenFlags> codegenFlags;

} // namespace

void kiln::registerCompileFlags(CompileFlagSet set,
                                llvm::StringRef defaultTarget) {
  if (!targetFlags) {
    targetFlags = std::make_unique<TargetFlags>();
    targetFlags->target.setInitialValue(defaultTarget.str());
  }
  if (set == CompileFlagSet::All && !codegenFlags)
    codegenFlags = std::make_unique<CodegenFlags>();
}

/// "ROWSxVECTOR" with 1-16 rows and 1-64 elements per vector.
static LogicalResult parseRegisterTile(StringRef spec, CompileOptions &options,
                                       std::string &error) {
  auto [rows, width] = spec.split('x');
  int64_t r = 0, w = 0;
  if (rows.getAsInteger(10, r) || width.getAsInteger(10, w) || r < 1 ||
      r > 16 || w < 1 || w > 64) {
    error = "--register-tile=" + spec.str() +
            " is not ROWSxVECTOR with 1-16 rows and 1-64 elements per vector "
            "(e.g. 8x16)";
    return failure();
  }
  options.registerRows = r;
  options.vectorWidth = w;
  return success();
}

/// "ROWSxCOLUMNS", multiples of 16 (rows also what tensor cores compute
/// padded), rows up to 128, columns up to 256.
static LogicalResult parseMatrixBlock(StringRef spec, CompileOptions &options,
                                      std::string &error) {
  auto [rows, cols] = spec.split('x');
  int64_t r = 0, c = 0;
  auto valid = [](int64_t v, int64_t most) {
    return v >= 16 && v <= most && v % 16 == 0;
  };
  // Rows may also be what tensor cores compute padded (98 as 112).
  auto validRows = [&](int64_t v) {
    return valid(v, 128) || (v > 0 && v <= 128 && paddedMatrixRows(v) > 0);
  };
  if (rows.getAsInteger(10, r) || cols.getAsInteger(10, c) || !validRows(r) ||
      !valid(c, 256)) {
    error = "--matrix-block=" + spec.str() +
            " is not ROWSxCOLUMNS with multiples of 16, rows up to 128 and "
            "columns up to 256 (e.g. 64x64; rows within a quarter under one, "
            "e.g. 49 or 98, are padded)";
    return failure();
  }
  options.matrixBlockRows = r;
  options.matrixBlockCols = c;
  return success();
}

static LogicalResult readTargetFlags(const TargetFlags &flags,
                                     CompileOptions &options,
                                     std::string &error) {
  options.target = flags.target;
  options.cpu = flags.cpu;
  options.cudaToolkit = flags.cudaToolkit;
  options.rocmPath = flags.rocmPath;
  options.allowTf32 = flags.allowTf32;
  if (flags.workgroupMemoryLimit < 0) {
    error = "--workgroup-memory-limit must be >= 0, got " +
            std::to_string(flags.workgroupMemoryLimit);
    return failure();
  }
  options.workgroupMemoryLimit = flags.workgroupMemoryLimit;
  if (flags.wgmmaGroupsInFlight != 0 && flags.wgmmaGroupsInFlight != 1) {
    error = "--wgmma-groups-in-flight must be 0 or 1, got " +
            std::to_string(flags.wgmmaGroupsInFlight);
    return failure();
  }
  options.wgmmaGroupsInFlight = flags.wgmmaGroupsInFlight;
  return success();
}

static LogicalResult readCodegenFlags(const CodegenFlags &flags,
                                      CompileOptions &options,
                                      std::string &error) {
  options.precision = flags.precision;
  if (failed(checkCompileOptions(options, error)))
    return failure();
  if (flags.maxWorkgroups < 1) {
    error = "--max-workgroups must be at least 1, got " +
            std::to_string(flags.maxWorkgroups);
    return failure();
  }
  options.maxWorkgroups = flags.maxWorkgroups;
  if (!flags.registerTile.empty() &&
      failed(parseRegisterTile(flags.registerTile, options, error)))
    return failure();
  if (!flags.matrixBlock.empty() &&
      failed(parseMatrixBlock(flags.matrixBlock, options, error)))
    return failure();
  options.splitMatMulK = forced(flags.splitMatMulK);
  options.splitConvK = forced(flags.splitConvK);
  options.windowPaddingInPlace = forced(flags.windowPaddingInPlace);
  options.convPaddingInPlace = flags.convPaddingInPlace;
  options.patchifyConvs = forced(flags.patchifyConvs);
  options.spaceToDepthConvs = forced(flags.spaceToDepthConvs);
  options.channelsLastConvWeights = forced(flags.channelsLastConvWeights);
  options.channelsLastActivations = forced(flags.channelsLastActivations);
  options.kMajorMatMulWeights = forced(flags.kMajorMatMulWeights);
  options.narrowGpuIndices = flags.narrowGpuIndices;
  options.narrowIntegerWeights = flags.narrowIntegerWeights;
  options.packMatMulWeights = flags.packMatMulWeights;
  options.int8DotProducts = flags.int8DotProducts;
  options.int8MatrixTiles = flags.int8MatrixTiles;
  options.splatWeights = flags.splatWeights;
  return success();
}

FailureOr<CompileOptions> kiln::compileOptionsFromFlags(std::string &error) {
  CompileOptions options;
  if (targetFlags && failed(readTargetFlags(*targetFlags, options, error)))
    return failure();
  if (codegenFlags && failed(readCodegenFlags(*codegenFlags, options, error)))
    return failure();
  return options;
}

static void printFlagTable(llvm::raw_ostream &os, llvm::StringRef heading,
                           const std::vector<FlagRow> &rows) {
  os << "\n## " << heading << "\n\n"
     << "| flag | values | default | what it does |\n"
     << "| --- | --- | --- | --- |\n";
  for (const FlagRow &row : rows) {
    const cl::Option &option = *row.option;
    std::string values = row.values;
    if (values.empty() && !option.ValueStr.empty())
      values = option.ValueStr.str();
    os << "| `--" << option.ArgStr << "` | " << values << " | "
       << row.defaultValue << " | " << option.HelpStr << " |\n";
  }
}

void kiln::printFlagReference(llvm::raw_ostream &os) {
  registerCompileFlags(CompileFlagSet::All);
  os << "# Compile flags\n\n"
        "Generated by `kiln-compile --print-flag-reference` from the option "
        "table (`lib/Pipeline/CompileFlags.cpp`); do not edit by hand. "
        "`kiln-compile` and `kiln-onnx-test` take every flag below, "
        "`kiln-emulate-gpu` the target flags. A strategy flag left at `auto` "
        "takes its target's default (`resolveStrategies` in "
        "`lib/Pipeline/Pipeline.cpp`); `kiln-compile --print-pipeline` shows "
        "the passes that result.\n";
  printFlagTable(os, "Target flags", targetFlags->rows());
  printFlagTable(os, "Code generation flags", codegenFlags->rows());
}

void kiln::hideForeignFlags(cl::OptionCategory &toolCategory) {
  static cl::OptionCategory inspection(
      "IR inspection flags (MLIR's)",
      "Print the IR around passes and time them");
  cl::HideUnrelatedOptions(
      {&toolCategory, &targetFlagCategory(), &codegenFlagCategory()});
  for (const char *name :
       {"mlir-print-ir-after-all", "mlir-print-ir-before-all",
        "mlir-print-ir-after", "mlir-print-ir-before",
        "mlir-print-ir-after-failure", "mlir-print-ir-after-change",
        "mlir-print-ir-module-scope", "mlir-timing", "mlir-disable-threading",
        "mlir-print-debuginfo", "mlir-elide-elementsattrs-if-larger"}) {
    auto found = cl::getRegisteredOptions().find(name);
    if (found == cl::getRegisteredOptions().end())
      continue;
    found->second->setHiddenFlag(cl::NotHidden);
    found->second->Categories.assign({&inspection});
  }
}

void kiln::printKilnVersionOnVersionFlag() {
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << KILN_VERSION_STRING << "\n  built with LLVM " << LLVM_VERSION_STRING
       << "\n";
  });
}
