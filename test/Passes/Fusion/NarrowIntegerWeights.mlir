// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-narrow-integer-weights{min-bytes=0}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-narrow-integer-weights{min-bytes=0 max-rows=1}))' | FileCheck %s --check-prefix=ONEROW
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-narrow-integer-weights))' | FileCheck %s --check-prefix=SMALL

// A weight of integers in int8's range (int8 weights minus a zero point of
// 0) is stored as int8 and widened back by a cast the matmul reads.
// CHECK-LABEL: func.func @int8_values
// CHECK: %[[Q:.+]] = kiln.constant dense<{{\[}}[1, -2, 3, 127], [-128, 0, 5, 6], [7, 8, 9, 10]]> : tensor<3x4xi8>
// CHECK: %[[W:.+]] = kiln.cast %[[Q]] : tensor<3x4xi8> -> tensor<3x4xf32>
// CHECK: kiln.matmul %arg0, %[[W]]
// CHECK-NOT: tensor<3x4xf32> = kiln.constant
// Two rows are more than max-rows=1: left as it is.
// ONEROW-LABEL: func.func @int8_values
// ONEROW-NOT: kiln.cast
// ONEROW: return
// Smaller than min-bytes (64 KiB by default): left as it is.
// SMALL-LABEL: func.func @int8_values
// SMALL-NOT: kiln.cast
// SMALL: return
func.func @int8_values(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = kiln.constant dense<[[1.0, -2.0, 3.0, 127.0], [-128.0, 0.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0]]> : tensor<3x4xf32>
  %y = kiln.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Past int8's range (uint8 weights minus a zero point of 128 and more):
// int16.
// CHECK-LABEL: func.func @int16_values
// CHECK: %[[Q:.+]] = kiln.constant dense<{{\[}}[200, -129], [32767, -32768]]> : tensor<2x2xi16>
// CHECK: kiln.cast %[[Q]] : tensor<2x2xi16> -> tensor<2x2xf32>
func.func @int16_values(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = kiln.constant dense<[[200.0, -129.0], [32767.0, -32768.0]]> : tensor<2x2xf32>
  %y = kiln.matmul %x, %w : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Not held exactly: a fraction, a value past int16, -0.0 (whose sign the
// integer would lose). Each weight stays float32.
// CHECK-LABEL: func.func @not_integers
// CHECK-NOT: kiln.cast
// CHECK: return
func.func @not_integers(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) {
  %a = kiln.constant dense<[[1.0, 2.5], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = kiln.constant dense<[[1.0, 32768.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c = kiln.constant dense<[[1.0, -0.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ya = kiln.matmul %x, %a : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  %yb = kiln.matmul %x, %b : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  %yc = kiln.matmul %x, %c : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  return %ya, %yb, %yc : tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// A weight read by two Gemms (an unrolled LSTM's steps; here N x K, as
// kiln-transpose-weights stores one-row weights) is narrowed once, into a
// resource named after it, and each Gemm reads a cast of its own (the
// prologue of its own kernel). The bias is not a weight to narrow.
// CHECK-LABEL: func.func @shared_resource
// CHECK: %[[Q:.+]] = kiln.constant dense_resource<lstm.r.i8> : tensor<2x3xi8>
// CHECK: %[[W1:.+]] = kiln.cast %[[Q]]
// CHECK: kiln.gemm %arg0, %[[W1]], %{{.+}} {transB = true}
// CHECK: %[[W2:.+]] = kiln.cast %[[Q]]
// CHECK: kiln.gemm %{{.+}}, %[[W2]], %{{.+}} {transB = true}
// CHECK-NOT: dense_resource<lstm.r>
// CHECK: lstm.r.i8: "0x0100000001FE030405FA"
func.func @shared_resource(%h: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %r = kiln.constant dense_resource<lstm.r> : tensor<2x3xf32>
  %bias = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %h1 = kiln.gemm %h, %r, %bias {transB = true} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %p = kiln.constant dense<[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]> : tensor<2x3xf32>
  %h1w = kiln.matmul %h1, %p : tensor<1x2xf32>, tensor<2x3xf32> -> tensor<1x3xf32>
  %h2 = kiln.gemm %h1w, %r, %bias {transB = true} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %h2 : tensor<1x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      lstm.r: "0x040000000000803F000000C000004040000080400000A0400000C0C0"
    }
  }
#-}
