// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-recognize-activations,canonicalize))' | FileCheck %s

// GELU as PyTorch exports it at opset 17: x / sqrt(2), Erf, + 1, * x, * 0.5.
// CHECK-LABEL: func.func @gelu_erf_torch
// CHECK-NEXT: %[[G:.+]] = kiln.gelu %arg0 : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %1 = kiln.erf %0 : tensor<4x8xf32>
  %2 = kiln.add %1, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = kiln.mul %x, %2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = kiln.mul %3, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// The Hugging Face order: (x * 0.5) * (1 + erf(x * 1/sqrt(2))).
// CHECK-LABEL: func.func @gelu_erf_hf
// CHECK-NEXT: %[[G:.+]] = kiln.gelu %arg0 : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_hf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv = kiln.constant dense<0.707106769> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.mul %half, %x : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = kiln.mul %x, %inv : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %2 = kiln.erf %1 : tensor<4x8xf32>
  %3 = kiln.add %one, %2 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = kiln.mul %0, %3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// GPT-2's GELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
// the cube as Pow, then as x * x * x.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT: %[[G:.+]] = kiln.gelu_tanh %arg0 : tensor<4x8xf32>
// CHECK-NEXT: %[[H:.+]] = kiln.gelu_tanh %arg1 : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]], %[[H]]
func.func @gelu_tanh(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %three = kiln.constant dense<3.0> : tensor<f32>
  %k = kiln.constant dense<0.044715> : tensor<f32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.pow %x, %three : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %1 = kiln.mul %k, %0 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.add %x, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = kiln.mul %c, %2 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = kiln.tanh %3 : tensor<4x8xf32>
  %5 = kiln.add %one, %4 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = kiln.mul %half, %x : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %7 = kiln.mul %6, %5 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %yy = kiln.mul %y, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y3 = kiln.mul %yy, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %8 = kiln.mul %y3, %k : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %9 = kiln.add %8, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %10 = kiln.mul %9, %c : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %11 = kiln.tanh %10 : tensor<4x8xf32>
  %12 = kiln.add %11, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %13 = kiln.mul %y, %12 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %14 = kiln.mul %13, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %7, %14 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// SiLU and HardSwish, each operand order.
// CHECK-LABEL: func.func @silu_hard_swish
// CHECK-NEXT: %[[S:.+]] = kiln.silu %arg0 : tensor<4x8xf32>
// CHECK-NEXT: %[[H:.+]] = kiln.hard_swish %arg0 : tensor<4x8xf32>
// CHECK-NEXT: return %[[S]], %[[H]]
func.func @silu_hard_swish(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = kiln.sigmoid %x : tensor<4x8xf32>
  %1 = kiln.mul %x, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.hard_sigmoid %x {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : tensor<4x8xf32>
  %3 = kiln.mul %2, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Left alone: the sigmoid of another value, a HardSigmoid with other
// parameters, a GELU scaled by 0.25, an extra factor (gelu(x) * y), and a
// GELU whose erf reads another value.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.silu
// CHECK-NOT: kiln.hard_swish
// CHECK-NOT: kiln.gelu
// CHECK: return
func.func @left_alone(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %quarter = kiln.constant dense<0.25> : tensor<f32>
  %0 = kiln.sigmoid %y : tensor<4x8xf32>
  %1 = kiln.mul %x, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.hard_sigmoid %x {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<4x8xf32>
  %3 = kiln.mul %x, %2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %d = kiln.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %e = kiln.erf %d : tensor<4x8xf32>
  %a = kiln.add %e, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m = kiln.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = kiln.mul %m, %quarter : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m2 = kiln.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %h2 = kiln.mul %m2, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %5 = kiln.mul %h2, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %dy = kiln.div %y, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %ey = kiln.erf %dy : tensor<4x8xf32>
  %ay = kiln.add %ey, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %my = kiln.mul %x, %ay : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = kiln.mul %my, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %1, %3, %4, %5, %6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
