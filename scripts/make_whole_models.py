#!/usr/bin/env python3
"""(Re)generate Kiln's whole-model test set: realistic networks, random weights.

Needs torch, torchvision and transformers, which the default .venv does NOT
have: they live in a separate venv used only to regenerate these files:

    /usr/bin/python3 -m venv .venv-models
    .venv-models/bin/pip install -r scripts/requirements-models.txt
    .venv-models/bin/python scripts/make_whole_models.py            # --size small
    .venv-models/bin/python scripts/make_whole_models.py --size full  # benchmarks

Models (all random init, fixed seeds, eval mode, no downloads):
  resnet18            torchvision ResNet, BasicBlock [2,2,2,2]
  resnet50            torchvision ResNet, Bottleneck [3,4,6,3]
  mobilenet_v2        torchvision MobileNetV2
  mobilenet_v3_small  torchvision MobileNetV3-Small (Hardswish, SE blocks)
  bert_encoder        transformers BertModel (input_ids + attention_mask)
  gpt2_decoder        transformers GPT2Model (input_ids, causal self-attention)
  conv_lstm_audio     Conv1d -> ReLU -> LSTM -> Linear

Each is exported with the TorchScript exporter (torch.onnx.export(dynamo=False),
constant folding on, batch dim symbolic: "batch") at opsets 13, 17 and 21.
The TorchScript exporter stops at opset 20
(torch.onnx._constants.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET), so opset 21 is
its opset-20 export converted by onnx.version_converter.

--size small (default): same block types, depths and op mix as the real
networks, but thin (ResNet-18 base width 3 / ResNet-50 base width 2 instead of
64, MobileNetV2 width 0.1 with a 64-channel last conv, MobileNetV3 width 0.15, BERT/GPT-2
hidden 32 x 2 layers x 2 heads, vocab 100, seq 8) and 32x32 images; written to
test/whole-models/ (committed, a few MB), plus MANIFEST.md.
--size full: the real widths (224x224, bert-base / gpt2 dims, seq 128) into
--out (default build/whole-models); never committed.

Layout per model: <out>/<name>_opset<N>/model.onnx
                  <out>/<name>_opset<N>/test_data_set_0/{input,output}_K.pb  (batch 2)
                  <out>/<name>_opset<N>/test_data_set_1/{input,output}_K.pb  (batch 1)
References are computed with onnxruntime (CPU execution provider) from the
exported model; the script also checks them against eager torch.

IR versions: each model gets the smallest IR version its opset allows
(13 -> 7, 17 -> 8, 20 -> 9), as in make_test_models.py.
"""

import argparse
import collections
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnx.version_converter
import onnxruntime as ort
from onnx import numpy_helper

try:
    import torch
    import torch.nn as nn
    import torchvision
    from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet
    from torchvision.models.mobilenetv2 import MobileNetV2
    from torchvision.ops.misc import Conv2dNormActivation
except ImportError as e:  # pragma: no cover
    sys.exit(
        "make_whole_models.py needs torch/torchvision/transformers (%s).\n"
        "Use the separate venv: /usr/bin/python3 -m venv .venv-models && "
        ".venv-models/bin/pip install -r scripts/requirements-models.txt" % e
    )

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPSETS = (13, 17, 21)
# The TorchScript exporter stops at opset 20; newer opsets are converted
# from its opset-20 export with onnx's version converter.
MAX_EXPORT_OPSET = 20
IR_FOR_OPSET = {13: 7, 17: 8, 20: 9, 21: 10}
SMALL_BUDGET_BYTES = 4 * 1024 * 1024


# --------------------------------------------------------------------------- models


class ScaledResNet(ResNet):
    """torchvision's ResNet with every stage width scaled by base/64.

    Same blocks (BasicBlock / Bottleneck from torchvision), same depths, same
    stem (7x7/2 conv, BN, ReLU, 3x3/2 max-pool), same head (global average
    pool, flatten, fc); forward() is torchvision's own.
    """

    def __init__(self, block, layers, base=64, num_classes=1000):
        nn.Module.__init__(self)
        norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = base
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, base, layers[0])
        self.layer2 = self._make_layer(block, base * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(block, base * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(block, base * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(base * 8 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")


def make_resnet18(size):
    if size == "full":
        return torchvision.models.resnet18(weights=None)
    return ScaledResNet(BasicBlock, [2, 2, 2, 2], base=3, num_classes=10)


def make_resnet50(size):
    if size == "full":
        return torchvision.models.resnet50(weights=None)
    return ScaledResNet(Bottleneck, [3, 4, 6, 3], base=2, num_classes=10)


def make_mobilenet_v2(size):
    if size == "full":
        return torchvision.models.mobilenet_v2(weights=None)
    m = torchvision.models.mobilenet_v2(weights=None, width_mult=0.1, num_classes=10)
    # MobileNetV2 keeps its 1280-channel last conv for width_mult < 1; make it
    # thin too (same Conv-BN-ReLU6 block, same Dropout+Linear classifier).
    cin = m.features[-1][0].in_channels
    last = 64
    m.features[-1] = Conv2dNormActivation(
        cin, last, kernel_size=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6
    )
    m.classifier[1] = nn.Linear(last, 10)
    m.last_channel = last
    return m


def make_mobilenet_v3_small(size):
    if size == "full":
        return torchvision.models.mobilenet_v3_small(weights=None)
    return torchvision.models.mobilenet_v3_small(weights=None, width_mult=0.15, num_classes=10)


class HFWrapper(nn.Module):
    """Calls a transformers model with keyword inputs and returns a tuple."""

    def __init__(self, model, input_names, n_outputs, ones_mask=False):
        super().__init__()
        self.model = model
        self.input_names = input_names
        self.n_outputs = n_outputs
        self.ones_mask = ones_mask

    def forward(self, *args):
        kw = dict(zip(self.input_names, args))
        if self.ones_mask:
            # An explicit all-ones mask, as a generation runtime passes it. Without
            # one, transformers 5 traces its packed-sequence detection (aten::diff),
            # which the TorchScript exporter cannot export.
            kw["attention_mask"] = torch.ones_like(kw["input_ids"])
        out = self.model(**kw, return_dict=False)
        return tuple(out[: self.n_outputs])


def make_bert(size):
    from transformers import BertConfig, BertModel

    if size == "full":  # bert-base-uncased dimensions
        cfg = BertConfig(
            vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
            intermediate_size=3072, max_position_embeddings=512, attn_implementation="eager",
        )
    else:
        cfg = BertConfig(
            vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64, attn_implementation="eager",
        )
    model = BertModel(cfg, add_pooling_layer=True)
    return HFWrapper(model, ["input_ids", "attention_mask"], 2), cfg


def make_gpt2(size):
    from transformers import GPT2Config, GPT2Model

    if size == "full":  # gpt2 (124M) dimensions
        cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                         attn_implementation="eager")
    else:
        cfg = GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2,
                         bos_token_id=99, eos_token_id=99,
                         attn_implementation="eager")
    cfg.use_cache = False
    model = GPT2Model(cfg)
    return HFWrapper(model, ["input_ids"], 1, ones_mask=True), cfg


class ConvLSTMAudio(nn.Module):
    """features [B, n_mels, T] -> Conv1d -> ReLU -> LSTM -> Linear -> [B, T, classes]."""

    def __init__(self, n_mels, channels, hidden, classes):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, channels, kernel_size=3, padding=1)
        self.relu = nn.ReLU()
        self.lstm = nn.LSTM(channels, hidden, num_layers=1, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        y = self.relu(self.conv(x))  # [B, C, T]
        y, _ = self.lstm(y.transpose(1, 2))  # [B, T, H]
        return self.fc(y)


AUDIO = {"small": dict(n_mels=8, channels=16, hidden=16, classes=6, frames=10),
         "full": dict(n_mels=80, channels=256, hidden=512, classes=32, frames=200)}


# --------------------------------------------------------------------------- inputs


def image_inputs(size):
    hw = 224 if size == "full" else 32

    def gen(rng, batch):
        return {"input": rng.standard_normal((batch, 3, hw, hw)).astype(np.float32)}

    return gen


def token_inputs(vocab, seq, with_mask):
    def gen(rng, batch):
        feeds = {"input_ids": rng.integers(0, vocab, (batch, seq), dtype=np.int64)}
        if with_mask:
            mask = np.ones((batch, seq), dtype=np.int64)
            # last row padded: a real mask with zeros (row 0 stays unpadded when batch > 1)
            mask[batch - 1, seq - max(1, seq // 3):] = 0
            feeds["attention_mask"] = mask
        return feeds

    return gen


def audio_inputs(size):
    a = AUDIO[size]

    def gen(rng, batch):
        return {"input": rng.standard_normal((batch, a["n_mels"], a["frames"])).astype(np.float32)}

    return gen


# --------------------------------------------------------------------------- helpers


def calibrate_bn(model, gen, seed):
    """Random BN affine params, then running stats from a few train-mode passes.

    Gives BatchNorm non-trivial values (so folding it into Conv is exercised)
    and keeps activations at a sane scale through deep stacks.
    """
    g = torch.Generator().manual_seed(seed)
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not bns:
        return
    with torch.no_grad():
        for bn in bns:
            bn.weight.copy_(0.5 + torch.rand(bn.weight.shape, generator=g))
            bn.bias.copy_(0.1 * torch.randn(bn.bias.shape, generator=g))
            bn.momentum = None  # cumulative average
            bn.reset_running_stats()
        model.train()
        rng = np.random.default_rng(seed)
        for _ in range(4):
            x = gen(rng, 8)
            model(*[torch.from_numpy(v) for v in x.values()])
        for bn in bns:
            bn.momentum = 0.1
    model.eval()


def write_pb(path, array, name):
    t = numpy_helper.from_array(np.ascontiguousarray(array), name=name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export(model, sample, in_names, out_names, opset, path):
    dyn = {n: {0: "batch"} for n in list(in_names) + list(out_names)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(torch.from_numpy(sample[n]) for n in in_names),
            path,
            dynamo=False,
            opset_version=min(opset, MAX_EXPORT_OPSET),
            input_names=list(in_names),
            output_names=list(out_names),
            dynamic_axes=dyn,
            do_constant_folding=True,
            export_params=True,
        )
    m = onnx.load(path)
    if opset > MAX_EXPORT_OPSET:
        m = onnx.version_converter.convert_version(m, opset)
    assert m.opset_import[0].version == opset, m.opset_import
    if m.ir_version > IR_FOR_OPSET[opset]:
        m.ir_version = IR_FOR_OPSET[opset]
    m.producer_name = "kiln-make_whole_models (torch %s)" % torch.__version__
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    return m


def op_counts(m):
    return collections.Counter(n.op_type for n in m.graph.node)


def n_params(m):
    return sum(int(np.prod(t.dims)) for t in m.graph.initializer)


# --------------------------------------------------------------------------- driver


def build_specs(size):
    """name -> (factory returning (module, input gen, in names, out names))."""
    specs = collections.OrderedDict()

    def cnn(make):
        def f():
            model = make(size)
            gen = image_inputs(size)
            return model, gen, ["input"], ["logits"]
        return f

    specs["resnet18"] = cnn(make_resnet18)
    specs["resnet50"] = cnn(make_resnet50)
    specs["mobilenet_v2"] = cnn(make_mobilenet_v2)
    specs["mobilenet_v3_small"] = cnn(make_mobilenet_v3_small)

    def bert():
        model, cfg = make_bert(size)
        seq = 128 if size == "full" else 8
        return model, token_inputs(cfg.vocab_size, seq, True), \
            ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"]

    def gpt2():
        model, cfg = make_gpt2(size)
        seq = 128 if size == "full" else 8
        return model, token_inputs(cfg.vocab_size, seq, False), ["input_ids"], ["last_hidden_state"]

    def audio():
        a = AUDIO[size]
        model = ConvLSTMAudio(a["n_mels"], a["channels"], a["hidden"], a["classes"])
        return model, audio_inputs(size), ["input"], ["logits"]

    specs["bert_encoder"] = bert
    specs["gpt2_decoder"] = gpt2
    specs["conv_lstm_audio"] = audio
    return specs


def dir_size(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def human(n):
    return "%.1f KiB" % (n / 1024.0) if n < 1024 * 1024 else "%.2f MiB" % (n / 1048576.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=["small", "full"], default="small")
    ap.add_argument("--out", help="output directory (default: test/whole-models for small, "
                    "build/whole-models for full)")
    ap.add_argument("--models", help="comma-separated subset of model names")
    ap.add_argument("--opsets", default=",".join(map(str, OPSETS)),
                    help="comma-separated opsets (default %(default)s; above 20 they are converted from the opset-20 export)")
    args = ap.parse_args()

    out = args.out or os.path.join(ROOT, "test/whole-models" if args.size == "small" else "build/whole-models")
    out = os.path.abspath(out)
    opsets = [int(x) for x in args.opsets.split(",")]
    specs = build_specs(args.size)
    names = args.models.split(",") if args.models else list(specs)
    for n in names:
        if n not in specs:
            sys.exit("unknown model %r (have: %s)" % (n, ", ".join(specs)))
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    rows = []
    for idx, name in enumerate(names):
        seed = 1000 + 17 * list(specs).index(name)
        torch.manual_seed(seed)
        model, gen, in_names, out_names = specs[name]()
        model.eval()
        calibrate_bn(model, gen, seed)
        rng = np.random.default_rng(seed)
        data_sets = [gen(rng, 2), gen(rng, 1)]
        with torch.no_grad():
            eager = [model(*[torch.from_numpy(ds[n]) for n in in_names]) for ds in data_sets]
        eager = [[t.numpy() for t in (e if isinstance(e, tuple) else (e,))] for e in eager]

        for opset in opsets:
            d = os.path.join(out, "%s_opset%d" % (name, opset))
            if os.path.isdir(d):
                shutil.rmtree(d)
            os.makedirs(d)
            mpath = os.path.join(d, "model.onnx")
            m = export(model, data_sets[0], in_names, out_names, opset, mpath)
            sess = ort.InferenceSession(mpath, providers=["CPUExecutionProvider"])
            assert [o.name for o in sess.get_outputs()] == out_names
            max_diff = 0.0
            for k, ds in enumerate(data_sets):
                dsdir = os.path.join(d, "test_data_set_%d" % k)
                os.makedirs(dsdir)
                outs = sess.run(out_names, ds)
                for j, n in enumerate(in_names):
                    write_pb(os.path.join(dsdir, "input_%d.pb" % j), ds[n], n)
                for j, (n, o) in enumerate(zip(out_names, outs)):
                    assert np.all(np.isfinite(o)), (d, n)
                    ref = eager[k][j]
                    assert o.shape == ref.shape, (d, n, o.shape, ref.shape)
                    diff = float(np.max(np.abs(o - ref)))
                    scale = float(np.max(np.abs(ref))) or 1.0
                    if diff > 1e-3 * max(1.0, scale):
                        raise SystemExit("%s: %s differs from eager torch by %g" % (d, n, diff))
                    max_diff = max(max_diff, diff)
                    write_pb(os.path.join(dsdir, "output_%d.pb" % j), o, n)
            row = dict(name=name, opset=opset, nodes=len(m.graph.node), ops=op_counts(m),
                       params=n_params(m), model_bytes=os.path.getsize(mpath),
                       dir_bytes=dir_size(d), ir=m.ir_version, max_diff=max_diff,
                       io=", ".join("%s %s" % (n, list(data_sets[0][n].shape)) for n in in_names)
                       + " -> " + ", ".join("%s %s" % (n, list(o.shape)) for n, o in zip(out_names, eager[0])))
            rows.append(row)
            print("%-34s %5d nodes %9d params %10s  max|ort-torch| %.2e" % (
                os.path.relpath(d, ROOT), row["nodes"], row["params"], human(row["model_bytes"]), max_diff))
            sys.stdout.flush()

    total = sum(r["dir_bytes"] for r in rows)  # model dirs only (not README/MANIFEST)
    print("total of %d model dirs under %s: %s" % (len(rows), os.path.relpath(out, ROOT), human(total)))
    if args.size == "small" and not args.models and len(opsets) == len(OPSETS):
        write_manifest(out, rows, total)
        if total > SMALL_BUDGET_BYTES:
            print("WARNING: small set is %s, over the %s budget" % (human(total), human(SMALL_BUDGET_BYTES)))


def write_manifest(out, rows, total):
    import transformers

    lines = [
        "# Whole-model test set: manifest",
        "",
        "Generated by `scripts/make_whole_models.py --size small`; do not edit by hand.",
        "torch %s, torchvision %s, transformers %s, onnx %s, onnxruntime %s (references)."
        % (torch.__version__, torchvision.__version__, transformers.__version__,
           onnx.__version__, ort.__version__),
        "",
        "Exporter: `torch.onnx.export(dynamo=False)` (TorchScript), constant folding on, "
        "batch dim symbolic (`batch`). Opset 21 models are the opset-20 export converted "
        "with onnx.version_converter (the TorchScript exporter stops at 20).",
        "",
        "Total size of the model directories: %s." % human(total),
        "",
        "## Models",
        "",
        "| model | opset | IR | nodes | params | model.onnx | dir | max abs(ort-torch) | I/O (data set 0) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append("| %s | %d | %d | %d | %d | %s | %s | %.1e | %s |" % (
            r["name"], r["opset"], r["ir"], r["nodes"], r["params"], human(r["model_bytes"]),
            human(r["dir_bytes"]), r["max_diff"], r["io"]))
    lines += ["", "## Op types per model (sorted, with counts)", ""]
    lines += ["| model | opset | op types |", "| --- | --- | --- |"]
    for r in rows:
        ops = ", ".join("%s×%d" % (k, v) for k, v in sorted(r["ops"].items()))
        lines.append("| %s | %d | %s |" % (r["name"], r["opset"], ops))
    by_opset = collections.defaultdict(collections.Counter)
    for r in rows:
        by_opset[r["opset"]].update(r["ops"])
    lines += ["", "## Union of op types per opset", ""]
    for opset in sorted(by_opset):
        lines.append("- opset %d (%d types): %s" % (
            opset, len(by_opset[opset]), ", ".join(sorted(by_opset[opset]))))
    lines.append("")
    with open(os.path.join(out, "MANIFEST.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
