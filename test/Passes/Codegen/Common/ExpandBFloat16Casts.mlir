// RUN: kiln-opt %s --kiln-expand-bfloat16-casts | FileCheck %s

// Rounding to bfloat16 and widening from it become integer arithmetic (no
// __truncsfbf2 call on CPUs without AVX512-BF16); float16 casts stay.
// CHECK-LABEL: func.func @casts
// CHECK-NOT: arith.truncf {{.*}} to bf16
// CHECK-NOT: arith.extf {{.*}} : bf16
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK: arith.bitcast {{.*}} : i16 to bf16
// CHECK: arith.truncf %arg1 : f32 to f16
// CHECK-NOT: arith.extf {{.*}} : bf16
func.func @casts(%x: f32, %y: f32) -> (f32, f16) {
  %b = arith.truncf %x : f32 to bf16
  %h = arith.truncf %y : f32 to f16
  %w = arith.extf %b : bf16 to f32
  return %w, %h : f32, f16
}
