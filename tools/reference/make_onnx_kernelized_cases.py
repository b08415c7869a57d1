#!/usr/bin/python3
"""ONNX fixtures for KernelizedAttention: tiny ViTs with the linear-attention family's kernelized attentions,
exported by torch.onnx.export, with PyTorch's logits in float64 and float32, so the test can check that the
exported attention imports, plans to KernelizedAttention and computes what PyTorch does. Run by ctest
(fixture `onnx_kernelized_cases`):

    /usr/bin/python3 tools/reference/make_onnx_kernelized_cases.py --out build/fixtures/onnx_kernelized_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,32,32], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"blocks": attention blocks}}}).

Cases (vitrt_reference.attn_efficient.PatchTokenViT: 8x8 patches of a 32x32 image, a 4x4 grid without class
token, mean-pooled head; width 24; about 60 KB each):
  efficient_h2:           the official EfficientAttention, 2 heads, key and value channels 24, depth 2;
  efficient_h4_dk16_dv32: 4 heads, 16 key channels (4 per head), 32 value channels (8 per head), depth 1;
  queries_over_positions: EfficientAttention with the queries softmaxed over positions too (not the
                          mechanism): must stay unfused ("blocks": 0) and still compute what PyTorch does;
  linear_transformer:     the DeiT reference (class token) with idiap's AttentionLayer + LinearAttention
                          (vitrt_reference.attn_linear), 3 heads, depth 1: imported (Elu, the three-operand
                          Einsum) and fused by fuse_linear_transformer ("blocks": 1).
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vitrt_reference.attn_efficient import EfficientAttention, GridAttention, PatchTokenViT  # noqa: E402
from vitrt_reference.attn_efficient import efficient_attention_factory  # noqa: E402
from vitrt_reference.attn_linear import linear_attention_factory  # noqa: E402
from vitrt_reference.deit import VisionTransformer  # noqa: E402


class QueriesOverPositions(EfficientAttention):
    """EfficientAttention with query = softmax(queries_i, dim=2): a near miss the planner must leave alone."""

    def forward(self, input_):
        n, _, h, w = input_.size()
        keys = self.keys(input_).reshape((n, self.key_channels, h * w))
        queries = self.queries(input_).reshape(n, self.key_channels, h * w)
        values = self.values(input_).reshape((n, self.value_channels, h * w))
        hk, hv = self.key_channels // self.head_count, self.value_channels // self.head_count
        out = []
        for i in range(self.head_count):
            key = torch.softmax(keys[:, i * hk:(i + 1) * hk, :], dim=2)
            query = torch.softmax(queries[:, i * hk:(i + 1) * hk, :], dim=2)
            context = key @ values[:, i * hv:(i + 1) * hv, :].transpose(1, 2)
            out.append((context.transpose(1, 2) @ query).reshape(n, hv, h, w))
        return self.reprojection(torch.cat(out, dim=1)) + input_


def near_miss_factory(grid):
    def make(dim, heads):
        m = GridAttention(dim, heads, grid)
        m.attn = QueriesOverPositions(dim, dim, heads, dim)
        return m
    return make


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261126)
    specs = {  # name: heads, attention factory, depth, fused blocks
        "efficient_h2": (2, efficient_attention_factory((4, 4), 24, 24), 2, 2),
        "efficient_h4_dk16_dv32": (4, efficient_attention_factory((4, 4), 16, 32), 1, 1),
        "queries_over_positions": (2, near_miss_factory((4, 4)), 1, 0),
        "linear_transformer": (3, linear_attention_factory(), 1, 1),
    }
    cases = {}
    for name, (heads, factory, depth, fused) in specs.items():
        vit = VisionTransformer if name == "linear_transformer" else PatchTokenViT
        model = vit(img_size=32, patch_size=8, num_classes=7, embed_dim=24, depth=depth, num_heads=heads,
                    attn_factory=factory).eval()
        with torch.no_grad():  # the zero-initialised position embedding made visible
            model.pos_embed.normal_(0, 0.5)
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
        cases[name] = {"blocks": fused}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
