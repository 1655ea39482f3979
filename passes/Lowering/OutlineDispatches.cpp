//===- OutlineDispatches.cpp - dispatch regions → kernel functions --------===//
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/OnnxValueNames.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

namespace kiln {
#define GEN_PASS_DEF_OUTLINEDISPATCHES
#include "kiln/Passes/LoweringPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The ONNX node names an op (or a fused group of ops) came from.
void collectNodeNames(Location loc, SmallVectorImpl<std::string> &names) {
  if (auto named = dyn_cast<NameLoc>(loc)) {
    if (!llvm::is_contained(names, named.getName().str()))
      names.push_back(named.getName().str());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      collectNodeNames(inner, names);
}

/// The ONNX nodes whose work a region computes, in op order. Weights and
/// the casts that only widen an input or a weight (float16 models,
/// --precision), also behind the transpose of a weight's stored layout
/// (kiln-channels-last-conv-weights), carry the name of the initializer or
/// of the node before this kernel, which it does not compute: they are
/// left out unless the region holds nothing else.
SmallVector<std::string> nodesComputedBy(DispatchRegionOp region) {
  Block &body = region.getBody().front();
  std::function<bool(Value)> isBoundary = [&](Value value) {
    if (isa<BlockArgument>(value) || value.getDefiningOp<ConstantOp>())
      return true;
    auto transpose = value.getDefiningOp<TransposeOp>();
    return transpose && isBoundary(transpose.getInput());
  };
  auto isBoundaryCast = [&](Operation &op) {
    auto cast = dyn_cast<CastOp>(op);
    return cast && isBoundary(cast.getInput());
  };
  SmallVector<std::string> nodes;
  for (Operation &op : body.without_terminator())
    if (!isa<ConstantOp>(op) && !isBoundaryCast(op))
      collectNodeNames(op.getLoc(), nodes);
  if (nodes.empty())
    collectNodeNames(region.getLoc(), nodes);
  return nodes;
}

std::string kernelName(size_t index, ArrayRef<std::string> nodes) {
  std::string name = "dispatch_" + std::to_string(index);
  if (!nodes.empty()) {
    std::string node = nodes.front().substr(0, 40);
    for (char &c : node)
      if (!llvm::isAlnum(c))
        c = '_';
    name += "_" + node;
  }
  return name;
}

MemRefType memrefFor(Type tensorType) {
  auto tensor = cast<RankedTensorType>(tensorType);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

struct OutlineDispatchesPass
    : public kiln::impl::OutlineDispatchesBase<OutlineDispatchesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = getOrCreateKernelsModule(module);
    SymbolTable symbols(kernels);
    SmallVector<DispatchRegionOp> regions;
    module.walk([&](DispatchRegionOp region) { regions.push_back(region); });
    size_t index = 0;
    for (DispatchRegionOp region : regions)
      outline(region, kernels, symbols, index++);
  }

  ModuleOp getOrCreateKernelsModule(ModuleOp module) {
    for (auto nested : module.getOps<ModuleOp>())
      if (nested.getSymName() == "kernels")
        return nested;
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    auto kernels = ModuleOp::create(builder, module.getLoc(), "kernels");
    kernels->setAttr(kiln::attrs::kTarget, builder.getStringAttr(target));
    return kernels;
  }

  void outline(DispatchRegionOp region, ModuleOp kernels, SymbolTable &symbols,
               size_t index) {
    MLIRContext *ctx = &getContext();
    OpBuilder builder(ctx);
    Location loc = region.getLoc();

    SmallVector<std::string> nodes = nodesComputedBy(region);
    SmallVector<Type> argTypes, abiTypes;
    for (Type t : region.getInputs().getTypes())
      argTypes.push_back(memrefFor(t));
    for (Type t : region.getResultTypes())
      argTypes.push_back(memrefFor(t));
    abiTypes = argTypes;
    argTypes.push_back(builder.getIndexType()); // workgroup id
    argTypes.push_back(builder.getIndexType()); // workgroup count

    builder.setInsertionPointToEnd(kernels.getBody());
    auto func = func::FuncOp::create(builder, loc, kernelName(index, nodes),
                                     builder.getFunctionType(argTypes, {}));
    symbols.insert(func);
    func->setAttr(kiln::attrs::kKernel, builder.getUnitAttr());
    func->setAttr(kiln::attrs::kNodes,
                  builder.getStrArrayAttr(
                      SmallVector<StringRef>(nodes.begin(), nodes.end())));
    SmallVector<Attribute> abi;
    for (Type t : abiTypes)
      abi.push_back(TypeAttr::get(t));
    func->setAttr(kiln::attrs::kAbi, builder.getArrayAttr(abi));

    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    IRMapping mapping;
    Block &body = region.getBody().front();
    for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
      Value tensor = bufferization::ToTensorOp::create(
          builder, loc, arg.getType(), entry->getArgument(i),
          /*restrict=*/true, /*writable=*/false);
      mapping.map(arg, tensor);
    }
    for (Operation &op : body.without_terminator())
      builder.clone(op, mapping);
    auto yield = cast<YieldOp>(body.getTerminator());
    // Which ONNX value each result holds, for comparing a run's kernel
    // results with a reference (kiln-run --dump-dispatches).
    SmallVector<Attribute> valueNames;
    for (Value value : yield.getValues())
      valueNames.push_back(builder.getStringAttr(onnxValueName(value)));
    size_t numInputs = region.getInputs().size();
    for (auto [i, value] : llvm::enumerate(yield.getValues())) {
      auto write = bufferization::MaterializeInDestinationOp::create(
          builder, loc, TypeRange(), mapping.lookup(value),
          entry->getArgument(numInputs + i));
      write.setRestrict(true);
      write.setWritable(true);
    }
    func::ReturnOp::create(builder, loc);

    OpBuilder host(region);
    auto callee =
        SymbolRefAttr::get(StringAttr::get(ctx, "kernels"),
                           {FlatSymbolRefAttr::get(func.getSymNameAttr())});
    auto dispatch = DispatchOp::create(host, loc, region.getResultTypes(),
                                       callee, region.getInputs());
    dispatch->setAttr(kiln::attrs::kOnnxValues,
                      builder.getArrayAttr(valueNames));
    region.replaceAllUsesWith(dispatch.getResults());
    region.erase();
  }
};

} // namespace
