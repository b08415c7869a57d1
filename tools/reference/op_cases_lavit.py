# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""LaViT op cases for make_op_cases.py (docs/models.md §4.2): ReusedAttention (the Less-Attention layer),
AttentionResidual (the scores residual between stages) and SoftmaxAttention with its score-bias input and
score output (the Vanilla-Attention layer), written from the spec with torch.

Ops with a second output (SoftmaxAttention's and ReusedAttention's scores [B,h,Nq,Nk]) are written by this
module's own `add`, which extends the manifest entry with
  "extra_outputs": [{"expected64", "expected32"}]
(tests/ops/op_cases.h turns such a case into one case per output). Everything else follows Writer.add.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F


def split_heads(x, h):
    b, n, c = x.shape
    return x.reshape(b, n, h, c // h).transpose(1, 2)


def merge_heads(x):
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)


def softmax_attention(attrs, xs, num_outputs=1):
    """VA: S = q·kᵀ·scale (+ bias), out = softmax(S)·v; outputs (out, S)[:num_outputs]."""
    h, scale, layout = attrs["num_heads"], attrs["scale"], attrs["inputs"]
    if layout == "separate":
        q, k, v = xs[:3]
        rest = xs[3:]
    elif layout == "qkv":
        c = xs[0].shape[2] // 3
        q, k, v = xs[0][..., :c], xs[0][..., c:2 * c], xs[0][..., 2 * c:]
        rest = xs[1:]
    else:
        c = xs[0].shape[2]
        q, k, v = xs[0], xs[1][..., :c], xs[1][..., c:]
        rest = xs[2:]
    s = (split_heads(q, h) @ split_heads(k, h).transpose(-2, -1)) * scale
    if rest:
        s = s + rest[0]
    out = merge_heads(torch.softmax(s, dim=-1) @ split_heads(v, h))
    return (out, s)[:num_outputs]


def reused_attention(attrs, xs, num_outputs=1):
    """LA: T = theta(S_prev) on the key axis, S = psi(Tᵀ)ᵀ on the query axis, out = softmax(S)·v."""
    prev, v, tw, tb, pw, pb = xs
    t = F.linear(prev, tw, tb)
    s = F.linear(t.transpose(-2, -1), pw, pb).transpose(-2, -1)
    out = merge_heads(torch.softmax(s, dim=-1) @ split_heads(v, attrs["num_heads"]))
    return (out, s.contiguous())[:num_outputs]


def attention_residual(attrs, xs, num_outputs=1):
    """AR: per key, the h1-channel score image -> depthwise k x k stride k -> 1x1 h1->h2 -> * gamma."""
    s, dw, dwb, pw, pwb, gamma = xs
    b, h1, n1, nk = s.shape
    hh, ww = attrs["height"], attrs["width"]
    k = dw.shape[2]
    a = s.permute(0, 3, 1, 2).reshape(b * nk, h1, hh, ww)
    a = F.conv2d(a, dw, dwb, stride=k, groups=h1)
    a = F.conv2d(a, pw, pwb)
    h2, n2 = a.shape[1], a.shape[2] * a.shape[3]
    a = a.reshape(b, nk, h2, n2).permute(0, 2, 3, 1) * gamma.view(1, h2, 1, 1)
    return (a.contiguous(),)


FNS = {"SoftmaxAttention": softmax_attention, "ReusedAttention": reused_attention,
       "AttentionResidual": attention_residual}

# make_op_cases.py's single-output interface (its own SoftmaxAttention takes precedence for that op).
OPS = {"ReusedAttention": lambda attrs, xs: reused_attention(attrs, xs)[0],
       "AttentionResidual": lambda attrs, xs: attention_residual(attrs, xs)[0]}


def add(w, name, op, attrs, inputs, const=(), num_outputs=1):
    """Writer.add for ops with `num_outputs` outputs (all inputs present)."""
    assert name not in w.names, name
    w.names.add(name)
    fn = FNS[op]
    xs32 = [x.to(torch.float32).contiguous() for x in inputs]
    with torch.no_grad():
        y64 = fn(attrs, [x.double() for x in xs32], num_outputs)
        y32 = fn(attrs, xs32, num_outputs)
    batch = y64[0].shape[0]
    entries, batched = [], []
    for i, x in enumerate(xs32):
        fname = f"{name}.in{i}.npy"
        np.save(os.path.join(w.out, fname), x.numpy())
        is_b = i not in const and batch >= 2 and x.shape[0] == batch
        batched.append(is_b)
        entries.append({"file": fname, "const": i in const, "batched": is_b})
    batchable = False
    if batch >= 2 and any(batched):
        sub = [x[:1] if bt else x for x, bt in zip(xs32, batched)]
        with torch.no_grad():
            y1 = fn(attrs, [x.double() for x in sub], num_outputs)
        batchable = all(tuple(a.shape) == (1,) + tuple(b.shape[1:]) and bool(torch.allclose(a, b[:1]))
                        for a, b in zip(y1, y64))
    outs = []
    for o in range(num_outputs):
        tag = "out" if o == 0 else f"out{o}_"
        np.save(os.path.join(w.out, f"{name}.{tag}64.npy"), y64[o].contiguous().numpy())
        np.save(os.path.join(w.out, f"{name}.{tag}32.npy"), y32[o].contiguous().numpy())
        outs.append({"expected64": f"{name}.{tag}64.npy", "expected32": f"{name}.{tag}32.npy"})
    case = {"name": name, "op": op, "attrs": attrs, "inputs": entries, "expected64": outs[0]["expected64"],
            "expected32": outs[0]["expected32"], "batchable": batchable}
    if num_outputs > 1:
        case["extra_outputs"] = outs[1:]
    w.cases.append(case)


def va_cases(w):
    specs = [  # name, layout, B, Nq, Nk, C, heads, scale (None: d^-0.5), bias, export scores
        ("va_sep_bias", "separate", 2, 7, 5, 12, 3, None, True, False),
        ("va_sep_scores", "separate", 2, 9, 9, 8, 1, None, False, True),
        ("va_sep_bias_scores", "separate", 1, 6, 11, 20, 5, 0.7, True, True),
        ("va_qkv_bias", "qkv", 2, 13, 13, 12, 2, None, True, False),
        ("va_qkv_scores", "qkv", 2, 17, 17, 16, 4, None, False, True),
        ("va_qkv_bias_scores", "qkv", 1, 7, 7, 15, 3, 1.3, True, True),
        ("va_kv_bias", "q_kv", 2, 24, 7, 10, 2, None, True, False),
        ("va_kv_scores_10x6", "q_kv", 2, 60, 15, 64, 1, None, False, True),
        ("va_kv_bias_scores_6x4", "q_kv", 2, 24, 3, 6, 3, None, True, True),
        ("va_kv_bias_scores_h5", "q_kv", 2, 49, 49, 40, 5, None, True, True),
        ("va_kv_bias_scores_nk1", "q_kv", 2, 9, 1, 8, 4, None, True, True),
        ("va_kv_lavit_stage2", "q_kv", 1, 196, 49, 128, 2, None, True, True),
    ]
    for name, layout, b, nq, nk, c, h, scale, bias, scores in specs:
        scale = (c // h) ** -0.5 if scale is None else scale
        if layout == "separate":
            inputs = [w.randn(b, nq, c), w.randn(b, nk, c), w.randn(b, nk, c)]
        elif layout == "qkv":
            inputs = [w.randn(b, nq, 3 * c)]
        else:
            inputs = [w.randn(b, nq, c), w.randn(b, nk, 2 * c)]
        if bias:
            inputs.append(w.randn(b, h, nq, nk, scale=1.5))
        add(w, name, "SoftmaxAttention", {"num_heads": h, "scale": scale, "inputs": layout}, inputs,
            num_outputs=2 if scores else 1)


def la_cases(w):
    specs = [  # name, B, heads, N, N', C, export scores
        ("la_6x4", 2, 1, 24, 5, 8, True),
        ("la_no_scores", 2, 2, 12, 7, 6, False),
        ("la_5heads_10x6", 1, 5, 60, 3, 20, True),
        ("la_odd", 2, 3, 35, 9, 9, True),
        ("la_nk1", 2, 2, 9, 1, 4, False),
        ("la_4heads_square", 2, 4, 16, 16, 32, True),
        ("la_lavit_stage3", 1, 5, 196, 49, 320, True),
        ("la_lavit_stage2", 1, 2, 784, 49, 128, False),
    ]
    for name, b, h, n, nk, c, scores in specs:
        inputs = [w.randn(b, h, n, nk, scale=2.0), w.randn(b, nk, c),
                  w.randn(nk, nk, scale=nk ** -0.5), w.randn(nk, scale=0.5),
                  w.randn(n, n, scale=n ** -0.5), w.randn(n, scale=0.5)]
        add(w, name, "ReusedAttention", {"num_heads": h}, inputs, const=(2, 3, 4, 5),
            num_outputs=2 if scores else 1)


def ar_cases(w):
    specs = [  # name, B, h1, h2, H1, W1, N', k
        ("ar_6x4", 2, 1, 2, 6, 4, 5, 2),
        ("ar_10x6", 2, 2, 5, 10, 6, 7, 2),
        ("ar_h5_h3", 1, 5, 3, 4, 4, 9, 2),
        ("ar_same_heads_nk1", 2, 3, 3, 8, 8, 1, 2),
        ("ar_to_1head", 2, 4, 1, 6, 6, 3, 2),
        ("ar_odd_grid", 2, 2, 3, 7, 5, 4, 2),
        ("ar_k3", 1, 2, 4, 9, 6, 4, 3),
        ("ar_lavit_2to3", 1, 2, 5, 28, 28, 49, 2),
    ]
    for name, b, h1, h2, hh, ww, nk, k in specs:
        inputs = [w.randn(b, h1, hh * ww, nk, scale=2.0), w.randn(h1, 1, k, k, scale=1.0 / k),
                  w.randn(h1, scale=0.5), w.randn(h2, h1, 1, 1, scale=h1 ** -0.5), w.randn(h2, scale=0.5),
                  w.randn(h2, scale=0.5, offset=0.2)]
        add(w, name, "AttentionResidual", {"height": hh, "width": ww}, inputs, const=(1, 2, 3, 4, 5))


def cases(w):
    va_cases(w)
    la_cases(w)
    ar_cases(w)
