// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions{fuse-attention=true}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions))' | FileCheck %s --check-prefix=APART

// Attention, Softmax(Q·Kᵀ·s + mask)·V: the scores matmul with its scale and
// mask, the softmax over the last dim and the matmul with V are one region.
// Without fuse-attention (the GPU targets) they are three.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x8x4xf32>, %[[KT:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x8x4xf32>, %[[MASK:.+]]: tensor<1x1x8x8xf32>)
// CHECK: %[[R:.+]] = kiln.dispatch_region(%[[Q]], %[[KT]], %[[MASK]], %[[V]])
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.softmax
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
// CHECK: return %[[R]]
// APART-LABEL: func.func @attention
// APART-COUNT-3: kiln.dispatch_region
func.func @attention(%q: tensor<1x2x8x4xf32>, %kt: tensor<1x2x4x8xf32>, %v: tensor<1x2x8x4xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<1x2x8x4xf32> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.matmul %q, %kt : tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x8x8xf32>
  %1 = kiln.mul %0, %s : tensor<1x2x8x8xf32>, tensor<f32> -> tensor<1x2x8x8xf32>
  %2 = kiln.add %1, %mask : tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x2x8x8xf32>
  %3 = kiln.softmax %2 {axis = 3 : i64} : tensor<1x2x8x8xf32>
  %4 = kiln.matmul %3, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %4 : tensor<1x2x8x4xf32>
}

// -----

// Left apart: a softmax over another axis, a softmax of something other
// than a matmul, and attention probabilities that are also returned (a
// second use would recompute the region).
// CHECK-LABEL: func.func @not_attention
// CHECK-COUNT-3: kiln.dispatch_region
// CHECK-NOT: kiln.dispatch_region
// CHECK: return
// CHECK-LABEL: func.func @softmax_of_input
// CHECK-COUNT-2: kiln.dispatch_region
// CHECK-LABEL: func.func @probabilities_returned
// CHECK: kiln.dispatch_region
// CHECK: kiln.softmax
// CHECK-NEXT: kiln.yield
// CHECK: kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
func.func @not_attention(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %0 = kiln.matmul %q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  %1 = kiln.softmax %0 {axis = 1 : i64} : tensor<2x8x8xf32>
  %2 = kiln.matmul %1, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %2 : tensor<2x8x4xf32>
}
func.func @softmax_of_input(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x8x8xf32>
  %1 = kiln.matmul %0, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %1 : tensor<2x8x4xf32>
}
func.func @probabilities_returned(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x8xf32>) {
  %0 = kiln.matmul %q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  %1 = kiln.softmax %0 {axis = 2 : i64} : tensor<2x8x8xf32>
  %2 = kiln.matmul %1, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %2, %1 : tensor<2x8x4xf32>, tensor<2x8x8xf32>
}

// -----

// A classifier's softmax over its logits (a text recognizer's characters)
// weighs no values: it stays out of the projection's kernel, whose
// workgroups would each take whole rows of thousands of classes.
// CHECK-LABEL: func.func @classifier_softmax
// CHECK: %[[LOGITS:.+]] = kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK: kiln.dispatch_region(%[[LOGITS]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.softmax
// CHECK-NEXT: kiln.yield
func.func @classifier_softmax(%x: tensor<1x40x120xf32>, %w: tensor<120x500xf32>) -> tensor<1x40x500xf32> {
  %0 = kiln.matmul %x, %w : tensor<1x40x120xf32>, tensor<120x500xf32> -> tensor<1x40x500xf32>
  %1 = kiln.softmax %0 {axis = 2 : i64} : tensor<1x40x500xf32>
  return %1 : tensor<1x40x500xf32>
}
