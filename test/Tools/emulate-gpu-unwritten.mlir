// RUN: not kiln-emulate-gpu %s --target=cuda | FileCheck %s

// kiln-emulate-gpu runs the reference twice, the second time with the
// kernel's outputs (the buffers its first run changed) filled with NaN: an
// output element still NaN was never written. Comparing the emulated kernel
// with its reference cannot show such a tiling bug, both keeping the same
// stale element. Here the forall stops one element short.
// CHECK: misses_the_last_element: the kernel never writes element 63 of buffer 1 (or reads its old value): NOT WRITTEN
func.func @misses_the_last_element(%x: memref<64xf32>, %y: memref<64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) in (63) {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %y[%i] : memref<64xf32>
  }
  return
}

// A kernel that reads its output's old value is reported too: the runtime
// leaves it undefined (arena bytes other tensors used).
// CHECK: accumulates_into_its_output: the kernel never writes element 0 of buffer 1 (or reads its old value): NOT WRITTEN
func.func @accumulates_into_its_output(%x: memref<64xf32>, %y: memref<64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) in (64) {
    %v = memref.load %x[%i] : memref<64xf32>
    %old = memref.load %y[%i] : memref<64xf32>
    %sum = arith.addf %v, %old : f32
    memref.store %sum, %y[%i] : memref<64xf32>
  }
  return
}
