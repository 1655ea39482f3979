// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-approximate-math))' | FileCheck %s

// exp, erf and tanh become polynomial arithmetic; no math call is left that
// would need libdevice.
// CHECK-LABEL: func.func @transcendental
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @transcendental(%x: f32) -> (f32, f32, f32) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %t = math.tanh %x : f32
  return %e, %r, %t : f32, f32, f32
}

// -----

// Plain arithmetic and math ops PTX has instructions for are left alone.
// CHECK-LABEL: func.func @simple
// CHECK: math.sqrt
// CHECK: math.absf
// CHECK: arith.addf
func.func @simple(%x: f32) -> f32 {
  %s = math.sqrt %x : f32
  %a = math.absf %s : f32
  %r = arith.addf %a, %x : f32
  return %r : f32
}
