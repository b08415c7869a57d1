# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""FastformerAttention op cases for make_op_cases.py (docs/linear_attention.md, Fastformer).

The op is computed line for line as wuch15/Fastformer's FastSelfAttention.forward does after its query / key
projections and before `transform` (no attention mask, as in vision): scores by query_att over all C channels
divided by sqrt(d), softmax over tokens, the per-head pooled query, k times it, key_att scores of that, softmax,
the pooled key, times the query ("query = value"). The op's `scale` attribute is 1/sqrt(d) unless a case sets
another. Odd shapes: one head, d = 7, token counts around the x86 kernel's block of 32, one token.

The cases draw from their own generator, so no other case changes.
"""
import torch


def fastformer_attention(attrs, xs):
    q, k, wq, bq, wk, bk = xs
    b, n, c = q.shape
    h = attrs["heads"]
    d = c // h
    scale = attrs["scale"]

    def heads(x):  # FastSelfAttention.transpose_for_scores: [B,N,C] -> [B,h,N,d]
        return x.view(b, n, h, d).permute(0, 2, 1, 3)

    query_for_score = torch.nn.functional.linear(q, wq, bq).transpose(1, 2) * scale
    query_weight = torch.softmax(query_for_score, -1).unsqueeze(2)           # [B,h,1,N]
    query_layer = heads(q)
    pooled_query = torch.matmul(query_weight, query_layer).transpose(1, 2).reshape(b, 1, c)
    mixed_query_key_layer = k * pooled_query.repeat(1, n, 1)
    query_key_score = (torch.nn.functional.linear(mixed_query_key_layer, wk, bk) * scale).transpose(1, 2)
    query_key_weight = torch.softmax(query_key_score, -1).unsqueeze(2)
    pooled_key = torch.matmul(query_key_weight, heads(mixed_query_key_layer))  # [B,h,1,d]
    weighted_value = (pooled_key * query_layer).transpose(1, 2)
    return weighted_value.reshape(b, n, c)


OPS = {"FastformerAttention": fastformer_attention}


def cases(w):
    saved = w.gen
    w.gen = torch.Generator().manual_seed(20261153)
    specs = [  # name, B, N, C, heads, score weight scale, scale (None: d^-0.5)
        ("fastformer_1head_d7", 2, 13, 7, 1, 1.0, None),
        ("fastformer_d7_3heads", 2, 31, 21, 3, 1.0, None),
        ("fastformer_block_plus_one", 2, 33, 40, 5, 2.0, None),
        ("fastformer_deit_like", 2, 50, 48, 3, 1.0, None),
        ("fastformer_one_token", 2, 1, 12, 2, 1.0, None),
        ("fastformer_peaked", 1, 97, 64, 8, 4.0, 0.7),
    ]
    for name, b, n, c, h, ws, scale in specs:
        scale = (c // h) ** -0.5 if scale is None else scale
        sd = ws / c ** 0.5
        inputs = [w.randn(b, n, c), w.randn(b, n, c, offset=0.1), w.randn(h, c, scale=sd), w.randn(h, scale=0.5),
                  w.randn(h, c, scale=sd), w.randn(h, scale=0.5)]
        w.add(name, "FastformerAttention", {"heads": h, "scale": scale}, inputs, const=(2, 3, 4, 5))
    w.gen = saved
