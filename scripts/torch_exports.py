"""torchvision architectures exported here with PyTorch's dynamo exporter.

Part of the real-model corpus (scripts/make_real_models.py --exported):
segmentation (LRASPP, DeepLabV3), a detector without its NMS (RetinaNet's
FPN, heads and box decoding), vision transformers (ViT, Swin V2, MaxViT)
and convolutional classifiers (ConvNeXt, RegNet, ShuffleNetV2), each built
from torchvision's own classes at small widths with seeded random weights
(batch-norm statistics randomized too, so that no normalization is an
identity) and exported with `torch.onnx.export(dynamo=True)`. torch and torchvision are imported only
when a model is built.
"""

import contextlib
import io
import warnings

import numpy as np


def _small_mobilenet():
    import torchvision
    return torchvision.models.mobilenet_v3_small(width_mult=0.25).features


def _getter(features, positions):
    from torchvision.models._utils import IntermediateLayerGetter
    return IntermediateLayerGetter(features, {str(p): name for name, p in positions.items()})


def lraspp():
    from torchvision.models.segmentation.lraspp import LRASPP
    features = _small_mobilenet()
    low, high = 3, len(features) - 1
    return LRASPP(_getter(features, {"low": low, "high": high}), features[low].out_channels,
                  features[high].out_channels, num_classes=5, inter_channels=16), (1, 3, 64, 96)


def deeplabv3():
    import torch
    from torchvision.models.segmentation.deeplabv3 import ASPP, DeepLabV3
    features = _small_mobilenet()
    out = len(features) - 1
    # DeepLabHead with 16 channels instead of 256: ASPP at rates 12, 24 and
    # 36 on the 3x3 map of a 96-pixel image, where only their centre taps
    # read the image.
    head = torch.nn.Sequential(
        ASPP(features[out].out_channels, [12, 24, 36], out_channels=16),
        torch.nn.Conv2d(16, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(), torch.nn.Conv2d(16, 4, 1))
    return DeepLabV3(_getter(features, {"out": out}), head), (1, 3, 96, 96)


def retinanet():
    import torch
    from torchvision.models.detection import _utils as det_utils
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.image_list import ImageList
    from torchvision.models.detection.retinanet import RetinaNetHead
    from torchvision.ops import FeaturePyramidNetwork
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7

    class RetinaNetWithoutNms(torch.nn.Module):
        """Backbone, FPN with P6/P7, heads, anchors and box decoding: what
        RetinaNet computes before its score threshold and NMS."""

        def __init__(self):
            super().__init__()
            features = _small_mobilenet()
            levels = [3, 8, len(features) - 1]
            self.body = _getter(features, {str(k): p for k, p in enumerate(levels)})
            self.fpn = FeaturePyramidNetwork([features[p].out_channels for p in levels], 16,
                                             extra_blocks=LastLevelP6P7(16, 16))
            self.head = RetinaNetHead(16, 9, 6)
            self.coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
            sizes = tuple((s, int(s * 2 ** (1 / 3)), int(s * 2 ** (2 / 3)))
                          for s in (16, 32, 64, 128, 256))
            self.anchors = AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * len(sizes))

        def forward(self, x):
            feats = list(self.fpn(self.body(x)).values())
            out = self.head(feats)
            anchors = self.anchors(ImageList(x, [tuple(x.shape[-2:])]), feats)[0]
            boxes = self.coder.decode_single(out["bbox_regression"][0], anchors)
            return torch.sigmoid(out["cls_logits"]), boxes

    return RetinaNetWithoutNms(), (1, 3, 96, 96)


def vit():
    from torchvision.models import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                             hidden_dim=32, mlp_dim=64, num_classes=10), (2, 3, 32, 32)


def swin_v2():
    from torchvision.models.swin_transformer import (PatchMergingV2, SwinTransformer,
                                                     SwinTransformerBlockV2)
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                           window_size=[4, 4], num_classes=10, stochastic_depth_prob=0.0,
                           block=SwinTransformerBlockV2,
                           downsample_layer=PatchMergingV2), (1, 3, 64, 64)


def maxvit():
    from torchvision.models.maxvit import MaxVit
    return MaxVit(input_size=(64, 64), stem_channels=16, partition_size=4, block_channels=[16, 32],
                  block_layers=[1, 1], head_dim=8, stochastic_depth_prob=0.0,
                  num_classes=10), (1, 3, 64, 64)


def convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)],
                    num_classes=10), (2, 3, 64, 64)


def regnet():
    from torchvision.models.regnet import BlockParams, RegNet
    params = BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0, group_width=8,
                                          se_ratio=0.25)
    return RegNet(params, num_classes=10), (2, 3, 64, 64)


def shufflenet():
    from torchvision.models.shufflenetv2 import ShuffleNetV2
    return ShuffleNetV2([2, 2, 2], [16, 32, 64, 128, 256], num_classes=10), (2, 3, 64, 64)


def export(architecture):
    """Builds `architecture` (a function above) with seeded weights and
    exports it: (ONNX bytes, input of data set 0, input of data set 1)."""
    import torch
    torch.manual_seed(0)
    model, shape = architecture()
    model.eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    x0, x1 = torch.randn(shape), torch.randn(shape)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model, (x0,), dynamo=True)
    program.optimize()
    data = program.model_proto.SerializeToString()
    _check_against_torch(model, data, x0)
    return data, x0.numpy(), x1.numpy()


def _check_against_torch(model, data, x):
    """onnxruntime's outputs must be PyTorch's: the export is faithful."""
    import onnxruntime as ort
    import torch
    with torch.no_grad():
        expected = model(x)
    if isinstance(expected, dict):
        expected = [expected["out"]]
    elif isinstance(expected, torch.Tensor):
        expected = [expected]
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    for g, e in zip(got, expected):
        err = float(np.abs(g - e.numpy()).max())
        if err > 1e-4:
            raise RuntimeError("onnxruntime differs from PyTorch by %g" % err)
