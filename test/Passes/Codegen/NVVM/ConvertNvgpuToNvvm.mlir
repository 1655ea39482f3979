// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-convert-nvgpu-to-nvvm))' | FileCheck %s

// nvgpu ops lowered at the gpu.module's index width: a module that
// kiln-narrow-gpu-indices gave 32-bit indices computes cp.async and
// ldmatrix addresses in i32 (upstream's convert-nvgpu-to-nvvm would use
// i64 whatever the layout says), and the stage loop's cp.async token
// (an iteration argument) becomes an i32 carried by the loop.
// CHECK-LABEL: gpu.module @narrow
// CHECK: builtin.unrealized_conversion_cast %arg1 : index to i32
// CHECK: llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (i32)  : i32
// CHECK: llvm.mul %{{.+}}, %{{.+}} : i32
// CHECK: nvvm.cp.async.shared.global
// CHECK: scf.yield %{{.+}} : i32
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.ldmatrix
// CHECK-NOT: nvgpu.
// The default layout keeps 64-bit indices.
// CHECK-LABEL: gpu.module @wide
// CHECK: builtin.unrealized_conversion_cast %arg0 : index to i64
// CHECK: llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: nvvm.ldmatrix
// CHECK-NOT: nvgpu.
module attributes {gpu.container_module} {
  gpu.module @narrow attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>} {
    gpu.func @copy_and_load(%src: memref<64x64xf16>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %smem = memref.alloca() : memref<16x16xf16, #gpu.address_space<workgroup>>
      %c00 = nvgpu.device_async_copy %src[%c0, %c0], %smem[%c0, %c0], 8 : memref<64x64xf16> to memref<16x16xf16, #gpu.address_space<workgroup>>
      %t0 = nvgpu.device_async_create_group %c00
      %last = scf.for %i = %c0 to %n step %c1 iter_args(%t = %t0) -> (!nvgpu.device.async.token) {
        %cp = nvgpu.device_async_copy %src[%i, %c0], %smem[%c0, %c0], 8 : memref<64x64xf16> to memref<16x16xf16, #gpu.address_space<workgroup>>
        %g = nvgpu.device_async_create_group %cp
        scf.yield %g : !nvgpu.device.async.token
      }
      nvgpu.device_async_wait %last {numGroups = 0 : i32}
      %frag = nvgpu.ldmatrix %smem[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      gpu.return
    }
  }
  gpu.module @wide {
    gpu.func @load(%n: index) kernel {
      %c0 = arith.constant 0 : index
      %smem = memref.alloca() : memref<16x16xf16, #gpu.address_space<workgroup>>
      %frag = nvgpu.ldmatrix %smem[%n, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      gpu.return
    }
  }
}
