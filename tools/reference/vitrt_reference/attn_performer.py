"""Performer / FAVOR+ attention (docs/linear_attention.md, Performer), transcribed from lucidrains
performer-pytorch (`softmax_kernel`, `generalized_kernel`, `linear_attention`, `FastAttention`, `Attention`),
non-causal, without local heads. State_dict keys are lucidrains': `to_q`, `to_k`, `to_v` (Linear(C, h·d),
bias=False), `to_out` (Linear(h·d, C), bias=True) and the stored random features
`fast_attention.projection_matrix` [m, d] (m = int(d·ln d) by default), drawn once and never redrawn here.

`key_max="global"` is the older versions' key stabiliser, one `torch.max` over the whole [B,h,N,m] tensor
(it couples the images of a batch); "per_head" is current lucidrains' `amax(dim=(-1, -2))`.
"""
import math

import torch
import torch.nn as nn


def orthogonal_matrix_chunk(cols, generator=None):
    unstructured_block = torch.randn((cols, cols), generator=generator)
    q, _ = torch.linalg.qr(unstructured_block, mode="reduced")
    return q.t()


def gaussian_orthogonal_random_matrix(nb_rows, nb_columns, scaling=0, generator=None):
    """Blocks of QR-orthogonal rows, each row scaled by the norm of a fresh Gaussian vector (scaling=0)."""
    nb_full_blocks = int(nb_rows / nb_columns)
    block_list = [orthogonal_matrix_chunk(nb_columns, generator) for _ in range(nb_full_blocks)]
    remaining_rows = nb_rows - nb_full_blocks * nb_columns
    if remaining_rows > 0:
        block_list.append(orthogonal_matrix_chunk(nb_columns, generator)[:remaining_rows])
    final_matrix = torch.cat(block_list)
    if scaling == 0:
        multiplier = torch.randn((nb_rows, nb_columns), generator=generator).norm(dim=1)
    elif scaling == 1:
        multiplier = math.sqrt(float(nb_columns)) * torch.ones((nb_rows,))
    else:
        raise ValueError(f"Invalid scaling {scaling}")
    return torch.diag(multiplier) @ final_matrix


def softmax_kernel(data, projection_matrix, is_query, key_max="per_head", normalize_data=True, eps=1e-4):
    data_normalizer = (data.shape[-1] ** -0.25) if normalize_data else 1.0
    ratio = projection_matrix.shape[0] ** -0.5
    projection = projection_matrix.type_as(data)
    data_dash = torch.einsum("...id,jd->...ij", (data_normalizer * data), projection)
    diag_data = data ** 2
    diag_data = torch.sum(diag_data, dim=-1)
    diag_data = (diag_data / 2.0) * (data_normalizer ** 2)
    diag_data = diag_data.unsqueeze(dim=-1)
    if is_query:
        stab = torch.amax(data_dash, dim=-1, keepdim=True).detach()
    elif key_max == "global":
        stab = torch.max(data_dash).detach()
    else:
        stab = torch.amax(data_dash, dim=(-1, -2), keepdim=True).detach()
    data_dash = ratio * (torch.exp(data_dash - diag_data - stab) + eps)
    return data_dash.type_as(data)


def generalized_kernel(data, projection_matrix, kernel_fn=torch.relu, kernel_epsilon=0.001, normalize_data=True):
    data_normalizer = (data.shape[-1] ** -0.25) if normalize_data else 1.0
    projection = projection_matrix.type_as(data)
    data_dash = torch.einsum("...id,jd->...ij", (data_normalizer * data), projection)
    data_prime = kernel_fn(data_dash) + kernel_epsilon
    return data_prime.type_as(data)


def linear_attention(q, k, v):
    k_cumsum = k.sum(dim=-2)
    d_inv = 1.0 / torch.einsum("...nd,...d->...n", q, k_cumsum.type_as(q))
    context = torch.einsum("...nd,...ne->...de", k, v)
    # lucidrains writes einsum("...de,...nd,...n->...ne", context, q, d_inv); torch contracts it left to right,
    # (q·context)·d_inv, which is this, written with two-operand products so that it exports as ONNX the
    # importer reads (docs/onnx.md: Einsum of two operands).
    return torch.einsum("...de,...nd->...ne", context, q) * d_inv.unsqueeze(-1)


def favor(q, k, v, projection_matrix, generalized=False, key_max="per_head"):
    """FastAttention.forward (non-causal) on [B,h,N,d] q, k, v."""
    if generalized:
        q, k = generalized_kernel(q, projection_matrix), generalized_kernel(k, projection_matrix)
    else:
        q = softmax_kernel(q, projection_matrix, is_query=True)
        k = softmax_kernel(k, projection_matrix, is_query=False, key_max=key_max)
    return linear_attention(q, k, v)


def split_heads(x, h):
    b, n, c = x.shape
    return x.reshape(b, n, h, c // h).transpose(1, 2)


def merge_heads(x):
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)


def performer_op(q, k, v, projection_matrix, heads, generalized=False, key_max="per_head"):
    """The IR op PerformerAttention on projected tokens: q [B,Nq,C], k, v [B,Nk,C] -> [B,Nq,C]."""
    out = favor(split_heads(q, heads), split_heads(k, heads), split_heads(v, heads), projection_matrix,
                generalized, key_max)
    return merge_heads(out).contiguous()


class FastAttention(nn.Module):
    def __init__(self, dim_heads, nb_features=None, generalized_attention=False, key_max="per_head",
                 generator=None):
        super().__init__()
        nb_features = nb_features if nb_features is not None else int(dim_heads * math.log(dim_heads))
        self.dim_heads = dim_heads
        self.nb_features = nb_features
        self.generalized_attention = generalized_attention
        self.key_max = key_max
        self.register_buffer("projection_matrix",
                             gaussian_orthogonal_random_matrix(nb_features, dim_heads, generator=generator))

    def forward(self, q, k, v):
        return favor(q, k, v, self.projection_matrix, self.generalized_attention, self.key_max)


class PerformerAttention(nn.Module):
    """lucidrains `Attention` (non-causal, no local heads, no context): [B,N,C] -> [B,N,C]."""

    def __init__(self, dim, heads=8, dim_head=None, nb_features=None, generalized_attention=False,
                 key_max="per_head", qkv_bias=False, attn_out_bias=True, generator=None):
        super().__init__()
        dim_head = dim_head if dim_head is not None else dim // heads
        inner_dim = dim_head * heads
        self.heads = heads
        self.fast_attention = FastAttention(dim_head, nb_features, generalized_attention, key_max, generator)
        self.to_q = nn.Linear(dim, inner_dim, bias=qkv_bias)
        self.to_k = nn.Linear(dim, inner_dim, bias=qkv_bias)
        self.to_v = nn.Linear(dim, inner_dim, bias=qkv_bias)
        self.to_out = nn.Linear(inner_dim, dim, bias=attn_out_bias)

    def forward(self, x):
        h = self.heads
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        q, k, v = (split_heads(t, h) for t in (q, k, v))
        out = self.fast_attention(q, k, v)
        return self.to_out(merge_heads(out))
