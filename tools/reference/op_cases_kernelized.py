# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""KernelizedAttention op cases for make_op_cases.py (docs/linear_attention.md, "KernelizedAttention").

Each kind is computed the way its official code does it, on q, k [B,N,h·dk] and v [B,N,h·dv] split into heads:
  elu_normalized  idiap/fast-transformers LinearAttention: elu+1 feature maps, the einsums
                  "nshd,nshm->nhmd", "nlhd,nhd->nlh" (plus eps, inverted) and "nlhd,nhmd,nlh->nlhm";
  elu_scaled      mlpen/Nystromformer LRA attention_linear.py: (elu+1)/s on Q [B,h,N,d] and K, then
                  Q @ (Kᵀ @ V), s the stored constant;
  softmax_pair    cmsflash/efficient-attention: softmax of the keys over positions and of the queries over
                  the head's channels, context = key @ valueᵀ, out = contextᵀ @ query (on [B,C,N] slices).
"""
import torch
import torch.nn.functional as F


def split(x, heads):
    b, n, c = x.shape
    return x.reshape(b, n, heads, c // heads)


def kernelized_attention(attrs, xs):
    q, k, v = xs
    h = attrs["num_heads"]
    b, n, _ = q.shape
    kind = attrs["kind"]
    if kind == "elu_normalized":
        Q, K, V = F.elu(split(q, h)) + 1, F.elu(split(k, h)) + 1, split(v, h)
        KV = torch.einsum("nshd,nshm->nhmd", K, V)
        Z = 1 / (torch.einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + attrs["eps"])
        out = torch.einsum("nlhd,nhmd,nlh->nlhm", Q, KV, Z)
        return out.reshape(b, n, -1)
    if kind == "elu_scaled":
        s = attrs["scale"]
        Q = (F.elu(split(q, h).transpose(1, 2)) + 1) / s
        K = (F.elu(split(k, h).transpose(1, 2)) + 1) / s
        V = split(v, h).transpose(1, 2)
        return torch.matmul(Q, torch.matmul(K.transpose(-2, -1), V)).transpose(1, 2).reshape(b, n, -1)
    assert kind == "softmax_pair", kind
    keys, queries, values = k.transpose(1, 2), q.transpose(1, 2), v.transpose(1, 2)  # [B, C, N]
    dk, dv = keys.shape[1] // h, values.shape[1] // h
    heads = []
    for i in range(h):
        key = F.softmax(keys[:, i * dk:(i + 1) * dk, :], dim=2)
        query = F.softmax(queries[:, i * dk:(i + 1) * dk, :], dim=1)
        value = values[:, i * dv:(i + 1) * dv, :]
        context = key @ value.transpose(1, 2)
        heads.append(context.transpose(1, 2) @ query)
    return torch.cat(heads, dim=1).transpose(1, 2).contiguous()


OPS = {"KernelizedAttention": kernelized_attention}


def cases(w):
    # name, kind, B, N, heads, dk, dv, extra attrs, input scale
    specs = [
        ("ka_elu_norm_b2_n13_h1_d7", "elu_normalized", 2, 13, 1, 7, 7, {}, 1.0),
        ("ka_elu_norm_b3_n50_h3_d16", "elu_normalized", 3, 50, 3, 16, 16, {}, 1.0),
        ("ka_elu_norm_b1_n37_h2_dk5_dv11", "elu_normalized", 1, 37, 2, 5, 11, {}, 1.0),
        ("ka_elu_norm_eps0p5_b2_n9_h4_d8", "elu_normalized", 2, 9, 4, 8, 8, {"eps": 0.5}, 3.0),
        ("ka_elu_scaled_b2_n13_h1_d7", "elu_scaled", 2, 13, 1, 7, 7, {"scale": 13 ** 0.25}, 1.0),
        ("ka_elu_scaled_b2_n64_h2_d32", "elu_scaled", 2, 64, 2, 32, 32, {"scale": 1024 ** 0.25}, 1.0),
        ("ka_elu_scaled_b1_n19_h3_dk6_dv17", "elu_scaled", 1, 19, 3, 6, 17, {"scale": 2.5}, 1.0),
        ("ka_softmax_b2_n13_h1_d7", "softmax_pair", 2, 13, 1, 7, 7, {}, 1.0),
        ("ka_softmax_b2_n49_h2_dk8_dv24", "softmax_pair", 2, 49, 2, 8, 24, {}, 2.0),
        ("ka_softmax_b1_n31_h4_dk3_dv16", "softmax_pair", 1, 31, 4, 3, 16, {}, 1.0),
        ("ka_softmax_b3_n11_h3_d33_large", "softmax_pair", 3, 11, 3, 33, 33, {}, 20.0),
    ]
    for name, kind, b, n, h, dk, dv, extra, sc in specs:
        attrs = {"kind": kind, "num_heads": h, "eps": 1e-6 if kind == "elu_normalized" else 0.0,
                 "scale": 1.0}
        attrs.update(extra)
        inputs = [w.randn(b, n, h * dk, scale=sc), w.randn(b, n, h * dk, scale=sc), w.randn(b, n, h * dv)]
        w.add(name, "KernelizedAttention", attrs, inputs)
