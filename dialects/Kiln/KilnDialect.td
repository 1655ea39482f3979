//===- KilnDialect.td - the kiln dialect -------------------*- tablegen -*-===//
//
// The kiln dialect holds a model as a graph of tensor ops with ONNX semantics
// (numpy broadcasting, NCHW layouts). Every op infers its result type from its
// operands and attributes, so the importer never has to compute shapes itself.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor-level ops for deep-learning graphs imported from ONNX";
  let description = [{
    Ops on ranked tensors with ONNX semantics. Weights are `kiln.constant` ops
    whose value is a `dense_resource` blob. `kiln.dispatch_region` groups ops
    that become one kernel; `kiln.dispatch` calls an outlined kernel.
  }];
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_TD
