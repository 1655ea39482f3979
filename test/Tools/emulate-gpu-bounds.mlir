// RUN: not kiln-emulate-gpu %s --target=cuda | FileCheck %s
// RUN: kiln-emulate-gpu %s --target=cuda --check-bounds=false | FileCheck %s --check-prefix=UNCHECKED

// kiln-emulate-gpu checks every load and store of the emulated kernel
// against its view's bounds (--check-bounds, on by default): an index past
// a view that stays inside the buffer reads a neighbour's data on a GPU
// (or faults at the end of an allocation), and would go unnoticed when the
// value read is never stored (the padded rows of a matrix block). Here each
// thread reads one element past its one-element view of %x.
// CHECK: reads_past_its_view: OUT OF BOUNDS: ERROR: Runtime op verification failed
// CHECK-NEXT: memref.load
// CHECK-NEXT: ^ out-of-bounds access
// Unchecked, the kernel computes what its loops do: no mismatch to see.
// UNCHECKED: reads_past_its_view: {{.*}}: OK
func.func @reads_past_its_view(%x: memref<65xf32>, %y: memref<64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (64) {
    %xs = memref.subview %x[%i] [1] [1] : memref<65xf32> to memref<1xf32, strided<[1], offset: ?>>
    %v = memref.load %xs[%c1] : memref<1xf32, strided<[1], offset: ?>>
    memref.store %v, %y[%i] : memref<64xf32>
  }
  return
}
