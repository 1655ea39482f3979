// RUN: kiln-opt %s --pass-pipeline='builtin.module(llvm.func(kiln-allocas-to-private-address-space))' | FileCheck %s

// A generic-address-space alloca becomes a private (5) one, cast back for its
// users; one already in another address space stays.
// CHECK-LABEL: llvm.func @kernel
// CHECK: %[[P:.+]] = llvm.alloca %{{.+}} x f32 {alignment = 16 : i64} : (i64) -> !llvm.ptr<5>
// CHECK-NEXT: %[[G:.+]] = llvm.addrspacecast %[[P]] : !llvm.ptr<5> to !llvm.ptr
// CHECK-NEXT: llvm.store %{{.+}}, %[[G]] : f32, !llvm.ptr
// CHECK: llvm.alloca %{{.+}} x i32 : (i64) -> !llvm.ptr<3>
llvm.func @kernel(%v: f32) {
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %p = llvm.alloca %c4 x f32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
  llvm.store %v, %p : f32, !llvm.ptr
  %q = llvm.alloca %c4 x i32 : (i64) -> !llvm.ptr<3>
  llvm.return
}
