#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ONNX Linformer fixtures: tiny ViTs (vitrt_reference/deit.py with attn_factory) whose attention is one of the
Linformer layouts (vitrt_reference/attn_linformer.py), exported by torch.onnx.export, with PyTorch's logits in
float64, so the test can check that the export imports, plans the attention as SoftmaxAttention on N queries
and k compressed keys, and computes what PyTorch does. Run by ctest (fixture `onnx_linformer_cases`):

    /usr/bin/python3 tools/reference/make_onnx_linformer_cases.py --out build/fixtures/onnx_linformer_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,32,32], DIR/<case>.logits64.npy and
DIR/manifest.json ({"cases": {name: {"blocks": attention blocks}}}).

Cases (32x32 images, patch 8: N = 17 tokens, width 48, 3 heads of d = 16, 5 classes, depth 2):
  fairseq: compress_k / compress_v trained for 24 tokens (the first 17 columns used), k = 8;
  fairseq_shared: shared_kv_compressed, k = 5;
  lucidrains: proj_k / proj_v trained for 20 tokens (rows [:17]), k = 8;
  lucidrains_shared: share_kv (values are the compressed keys), k = 6;
  lucidrains_one_kv_head: one_kv_head (one key/value head expanded to every query head), k = 6;
  lucidrains_one_kv_head_d7: the same at width 21, 3 heads of d = 7, trained for 19 tokens, k = 5;
  lra: mlpen's LRA Linformer, one E [3, 7, 20] shared by K, V and both blocks (E[:, :, :17] used);
  lra_d7: the same at width 7, one head of d = 7 (scores divided by sqrt(7), not a power of 2), E [1, 5, 17].
In the one_kv_head and LRA forms the compressed keys exist only as heads [B, h, k, d]; fuse_attention merges
them into the [B, k, C] tokens the fused SoftmaxAttention reads (docs/linear_attention.md, Linformer).
"""
import argparse
import json
import math
import os
import warnings

import numpy as np
import torch

from vitrt_reference.attn_linformer import LinformerFairseq, LinformerLRA, LinformerLucidrains
from vitrt_reference.deit import VisionTransformer

TOKENS = 17
CASES = {
    "fairseq": lambda d, h: LinformerFairseq(d, h, max_seq_len=24, k_len=8),
    "fairseq_shared": lambda d, h: LinformerFairseq(d, h, max_seq_len=TOKENS, k_len=5, shared_kv_compressed=True),
    "lucidrains": lambda d, h: LinformerLucidrains(d, h, seq_len=20, k=8),
    "lucidrains_shared": lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS, k=6, share_kv=True),
    "lucidrains_one_kv_head": lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS, k=6, one_kv_head=True),
    "lucidrains_one_kv_head_d7": lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS + 2, k=5, one_kv_head=True),
    "lra": None,  # lra_factory(): one E per model
    "lra_d7": None,
}
# (embed_dim, heads) where not (48, 3); the LRA cases' (k, trained length) of E
WIDTH = {"lucidrains_one_kv_head_d7": (21, 3), "lra_d7": (7, 1)}
LRA_E = {"lra": (7, 20), "lra_d7": (5, TOKENS)}


def lra_factory(k, length):
    shared = []

    def make(d, h):
        if not shared:
            shared.append(torch.nn.Parameter(torch.zeros(h, k, length)))
        return LinformerLRA(d, h, shared[0])
    return make


@torch.no_grad()
def sharpen(model, gen):
    """Query/key projections with gain 1.5 and compressions at 2/sqrt(N), so that the attention is far from
    uniform; timm's zero-initialised tokens and embeddings made non-trivial."""
    for name, p in model.named_parameters():
        if name.endswith(("to_q.weight", "to_k.weight", "q_proj.weight", "k_proj.weight")):
            p.copy_(torch.randn(*p.shape, generator=gen) * (1.5 / math.sqrt(p.shape[1])))
        elif name.endswith(".attn.E"):
            p.copy_(torch.randn(*p.shape, generator=gen) * (2.0 / math.sqrt(p.shape[2])))
        elif name.endswith(("proj_k", "proj_v")) or "compress_" in name:
            n = p.shape[0] if name.endswith(("proj_k", "proj_v")) else p.shape[1]
            p.copy_(torch.randn(*p.shape, generator=gen) * (2.0 / math.sqrt(n)))
    for p in (model.cls_token, model.pos_embed):
        p.normal_(0, 0.5, generator=gen)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261127)
    gen = torch.Generator().manual_seed(11)
    cases = {}
    for name, factory in CASES.items():
        dim, heads = WIDTH.get(name, (48, 3))
        model = VisionTransformer(img_size=32, patch_size=8, num_classes=5, embed_dim=dim, depth=2, num_heads=heads,
                                  attn_factory=factory or lra_factory(*LRA_E[name])).eval()
        sharpen(model, gen)
        x = torch.randn(2, 3, 32, 32, generator=gen)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, os.path.join(args.out, f"{name}.onnx"), opset_version=17,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
        with torch.no_grad():
            y64 = model.double()(x.double()).numpy()
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        cases[name] = {"blocks": 2}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
