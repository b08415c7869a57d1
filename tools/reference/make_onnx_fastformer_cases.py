#!/usr/bin/python3
"""ONNX Fastformer fixtures: tiny image models using the official Fastformer attention
(vitrt_reference/attn_fastformer.py: FastAttention = FastSelfAttention + BertSelfOutput, docs/linear_attention.md)
exported by torch.onnx.export, with PyTorch's logits in float64 and float32, so the test can check that each
attention imports, plans to FastformerAttention (the planner's fuse_fastformer) and computes what PyTorch does. Run
by ctest (fixture `onnx_fastformer_cases`):

    /usr/bin/python3 tools/reference/make_onnx_fastformer_cases.py --out build/fixtures/onnx_fastformer_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,S,S], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"blocks": Fastformer attentions}}}).

Cases (each well under 1 MB, a second or two to make):
  module: a 4x4 patch conv on 20x20 images (25 tokens of 28 channels), FastAttention with 4 heads (d = 7), the
          token mean and a linear head;
  vit:    deit.py's VisionTransformer (32x32 images, 8x8 patches, 17 tokens, width 48, 3 heads, depth 2) with
          attn_factory = the official FastAttention, so each pre-norm block is x + LN(dense(fast(norm1 x)) + norm1 x).
query_att / key_att get 4x the test init's weights so that the softmaxes over tokens are far from uniform.
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
from vitrt_reference.attn_fastformer import FastAttention, fastformer_attention  # noqa: E402
from vitrt_reference.common import calibrate_heads, init_for_tests, make_images  # noqa: E402
from vitrt_reference.deit import VisionTransformer  # noqa: E402


class PatchNet(nn.Module):
    def __init__(self, dim, heads, patch=4, classes=7):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.attn = FastAttention(dim, heads)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.attn(self.patch(x).flatten(2).transpose(1, 2)).mean(1))


@torch.no_grad()
def sharpen_scores(model, gain=4.0):
    for name, m in model.named_modules():
        if name.endswith("query_att") or name.endswith("key_att"):
            m.weight.mul_(gain)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(2)
    nets = {
        "module": (PatchNet(28, 4), 20, 1),
        "vit": (VisionTransformer(img_size=32, patch_size=8, num_classes=10, embed_dim=48, depth=2, num_heads=3,
                                  attn_factory=fastformer_attention), 32, 2),
    }
    cases = {}
    for i, (name, (model, size, blocks)) in enumerate(nets.items()):
        model.eval()
        init_for_tests(model, 20261153 + i)
        sharpen_scores(model)
        x = torch.from_numpy(make_images(2, size, 53 + i))
        calibrate_heads(model, x)
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
        cases[name] = {"blocks": blocks}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
