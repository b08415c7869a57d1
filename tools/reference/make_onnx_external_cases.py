#!/usr/bin/python3
"""ONNX External Attention fixtures (docs/linear_attention.md, "External Attention"): EANet's attention modules
(tools/reference/vitrt_reference/attn_external.py) in tiny image nets exported by torch.onnx.export, with
PyTorch's logits in float64 and float32, so the test can check that the exported attention imports, plans to
ExternalAttention (the planner's fuse_external_attention) and computes what PyTorch does. Run by ctest
(fixture `onnx_external_cases`):

    /usr/bin/python3 tools/reference/make_onnx_external_cases.py --out build/fixtures/onnx_external_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,H,W], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"attentions": fused ops expected}}}).

Cases (under 300 KB each, a second to make):
  eamlp_block: a 4x4 patch conv to 25 tokens of 24 channels, x + EAMLP's Attention(24, 2 heads) (8 heads of
               width 12, 64 slots, biases, eps 1e-9), the token mean, a linear head;
  xmu_block:   the same net with xmu-xiaoma666's ExternalAttention(24, S=13) (one head, no bias, no eps);
  vit_eamlp:   deit.VisionTransformer (image 32, patch 8, width 48, depth 2, 3 heads, 10 classes) with
               attn_factory=EAMLPAttention: 17 tokens, 12 heads of 16, 64 slots, two fused attentions.
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vitrt_reference.attn_external import EAMLPAttention, ExternalAttention  # noqa: E402
from vitrt_reference.deit import VisionTransformer  # noqa: E402


class TokenNet(nn.Module):
    """image -> 4x4 patch conv -> tokens [B,N,C] -> x + attn(x) -> mean over tokens -> head."""

    def __init__(self, attn, c=24, classes=5):
        super().__init__()
        self.patch = nn.Conv2d(3, c, 4, stride=4)
        self.attn = attn
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = t + self.attn(t)
        return self.head(t.mean(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261152)
    torch.set_num_threads(2)
    nets = {
        "eamlp_block": (TokenNet(EAMLPAttention(24, 2)), 20, 1),
        "xmu_block": (TokenNet(ExternalAttention(24, 13)), 20, 1),
        "vit_eamlp": (VisionTransformer(img_size=32, patch_size=8, num_classes=10, embed_dim=48, depth=2,
                                        num_heads=3, attn_factory=EAMLPAttention), 32, 2),
    }
    cases = {}
    for name, (model, size, attentions) in nets.items():
        model.eval()
        with torch.no_grad():  # position embedding and class token away from zero, as trained ones are
            for pname, p in model.named_parameters():
                if pname in ("pos_embed", "cls_token"):
                    p.normal_(0.0, 0.02)
        x = torch.randn(2, 3, size, size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, os.path.join(args.out, f"{name}.onnx"), opset_version=17,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
        with torch.no_grad():
            y32 = model(x).numpy()
            y64 = model.double()(x.double()).numpy()
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits32.npy"), y32.astype(np.float32))
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        cases[name] = {"attentions": attentions}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
