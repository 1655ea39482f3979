//===- KilnOps.td - kiln op definitions ---------------------*- tablegen -*-===//
#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "KilnAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Unsigned integers (UI8-UI64) reach only the ops whose importer accepts
// them (NodeContext::Unsigned): elementwise arithmetic, Min/Max, Mod, Cast.
def Kiln_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I1, I8, I16, I32, I64,
                                  UI8, UI16, UI32, UI64]>;
def Kiln_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
// Element types arithmetic works on: floats and signless integers.
def Kiln_NumericTensor : RankedTensorOf<[F32, F16, BF16, F64, I8, I16, I32, I64,
                                         UI8, UI16, UI32, UI64]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant",
    [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A constant tensor (weights, shapes)";
  let description = [{
    Weights are stored as `dense_resource` blobs so that the IR stays small and
    printable; small tensors may be plain dense attributes.

    ```mlir
    %w = kiln.constant dense_resource<fc1.weight> : tensor<64x784xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, string doc, list<Trait> traits = [],
                   bit folds = 0>
    : Kiln_Op<mnemonic, traits # [Pure, SameOperandsAndResultType,
                                  InferTypeOpInterface]> {
  let summary = doc;
  let hasFolder = folds;
  let description = "Elementwise " # doc # [{.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "exponential">;
def Kiln_LogOp : Kiln_UnaryOp<"log", "natural logarithm">;
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root", [], 1>;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "1 / x">;
def Kiln_FloorOp : Kiln_UnaryOp<"floor", "round toward -inf", [], 1>;
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", "round toward +inf", [], 1>;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "error function">;
def Kiln_SinOp : Kiln_UnaryOp<"sin", "sine">;
def Kiln_CosOp : Kiln_UnaryOp<"cos", "cosine">;
def Kiln_SoftplusOp : Kiln_UnaryOp<"softplus", "log(1 + exp(x))">;
def Kiln_TanOp : Kiln_UnaryOp<"tan", "tangent">;
def Kiln_AsinOp : Kiln_UnaryOp<"asin", "arcsine">;
def Kiln_AcosOp : Kiln_UnaryOp<"acos", "arccosine">;
def Kiln_AtanOp : Kiln_UnaryOp<"atan", "arctangent">;
def Kiln_SinhOp : Kiln_UnaryOp<"sinh", "hyperbolic sine">;
def Kiln_CoshOp : Kiln_UnaryOp<"cosh", "hyperbolic cosine">;
def Kiln_AsinhOp : Kiln_UnaryOp<"asinh", "inverse hyperbolic sine">;
def Kiln_AcoshOp : Kiln_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def Kiln_AtanhOp : Kiln_UnaryOp<"atanh", "inverse hyperbolic tangent">;
def Kiln_RoundOp : Kiln_UnaryOp<"round", "round half to even", [], 1>;
def Kiln_SoftsignOp : Kiln_UnaryOp<"softsign", "x / (1 + |x|)">;
def Kiln_MishOp : Kiln_UnaryOp<"mish", "x * tanh(softplus(x))">;
def Kiln_GeluOp : Kiln_UnaryOp<"gelu", "x * Phi(x), exact (erf)">;
def Kiln_GeluTanhOp : Kiln_UnaryOp<"gelu_tanh", "GELU with the tanh approximation">;
def Kiln_SiluOp : Kiln_UnaryOp<"silu", "x * sigmoid(x) (SiLU, swish)">;
def Kiln_HardSwishOp : Kiln_UnaryOp<"hard_swish", "x * clip(x / 6 + 1/2, 0, 1)">;

// Unary ops on floats and integers.
class Kiln_NumericUnaryOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = doc;
  let hasFolder = 1;
  let description = "Elementwise " # doc # [{ of a float or integer tensor.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : tensor<4xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Kiln_SignOp : Kiln_NumericUnaryOp<"sign", "sign (-1, 0, 1)">;
def Kiln_NegOp : Kiln_NumericUnaryOp<"neg", "negation">;
def Kiln_AbsOp : Kiln_NumericUnaryOp<"abs", "absolute value">;

def Kiln_NotOp : Kiln_Op<"not", [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Logical not";
  let description = [{
    ```mlir
    %y = kiln.not %x : tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$input);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Kiln_IsNaNOp : Kiln_Op<"is_nan", [Pure, InferTypeOpAdaptor]> {
  let summary = "x != x";
  let description = [{
    ```mlir
    %y = kiln.is_nan %x : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure]> {
  let summary = "Convert elements to another type";
  let description = [{
    ONNX Cast: floats round to nearest even when narrowing, float to integer
    truncates toward zero, anything to bool is `x != 0`.

    ```mlir
    %y = kiln.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// float16/bfloat16 to float32: a value kiln-demote-precision (or a
    /// 16-bit model) stores in 16 bits, widened for the op that reads it.
    bool isWidening();
  }];
}

class Kiln_ParamUnaryOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = doc;
  let description = "Elementwise " # doc # ".";
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Kiln_LeakyReluOp : Kiln_ParamUnaryOp<"leaky_relu", "x < 0 ? alpha * x : x">;
def Kiln_EluOp : Kiln_ParamUnaryOp<"elu", "x < 0 ? alpha * (exp(x) - 1) : x">;
def Kiln_CeluOp : Kiln_ParamUnaryOp<"celu", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))">;
def Kiln_ThresholdedReluOp : Kiln_ParamUnaryOp<"thresholded_relu", "x > alpha ? x : 0">;

class Kiln_TwoParamUnaryOp<string mnemonic, string doc, string a, string b>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = doc;
  let description = "Elementwise " # doc # ".";
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha, F32Attr:$beta);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Kiln_HardSigmoidOp : Kiln_TwoParamUnaryOp<"hard_sigmoid",
    "max(0, min(1, alpha * x + beta))", "alpha", "beta">;
// Selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)); beta holds gamma.
def Kiln_SeluOp : Kiln_TwoParamUnaryOp<"selu",
    "beta * (x > 0 ? x : alpha * (exp(x) - 1)) (beta is ONNX's gamma)", "alpha", "beta">;

def Kiln_ClipOp : Kiln_Op<"clip",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "min(max(x, min), max) with constant bounds";
  let description = [{
    ```mlir
    %y = kiln.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$min, F32Attr:$max);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

class Kiln_BinaryOp<string mnemonic, string doc, list<Trait> traits = [],
                    bit folds = 0>
    : Kiln_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor]> {
  let summary = doc # " with numpy broadcasting";
  let hasFolder = folds;
  let description = "Elementwise " # doc # [{ of two tensors of one element
    type; shapes broadcast as in numpy (and ONNX).

    ```mlir
    %z = kiln.}] # mnemonic # [{ %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "x + y", [Commutative], 1>;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "x - y", [], 1>;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "x * y", [Commutative], 1>;
def Kiln_DivOp : Kiln_BinaryOp<"div", "x / y", [], 1>;
def Kiln_PowOp : Kiln_BinaryOp<"pow", "x ^ y", [], 1>;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "max(x, y)", [Commutative], 1>;
def Kiln_MinOp : Kiln_BinaryOp<"min", "min(x, y)", [Commutative], 1>;
// Integer modulo takes the divisor's sign (Python); float modulo is fmod.
def Kiln_ModOp : Kiln_BinaryOp<"mod", "x mod y (sign of y for integers, fmod for floats)", [], 1>;
def Kiln_PReluOp : Kiln_BinaryOp<"prelu", "x < 0 ? x * slope : x">;
def Kiln_ShiftLeftOp : Kiln_BinaryOp<"shift_left",
    "x << y (integers; 0 when y is at least the bit width)", [], 1>;
def Kiln_ShiftRightOp : Kiln_BinaryOp<"shift_right",
    "x >> y (logical for unsigned integers; 0 when y is at least the bit width)", [], 1>;

class Kiln_CompareOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = doc # " with numpy broadcasting";
  let hasFolder = 1;
  let description = [{Compares two tensors of one element type elementwise;
    the result is a tensor of i1.

    ```mlir
    %z = kiln.}] # mnemonic # [{ %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}
def Kiln_EqualOp : Kiln_CompareOp<"equal", "x == y">;
def Kiln_LessOp : Kiln_CompareOp<"less", "x < y">;
def Kiln_LessEqualOp : Kiln_CompareOp<"less_equal", "x <= y">;
def Kiln_GreaterOp : Kiln_CompareOp<"greater", "x > y">;
def Kiln_GreaterEqualOp : Kiln_CompareOp<"greater_equal", "x >= y">;

class Kiln_LogicOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor, Commutative]> {
  let summary = doc # " with numpy broadcasting";
  let hasFolder = 1;
  let description = [{
    ```mlir
    %z = kiln.}] # mnemonic # [{ %x, %y : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$lhs, Kiln_BoolTensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}
def Kiln_AndOp : Kiln_LogicOp<"and", "x and y">;
def Kiln_OrOp : Kiln_LogicOp<"or", "x or y">;
def Kiln_XorOp : Kiln_LogicOp<"xor", "x xor y">;

def Kiln_WhereOp : Kiln_Op<"where", [Pure, InferTypeOpAdaptor]> {
  let summary = "cond ? x : y with numpy broadcasting of all three";
  let hasFolder = 1;
  let description = [{
    ```mlir
    %z = kiln.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,` type($lhs) `,`
    type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Kiln_MatMulOp : Kiln_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "numpy matmul: batched, broadcasting, 1-D operands promoted";
  let description = [{
    ```mlir
    %c = kiln.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Kiln_EinsumOp : Kiln_Op<"einsum", [Pure]> {
  let summary = "Einstein summation over its operands";
  let description = [{
    One subscript letter per dim of each operand; letters missing from the
    output are summed over. `...` stands for leading dims that broadcast.
    The equation is normalized by the importer (explicit `->`).

    ```mlir
    %c = kiln.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_FloatTensor>:$inputs, StrAttr:$equation);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Kiln_GemmOp : Kiln_Op<"gemm", [Pure, InferTypeOpAdaptor]> {
  let summary = "alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX Gemm: A and B are 2-D, op() optionally transposes, C (optional)
    broadcasts to the M x N result.

    ```mlir
    %y = kiln.gemm %a, %b, %c {transB = true} : (tensor<1x784xf32>, tensor<64x784xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$a, Kiln_FloatTensor:$b,
                   Optional<Kiln_FloatTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$transA,
                   DefaultValuedAttr<BoolAttr, "false">:$transB);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_ConvOp : Kiln_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-D convolution, NCHW / FCHW, with groups";
  let description = [{
    ONNX Conv with explicit padding. `pads` holds the begin pads of every
    spatial dim followed by the end pads.

    With `channels_last` the input is [N, spatial..., C] and the result
    [N, spatial..., F] (the weight stays [F, C/group, k...]); groups split
    the last dim.
    kiln-channels-last-activations makes such convolutions for GPU targets.

    ```mlir
    %y = kiln.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>,
           dilations = array<i64: 1, 1>, group = 1 : i64}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                   Optional<Kiln_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group,
                   UnitAttr:$channels_last);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The dim of the input and result that holds channels (1, or the
    /// last with channels_last), and the first spatial dim.
    int64_t getChannelDim() {
      return getChannelsLast()
                 ? ::mlir::cast<::mlir::ShapedType>(getType()).getRank() - 1
                 : 1;
    }
    int64_t getFirstSpatialDim() { return getChannelsLast() ? 1 : 2; }
  }];
}

class Kiln_PoolOp<string mnemonic, string doc, dag extraArgs>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = doc;
  let description = doc # [{ over windows of the spatial dims of an NC... tensor
    (N...C with `channels_last`, which kiln-channels-last-activations sets).
    `pads` holds begin pads then end pads; `ceil_mode` rounds the output size up.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
           pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
         : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                       BoolAttr:$ceil_mode), extraArgs,
                       (ins UnitAttr:$channels_last));
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool", "Max pooling", (ins)>;
def Kiln_AveragePoolOp : Kiln_PoolOp<"average_pool", "Average pooling",
    (ins BoolAttr:$count_include_pad)>;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "Reinterpret a tensor with a new static shape";
  let description = [{
    Row-major data is unchanged; only the shape is. The importer resolves ONNX's
    0 and -1 entries, Flatten, Squeeze and Unsqueeze into the result type.

    ```mlir
    %y = kiln.reshape %x : tensor<1x16x4x4xf32> -> tensor<1x256xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute dimensions";
  let description = [{
    Result dim i is input dim perm[i].

    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let hasFolder = 1;
  let summary = "Concatenate tensors along an axis";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let hasFolder = 1;
  let summary = "Take slices of `input` along `axis` at `indices`";
  let description = [{
    ONNX Gather: the result's shape is input[:axis] + indices + input[axis+1:].
    Negative indices count from the end; out-of-range indices are clamped.

    ```mlir
    %y = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<100x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_GatherElementsOp : Kiln_Op<"gather_elements", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gather single elements along an axis";
  let description = [{
    ONNX GatherElements: the result has the indices' shape; element p reads
    input at p with its `axis` coordinate replaced by indices[p].

    ```mlir
    %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ScatterElementsOp : Kiln_Op<"scatter_elements", [Pure]> {
  let summary = "Write updates into a copy of the input at indices along an axis";
  let description = [{
    ONNX ScatterElements: update element q goes to the input position q with
    its `axis` coordinate replaced by indices[q]; `reduction` is none, add,
    mul, max or min. Later updates win for `none`.

    ```mlir
    %y = kiln.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"}
           : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                   Kiln_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_ScatterNDOp : Kiln_Op<"scatter_nd", [Pure]> {
  let summary = "Write update slices into a copy of the input at index tuples";
  let description = [{
    ONNX ScatterND: the last dim (k) of `indices` addresses the first k dims
    of the input; each update slice goes there. `reduction` is none, add,
    mul, max or min.

    ```mlir
    %y = kiln.scatter_nd %x, %i, %u {reduction = "none"}
           : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                   Kiln_Tensor:$updates, StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure]> {
  let hasFolder = 1;
  let summary = "Strided slice with static starts and steps";
  let description = [{
    Result element i of each dim d reads input element starts[d] + i * steps[d];
    steps may be negative. The result type gives the sizes.

    ```mlir
    %y = kiln.slice %x {starts = array<i64: 0, 7>, steps = array<i64: 1, -2>} : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$steps);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ExpandOp : Kiln_Op<"expand", [Pure]> {
  let summary = "Broadcast to the result shape";
  let description = [{
    ```mlir
    %y = kiln.expand %x : tensor<1x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TileOp : Kiln_Op<"tile", [Pure]> {
  let hasFolder = 1;
  let summary = "Repeat the input along each dim";
  let description = [{
    The result's dims are multiples of the input's; element i reads i mod n.

    ```mlir
    %y = kiln.tile %x : tensor<2x3xf32> -> tensor<4x9xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_PadOp : Kiln_Op<"pad", [Pure]> {
  let summary = "Pad with a constant, by edge or by reflection";
  let description = [{
    `pads` holds the begin pads of every dim followed by the end pads (all
    non-negative: the importer turns negative pads into a slice).

    ```mlir
    %y = kiln.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$pads, StrAttr:$mode,
                   F64Attr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

class Kiln_SoftmaxLikeOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = doc # " along one axis";
  let description = doc # [{ along `axis` (non-negative). The importer turns the
    flattening semantics of opsets before 13 into reshapes around this op.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x {axis = 1 : i64} : tensor<2x10xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}
def Kiln_SoftmaxOp : Kiln_SoftmaxLikeOp<"softmax", "Softmax">;
def Kiln_LogSoftmaxOp : Kiln_SoftmaxLikeOp<"log_softmax", "Log of softmax">;

def Kiln_LayerNormOp : Kiln_Op<"layer_norm",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "(x - mean) / sqrt(var + epsilon) over the dims from `axis` on";
  let description = [{
    The normalizing core of LayerNormalization (and of the ReduceMean, Sub,
    Pow, ReduceMean, Add, Sqrt, Div chain exporters emit for it, which
    kiln-recognize-layer-norm folds into this op): mean and biased variance
    over dims `axis` .. rank-1. Scale and bias stay elementwise ops, which
    fuse into the same kernel.

    ```mlir
    %y = kiln.layer_norm %x {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class Kiln_ReduceOp<string mnemonic, string doc,
                    Type tensorType = Kiln_FloatTensor, bit folds = 0>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let hasFolder = folds;
  let summary = doc # " over a set of axes";
  let description = doc # [{ over the sorted, non-negative `axes`; with
    `keepdims` the reduced dims stay as size 1.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : tensor<2x10xf32> -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$axes,
                   BoolAttr:$keepdims);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
// Integers too: sums of integer tensors (CumSum's running counts) wrap as
// the integer type does.
def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "Sum", Kiln_NumericTensor, 1>;
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", "Mean">;
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "Maximum", Kiln_FloatTensor, 1>;
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min", "Minimum", Kiln_FloatTensor, 1>;
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod", "Product", Kiln_FloatTensor, 1>;
def Kiln_ReduceSumSquareOp : Kiln_ReduceOp<"reduce_sum_square", "Sum of squares">;
def Kiln_ReduceL1Op : Kiln_ReduceOp<"reduce_l1", "Sum of absolute values">;
def Kiln_ReduceL2Op : Kiln_ReduceOp<"reduce_l2", "Euclidean norm">;
def Kiln_ReduceLogSumOp : Kiln_ReduceOp<"reduce_log_sum", "Log of the sum">;
def Kiln_ReduceLogSumExpOp : Kiln_ReduceOp<"reduce_log_sum_exp", "Log of the sum of exponentials">;

class Kiln_ArgReduceOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "Index of the " # doc # " along an axis";
  let description = [{Returns int64 indices; ties go to the first index, or
    the last with `select_last_index`.

    ```mlir
    %i = kiln.}] # mnemonic # [{ %x {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x10xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis, BoolAttr:$keepdims,
                   BoolAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"arg_max", "maximum">;
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"arg_min", "minimum">;

//===----------------------------------------------------------------------===//
// Dispatch: regions that become one kernel, and calls of outlined kernels
//===----------------------------------------------------------------------===//

def Kiln_DispatchRegionOp : Kiln_Op<"dispatch_region",
    [SingleBlock, IsolatedFromAbove]> {
  let summary = "A group of ops that becomes exactly one kernel";
  let description = [{
    The region's arguments are the tensors the kernel reads; `kiln.yield`
    names the tensors it writes. The region is isolated from above so that
    outlining it into a kernel function is a move, not an analysis.

    ```mlir
    %y = kiln.dispatch_region(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %r = kiln.relu %a : tensor<4xf32>
      kiln.yield %r : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                                 "::mlir::ValueRange":$inputs)>];
}

def Kiln_YieldOp : Kiln_Op<"yield",
    [Pure, Terminator, HasParent<"DispatchRegionOp">, ReturnLike]> {
  let summary = "Returns the results of a dispatch region";
  let description = [{
    ```mlir
    kiln.yield %r : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Kiln_DispatchOp : Kiln_Op<"dispatch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs an outlined kernel over a grid of workgroups";
  let description = [{
    `kernel` names a function in the nested kernels module; it reads the
    operands and writes the results. The kernel function carries its grid
    size (`kiln.workgroups`) and the ONNX nodes it computes (`kiln.nodes`);
    once identical kernels are one (kiln-deduplicate-kernels), each
    dispatch carries its own `kiln.nodes`.

    ```mlir
    %y = kiln.dispatch @kernels::@dispatch_0(%x)
           : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$kernel, Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
  }];
}

#endif // KILN_OPS_TD
