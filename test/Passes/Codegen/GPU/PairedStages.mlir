// RUN: kiln-opt %s --pass-pipeline='builtin.module(eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize,canonicalize,func.func(kiln-expand-memref-copies),func.func(kiln-promote-temporaries-to-stack),buffer-deallocation-pipeline,func.func(kiln-configure-gpu-contractions{arch=amd},kiln-contract-with-matrix-cores{arch=amd}))' | FileCheck %s
// RUN: kiln-emulate-gpu %s --bufferize --target=rocm | FileCheck %s --check-prefix=EMU
// RUN: kiln-emulate-gpu %s --bufferize --target=cuda | FileCheck %s --check-prefix=EMU

// A tensor-core block whose stages go through registers (AMD, and NVIDIA
// operands that cp.async cannot copy) computes two stages an iteration
// when its loop is longer than ptxas unrolls whole
// (OutputBlock::kStagesPtxasUnrolls): the loads carried from one
// iteration to the next then alternate between two sets of registers
// instead of being moved, and each stage's buffer is a constant. K = 1312
// is 41 stages of 32: the first, an odd count's, comes before the loop,
// which then takes stages 1-2, 3-4, ..., 39-40 from buffers 1 and 0.
// CHECK-LABEL: func.func @long_k_odd
// CHECK: amdgpu.mfma
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %c1{{(_[0-9]+)?}} to %c41{{(_[0-9]+)?}} step %c2{{(_[0-9]+)?}} iter_args
// CHECK-COUNT-16: amdgpu.mfma
// CHECK: scf.yield
// K = 1280, 40 stages: ptxas unrolls such a loop whole, which is better
// still (its addresses become constants); one stage an iteration.
// CHECK-LABEL: func.func @short_k
// CHECK: scf.for %{{.+}} = %c0{{(_[0-9]+)?}} to %c40{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// CHECK-COUNT-8: amdgpu.mfma
// CHECK-NOT: amdgpu.mfma
// CHECK: scf.yield
// Both compute what their loops do (the odd stage and the pairs):
// EMU: long_k_odd: {{.*}}: OK
// EMU: short_k: {{.*}}: OK
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @long_k_odd(%arg0: memref<128x1312xf16>, %arg1: memref<1312x64xf16>, %arg2: memref<128x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<128x1312xf16> to tensor<128x1312xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<1312x64xf16> to tensor<1312x64xf16>
  %e = tensor.empty() : tensor<128x64xf32>
  %y = scf.forall (%i, %j) = (0, 0) to (128, 64) step (64, 64) shared_outs(%out = %e) -> (tensor<128x64xf32>) {
    %xs = tensor.extract_slice %x[%i, 0] [64, 1312] [1, 1] : tensor<128x1312xf16> to tensor<64x1312xf16>
    %ws = tensor.extract_slice %w[0, %j] [1312, 64] [1, 1] : tensor<1312x64xf16> to tensor<1312x64xf16>
    %os = tensor.extract_slice %out[%i, %j] [64, 64] [1, 1] : tensor<128x64xf32> to tensor<64x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%os : tensor<64x64xf32>) -> tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xs, %ws : tensor<64x1312xf16>, tensor<1312x64xf16>) outs(%f : tensor<64x64xf32>) {
    ^bb0(%in: f16, %in_0: f16, %acc: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %acc, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<64x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %mm into %out[%i, %j] [64, 64] [1, 1] : tensor<64x64xf32> into tensor<128x64xf32>
    }
  }
  bufferization.materialize_in_destination %y in restrict writable %arg2 : (tensor<128x64xf32>, memref<128x64xf32>) -> ()
  return
}
func.func @short_k(%arg0: memref<128x1280xf16>, %arg1: memref<1280x64xf16>, %arg2: memref<128x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<128x1280xf16> to tensor<128x1280xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<1280x64xf16> to tensor<1280x64xf16>
  %e = tensor.empty() : tensor<128x64xf32>
  %y = scf.forall (%i, %j) = (0, 0) to (128, 64) step (64, 64) shared_outs(%out = %e) -> (tensor<128x64xf32>) {
    %xs = tensor.extract_slice %x[%i, 0] [64, 1280] [1, 1] : tensor<128x1280xf16> to tensor<64x1280xf16>
    %ws = tensor.extract_slice %w[0, %j] [1280, 64] [1, 1] : tensor<1280x64xf16> to tensor<1280x64xf16>
    %os = tensor.extract_slice %out[%i, %j] [64, 64] [1, 1] : tensor<128x64xf32> to tensor<64x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%os : tensor<64x64xf32>) -> tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xs, %ws : tensor<64x1280xf16>, tensor<1280x64xf16>) outs(%f : tensor<64x64xf32>) {
    ^bb0(%in: f16, %in_0: f16, %acc: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %acc, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<64x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %mm into %out[%i, %j] [64, 64] [1, 1] : tensor<64x64xf32> into tensor<128x64xf32>
    }
  }
  bufferization.materialize_in_destination %y in restrict writable %arg2 : (tensor<128x64xf32>, memref<128x64xf32>) -> ()
  return
}
