#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ONNX fixtures of attention written the way Hugging Face's transformers writes it for ViT, DeiT, Swin and
PVT v2 (our own small modules with the same arithmetic; the transformers package is not in Debian): separate
query, key and value Linears, heads split by view(x.size()[:-1] + (h, d)).permute(0, 2, 1, 3), the scores
q @ k.transpose(-1, -2) divided by math.sqrt(d), softmax, @ v, permute back and view. torch exports a Div; for a
head size that is not a power of 4 (32, 48, 7, ...) sqrt(d) is not a power of 2 and the importer keeps it (for
d = 64 it writes a multiply by 0.125). The test checks that each attention plans to one SoftmaxAttention and that the logits match
PyTorch's float64 ones. Run by ctest (fixture `onnx_hf_attention_cases`):

    /usr/bin/python3 tools/reference/make_onnx_hf_attention_cases.py --out build/fixtures/onnx_hf_attention_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,32,32], DIR/<case>.logits64.npy and
DIR/manifest.json ({"cases": {name: {"blocks": attention blocks, "head_size": d, "terms": score terms per
block, "scale": "scores", "q" or "cosine"}}}).

Cases (32x32 images, 5 classes, depth 2):
  vit_d32: ViT (patch 8: 16 patches + CLS = 17 tokens), width 96, 3 heads of d = 32;
  vit_d7: width 21, 3 heads of d = 7;
  vit_1head_d48: width 48, one head of d = 48;
  vit_qdiv_d12: width 48, 4 heads of d = 12, q divided by sqrt(d) before the product (as some code writes it);
  packed_d24: one qkv Linear, reshape(B, N, 3, h, d).permute(2, 0, 3, 1, 4), q, k, v = qkv[0], qkv[1], qkv[2],
    then the same Div by sqrt(d); width 72, 3 heads of d = 24;
  swin_d32: Swin's window attention (patch 4: an 8x8 grid, windows of 4x4, width 64, 2 heads of d = 32): the
    scores divided by sqrt(d), plus the relative position bias gathered from its table, and in the second block
    (windows shifted by 2 with torch.roll) the attention mask, built in the forward pass from the image size as
    Hugging Face builds it, added through a view [B, nW, h, N, N];
  swinv2_d32: the same with Swin V2's cosine attention (q and k L2-normalised, a per-head logit scale) and its
    bias table from a small MLP of relative coordinates, 16·sigmoid, as Hugging Face's Swin V2 writes them;
  pvt_d32: PVT v2's spatial-reduction attention (patch 4: 64 tokens, width 64, 2 heads of d = 32): keys and
    values from the grid reduced 4x4 by a strided conv and a LayerNorm, 4 keys for 64 queries.
"""
import argparse
import json
import math
import os
import warnings

import numpy as np
import torch
from torch import nn


def split_heads(x, heads):
    """[B, N, h*d] -> [B, h, N, d], as transformers' transpose_for_scores."""
    shape = x.size()[:-1] + (heads, x.size(-1) // heads)
    return x.view(shape).permute(0, 2, 1, 3)


def merge_heads(x):
    """[B, h, N, d] -> [B, N, h*d]."""
    x = x.permute(0, 2, 1, 3).contiguous()
    return x.view(x.size()[:-2] + (x.size(-2) * x.size(-1),))


class SeparateAttention(nn.Module):
    """`q_first`: q / sqrt(d) before the product instead of the scores after it."""
    def __init__(self, dim, heads, q_first=False):
        super().__init__()
        self.heads, self.head_size, self.q_first = heads, dim // heads, q_first
        self.query, self.key, self.value = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.output = nn.Linear(dim, dim)

    def keys_of(self, x):
        return x

    def product(self, q, k):
        if self.q_first:
            return torch.matmul(q / math.sqrt(self.head_size), k.transpose(-1, -2))
        return torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)

    def forward(self, x, terms=None):
        q = split_heads(self.query(x), self.heads)
        kv = self.keys_of(x)
        k = split_heads(self.key(kv), self.heads)
        s = self.product(q, k)
        if terms is not None:
            s = terms(s)
        p = nn.functional.softmax(s, dim=-1)
        return self.output(merge_heads(torch.matmul(p, split_heads(self.value(kv), self.heads))))


class ReducedAttention(SeparateAttention):
    """PVT v2's spatial-reduction attention: keys and values from the token grid reduced by a strided conv and a
    LayerNorm (grid x grid tokens in, (grid / ratio)^2 keys)."""
    def __init__(self, dim, heads, grid, ratio):
        super().__init__(dim, heads)
        self.grid = grid
        self.sr, self.norm = nn.Conv2d(dim, dim, ratio, ratio), nn.LayerNorm(dim)

    def keys_of(self, x):
        b, n, c = x.shape
        y = self.sr(x.permute(0, 2, 1).reshape(b, c, self.grid, self.grid))
        return self.norm(y.reshape(b, c, -1).permute(0, 2, 1))


class PackedAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_size = heads, dim // heads
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        p = (torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_size)).softmax(dim=-1)
        return self.proj(torch.matmul(p, v).transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim, attn):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-12), attn
        self.norm2, self.fc1, self.fc2 = nn.LayerNorm(dim, eps=1e-12), nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm2(x))))


class ViT(nn.Module):
    """ViT / DeiT with a CLS token (bench/export_onnx_zoo.py builds hf_vit_d32 from it at 224, depth 12)."""
    def __init__(self, dim, heads, packed=False, image=32, patch=8, depth=2, classes=5, q_first=False):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.5)
        attn = (lambda: PackedAttention(dim, heads)) if packed else (lambda: SeparateAttention(dim, heads, q_first))
        self.blocks = nn.ModuleList([Block(dim, attn()) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim, eps=1e-12), nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


class Pvt(nn.Module):
    """PVT v2's first stage, shrunk: patch 4 (an 8x8 grid), width 64, 2 heads, keys reduced 4x4 -> 2x2."""
    def __init__(self, dim=64, heads=2):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, 4)
        self.blocks = nn.ModuleList([Block(dim, ReducedAttention(dim, heads, 8, 4)) for _ in range(2)])
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, 5)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x).mean(1))


def window_partition(x, w):
    b, h, wd, c = x.shape
    x = x.view(b, h // w, w, wd // w, w, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, w, w, c)


def window_reverse(windows, w, h, wd):
    c = windows.shape[-1]
    x = windows.view(-1, h // w, wd // w, w, w, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, h, wd, c)


class WindowAttention(SeparateAttention):
    """Swin's window attention; with `cosine`, Swin V2's: normalize(q) @ normalize(k)ᵀ times a per-head
    exp(clamp(logit_scale)), and the bias table computed by a small MLP from relative coordinates, 16·sigmoid."""
    def __init__(self, dim, heads, window, cosine=False):
        super().__init__(dim, heads)
        self.window, self.cosine = window, cosine
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads))
        if cosine:
            self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((heads, 1, 1))) + torch.randn(heads, 1, 1) * 0.3)
            self.register_buffer("coords", torch.randn((2 * window - 1) ** 2, 2))
            self.cpb = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, heads, bias=False))
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window - 1
        rel[:, :, 1] += window - 1
        rel[:, :, 0] *= 2 * window - 1
        self.register_buffer("index", rel.sum(-1))

    def product(self, q, k):
        if not self.cosine:
            return super().product(q, k)
        s = nn.functional.normalize(q, dim=-1) @ nn.functional.normalize(k, dim=-1).transpose(-2, -1)
        return s * torch.clamp(self.logit_scale, max=math.log(1.0 / 0.01)).exp()

    def forward(self, x, mask=None):
        n = self.window * self.window

        def terms(s):
            table = self.cpb(self.coords) if self.cosine else self.table
            bias = table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1).contiguous()
            if self.cosine:
                bias = 16 * torch.sigmoid(bias)
            s = s + bias.unsqueeze(0)
            if mask is not None:
                windows = mask.shape[0]
                s = s.view(x.shape[0] // windows, windows, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
                s = s.view(-1, self.heads, n, n)
            return s
        return super().forward(x, terms)


class SwinBlock(nn.Module):
    def __init__(self, dim, heads, window, shift, cosine):
        super().__init__()
        self.window, self.shift = window, shift
        self.norm1, self.attn = nn.LayerNorm(dim), WindowAttention(dim, heads, window, cosine)
        self.norm2, self.fc1, self.fc2 = nn.LayerNorm(dim), nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)

    def attn_mask(self, h, w):
        if self.shift == 0:
            return None
        img = torch.zeros((1, h, w, 1))
        cuts = (slice(0, -self.window), slice(-self.window, -self.shift), slice(-self.shift, None))
        count = 0
        for hs in cuts:
            for ws in cuts:
                img[:, hs, ws, :] = count
                count += 1
        windows = window_partition(img, self.window).view(-1, self.window * self.window)
        mask = windows.unsqueeze(1) - windows.unsqueeze(2)
        return mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)

    def forward(self, x, h, w):
        b, n, c = x.shape
        y = self.norm1(x).view(b, h, w, c)
        if self.shift:
            y = torch.roll(y, shifts=(-self.shift, -self.shift), dims=(1, 2))
        y = window_partition(y, self.window).view(-1, self.window * self.window, c)
        y = self.attn(y, self.attn_mask(h, w)).view(-1, self.window, self.window, c)
        y = window_reverse(y, self.window, h, w)
        if self.shift:
            y = torch.roll(y, shifts=(self.shift, self.shift), dims=(1, 2))
        x = x + y.reshape(b, n, c)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm2(x))))


class Swin(nn.Module):
    def __init__(self, dim=64, heads=2, window=4, cosine=False):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, 4)
        self.blocks = nn.ModuleList([SwinBlock(dim, heads, window, s, cosine) for s in (0, window // 2)])
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, 5)

    def forward(self, x):
        x = self.patch(x)
        h, w = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        for b in self.blocks:
            x = b(x, h, w)
        return self.head(self.norm(x).mean(1))


# name -> (model factory, head size, score terms per attention block, the scale's form: "scores" (the scores
# divided by sqrt(d)), "q" (q divided by it before the product) or "cosine" (Swin V2's))
CASES = {
    "vit_d32": (lambda: ViT(96, 3), 32, ["none", "none"], "scores"),
    "vit_d7": (lambda: ViT(21, 3), 7, ["none", "none"], "scores"),
    "vit_1head_d48": (lambda: ViT(48, 1), 48, ["none", "none"], "scores"),
    "vit_qdiv_d12": (lambda: ViT(48, 4, q_first=True), 12, ["none", "none"], "q"),
    "packed_d24": (lambda: ViT(72, 3, packed=True), 24, ["none", "none"], "scores"),
    "swin_d32": (lambda: Swin(), 32, ["bias", "bias_mask"], "scores"),
    "swinv2_d32": (lambda: Swin(cosine=True), 32, ["bias", "bias_mask"], "cosine"),
    "pvt_d32": (lambda: Pvt(), 32, ["none", "none"], "scores"),
}


@torch.no_grad()
def sharpen(model, gen):
    """Query and key projections at gain 1.5 and biases and LayerNorm affines redrawn, so that the attention is far
    from uniform and every term matters."""
    for name, p in model.named_parameters():
        if name.endswith(("query.weight", "key.weight", "qkv.weight")):
            p.copy_(torch.randn(*p.shape, generator=gen) * (1.5 / math.sqrt(p.shape[1])))
        elif p.dim() == 1:
            p.add_(torch.randn(*p.shape, generator=gen) * 0.2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261129)
    gen = torch.Generator().manual_seed(29)
    cases = {}
    for name, (factory, head_size, terms, scale) in CASES.items():
        model = factory().eval()
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
        cases[name] = {"blocks": len(terms), "head_size": head_size, "terms": terms, "scale": scale}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
