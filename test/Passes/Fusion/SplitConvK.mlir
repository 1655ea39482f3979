// RUN: kiln-opt %s --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=-1 --pass-pipeline='builtin.module(func.func(kiln-split-conv-k))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=-1 --pass-pipeline='builtin.module(func.func(kiln-split-conv-k{min-k=256}))' | FileCheck %s --check-prefix=MINK

// ResNet-50's layer4 3x3 convolution at batch 1: 512 x 7 x 7 outputs (24
// blocks of 32x32) and K = 512 x 9: eight parts of 64 channels, a grouped
// convolution (group = 8) over the weight rearranged into [8 x 512, 64, 3,
// 3] (a splat stays a splat), its result seen as [1, 8, 512, 7, 7] and
// summed over the parts; the bias after the sum, along the filters.
// CHECK-LABEL: func.func @layer4_3x3
// CHECK: %[[W:.+]] = kiln.constant dense<5.000000e-01> : tensor<4096x64x3x3xf32>
// CHECK: %[[P:.+]] = kiln.conv %arg0, %[[W]] {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x512x7x7xf32>, tensor<4096x64x3x3xf32>) -> tensor<1x4096x7x7xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[P]] : tensor<1x4096x7x7xf32> -> tensor<1x8x512x7x7xf32>
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[R]] {axes = array<i64: 1>, keepdims = false} : tensor<1x8x512x7x7xf32> -> tensor<1x512x7x7xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg1 : tensor<512xf32> -> tensor<512x1x1xf32>
// CHECK: %[[Y:.+]] = kiln.add %[[S]], %[[B]] : tensor<1x512x7x7xf32>, tensor<512x1x1xf32> -> tensor<1x512x7x7xf32>
// CHECK: kiln.relu %[[Y]]
func.func @layer4_3x3(%x: tensor<1x512x7x7xf32>, %b: tensor<512xf32>) -> tensor<1x512x7x7xf32> {
  %w = kiln.constant dense<0.5> : tensor<512x512x3x3xf32>
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>, tensor<512xf32>) -> tensor<1x512x7x7xf32>
  %1 = kiln.relu %0 : tensor<1x512x7x7xf32>
  return %1 : tensor<1x512x7x7xf32>
}

// -----

// A 1x1 convolution at stride 1 (layer4's conv3: K = 512, 2048 x 49
// outputs) computes over the flattened image: four parts of 128 channels,
// an einsum over reshaped operands (no copies, the weight needs no
// rearranging), its parts seen as images so that the sum has the
// convolution's shape.
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[X:.+]] = kiln.reshape %arg0 : tensor<1x512x7x7xf32> -> tensor<1x4x128x49xf32>
// CHECK: %[[W:.+]] = kiln.reshape %arg1 : tensor<2048x512x1x1xf32> -> tensor<2048x4x128xf32>
// CHECK: %[[P:.+]] = kiln.einsum %[[X]], %[[W]] {equation = "nskp,fsk->snfp"} : (tensor<1x4x128x49xf32>, tensor<2048x4x128xf32>) -> tensor<4x1x2048x49xf32>
// CHECK: %[[I:.+]] = kiln.reshape %[[P]] : tensor<4x1x2048x49xf32> -> tensor<4x1x2048x7x7xf32>
// CHECK: kiln.reduce_sum %[[I]] {axes = array<i64: 0>, keepdims = false} : tensor<4x1x2048x7x7xf32> -> tensor<1x2048x7x7xf32>
// CHECK-NOT: kiln.add
func.func @pointwise(%x: tensor<1x512x7x7xf32>, %w: tensor<2048x512x1x1xf32>) -> tensor<1x2048x7x7xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<2048x512x1x1xf32>) -> tensor<1x2048x7x7xf32>
  return %0 : tensor<1x2048x7x7xf32>
}

// -----

// The rearranged weight: W'[s*F + f, c] = W[f, s*C/S + c]. Two filters of
// 32 channels whose elements are their indices, in two parts (with min-k =
// 256: K = 288): filter 0's first 16 channels (0..143), filter 1's first
// (288..431), filter 0's last (144..287), filter 1's last (432..575).
// CHECK-LABEL: func.func @rearranged
// CHECK-NOT: group = 2
// MINK-LABEL: func.func @rearranged
// MINK: kiln.constant dense<{{\[\[\[\[}}0.000000e+00,
// MINK-SAME: 1.430000e+02]]], {{\[\[\[}}2.880000e+02,
// MINK-SAME: 4.310000e+02]]], {{\[\[\[}}1.440000e+02,
// MINK-SAME: 2.870000e+02]]], {{\[\[\[}}4.320000e+02,
// MINK-SAME: 5.750000e+02]]]]> : tensor<4x16x3x3xf32>
// MINK: kiln.conv {{.*}}group = 2 : i64{{.*}} -> tensor<1x4x2x2xf32>
func.func @rearranged(%x: tensor<1x32x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], [[9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0]], [[18.0, 19.0, 20.0], [21.0, 22.0, 23.0], [24.0, 25.0, 26.0]], [[27.0, 28.0, 29.0], [30.0, 31.0, 32.0], [33.0, 34.0, 35.0]], [[36.0, 37.0, 38.0], [39.0, 40.0, 41.0], [42.0, 43.0, 44.0]], [[45.0, 46.0, 47.0], [48.0, 49.0, 50.0], [51.0, 52.0, 53.0]], [[54.0, 55.0, 56.0], [57.0, 58.0, 59.0], [60.0, 61.0, 62.0]], [[63.0, 64.0, 65.0], [66.0, 67.0, 68.0], [69.0, 70.0, 71.0]], [[72.0, 73.0, 74.0], [75.0, 76.0, 77.0], [78.0, 79.0, 80.0]], [[81.0, 82.0, 83.0], [84.0, 85.0, 86.0], [87.0, 88.0, 89.0]], [[90.0, 91.0, 92.0], [93.0, 94.0, 95.0], [96.0, 97.0, 98.0]], [[99.0, 100.0, 101.0], [102.0, 103.0, 104.0], [105.0, 106.0, 107.0]], [[108.0, 109.0, 110.0], [111.0, 112.0, 113.0], [114.0, 115.0, 116.0]], [[117.0, 118.0, 119.0], [120.0, 121.0, 122.0], [123.0, 124.0, 125.0]], [[126.0, 127.0, 128.0], [129.0, 130.0, 131.0], [132.0, 133.0, 134.0]], [[135.0, 136.0, 137.0], [138.0, 139.0, 140.0], [141.0, 142.0, 143.0]], [[144.0, 145.0, 146.0], [147.0, 148.0, 149.0], [150.0, 151.0, 152.0]], [[153.0, 154.0, 155.0], [156.0, 157.0, 158.0], [159.0, 160.0, 161.0]], [[162.0, 163.0, 164.0], [165.0, 166.0, 167.0], [168.0, 169.0, 170.0]], [[171.0, 172.0, 173.0], [174.0, 175.0, 176.0], [177.0, 178.0, 179.0]], [[180.0, 181.0, 182.0], [183.0, 184.0, 185.0], [186.0, 187.0, 188.0]], [[189.0, 190.0, 191.0], [192.0, 193.0, 194.0], [195.0, 196.0, 197.0]], [[198.0, 199.0, 200.0], [201.0, 202.0, 203.0], [204.0, 205.0, 206.0]], [[207.0, 208.0, 209.0], [210.0, 211.0, 212.0], [213.0, 214.0, 215.0]], [[216.0, 217.0, 218.0], [219.0, 220.0, 221.0], [222.0, 223.0, 224.0]], [[225.0, 226.0, 227.0], [228.0, 229.0, 230.0], [231.0, 232.0, 233.0]], [[234.0, 235.0, 236.0], [237.0, 238.0, 239.0], [240.0, 241.0, 242.0]], [[243.0, 244.0, 245.0], [246.0, 247.0, 248.0], [249.0, 250.0, 251.0]], [[252.0, 253.0, 254.0], [255.0, 256.0, 257.0], [258.0, 259.0, 260.0]], [[261.0, 262.0, 263.0], [264.0, 265.0, 266.0], [267.0, 268.0, 269.0]], [[270.0, 271.0, 272.0], [273.0, 274.0, 275.0], [276.0, 277.0, 278.0]], [[279.0, 280.0, 281.0], [282.0, 283.0, 284.0], [285.0, 286.0, 287.0]]], [[[288.0, 289.0, 290.0], [291.0, 292.0, 293.0], [294.0, 295.0, 296.0]], [[297.0, 298.0, 299.0], [300.0, 301.0, 302.0], [303.0, 304.0, 305.0]], [[306.0, 307.0, 308.0], [309.0, 310.0, 311.0], [312.0, 313.0, 314.0]], [[315.0, 316.0, 317.0], [318.0, 319.0, 320.0], [321.0, 322.0, 323.0]], [[324.0, 325.0, 326.0], [327.0, 328.0, 329.0], [330.0, 331.0, 332.0]], [[333.0, 334.0, 335.0], [336.0, 337.0, 338.0], [339.0, 340.0, 341.0]], [[342.0, 343.0, 344.0], [345.0, 346.0, 347.0], [348.0, 349.0, 350.0]], [[351.0, 352.0, 353.0], [354.0, 355.0, 356.0], [357.0, 358.0, 359.0]], [[360.0, 361.0, 362.0], [363.0, 364.0, 365.0], [366.0, 367.0, 368.0]], [[369.0, 370.0, 371.0], [372.0, 373.0, 374.0], [375.0, 376.0, 377.0]], [[378.0, 379.0, 380.0], [381.0, 382.0, 383.0], [384.0, 385.0, 386.0]], [[387.0, 388.0, 389.0], [390.0, 391.0, 392.0], [393.0, 394.0, 395.0]], [[396.0, 397.0, 398.0], [399.0, 400.0, 401.0], [402.0, 403.0, 404.0]], [[405.0, 406.0, 407.0], [408.0, 409.0, 410.0], [411.0, 412.0, 413.0]], [[414.0, 415.0, 416.0], [417.0, 418.0, 419.0], [420.0, 421.0, 422.0]], [[423.0, 424.0, 425.0], [426.0, 427.0, 428.0], [429.0, 430.0, 431.0]], [[432.0, 433.0, 434.0], [435.0, 436.0, 437.0], [438.0, 439.0, 440.0]], [[441.0, 442.0, 443.0], [444.0, 445.0, 446.0], [447.0, 448.0, 449.0]], [[450.0, 451.0, 452.0], [453.0, 454.0, 455.0], [456.0, 457.0, 458.0]], [[459.0, 460.0, 461.0], [462.0, 463.0, 464.0], [465.0, 466.0, 467.0]], [[468.0, 469.0, 470.0], [471.0, 472.0, 473.0], [474.0, 475.0, 476.0]], [[477.0, 478.0, 479.0], [480.0, 481.0, 482.0], [483.0, 484.0, 485.0]], [[486.0, 487.0, 488.0], [489.0, 490.0, 491.0], [492.0, 493.0, 494.0]], [[495.0, 496.0, 497.0], [498.0, 499.0, 500.0], [501.0, 502.0, 503.0]], [[504.0, 505.0, 506.0], [507.0, 508.0, 509.0], [510.0, 511.0, 512.0]], [[513.0, 514.0, 515.0], [516.0, 517.0, 518.0], [519.0, 520.0, 521.0]], [[522.0, 523.0, 524.0], [525.0, 526.0, 527.0], [528.0, 529.0, 530.0]], [[531.0, 532.0, 533.0], [534.0, 535.0, 536.0], [537.0, 538.0, 539.0]], [[540.0, 541.0, 542.0], [543.0, 544.0, 545.0], [546.0, 547.0, 548.0]], [[549.0, 550.0, 551.0], [552.0, 553.0, 554.0], [555.0, 556.0, 557.0]], [[558.0, 559.0, 560.0], [561.0, 562.0, 563.0], [564.0, 565.0, 566.0]], [[567.0, 568.0, 569.0], [570.0, 571.0, 572.0], [573.0, 574.0, 575.0]]]]> : tensor<2x32x3x3xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x32x4x4xf32>, tensor<2x32x3x3xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Left alone: many outputs (ResNet-50's layer1 conv3 at batch 32: 256 x 56
// x 56 x 32), a short K (32 channels x 9 = 288), a grouped convolution, float16 operands, a 3x3 weight that is not
// a constant (it could not be rearranged at compile time), and channels
// that no part count divides into multiples of 16 (520).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.reduce_sum
// CHECK-COUNT-6: kiln.conv
// CHECK-NOT: kiln.reduce_sum
func.func @left_alone(%big: tensor<32x64x56x56xf32>, %short: tensor<1x32x7x7xf32>, %wg: tensor<512x64x3x3xf32>, %g: tensor<1x512x7x7xf32>, %h: tensor<1x512x7x7xf16>, %wh: tensor<512x512x3x3xf16>, %dynw: tensor<512x512x3x3xf32>, %odd: tensor<1x520x7x7xf32>) -> (tensor<32x256x56x56xf32>, tensor<1x64x7x7xf32>, tensor<1x512x7x7xf32>, tensor<1x512x7x7xf16>, tensor<1x512x7x7xf32>, tensor<1x64x7x7xf32>) {
  %w1 = kiln.constant dense<0.01> : tensor<256x64x1x1xf32>
  %0 = kiln.conv %big, %w1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<32x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<32x256x56x56xf32>
  %w2 = kiln.constant dense<0.01> : tensor<64x32x3x3xf32>
  %1 = kiln.conv %short, %w2 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x32x7x7xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x7x7xf32>
  %2 = kiln.conv %g, %wg {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x512x7x7xf32>, tensor<512x64x3x3xf32>) -> tensor<1x512x7x7xf32>
  %3 = kiln.conv %h, %wh {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf16>, tensor<512x512x3x3xf16>) -> tensor<1x512x7x7xf16>
  %4 = kiln.conv %g, %dynw {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  %w5 = kiln.constant dense<0.01> : tensor<64x520x3x3xf32>
  %5 = kiln.conv %odd, %w5 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x520x7x7xf32>, tensor<64x520x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<32x256x56x56xf32>, tensor<1x64x7x7xf32>, tensor<1x512x7x7xf32>, tensor<1x512x7x7xf16>, tensor<1x512x7x7xf32>, tensor<1x64x7x7xf32>
}

// -----

// Float32 operands widened from 16-bit values (what --precision=f16
// makes of a float32 model) split before their widening: the reshapes and
// the weight's rearrangement act on the 16-bit values, the widenings stay
// next to the contraction (which then takes tensor cores, a part's 128
// channels a multiple of 16), the partial sums are float32.
// CHECK-LABEL: func.func @widened_pointwise
// CHECK: %[[X:.+]] = kiln.reshape %arg0 : tensor<1x512x7x7xf16> -> tensor<1x4x128x49xf16>
// CHECK: %[[XW:.+]] = kiln.cast %[[X]] : tensor<1x4x128x49xf16> -> tensor<1x4x128x49xf32>
// CHECK: %[[W:.+]] = kiln.reshape %arg1 : tensor<2048x512x1x1xf16> -> tensor<2048x4x128xf16>
// CHECK: %[[WW:.+]] = kiln.cast %[[W]] : tensor<2048x4x128xf16> -> tensor<2048x4x128xf32>
// CHECK: kiln.einsum %[[XW]], %[[WW]] {equation = "nskp,fsk->snfp"} : (tensor<1x4x128x49xf32>, tensor<2048x4x128xf32>) -> tensor<4x1x2048x49xf32>
// CHECK: kiln.reduce_sum {{.*}} -> tensor<1x2048x7x7xf32>
func.func @widened_pointwise(%x: tensor<1x512x7x7xf16>, %w: tensor<2048x512x1x1xf16>) -> tensor<1x2048x7x7xf32> {
  %0 = kiln.cast %x : tensor<1x512x7x7xf16> -> tensor<1x512x7x7xf32>
  %1 = kiln.cast %w : tensor<2048x512x1x1xf16> -> tensor<2048x512x1x1xf32>
  %2 = kiln.conv %0, %1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<2048x512x1x1xf32>) -> tensor<1x2048x7x7xf32>
  return %2 : tensor<1x2048x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @widened_3x3
// CHECK: %[[W:.+]] = kiln.constant dense<5.000000e-01> : tensor<4096x64x3x3xf16>
// CHECK: %[[X:.+]] = kiln.cast %arg0 : tensor<1x512x7x7xf16> -> tensor<1x512x7x7xf32>
// CHECK: %[[WW:.+]] = kiln.cast %[[W]] : tensor<4096x64x3x3xf16> -> tensor<4096x64x3x3xf32>
// CHECK: %[[P:.+]] = kiln.conv %[[X]], %[[WW]] {{.*}}group = 8 : i64{{.*}} -> tensor<1x4096x7x7xf32>
// CHECK: kiln.reduce_sum {{.*}} -> tensor<1x512x7x7xf32>
func.func @widened_3x3(%x: tensor<1x512x7x7xf16>) -> tensor<1x512x7x7xf32> {
  %w = kiln.constant dense<0.5> : tensor<512x512x3x3xf16>
  %0 = kiln.cast %x : tensor<1x512x7x7xf16> -> tensor<1x512x7x7xf32>
  %1 = kiln.cast %w : tensor<512x512x3x3xf16> -> tensor<512x512x3x3xf32>
  %2 = kiln.conv %0, %1 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  return %2 : tensor<1x512x7x7xf32>
}

// -----

// Left alone: one operand widened from 16 bits, the other float32.
// CHECK-LABEL: func.func @half_widened
// CHECK-NOT: kiln.reduce_sum
// CHECK: kiln.conv
func.func @half_widened(%x: tensor<1x512x7x7xf16>, %w: tensor<512x512x1x1xf32>) -> tensor<1x512x7x7xf32> {
  %0 = kiln.cast %x : tensor<1x512x7x7xf16> -> tensor<1x512x7x7xf32>
  %1 = kiln.conv %0, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x1x1xf32>) -> tensor<1x512x7x7xf32>
  return %1 : tensor<1x512x7x7xf32>
}

// -----

// The same two forms on NHWC activations (kiln-channels-last-activations
// runs first): the 3x3 one a grouped channels_last convolution whose
// [N, H, W, S*F] parts are summed over dim 3 of [N, H, W, S, F]; the bias
// [F] broadcast along the last dim.
// CHECK-LABEL: func.func @channels_last_3x3
// CHECK: %[[W:.+]] = kiln.constant dense<5.000000e-01> : tensor<4096x64x3x3xf32>
// CHECK: %[[P:.+]] = kiln.conv %arg0, %[[W]] {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, {{.*}}} : (tensor<1x7x7x512xf32>, tensor<4096x64x3x3xf32>) -> tensor<1x7x7x4096xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[P]] : tensor<1x7x7x4096xf32> -> tensor<1x7x7x8x512xf32>
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[R]] {axes = array<i64: 3>, keepdims = false} : tensor<1x7x7x8x512xf32> -> tensor<1x7x7x512xf32>
// CHECK: kiln.add %[[S]], %arg1 : tensor<1x7x7x512xf32>, tensor<512xf32> -> tensor<1x7x7x512xf32>
func.func @channels_last_3x3(%x: tensor<1x7x7x512xf32>, %b: tensor<512xf32>) -> tensor<1x7x7x512xf32> {
  %w = kiln.constant dense<0.5> : tensor<512x512x3x3xf32>
  %0 = kiln.conv %x, %w, %b {channels_last, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x7x7x512xf32>, tensor<512x512x3x3xf32>, tensor<512xf32>) -> tensor<1x7x7x512xf32>
  return %0 : tensor<1x7x7x512xf32>
}

// -----

// The 1x1 form: X [N, H, W, C] as [N, H*W, S, C/S], the parts [S, N, H*W,
// F] summed as images [S, N, H, W, F].
// CHECK-LABEL: func.func @channels_last_pointwise
// CHECK: %[[X:.+]] = kiln.reshape %arg0 : tensor<1x7x7x512xf32> -> tensor<1x49x4x128xf32>
// CHECK: %[[W:.+]] = kiln.reshape %arg1 : tensor<2048x512x1x1xf32> -> tensor<2048x4x128xf32>
// CHECK: %[[P:.+]] = kiln.einsum %[[X]], %[[W]] {equation = "npsk,fsk->snpf"} : (tensor<1x49x4x128xf32>, tensor<2048x4x128xf32>) -> tensor<4x1x49x2048xf32>
// CHECK: %[[I:.+]] = kiln.reshape %[[P]] : tensor<4x1x49x2048xf32> -> tensor<4x1x7x7x2048xf32>
// CHECK: kiln.reduce_sum %[[I]] {axes = array<i64: 0>, keepdims = false} : tensor<4x1x7x7x2048xf32> -> tensor<1x7x7x2048xf32>
func.func @channels_last_pointwise(%x: tensor<1x7x7x512xf32>, %w: tensor<2048x512x1x1xf32>) -> tensor<1x7x7x2048xf32> {
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x7x7x512xf32>, tensor<2048x512x1x1xf32>) -> tensor<1x7x7x2048xf32>
  return %0 : tensor<1x7x7x2048xf32>
}
