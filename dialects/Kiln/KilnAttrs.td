//===- KilnAttrs.td - the kiln dialect's attributes --------*- tablegen -*-===//
//
// The kernel config: how kiln-configure-cpu-kernels or
// kiln-configure-gpu-kernels decided to split a kernel's root op into
// forall iterations, which kiln-tile-and-distribute then applies; and how
// kiln-configure-gpu-contractions decided to compute a GPU block's output
// block of a contraction, which kiln-contract-with-matrix-cores or
// kiln-contract-with-thread-tiles then builds.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ATTRS_TD
#define KILN_ATTRS_TD

include "KilnDialect.td"
include "mlir/IR/EnumAttr.td"

def Kiln_Tiling : I32EnumAttr<"Tiling",
    "what one forall iteration of a kernel's root is", [
  // CPU: a workgroup; one loop is split (the others are 0).
  I32EnumAttrCase<"Workgroups", 0, "workgroups">,
  // GPU: a thread and its register tile of outputs.
  I32EnumAttrCase<"Threads", 1, "threads">,
  // GPU: a block's output block of a contraction (matrix instructions or
  // thread tiles); a loop its size does not divide shifts its last block
  // back to end with the loop.
  I32EnumAttrCase<"Blocks", 2, "blocks">
]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_KernelConfigAttr : AttrDef<Kiln_Dialect, "KernelConfig"> {
  let mnemonic = "config";
  let summary = "How a kernel's root op is tiled into forall iterations";
  let description = [{
    `tiling` says what one iteration is; `tile_sizes` has one size per loop
    of the root op's iteration domain, 0 for a loop left whole.
  }];
  let parameters = (ins
    EnumParameter<Kiln_Tiling>:$tiling,
    ArrayRefParameter<"int64_t", "per loop of the root">:$tileSizes
  );
  let assemblyFormat = "`<` $tiling `,` `tile_sizes` `=` `[` $tileSizes `]` `>`";
}

def Kiln_ContractionUnit : I32EnumAttr<"ContractionUnit",
    "what computes one part of a GPU block's output block", [
  // A thread, its register tile with FMAs (kiln-contract-with-thread-tiles).
  I32EnumAttrCase<"Threads", 0, "threads">,
  // A warp (wavefront), its tile with mma.sync or MFMA.
  I32EnumAttrCase<"Warps", 1, "warps">,
  // A warpgroup of four warps, 64 rows of the block with wgmma (sm_90a).
  I32EnumAttrCase<"Warpgroups", 2, "warpgroups">
]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_ContractionConfigAttr : AttrDef<Kiln_Dialect, "ContractionConfig"> {
  let mnemonic = "contraction";
  let summary = "How a GPU block computes its output block of a contraction";
  let description = [{
    `unit` computes a `tile` ([rows, columns]) of the block with
    `instruction` ("fma", "mma.sync m16n8k16", "wgmma m64n128k16",
    "mfma 16x16x16", ...). `block` is the [rows, columns, k] the block
    computes, padded past the contraction's own extents where that wastes
    little (the padded rows and columns store nothing, the padded K reads
    zeros). K goes in stages of `stage_k` through workgroup memory (0: a
    single warp's 16x16 block reads global memory in steps of 16);
    `stage_buffers` buffers per operand are filled by cp.async (0: two
    buffers filled from registers); with warpgroups, `groups_in_flight`
    wgmma groups a stage leaves running into the next.
  }];
  let parameters = (ins
    EnumParameter<Kiln_ContractionUnit>:$unit,
    StringRefParameter<"the instruction">:$instruction,
    ArrayRefParameter<"int64_t", "rows, columns, k">:$block,
    ArrayRefParameter<"int64_t", "rows, columns of a unit">:$tile,
    "int64_t":$stageK,
    "int64_t":$stageBuffers,
    "int64_t":$groupsInFlight
  );
  let assemblyFormat = [{
    `<` $unit `,` $instruction `,` `block` `=` `[` $block `]` `,`
    `tile` `=` `[` $tile `]` `,` `stage_k` `=` $stageK `,`
    `stage_buffers` `=` $stageBuffers `,`
    `groups_in_flight` `=` $groupsInFlight `>`
  }];
}

#endif // KILN_ATTRS_TD
