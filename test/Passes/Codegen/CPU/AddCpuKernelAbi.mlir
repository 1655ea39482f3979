// RUN: kiln-opt %s --kiln-add-cpu-kernel-abi | FileCheck %s

// The exported symbol takes (bindings, workgroup id, workgroup count), loads
// one pointer per memref and calls the renamed, internal implementation
// with full memref descriptors (pointer, pointer, offset, sizes, strides).
// Beside it, its signature for the runtime's checks: 2 bindings, 2
// workgroups, 128 bytes in each binding.
// CHECK: llvm.mlir.global external constant @k.signature(dense<[2, 2, 128, 128]> : tensor<4xi64>) {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: %[[B:.+]]: !llvm.ptr, %[[ID:.+]]: i64, %[[N:.+]]: i64)
// CHECK-SAME: kiln.nodes = ["relu1"], kiln.workgroups = 2 : i64
// CHECK: %[[S0:.+]] = llvm.getelementptr %[[B]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.+]] = llvm.getelementptr %[[B]][1]
// CHECK: %[[P1:.+]] = llvm.load %[[S1]]
// CHECK: llvm.call @k_impl(%[[P0]], %[[P0]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[P1]], %[[P1]], %{{.+}}, %{{.+}}, %{{.+}}, %[[ID]], %[[N]])
// CHECK: llvm.func internal @k_impl
module {
  llvm.func @k(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %a3: i64, %a4: i64, %a5: i64, %a6: i64,
               %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64, %b3: i64, %b4: i64,
               %id: i64, %n: i64) attributes {kiln.kernel, kiln.abi = [memref<4x8xf32>, memref<32xf32>], kiln.nodes = ["relu1"], kiln.workgroups = 2 : i64} {
    llvm.return
  }
  // Functions that are not kernels keep their name and signature.
  // CHECK-NOT: helper.signature
  // CHECK-LABEL: llvm.func @helper(%{{.+}}: i64)
  llvm.func @helper(%x: i64) {
    llvm.return
  }
}
