// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-matmul-weights{panel-width=2 min-bytes=0}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-matmul-weights{panel-width=2 min-bytes=0 max-rows=2}))' | FileCheck %s --check-prefix=ROWS
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-matmul-weights{panel-width=2}))' | FileCheck %s --check-prefix=SMALL

// B [3, 4] as panels of 2 columns [2, 3, 2]: panel b holds columns 2b and
// 2b + 1 of every row, one after another. The einsum's [.., M, 2, 2]
// result reshaped back is the matmul's.
// CHECK-LABEL: func.func @tokens
// CHECK: %[[P:.+]] = kiln.constant dense<{{\[}}{{\[}}[0.000000e+00, 1.000000e+00], [4.000000e+00, 5.000000e+00], [8.000000e+00, 9.000000e+00]], {{\[}}[2.000000e+00, 3.000000e+00], [6.000000e+00, 7.000000e+00], [1.000000e+01, 1.100000e+01]]]> : tensor<2x3x2xf32>
// CHECK: %[[E:.+]] = kiln.einsum %arg0, %[[P]] {equation = "amk,bkw->ambw"} : (tensor<1x3x3xf32>, tensor<2x3x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK: kiln.reshape %[[E]] : tensor<1x3x2x2xf32> -> tensor<1x3x4xf32>
// CHECK-NOT: kiln.matmul
// Three rows are more than max-rows=2.
// ROWS-LABEL: func.func @tokens
// ROWS: kiln.matmul
// Smaller than min-bytes (256 KiB by default).
// SMALL-LABEL: func.func @tokens
// SMALL: kiln.matmul
func.func @tokens(%x: tensor<1x3x3xf32>) -> tensor<1x3x4xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %y = kiln.matmul %x, %w : tensor<1x3x3xf32>, tensor<3x4xf32> -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

// -----

// Any number of rows by default: 128 rows read each panel again per tile
// of rows, from a few pages.
// CHECK-LABEL: func.func @many_rows
// CHECK: kiln.einsum %arg0, %{{.+}} {equation = "amk,bkw->ambw"} : (tensor<1x128x3xf32>, tensor<2x3x2xf32>) -> tensor<1x128x2x2xf32>
// CHECK-NOT: kiln.matmul
// ROWS-LABEL: func.func @many_rows
// ROWS: kiln.matmul
func.func @many_rows(%x: tensor<1x128x3xf32>) -> tensor<1x128x4xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %y = kiln.matmul %x, %w : tensor<1x128x3xf32>, tensor<3x4xf32> -> tensor<1x128x4xf32>
  return %y : tensor<1x128x4xf32>
}

// -----

// Left alone: a B computed at run time, N not a multiple of the panel
// width. A weight read by two matmuls is packed once.
// CHECK-LABEL: func.func @others
// CHECK: kiln.matmul %arg0, %arg1
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<2x2xf32>, tensor<2x5xf32>
// CHECK: %[[P:.+]] = kiln.constant dense_resource<w.panels> : tensor<2x2x2xf32>
// CHECK: kiln.einsum %arg0, %[[P]] {equation = "mk,bkw->mbw"}
// CHECK: kiln.einsum %{{.+}}, %[[P]] {equation = "mk,bkw->mbw"}
// CHECK: w.panels: "0x040000000000803F000000400000A0400000C04000004040000080400000E04000000041"
func.func @others(%x: tensor<2x2xf32>, %b: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y0 = kiln.matmul %x, %b : tensor<2x2xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %w5 = kiln.constant dense<1.0> : tensor<2x5xf32>
  %y1 = kiln.matmul %x, %w5 : tensor<2x2xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %w = kiln.constant dense_resource<w> : tensor<2x4xf32>
  %y2 = kiln.matmul %x, %w : tensor<2x2xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %xr = kiln.relu %x : tensor<2x2xf32>
  %y3 = kiln.matmul %xr, %w : tensor<2x2xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %y0, %y1, %y2, %y3 : tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
    }
  }
#-}

// -----

// A Gemm A * B + C (a Linear layer after kiln-transpose-weights) becomes
// the same einsum, reshaped back, plus C; with a transpose, or alpha or
// beta not 1, it stays.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[P:.+]] = kiln.constant dense<1.000000e+00> : tensor<2x3x2xf32>
// CHECK: %[[E:.+]] = kiln.einsum %arg0, %[[P]] {equation = "mk,bkw->mbw"} : (tensor<2x3xf32>, tensor<2x3x2xf32>) -> tensor<2x2x2xf32>
// CHECK: %[[Y:.+]] = kiln.reshape %[[E]] : tensor<2x2x2xf32> -> tensor<2x4xf32>
// CHECK: kiln.add %[[Y]], %arg1 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// CHECK: kiln.gemm %arg0, %{{.+}}, %arg1 {alpha = 2.000000e+00 : f32}
// CHECK: kiln.gemm %arg2, %{{.+}} {transA = true}
func.func @gemm(%x: tensor<2x3xf32>, %bias: tensor<4xf32>, %xt: tensor<3x2xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<3x4xf32>
  %y0 = kiln.gemm %x, %w, %bias : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y1 = kiln.gemm %x, %w, %bias {alpha = 2.0 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y2 = kiln.gemm %xt, %w {transA = true} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %y0, %y1, %y2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
