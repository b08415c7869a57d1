# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""The Linear Transformer's attention (idiap/fast-transformers; docs/linear_attention.md, KernelizedAttention),
with the official module and parameter names, as a ViT block's `attn` ([B,N,C] -> [B,N,C]).

`AttentionLayer` holds `query_projection`, `key_projection`, `value_projection` and `out_projection` (Linear
with bias) around an `inner_attention`: `LinearAttention` (elu+1 feature map, normalised, eps 1e-6) or
`LraLinearAttention` (mlpen/Nystromformer LRA attention_linear.py: unnormalised, Q and K divided by a stored
scale s, N_train^{1/4} there). Self-attention only, without masks (a ViT attends over all its tokens).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def elu_feature_map(x):
    return F.elu(x) + 1


class LinearAttention(nn.Module):
    """fast_transformers.attention.linear_attention.LinearAttention on [N, L, H, D] queries/keys/values."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, queries, keys, values):
        Q = elu_feature_map(queries)
        K = elu_feature_map(keys)
        KV = torch.einsum("nshd,nshm->nhmd", K, values)
        Z = 1 / (torch.einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + self.eps)
        V = torch.einsum("nlhd,nhmd,nlh->nlhm", Q, KV, Z)
        return V.contiguous()


class LraLinearAttention(nn.Module):
    """mlpen/Nystromformer LRA/code/attention_linear.py on the same [N, L, H, D] layout: (φ(Q)/s) @ ((φ(K)/s)ᵀ V).
    The LRA code computes s = sqrt(sqrt(seq_len)) from its [B,h,N,d] Q; here it is a constructor argument, the
    constant an exported graph carries."""

    def __init__(self, seq_len):
        super().__init__()
        self.scale = math.sqrt(math.sqrt(seq_len))

    def forward(self, queries, keys, values):
        Q = (F.elu(queries.transpose(1, 2)) + 1) / self.scale  # [B, h, N, d]
        K = (F.elu(keys.transpose(1, 2)) + 1) / self.scale
        X = torch.matmul(Q, torch.matmul(K.transpose(-2, -1), values.transpose(1, 2)))
        return X.transpose(1, 2).contiguous()


class AttentionLayer(nn.Module):
    """fast_transformers.attention.attention_layer.AttentionLayer as self-attention: d_keys = d_values = C/h."""

    def __init__(self, attention, d_model, n_heads):
        super().__init__()
        d = d_model // n_heads
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d * n_heads)
        self.key_projection = nn.Linear(d_model, d * n_heads)
        self.value_projection = nn.Linear(d_model, d * n_heads)
        self.out_projection = nn.Linear(d * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        N, L, _ = x.shape
        H = self.n_heads
        queries = self.query_projection(x).view(N, L, H, -1)
        keys = self.key_projection(x).view(N, L, H, -1)
        values = self.value_projection(x).view(N, L, H, -1)
        new_values = self.inner_attention(queries, keys, values).view(N, L, -1)
        return self.out_projection(new_values)


def linear_attention_factory(eps=1e-6):
    """attn_factory for deit.VisionTransformer: AttentionLayer(LinearAttention(eps), dim, heads)."""
    return lambda dim, heads: AttentionLayer(LinearAttention(eps), dim, heads)


def lra_linear_attention_factory(seq_len):
    return lambda dim, heads: AttentionLayer(LraLinearAttention(seq_len), dim, heads)
