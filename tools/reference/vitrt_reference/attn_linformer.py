"""Linformer attentions for a ViT block (docs/linear_attention.md, "Linformer"), written from the published
modules' math with their state_dict key names, for deit.VisionTransformer(attn_factory=...)."""
import math

import torch
import torch.nn as nn


class LinformerFairseq(nn.Module):
    """fairseq MultiheadLinearAttention, self-attention, batch-first: k = k_proj(E x), v = v_proj(F x) (biases
    added after the compression), q = q_proj(x) * d^-1/2. compress_k/compress_v are Linear(max_seq_len, k_len,
    bias=False), of which the first N columns are used; F = E when shared_kv_compressed."""

    def __init__(self, dim, num_heads, max_seq_len, k_len, shared_kv_compressed=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.q_proj = nn.Linear(dim, dim)
        self.compress_k = nn.Linear(max_seq_len, k_len, bias=False)
        self.compress_v = None if shared_kv_compressed else nn.Linear(max_seq_len, k_len, bias=False)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        h, d = self.num_heads, self.head_dim
        q = self.q_proj(x) * self.scaling
        xt = x.transpose(1, 2)  # [B, C, N]
        ck = self.compress_k.weight[:, :N]
        cv = ck if self.compress_v is None else self.compress_v.weight[:, :N]
        k = self.k_proj(torch.nn.functional.linear(xt, ck).transpose(1, 2))  # [B, k, C]
        v = self.v_proj(torch.nn.functional.linear(xt, cv).transpose(1, 2))
        q = q.reshape(B, N, h, d).transpose(1, 2)
        k = k.reshape(B, -1, h, d).transpose(1, 2)
        v = v.reshape(B, -1, h, d).transpose(1, 2)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.out_proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class LinformerLucidrains(nn.Module):
    """lucidrains LinformerSelfAttention: to_q/to_k/to_v Linear(dim, ., bias=False), proj_k/proj_v [seq_len, k]
    (rows [:N] for shorter inputs), softmax(q kᵀ d^-1/2) v, to_out Linear with bias. share_kv: values are the
    keys (no to_v, no proj_v); one_kv_head: one key/value head of width d shared by all heads."""

    def __init__(self, dim, num_heads, seq_len, k=64, dim_head=None, one_kv_head=False, share_kv=False):
        super().__init__()
        self.heads = num_heads
        self.dim_head = dim_head or dim // num_heads
        inner = self.dim_head * num_heads
        kv_dim = self.dim_head if one_kv_head else inner
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_k = nn.Linear(dim, kv_dim, bias=False)
        self.proj_k = nn.Parameter(torch.empty(seq_len, k).uniform_(-1 / math.sqrt(k), 1 / math.sqrt(k)))
        self.share_kv = share_kv
        if not share_kv:
            self.to_v = nn.Linear(dim, kv_dim, bias=False)
            self.proj_v = nn.Parameter(torch.empty(seq_len, k).uniform_(-1 / math.sqrt(k), 1 / math.sqrt(k)))
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x):
        b, n, _ = x.shape
        h, d_h = self.heads, self.dim_head
        queries = self.to_q(x)
        keys = self.to_k(x)
        values = keys if self.share_kv else self.to_v(x)
        pk = self.proj_k[:n]
        pv = pk if self.share_kv else self.proj_v[:n]
        keys = torch.einsum('bnd,nk->bkd', keys, pk)
        values = torch.einsum('bnd,nk->bkd', values, pv)
        queries = queries.reshape(b, n, h, -1).transpose(1, 2)
        kk = keys.shape[1]
        keys = keys.reshape(b, kk, -1, d_h).transpose(1, 2).expand(-1, h, -1, -1)
        values = values.reshape(b, kk, -1, d_h).transpose(1, 2).expand(-1, h, -1, -1)
        dots = torch.einsum('bhnd,bhkd->bhnk', queries, keys) * (d_h ** -0.5)
        out = torch.einsum('bhnk,bhkd->bhnd', dots.softmax(dim=-1), values)
        return self.to_out(out.transpose(1, 2).reshape(b, n, -1))


class LinformerLRA(nn.Module):
    """mlpen/Nystromformer's LRA Linformer: the `Attention` wrapper (W_q, W_k, W_v, ff, all with bias) around
    `LinformerAttention`, whose E [h, k, L] is ONE class-level parameter shared by K and V in every layer
    (registered as `attn.E` in each; std 0.02 in the original, larger here via `shared`). K' = E·K, V' = E·V per
    head; softmax(Q K'ᵀ / sqrt(d)) V'. A model for N < L tokens uses E[:, :, :N] (the converter's rule; the LRA
    code always runs at its max_seq_len). No mask: every token is valid in a ViT."""

    def __init__(self, dim, num_heads, shared):
        super().__init__()
        self.num_head, self.head_dim = num_heads, dim // num_heads
        self.W_q, self.W_k, self.W_v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.attn = nn.Module()
        self.attn.E = shared
        self.ff = nn.Linear(dim, dim)

    def forward(self, X):
        B, N, C = X.shape
        split = lambda t: t.reshape(B, N, self.num_head, self.head_dim).transpose(1, 2)
        Q, K, V = split(self.W_q(X)), split(self.W_k(X)), split(self.W_v(X))
        E = self.attn.E[:, :, :N]
        K, V = torch.matmul(E, K), torch.matmul(E, V)
        attn = torch.softmax(torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.ff(torch.matmul(attn, V).transpose(1, 2).reshape(B, N, C))
