# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""Nyströmformer op cases for make_op_cases.py: the NystromAttention op (docs/linear_attention.md).

Computed with torch ops the way mlpen/Nystromformer's official `NystromAttention` does it (LRA/code/
attention_nystrom.py): heads split head-major, Q and K scaled, landmarks as segment means (the T2T-ViT file's
rule when m does not divide N: the first (N//m + 1)·m − N segments hold N//m tokens, the rest one more),
three softmax kernels, `iterative_inv` with the "original" (one max over batch and heads) or per-(b,h)
initialisation, (k1 @ Z) @ (k3 @ V), plus the depthwise Conv2d(h, h, (ks, 1), padding (ks//2, 0)) on V.
"""
import math

import torch
import torch.nn.functional as F


def segment_means(x, m):
    """Means of x [B,h,N,d] over m contiguous token segments: [B,h,m,d]."""
    n = x.shape[-2]
    if n % m == 0:
        return x.reshape(*x.shape[:-2], m, n // m, x.shape[-1]).mean(dim=-2)
    base = n // m
    small = (base + 1) * m - n
    head = x[..., :small * base, :].reshape(*x.shape[:-2], small, base, x.shape[-1]).mean(dim=-2)
    tail = x[..., small * base:, :].reshape(*x.shape[:-2], m - small, base + 1, x.shape[-1]).mean(dim=-2)
    return torch.cat([head, tail], dim=-2)


def iterative_inv(mat, n_iter, init):
    I = torch.eye(mat.size(-1), dtype=mat.dtype)
    K = mat
    if init == "global":
        V = 1 / torch.max(torch.sum(K, dim=-2)) * K.transpose(-1, -2)
    else:
        V = 1 / torch.max(torch.sum(K, dim=-2), dim=-1).values[:, :, None, None] * K.transpose(-1, -2)
    for _ in range(n_iter):
        KV = torch.matmul(K, V)
        V = torch.matmul(0.25 * V, 13 * I - torch.matmul(KV, 15 * I - torch.matmul(KV, 7 * I - KV)))
    return V


def nystrom_attention(attrs, xs):
    q, k, v = xs[:3]
    nh, m = attrs["num_heads"], attrs["landmarks"]
    b, n, c = q.shape
    d = c // nh
    Q = q.reshape(b, n, nh, d).transpose(1, 2) * attrs["q_scale"]
    K = k.reshape(b, n, nh, d).transpose(1, 2) * attrs["k_scale"]
    V = v.reshape(b, n, nh, d).transpose(1, 2)
    Ql, Kl = segment_means(Q, m), segment_means(K, m)
    k1 = F.softmax(Q @ Kl.transpose(-1, -2), dim=-1)
    k2 = F.softmax(Ql @ Kl.transpose(-1, -2), dim=-1)
    k3 = F.softmax(Ql @ K.transpose(-1, -2), dim=-1)
    X = (k1 @ iterative_inv(k2, attrs.get("iterations", 6), attrs["init"])) @ (k3 @ V)
    if len(xs) > 3:
        ks = xs[3].shape[2]
        X = X + F.conv2d(V, xs[3], padding=(ks // 2, 0), groups=nh)
    return X.transpose(1, 2).reshape(b, n, c)


OPS = {"NystromAttention": nystrom_attention}


def cases(w):
    # name, B, N, heads, d, m, conv taps (0: none), init, scales ("lra": both d^-1/4, "t2t": q 1/sqrt(d)), iterations
    specs = [
        ("nystrom_b2_n13_h1_d7_m4_ks3_global", 2, 13, 1, 7, 4, 3, "global", "lra", 6),
        ("nystrom_b2_n13_h1_d7_m4_perhead", 2, 13, 1, 7, 4, 0, "per_head", "t2t", 6),
        ("nystrom_b3_n16_h2_d8_m4_ks5_global", 3, 16, 2, 8, 4, 5, "global", "lra", 6),
        ("nystrom_b1_n50_h3_d16_m7_ks3", 1, 50, 3, 16, 7, 3, "per_head", "lra", 6),
        ("nystrom_b2_n37_h2_d12_m37_global", 2, 37, 2, 12, 37, 0, "global", "t2t", 6),
        ("nystrom_b1_n9_h4_d5_m1_ks1", 1, 9, 4, 5, 1, 1, "global", "lra", 6),
        ("nystrom_b2_n70_h2_d33_m9_iters3", 2, 70, 2, 33, 9, 7, "per_head", "lra", 3),
        ("nystrom_b1_n130_h1_d20_m17_iters0", 1, 130, 1, 20, 17, 0, "global", "t2t", 0),
    ]
    for name, b, n, nh, d, m, ks, init, scales, iters in specs:
        c = nh * d
        qs = d ** -0.25 if scales == "lra" else d ** -0.5
        ksc = d ** -0.25 if scales == "lra" else 1.0
        attrs = {"num_heads": nh, "landmarks": m, "q_scale": qs, "k_scale": ksc, "init": init,
                 "iterations": iters}
        inputs = [w.randn(b, n, c), w.randn(b, n, c), w.randn(b, n, c)]
        if ks:
            inputs.append(w.randn(nh, 1, ks, 1, scale=1.0 / math.sqrt(ks)))
        w.add(name, "NystromAttention", attrs, inputs, const=(3,))
        if init == "global":
            # One scale over the batch and heads: an item's result depends on the others.
            w.cases[-1]["batchable"] = False
