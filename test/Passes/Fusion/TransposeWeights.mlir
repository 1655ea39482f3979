// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-transpose-weights))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-transpose-weights{one-row-min-k=3}))' | FileCheck %s --check-prefix=ROWS
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-transpose-weights{one-row-min-k=4}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-transpose-weights{one-row-min-k=1 max-rows=4}))' | FileCheck %s --check-prefix=FEW

// A Linear layer's Gemm (W stored N x K, transB) reads W transposed once at
// compile time: K x N, element (k, n) = W(n, k).
// CHECK-LABEL: func.func @linear
// CHECK: %[[WT:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: kiln.gemm %arg0, %[[WT]], %{{.+}} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: transB
func.func @linear(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = kiln.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = kiln.gemm %x, %w, %b {transB = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Resource blobs (how the importer stores weights) get a transposed blob of
// their own, named after the original.
// CHECK-LABEL: func.func @linear_resource
// CHECK: kiln.constant dense_resource<fc.weight.t> : tensor<3x2xf32>
// CHECK: kiln.gemm
// CHECK-NOT: transB
// CHECK: fc.weight.t: "0x040000000000803F00008040000000400000A040000040400000C040"
func.func @linear_resource(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = kiln.constant dense_resource<fc.weight> : tensor<2x3xf32>
  %y = kiln.gemm %x, %w {transB = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      fc.weight: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}

// -----

// Left alone: a B computed at run time, and a Gemm without transB.
// CHECK-LABEL: func.func @not_constant
// CHECK: kiln.gemm %arg0, %arg1 {transB = true}
// CHECK-LABEL: func.func @not_transposed
// CHECK: kiln.gemm %arg0, %{{.+}} : (tensor<4x3xf32>, tensor<3x2xf32>)
func.func @not_constant(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %y = kiln.gemm %x, %w {transB = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
func.func @not_transposed(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = kiln.constant dense<1.0> : tensor<3x2xf32>
  %y = kiln.gemm %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A Gemm whose A is one row (a classifier at batch 1) and whose K is at
// least one-row-min-k (GPU targets: 1; the CPU: 16 vector registers) reads
// B N x K, each output's row of it contiguous (a warp or a vector dot
// product per output): kept when the model stores it so, transposed when
// stored K x N. With a shorter K (or one-row-min-k=0) both read K x N.
// Gemms of several rows (below) read K x N always.
// CHECK-LABEL: func.func @one_row
// CHECK: kiln.gemm %arg0, %{{.+}}, %{{.+}} : (tensor<1x3xf32>, tensor<3x2xf32>, tensor<2xf32>)
// CHECK-NOT: transB
// CHECK: kiln.gemm %arg0, %{{.+}} : (tensor<1x3xf32>, tensor<3x2xf32>)
// CHECK-NOT: transB
// ROWS-LABEL: func.func @one_row
// ROWS: %[[W:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// ROWS: kiln.gemm %arg0, %[[W]], %{{.+}} {transB = true} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>)
// ROWS: %[[NK:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// ROWS: kiln.gemm %arg0, %[[NK]] {transB = true} : (tensor<1x3xf32>, tensor<2x3xf32>)
func.func @one_row(%x: tensor<1x3xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = kiln.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = kiln.gemm %x, %w, %b {transB = true} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %kn = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %z = kiln.gemm %x, %kn : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  return %y, %z : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// Gemms of several rows read K x N with one-row-min-k too.
// ROWS-LABEL: func.func @linear_rows
// ROWS: %[[WT:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// ROWS: kiln.gemm %arg0, %[[WT]], %{{.+}} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// ROWS-NOT: transB
func.func @linear_rows(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = kiln.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = kiln.gemm %x, %w, %b {transB = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A MatMul of one row by a constant matrix (a Keras Dense layer at batch
// 1) with K at least one-row-min-k becomes the Gemm that reads the weights
// N x K; a shorter K, or a MatMul of several rows, stays a MatMul.
// CHECK-LABEL: func.func @one_row_matmul
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<1x3xf32>, tensor<3x2xf32> -> tensor<1x2xf32>
// CHECK: kiln.matmul %arg1, %{{.+}} : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
// CHECK-NOT: kiln.gemm
// ROWS-LABEL: func.func @one_row_matmul
// ROWS: %[[NK:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// ROWS: kiln.gemm %arg0, %[[NK]] {transB = true} : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
// ROWS: kiln.matmul %arg1, %{{.+}} : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
func.func @one_row_matmul(%x: tensor<1x3xf32>, %rows: tensor<4x3xf32>) -> (tensor<1x2xf32>, tensor<4x2xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = kiln.matmul %x, %w : tensor<1x3xf32>, tensor<3x2xf32> -> tensor<1x2xf32>
  %z = kiln.matmul %rows, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  return %y, %z : tensor<1x2xf32>, tensor<4x2xf32>
}

// -----

// With max-rows (GPU targets: 4), Gemms and MatMuls of up to that many rows
// read B N x K as one-row ones do; more rows read K x N.
// CHECK-LABEL: func.func @few_rows
// FEW-LABEL: func.func @few_rows
// FEW: %[[W:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// FEW: %[[WT:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// FEW: kiln.gemm %arg0, %[[W]] {transB = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// FEW: kiln.gemm %arg1, %[[WT]] : (tensor<5x3xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
// FEW: %[[NK:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// FEW: kiln.gemm %arg2, %[[NK]] {transB = true} : (tensor<3x3xf32>, tensor<2x3xf32>) -> tensor<3x2xf32>
func.func @few_rows(%x: tensor<4x3xf32>, %y: tensor<5x3xf32>, %z: tensor<3x3xf32>) -> (tensor<4x2xf32>, tensor<5x2xf32>, tensor<3x2xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %a = kiln.gemm %x, %w {transB = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %b = kiln.gemm %y, %w {transB = true} : (tensor<5x3xf32>, tensor<2x3xf32>) -> tensor<5x2xf32>
  %kn = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %c = kiln.matmul %z, %kn : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %a, %b, %c : tensor<4x2xf32>, tensor<5x2xf32>, tensor<3x2xf32>
}
