#!/usr/bin/env python3
"""(Re)generate Kiln's small ONNX test models and their reference data.

Run from anywhere with the project venv:

    .venv/bin/python scripts/make_test_models.py

Writes (all deterministic; fixed seeds):
  A. End-to-end models in the ONNX backend-test layout
     (<dir>/model.onnx + <dir>/test_data_set_K/{input,output}_J.pb),
     references computed with onnxruntime on the CPU execution provider:
       test/models/mlp/            opset 13
       test/models/small_cnn/      opset 13
       test/models/cnn_symbolic/   opset 17, batch dim "N", 2 data sets
       test/models/vit_block/      opset 17, 131 tokens (GPU: shifted blocks)
       test/models/grouped_f16/    opset 13, float16 grouped convolution
       test/models/scatter_splat_f16/ opset 13, float16 ScatterND of one value
       test/models/position_ids/   opset 13, integer CumSum (RoBERTa's positions)
       test/models/patch_embedding/ opset 17, ViT's 16x16 patch embedding into tokens
       test/models/strided_stems/  opset 17, first convolutions at stride 2 and 4 on 3 channels
       test/models/classifier_b1/  opset 13, Gemms on one row (weights read N x K)
       test/models/tree_ensembles/ opset 17 + ai.onnx.ml 3, hand-built tree ensembles
       test/models/binary_classifiers/ opset 17 + ai.onnx.ml 3, two-class trees and linear models
       test/models/pad_computed_value/ opset 13, Pad values read at run time
       examples/tiny_cnn/          opset 13, the bundled example
  B. Importer test models (no data) in test/Import/models/*.onnx.

Only onnx.helper / numpy / onnxruntime are used (no torch).

IR versions: every model gets the smallest IR version its opset allows
(opset 11 -> IR 6, 13 -> 7, 17/18 -> 8, 21 -> 10), so that models with opset <= 17
load with the system libonnx 1.12 (which knows IR <= 8 and opsets <= 17).
"""

import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

try:
    import onnxruntime as ort
except ImportError:  # pragma: no cover
    ort = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E_DIR = os.path.join(ROOT, "test", "models")
IMPORT_DIR = os.path.join(ROOT, "test", "Import", "models")
EXAMPLES_DIR = os.path.join(ROOT, "examples")

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64
I32 = TensorProto.INT32

IR_FOR_OPSET = {11: 6, 13: 7, 15: 8, 17: 8, 18: 8, 20: 9, 21: 10}

written = []  # (path, description) for the summary


# --------------------------------------------------------------------------- helpers


def vi(name, shape, dtype=F32):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array), name=name)


def weights(rng, shape, fan_in):
    """He-style normal init, float32."""
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def bias(rng, n):
    return (rng.standard_normal(n) * 0.05).astype(np.float32)


def make_model(graph, opset, name):
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        ir_version=IR_FOR_OPSET[opset],
        producer_name="kiln-make_test_models",
        producer_version="1",
    )
    model.graph.name = name
    return model


def check(model):
    # full_check=True also runs strict shape inference, which verifies that the
    # declared output shapes agree with the ops.
    onnx.checker.check_model(model, full_check=True)


def save_model(model, path, desc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    written.append((path, desc))


def run_ort(model, feeds):
    sess = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    names = [o.name for o in sess.get_outputs()]
    return names, sess.run(names, feeds)


def write_pb(path, array, name):
    # np.asarray, not np.ascontiguousarray: the latter makes a scalar 1-d.
    t = numpy_helper.from_array(np.asarray(array, order="C"), name=name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def shape_str(value_info):
    dims = []
    for d in value_info.type.tensor_type.shape.dim:
        dims.append(d.dim_param if d.HasField("dim_param") else str(d.dim_value))
    dt = TensorProto.DataType.Name(value_info.type.tensor_type.elem_type).lower()
    return "%s %s[%s]" % (value_info.name, dt, ",".join(dims))


def io_desc(model):
    ins = ", ".join(shape_str(v) for v in model.graph.input)
    outs = ", ".join(shape_str(v) for v in model.graph.output)
    return "opset %d, in: %s -> out: %s" % (model.opset_import[0].version, ins, outs)


def run_onnx_reference(model, feeds):
    from onnx.reference import ReferenceEvaluator
    names = [o.name for o in model.graph.output]
    return names, ReferenceEvaluator(model).run(names, feeds)


def write_e2e(model, out_dir, input_sets, reference=run_ort):
    """model.onnx + one test_data_set_K per entry of input_sets (list of dicts),
    the outputs computed by `reference` (onnxruntime unless it lacks the op)."""
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    check(model)
    save_model(model, os.path.join(out_dir, "model.onnx"), io_desc(model))
    in_names = [v.name for v in model.graph.input]
    for k, feeds in enumerate(input_sets):
        ds = os.path.join(out_dir, "test_data_set_%d" % k)
        os.makedirs(ds)
        out_names, outs = reference(model, feeds)
        assert out_names == [v.name for v in model.graph.output]
        for j, n in enumerate(in_names):
            p = os.path.join(ds, "input_%d.pb" % j)
            write_pb(p, feeds[n], n)
            written.append((p, "%s %s" % (n, list(feeds[n].shape))))
        for j, (n, o) in enumerate(zip(out_names, outs)):
            assert np.all(np.isfinite(o)), (out_dir, n)
            p = os.path.join(ds, "output_%d.pb" % j)
            write_pb(p, o, n)
            written.append((p, "%s %s" % (n, list(o.shape))))


# --------------------------------------------------------------------------- A. end-to-end


def build_mlp():
    rng = np.random.default_rng(1001)
    # fc1 and fc3 use transB=1 (PyTorch-export style, W is [out,in]);
    # fc2 uses transB=0 (W is [in,out]) so both layouts are covered.
    inits = [
        init("fc1.weight", weights(rng, (128, 784), 784)),
        init("fc1.bias", bias(rng, 128)),
        init("fc2.weight", weights(rng, (128, 64), 128)),
        init("fc2.bias", bias(rng, 64)),
        init("fc3.weight", weights(rng, (10, 64), 64)),
        init("fc3.bias", bias(rng, 10)),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["fc1_out"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("Gemm", ["relu1_out", "fc2.weight", "fc2.bias"], ["fc2_out"], name="fc2"),
        helper.make_node("Relu", ["fc2_out"], ["relu2_out"], name="relu2"),
        helper.make_node("Gemm", ["relu2_out", "fc3.weight", "fc3.bias"], ["fc3_out"], name="fc3", transB=1),
        helper.make_node("Softmax", ["fc3_out"], ["probs"], name="softmax", axis=1),
    ]
    g = helper.make_graph(nodes, "mlp", [vi("x", [2, 784])], [vi("probs", [2, 10])], inits)
    model = make_model(g, 13, "mlp")
    x = rng.random((2, 784), dtype=np.float32)
    return model, [{"x": x}]


def build_matmul_split_k():
    # A short, deep matmul (16 x 32 outputs, K = 512) with a bias and ReLU:
    # GPU targets split its K into parts summed by a second kernel
    # (kiln-split-matmul-k); the CPU computes it whole. Either must match.
    rng = np.random.default_rng(1013)
    inits = [
        init("proj.weight", weights(rng, (512, 32), 512)),
        init("proj.bias", bias(rng, 32)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "proj.weight"], ["proj_mm"], name="proj"),
        helper.make_node("Add", ["proj_mm", "proj.bias"], ["proj_out"], name="proj_bias"),
        helper.make_node("Relu", ["proj_out"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "matmul_split_k", [vi("x", [1, 16, 512])], [vi("y", [1, 16, 32])], inits)
    model = make_model(g, 13, "matmul_split_k")
    x = rng.standard_normal((1, 16, 512), dtype=np.float32)
    return model, [{"x": x}]


def build_zero_size():
    # Tensors with a zero-size dim: a matmul with no rows (empty output), one
    # whose K is 0 (every output is its bias), a Softmax over no rows, a
    # Concat with an empty part, a padded convolution and a pooling of a
    # batch of 0, and a sum over an empty axis (zeros). Every target must
    # compile them (the GPU tilers divided by the empty extents; the
    # convolution's padding kernel failed to bufferize) and give
    # onnxruntime's answers.
    rng = np.random.default_rng(1019)
    conv_w = rng.standard_normal((4, 3, 3, 3), dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["rows", "w"], ["no_rows"], name="no_rows"),
        helper.make_node("MatMul", ["no_k_a", "no_k_b"], ["no_k_mm"], name="no_k"),
        helper.make_node("Add", ["no_k_mm", "bias"], ["no_k_out"], name="no_k_bias"),
        helper.make_node("Softmax", ["rows_x"], ["no_rows_softmax"], name="softmax", axis=1),
        helper.make_node("Concat", ["rows_x", "x"], ["concat"], name="concat", axis=0),
        helper.make_node("Conv", ["images", "conv_w"], ["no_images_conv"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["no_images_conv"], ["no_images_pool"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("ReduceSum", ["no_k_a", "sum_axes"], ["empty_sum"], name="sum",
                         keepdims=0),
    ]
    g = helper.make_graph(
        nodes, "zero_size",
        [vi("rows", [0, 8]), vi("w", [8, 16]), vi("no_k_a", [4, 0]), vi("no_k_b", [0, 16]),
         vi("bias", [16]), vi("rows_x", [0, 10]), vi("x", [3, 10]), vi("images", [0, 3, 8, 8])],
        [vi("no_rows", [0, 16]), vi("no_k_out", [4, 16]), vi("no_rows_softmax", [0, 10]),
         vi("concat", [3, 10]), vi("no_images_pool", [0, 4, 4, 4]), vi("empty_sum", [4])],
        [init("conv_w", conv_w), init("sum_axes", np.array([1], np.int64))])
    model = make_model(g, 13, "zero_size")
    feeds = {
        "rows": np.zeros((0, 8), np.float32),
        "w": rng.standard_normal((8, 16), dtype=np.float32),
        "no_k_a": np.zeros((4, 0), np.float32),
        "no_k_b": np.zeros((0, 16), np.float32),
        "bias": rng.standard_normal(16, dtype=np.float32),
        "rows_x": np.zeros((0, 10), np.float32),
        "x": rng.standard_normal((3, 10), dtype=np.float32),
        "images": np.zeros((0, 3, 8, 8), np.float32),
    }
    return model, [feeds]


def build_classifier_b1():
    # A classifier at batch 1: Gemms whose A is one row. GPU targets read
    # their weights N x K (kiln-transpose-weights{one-row-min-k}), a warp or
    # two per output along a contiguous row of W: fc1 as PyTorch exports
    # Linear (transB=1, W kept), fc2 with W stored K x N (transB=0,
    # transposed at compile time). The CPU does so where K spans 16 vector
    # registers (fc1 with AVX-512), else reads K x N. Either must match.
    rng = np.random.default_rng(1019)
    inits = [
        init("fc1.weight", weights(rng, (100, 256), 256)),
        init("fc1.bias", bias(rng, 100)),
        init("fc2.weight", weights(rng, (100, 40), 100)),
        init("fc2.bias", bias(rng, 40)),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["fc1_out"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("Gemm", ["relu1_out", "fc2.weight", "fc2.bias"], ["logits"], name="fc2"),
    ]
    g = helper.make_graph(nodes, "classifier_b1", [vi("x", [1, 256])], [vi("logits", [1, 40])], inits)
    model = make_model(g, 13, "classifier_b1")
    x = rng.standard_normal((1, 256), dtype=np.float32)
    return model, [{"x": x}]


def build_tree_ensembles():
    # ai.onnx.ml tree ensembles built by hand: every branch mode, a missing
    # value (NaN) that one node sends to its true child, leaves voting for
    # only some classes, base values, AVERAGE over trees and a LOGISTIC
    # transform, against onnxruntime's own kernels.
    #   tree 0: n0 x0 < 0 (NaN: true) -> n1 | n2; n1 x1 >= 0.5 -> n3 | n4;
    #           n4 x2 != 1 -> n5 | n6; n2, n3, n5, n6 leaves
    #   tree 1: n0 x2 == 1 -> n1 | n2; n2 x0 > -0.5 -> n3 | n4;
    #           n1, n3, n4 leaves
    tree = dict(
        nodes_treeids=[0] * 7 + [1] * 5,
        nodes_nodeids=[0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4],
        nodes_featureids=[0, 1, 0, 0, 2, 0, 0, 2, 0, 0, 0, 0],
        nodes_modes=["BRANCH_LT", "BRANCH_GTE", "LEAF", "LEAF", "BRANCH_NEQ", "LEAF", "LEAF",
                     "BRANCH_EQ", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
        nodes_values=[0.0, 0.5, 0, 0, 1.0, 0, 0, 1.0, 0, -0.5, 0, 0],
        nodes_truenodeids=[1, 3, 0, 0, 5, 0, 0, 1, 0, 3, 0, 0],
        nodes_falsenodeids=[2, 4, 0, 0, 6, 0, 0, 2, 0, 4, 0, 0],
        nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    )
    leaves = [(0, 2), (0, 3), (0, 5), (0, 6), (1, 1), (1, 3), (1, 4)]
    rng = np.random.default_rng(1023)
    def votes(every_output):
        tree_ids, node_ids, ids, values = [], [], [], []
        for k, (t, nid) in enumerate(leaves):
            for out in range(3):
                if every_output or (k + out) % 3 != 2:
                    tree_ids.append(t)
                    node_ids.append(nid)
                    ids.append(out)
                    values.append(float(np.round(rng.standard_normal(), 3)))
        return tree_ids, node_ids, ids, values
    tree_ids, node_ids, ids, values = votes(every_output=True)
    regressor = helper.make_node(
        "TreeEnsembleRegressor", ["x"], ["y"], name="regressor", domain="ai.onnx.ml",
        n_targets=3, aggregate_function="AVERAGE", base_values=[0.5, -1.0, 0.25],
        target_treeids=tree_ids, target_nodeids=node_ids, target_ids=ids,
        target_weights=values, **tree)
    # The classifier's leaves vote for some classes only.
    tree_ids, node_ids, ids, values = votes(every_output=False)
    classifier = helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["label", "probabilities"], name="classifier",
        domain="ai.onnx.ml", classlabels_int64s=[3, 5, 7], post_transform="LOGISTIC",
        base_values=[0.1, -0.2, 0.0], class_treeids=tree_ids, class_nodeids=node_ids,
        class_ids=ids, class_weights=values, **tree)
    g = helper.make_graph(
        [regressor, classifier], "tree_ensembles", [vi("x", [8, 3])],
        [vi("y", [8, 3]), vi("label", [8], TensorProto.INT64), vi("probabilities", [8, 3])])
    model = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
        ir_version=IR_FOR_OPSET[17], producer_name="kiln-make_test_models",
        producer_version="1")
    x = np.round(rng.standard_normal((8, 3)), 1).astype(np.float32)
    x[1, 0] = np.nan  # tree 0's root sends it to the true child
    x[2, 2] = 1.0     # EQ and NEQ exactly
    x[3, 2] = np.nan  # EQ fails, NEQ holds
    x[4, 1] = 0.5     # GTE at its threshold
    x[5, 0] = -0.5    # GT at its threshold
    return model, [{"x": x}]


def build_tree_ensemble_v5():
    # ai.onnx.ml TreeEnsemble (opset 5) built by hand: interior nodes and
    # leaves in lists of their own, every branch mode but MEMBER, a missing
    # value (NaN) that one node sends to its true child, float64 X summed
    # over three trees into two targets and the same trees over float32 X
    # averaged. onnxruntime 1.20 has no kernel for it: the references are
    # onnx's own evaluator's.
    #   tree 0: node 0 x0 < 0 (NaN: true) -> node 1 | leaf 0;
    #           node 1 x1 >= 0.5 -> leaf 1 | node 2; node 2 x2 != 1 -> leaf 2 | leaf 3
    #   tree 1: node 3 x2 == 1 -> leaf 4 | node 4; node 4 x0 > -0.5 -> leaf 5 | leaf 6
    #   tree 2: node 5 x1 <= 0.25 -> leaf 7 | leaf 8
    rng = np.random.default_rng(1031)
    def ensemble(name, x, y, aggregate, splits_type):
        return helper.make_node(
            "TreeEnsemble", [x], [y], name=name, domain="ai.onnx.ml",
            aggregate_function=aggregate, post_transform=0, n_targets=2,
            tree_roots=[0, 3, 5],
            nodes_featureids=[0, 1, 2, 2, 0, 1],
            nodes_modes=numpy_helper.from_array(np.array([1, 2, 5, 4, 3, 0], np.uint8)),
            nodes_splits=numpy_helper.from_array(
                np.array([0.0, 0.5, 1.0, 1.0, -0.5, 0.25], splits_type)),
            nodes_truenodeids=[1, 1, 2, 4, 5, 7], nodes_trueleafs=[0, 1, 1, 1, 1, 1],
            nodes_falsenodeids=[0, 2, 3, 4, 6, 8], nodes_falseleafs=[1, 0, 1, 0, 1, 1],
            nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 0],
            leaf_targetids=[0, 1, 0, 1, 1, 0, 1, 0, 1],
            leaf_weights=numpy_helper.from_array(leaf_weights.astype(splits_type)))
    leaf_weights = np.round(rng.standard_normal(9), 3)
    g = helper.make_graph(
        [ensemble("sum64", "x", "y64", 1, np.float64),
         helper.make_node("Cast", ["x"], ["x32"], name="to_f32", to=TensorProto.FLOAT),
         ensemble("average32", "x32", "y32", 0, np.float32)],
        "tree_ensemble_v5", [vi("x", [8, 3], TensorProto.DOUBLE)],
        [vi("y64", [8, 2], TensorProto.DOUBLE), vi("y32", [8, 2])])
    model = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)],
        ir_version=IR_FOR_OPSET[21], producer_name="kiln-make_test_models",
        producer_version="1")
    x = np.round(rng.standard_normal((8, 3)), 1)
    x[1, 0] = np.nan  # node 0 sends it to the true child
    x[2, 2] = 1.0     # EQ and NEQ exactly
    x[3, 2] = np.nan  # EQ fails, NEQ holds
    x[4, 1] = 0.5     # GTE at its threshold
    x[5, 0] = -0.5    # GT at its threshold
    x[6, 1] = 0.25    # LEQ at its threshold
    return model, [{"x": x}]


def build_binary_classifiers():
    # Two classes scored by one value s, onnxruntime's special case: trees
    # whose weights are all probabilities (decision at 0.5), trees with a
    # negative weight (decision at 0) under LOGISTIC, and a LinearClassifier
    # with one row of coefficients. onnxruntime 1.32 applies LOGISTIC to the
    # first and the last as well, where 1.20 did not: those transforms are
    # checked by test/Import/classic-ml.test instead.
    tree = dict(
        nodes_treeids=[0, 0, 0, 1, 1, 1],
        nodes_nodeids=[0, 1, 2, 0, 1, 2],
        nodes_featureids=[0, 0, 0, 1, 0, 0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"],
        nodes_values=[0.0, 0, 0, 0.5, 0, 0],
        nodes_truenodeids=[1, 0, 0, 1, 0, 0],
        nodes_falsenodeids=[2, 0, 0, 2, 0, 0],
        class_treeids=[0, 0, 1, 1], class_nodeids=[1, 2, 1, 2], class_ids=[0, 0, 0, 0])
    probabilities = helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["label_p", "scores_p"], name="probabilities",
        domain="ai.onnx.ml", classlabels_int64s=[4, 6],
        class_weights=[0.1, 0.3, 0.2, 0.35], **tree)
    margins = helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["label_m", "scores_m"], name="margins",
        domain="ai.onnx.ml", classlabels_int64s=[0, 1], base_values=[0.25],
        post_transform="LOGISTIC", class_weights=[-0.5, 0.4, 0.3, -0.1], **tree)
    linear = [helper.make_node(
        "LinearClassifier", ["x"], ["label_l" + t, "scores_l" + t], name="linear_" + t,
        domain="ai.onnx.ml", classlabels_ints=[2, 8], coefficients=[0.5, -1.0],
        intercepts=[0.1], post_transform=t) for t in ("NONE", "SOFTMAX")]
    outputs = []
    for suffix in ("_p", "_m", "_lNONE", "_lSOFTMAX"):
        outputs += [vi("label" + suffix, [8], TensorProto.INT64), vi("scores" + suffix, [8, 2])]
    g = helper.make_graph([probabilities, margins] + linear, "binary_classifiers",
                          [vi("x", [8, 2])], outputs)
    model = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
        ir_version=IR_FOR_OPSET[17], producer_name="kiln-make_test_models",
        producer_version="1")
    rng = np.random.default_rng(1024)
    x = np.round(rng.standard_normal((8, 2)), 1).astype(np.float32)
    x[0] = [0.0, 0.5]  # both trees at their thresholds
    return model, [{"x": x}]


def build_box_distribution():
    # A YOLOv8 detection head's box decoding (distribution focal loss):
    # 64 channels per anchor as 4 sides x 16 bins, a Softmax over the bins
    # after a Transpose (axis 1 of [1, 16, 4, anchors], not the innermost),
    # then the expected bin as a 1x1 convolution with weights 0..15. The
    # reduced axis is strided: the kernel must walk it in a loop per anchor,
    # threads along the anchors.
    rng = np.random.default_rng(1031)
    anchors = 336
    inits = [
        init("shape4", np.array([1, 4, 16, anchors], np.int64)),
        init("bins", np.arange(16, dtype=np.float32).reshape(1, 16, 1, 1)),
        init("shape3", np.array([1, 4, anchors], np.int64)),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "shape4"], ["sides"], name="dfl_reshape"),
        helper.make_node("Transpose", ["sides"], ["bins_first"], name="dfl_transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["bins_first"], ["probs"], name="dfl_softmax", axis=1),
        helper.make_node("Conv", ["probs", "bins"], ["expected"], name="dfl_conv"),
        helper.make_node("Reshape", ["expected", "shape3"], ["boxes"], name="dfl_out"),
    ]
    g = helper.make_graph(nodes, "box_distribution", [vi("x", [1, 64, anchors])],
                          [vi("boxes", [1, 4, anchors])], inits)
    model = make_model(g, 17, "box_distribution")
    x = rng.standard_normal((1, 64, anchors), dtype=np.float32) * 3
    return model, [{"x": x}]


def build_strided_depthwise_bn():
    # An OCR backbone's block (PaddleOCR's MobileNetV3 and PP-LCNet): a
    # depthwise convolution with strides (2, 1) (halve the height, keep the
    # width of a text line) whose BatchNormalization is not folded into it
    # (its own node, as paddle2onnx exports it), then ReLU, between 1x1
    # convolutions that keep the chain channels-last, and a sigmoid.
    rng = np.random.default_rng(1033)
    c = 24
    inits = [
        init("expand.weight", weights(rng, (c, 8, 1, 1), 8)),
        init("dw.weight", weights(rng, (c, 1, 3, 3), 9)),
        init("bn.scale", (rng.random(c) + 0.5).astype(np.float32)),
        init("bn.bias", bias(rng, c)),
        init("bn.mean", bias(rng, c)),
        init("bn.var", (rng.random(c) + 0.5).astype(np.float32)),
        init("project.weight", weights(rng, (16, c, 1, 1), c)),
        init("project2.weight", weights(rng, (16, 16, 3, 3), 144)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "expand.weight"], ["e"], name="expand"),
        helper.make_node("Relu", ["e"], ["e_relu"], name="expand_relu"),
        helper.make_node("Conv", ["e_relu", "dw.weight"], ["d"], name="dw", group=c,
                         kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["d", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                         ["d_bn"], name="dw_bn"),
        helper.make_node("Relu", ["d_bn"], ["d_relu"], name="dw_relu"),
        helper.make_node("Conv", ["d_relu", "project.weight"], ["p"], name="project"),
        helper.make_node("Conv", ["p", "project2.weight"], ["logits"], name="project2", pads=[1, 1, 1, 1]),
        # A text detector's probability map (PaddleOCR's DB head ends so).
        helper.make_node("Sigmoid", ["logits"], ["y"], name="probability"),
    ]
    g = helper.make_graph(nodes, "strided_depthwise_bn", [vi("x", [1, 8, 16, 40])],
                          [vi("y", [1, 16, 8, 40])], inits)
    model = make_model(g, 13, "strided_depthwise_bn")
    x = rng.standard_normal((1, 8, 16, 40), dtype=np.float32)
    return model, [{"x": x}]


def build_onehot_dense():
    # A jax2tf byte classifier's first layer: bytes one-hot encoded (OneHot
    # over 256 values) and a Dense layer written as an Einsum, then ReLU.
    rng = np.random.default_rng(1037)
    inits = [
        init("depth", np.array(256, np.int32)),
        init("values", np.array([0.0, 1.0], np.float32)),
        init("dense.kernel", weights(rng, (256, 32), 256)),
        init("dense.bias", bias(rng, 32)),
    ]
    nodes = [
        helper.make_node("OneHot", ["bytes", "depth", "values"], ["onehot"], name="onehot", axis=-1),
        helper.make_node("Einsum", ["onehot", "dense.kernel"], ["dense"], name="dense_einsum",
                         equation="bsc,cd->bsd"),
        helper.make_node("Add", ["dense", "dense.bias"], ["dense_b"], name="dense_bias"),
        helper.make_node("Relu", ["dense_b"], ["y"], name="dense_relu"),
    ]
    g = helper.make_graph(nodes, "onehot_dense", [vi("bytes", [2, 96], TensorProto.INT32)],
                          [vi("y", [2, 96, 32])], inits)
    model = make_model(g, 13, "onehot_dense")
    x = rng.integers(0, 256, (2, 96)).astype(np.int32)
    return model, [{"bytes": x}]


def build_clip_computed_bounds():
    # A mel-spectrogram front end's dynamic range clamp: log-mel values
    # clipped below at (their maximum - 8), a bound the graph computes, so
    # the kernel reads it at run time; the upper bound a model input.
    rng = np.random.default_rng(1039)
    inits = [init("range", np.array(8.0, np.float32))]
    nodes = [
        helper.make_node("ReduceMax", ["mel"], ["peak"], name="peak", keepdims=0),
        helper.make_node("Sub", ["peak", "range"], ["floor"], name="floor"),
        helper.make_node("Clip", ["mel", "floor", "ceiling"], ["y"], name="clamp"),
    ]
    g = helper.make_graph(nodes, "clip_computed_bounds",
                          [vi("mel", [1, 97, 32]), vi("ceiling", [])], [vi("y", [1, 97, 32])], inits)
    model = make_model(g, 13, "clip_computed_bounds")
    mel = rng.standard_normal((1, 97, 32), dtype=np.float32) * 4
    return model, [{"mel": mel, "ceiling": np.array(5.0, np.float32)},
                   {"mel": mel * 0.5, "ceiling": np.array(1.5, np.float32)}]


def build_pad_computed_value():
    # Pad whose constant_value the graph computes (each image's minimum) and
    # a model input fills another pad: the kernels read both at run time;
    # negative pads crop first.
    rng = np.random.default_rng(1041)
    inits = [init("pads", np.array([0, 0, 2, -1, 0, 0, 1, 3], np.int64)),
             init("pads2", np.array([0, 1, 0, 0, 1, 0], np.int64))]
    nodes = [
        helper.make_node("ReduceMin", ["x"], ["low"], name="low", keepdims=0),
        helper.make_node("Pad", ["x", "pads", "low"], ["y"], name="pad_low"),
        helper.make_node("Pad", ["s", "pads2", "fill"], ["z"], name="pad_fill"),
    ]
    g = helper.make_graph(nodes, "pad_computed_value",
                          [vi("x", [1, 2, 5, 6]), vi("s", [2, 3, 4]), vi("fill", [])],
                          [vi("y", [1, 2, 8, 8]), vi("z", [2, 5, 4])], inits)
    model = make_model(g, 13, "pad_computed_value")
    x = rng.standard_normal((1, 2, 5, 6), dtype=np.float32)
    s2 = rng.standard_normal((2, 3, 4), dtype=np.float32)
    return model, [{"x": x, "s": s2, "fill": np.array(7.5, np.float32)},
                   {"x": x * 3, "s": -s2, "fill": np.array(-1.25, np.float32)}]


def build_conv_split_k():
    # Small, deep convolutions (few outputs, K = channels x window >= 512):
    # GPU targets split their input channels into parts summed by a second
    # kernel (kiln-split-conv-k); the CPU computes them whole. Either must
    # match. A 3x3 one on a 7x7 map (64 channels, K = 576: four groups of a
    # grouped convolution over rearranged weights) with bias and ReLU, and a
    # strided 1x1 one (512 channels: subsampled to 4x4, then four einsum
    # parts over the 16 pixels) with bias and a sigmoid.
    rng = np.random.default_rng(1017)
    inits = [
        init("conv3x3.weight", weights(rng, (32, 64, 3, 3), 64 * 9)),
        init("conv3x3.bias", bias(rng, 32)),
        init("conv1x1.weight", weights(rng, (32, 512, 1, 1), 512)),
        init("conv1x1.bias", bias(rng, 32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv3x3.weight", "conv3x3.bias"], ["c3"],
                         name="conv3x3", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["y"], name="relu"),
        helper.make_node("Conv", ["x2", "conv1x1.weight", "conv1x1.bias"], ["c1"],
                         name="conv1x1", kernel_shape=[1, 1], strides=[2, 2]),
        helper.make_node("Sigmoid", ["c1"], ["y2"], name="sigmoid"),
    ]
    g = helper.make_graph(nodes, "conv_split_k",
                          [vi("x", [1, 64, 7, 7]), vi("x2", [1, 512, 8, 8])],
                          [vi("y", [1, 32, 7, 7]), vi("y2", [1, 32, 4, 4])], inits)
    model = make_model(g, 13, "conv_split_k")
    x = rng.standard_normal((1, 64, 7, 7), dtype=np.float32)
    x2 = rng.standard_normal((1, 512, 8, 8), dtype=np.float32)
    return model, [{"x": x, "x2": x2}]

def cnn_graph(rng, name, in_shape, out_batch, hw, use_reshape):
    """Shared structure of small_cnn / cnn_symbolic.

    image -> conv1(8,3x3,p1) -> relu1 -> pool1(max 2x2 s2)
          -> conv2(16,3x3,p1) -> relu2 -> pool2(avg 2x2 s2)
          -> transpose(HW swap) ; concat([pool2, transpose], axis=1)  (32 ch)
          -> conv3(16,1x1) -> mul(0.5 scalar) -> sigmoid -> gap
          -> reshape([1,-1]) or flatten -> fc(16->10)
    """
    c_in = in_shape[1]
    inits = [
        init("conv1.weight", weights(rng, (8, c_in, 3, 3), c_in * 9)),
        init("conv1.bias", bias(rng, 8)),
        init("conv2.weight", weights(rng, (16, 8, 3, 3), 8 * 9)),
        init("conv2.bias", bias(rng, 16)),
        init("conv3.weight", weights(rng, (16, 32, 1, 1), 32)),
        init("conv3.bias", bias(rng, 16)),
        init("scale", np.array(0.5, dtype=np.float32)),  # rank-0 scalar
        init("fc.weight", weights(rng, (10, 16), 16)),
        init("fc.bias", bias(rng, 10)),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("MaxPool", ["relu1_out"], ["pool1_out"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1_out", "conv2.weight", "conv2.bias"], ["conv2_out"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["conv2_out"], ["relu2_out"], name="relu2"),
        helper.make_node("AveragePool", ["relu2_out"], ["pool2_out"], name="pool2",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Transpose", ["pool2_out"], ["transpose_out"], name="transpose",
                         perm=[0, 1, 3, 2]),
        helper.make_node("Concat", ["pool2_out", "transpose_out"], ["concat_out"], name="concat", axis=1),
        helper.make_node("Conv", ["concat_out", "conv3.weight", "conv3.bias"], ["conv3_out"], name="conv3",
                         kernel_shape=[1, 1]),
        helper.make_node("Mul", ["conv3_out", "scale"], ["mul_out"], name="mul_scale"),
        helper.make_node("Sigmoid", ["mul_out"], ["sigmoid_out"], name="sigmoid"),
        helper.make_node("GlobalAveragePool", ["sigmoid_out"], ["gap_out"], name="gap"),
    ]
    if use_reshape:
        inits.append(init("reshape.shape", np.array([1, -1], dtype=np.int64)))
        nodes.append(helper.make_node("Reshape", ["gap_out", "reshape.shape"], ["flat"], name="reshape"))
    else:
        nodes.append(helper.make_node("Flatten", ["gap_out"], ["flat"], name="flatten", axis=1))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1))
    assert hw % 4 == 0
    return helper.make_graph(nodes, name, [vi("image", in_shape)], [vi("logits", [out_batch, 10])], inits)


def build_small_cnn():
    rng = np.random.default_rng(1002)
    g = cnn_graph(rng, "small_cnn", [1, 3, 32, 32], 1, 32, use_reshape=True)
    model = make_model(g, 13, "small_cnn")
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    return model, [{"image": x}]


def build_cnn_symbolic():
    rng = np.random.default_rng(1003)
    # Reshape([1,-1]) would fold the batch away, so this variant uses Flatten.
    g = cnn_graph(rng, "cnn_symbolic", ["N", 3, 16, 16], "N", 16, use_reshape=False)
    model = make_model(g, 17, "cnn_symbolic")
    x2 = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    x3 = rng.standard_normal((3, 3, 16, 16)).astype(np.float32)
    return model, [{"image": x2}, {"image": x3}]


def build_if_folded():
    """An If whose condition (batch > 1) folds at compile time once the batch
    is known, as exporters emit for shape checks: set 0 (batch 1) takes the
    else branch, set 1 (batch 3) the then branch."""
    rng = np.random.default_rng(1005)
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")],
                               "then", [], [vi("t", ["N", 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")],
                               "else", [], [vi("e", ["N", 3])])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["b"], name="batch", axis=0),
        helper.make_node("Greater", ["b", "one"], ["cond"], name="is_batched"),
        helper.make_node("If", ["cond"], ["y"], name="branch",
                         then_branch=then_g, else_branch=else_g),
        helper.make_node("Mul", ["y", "two"], ["out"], name="scale"),
    ]
    inits = [init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
             init("two", np.array(2.0, np.float32))]
    g = helper.make_graph(nodes, "if_folded", [vi("x", ["N", 3])], [vi("out", ["N", 3])], inits)
    model = make_model(g, 13, "if_folded")
    return model, [{"x": rng.standard_normal((1, 3)).astype(np.float32)},
                   {"x": rng.standard_normal((3, 3)).astype(np.float32)}]


def build_if_runtime_cond():
    """An If whose condition is a graph input: both branches run and the
    output is selected. The then branch gathers at indices that are also an
    input; its index check holds only when it is taken, so set 2 (else
    branch, indices out of range) runs as in onnxruntime."""
    rng = np.random.default_rng(1011)
    then_g = helper.make_graph(
        [helper.make_node("Gather", ["x", "idx"], ["t"], name="then_gather", axis=1)],
        "then", [], [vi("t", [2, 2])])
    else_g = helper.make_graph(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["e"], name="else_slice")],
        "else", [], [vi("e", [2, 2])],
        [init("starts", np.array([1], np.int64)), init("ends", np.array([3], np.int64)),
         init("axes", np.array([1], np.int64))])
    nodes = [
        helper.make_node("If", ["cond"], ["y"], name="branch",
                         then_branch=then_g, else_branch=else_g),
        helper.make_node("Mul", ["y", "two"], ["out"], name="scale"),
    ]
    g = helper.make_graph(nodes, "if_runtime_cond",
                          [vi("x", [2, 3]), vi("idx", [2], TensorProto.INT64),
                           vi("cond", [], TensorProto.BOOL)],
                          [vi("out", [2, 2])], [init("two", np.array(2.0, np.float32))])
    model = make_model(g, 13, "if_runtime_cond")
    x = lambda: rng.standard_normal((2, 3)).astype(np.float32)
    return model, [
        {"x": x(), "idx": np.array([2, 0], np.int64), "cond": np.array(True)},
        {"x": x(), "idx": np.array([0, 1], np.int64), "cond": np.array(False)},
        {"x": x(), "idx": np.array([7, -9], np.int64), "cond": np.array(False)},
    ]


def build_grid_sample():
    """GridSample at positions read from the grid, some outside the input:
    a volumetric (5-D) linear sample with reflection padding and aligned
    corners, a 4-D cubic one with zeros padding and a nearest one with border
    padding (opset 20)."""
    rng = np.random.default_rng(1017)
    nodes = [
        helper.make_node("GridSample", ["v", "grid3"], ["y3"], name="volume",
                         mode="linear", padding_mode="reflection", align_corners=1),
        helper.make_node("GridSample", ["x", "grid2"], ["cubic"], name="cubic",
                         mode="cubic", padding_mode="zeros"),
        helper.make_node("GridSample", ["x", "grid2"], ["nearest"], name="nearest",
                         mode="nearest", padding_mode="border"),
    ]
    g = helper.make_graph(nodes, "grid_sample",
                          [vi("v", [2, 3, 4, 5, 3]), vi("grid3", [2, 3, 2, 4, 3]),
                           vi("x", [1, 2, 5, 6]), vi("grid2", [1, 4, 3, 2])],
                          [vi("y3", [2, 3, 3, 2, 4]), vi("cubic", [1, 2, 4, 3]),
                           vi("nearest", [1, 2, 4, 3])])
    model = make_model(g, 20, "grid_sample")
    feeds = lambda: {
        "v": rng.standard_normal((2, 3, 4, 5, 3)).astype(np.float32),
        "grid3": rng.uniform(-1.6, 1.6, (2, 3, 2, 4, 3)).astype(np.float32),
        "x": rng.standard_normal((1, 2, 5, 6)).astype(np.float32),
        "grid2": rng.uniform(-1.4, 1.4, (1, 4, 3, 2)).astype(np.float32),
    }
    return model, [feeds(), feeds()]


def build_loop_until():
    """A Loop that runs while the state's sum stays below 50 (at most 10
    iterations): the iteration count depends on the data (set 0 stops
    after several, set 1 after one, set 2 runs all 10)."""
    scalar = lambda name, v: numpy_helper.from_array(np.array(v), name=name)
    body = helper.make_graph(
        [helper.make_node("Mul", ["x_in", "growth"], ["grown"], name="body_mul"),
         helper.make_node("Add", ["grown", "one"], ["x_out"], name="body_add"),
         helper.make_node("Add", ["n_in", "step"], ["n_out"], name="body_count"),
         helper.make_node("ReduceSum", ["x_out"], ["total"], name="body_sum", keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"], name="body_less")],
        "body", [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL),
                 vi("x_in", [4]), vi("n_in", [], TensorProto.INT64)],
        [vi("cond_out", [], TensorProto.BOOL), vi("x_out", [4]),
         vi("n_out", [], TensorProto.INT64)],
        [scalar("growth", np.float32(1.5)), scalar("one", np.float32(1.0)),
         scalar("step", np.int64(1)), scalar("limit", np.float32(50.0))])
    nodes = [helper.make_node("Loop", ["trips", "go", "x", "zero"], ["y", "iterations"],
                              name="loop", body=body)]
    g = helper.make_graph(nodes, "loop_until", [vi("x", [4])],
                          [vi("y", [4]), vi("iterations", [], TensorProto.INT64)],
                          [scalar("trips", np.int64(10)), scalar("go", True),
                           scalar("zero", np.int64(0))])
    model = make_model(g, 13, "loop_until")
    return model, [{"x": np.array([0.1, 0.2, 0.3, 0.4], np.float32)},
                   {"x": np.array([20, 10, 5, 8], np.float32)},
                   {"x": np.array([-9, -8, -7, -6], np.float32)}]


def build_scan_running_state():
    """A Scan (an RNN-like running state) unrolled over its 6 steps: the
    state is tanh(state * w + x_t); x is scanned in reverse along axis 1,
    and the per-step outputs are stacked along axis 1 in reverse too."""
    rng = np.random.default_rng(1013)
    body = helper.make_graph(
        [helper.make_node("Mul", ["h", "w"], ["hw"], name="body_mul"),
         helper.make_node("Add", ["hw", "x_t"], ["pre"], name="body_add"),
         helper.make_node("Tanh", ["pre"], ["h_next"], name="body_tanh"),
         helper.make_node("Relu", ["h_next"], ["y_t"], name="body_relu")],
        "body", [vi("h", [4]), vi("x_t", [4])], [vi("h_next", [4]), vi("y_t", [4])],
        [init("w", rng.standard_normal(4).astype(np.float32))])
    nodes = [helper.make_node("Scan", ["h0", "x"], ["h_final", "ys"], name="scan",
                              body=body, num_scan_inputs=1,
                              scan_input_axes=[1], scan_input_directions=[1],
                              scan_output_axes=[1], scan_output_directions=[1])]
    g = helper.make_graph(nodes, "scan_running_state",
                          [vi("h0", [4]), vi("x", [4, 6])],
                          [vi("h_final", [4]), vi("ys", [4, 6])])
    model = make_model(g, 17, "scan_running_state")
    return model, [{"h0": rng.standard_normal(4).astype(np.float32),
                    "x": rng.standard_normal((4, 6)).astype(np.float32)}]


def build_lstm_sequence_lens():
    """A bidirectional LSTM over padded batches: sequence_lens, a graph
    input, says how many steps each batch element has; past them the state
    is kept and the outputs are zero (each direction's)."""
    rng = np.random.default_rng(1017)
    seq, batch, inp, hidden = 5, 3, 4, 6
    w = (rng.standard_normal((2, 4 * hidden, inp)) * 0.4).astype(np.float32)
    r = (rng.standard_normal((2, 4 * hidden, hidden)) * 0.4).astype(np.float32)
    b = (rng.standard_normal((2, 8 * hidden)) * 0.1).astype(np.float32)
    nodes = [helper.make_node("LSTM", ["x", "w", "r", "b", "lens"], ["y", "y_h", "y_c"],
                              name="lstm", direction="bidirectional", hidden_size=hidden)]
    g = helper.make_graph(nodes, "lstm_sequence_lens",
                          [vi("x", [seq, batch, inp]), vi("lens", [batch], TensorProto.INT32)],
                          [vi("y", [seq, 2, batch, hidden]), vi("y_h", [2, batch, hidden]),
                           vi("y_c", [2, batch, hidden])],
                          [init("w", w), init("r", r), init("b", b)])
    model = make_model(g, 13, "lstm_sequence_lens")
    x = lambda: rng.standard_normal((seq, batch, inp)).astype(np.float32)
    return model, [{"x": x(), "lens": np.array([5, 3, 1], np.int32)},
                   {"x": x(), "lens": np.array([2, 5, 4], np.int32)}]


def build_vit_block():
    """A small ViT encoder block: 4x4 patches of a 40x52 image (130 tokens),
    a class token concatenated in front and a position embedding added
    (GPU targets: the concat reads its element inside the add's kernel,
    concat-by-element, instead of one thread copying it), LayerNorm,
    single-head attention and an MLP with residual adds. 131 tokens (a
    prime) make matmul blocks no size divides or pads: the GPU targets
    shift each kernel's last block back (kiln-tile-and-distribute)."""
    rng = np.random.default_rng(1014)
    e, tokens = 32, 131
    inits = [
        init("patch.weight", weights(rng, (e, 3, 4, 4), 48)),
        init("patch.bias", bias(rng, e)),
        init("flat_shape", np.array([1, e, tokens - 1], dtype=np.int64)),
        init("cls", (rng.standard_normal((1, 1, e)) * 0.5).astype(np.float32)),
        init("pos", (rng.standard_normal((1, tokens, e)) * 0.5).astype(np.float32)),
        init("ln.scale", (1 + rng.standard_normal(e) * 0.1).astype(np.float32)),
        init("ln.bias", bias(rng, e)),
        init("q.weight", weights(rng, (e, e), e)),
        init("k.weight", weights(rng, (e, e), e)),
        init("v.weight", weights(rng, (e, e), e)),
        init("scale", np.array(1.0 / np.sqrt(e), dtype=np.float32)),
        init("out.weight", weights(rng, (e, e), e)),
        init("out.bias", bias(rng, e)),
        init("fc1.weight", weights(rng, (e, 2 * e), e)),
        init("fc1.bias", bias(rng, 2 * e)),
        init("fc2.weight", weights(rng, (2 * e, e), 2 * e)),
        init("fc2.bias", bias(rng, e)),
    ]
    mk = helper.make_node
    nodes = [
        mk("Conv", ["img", "patch.weight", "patch.bias"], ["patches"], name="patch",
           kernel_shape=[4, 4], strides=[4, 4]),
        mk("Reshape", ["patches", "flat_shape"], ["flat"], name="flatten"),
        mk("Transpose", ["flat"], ["seq"], name="to_tokens", perm=[0, 2, 1]),
        mk("Concat", ["cls", "seq"], ["with_cls"], name="class_token", axis=1),
        mk("Add", ["with_cls", "pos"], ["x0"], name="position"),
        mk("LayerNormalization", ["x0", "ln.scale", "ln.bias"], ["h"], name="ln", axis=-1),
        mk("MatMul", ["h", "q.weight"], ["q"], name="q"),
        mk("MatMul", ["h", "k.weight"], ["k"], name="k"),
        mk("MatMul", ["h", "v.weight"], ["v"], name="v"),
        mk("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        mk("MatMul", ["q", "kt"], ["scores_raw"], name="scores"),
        mk("Mul", ["scores_raw", "scale"], ["scores_scaled"], name="scale_scores"),
        mk("Softmax", ["scores_scaled"], ["attn"], name="softmax", axis=-1),
        mk("MatMul", ["attn", "v"], ["ctx"], name="context"),
        mk("MatMul", ["ctx", "out.weight"], ["o_mm"], name="out"),
        mk("Add", ["o_mm", "out.bias"], ["o"], name="out_bias"),
        mk("Add", ["x0", "o"], ["x1"], name="residual1"),
        mk("MatMul", ["x1", "fc1.weight"], ["f1_mm"], name="fc1"),
        mk("Add", ["f1_mm", "fc1.bias"], ["f1"], name="fc1_bias"),
        mk("Relu", ["f1"], ["f1r"], name="relu"),
        mk("MatMul", ["f1r", "fc2.weight"], ["f2_mm"], name="fc2"),
        mk("Add", ["f2_mm", "fc2.bias"], ["f2"], name="fc2_bias"),
        mk("Add", ["x1", "f2"], ["y"], name="residual2"),
    ]
    g = helper.make_graph(nodes, "vit_block", [vi("img", [1, 3, 40, 52])],
                          [vi("y", [1, tokens, e])], inits)
    model = make_model(g, 17, "vit_block")
    return model, [{"img": rng.standard_normal((1, 3, 40, 52)).astype(np.float32)}]


def build_grouped_f16():
    """A float16 model with a grouped convolution (4 groups of 2 channels)
    and ReLU, as ResNeXt's: the GPU targets widen the input and weights to
    float32 before splitting the group dim out of them, and must expand the
    widening with them (kiln-fold-expand-shapes-into-consumers); behind the
    reshape it ran before the tiled loop and the kernel was one thread."""
    rng = np.random.default_rng(1015)
    H = TensorProto.FLOAT16
    w = (rng.standard_normal((8, 2, 3, 3)) * 0.3).astype(np.float16)
    b = (rng.standard_normal((8,)) * 0.1).astype(np.float16)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="grouped", group=4,
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "grouped_f16", [vi("x", [1, 8, 10, 10], H)],
                          [vi("y", [1, 8, 10, 10], H)], [init("w", w), init("b", b)])
    model = make_model(g, 13, "grouped_f16")
    return model, [{"x": rng.standard_normal((1, 8, 10, 10)).astype(np.float16)}]


def build_scatter_splat_f16():
    """A float16 ScatterND whose updates are one value (Swin's shifted-window
    masks): the GPU targets fold the splat into the scatter's body, which
    keeps the updates' shape only as a dead output; made before the tiled
    loop, that output's buffer made the kernel one thread."""
    H = TensorProto.FLOAT16
    indices = np.array([[[0, 1], [2, 3]], [[5, 5], [7, 0]]], dtype=np.int64)
    nodes = [
        helper.make_node("ScatterND", ["x", "indices", "updates"], ["s"], name="scatter"),
        helper.make_node("Relu", ["s"], ["y"], name="relu"),
    ]
    g = helper.make_graph(
        nodes, "scatter_splat_f16", [vi("x", [64, 64], H)], [vi("y", [64, 64], H)],
        [init("indices", indices),
         init("updates", np.full((2, 2), 4.0, dtype=np.float16))])
    model = make_model(g, 13, "scatter_splat_f16")
    rng = np.random.default_rng(1016)
    return model, [{"x": rng.standard_normal((64, 64)).astype(np.float16)}]


def build_ort_fusions():
    """The com.microsoft ops that onnxruntime's graph optimizer writes into
    a model it saves (a transformer layer's residual LayerNorm, its
    bias + GELU, its transposed and scaled MatMuls)."""
    rng = np.random.default_rng(1031)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                         ["normed", "", "", "residual"], name="skip_norm", domain=ms,
                         epsilon=1e-5),
        helper.make_node("FusedMatMul", ["normed", "w"], ["projected"], name="project",
                         domain=ms, transB=1, alpha=0.5),
        helper.make_node("FastGelu", ["projected", "gelu_bias"], ["activated"], name="gelu",
                         domain=ms),
        helper.make_node("FusedMatMul", ["activated", "activated"], ["scores"], name="scores",
                         domain=ms, transB=1),
    ]
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    g = helper.make_graph(
        nodes, "ort_fusions", [vi("x", [2, 4, 8]), vi("skip", [2, 4, 8])],
        [vi("activated", [2, 4, 6]), vi("scores", [2, 4, 4]), vi("residual", [2, 4, 8])],
        [init("gamma", f(8)), init("beta", f(8)), init("bias", f(8)), init("w", f(6, 8)),
         init("gelu_bias", f(6))])
    model = make_model(g, 17, "ort_fusions")
    model.opset_import.append(helper.make_opsetid(ms, 1))
    return model, [{"x": f(2, 4, 8), "skip": f(2, 4, 8)}]


def build_position_ids():
    """RoBERTa's position ids: a running count (int32 CumSum) of the tokens
    that are not padding, offset by the padding id, indexing a position
    table; and an int64 CumSum, reversed and exclusive, along the batch."""
    pad = 1
    table = np.random.default_rng(1017).standard_normal((16, 8)).astype(np.float32)
    nodes = [
        helper.make_node("Equal", ["ids", "pad"], ["is_pad"], name="is_pad"),
        helper.make_node("Not", ["is_pad"], ["is_token"], name="is_token"),
        helper.make_node("Cast", ["is_token"], ["mask"], name="mask", to=I32),
        helper.make_node("CumSum", ["mask", "axis1"], ["count"], name="count"),
        helper.make_node("Mul", ["count", "mask"], ["count_tokens"], name="count_tokens"),
        helper.make_node("Cast", ["count_tokens"], ["count64"], name="count64", to=I64),
        helper.make_node("Add", ["count64", "pad"], ["positions"], name="positions"),
        helper.make_node("Gather", ["table", "positions"], ["embedded"], name="embedded"),
        helper.make_node("CumSum", ["ids", "axis0"], ["ids_after"], name="ids_after",
                         reverse=1, exclusive=1),
    ]
    g = helper.make_graph(
        nodes, "position_ids", [vi("ids", [2, 12], I64)],
        [vi("embedded", [2, 12, 8]), vi("ids_after", [2, 12], I64)],
        [init("pad", np.array(pad, dtype=np.int64)),
         init("axis1", np.array(1, dtype=np.int64)),
         init("axis0", np.array(0, dtype=np.int64)),
         init("table", table)])
    model = make_model(g, 13, "position_ids")
    ids = np.random.default_rng(1018).integers(0, 40, (2, 12)).astype(np.int64)
    ids[0, 9:] = pad
    ids[1, 4] = pad
    return model, [{"ids": ids}]


def build_patch_embedding():
    """ViT's patch embedding: 16x16 patches of a 128x96 image (48 tokens) by a
    convolution of stride 16, flattened and transposed into tokens. GPU
    targets compute it as an einsum over the image reshaped into patches
    (K = the patch width, 16, instead of 3 input channels: tensor cores)
    that writes the tokens directly (kiln-patchify-convs-as-einsums)."""
    rng = np.random.default_rng(1019)
    e = 64
    inits = [
        init("patch.weight", weights(rng, (e, 3, 16, 16), 3 * 256)),
        # Biased away from zero: float32 summation order (768 products per
        # output) would fail rtol 1e-3 on outputs within 3e-3 of zero.
        init("patch.bias", bias(rng, e) + np.float32(6.0)),
        init("flat_shape", np.array([1, e, 48], dtype=np.int64)),
    ]
    mk = helper.make_node
    nodes = [
        mk("Conv", ["img", "patch.weight", "patch.bias"], ["patches"], name="patch",
           kernel_shape=[16, 16], strides=[16, 16]),
        mk("Reshape", ["patches", "flat_shape"], ["flat"], name="flatten"),
        mk("Transpose", ["flat"], ["tokens"], name="to_tokens", perm=[0, 2, 1]),
    ]
    g = helper.make_graph(nodes, "patch_embedding", [vi("img", [1, 3, 128, 96])],
                          [vi("tokens", [1, 48, e])], inits)
    model = make_model(g, 17, "patch_embedding")
    return model, [{"img": rng.standard_normal((1, 3, 128, 96)).astype(np.float32)}]


def build_strided_stems():
    """First convolutions over an image's 3 channels with overlapping
    windows: ResNet's 7x7 stride 2 (pad 3), MobileNet's 3x3 stride 2 (pad
    1), AlexNet's 11x11 stride 4 (pad 2) and Inception's 3x3 stride 2 with
    no padding on an odd 37x37 image. GPU targets with matrix instructions
    compute them as stride-1 convolutions over 2x2 (4x4) blocks stacked as
    12 (48) channels (kiln-space-to-depth-strided-convs)."""
    rng = np.random.default_rng(1020)
    f = 32
    convs = [  # name, kernel, stride, pads, input
        ("stem7x7", 7, 2, 3, "img"),
        ("stem3x3", 3, 2, 1, "img"),
        ("stem11x11", 11, 4, 2, "img"),
        ("stem3x3_odd", 3, 2, 0, "odd"),
    ]
    inits, nodes, outputs = [], [], []
    shapes = {"img": 40, "odd": 37}
    for name, k, s, p, src in convs:
        inits.append(init(name + ".weight", weights(rng, (f, 3, k, k), 3 * k * k)))
        # Biased away from zero (float32 summation order, rtol 1e-3).
        inits.append(init(name + ".bias", bias(rng, f) + np.float32(4.0)))
        nodes.append(helper.make_node(
            "Conv", [src, name + ".weight", name + ".bias"], [name], name=name,
            kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p]))
        size = (shapes[src] + 2 * p - k) // s + 1
        outputs.append(vi(name, [1, f, size, size]))
    g = helper.make_graph(nodes, "strided_stems",
                          [vi("img", [1, 3, 40, 40]), vi("odd", [1, 3, 37, 37])],
                          outputs, inits)
    model = make_model(g, 17, "strided_stems")
    return model, [{
        "img": rng.standard_normal((1, 3, 40, 40)).astype(np.float32),
        "odd": rng.standard_normal((1, 3, 37, 37)).astype(np.float32),
    }]


def build_f16_mix():
    """A float16 model (conv, pooling, matmul, softmax, a mean, math):
    Kiln computes each op in float32 and rounds to float16 between ops."""
    rng = np.random.default_rng(1006)
    H = TensorProto.FLOAT16
    w = (rng.standard_normal((8, 16)) * 0.2).astype(np.float16)
    b = (rng.standard_normal((16,)) * 0.1).astype(np.float16)
    cw = (rng.standard_normal((4, 2, 3, 3)) * 0.3).astype(np.float16)
    nodes = [
        helper.make_node("Conv", ["img", "cw"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["pooled"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
        helper.make_node("Softmax", ["a"], ["probs"], name="softmax", axis=-1),
        helper.make_node("Tanh", ["a"], ["t"], name="tanh"),
        helper.make_node("ReduceMean", ["a"], ["mean"], name="mean", axes=[-1]),
    ]
    g = helper.make_graph(
        nodes, "f16_mix", [vi("x", [4, 8], H), vi("img", [1, 2, 6, 6], H)],
        [vi("probs", [4, 16], H), vi("t", [4, 16], H), vi("mean", [4, 1], H),
         vi("pooled", [1, 4, 3, 3], H)],
        [init("w", w), init("b", b), init("cw", cw)])
    model = make_model(g, 13, "f16_mix")
    return model, [{"x": rng.standard_normal((4, 8)).astype(np.float16),
                    "img": rng.standard_normal((1, 2, 6, 6)).astype(np.float16)}]


def draw_seven():
    """A deterministic 28x28 hand-drawn-looking '7', values in [0,1], MNIST-like
    (white digit on black, roughly normalized)."""
    img = np.zeros((28, 28), dtype=np.float32)
    # top bar, rows 6..8, cols 7..21
    img[6:9, 7:22] = 1.0
    # diagonal stroke from (8,21) down-left to (23,11), 3 px thick
    for r in range(8, 24):
        c = int(round(21 - (r - 8) * (10.0 / 15.0)))
        img[r, max(c - 1, 0):c + 2] = 1.0
    # soften edges a little (3x3 box blur mixed with the original)
    pad = np.pad(img, 1)
    blur = sum(pad[i:i + 28, j:j + 28] for i in range(3) for j in range(3)) / 9.0
    img = np.clip(0.6 * img + 0.4 * blur, 0.0, 1.0).astype(np.float32)
    return img.reshape(1, 1, 28, 28)


def build_tiny_cnn():
    rng = np.random.default_rng(1004)
    inits = [
        init("conv1.weight", weights(rng, (4, 1, 3, 3), 9)),
        init("conv1.bias", bias(rng, 4)),
        init("conv2.weight", weights(rng, (8, 4, 3, 3), 36)),
        init("conv2.bias", bias(rng, 8)),
        init("fc1.weight", weights(rng, (32, 392), 392)),
        init("fc1.bias", bias(rng, 32)),
        init("fc2.weight", weights(rng, (10, 32), 32)),
        init("fc2.bias", bias(rng, 10)),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("MaxPool", ["relu1_out"], ["pool1_out"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1_out", "conv2.weight", "conv2.bias"], ["conv2_out"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2_out"], ["relu2_out"], name="relu2"),
        helper.make_node("MaxPool", ["relu2_out"], ["pool2_out"], name="pool2",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool2_out"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc1.weight", "fc1.bias"], ["fc1_out"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1_out"], ["relu3_out"], name="relu3"),
        helper.make_node("Gemm", ["relu3_out", "fc2.weight", "fc2.bias"], ["fc2_out"], name="fc2", transB=1),
        helper.make_node("Softmax", ["fc2_out"], ["probabilities"], name="softmax", axis=1),
    ]
    g = helper.make_graph(nodes, "tiny_cnn", [vi("input", [1, 1, 28, 28])],
                          [vi("probabilities", [1, 10])], inits)
    model = make_model(g, 13, "tiny_cnn")
    return model, [{"input": draw_seven()}]


# --------------------------------------------------------------------------- B. importer models


def imp(name, nodes, inputs, outputs, inits=(), opset=13, validate=True, ort_check=True):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = make_model(g, opset, name)
    if validate:
        check(model)
    if ort_check and ort is not None:
        # Sanity: onnxruntime agrees with the declared output shapes.
        rng = np.random.default_rng(7)
        feeds = {}
        for v in model.graph.input:
            dims = [d.dim_value if d.HasField("dim_value") else 3 for d in v.type.tensor_type.shape.dim]
            np_t = helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)
            if np.issubdtype(np_t, np.integer):
                feeds[v.name] = rng.integers(-10, 10, size=dims).astype(np_t)
            else:
                feeds[v.name] = rng.standard_normal(dims).astype(np_t)
        _, outs = run_ort(model, feeds)
        for v, o in zip(model.graph.output, outs):
            want = [d.dim_value if d.HasField("dim_value") else 3 for d in v.type.tensor_type.shape.dim]
            assert list(o.shape) == want, (name, v.name, o.shape, want)
    save_model(model, os.path.join(IMPORT_DIR, name + ".onnx"), io_desc(model))
    return model


def short_initializer(name, dims, raw):
    """A float initializer whose raw data is shorter than its dims claim
    (onnx.helper refuses to make one)."""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = F32
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def n(op, ins, outs, name, **attrs):
    return helper.make_node(op, ins, outs, name=name, **attrs)


def length_delimited(field, payload):
    """One protobuf field of wire type 2 (a nested message) as bytes."""
    def varint(v):
        out = bytearray()
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                return bytes(out)
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def nested_ifs_model(depth):
    """Serialized bytes of a model whose If holds an If in its then-branch,
    `depth` levels deep, the outermost named if_1. Assembled from bytes:
    Python's protobuf refuses to build messages nested this deep."""
    def leaf(out):
        return helper.make_graph([n("Identity", ["x"], [out], "leaf_" + out)],
                                 "leaf_" + out, [], [vi(out, [2])])
    graph = leaf("y%d" % depth).SerializeToString()
    for level in range(depth, 0, -1):
        out = "y%d" % (level - 1)
        node = n("If", ["c"], [out], "if_%d" % level,
                 else_branch=leaf(out + "_else")).SerializeToString()
        then_branch = onnx.AttributeProto(
            name="then_branch", type=onnx.AttributeProto.GRAPH).SerializeToString()
        then_branch += length_delimited(6, graph)       # AttributeProto.g
        node += length_delimited(5, then_branch)        # NodeProto.attribute
        if level > 1:
            shell = helper.make_graph([], "level_%d" % level, [], [vi(out, [2])])
        else:
            shell = helper.make_graph([], "nested_if_%d" % depth,
                                      [vi("c", [], TensorProto.BOOL), vi("x", [2])],
                                      [vi(out, [2])])
        graph = shell.SerializeToString() + length_delimited(1, node)  # .node
    model = make_model(helper.make_graph([], "empty", [], []), 13, "nested_if_%d" % depth)
    model.ClearField("graph")
    return model.SerializeToString() + length_delimited(7, graph)      # .graph


def build_import_models():
    if os.path.isdir(IMPORT_DIR):
        for f in os.listdir(IMPORT_DIR):
            if f.endswith(".onnx"):
                os.remove(os.path.join(IMPORT_DIR, f))
    os.makedirs(IMPORT_DIR, exist_ok=True)
    rng = np.random.default_rng(2001)

    imp("add_broadcast", [n("Add", ["a", "b"], ["y"], "add")],
        [vi("a", [2, 3, 4]), vi("b", [4])], [vi("y", [2, 3, 4])])

    imp("sub_mul_div",
        [n("Sub", ["a", "b"], ["t0"], "sub"),
         n("Mul", ["t0", "c"], ["t1"], "mul"),
         n("Div", ["t1", "b"], ["y"], "div")],
        [vi("a", [2, 3]), vi("b", [2, 3]), vi("c", [2, 3])], [vi("y", [2, 3])])

    imp("relu_sigmoid_tanh_exp",
        [n("Relu", ["x"], ["t0"], "relu"),
         n("Sigmoid", ["t0"], ["t1"], "sigmoid"),
         n("Tanh", ["t1"], ["t2"], "tanh"),
         n("Exp", ["t2"], ["y"], "exp")],
        [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])])

    imp("matmul_batched", [n("MatMul", ["a", "b"], ["y"], "matmul")],
        [vi("a", [2, 3, 4]), vi("b", [4, 5])], [vi("y", [2, 3, 5])])

    imp("matmul_vector", [n("MatMul", ["a", "b"], ["y"], "matmul")],
        [vi("a", [4]), vi("b", [4, 5])], [vi("y", [5])])

    imp("gemm_transb_bias",
        [n("Gemm", ["a", "w", "c"], ["y"], "gemm", alpha=0.5, beta=2.0, transB=1)],
        [vi("a", [3, 4])], [vi("y", [3, 5])],
        [init("w", rng.standard_normal((5, 4)).astype(np.float32)),
         init("c", rng.standard_normal(5).astype(np.float32))])

    # X [1,4,9,9], W [6,2,3,3], group 2, strides 2, pads [h_begin=1,w_begin=0,h_end=1,w_end=0]
    # -> H = (9+1+1-3)/2+1 = 5, W = (9-3)/2+1 = 4
    imp("conv_pads_strides_group",
        [n("Conv", ["x", "w", "b"], ["y"], "conv", group=2, strides=[2, 2], pads=[1, 0, 1, 0],
           dilations=[1, 1], kernel_shape=[3, 3])],
        [vi("x", [1, 4, 9, 9])], [vi("y", [1, 6, 5, 4])],
        [init("w", rng.standard_normal((6, 2, 3, 3)).astype(np.float32)),
         init("b", rng.standard_normal(6).astype(np.float32))])

    # 8x8, k3, s2, SAME_UPPER -> out 4, total pad 1 -> begin 0, end 1
    imp("conv_auto_pad_same_upper",
        [n("Conv", ["x", "w"], ["y"], "conv", auto_pad="SAME_UPPER", strides=[2, 2], kernel_shape=[3, 3])],
        [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 4, 4])],
        [init("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32))])

    # 7x7, k2, s2, ceil -> 4
    imp("maxpool_ceil",
        [n("MaxPool", ["x"], ["y"], "maxpool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
        [vi("x", [1, 2, 7, 7])], [vi("y", [1, 2, 4, 4])])

    imp("averagepool_pads",
        [n("AveragePool", ["x"], ["y"], "avgpool", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
           count_include_pad=0)],
        [vi("x", [1, 2, 6, 6])], [vi("y", [1, 2, 6, 6])])

    imp("global_average_pool", [n("GlobalAveragePool", ["x"], ["y"], "gap")],
        [vi("x", [1, 3, 5, 5])], [vi("y", [1, 3, 1, 1])])

    imp("reshape_zero_minus_one", [n("Reshape", ["x", "shape"], ["y"], "reshape")],
        [vi("x", [2, 3, 4])], [vi("y", [2, 12])],
        [init("shape", np.array([0, -1], dtype=np.int64))])

    imp("flatten_axis2", [n("Flatten", ["x"], ["y"], "flatten", axis=2)],
        [vi("x", [2, 3, 4, 5])], [vi("y", [6, 20])])

    imp("transpose_default_perm", [n("Transpose", ["x"], ["y"], "transpose")],
        [vi("x", [2, 3, 4])], [vi("y", [4, 3, 2])])

    imp("concat_axis_neg1", [n("Concat", ["a", "b"], ["y"], "concat", axis=-1)],
        [vi("a", [2, 3]), vi("b", [2, 5])], [vi("y", [2, 8])])

    imp("softmax_opset11", [n("Softmax", ["x"], ["y"], "softmax", axis=1)],
        [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=11)

    imp("softmax_opset13", [n("Softmax", ["x"], ["y"], "softmax", axis=1)],
        [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=13)

    imp("reduce_mean_axes_attr_opset13",
        [n("ReduceMean", ["x"], ["y"], "reduce_mean", axes=[1], keepdims=1)],
        [vi("x", [2, 3, 4])], [vi("y", [2, 1, 4])], opset=13)

    # ReduceSum-13 takes axes as an input (here an initializer), keepdims default 1
    imp("reduce_sum_axes_input_opset13",
        [n("ReduceSum", ["x", "axes"], ["y"], "reduce_sum")],
        [vi("x", [2, 3, 4])], [vi("y", [2, 3, 1])],
        [init("axes", np.array([-1], dtype=np.int64))], opset=13)

    imp("reduce_max_axes_input_opset18",
        [n("ReduceMax", ["x", "axes"], ["y"], "reduce_max", keepdims=0)],
        [vi("x", [2, 3, 4])], [vi("y", [2, 4])],
        [init("axes", np.array([1], dtype=np.int64))], opset=18)

    imp("reduce_mean_noop_empty_axes_opset18",
        [n("ReduceMean", ["x"], ["y"], "reduce_mean", noop_with_empty_axes=0)],
        [vi("x", [2, 3, 4])], [vi("y", [1, 1, 1])], opset=18)

    # [3,4] -Unsqueeze[0,-1]-> [1,3,4,1] -Squeeze[-1]-> [1,3,4]
    imp("unsqueeze_squeeze_opset13",
        [n("Unsqueeze", ["x", "unsqueeze_axes"], ["t0"], "unsqueeze"),
         n("Squeeze", ["t0", "squeeze_axes"], ["y"], "squeeze")],
        [vi("x", [3, 4])], [vi("y", [1, 3, 4])],
        [init("unsqueeze_axes", np.array([0, -1], dtype=np.int64)),
         init("squeeze_axes", np.array([-1], dtype=np.int64))], opset=13)

    imp("constant_node",
        [n("Constant", [], ["c"], "const",
           value=numpy_helper.from_array(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), name="c_value")),
         n("Add", ["x", "c"], ["y"], "add")],
        [vi("x", [2, 4])], [vi("y", [2, 4])])

    imp("symbolic_batch", [n("Relu", ["x"], ["y"], "relu")],
        [vi("x", ["N", 8])], [vi("y", ["N", 8])])

    imp("opset21_model",
        [n("Add", ["a", "b"], ["t0"], "add"), n("Relu", ["t0"], ["y"], "relu")],
        [vi("a", [2, 3]), vi("b", [2, 3])], [vi("y", [2, 3])], opset=21)

    # Valid ONNX, but with ops Kiln does not support (3x Hardmax, 2x LpNormalization,
    # 1x Det) mixed with supported ones (Relu, Add).
    imp("unsupported_ops",
        [n("Relu", ["x"], ["r"], "relu"),
         n("Hardmax", ["r"], ["h1"], "hardmax1", axis=-1),
         n("Hardmax", ["x"], ["h2"], "hardmax2", axis=1),
         n("Add", ["h1", "h2"], ["s"], "add"),
         n("Hardmax", ["s"], ["h3"], "hardmax3", axis=-1),
         n("LpNormalization", ["h3"], ["l1"], "lpnorm1", axis=-1, p=2),
         n("LpNormalization", ["l1"], ["l2"], "lpnorm2", axis=1, p=1),
         n("Bernoulli", ["l2"], ["y"], "bernoulli")],
        [vi("x", [2, 3, 3])], [vi("y", [2, 3, 3])], opset=15, ort_check=False)

    imp("int_add", [n("Add", ["a", "b"], ["y"], "add")],
        [vi("a", [2, 3], I32), vi("b", [2, 3], I32)], [vi("y", [2, 3], I32)])

    # Unsigned arithmetic is not supported yet: --check must say so.
    imp("uint8_abs", [n("Abs", ["a"], ["y"], "abs")],
        [vi("a", [2, 3], TensorProto.UINT8)], [vi("y", [2, 3], TensorProto.UINT8)])

    # Broken files.
    with open(os.path.join(E2E_DIR, "mlp", "model.onnx"), "rb") as f:
        head = f.read(40)
    p = os.path.join(IMPORT_DIR, "truncated.onnx")
    with open(p, "wb") as f:
        f.write(head)
    written.append((p, "first 40 bytes of test/models/mlp/model.onnx (invalid)"))
    # Shapes the GPU code generator treats specially (test/Target/cuda-ptx.test):
    # rows long enough for a warp each, a width that vectorizes, a matmul
    # large enough for register tiles.
    imp("softmax_rows", [n("Softmax", ["x"], ["y"], "softmax", axis=-1)],
        [vi("x", [8, 256])], [vi("y", [8, 256])])
    # Rows one warp cannot hold in registers (a block of threads per row)
    # and rows that neither 32 nor 128 divides (guarded last elements).
    imp("softmax_long_rows", [n("Softmax", ["x"], ["y"], "softmax", axis=-1)],
        [vi("x", [4, 4096])], [vi("y", [4, 4096])])
    imp("softmax_1000", [n("Softmax", ["x"], ["y"], "softmax", axis=-1)],
        [vi("x", [6, 1000])], [vi("y", [6, 1000])])
    ln_rng = np.random.default_rng(11)
    imp("layer_norm_768",
        [n("LayerNormalization", ["x", "scale", "bias"], ["y"], "layer_norm", axis=-1, epsilon=1e-5)],
        [vi("x", [16, 768])], [vi("y", [16, 768])],
        inits=[init("scale", ln_rng.standard_normal(768).astype(np.float32)),
               init("bias", ln_rng.standard_normal(768).astype(np.float32))],
        opset=17)
    # MobileNetV3's squeeze-excitation: pool, two 1x1 convolutions on the
    # pooled map, HardSigmoid, and the broadcast Mul by the feature map
    # (the second convolution ran as one GPU thread when its result reached
    # the Mul through reshapes).
    se_rng = np.random.default_rng(12)
    imp("squeeze_excite",
        [n("GlobalAveragePool", ["x"], ["pooled"], "pool"),
         n("Conv", ["pooled", "w1", "b1"], ["c1"], "fc1"),
         n("Relu", ["c1"], ["r1"], "relu"),
         n("Conv", ["r1", "w2", "b2"], ["c2"], "fc2"),
         n("HardSigmoid", ["c2"], ["s"], "scale", alpha=1.0 / 6, beta=0.5),
         n("Mul", ["s", "x"], ["y"], "mul")],
        [vi("x", [2, 16, 8, 8])], [vi("y", [2, 16, 8, 8])],
        inits=[init("w1", weights(se_rng, [8, 16, 1, 1], 16)), init("b1", bias(se_rng, 8)),
               init("w2", weights(se_rng, [16, 8, 1, 1], 8)), init("b2", bias(se_rng, 16))])
    # Reductions over every element (no parallel loop to give threads): the
    # whole tensor is one row for a block of threads on the GPU.
    # CumSum of an unsigned type: a clear error (signed integers and floats
    # are supported).
    imp("cumsum_uint32", [n("CumSum", ["x", "axis"], ["y"], "cumsum")],
        [vi("x", [4, 6], TensorProto.UINT32)], [vi("y", [4, 6], TensorProto.UINT32)],
        inits=[init("axis", np.array(1, dtype=np.int64))], ort_check=False)
    imp("reduce_sum_all", [n("ReduceSum", ["x"], ["y"], "reduce", keepdims=0)],
        [vi("x", [512, 256])], [vi("y", [])])
    imp("reduce_mean_all_keepdims",
        [n("ReduceMean", ["x"], ["y"], "reduce", keepdims=1)],
        [vi("x", [3, 40, 50])], [vi("y", [1, 1, 1])])
    imp("add_relu_wide",
        [n("Add", ["a", "b"], ["s"], "add"), n("Relu", ["s"], ["y"], "relu")],
        [vi("a", [1024, 256]), vi("b", [1024, 256])], [vi("y", [1024, 256])])
    # bias + GELU (erf form) on its own: one kernel of 4 elements a thread,
    # whose erf separates the loads of neighbouring elements
    # (test/Target/cuda-ptx.test: kiln-group-thread-accesses makes them
    # one 128-bit load per operand and one store).
    imp("bias_gelu_rows",
        [n("Add", ["x", "bias"], ["s"], "add"),
         n("Mul", ["s", "inv_sqrt2"], ["t"], "scale"),
         n("Erf", ["t"], ["e"], "erf"),
         n("Add", ["e", "one"], ["e1"], "add_one"),
         n("Mul", ["s", "e1"], ["p"], "mul"),
         n("Mul", ["p", "half"], ["y"], "half")],
        [vi("x", [64, 256])], [vi("y", [64, 256])],
        inits=[init("bias", np.linspace(-1, 1, 256, dtype=np.float32)),
               init("inv_sqrt2", np.array(1 / np.sqrt(2), np.float32)),
               init("one", np.array(1.0, np.float32)),
               init("half", np.array(0.5, np.float32))])
    imp("matmul_large", [n("MatMul", ["a", "b"], ["y"], "matmul")],
        [vi("a", [512, 128]), vi("b", [128, 512])], [vi("y", [512, 512])])
    # float16, 288 blocks of 128x128 on the GPU targets, K in four stages
    # of 32: 64 KiB of stage buffers, dynamic shared memory on cuda
    # (test/Target/cuda-ptx.test).
    imp("matmul_f16_wide", [n("MatMul", ["a", "b"], ["y"], "matmul")],
        [vi("a", [2048, 128], TensorProto.FLOAT16),
         vi("b", [128, 2304], TensorProto.FLOAT16)],
        [vi("y", [2048, 2304], TensorProto.FLOAT16)])
    # The same with K = 1024: 32 stages of 32, so the staged loop stays a
    # loop (test/Target/cuda-sass.test counts one iteration's instructions).
    imp("matmul_f16_deep", [n("MatMul", ["a", "b"], ["y"], "matmul")],
        [vi("a", [2048, 1024], TensorProto.FLOAT16),
         vi("b", [1024, 2304], TensorProto.FLOAT16)],
        [vi("y", [2048, 2304], TensorProto.FLOAT16)])
    # Found by kiln-fuzz-importer: Concat of a matrix and a scalar crashed
    # shape inference (test/Import/errors.test expects a clean error).
    imp("concat_rank_mismatch", [n("Concat", ["a", "b"], ["y"], "concat", axis=0)],
        [vi("a", [4, 2]), vi("b", [])], [vi("y", [5, 2])],
        validate=False, ort_check=False)
    # A graph input whose size overflows 64 bits (test/Import/errors.test).
    imp("huge_input", [n("Relu", ["x"], ["y"], "relu")],
        [vi("x", [1 << 40, 1 << 40])], [vi("y", [1 << 40, 1 << 40])],
        validate=False, ort_check=False)
    # Found by kiln-fuzz-importer: an initializer whose dims claim 16 GiB but
    # which holds 4 bytes must be refused before anything is allocated.
    imp("initializer_short_data", [n("Add", ["x", "w"], ["y"], "add")],
        [vi("x", [1])], [vi("y", [1 << 30, 4])],
        [short_initializer("w", [1 << 30, 4], b"\0\0\0\0")],
        validate=False, ort_check=False)
    # Found by kiln-fuzz-importer: Reshape's target entries multiplied past
    # 64 bits (signed overflow) before being compared with the input.
    imp("reshape_overflow", [n("Reshape", ["x", "shape"], ["y"], "reshape")],
        [vi("x", [2, 3])], [vi("y", [3103784959, 841830367231])],
        [init("shape", np.array([3103784959, 841830367231], np.int64))],
        validate=False, ort_check=False)
    # Subgraphs nested past --max-subgraph-depth (16): 17 deep parses and is
    # refused by the depth check; 40 deep is past the parser's first limit.
    for depth in (17, 40):
        p = os.path.join(IMPORT_DIR, "nested_if_%d.onnx" % depth)
        with open(p, "wb") as f:
            f.write(nested_ifs_model(depth))
        written.append((p, "If nested %d deep (c: bool, x: f32[2] -> y0)" % depth))
    # Found by kiln-fuzz-importer: a Constant node without an output.
    imp("constant_no_output",
        [helper.make_node("Constant", [], [], name="const",
                          value=numpy_helper.from_array(np.ones(2, np.float32))),
         n("Relu", ["x"], ["y"], "relu")],
        [vi("x", [2])], [vi("y", [2])], validate=False, ort_check=False)
    # Invalid models that onnxruntime refuses (test/Import/errors.test): an
    # attribute of another type than the op takes (Softmax's axis as a
    # float), a value two nodes write, a graph output listed twice, a
    # pooling window larger than its padded input.
    softmax = n("Softmax", ["x"], ["y"], "softmax")
    softmax.attribute.append(helper.make_attribute("axis", 0.5))
    imp("softmax_float_axis", [softmax], [vi("x", [2, 3])], [vi("y", [2, 3])],
        validate=False, ort_check=False)
    imp("value_written_twice",
        [n("Relu", ["x"], ["y"], "relu"), n("Neg", ["x"], ["y"], "neg")],
        [vi("x", [2])], [vi("y", [2])], validate=False, ort_check=False)
    imp("output_listed_twice", [n("Relu", ["x"], ["y"], "relu")],
        [vi("x", [2])], [vi("y", [2]), vi("y", [2])],
        validate=False, ort_check=False)
    imp("maxpool_window_too_large",
        [n("MaxPool", ["x"], ["y"], "pool", kernel_shape=[5, 5])],
        [vi("x", [1, 1, 3, 3])], [vi("y", [1, 1, 1, 1])],
        validate=False, ort_check=False)
    # Constant indices out of range, which onnxruntime refuses and a kernel
    # would clamp: Gather's 5 into a dim of 3, GatherND's second component
    # -5 into a dim of 4, ScatterElements' 3 into a dim of 3.
    imp("gather_index_out_of_range",
        [n("Gather", ["x", "idx"], ["y"], "gather", axis=0)],
        [vi("x", [3, 4])], [vi("y", [2, 4])],
        inits=[init("idx", np.array([0, 5], dtype=np.int64))], ort_check=False)
    imp("gathernd_index_out_of_range",
        [n("GatherND", ["x", "idx"], ["y"], "gather_nd")],
        [vi("x", [3, 4])], [vi("y", [2])],
        inits=[init("idx", np.array([[0, 1], [2, -5]], dtype=np.int64))],
        ort_check=False)
    imp("scatter_index_out_of_range",
        [n("ScatterElements", ["x", "idx", "u"], ["y"], "scatter", axis=1)],
        [vi("x", [2, 3]), vi("u", [2, 1])], [vi("y", [2, 3])],
        inits=[init("idx", np.array([[1], [3]], dtype=np.int64))],
        ort_check=False)
    # A loss's class indices likewise: a constant target outside [-C, C)
    # (other than ignore_index) fails the import; a target that is a graph
    # input gets a check of the run.
    imp("nll_target_out_of_range",
        [n("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], "nll",
           reduction="none", ignore_index=-100)],
        [vi("x", [2, 3])], [vi("y", [2])],
        inits=[init("t", np.array([-100, 3], dtype=np.int64))], ort_check=False)
    imp("nll_runtime_targets",
        [n("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], "nll",
           reduction="none", ignore_index=-100)],
        [vi("x", [2, 3]), vi("t", [2], TensorProto.INT64)], [vi("y", [2])],
        ort_check=False)
    # The same ops with indices that are graph inputs: each gets a check
    # that fails the run when an index is out of range.
    imp("gather_runtime_indices",
        [n("Gather", ["x", "idx"], ["y"], "gather", axis=0)],
        [vi("x", [3, 4]), vi("idx", [2], TensorProto.INT64)], [vi("y", [2, 4])],
        ort_check=False)
    imp("gathernd_runtime_indices",
        [n("GatherND", ["x", "idx"], ["y"], "gather_nd")],
        [vi("x", [3, 4]), vi("idx", [2, 2], TensorProto.INT64)], [vi("y", [2])],
        ort_check=False)
    imp("scatter_runtime_indices",
        [n("ScatterElements", ["x", "idx", "u"], ["y"], "scatter", axis=1)],
        [vi("x", [2, 3]), vi("idx", [2, 1], TensorProto.INT64), vi("u", [2, 1])],
        [vi("y", [2, 3])], ort_check=False)
    # Shape-like inputs that are graph inputs: each node is compiled for
    # the result shape the model declares, and the runtime checks the
    # input's values against it before each run.
    imp("reshape_runtime_shape",
        [n("Reshape", ["x", "shape"], ["y"], "reshape")],
        [vi("x", [2, 3, 4]), vi("shape", [2], TensorProto.INT64)], [vi("y", [4, 6])],
        ort_check=False)
    imp("reduce_runtime_axes",
        [n("ReduceSum", ["x", "axes"], ["y"], "sum", keepdims=1)],
        [vi("x", [2, 3, 4]), vi("axes", [1], TensorProto.INT64)], [vi("y", [2, 1, 4])],
        ort_check=False)
    # Reducing [2, 3, 3] over dim 1 or dim 2 both give [2, 3]: the declared
    # shape does not tell which, so the axes must be a constant.
    imp("reduce_runtime_axes_ambiguous",
        [n("ReduceSum", ["x", "axes"], ["y"], "sum", keepdims=0)],
        [vi("x", [2, 3, 3]), vi("axes", [1], TensorProto.INT64)], [vi("y", [2, 3])],
        ort_check=False)
    # No declared shape for the Reshape's result: nothing to compile for.
    imp("reshape_runtime_shape_undeclared",
        [n("Reshape", ["x", "shape"], ["t"], "reshape"),
         n("Transpose", ["t"], ["y"], "transpose", perm=[1, 0])],
        [vi("x", [2, 3, 4]), vi("shape", [2], TensorProto.INT64)], [vi("y", [6, 4])],
        ort_check=False)
    imp("topk_runtime_k",
        [n("TopK", ["x", "k"], ["values", "indices"], "topk", axis=1)],
        [vi("x", [2, 5]), vi("k", [1], TensorProto.INT64)],
        [vi("values", [2, 3]), vi("indices", [2, 3], TensorProto.INT64)],
        ort_check=False)
    # A Trilu whose k is a graph input: the kernel compares each element's
    # diagonal offset with it.
    imp("trilu_runtime_k",
        [n("Trilu", ["x", "k"], ["y"], "trilu", upper=0)],
        [vi("x", [3, 4]), vi("k", [], TensorProto.INT64)], [vi("y", [3, 4])],
        opset=17, ort_check=False)
    # A Slice whose starts are a graph input (a window into a cache at a
    # position read at run time): its size is the declared one, its offset
    # is gathered in the kernel.
    imp("slice_runtime_starts",
        [n("Slice", ["x", "starts", "ends", "axes"], ["y"], "window")],
        [vi("x", [2, 8]), vi("starts", [1], TensorProto.INT64),
         vi("ends", [1], TensorProto.INT64)], [vi("y", [2, 3])],
        inits=[init("axes", np.array([1], np.int64))],
        ort_check=False)
    # A reflect Pad whose pads are a graph input: sized by its declared
    # result, each padded dim gathers from positions folded into the data.
    imp("pad_runtime_pads",
        [n("Pad", ["x", "pads"], ["y"], "pad", mode="reflect")],
        [vi("x", [1, 4]), vi("pads", [4], TensorProto.INT64)], [vi("y", [1, 7])],
        ort_check=False)
    # A CumSum whose axis is a graph input: a running sum per axis, the
    # named one selected in the kernel.
    imp("cumsum_runtime_axis",
        [n("CumSum", ["x", "axis"], ["y"], "cumsum")],
        [vi("x", [2, 3]), vi("axis", [], TensorProto.INT64)], [vi("y", [2, 3])],
        ort_check=False)
    # An If on a graph input whose branches give its output different
    # shapes: the output's shape would be known only at run time.
    imp("if_runtime_cond_shapes",
        [n("If", ["cond"], ["y"], "branch",
           then_branch=helper.make_graph([n("Relu", ["x"], ["t"], "then_relu")],
                                         "then", [], [vi("t", [2, 3])]),
           else_branch=helper.make_graph([n("ReduceSum", ["x"], ["e"], "else_sum",
                                            keepdims=1)],
                                         "else", [], [vi("e", [1, 1])]))],
        [vi("x", [2, 3]), vi("cond", [], TensorProto.BOOL)], [vi("y", [2, 3])],
        validate=False, ort_check=False)
    # An If on a graph input whose else branch handles an input of another
    # shape: its Squeeze needs a leading dim of 1, so at x's [2, 3] only the
    # then branch compiles; the else branch is left out, and a run whose
    # condition takes it fails.
    imp("if_branch_other_shape",
        [n("If", ["cond"], ["y"], "branch",
           then_branch=helper.make_graph([n("Relu", ["x"], ["t"], "then_relu")],
                                         "then", [], [vi("t", [2, 3])]),
           else_branch=helper.make_graph([n("Squeeze", ["x", "axes0"], ["s"], "else_squeeze"),
                                          n("Neg", ["s"], ["ns"], "else_neg"),
                                          n("Unsqueeze", ["ns", "axes0"], ["e"], "else_unsqueeze")],
                                         "else", [], [vi("e", [2, 3])]))],
        [vi("x", [2, 3]), vi("cond", [], TensorProto.BOOL)], [vi("y", [2, 3])],
        inits=[init("axes0", np.array([0], np.int64))], validate=False, ort_check=False)
    # The same with an op Kiln lacks (Bernoulli) in the else branch: that
    # branch fails at any shape, and the model stays refused.
    imp("if_branch_unknown_op",
        [n("If", ["cond"], ["y"], "branch",
           then_branch=helper.make_graph([n("Relu", ["x"], ["t"], "then_relu")],
                                         "then", [], [vi("t", [2, 3])]),
           else_branch=helper.make_graph([n("Bernoulli", ["x"], ["e"], "else_random")],
                                         "else", [], [vi("e", [2, 3])]))],
        [vi("x", [2, 3]), vi("cond", [], TensorProto.BOOL)], [vi("y", [2, 3])],
        opset=15, validate=False, ort_check=False)
    # A Range whose start and limit are graph inputs (position ids after a
    # cache of a length read at run time): the declared length, the values
    # computed in the kernel.
    imp("range_runtime_start",
        [n("Range", ["start", "limit", "delta"], ["y"], "positions")],
        [vi("start", [], TensorProto.INT64), vi("limit", [], TensorProto.INT64)],
        [vi("y", [4], TensorProto.INT64)],
        inits=[init("delta", np.array(1, np.int64))], opset=17, ort_check=False)
    # The same Range declared only at the end of an elementwise chain (as
    # ONNX's expanded window functions are): the chain keeps its shape, so
    # the Range's length is the output's.
    imp("range_declared_downstream",
        [n("Cast", ["size"], ["size_f"], "size_f", to=TensorProto.FLOAT),
         n("Range", ["zero", "size_f", "one"], ["ramp"], "ramp"),
         n("Div", ["step", "size_f"], ["increment"], "increment"),
         n("Mul", ["ramp", "increment"], ["angles"], "angles"),
         n("Cos", ["angles"], ["cosines"], "cosines"),
         n("Add", ["cosines", "angles"], ["y"], "sum")],
        [vi("size", [], TensorProto.INT64)], [vi("y", [6])],
        inits=[init("zero", np.array(0, np.float32)), init("one", np.array(1, np.float32)),
               init("step", np.array(2 * np.pi, np.float32))], opset=17, ort_check=False)
    # A Loop whose trip count is a graph input: its scan output's declared
    # length (3) bounds the iterations, and a run must iterate that often.
    imp("loop_runtime_trips",
        [n("Loop", ["trips", "", "s0"], ["s", "partial"], "loop",
           body=helper.make_graph([n("Cast", ["i"], ["i_f"], "body_cast", to=TensorProto.FLOAT),
                                   n("Add", ["s_in", "i_f"], ["s_out"], "body_add"),
                                   n("Identity", ["s_out"], ["scan_out"], "body_copy"),
                                   n("Identity", ["c_in"], ["c_out"], "body_cond")],
                                  "body", [vi("i", [], TensorProto.INT64),
                                           vi("c_in", [], TensorProto.BOOL), vi("s_in", [2])],
                                  [vi("c_out", [], TensorProto.BOOL), vi("s_out", [2]),
                                   vi("scan_out", [2])]))],
        [vi("trips", [], TensorProto.INT64), vi("s0", [2])],
        [vi("s", [2]), vi("partial", [3, 2])], opset=13, ort_check=False)
    # The same Loop without the scan output: nothing bounds its iterations.
    imp("loop_unbounded",
        [n("Loop", ["trips", "", "s0"], ["s"], "loop",
           body=helper.make_graph([n("Identity", ["s_in"], ["s_out"], "body_copy"),
                                   n("Identity", ["c_in"], ["c_out"], "body_cond")],
                                  "body", [vi("i", [], TensorProto.INT64),
                                           vi("c_in", [], TensorProto.BOOL), vi("s_in", [2])],
                                  [vi("c_out", [], TensorProto.BOOL), vi("s_out", [2])]))],
        [vi("trips", [], TensorProto.INT64), vi("s0", [2])], [vi("s", [2])],
        opset=13, ort_check=False)
    # The batch size used as a value (each row scaled by the batch): no op
    # mixes rows, but the value differs per chunk, so --dynamic-batch must
    # refuse it (found by importing at a second batch size).
    imp("batch_size_as_value",
        [n("Shape", ["x"], ["shape"], "shape"),
         n("Gather", ["shape", "zero"], ["batch"], "batch", axis=0),
         n("Cast", ["batch"], ["batch_f"], "batch_f", to=TensorProto.FLOAT),
         n("Mul", ["x", "batch_f"], ["y"], "scale")],
        [vi("x", ["N", 3])], [vi("y", ["N", 3])],
        inits=[numpy_helper.from_array(np.array(0, np.int64), name="zero")],
        ort_check=False)
    # The batch in an inner dim: a recurrent state [layers, N, H] (the dim
    # named as x's leading one) updated per element, and a time-major
    # result [H, N]; --dynamic-batch runs both in chunks along that dim.
    imp("batch_in_state",
        [n("Unsqueeze", ["x", "zero_axis"], ["x1"], "lift"),
         n("Add", ["state", "x1"], ["state_out"], "update"),
         n("Transpose", ["x"], ["time_major"], "time_major", perm=[1, 0])],
        [vi("x", ["N", 3]), vi("state", [2, "N", 3])],
        [vi("state_out", [2, "N", 3]), vi("time_major", [3, "N"])],
        inits=[numpy_helper.from_array(np.array([0], np.int64), name="zero_axis")],
        ort_check=False)
    # The batch merged into the rows of one matrix, [N, 4, 6] as [1, 4N, 6]
    # (an identity reshape at a batch of 1), and split back: --dynamic-batch
    # imports it to the same graph at every batch.
    imp("batch_merged_rows",
        [n("Reshape", ["x", "merged_shape"], ["rows"], "merge"),
         n("MatMul", ["rows", "w"], ["projected"], "project"),
         n("Reshape", ["projected", "split_shape"], ["y"], "split")],
        [vi("x", ["N", 4, 6])], [vi("y", ["N", 4, 5])],
        inits=[init("merged_shape", np.array([1, -1, 6], np.int64)),
               init("split_shape", np.array([-1, 4, 5], np.int64)),
               init("w", np.random.default_rng(11).standard_normal((6, 5)).astype(np.float32))])
    # A GatherND whose indices, built from Ranges over the input's shape,
    # hold each position's own (n, s) as torch.export writes a mask read:
    # imported as a reshape of the data, no gather.
    imp("gathernd_enumerated",
        [n("Shape", ["mask"], ["shape"], "shape"),
         n("Gather", ["shape", "zero"], ["batch"], "batch", axis=0),
         n("Gather", ["shape", "one"], ["length"], "length", axis=0),
         n("Range", ["zero", "batch", "one"], ["batch_ids"], "batch_ids"),
         n("Range", ["zero", "length", "one"], ["positions"], "positions"),
         n("Unsqueeze", ["batch_ids", "batch_axes"], ["batch_col"], "batch_col"),
         n("Unsqueeze", ["positions", "position_axes"], ["position_row"], "position_row"),
         n("Concat", ["batch", "one", "one", "length"], ["grid"], "grid", axis=0),
         n("Expand", ["batch_col", "grid"], ["batch_grid"], "batch_grid"),
         n("Expand", ["position_row", "grid"], ["position_grid"], "position_grid"),
         n("Unsqueeze", ["batch_grid", "last"], ["batch_index"], "batch_index"),
         n("Unsqueeze", ["position_grid", "last"], ["position_index"], "position_index"),
         n("Concat", ["batch_index", "position_index"], ["indices"], "indices", axis=-1),
         n("Cast", ["mask"], ["mask_f"], "mask_f", to=TensorProto.FLOAT),
         n("GatherND", ["mask_f", "indices"], ["y"], "gather_nd")],
        [vi("mask", ["N", 5], TensorProto.INT64)], [vi("y", ["N", 1, 1, 5])],
        inits=[init("zero", np.array([0], np.int64)), init("one", np.array([1], np.int64)),
               init("batch_axes", np.array([1, 2, 3], np.int64)),
               init("position_axes", np.array([0, 1, 2], np.int64)),
               init("last", np.array([-1], np.int64))])
    # A Scan of 5000 steps: more body nodes than Kiln unrolls.
    imp("scan_too_long",
        [n("Scan", ["s0", "x"], ["s", "ys"], "scan", num_scan_inputs=1,
           body=helper.make_graph([n("Add", ["s_in", "x_t"], ["s_out"], "body_add"),
                                   n("Identity", ["s_out"], ["y_t"], "body_copy")],
                                  "body", [vi("s_in", [2]), vi("x_t", [2])],
                                  [vi("s_out", [2]), vi("y_t", [2])]))],
        [vi("s0", [2]), vi("x", [5000, 2])], [vi("s", [2]), vi("ys", [5000, 2])],
        opset=17, ort_check=False)
    # A NonZero whose result shape is not declared (it feeds a Transpose).
    imp("nonzero_undeclared",
        [n("NonZero", ["x"], ["nz"], "nonzero"),
         n("Transpose", ["nz"], ["y"], "transpose")],
        [vi("x", [2, 3])], [vi("y", [3, 2], TensorProto.INT64)],
        ort_check=False)
    # Constants computed at compile time against --max-folded-bytes: an
    # [8, 8] ConstantOfShape (256 bytes; an expand when past the budget) and a
    # [256, 256] Tile of a scalar (256 KiB; a kernel when past the budget).
    imp("fold_budget",
        [n("ConstantOfShape", ["shape8"], ["ones8"], "ones8",
           value=numpy_helper.from_array(np.array([1.0], np.float32))),
         n("Add", ["x8", "ones8"], ["z"], "add8"),
         n("Tile", ["one", "repeats"], ["tiled"], "tile"),
         n("Add", ["x", "tiled"], ["y"], "add")],
        [vi("x8", [8, 8]), vi("x", [256, 256])], [vi("z", [8, 8]), vi("y", [256, 256])],
        inits=[init("shape8", np.array([8, 8], dtype=np.int64)),
               init("one", np.ones((1, 1), np.float32)),
               init("repeats", np.array([256, 256], dtype=np.int64))])
    # A 300-byte model whose constants fold into four 64 MiB tensors
    # (test/Tools/out-of-memory.test compiles it under --max-memory).
    ones = numpy_helper.from_array(np.array([1.0], np.float32))
    imp("big_folded_constants",
        [n("ConstantOfShape", ["shape"], ["c1"], "c1", value=ones),
         n("Add", ["c1", "c1"], ["c2"], "c2"),
         n("Add", ["c2", "c1"], ["c3"], "c3"),
         n("Add", ["c3", "c1"], ["c4"], "c4"),
         n("Add", ["x", "c4"], ["y"], "add")],
        [vi("x", [4096, 4096])], [vi("y", [4096, 4096])],
        inits=[init("shape", np.array([4096, 4096], dtype=np.int64))],
        ort_check=False)
    p = os.path.join(IMPORT_DIR, "not_onnx.onnx")
    with open(p, "wb") as f:
        f.write(b"this is not an onnx model\n")
    written.append((p, "plain text (invalid)"))
    # A 3x3 convolution whose width, filters and channels 16 divides: with
    # --precision=f16 the GPU targets compute it on matrix instructions as
    # an implicit GEMM (test/Target/cuda-ptx.test, rocm-isa.test). Its own
    # generator, so that the models above keep their values.
    conv_rng = np.random.default_rng(3001)
    imp("conv3x3_16",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [1, 16, 32, 32])], [vi("y", [1, 32, 32, 32])],
        [init("w", weights(conv_rng, (32, 16, 3, 3), 16 * 9)),
         init("b", conv_rng.standard_normal(32).astype(np.float32))], opset=17)
    # A 1x1 convolution onto 28-pixel rows: the GPU targets compute it over
    # the flattened image (M = 784 = 49 x 16), on matrix instructions at
    # --precision=f16 (test/Tools/emulate-gpu-model.test).
    pointwise_rng = np.random.default_rng(3002)
    imp("conv1x1_28",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", kernel_shape=[1, 1]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [1, 16, 28, 28])], [vi("y", [1, 32, 28, 28])],
        [init("w", weights(pointwise_rng, (32, 16, 1, 1), 16)),
         init("b", pointwise_rng.standard_normal(32).astype(np.float32))], opset=17)
    # 3x3 convolutions onto 28-pixel rows: GPU blocks of several whole
    # output rows (four rows: 112 pixels, seven 16-row matrix tiles at
    # --precision=f16; 8 outputs per thread along M with --matrix-block),
    # at stride 1 and at stride 2 from a 56x56 map
    # (test/Tools/emulate-gpu-model.test).
    rows_rng = np.random.default_rng(3003)
    imp("conv3x3_rows",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [2, 16, 28, 28])], [vi("y", [2, 32, 28, 28])],
        [init("w", weights(rows_rng, (32, 16, 3, 3), 16 * 9)),
         init("b", rows_rng.standard_normal(32).astype(np.float32))], opset=17)
    imp("conv3x3_rows_s2",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3],
           strides=[2, 2]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [1, 16, 56, 56])], [vi("y", [1, 32, 28, 28])],
        [init("w", weights(rows_rng, (32, 16, 3, 3), 16 * 9)),
         init("b", rows_rng.standard_normal(32).astype(np.float32))], opset=17)
    # A stem on 224x224 images (MobileNetV2's: 3x3, stride 2, 32 filters)
    # at batch 3: its 112-pixel output rows, which no power of two above
    # 16 divides, in blocks of one whole row (seven warps of 16 rows) at
    # --precision=f16, 336 of them (test/Tools/emulate-gpu-model.test).
    imp("stem_rows_112",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3],
           strides=[2, 2]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [3, 3, 224, 224])], [vi("y", [3, 32, 112, 112])],
        [init("w", weights(rows_rng, (32, 3, 3, 3), 3 * 9)),
         init("b", rows_rng.standard_normal(32).astype(np.float32))], opset=17)
    # Blocks whose rows 16 does not divide, padded to the next multiple of
    # 16 on tensor cores (paddedMatrixRows): a 3x3 convolution on 14x14
    # maps with a residual add (seven 14-pixel rows, 98 outputs, computed
    # as 112), a 1x1 convolution onto 7x7 maps (the flattened image's 49
    # pixels as 64) and a matmul of 49 rows.
    padded_rng = np.random.default_rng(3004)
    # Inception's odd maps: no block of whole 17- or 35-pixel rows divides
    # the map or pads within a quarter; GPU blocks of 3 rows, the last
    # shifted back (a 1x7 convolution on 17x17, a 3x3 one on 35x35).
    odd_rng = np.random.default_rng(2017)
    imp("conv1x7_rows17",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", pads=[0, 3, 0, 3], kernel_shape=[1, 7]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [1, 32, 17, 17])], [vi("y", [1, 48, 17, 17])],
        [init("w", weights(odd_rng, (48, 32, 1, 7), 32 * 7)),
         init("b", odd_rng.standard_normal(48).astype(np.float32))], opset=17)
    imp("conv3x3_rows35",
        [n("Conv", ["x", "w"], ["y"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3])],
        [vi("x", [1, 16, 35, 35])], [vi("y", [1, 32, 35, 35])],
        [init("w", weights(odd_rng, (32, 16, 3, 3), 16 * 9))], opset=17)
    imp("conv3x3_14_residual",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         n("Add", ["c", "x"], ["s"], "add"),
         n("Relu", ["s"], ["y"], "relu")],
        [vi("x", [2, 32, 14, 14])], [vi("y", [2, 32, 14, 14])],
        [init("w", weights(padded_rng, (32, 32, 3, 3), 32 * 9)),
         init("b", padded_rng.standard_normal(32).astype(np.float32))], opset=17)
    # Two 1x1 convolutions with biases, the second adding the input back
    # (a bottleneck's shape): at --precision=f16 in NHWC the first one's
    # float16 output, whose accumulators start at its bias, is stored 8
    # bytes a lane (test/Tools/emulate-gpu-model.test).
    chain_rng = np.random.default_rng(3011)
    imp("conv1x1_bias_chain",
        [n("Conv", ["x", "w1", "b1"], ["c1"], "expand", kernel_shape=[1, 1]),
         n("Relu", ["c1"], ["r1"], "relu1"),
         n("Conv", ["r1", "w2", "b2"], ["c2"], "project", kernel_shape=[1, 1]),
         n("Add", ["c2", "x"], ["s"], "add"),
         n("Relu", ["s"], ["y"], "relu2")],
        [vi("x", [2, 32, 32, 32])], [vi("y", [2, 32, 32, 32])],
        [init("w1", weights(chain_rng, (64, 32, 1, 1), 32)),
         init("b1", chain_rng.standard_normal(64).astype(np.float32)),
         init("w2", weights(chain_rng, (32, 64, 1, 1), 64)),
         init("b2", chain_rng.standard_normal(32).astype(np.float32))], opset=17)
    imp("conv1x1_7",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", kernel_shape=[1, 1]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [2, 32, 7, 7])], [vi("y", [2, 64, 7, 7])],
        [init("w", weights(padded_rng, (64, 32, 1, 1), 32)),
         init("b", padded_rng.standard_normal(64).astype(np.float32))], opset=17)
    imp("matmul_49",
        [n("MatMul", ["x", "w"], ["y"], "matmul")],
        [vi("x", [49, 64])], [vi("y", [49, 32])],
        [init("w", weights(padded_rng, (64, 32), 64))], opset=17)
    # K that 16 does not divide, walked as the next multiple of 16 on
    # tensor cores (paddedMatrixK; both operands read zero past K):
    # MobileNet's 1x1 convolutions from 24 channels (cp.async runs along
    # M, one k each), a 3x3 one (its window around the padded K steps), a
    # matmul with K = 40 (runs along K, zero-filled past 40) and one of
    # 16x16 single-warp blocks loading from global memory.
    padded_k_rng = np.random.default_rng(3006)
    imp("conv1x1_k24",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", kernel_shape=[1, 1]),
         n("Relu", ["c"], ["y"], "relu")],
        [vi("x", [2, 24, 28, 28])], [vi("y", [2, 64, 28, 28])],
        [init("w", weights(padded_k_rng, (64, 24, 1, 1), 24)),
         init("b", padded_k_rng.standard_normal(64).astype(np.float32))], opset=17)
    imp("conv3x3_k24",
        [n("Conv", ["x", "w", "b"], ["y"], "conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3])],
        [vi("x", [2, 24, 16, 16])], [vi("y", [2, 32, 16, 16])],
        [init("w", weights(padded_k_rng, (32, 24, 3, 3), 24 * 9)),
         init("b", padded_k_rng.standard_normal(32).astype(np.float32))], opset=17)
    imp("matmul_k40",
        [n("MatMul", ["x", "w"], ["y"], "matmul")],
        [vi("x", [128, 40])], [vi("y", [128, 64])],
        [init("w", weights(padded_k_rng, (40, 64), 40))], opset=17)
    imp("matmul_k24_warp",
        [n("MatMul", ["x", "w"], ["y"], "matmul")],
        [vi("x", [32, 24])], [vi("y", [32, 16])],
        [init("w", weights(padded_k_rng, (24, 16), 24))], opset=17)
    # N that 16 does not divide, blocks of columns computed as the next
    # multiple of 16 (padded columns read B and the epilogue's inputs at the
    # last valid column and store nothing): MobileNet's 1x1 convolutions
    # onto 24 channels with a residual add, a matmul onto 40 columns with a
    # bias (runs of B along N clamped) and a Gemm onto 200 (blocks of 100
    # as 112).
    padded_n_rng = np.random.default_rng(3007)
    imp("conv1x1_n24",
        [n("Conv", ["x", "w", "b"], ["c"], "conv", kernel_shape=[1, 1]),
         n("Add", ["c", "r"], ["y"], "add")],
        [vi("x", [2, 96, 28, 28]), vi("r", [2, 24, 28, 28])], [vi("y", [2, 24, 28, 28])],
        [init("w", weights(padded_n_rng, (24, 96, 1, 1), 96)),
         init("b", padded_n_rng.standard_normal(24).astype(np.float32))], opset=17)
    imp("matmul_n40",
        [n("MatMul", ["x", "w"], ["m"], "matmul"),
         n("Add", ["m", "b"], ["y"], "bias")],
        [vi("x", [64, 32])], [vi("y", [64, 40])],
        [init("w", weights(padded_n_rng, (32, 40), 32)),
         init("b", padded_n_rng.standard_normal(40).astype(np.float32))], opset=17)
    imp("gemm_n200",
        [n("Gemm", ["x", "w", "b"], ["y"], "gemm", transB=1)],
        [vi("x", [32, 64])], [vi("y", [32, 200])],
        [init("w", weights(padded_n_rng, (200, 64), 64)),
         init("b", padded_n_rng.standard_normal(200).astype(np.float32))], opset=17)
    # Rows and columns that no block divides or pads (ViT's 197 tokens; 131
    # is prime): blocks of 32 whose last is shifted back to end with the
    # matrix, recomputing part of the one before it; K = 40 is padded to 48.
    shifted_rng = np.random.default_rng(3008)
    imp("matmul_m131_n131",
        [n("MatMul", ["x", "w"], ["m"], "matmul"),
         n("Add", ["m", "b"], ["a"], "bias"),
         n("Relu", ["a"], ["y"], "relu")],
        [vi("x", [131, 40])], [vi("y", [131, 131])],
        [init("w", weights(shifted_rng, (40, 131), 40)),
         init("b", shifted_rng.standard_normal(131).astype(np.float32))], opset=17)
    # MobileNet's depthwise convolutions (3x3, padding 1, stride 1 then 2,
    # with ReLU6): the GPU targets read the padding in place
    # (kiln-convert-to-linalg's read-window-padding-in-place), no padding
    # kernels.
    dw_rng = np.random.default_rng(3005)
    imp("depthwise_pads",
        [n("Conv", ["x", "w1", "b1"], ["c1"], "dw1", group=16, pads=[1, 1, 1, 1],
           kernel_shape=[3, 3]),
         n("Clip", ["c1", "lo", "hi"], ["r1"], "relu6"),
         n("Conv", ["r1", "w2"], ["y"], "dw2", group=16, pads=[1, 1, 1, 1],
           strides=[2, 2], kernel_shape=[3, 3])],
        [vi("x", [2, 16, 12, 12])], [vi("y", [2, 16, 6, 6])],
        [init("w1", weights(dw_rng, (16, 1, 3, 3), 9)), init("b1", bias(dw_rng, 16)),
         init("w2", weights(dw_rng, (16, 1, 3, 3), 9)),
         init("lo", np.array(0.0, dtype=np.float32)),
         init("hi", np.array(6.0, dtype=np.float32))], opset=17)
    # Attention's heads as PyTorch exports them: queries, keys and values
    # reshaped into 2 heads of 32 and transposed, the context transposed
    # back; the GPU targets fold every transpose into the matmuls
    # (kiln-fold-transposes-into-contractions).
    heads_shape = np.array([1, 32, 2, 32], dtype=np.int64)
    imp("attention_heads",
        [n("Reshape", ["q", "heads"], ["q4"], "q_heads"),
         n("Transpose", ["q4"], ["qt"], "q_transpose", perm=[0, 2, 1, 3]),
         n("Reshape", ["k", "heads"], ["k4"], "k_heads"),
         n("Transpose", ["k4"], ["kt"], "k_transpose", perm=[0, 2, 3, 1]),
         n("Reshape", ["v", "heads"], ["v4"], "v_heads"),
         n("Transpose", ["v4"], ["vt"], "v_transpose", perm=[0, 2, 1, 3]),
         n("MatMul", ["qt", "kt"], ["s"], "scores"),
         n("Mul", ["s", "scale"], ["ss"], "scale_scores"),
         n("Softmax", ["ss"], ["p"], "softmax", axis=-1),
         n("MatMul", ["p", "vt"], ["c"], "context"),
         n("Transpose", ["c"], ["ct"], "context_transpose", perm=[0, 2, 1, 3]),
         n("Reshape", ["ct", "merged"], ["y"], "merge_heads")],
        [vi("q", [1, 32, 64]), vi("k", [1, 32, 64]), vi("v", [1, 32, 64])],
        [vi("y", [1, 32, 64])],
        [init("heads", heads_shape),
         init("merged", np.array([1, 32, 64], dtype=np.int64)),
         init("scale", np.array(32 ** -0.5, dtype=np.float32))], opset=17)
    # A bidirectional LSTM with biases, initial states and peepholes, and a
    # GRU: the importer splits their constant weights per direction and
    # gate at import time (no kernel copies them on every run).
    rnn_rng = np.random.default_rng(3009)
    imp("recurrent_weights",
        [n("LSTM", ["x", "w", "r", "b", "", "h0", "c0", "p"], ["y", "yh", "yc"], "lstm",
           direction="bidirectional", hidden_size=4),
         n("GRU", ["x", "gw", "gr", "gb"], ["gy", "gyh"], "gru", hidden_size=4)],
        [vi("x", [3, 1, 2])],
        [vi("y", [3, 2, 1, 4]), vi("yh", [2, 1, 4]), vi("yc", [2, 1, 4]),
         vi("gy", [3, 1, 1, 4]), vi("gyh", [1, 1, 4])],
        [init("w", weights(rnn_rng, (2, 16, 2), 2)), init("r", weights(rnn_rng, (2, 16, 4), 4)),
         init("b", bias(rnn_rng, 64).reshape(2, 32)),
         init("h0", bias(rnn_rng, 8).reshape(2, 1, 4)),
         init("c0", bias(rnn_rng, 8).reshape(2, 1, 4)),
         init("p", bias(rnn_rng, 24).reshape(2, 12)),
         init("gw", weights(rnn_rng, (1, 12, 2), 2)), init("gr", weights(rnn_rng, (1, 12, 4), 4)),
         init("gb", bias(rnn_rng, 24).reshape(1, 24))], opset=17)
    # ai.onnx.ml tree ensembles the importer walks (a tree of depth 2) or
    # refuses by name (two classes that both carry weights, string labels, MIN
    # aggregation).
    def ml_model(name, node, outputs, ml_opset=3):
        g = helper.make_graph([node], name, [vi("x", [4, 2])], outputs)
        opset = 17 if ml_opset < 5 else 21
        model = helper.make_model(
            g, opset_imports=[helper.make_opsetid("", opset),
                              helper.make_opsetid("ai.onnx.ml", ml_opset)],
            ir_version=IR_FOR_OPSET[opset], producer_name="kiln-make_test_models",
            producer_version="1")
        save_model(model, os.path.join(IMPORT_DIR, name + ".onnx"), io_desc(model))
    depth2 = dict(
        nodes_treeids=[0] * 5, nodes_nodeids=[0, 1, 2, 3, 4], nodes_featureids=[0, 1, 0, 0, 0],
        nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF"],
        nodes_values=[0.0, 1.0, 0, 0, 0], nodes_truenodeids=[1, 3, 0, 0, 0],
        nodes_falsenodeids=[2, 4, 0, 0, 0])
    votes = dict(class_treeids=[0, 0, 0], class_nodeids=[2, 3, 4], class_ids=[0, 1, 2],
                 class_weights=[1.0, 1.0, 1.0])
    scores = [vi("label", [4], TensorProto.INT64), vi("scores", [4, 3])]
    ml_model("tree_classifier",
             helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "scores"], "trees",
                              domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2], **votes,
                              **depth2), scores)
    ml_model("tree_classifier_two_classes",
             helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "scores"], "trees",
                              domain="ai.onnx.ml", classlabels_int64s=[0, 1],
                              class_treeids=[0, 0, 0], class_nodeids=[2, 3, 4],
                              class_ids=[0, 1, 1], class_weights=[1.0, 1.0, 1.0], **depth2),
             [vi("label", [4], TensorProto.INT64), vi("scores", [4, 2])])
    ml_model("tree_classifier_binary_logistic",
             helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "scores"], "trees",
                              domain="ai.onnx.ml", classlabels_int64s=[0, 1],
                              post_transform="LOGISTIC", class_treeids=[0, 0, 0],
                              class_nodeids=[2, 3, 4], class_ids=[0, 0, 0],
                              class_weights=[0.2, 0.6, 0.9], **depth2),
             [vi("label", [4], TensorProto.INT64), vi("scores", [4, 2])])
    ml_model("tree_classifier_strings",
             helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "scores"], "trees",
                              domain="ai.onnx.ml", classlabels_strings=["a", "b", "c"], **votes,
                              **depth2),
             [vi("label", [4], TensorProto.STRING), vi("scores", [4, 3])])
    ml_model("tree_regressor_min",
             helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], "trees",
                              domain="ai.onnx.ml", n_targets=1, aggregate_function="MIN",
                              target_treeids=[0, 0, 0], target_nodeids=[2, 3, 4],
                              target_ids=[0, 0, 0], target_weights=[1.0, 2.0, 3.0], **depth2),
             [vi("y", [4, 1])])
    # TreeEnsemble (ai.onnx.ml 5): one node over two leaves; set membership
    # (mode 6) and the MAX aggregate are refused by name.
    def tree_ensemble(mode, **attrs):
        f32 = lambda values: numpy_helper.from_array(np.array(values, np.float32))
        return helper.make_node(
            "TreeEnsemble", ["x"], ["y"], "trees", domain="ai.onnx.ml", n_targets=1,
            tree_roots=[0], nodes_featureids=[0], nodes_splits=f32([0.0]),
            nodes_modes=numpy_helper.from_array(np.array([mode], np.uint8)),
            nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[1],
            nodes_falseleafs=[1], leaf_targetids=[0, 0], leaf_weights=f32([1.0, 2.0]),
            **attrs)
    ml_model("tree_ensemble_member",
             tree_ensemble(6, membership_values=numpy_helper.from_array(
                 np.array([1.0, 2.0], np.float32))),
             [vi("y", [4, 1])], ml_opset=5)
    ml_model("tree_ensemble_max", tree_ensemble(0, aggregate_function=3),
             [vi("y", [4, 1])], ml_opset=5)
    ml_model("tree_ensemble_depth1", tree_ensemble(0), [vi("y", [4, 1])], ml_opset=5)
    # A bidirectional LSTM whose R holds one direction: refused by name.
    imp("recurrent_bad_weights",
        [n("LSTM", ["x", "w", "r"], ["y"], "lstm", direction="bidirectional", hidden_size=4)],
        [vi("x", [3, 1, 2])], [vi("y", [3, 2, 1, 4])],
        [init("w", weights(rnn_rng, (2, 16, 2), 2)), init("r", weights(rnn_rng, (1, 16, 4), 4))],
        opset=17, validate=False, ort_check=False)


# --------------------------------------------------------------------------- main


def build_activations_cnn():
    """CPU paths against onnxruntime: 1x1
    convolutions onto a 7x7 map (flattened image) with a decomposed SiLU,
    a residual add and a decomposed HardSwish as epilogues, a strided 1x1
    convolution (subsampled first), a padded depthwise convolution, a 3x3
    convolution over several output rows per register tile, and MatMuls
    with the erf and tanh GELU forms as exporters write them."""
    rng = np.random.default_rng(1007)
    c = lambda name, value: init(name, np.array(value, np.float32))
    nodes = [
        # 1x1, 8 -> 16 on 14x14, then stride 2 onto 7x7 (downsample).
        helper.make_node("Conv", ["img", "w1", "b1"], ["c1"], name="conv1"),
        helper.make_node("Sigmoid", ["c1"], ["s1"], name="sig1"),
        helper.make_node("Mul", ["c1", "s1"], ["silu1"], name="silu1"),
        helper.make_node("Conv", ["silu1", "wd", "bd"], ["down"], name="down",
                         strides=[2, 2]),
        # Depthwise 3x3 with padding, then 1x1 16 -> 16 + residual + HardSwish.
        helper.make_node("Conv", ["down", "wdw"], ["dw"], name="depthwise",
                         pads=[1, 1, 1, 1], group=16),
        helper.make_node("Conv", ["dw", "w2", "b2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["c2", "down"], ["res"], name="residual"),
        helper.make_node("HardSigmoid", ["res"], ["hs"], name="hsig",
                         alpha=1.0 / 6.0, beta=0.5),
        helper.make_node("Mul", ["res", "hs"], ["hswish"], name="hswish"),
        # 3x3 16 -> 16 on the 7x7 map (tiles over several output rows).
        helper.make_node("Conv", ["hswish", "w3", "b3"], ["c3"], name="conv3",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("Reshape", ["r3", "flat_shape"], ["flat"], name="flatten"),
        # MatMul + bias + GELU (erf), PyTorch's order.
        helper.make_node("MatMul", ["flat", "wm1"], ["m1"], name="fc1"),
        helper.make_node("Add", ["m1", "bm1"], ["h"], name="fc1_bias"),
        helper.make_node("Div", ["h", "sqrt2"], ["hd"], name="gelu_div"),
        helper.make_node("Erf", ["hd"], ["he"], name="gelu_erf"),
        helper.make_node("Add", ["he", "one"], ["he1"], name="gelu_add"),
        helper.make_node("Mul", ["h", "he1"], ["hm"], name="gelu_mul"),
        helper.make_node("Mul", ["hm", "half"], ["g1"], name="gelu_half"),
        # MatMul + GELU (tanh form, GPT-2's), the cube as Pow.
        helper.make_node("MatMul", ["g1", "wm2"], ["m2"], name="fc2"),
        helper.make_node("Pow", ["m2", "three"], ["cube"], name="tanh_cube"),
        helper.make_node("Mul", ["cube", "k"], ["kc"], name="tanh_k"),
        helper.make_node("Add", ["m2", "kc"], ["inner"], name="tanh_inner"),
        helper.make_node("Mul", ["inner", "sqrt2pi"], ["scaled"], name="tanh_scale"),
        helper.make_node("Tanh", ["scaled"], ["t"], name="tanh"),
        helper.make_node("Add", ["t", "one"], ["t1"], name="tanh_add"),
        helper.make_node("Mul", ["half", "m2"], ["hx"], name="tanh_half"),
        helper.make_node("Mul", ["hx", "t1"], ["out"], name="tanh_mul"),
    ]
    inits = [
        init("w1", weights(rng, (16, 8, 1, 1), 8)), init("b1", bias(rng, 16)),
        init("wd", weights(rng, (16, 16, 1, 1), 16)), init("bd", bias(rng, 16)),
        init("wdw", weights(rng, (16, 1, 3, 3), 9)),
        init("w2", weights(rng, (16, 16, 1, 1), 16)), init("b2", bias(rng, 16)),
        init("w3", weights(rng, (16, 16, 3, 3), 144)), init("b3", bias(rng, 16)),
        init("flat_shape", np.array([2, 16 * 49], np.int64)),
        init("wm1", weights(rng, (16 * 49, 32), 16 * 49)), init("bm1", bias(rng, 32)),
        init("wm2", weights(rng, (32, 24), 32)),
        c("sqrt2", 1.4142135), c("one", 1.0), c("half", 0.5), c("three", 3.0),
        c("k", 0.044715), c("sqrt2pi", 0.7978845608),
    ]
    g = helper.make_graph(nodes, "activations_cnn", [vi("img", [2, 8, 14, 14])],
                          [vi("out", [2, 24])], inits)
    model = make_model(g, 13, "activations_cnn")
    return model, [{"img": rng.standard_normal((2, 8, 14, 14)).astype(np.float32)}]


def main():
    if ort is None:
        sys.exit("onnxruntime is required (use the project venv: .venv/bin/python)")
    np.random.seed(0)  # nothing should use the global RNG, but be safe

    for entry in [
        (build_mlp, os.path.join(E2E_DIR, "mlp")),
        (build_small_cnn, os.path.join(E2E_DIR, "small_cnn")),
        (build_cnn_symbolic, os.path.join(E2E_DIR, "cnn_symbolic")),
        (build_if_folded, os.path.join(E2E_DIR, "if_folded")),
        (build_if_runtime_cond, os.path.join(E2E_DIR, "if_runtime_cond")),
        (build_scan_running_state, os.path.join(E2E_DIR, "scan_running_state")),
        (build_grid_sample, os.path.join(E2E_DIR, "grid_sample")),
        (build_loop_until, os.path.join(E2E_DIR, "loop_until")),
        (build_lstm_sequence_lens, os.path.join(E2E_DIR, "lstm_sequence_lens")),
        (build_f16_mix, os.path.join(E2E_DIR, "f16_mix")),
        (build_activations_cnn, os.path.join(E2E_DIR, "activations_cnn")),
        (build_matmul_split_k, os.path.join(E2E_DIR, "matmul_split_k")),
        (build_conv_split_k, os.path.join(E2E_DIR, "conv_split_k")),
        (build_classifier_b1, os.path.join(E2E_DIR, "classifier_b1")),
        (build_zero_size, os.path.join(E2E_DIR, "zero_size")),
        (build_tree_ensembles, os.path.join(E2E_DIR, "tree_ensembles")),
        (build_tree_ensemble_v5, os.path.join(E2E_DIR, "tree_ensemble_v5"), run_onnx_reference),
        (build_binary_classifiers, os.path.join(E2E_DIR, "binary_classifiers")),
        (build_box_distribution, os.path.join(E2E_DIR, "box_distribution")),
        (build_strided_depthwise_bn, os.path.join(E2E_DIR, "strided_depthwise_bn")),
        (build_onehot_dense, os.path.join(E2E_DIR, "onehot_dense")),
        (build_clip_computed_bounds, os.path.join(E2E_DIR, "clip_computed_bounds")),
        (build_pad_computed_value, os.path.join(E2E_DIR, "pad_computed_value")),
        (build_vit_block, os.path.join(E2E_DIR, "vit_block")),
        (build_grouped_f16, os.path.join(E2E_DIR, "grouped_f16")),
        (build_scatter_splat_f16, os.path.join(E2E_DIR, "scatter_splat_f16")),
        (build_position_ids, os.path.join(E2E_DIR, "position_ids")),
        (build_ort_fusions, os.path.join(E2E_DIR, "ort_fusions")),
        (build_patch_embedding, os.path.join(E2E_DIR, "patch_embedding")),
        (build_strided_stems, os.path.join(E2E_DIR, "strided_stems")),
        (build_tiny_cnn, os.path.join(EXAMPLES_DIR, "tiny_cnn")),
    ]:
        build, out_dir, *reference = entry
        model, input_sets = build()
        write_e2e(model, out_dir, input_sets, *reference)

    build_import_models()

    total = 0
    print("make_test_models.py wrote %d files:" % len(written))
    for path, desc in written:
        size = os.path.getsize(path)
        total += size
        print("  %-62s %8d B  %s" % (os.path.relpath(path, ROOT), size, desc))
    print("total: %.1f KiB" % (total / 1024.0))


if __name__ == "__main__":
    main()
