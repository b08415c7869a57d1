# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""SOFT op cases for make_op_cases.py: the LinearAttention op and the Newton–Raphson pseudo-inverses.

LinearAttention is computed with torch ops the way fudan-zvg/SOFT's `SoftmaxFreeAttentionKernel` and
`SoftmaxFreeNormAttentionKernel` do it (docs/models.md §3.4–3.6): split heads, Q scaled (K tied), landmarks by a
strided conv over each head's [d,H,W] image (heads folded into the batch, so the weights are shared), LayerNorm +
erf GELU, Gaussian kernels in the direct difference form (the CUDA kernel's), the Newton iteration, optional
D^-1/2 normalisation of the inverse, (K1 @ inv) @ (K1^T @ V), plus the per-head depthwise V conv.

Besides the op cases it writes soft_newton/manifest.json under the op-case folder: standalone Newton cases on
ill-conditioned (cond >= 1e4) and well-conditioned matrices, in the format of make_soft_cases.py's
soft_cases/newton/manifest.json, for tests/ops/newton_inverse_test.cpp.
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F


def newton_scaled(mat, iterations, regularizer):
    """SOFT/kernel/inverse.py::newton_inv (current master)."""
    P = mat
    I = torch.eye(mat.size(-1), dtype=mat.dtype)
    alpha = 0.9 * 2 / torch.max(torch.sum(mat, dim=-1), -1)[0] ** 2
    P = P + regularizer * I
    V = alpha[..., None, None].broadcast_to(P.shape) * P
    for _ in range(iterations):
        V = 2 * V - V @ P @ V
    return V


def newton_legacy(mat, iterations):
    """SoftmaxFreeNormAttentionKernel.newton_inv (and SOFT before bb0eec0): one alpha for the whole batch."""
    P = mat
    I = torch.eye(mat.size(-1), dtype=mat.dtype)
    alpha = 2 / (torch.max(torch.sum(mat, dim=-1)) ** 2)
    beta = 0.5
    V = alpha * P
    pnorm = torch.max(torch.sum(torch.abs(I - torch.matmul(P, V)), dim=-2))
    err_cnt = 0
    while pnorm > 1.01 and err_cnt < 10:
        alpha *= beta
        V = alpha * P
        pnorm = torch.max(torch.sum(torch.abs(I - torch.matmul(P, V)), dim=-2))
        err_cnt += 1
    for _ in range(iterations):
        V = 2 * V - V @ P @ V
    return V


def gaussian_direct(a, b):
    """exp(-sum_c (a_i - b_j)^2 / 2): the CUDA kernel's direct form, then SOFT's exp(-x/2)."""
    dist = ((a[..., :, None, :] - b[..., None, :, :]) ** 2).sum(-1)
    return torch.exp(-dist / 2)


def linear_attention(attrs, xs):
    q, v, lw, ln_g, ln_b, vw = xs
    nh, H, W, r = attrs["num_heads"], attrs["height"], attrs["width"], attrs["landmark_ratio"]
    b, n, c = q.shape
    d = c // nh
    Q = q.reshape(b, n, nh, d).transpose(1, 2)  # split_heads
    V = v.reshape(b, n, nh, d).transpose(1, 2)
    Q = Q * attrs["q_scale"]
    L = Q.reshape(b * nh, H * W, d).reshape(b * nh, H, W, d).permute(0, 3, 1, 2)
    L = F.conv2d(L, lw, stride=r)
    L = L.flatten(2).transpose(1, 2).reshape(b, nh, -1, d)
    L = F.gelu(F.layer_norm(L, (d,), ln_g, ln_b, attrs.get("landmark_ln_eps", 1e-5)))
    k1 = gaussian_direct(Q, L)
    k2 = gaussian_direct(L, L)
    iters = attrs.get("newton_iterations", 20)
    if attrs["pinv"] == "newton_legacy":
        inv = newton_legacy(k2, iters)
    else:
        inv = newton_scaled(k2, iters, attrs.get("newton_regularizer", 0.01))
    if attrs.get("symmetric_normalization", False):
        dsym = 1 / k2.sum(-1, keepdim=True).sqrt()
        inv = dsym * inv * dsym.transpose(-1, -2)
    X = torch.matmul(torch.matmul(k1, inv), torch.matmul(k1.transpose(-1, -2), V))
    k = vw.shape[-1]
    Vc = V.reshape(b, nh, H, W, d).permute(0, 4, 1, 2, 3).reshape(b * d, nh, H, W)
    X = X + F.conv2d(Vc, vw, padding=k // 2, groups=nh).reshape(b, d, nh, H, W).flatten(3).permute(0, 2, 3, 1)
    return X.transpose(1, 2).reshape(b, n, c)


OPS = {"LinearAttention": linear_attention}


def attention_cases(w):
    # name, B, H, W, heads, d, r, k, pinv, symmetric, extra attrs, landmark LN gamma scale
    specs = [
        ("la_scaled_7x5_r1_h1_d4_k1", 1, 7, 5, 1, 4, 1, 1, "newton_scaled", False, {}, 1.0),
        ("la_scaled_7x5_r2_h2_d8_k3_b3", 3, 7, 5, 2, 8, 2, 3, "newton_scaled", False, {}, 1.0),
        ("la_scaled_7x5_r3_h3_d16_k5", 1, 7, 5, 3, 16, 3, 5, "newton_scaled", False, {}, 1.0),
        ("la_scaled_m1_b3", 3, 3, 3, 2, 4, 3, 3, "newton_scaled", False, {}, 1.0),
        ("la_scaled_8x8_r4_h4_d32_k5_b3", 3, 8, 8, 4, 32, 4, 5, "newton_scaled", False, {}, 1.0),
        ("la_scaled_14x14_r2_h2_d32_k3", 1, 14, 14, 2, 32, 2, 3, "newton_scaled", False, {}, 1.0),
        ("la_scaled_9x11_r2_h2_d4_k3_close", 1, 9, 11, 2, 4, 2, 3, "newton_scaled", False, {}, 0.3),
        ("la_scaled_iters5_reg0p1", 3, 6, 6, 2, 8, 2, 3, "newton_scaled", False,
         {"newton_iterations": 5, "newton_regularizer": 0.1}, 1.0),
        ("la_scaled_sym", 1, 7, 5, 2, 8, 2, 3, "newton_scaled", True, {}, 1.0),
        ("la_legacy_7x5_r1_h1_d4_k1", 1, 7, 5, 1, 4, 1, 1, "newton_legacy", False, {}, 1.0),
        ("la_legacy_7x5_r2_h2_d8_k3_b3", 3, 7, 5, 2, 8, 2, 3, "newton_legacy", False, {}, 1.0),
        ("la_legacy_sym_7x5_r2_h4_d8_k5", 1, 7, 5, 4, 8, 2, 5, "newton_legacy", True, {}, 1.0),
        ("la_legacy_sym_7x5_r3_h3_d16_k3_b3", 3, 7, 5, 3, 16, 3, 3, "newton_legacy", True, {}, 1.0),
        ("la_legacy_sym_m1", 1, 3, 3, 2, 4, 3, 1, "newton_legacy", True, {}, 1.0),
        ("la_legacy_sym_8x8_r4_h4_d32_k5_b3", 3, 8, 8, 4, 32, 4, 5, "newton_legacy", True, {}, 1.0),
        ("la_legacy_sym_14x14_r2_h2_d32_k3", 1, 14, 14, 2, 32, 2, 3, "newton_legacy", True, {}, 1.0),
        ("la_legacy_sym_9x11_r2_h2_d4_close", 1, 9, 11, 2, 4, 2, 3, "newton_legacy", True, {}, 0.3),
        ("la_legacy_sym_ln_eps_1e3", 1, 6, 4, 1, 8, 2, 3, "newton_legacy", True, {"landmark_ln_eps": 1e-3}, 1.0),
    ]
    for name, b, H, W, nh, d, r, k, pinv, sym, extra, gscale in specs:
        c = nh * d
        attrs = {"num_heads": nh, "height": H, "width": W, "q_scale": d ** -0.25, "landmark_ratio": r,
                 "landmark_ln_eps": 1e-5, "pinv": pinv, "newton_iterations": 20, "newton_regularizer": 0.01,
                 "symmetric_normalization": sym}
        attrs.update(extra)
        inputs = [w.randn(b, H * W, c), w.randn(b, H * W, c),
                  w.randn(d, d, r, r, scale=1.0 / math.sqrt(d * r * r)),
                  w.randn(d, scale=0.1 * gscale, offset=gscale), w.randn(d, scale=0.1),
                  w.randn(nh, 1, k, k, scale=1.0 / k)]
        w.add(name, "LinearAttention", attrs, inputs, const=(2, 3, 4, 5))
        if pinv == "newton_legacy":
            # The step size is global over the batch: an item's result depends on the others.
            w.cases[-1]["batchable"] = False


def ill_conditioned(gen, m, d, target, dtype=torch.float64):
    """A SOFT-like K2 (Gaussian kernel of clustered points) whose condition number is at least `target`."""
    base = torch.randn(m, d, generator=gen, dtype=dtype)
    lo, hi = 0.01, 3.0
    for _ in range(60):  # bisect the spread: smaller spread, worse conditioning
        mid = math.sqrt(lo * hi)
        k = gaussian_direct(base * mid, base * mid)
        if torch.linalg.cond(k).item() >= 2 * target:
            lo = mid
        else:
            hi = mid
    k = gaussian_direct(base * lo, base * lo)
    return k


def newton_cases(out, gen):
    folder = os.path.join(out, "soft_newton")
    os.makedirs(folder, exist_ok=True)
    cases = []
    specs = [  # name, variant, count, m, d, target cond (None: well-conditioned), iterations, regularizer
        ("scaled_m12_cond1e4", "scaled", 1, 12, 3, 1e4, 20, 0.01),
        ("scaled_m49_cond1e5", "scaled", 1, 49, 4, 1e5, 20, 0.01),
        ("scaled_m20_cond1e6_noreg", "scaled", 1, 20, 3, 1e6, 20, 0.0),
        ("scaled_m16_well", "scaled", 1, 16, 32, None, 20, 0.01),
        ("legacy_m12_cond1e4", "legacy", 1, 12, 3, 1e4, 20, 0.0),
        ("legacy_m49_cond1e5", "legacy", 1, 49, 4, 1e5, 20, 0.0),
        ("legacy_batch3_m20_cond1e4", "legacy", 3, 20, 3, 1e4, 20, 0.0),
        ("legacy_m16_well", "legacy", 1, 16, 32, None, 20, 0.0),
    ]
    for name, variant, count, m, d, target, iters, reg in specs:
        mats = []
        for _ in range(count):
            if target is None:
                pts = torch.randn(m, d, generator=gen, dtype=torch.float64)
                mats.append(gaussian_direct(pts * 0.35, pts * 0.35))
            else:
                mats.append(ill_conditioned(gen, m, d, target))
        x32 = torch.stack(mats).to(torch.float32)
        if count == 1:
            x32 = x32[0]
        with torch.no_grad():
            if variant == "scaled":
                y64 = newton_scaled(x32.double(), iters, reg)
                y32 = newton_scaled(x32, iters, reg)
            else:
                y64 = newton_legacy(x32.double(), iters)
                y32 = newton_legacy(x32, iters)
        cond = float(torch.linalg.cond(x32.double()).max().item())
        np.save(os.path.join(folder, f"{name}.in.npy"), x32.numpy())
        np.save(os.path.join(folder, f"{name}.out64.npy"), y64.numpy())
        np.save(os.path.join(folder, f"{name}.out32.npy"), y32.to(torch.float64).numpy())
        cases.append({"name": name, "variant": variant, "iterations": iters, "regularizer": reg,
                      "input": f"{name}.in.npy", "expected64": f"{name}.out64.npy",
                      "expected32": f"{name}.out32.npy", "cond": cond})
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)


def cases(w):
    attention_cases(w)
    newton_cases(w.out, torch.Generator().manual_seed(20240602))
