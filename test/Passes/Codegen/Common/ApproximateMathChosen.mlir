// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-approximate-math{functions=math.exp,math.erf}))' | FileCheck %s

// With `functions` (the CPU target's choice: exp, erf, tanh), only those
// become polynomials; log and sin stay libm calls (accurate to the ulp) and
// pow is not expanded into exp and log.
// CHECK-LABEL: func.func @chosen
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK-DAG: math.log %arg0
// CHECK-DAG: math.sin %arg0
// CHECK-DAG: math.powf %arg0, %arg0
func.func @chosen(%x: f32) -> (f32, f32, f32, f32, f32) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %l = math.log %x : f32
  %s = math.sin %x : f32
  %p = math.powf %x, %x : f32
  return %e, %r, %l, %s, %p : f32, f32, f32, f32, f32
}
