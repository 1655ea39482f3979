// RUN: kiln-opt %s --split-input-file --kiln-convert-to-linalg | FileCheck %s

// Unsigned operands enter the body as signless integers of their width and
// get the unsigned forms of division, min/max, remainder and comparison;
// the result goes back to the unsigned type.
// CHECK-LABEL: func.func @unsigned_arith
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.+]]: ui8, %[[Y:.+]]: ui8, %{{.+}}: ui8):
// CHECK-DAG: %[[SX:.+]] = builtin.unrealized_conversion_cast %[[X]] : ui8 to i8
// CHECK-DAG: %[[SY:.+]] = builtin.unrealized_conversion_cast %[[Y]] : ui8 to i8
// CHECK: %[[Q:.+]] = arith.divui %[[SX]], %[[SY]] : i8
// CHECK: %[[R:.+]] = builtin.unrealized_conversion_cast %[[Q]] : i8 to ui8
// CHECK: linalg.yield %[[R]] : ui8
// CHECK: arith.maxui
// CHECK: arith.minui
// CHECK: arith.remui
// CHECK: arith.cmpi ult
func.func @unsigned_arith(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>) attributes {kiln.kernel} {
  %0 = kiln.div %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  %1 = kiln.max %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  %2 = kiln.min %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  %3 = kiln.mod %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  %4 = kiln.less %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>
}

// -----

// Casts: unsigned to float and back, and widening, are the unsigned forms.
// CHECK-LABEL: func.func @unsigned_casts
// CHECK: arith.uitofp %{{.+}} : i32 to f32
// CHECK: arith.fptoui %{{.+}} : f32 to i16
// CHECK: arith.extui %{{.+}} : i8 to i64
func.func @unsigned_casts(%a: tensor<4xui32>, %b: tensor<4xf32>, %c: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui16>, tensor<4xi64>) attributes {kiln.kernel} {
  %0 = kiln.cast %a : tensor<4xui32> -> tensor<4xf32>
  %1 = kiln.cast %b : tensor<4xf32> -> tensor<4xui16>
  %2 = kiln.cast %c : tensor<4xui8> -> tensor<4xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xui16>, tensor<4xi64>
}

// -----

// Shifts by the bit width or more give 0 instead of LLVM's poison; a right
// shift of an unsigned value is logical.
// CHECK-LABEL: func.func @shifts
// CHECK: %[[WIDTH:.+]] = arith.constant 32 : i32
// CHECK: %[[OK:.+]] = arith.cmpi ult, %{{.+}}, %[[WIDTH]] : i32
// CHECK: arith.shli
// CHECK: arith.select %[[OK]]
// CHECK: arith.shrui
func.func @shifts(%a: tensor<4xui32>, %b: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>) attributes {kiln.kernel} {
  %0 = kiln.shift_left %a, %b : tensor<4xui32>, tensor<4xui32> -> tensor<4xui32>
  %1 = kiln.shift_right %a, %b : tensor<4xui32>, tensor<4xui32> -> tensor<4xui32>
  return %0, %1 : tensor<4xui32>, tensor<4xui32>
}

// -----

// Padding bytes with a value (kiln-pack-int8-conv-weights pads uint8
// activations with their zero point): the value is a signless constant of
// the same bits, cast to the unsigned type.
// CHECK-LABEL: func.func @unsigned_pad
// CHECK: %[[BITS:.+]] = arith.constant -56 : i8
// CHECK: %[[V:.+]] = builtin.unrealized_conversion_cast %[[BITS]] : i8 to ui8
// CHECK: tensor.pad
// CHECK: tensor.yield %[[V]] : ui8
func.func @unsigned_pad(%a: tensor<2x3xui8>) -> tensor<2x5xui8> attributes {kiln.kernel} {
  %0 = kiln.pad %a {pads = array<i64: 0, 1, 0, 1>, mode = "constant", value = 200.0 : f64} : tensor<2x3xui8> -> tensor<2x5xui8>
  return %0 : tensor<2x5xui8>
}
