// RUN: kiln-emulate-gpu %s --target=cuda | FileCheck %s
// RUN: kiln-emulate-gpu %s --target=rocm | FileCheck %s

// Boolean (i1, a byte per element as the runtime stores them), int8 and
// int16 buffers are emulated too (attention masks, comparisons, quantized
// data): each thread of a row kernel reads a mask, an int8 and an int16
// element, and writes a comparison and a selected value.
// CHECK: mask_select: {{.*}}: max error 0.000000e+00: OK
#row = affine_map<(d0) -> (d0)>
func.func @mask_select(%x: memref<64x128xf32>, %m: memref<64x128xi1>, %q: memref<64x128xi8>, %h: memref<64x128xi16>, %y: memref<64x128xf32>, %p: memref<64x128xi1>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (64) {
    %xs = memref.subview %x[%i, 0] [1, 128] [1, 1] : memref<64x128xf32> to memref<128xf32, strided<[1], offset: ?>>
    %ms = memref.subview %m[%i, 0] [1, 128] [1, 1] : memref<64x128xi1> to memref<128xi1, strided<[1], offset: ?>>
    %qs = memref.subview %q[%i, 0] [1, 128] [1, 1] : memref<64x128xi8> to memref<128xi8, strided<[1], offset: ?>>
    %hs = memref.subview %h[%i, 0] [1, 128] [1, 1] : memref<64x128xi16> to memref<128xi16, strided<[1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 128] [1, 1] : memref<64x128xf32> to memref<128xf32, strided<[1], offset: ?>>
    %ps = memref.subview %p[%i, 0] [1, 128] [1, 1] : memref<64x128xi1> to memref<128xi1, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#row, #row, #row, #row, #row, #row], iterator_types = ["parallel"]} ins(%xs, %ms, %qs, %hs : memref<128xf32, strided<[1], offset: ?>>, memref<128xi1, strided<[1], offset: ?>>, memref<128xi8, strided<[1], offset: ?>>, memref<128xi16, strided<[1], offset: ?>>) outs(%ys, %ps : memref<128xf32, strided<[1], offset: ?>>, memref<128xi1, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %mask: i1, %int8: i8, %int16: i16, %out: f32, %cmp: i1):
      %wide = arith.sitofp %int8 : i8 to f32
      %wider = arith.sitofp %int16 : i16 to f32
      %sum = arith.addf %in, %wide : f32
      %total = arith.addf %sum, %wider : f32
      %picked = arith.select %mask, %total, %zero : f32
      %positive = arith.cmpf ogt, %total, %zero : f32
      linalg.yield %picked, %positive : f32, i1
    }
  }
  return
}
