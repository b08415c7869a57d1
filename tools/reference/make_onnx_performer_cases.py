#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ONNX Performer fixtures: tiny ViTs (vitrt_reference/deit.py with attn_factory) whose attention is lucidrains'
Performer (vitrt_reference/attn_performer.py), exported by torch.onnx.export, with PyTorch's logits in float64
and float32, so the test can check that the export imports, runs and computes what PyTorch does (and, once
the planner recognises it, plans to PerformerAttention). Run by ctest (fixture `onnx_performer_cases`):

    /usr/bin/python3 tools/reference/make_onnx_performer_cases.py --out build/fixtures/onnx_performer_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,32,32], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"blocks": attention blocks}}}).

Cases (32x32 images, patch 8, 3 heads, m = int(d·ln d) features, 5 classes):
  softmax: width 48 (d = 16, m = 44), depth 2, FAVOR+ with current lucidrains' per-(batch, head) key max;
  softmax_global: width 192 (d = 64 as in ViT-Tiny to Base, m = 266: the export computes (d^-1/4)² in
    float32, 0.12499999, a float step from PyTorch's 0.125), depth 1, the older versions' one key max over the whole batch
    ("couples_batch": an image's logits depend on the other images, so they match PyTorch's only at the
    fixture's batch of 2);
  generalized: width 60 (d = 20), depth 1, the ReLU kernel.
"""
import argparse
import json
import os
import warnings

import numpy as np
import torch

from vitrt_reference.attn_performer import PerformerAttention
from vitrt_reference.deit import VisionTransformer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261126)
    gen = torch.Generator().manual_seed(7)
    specs = {"softmax": (48, 2, False, "per_head"), "softmax_global": (192, 1, False, "global"),
             "generalized": (60, 1, True, "per_head")}
    cases = {}
    for name, (width, depth, generalized, key_max) in specs.items():
        def attn(dim, heads, generalized=generalized, key_max=key_max):
            return PerformerAttention(dim, heads=heads, generalized_attention=generalized, key_max=key_max,
                                      generator=gen)

        model = VisionTransformer(img_size=32, patch_size=8, num_classes=5, embed_dim=width, depth=depth,
                                  num_heads=3,
                                  attn_factory=attn).eval()
        with torch.no_grad():  # timm's zero-initialised tokens and embeddings made non-trivial
            for p in (model.cls_token, model.pos_embed):
                p.normal_(0, 0.5)
        x = torch.randn(2, 3, 32, 32)
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
        cases[name] = {"blocks": depth, "couples_batch": key_max == "global"}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
