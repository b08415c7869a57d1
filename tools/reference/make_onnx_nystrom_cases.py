#!/usr/bin/python3
"""ONNX Nyströmformer fixtures: the official Nyströmformer attention (tools/reference/vitrt_reference/
attn_nystrom.py) exported by torch.onnx.export alone and inside a small ViT, with PyTorch's outputs in float64
and float32, so the test can check that the export imports, plans to NystromAttention (the planner's
fuse_nystrom_attention) and computes what PyTorch does. Run by ctest (fixture `onnx_nystrom_cases`):

    /usr/bin/python3 tools/reference/make_onnx_nystrom_cases.py --out build/fixtures/onnx_nystrom_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy (batch 2 of images), DIR/<case>.out64.npy and
.out32.npy (the logits of the batch of 2), DIR/<case>.first64.npy (item 0 alone: the global initialisation couples
the items of a batch) and DIR/manifest.json ({"cases": {name: {"attentions": fused ops expected}}}).

Cases (a few seconds in all). vitrt-convert takes an image model, so the module cases run the attention in a
small patch net (PatchNet: 4x4 patch conv, optionally a class token, the attention, the token mean, a linear head):
  module_lra: 16x16 images -> 16 patch tokens + a class token = 17 tokens of 16 channels, 2 heads, m = 4
              (17 % 4 != 0: the T2T segment rule), V conv of 3 taps, Q and K / d^(1/4), the global ("original")
              initialisation;
  module_t2t: 16x16 images -> 16 tokens of 24 channels, 3 heads, m = 8 (segments of 2), no conv, Q / sqrt(d),
              per-(b,h) ("exact");
  vit: a DeiT-style ViT (32x32 images, 8x8 patches: 17 tokens with the class token, width 32, depth 2,
       2 heads) whose blocks use the module_lra attention.
"""
import argparse
import json
import os
import sys
import warnings
from functools import partial

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vitrt_reference.attn_nystrom import NystromBlockAttention  # noqa: E402
from vitrt_reference.common import init_for_tests  # noqa: E402
from vitrt_reference.deit import VisionTransformer  # noqa: E402


class PatchNet(nn.Module):
    """4x4 patch conv -> [B,N,C] tokens (after a class token when cls) -> the attention -> mean -> Linear."""

    def __init__(self, attn, dim, cls, classes=7):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, stride=4)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim)) if cls else None
        self.attn = attn
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        if self.cls_token is not None:
            t = torch.cat((self.cls_token.expand(t.shape[0], -1, -1), t), dim=1)
        return self.head(self.attn(t).mean(1))


def export(model, x, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261126)
    lra = partial(NystromBlockAttention, num_landmarks=4, conv_kernel_size=3, init_option="original", scales="lra")
    models = {
        "module_lra": (PatchNet(lra(16, 2), 16, cls=True), torch.randn(2, 3, 16, 16), 1),
        "module_t2t": (PatchNet(NystromBlockAttention(24, 3, num_landmarks=8, init_option="exact", scales="t2t"), 24,
                                cls=False), torch.randn(2, 3, 16, 16), 1),
        "vit": (VisionTransformer(img_size=32, patch_size=8, num_classes=10, embed_dim=32, depth=2, num_heads=2,
                                  attn_factory=lra), torch.randn(2, 3, 32, 32), 2),
    }
    cases = {}
    for name, (model, x, attentions) in models.items():
        model.eval()
        with torch.no_grad():
            if name == "vit":
                init_for_tests(model, 7)
            else:  # projections large enough that the softmax kernels are far from uniform
                for p in model.attn.parameters():
                    p.mul_(2.0)
        export(model, x, os.path.join(args.out, f"{name}.onnx"))
        with torch.no_grad():
            y32 = model(x).numpy()
            m64 = model.double()
            y64 = m64(x.double()).numpy()
            first64 = m64(x[:1].double()).numpy()
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.out32.npy"), y32.astype(np.float64))
        np.save(os.path.join(args.out, f"{name}.out64.npy"), y64)
        np.save(os.path.join(args.out, f"{name}.first64.npy"), first64)
        cases[name] = {"attentions": attentions}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
