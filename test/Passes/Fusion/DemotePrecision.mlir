// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-demote-precision{precision=f16}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-demote-precision{precision=bf16}))' | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-demote-precision))' | FileCheck %s --check-prefix=F32
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-demote-precision{precision=f8}))' 2>&1 | FileCheck %s --check-prefix=BAD

// Weights are converted at compile time (rounded to nearest even), the
// input is rounded once where it enters, each float32 result is rounded
// after its op, and every use widens the 16-bit value with a cast of its
// own: the ops themselves still compute in float32. The output is widened
// back for the caller; integer tensors are left alone.
// CHECK-LABEL: func.func @mlp
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.332520e-01], [-2.500000e+00, 6.550400e+04]]> : tensor<2x2xf16>
// CHECK-DAG: %[[XH:.+]] = kiln.cast %arg0 : tensor<3x2xf32> -> tensor<3x2xf16>
// CHECK: %[[X:.+]] = kiln.cast %[[XH]] : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK: %[[WW:.+]] = kiln.cast %[[W]] : tensor<2x2xf16> -> tensor<2x2xf32>
// CHECK: %[[M:.+]] = kiln.matmul %[[X]], %[[WW]] : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
// CHECK: %[[MH:.+]] = kiln.cast %[[M]] : tensor<3x2xf32> -> tensor<3x2xf16>
// CHECK: %[[M1:.+]] = kiln.cast %[[MH]] : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[M1]]
// CHECK: %[[RH:.+]] = kiln.cast %[[R]] : tensor<3x2xf32> -> tensor<3x2xf16>
// CHECK-DAG: %[[M2:.+]] = kiln.cast %[[MH]] : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK-DAG: %[[X2:.+]] = kiln.cast %[[XH]] : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK: %[[G:.+]] = kiln.greater %[[M2]], %[[X2]]
// CHECK: %[[OUT:.+]] = kiln.cast %[[RH]] : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK: return %[[OUT]], %[[G]] : tensor<3x2xf32>, tensor<3x2xi1>
// BF16-LABEL: func.func @mlp
// BF16: kiln.cast %arg0 : tensor<3x2xf32> -> tensor<3x2xbf16>
// BF16: kiln.constant dense<{{\[}}[1.000000e+00, 3.339840e-01], [-2.500000e+00, 6.553600e+04]]> : tensor<2x2xbf16>
// F32-LABEL: func.func @mlp
// F32-NOT: kiln.cast
// BAD: unknown precision 'f8' (f32, f16 or bf16)
func.func @mlp(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xi1>) {
  %w = kiln.constant dense<[[1.0, 0.33333333], [-2.5, 65504.0]]> : tensor<2x2xf32>
  %0 = kiln.matmul %x, %w : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %1 = kiln.relu %0 : tensor<3x2xf32>
  %2 = kiln.greater %0, %x : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xi1>
  return %1, %2 : tensor<3x2xf32>, tensor<3x2xi1>
}

// -----

// Large weights are dense_resource blobs: converted into a new blob.
// CHECK-LABEL: func.func @resource
// CHECK: kiln.constant dense_resource<w.f16> : tensor<4x4xf16>
// CHECK-NOT: dense_resource<w>
// CHECK: w.f16: "0x02000000003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C"
func.func @resource(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = kiln.constant dense_resource<w> : tensor<4x4xf32>
  %0 = kiln.add %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// Ops that only move elements take the 16-bit values as they are: no
// widening before the transpose, no rounding after it.
// CHECK-LABEL: func.func @moves
// CHECK: %[[H:.+]] = kiln.cast %arg0 : tensor<2x3xf32> -> tensor<2x3xf16>
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[H]] {perm = array<i64: 1, 0>} : tensor<2x3xf16> -> tensor<3x2xf16>
// CHECK-NEXT: %[[W:.+]] = kiln.cast %[[T]] : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK-NEXT: kiln.relu %[[W]]
func.func @moves(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = kiln.relu %0 : tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Rounding at the boundaries (the values APFloat's conversion gives, which
// the pass's faster one must match): float16 65519 -> 65504 and 65520 ->
// inf, subnormal ties to even (2^-25 -> 0, just above it -> 2^-24), ties
// at 1 + 2^-11 (down to even) and 1 + 3 * 2^-11 (up to even), NaNs quiet,
// -0 kept; bfloat16 the same on its own grid (1 + 2^-8 -> 1, 1 + 3 * 2^-8
// -> 1.015625, the largest float32 -> inf).
// CHECK-LABEL: func.func @rounding
// CHECK: kiln.constant dense<[6.550400e+04, 0x7C00, 5.960460e-08, 0.000000e+00, 5.960460e-08, 1.000980e+00, 1.000000e+00, 1.001950e+00, 0x7E00, 0xFC00, -0.000000e+00, 0x7C00, 0x7C00, 1.003910e+00, 1.011720e+00, 0x7E00]> : tensor<16xf16>
// BF16-LABEL: func.func @rounding
// BF16: kiln.constant dense<[6.553600e+04, 6.553600e+04, 5.960460e-08, 2.980230e-08, 2.980230e-08, 1.000000e+00, 1.000000e+00, 1.000000e+00, 0x7FC0, 0xFF80, -0.000000e+00, 3.389530e+38, 0x7F80, 1.000000e+00, 1.015630e+00, 0x7FC0]> : tensor<16xbf16>
func.func @rounding(%x: tensor<16xf32>) -> tensor<16xf32> {
  %w = kiln.constant dense<[65519.0, 65520.0, 5.9604644775390625e-08, 2.98023223876953125e-08, 2.98023259404089913e-08, 1.0009765625, 1.00048828125, 1.00146484375, 0x7FC00000, 0xFF800000, -0.0, 3.3895313892515355e+38, 3.40282346638528859e+38, 1.00390625, 1.01171875, 0x7F800001]> : tensor<16xf32>
  %0 = kiln.add %x, %w : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// The same boundaries in a resource blob, which float16 converts eight
// elements at a time (F16C where the CPU has it) and the last three one
// by one: every value as APFloat rounds it, the signaling NaN quiet.
// CHECK-LABEL: func.func @rounding_blob
// CHECK: rounding.f16: "0x02000000FF7B007C010000000100013C003C023C007E00FC0080007C007C043C0C3C007EFF7B003C0000"
func.func @rounding_blob(%x: tensor<19xf32>) -> tensor<19xf32> {
  %w = kiln.constant dense_resource<rounding> : tensor<19xf32>
  %0 = kiln.add %x, %w : tensor<19xf32>, tensor<19xf32> -> tensor<19xf32>
  return %0 : tensor<19xf32>
}
{-#
  dialect_resources: {
    builtin: {
      rounding: "0x0400000000EF7F4700F07F470000803300000033010000330020803F0010803F0030803F0000C07F000080FF0000008000007F7FFFFF7F7F0080803F0080813F0100807F00EF7F470010803F00000033"
    }
  }
#-}
