//===- FormDispatchRegions.cpp - group kiln ops into kernels --------------===//
#include "kiln/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kiln-form-dispatch-regions"

namespace kiln {
#define GEN_PASS_DEF_FORMDISPATCHREGIONS
#include "kiln/Passes/FusionPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Ops that do not become kernels: weights are buffers and reshapes alias.
bool staysOnHost(Operation *op) {
  return isa<ConstantOp, ReshapeOp, DispatchRegionOp, func::ReturnOp>(op);
}

/// A constant small enough to clone into each kernel as an immediate.
bool isInlinableConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant || !isa<DenseElementsAttr>(constant.getValue()) ||
      constant.getType().getNumElements() > 16)
    return false;
  // Not of unsigned or signed integers: arith.constant holds signless ones
  // only; the kernel reads such a constant as an operand.
  auto integer = dyn_cast<IntegerType>(constant.getType().getElementType());
  return !integer || integer.isSignless();
}

/// A cast from a 16-bit float type to float32 (see kiln-demote-precision),
/// or of a weight stored as narrow integers (kiln-narrow-integer-weights).
bool isWideningCast(Operation *op) {
  return op->getNumResults() == 1 &&
         (isWidened(op->getResult(0)) || isNarrowedWeight(op->getResult(0)));
}

/// Ops that multiply and accumulate: they read widened operands inside
/// their kernel, accumulating in float32 over 16-bit loads.
bool isContraction(Operation *op) {
  return isa<MatMulOp, GemmOp, ConvOp, EinsumOp>(op);
}

/// A cast of 8-bit integers to float32 (kiln-pack-int8-matmul-weights'
/// uint8 activations), or to float64 (kiln-pack-int8-conv-weights' exact
/// integer sums).
bool isInt8Widening(Operation *op) {
  auto cast = dyn_cast<CastOp>(op);
  Type to = cast ? getElementTypeOrSelf(cast.getType()) : Type();
  if (!cast || !(to.isF32() || to.isF64()))
    return false;
  Type from = getElementTypeOrSelf(cast.getInput().getType());
  return from.isInteger(8);
}

/// Whether `op` is kiln-pack-int8-conv-weights' convolution: of uint8
/// bytes by int8 weights, both widened, 4 bytes a step along its rows.
bool isInt8QuadConv(Operation *op) {
  auto conv = dyn_cast<ConvOp>(op);
  if (!conv || conv.getStrides().empty() ||
      conv.getStrides().back() != kQuadDepth)
    return false;
  auto input = conv.getInput().getDefiningOp<CastOp>();
  auto weight = conv.getWeight().getDefiningOp<CastOp>();
  return input && weight && isInt8Widening(input) && isInt8Widening(weight);
}

/// A widening cast feeding a contraction is that contraction's prologue,
/// never an epilogue of the 16-bit producer: the producer's kernel then
/// stores 16-bit values and the contraction loads them. So is an 8-bit
/// one feeding an einsum or a convolution of int8 quads
/// (kiln-pack-int8-matmul-weights', kiln-pack-int8-conv-weights', which
/// kiln-contract-int8-quads and kiln-contract-int8-conv-quads read as
/// bytes); GPU convolutions and matmuls keep reading float32.
bool isContractionPrologue(Operation *op) {
  if (!op->hasOneUse())
    return false;
  Operation *user = *op->getUsers().begin();
  return (isWideningCast(op) && isContraction(user)) ||
         (isInt8Widening(op) && (isa<EinsumOp>(user) || isInt8QuadConv(user)));
}

/// An elementwise op whose result has more elements than each operand
/// that is not a constant (an outer product: a per-filter offset times a
/// per-pixel sum, a per-filter sum times a zero point known at run time),
/// read by one elementwise op: that op's kernel recomputes it from the
/// smaller operands, where a kernel of its own would store every element.
bool isBroadcastProduct(Operation *op) {
  if (!kiln::isElementwise(op) || op->getNumResults() != 1 ||
      !op->hasOneUse() || !kiln::isElementwise(*op->getUsers().begin()))
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result || !result.hasStaticShape())
    return false;
  bool broadcast = false;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return false;
    if (type.getNumElements() < result.getNumElements())
      broadcast = true;
    else if (!operand.getDefiningOp<ConstantOp>())
      return false;
  }
  return broadcast;
}

struct FormDispatchRegionsPass
    : public kiln::impl::FormDispatchRegionsBase<FormDispatchRegionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<SmallVector<Operation *>> groups = formGroups();
    moveTrailingWidenings(groups);
    if (absorbDequantizedOperands)
      moveTrailingDequantizations(groups);
    for (auto &group : groups)
      if (!group.empty())
        createRegion(group);
  }

  /// Chains of ops, in order, where every op but the last has exactly one
  /// use, by the next op of the chain.
  SmallVector<SmallVector<Operation *>> formGroups() {
    SmallVector<SmallVector<Operation *>> groups;
    DenseMap<Operation *, size_t> groupOf;
    for (Operation &op : getOperation().getBody().front()) {
      if (staysOnHost(&op))
        continue;
      std::optional<size_t> target;
      if (fuseElementwise && kiln::isElementwise(&op) &&
          !isContractionPrologue(&op) && !isBroadcastProduct(&op)) {
        target = findProducerGroup(&op, groupOf, groups);
        if (target)
          mergeSiblingGroups(&op, *target, groupOf, groups);
      } else if (fuseAttention)
        target = findAttentionGroup(&op, groupOf, groups);
      if (target) {
        groups[*target].push_back(&op);
        groupOf[&op] = *target;
      } else {
        groupOf[&op] = groups.size();
        groups.push_back({&op});
      }
      // A preparation is absorbed with the ones behind it by its user.
      if (!preparesOperand(&op))
        absorbOperandPreparations(&op, groupOf, groups);
    }
    return groups;
  }

  /// Moves the ops that only `op` uses and that prepare one of its operands,
  /// each a group of its own, into `op`'s group, just ahead of it: widening
  /// casts (a contraction's 16-bit operands, a weight or an input that
  /// kiln-demote-precision stored in 16 bits: the kernel then loads 16-bit
  /// values instead of another kernel widening them) and transposes of
  /// constants (kiln-channels-last-conv-weights: the kernel then reads the
  /// stored layout instead of another kernel transposing the weight on
  /// every run), also behind one another; and outer products of smaller
  /// operands (isBroadcastProduct), which the kernel recomputes.
  void
  absorbOperandPreparations(Operation *op,
                            DenseMap<Operation *, size_t> &groupOf,
                            SmallVectorImpl<SmallVector<Operation *>> &groups) {
    size_t target = groupOf[op];
    SmallVector<Operation *> absorbed;
    std::function<void(Operation *)> absorbOperandsOf = [&](Operation *user) {
      for (Value operand : user->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || !operand.hasOneUse() ||
            llvm::is_contained(absorbed, producer))
          continue;
        size_t source = groupOf[producer];
        if (absorbDequantizedOperands && source != target &&
            groups[source].back() == producer &&
            isDequantizingGroup(groups[source])) {
          absorbed.append(groups[source]);
          for (Operation *member : groups[source])
            groupOf[member] = target;
          groups[source].clear();
          continue;
        }
        if (!preparesOperand(producer))
          continue;
        if (source == target || groups[source].size() != 1)
          continue;
        // A transpose ahead of the cast that reads it.
        absorbOperandsOf(producer);
        groups[source].clear();
        groupOf[producer] = target;
        absorbed.push_back(producer);
      }
    };
    absorbOperandsOf(op);
    SmallVector<Operation *> &group = groups[target];
    group.insert(group.end() - 1, absorbed.begin(), absorbed.end());
  }

  /// A chain that dequantizes 8-bit integers: a cast of them to float32
  /// (or before it, ops that unpack them from constants: 4-bit weights two
  /// to a byte), then elementwise ops of the chain and constants.
  static bool isDequantizingGroup(ArrayRef<Operation *> group) {
    const auto *widening = llvm::find_if(group, isInt8Widening);
    if (widening == group.end())
      return false;
    return llvm::all_of(group, [&](Operation *member) {
      return member == *widening ||
             (kiln::isElementwise(member) &&
              llvm::all_of(member->getOperands(), [&](Value operand) {
                Operation *def = operand.getDefiningOp();
                return isa_and_nonnull<ConstantOp>(def) ||
                       llvm::is_contained(group, def);
              }));
    });
  }

  /// A widening cast, a transpose of a constant (a weight's stored
  /// layout), an outer product of smaller operands, or with
  /// fuseConvPadding a convolution's input padding.
  bool preparesOperand(Operation *op) const {
    if (isWideningCast(op) || isContractionPrologue(op) ||
        (fuseElementwise && isBroadcastProduct(op)))
      return true;
    if (auto pad = dyn_cast<PadOp>(op))
      return fuseConvPadding && isConvInputPadding(pad);
    auto transpose = dyn_cast<TransposeOp>(op);
    return transpose && transpose.getInput().getDefiningOp<ConstantOp>();
  }

  /// Zeros around the spatial dims of a channels-last convolution's input
  /// (through a widening cast), which only it reads.
  static bool isConvInputPadding(PadOp pad) {
    if (pad.getMode() != "constant" ||
        pad.getValue().convertToDouble() != 0.0 || !pad->hasOneUse())
      return false;
    Operation *user = *pad->getUsers().begin();
    if (isWideningCast(user) && user->hasOneUse())
      user = *user->getUsers().begin();
    auto conv = dyn_cast<ConvOp>(user);
    if (!conv || !conv.getChannelsLast() ||
        conv.getInput().getDefiningOp() != *pad->getUsers().begin())
      return false;
    ArrayRef<int64_t> pads = pad.getPads();
    int64_t rank = pads.size() / 2;
    return pads[0] == 0 && pads[rank] == 0 && pads[rank - 1] == 0 &&
           pads[2 * rank - 1] == 0;
  }

  /// A group that ends by widening its 16-bit result (--precision: the
  /// rounding, then a widening cast for a consumer in another kernel, e.g.
  /// a residual add) would store float32 values, twice the bytes. The
  /// widening moves into the consumer's group, just ahead of the consumer,
  /// so the producer stores 16-bit values and the consumer loads them.
  void
  moveTrailingWidenings(SmallVectorImpl<SmallVector<Operation *>> &groups) {
    DenseMap<Operation *, size_t> groupOf;
    for (auto [index, group] : llvm::enumerate(groups))
      for (Operation *op : group)
        groupOf[op] = index;
    for (SmallVector<Operation *> &group : groups) {
      if (group.size() < 2 || !isWideningCast(group.back()) ||
          !group.back()->hasOneUse())
        continue;
      Operation *widen = group.back();
      Operation *user = *widen->getUsers().begin();
      auto it = groupOf.find(user);
      if (it == groupOf.end() || &groups[it->second] == &group)
        continue;
      SmallVector<Operation *> &consumers = groups[it->second];
      group.pop_back();
      consumers.insert(llvm::find(consumers, user), widen);
      groupOf[widen] = it->second;
    }
  }

  /// Likewise a group that ends by dequantizing its 8-bit result (a QDQ
  /// model's QuantizeLinear then DequantizeLinear, read by a residual add
  /// in another kernel) would store float32 values, four times the bytes:
  /// the dequantizing tail moves into the consumer's group, just ahead of
  /// the consumer.
  void moveTrailingDequantizations(
      SmallVectorImpl<SmallVector<Operation *>> &groups) {
    DenseMap<Operation *, size_t> groupOf;
    for (auto [index, group] : llvm::enumerate(groups))
      for (Operation *op : group)
        groupOf[op] = index;
    for (SmallVector<Operation *> &group : groups) {
      if (group.size() < 2 || !group.back()->hasOneUse())
        continue;
      // The tail from the last 8-bit widening on.
      auto start = llvm::find_if(llvm::reverse(group), isInt8Widening);
      if (start == group.rend())
        continue;
      size_t first = group.rend() - start - 1;
      ArrayRef<Operation *> tail = ArrayRef(group).drop_front(first);
      if (first == 0 || !isDequantizingGroup(tail))
        continue;
      Operation *user = *group.back()->getUsers().begin();
      auto it = groupOf.find(user);
      if (it == groupOf.end() || &groups[it->second] == &group)
        continue;
      SmallVector<Operation *> &consumers = groups[it->second];
      SmallVector<Operation *> moved(tail);
      group.truncate(first);
      consumers.insert(llvm::find(consumers, user), moved.begin(), moved.end());
      for (Operation *op : moved)
        groupOf[op] = it->second;
    }
  }

  std::optional<size_t>
  findProducerGroup(Operation *op, DenseMap<Operation *, size_t> &groupOf,
                    ArrayRef<SmallVector<Operation *>> groups) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      auto it = producer ? groupOf.find(producer) : groupOf.end();
      if (it == groupOf.end())
        continue;
      // Only the last op of a group may feed outside it.
      if (groups[it->second].back() != producer)
        continue;
      if (!operand.hasOneUse()) {
        LLVM_DEBUG(llvm::dbgs()
                   << "not fusing " << op->getName() << " at " << op->getLoc()
                   << ": its producer " << producer->getName()
                   << " has other users (would recompute)\n");
        continue;
      }
      if (broadcastsWholeReduction(op, operand, groups[it->second]))
        continue;
      return it->second;
    }
    return std::nullopt;
  }

  /// An elementwise chain with slices of a value and lookups (one element
  /// of a table per output element: a tree's node attributes at each node
  /// index): no contraction, reduction or data movement that a kernel would
  /// tile on its own, and no broadcast (every result has `shape`).
  static bool isPureElementwiseGroup(ArrayRef<Operation *> group,
                                     ArrayRef<int64_t> shape) {
    return llvm::all_of(group, [&](Operation *member) {
      auto type = member->getNumResults() == 1
                      ? dyn_cast<RankedTensorType>(member->getResultTypes()[0])
                      : nullptr;
      return type && type.hasStaticShape() && type.getShape() == shape &&
             (kiln::isElementwise(member) || isa<SliceOp>(member) ||
              isElementLookup(member));
    });
  }

  /// A Gather from a 1-D table or a GatherElements: each output element
  /// reads one input element at its own index.
  static bool isElementLookup(Operation *op) {
    if (auto gather = dyn_cast<GatherOp>(op))
      return cast<RankedTensorType>(gather.getInput().getType()).getRank() == 1;
    return isa<GatherElementsOp>(op);
  }

  /// `op` joined the group `target` through one operand; its other operands
  /// may end elementwise groups of their own (an LSTM cell's gates, each a
  /// slice of the gate matmul and an activation, multiplied and added).
  /// When `target` and such a group are both elementwise chains of `op`'s
  /// shape, that group joins too: one kernel for the cell, not one per gate.
  /// Its ops only feed `op`, so they go ahead of it in any order.
  void mergeSiblingGroups(Operation *op, size_t target,
                          DenseMap<Operation *, size_t> &groupOf,
                          SmallVectorImpl<SmallVector<Operation *>> &groups) {
    auto type = dyn_cast<RankedTensorType>(op->getResultTypes()[0]);
    if (op->getNumResults() != 1 || !type || !type.hasStaticShape() ||
        !isPureElementwiseGroup(groups[target], type.getShape()))
      return;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      auto it = producer ? groupOf.find(producer) : groupOf.end();
      if (it == groupOf.end() || it->second == target ||
          groups[it->second].back() != producer || !operand.hasOneUse())
        continue;
      size_t source = it->second;
      if (!isPureElementwiseGroup(groups[source], type.getShape()))
        continue;
      for (Operation *member : groups[source])
        groupOf[member] = target;
      groups[target].append(groups[source].begin(), groups[source].end());
      groups[source].clear();
    }
  }

  /// `op` reads, as `operand`, one value that `group` reduces from a whole
  /// tensor (a mel spectrogram's peak, for a clamp of every element below
  /// it) and broadcasts it to more elements. Joined, every part of the
  /// kernel would need the whole reduction first: the kernel ran as one
  /// GPU thread. Apart, the reduction is a kernel of its own (a block for
  /// one row) and `op` an elementwise kernel that reads its result.
  static bool broadcastsWholeReduction(Operation *op, Value operand,
                                       ArrayRef<Operation *> group) {
    auto numElements = [](Value v) -> int64_t {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.hasStaticShape() ? type.getNumElements() : -1;
    };
    if (numElements(operand) != 1 || op->getNumResults() != 1 ||
        numElements(op->getResult(0)) <= 1)
      return false;
    return llvm::any_of(group, [&](Operation *member) {
      return llvm::any_of(member->getOperands(),
                          [&](Value input) { return numElements(input) > 1; });
    });
  }

  /// The softmax's probabilities only weigh values (attention's P·V): a
  /// classifier's softmax over its logits (a text recognizer's 18385
  /// characters) stays out of the projection's kernel, whose workgroups
  /// would otherwise each take whole rows of it.
  static bool weighsValues(SoftmaxOp softmax) {
    Value probabilities = softmax.getResult();
    return probabilities.hasOneUse() &&
           isa<MatMulOp>(*probabilities.getUsers().begin()) &&
           probabilities.getUsers().begin()->getOperand(0) == probabilities;
  }

  /// Attention, Softmax(Q·Kᵀ [·s] [+ mask])·V, as one kernel: a softmax
  /// over the last dim joins the group of the matmul (with its elementwise
  /// epilogue: scale, mask) that produces its input, and a matmul whose
  /// first operand is such a softmax joins that group too. Only single-use
  /// results that end their group are taken.
  std::optional<size_t>
  findAttentionGroup(Operation *op, DenseMap<Operation *, size_t> &groupOf,
                     ArrayRef<SmallVector<Operation *>> groups) {
    auto endsGroup = [&](Value v) -> std::optional<size_t> {
      Operation *producer = v.getDefiningOp();
      auto it = producer ? groupOf.find(producer) : groupOf.end();
      if (it == groupOf.end() || groups[it->second].back() != producer ||
          !v.hasOneUse())
        return std::nullopt;
      return it->second;
    };
    auto startsWithMatMul = [&](size_t group) {
      return isa<MatMulOp>(groups[group].front());
    };
    if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      auto type = cast<RankedTensorType>(softmax.getType());
      std::optional<size_t> group = endsGroup(softmax.getInput());
      if (softmax.getAxis() != type.getRank() - 1 || !group ||
          !startsWithMatMul(*group) || !weighsValues(softmax))
        return std::nullopt;
      return group;
    }
    if (auto matmul = dyn_cast<MatMulOp>(op)) {
      Value probabilities = matmul->getOperand(0);
      std::optional<size_t> group = endsGroup(probabilities);
      if (!group || !probabilities.getDefiningOp<SoftmaxOp>() ||
          !startsWithMatMul(*group))
        return std::nullopt;
      return group;
    }
    return std::nullopt;
  }

  /// Replaces a chain of ops by one kiln.dispatch_region at the last op.
  void createRegion(ArrayRef<Operation *> group) {
    Operation *last = group.back();
    llvm::SetVector<Value> inputs;
    llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
    for (Operation *op : group)
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if ((def && inGroup.contains(def)) || isInlinableConstant(operand))
          continue;
        inputs.insert(operand);
      }

    OpBuilder builder(last);
    auto region = DispatchRegionOp::create(
        builder, last->getLoc(), last->getResultTypes(), inputs.getArrayRef());
    Block &body = region.getBody().front();
    IRMapping mapping;
    for (auto [input, arg] : llvm::zip(inputs, body.getArguments()))
      mapping.map(input, arg);
    builder.setInsertionPointToStart(&body);
    for (Operation *op : group)
      for (Value operand : op->getOperands())
        if (isInlinableConstant(operand) && !mapping.contains(operand))
          mapping.map(operand,
                      builder.clone(*operand.getDefiningOp())->getResult(0));
    for (Operation *op : group)
      builder.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value result : last->getResults())
      yielded.push_back(mapping.lookup(result));
    YieldOp::create(builder, last->getLoc(), yielded);
    if (group.size() > 1) {
      SmallVector<Location> locs;
      for (Operation *op : group)
        locs.push_back(op->getLoc());
      region->setLoc(FusedLoc::get(&getContext(), locs));
    }

    last->replaceAllUsesWith(region.getResults());
    for (Operation *op : llvm::reverse(group))
      op->erase();
  }
};

} // namespace
