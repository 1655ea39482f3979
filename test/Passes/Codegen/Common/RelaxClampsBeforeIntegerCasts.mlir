// RUN: kiln-opt %s --split-input-file --kiln-relax-clamps-before-integer-casts | FileCheck %s

// QuantizeLinear's saturation before its conversion to uint8: both clamps
// take nnan and nsz (a NaN converts to poison either way, both zeros to
// 0); the rounding before them keeps its semantics.
// CHECK-LABEL: func.func @quantize
// CHECK: math.roundeven %{{.+}} : vector<16xf32>
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK: arith.minimumf %{{.+}}, %{{.+}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK: arith.fptoui
func.func @quantize(%x: vector<16xf32>) -> vector<16xi8> {
  %zp = arith.constant dense<132.0> : vector<16xf32>
  %lo = arith.constant dense<0.0> : vector<16xf32>
  %hi = arith.constant dense<255.0> : vector<16xf32>
  %r = math.roundeven %x : vector<16xf32>
  %s = arith.addf %r, %zp : vector<16xf32>
  %m = arith.maximumf %s, %lo : vector<16xf32>
  %n = arith.minimumf %m, %hi : vector<16xf32>
  %b = arith.fptoui %n : vector<16xf32> to vector<16xi8>
  return %b : vector<16xi8>
}

// -----

// Left alone: a clamp whose value is also read as a float (a Clip's
// result), and one that feeds no conversion to an integer.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: fastmath
func.func @kept(%x: f32) -> (i8, f32, f32) {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %m = arith.maximumf %x, %lo : f32
  %n = arith.minimumf %m, %hi : f32
  %b = arith.fptosi %n : f32 to i8
  %c = arith.maximumf %x, %hi : f32
  return %b, %n, %c : i8, f32, f32
}
