// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions{fuse-elementwise=false}))' | FileCheck %s --check-prefix=NOFUSE

// A MatMul with its bias, scale and activation is one kernel. Weights stay
// region inputs (buffers); a scalar constant becomes an immediate.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[W:.+]] = kiln.constant dense_resource<w> : tensor<8x32xf32>
// CHECK: %[[B:.+]] = kiln.constant dense_resource<b> : tensor<32xf32>
// CHECK: %[[R:.+]] = kiln.dispatch_region(%[[X]], %[[W]], %[[B]]) : (tensor<4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x8xf32>, %[[A1:.+]]: tensor<8x32xf32>, %[[A2:.+]]: tensor<32xf32>):
// CHECK-NEXT: %[[S:.+]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[M:.+]] = kiln.matmul %[[A0]], %[[A1]]
// CHECK-NEXT: %[[P:.+]] = kiln.add %[[M]], %[[A2]]
// CHECK-NEXT: %[[Q:.+]] = kiln.mul %[[P]], %[[S]]
// CHECK-NEXT: %[[T:.+]] = kiln.relu %[[Q]]
// CHECK-NEXT: kiln.yield %[[T]] : tensor<4x32xf32>
// CHECK: return %[[R]]
// NOFUSE-LABEL: func.func @matmul_epilogue
// NOFUSE-COUNT-4: kiln.dispatch_region
func.func @matmul_epilogue(%x: tensor<4x8xf32>) -> tensor<4x32xf32> {
  %w = kiln.constant dense_resource<w> : tensor<8x32xf32>
  %b = kiln.constant dense_resource<b> : tensor<32xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  %1 = kiln.add %0, %b : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %2 = kiln.mul %1, %s : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %3 = kiln.relu %2 : tensor<4x32xf32>
  return %3 : tensor<4x32xf32>
}

// -----

// A producer with two users is not fused into either (that would compute it
// twice); reshapes stay outside regions because they are aliases.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[E:.+]] = kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.yield
// CHECK: kiln.dispatch_region(%[[E]])
// CHECK: kiln.relu
// CHECK: kiln.dispatch_region(%[[E]])
// CHECK: kiln.neg
// CHECK: kiln.reshape
// CHECK-NOT: kiln.dispatch_region
func.func @shared_producer(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %0 = kiln.exp %x : tensor<4xf32>
  %1 = kiln.relu %0 : tensor<4xf32>
  %2 = kiln.neg %0 : tensor<4xf32>
  %3 = kiln.reshape %2 : tensor<4xf32> -> tensor<2x2xf32>
  return %1, %3 : tensor<4xf32>, tensor<2x2xf32>
}

// -----

// --precision=f16 (kiln-demote-precision): a widening cast feeding a
// contraction is its prologue, so the matmul's kernel loads 16-bit operands
// (input, weight) and the previous kernel stores 16-bit values; a weight's
// cast used by an epilogue joins the epilogue. The result's rounding and
// the widening for the ReLU stay in the producer's kernel.
// CHECK-LABEL: func.func @demoted_matmul
// CHECK: %[[XH:.+]] = kiln.dispatch_region(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK: kiln.dispatch_region(%[[XH]], %{{.+}}, %{{.+}}) : (tensor<4x8xf16>, tensor<8x32xf16>, tensor<32xf16>) -> tensor<4x32xf16> {
// CHECK: kiln.cast %{{.+}} : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<8x32xf16> -> tensor<8x32xf32>
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<32xf16> -> tensor<32xf32>
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<4x32xf32> -> tensor<4x32xf16>
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<4x32xf16> -> tensor<4x32xf32>
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<4x32xf32> -> tensor<4x32xf16>
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
// CHECK: return
func.func @demoted_matmul(%x: tensor<4x8xf32>) -> tensor<4x32xf16> {
  %w = kiln.constant dense_resource<w> : tensor<8x32xf16>
  %b = kiln.constant dense_resource<b> : tensor<32xf16>
  %xh = kiln.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %xw = kiln.cast %xh : tensor<4x8xf16> -> tensor<4x8xf32>
  %ww = kiln.cast %w : tensor<8x32xf16> -> tensor<8x32xf32>
  %0 = kiln.matmul %xw, %ww : tensor<4x8xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  %bw = kiln.cast %b : tensor<32xf16> -> tensor<32xf32>
  %1 = kiln.add %0, %bw : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %2 = kiln.cast %1 : tensor<4x32xf32> -> tensor<4x32xf16>
  %3 = kiln.cast %2 : tensor<4x32xf16> -> tensor<4x32xf32>
  %4 = kiln.relu %3 : tensor<4x32xf32>
  %5 = kiln.cast %4 : tensor<4x32xf32> -> tensor<4x32xf16>
  return %5 : tensor<4x32xf16>
}

// -----

// A weight stored as int8 (kiln-narrow-integer-weights): its cast is the
// matmul's prologue, so the kernel reads the int8 constant. Each matmul
// reading the weight has a cast of its own.
// CHECK-LABEL: func.func @narrowed_weight
// CHECK: %[[Q:.+]] = kiln.constant dense_resource<q> : tensor<8x32xi8>
// CHECK: kiln.dispatch_region(%[[Q]], %arg0) : (tensor<8x32xi8>, tensor<1x8xf32>) -> tensor<1x32xf32> {
// CHECK: kiln.cast %{{.+}} : tensor<8x32xi8> -> tensor<8x32xf32>
// CHECK-NEXT: kiln.matmul
// CHECK: kiln.dispatch_region(%[[Q]], %arg1) : (tensor<8x32xi8>, tensor<1x8xf32>) -> tensor<1x32xf32> {
// CHECK: kiln.cast %{{.+}} : tensor<8x32xi8> -> tensor<8x32xf32>
// CHECK-NEXT: kiln.matmul
func.func @narrowed_weight(%x: tensor<1x8xf32>, %y: tensor<1x8xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %q = kiln.constant dense_resource<q> : tensor<8x32xi8>
  %w1 = kiln.cast %q : tensor<8x32xi8> -> tensor<8x32xf32>
  %0 = kiln.matmul %x, %w1 : tensor<1x8xf32>, tensor<8x32xf32> -> tensor<1x32xf32>
  %w2 = kiln.cast %q : tensor<8x32xi8> -> tensor<8x32xf32>
  %1 = kiln.matmul %y, %w2 : tensor<1x8xf32>, tensor<8x32xf32> -> tensor<1x32xf32>
  return %0, %1 : tensor<1x32xf32>, tensor<1x32xf32>
}

// -----

// A 16-bit result widened for a consumer in another kernel (ResNet's
// downsample branch at --precision=f16, read by the residual add of the
// next convolution): the widening joins the consumer's kernel, so the
// producer stores 16-bit values instead of float32 ones.
// CHECK-LABEL: func.func @widened_for_other_kernel
// CHECK: %[[D:.+]] = kiln.dispatch_region({{.*}}) -> tensor<4x32xf16> {
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<4x32xf32> -> tensor<4x32xf16>
// CHECK-NEXT: kiln.yield %{{.+}} : tensor<4x32xf16>
// CHECK: kiln.dispatch_region({{.*}}%[[D]]) : ({{.*}}tensor<4x32xf16>) -> tensor<4x32xf16> {
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<4x32xf16> -> tensor<4x32xf32>
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.cast %{{.+}} : tensor<4x32xf32> -> tensor<4x32xf16>
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
// CHECK: return
func.func @widened_for_other_kernel(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x32xf16> {
  %w = kiln.constant dense_resource<w> : tensor<8x32xf32>
  %0 = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  %1 = kiln.cast %0 : tensor<4x32xf32> -> tensor<4x32xf16>
  %2 = kiln.cast %1 : tensor<4x32xf16> -> tensor<4x32xf32>
  %3 = kiln.matmul %y, %w : tensor<4x8xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  %4 = kiln.add %3, %2 : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %5 = kiln.cast %4 : tensor<4x32xf32> -> tensor<4x32xf16>
  return %5 : tensor<4x32xf16>
}

// -----

// A value reduced from a whole tensor and broadcast back over it (a mel
// spectrogram's clamp below its peak) ends its kernel: joined, every part
// of the clamp would need the whole reduction first. The scalar's own
// epilogue (the Sub) stays with the reduction.
// CHECK-LABEL: func.func @clamp_below_peak
// CHECK: %[[PEAK:.+]] = kiln.dispatch_region
// CHECK: kiln.reduce_max
// CHECK-NEXT: kiln.sub
// CHECK-NEXT: kiln.yield
// CHECK: kiln.dispatch_region(%{{.+}}, %[[PEAK]]
// CHECK: kiln.max
// CHECK-NEXT: kiln.min
// CHECK-NEXT: kiln.yield
func.func @clamp_below_peak(%x: tensor<1x97x32xf32>, %ceiling: tensor<f32>) -> tensor<1x97x32xf32> {
  %range = kiln.constant dense<8.000000e+00> : tensor<1xf32>
  %peak = kiln.reduce_max %x {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<1x97x32xf32> -> tensor<f32>
  %floor = kiln.sub %peak, %range : tensor<f32>, tensor<1xf32> -> tensor<1xf32>
  %lo = kiln.max %x, %floor : tensor<1x97x32xf32>, tensor<1xf32> -> tensor<1x97x32xf32>
  %y = kiln.min %lo, %ceiling : tensor<1x97x32xf32>, tensor<f32> -> tensor<1x97x32xf32>
  return %y : tensor<1x97x32xf32>
}

// -----

// An LSTM cell's update: four gates sliced from one matmul, each with its
// activation, multiplied and added. The gate chains are elementwise groups
// of the cell's shape, so the new cell state is one kernel reading the gate
// matmul's result (four slices of it) and the old state, not one kernel per
// gate. The gates matmul stays its own kernel: its result has four users.
// CHECK-LABEL: func.func @lstm_cell
// CHECK: %[[G:.+]] = kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK: %[[C:.+]] = kiln.dispatch_region(%[[G]], %{{.+}}) : (tensor<1x32xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
// CHECK-COUNT-3: kiln.slice
// CHECK: kiln.yield
// CHECK: kiln.dispatch_region(%[[G]], %[[C]]) : (tensor<1x32xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
// CHECK: kiln.slice
// CHECK: kiln.sigmoid
// CHECK: kiln.tanh
// CHECK: kiln.mul
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
// NOFUSE-LABEL: func.func @lstm_cell
// NOFUSE-COUNT-14: kiln.dispatch_region
func.func @lstm_cell(%h: tensor<1x8xf32>, %c: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %r = kiln.constant dense_resource<r> : tensor<8x32xf32>
  %g = kiln.matmul %h, %r : tensor<1x8xf32>, tensor<8x32xf32> -> tensor<1x32xf32>
  %i0 = kiln.slice %g {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<1x32xf32> -> tensor<1x8xf32>
  %o0 = kiln.slice %g {starts = array<i64: 0, 8>, steps = array<i64: 1, 1>} : tensor<1x32xf32> -> tensor<1x8xf32>
  %f0 = kiln.slice %g {starts = array<i64: 0, 16>, steps = array<i64: 1, 1>} : tensor<1x32xf32> -> tensor<1x8xf32>
  %n0 = kiln.slice %g {starts = array<i64: 0, 24>, steps = array<i64: 1, 1>} : tensor<1x32xf32> -> tensor<1x8xf32>
  %i = kiln.sigmoid %i0 : tensor<1x8xf32>
  %f = kiln.sigmoid %f0 : tensor<1x8xf32>
  %n = kiln.tanh %n0 : tensor<1x8xf32>
  %in = kiln.mul %i, %n : tensor<1x8xf32>, tensor<1x8xf32> -> tensor<1x8xf32>
  %fc = kiln.mul %f, %c : tensor<1x8xf32>, tensor<1x8xf32> -> tensor<1x8xf32>
  %c1 = kiln.add %fc, %in : tensor<1x8xf32>, tensor<1x8xf32> -> tensor<1x8xf32>
  %o = kiln.sigmoid %o0 : tensor<1x8xf32>
  %t = kiln.tanh %c1 : tensor<1x8xf32>
  %h1 = kiln.mul %o, %t : tensor<1x8xf32>, tensor<1x8xf32> -> tensor<1x8xf32>
  return %h1, %c1 : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// Only elementwise groups of the consumer's shape merge: a matmul's group
// (with its epilogue) keeps its kernel, and so does a chain that the
// consumer broadcasts.
// CHECK-LABEL: func.func @no_merge_past_contractions_or_broadcasts
// CHECK-COUNT-4: kiln.dispatch_region
// CHECK-NOT: kiln.dispatch_region
func.func @no_merge_past_contractions_or_broadcasts(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %v: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = kiln.constant dense_resource<w> : tensor<8x8xf32>
  %m = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %e = kiln.exp %y : tensor<4x8xf32>
  %s = kiln.add %e, %m : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = kiln.tanh %v : tensor<1x8xf32>
  %n = kiln.neg %y : tensor<4x8xf32>
  %b = kiln.mul %n, %t : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return %s, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// One level of a tree walk: lookups (a Gather from a 1-D table, a
// GatherElements) read one element per output element, so they join the
// elementwise select as siblings: the level is two kernels (the feature
// lookup feeds the GatherElements, which is no elementwise consumer), not
// six.
// CHECK-LABEL: func.func @tree_level
// CHECK: %[[F:.+]] = kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.gather
// CHECK-NEXT: kiln.yield
// CHECK: kiln.dispatch_region(%arg0, %[[F]], %{{.+}}, %arg1, %{{.+}}, %{{.+}})
// CHECK-COUNT-4: kiln.gather
// CHECK: kiln.where
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
func.func @tree_level(%x: tensor<4x3xf32>, %node: tensor<4x2xi64>) -> tensor<4x2xi64> {
  %feature = kiln.constant dense_resource<feature> : tensor<7xi64>
  %threshold = kiln.constant dense_resource<threshold> : tensor<7xf32>
  %yes = kiln.constant dense_resource<yes> : tensor<7xi64>
  %no = kiln.constant dense_resource<no> : tensor<7xi64>
  %f = kiln.gather %feature, %node {axis = 0 : i64} : (tensor<7xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %v = kiln.gather_elements %x, %f {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %t = kiln.gather %threshold, %node {axis = 0 : i64} : (tensor<7xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %c = kiln.less_equal %v, %t : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xi1>
  %y = kiln.gather %yes, %node {axis = 0 : i64} : (tensor<7xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %n = kiln.gather %no, %node {axis = 0 : i64} : (tensor<7xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %next = kiln.where %c, %y, %n : tensor<4x2xi1>, tensor<4x2xi64>, tensor<4x2xi64> -> tensor<4x2xi64>
  return %next : tensor<4x2xi64>
}

// -----

// An outer product of smaller operands (a per-pixel sum [1, 1, 4, 4] times
// per-filter offsets [8, 1, 1]) read by one elementwise op is recomputed
// in that op's kernel, the convolution's, instead of being stored by the
// per-pixel sum's kernel; so is a run-time scalar times per-filter sums.
// CHECK-LABEL: func.func @broadcast_products
// CHECK: %[[PIXELS:.+]] = kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.yield {{.*}} : tensor<1x1x4x4xf32>
// CHECK: kiln.dispatch_region
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.conv
// CHECK-NEXT: kiln.mul {{.*}} : tensor<1x1x4x4xf32>, tensor<8x1x1xf32> -> tensor<1x8x4x4xf32>
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.mul {{.*}} : tensor<f32>, tensor<8x1x1xf32> -> tensor<8x1x1xf32>
// CHECK-NEXT: kiln.sub
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
func.func @broadcast_products(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %p: tensor<1x1x4x4xf32>, %z: tensor<f32>) -> tensor<1x8x4x4xf32> {
  %offsets = kiln.constant dense_resource<offsets> : tensor<8x1x1xf32>
  %sums = kiln.constant dense_resource<sums> : tensor<8x1x1xf32>
  %pixels = kiln.exp %p : tensor<1x1x4x4xf32>
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %share = kiln.mul %pixels, %offsets : tensor<1x1x4x4xf32>, tensor<8x1x1xf32> -> tensor<1x8x4x4xf32>
  %added = kiln.add %c, %share : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  %zshare = kiln.mul %z, %sums : tensor<f32>, tensor<8x1x1xf32> -> tensor<8x1x1xf32>
  %y = kiln.sub %added, %zshare : tensor<1x8x4x4xf32>, tensor<8x1x1xf32> -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}
