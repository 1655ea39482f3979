//===- KilnAttrs.td - the kiln dialect's attributes --------*- tablegen -*-===//
//
// The kernel config: how kiln-configure-cpu-kernels or
// kiln-configure-gpu-kernels decided to split a kernel's root op into
// forall iterations, which kiln-tile-and-distribute then applies.
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

#endif // KILN_ATTRS_TD
