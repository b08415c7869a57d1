# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ExternalAttention op cases for make_op_cases.py (EANet's external attention, docs/linear_attention.md).

The expected output is the official EAMLP `Attention` between trans_dims and proj, written as its forward
(`EAMLP/models/transformer_block.py`): heads split head-major, linear_0, softmax over the tokens (dim -2),
division by eps + the sum over the memory slots, linear_1, heads merged. eps 0 is xmu-xiaoma666's
ExternalAttention (a plain division by the slot sum). Odd shapes: N not a multiple of anything, one head,
head width 7, S not a multiple of a vector, batch 2, no biases. Drawn from their own generator, so no other
case changes.
"""
import torch
import torch.nn.functional as F


def external_attention(attrs, xs):
    """xs: x [B,N,C], w0 [S,dh], [b0 [S]], w1 [dh,S], [b1 [dh]] (absent biases left out; a bias is 1-D)."""
    x, w0 = xs[0], xs[1]
    i = 2
    b0 = xs[i] if xs[i].dim() == 1 else None
    i += b0 is not None
    w1 = xs[i]
    b1 = xs[i + 1] if len(xs) > i + 1 else None
    bsz, n, c = x.shape
    h = attrs["heads"]
    xh = x.view(bsz, n, h, c // h).permute(0, 2, 1, 3)
    attn = F.linear(xh, w0, b0)
    attn = attn.softmax(dim=-2)
    attn = attn / (attrs["eps"] + attn.sum(dim=-1, keepdim=True))
    out = F.linear(attn, w1, b1)
    return out.permute(0, 2, 1, 3).reshape(bsz, n, c)


OPS = {"ExternalAttention": external_attention}


def cases(w):
    saved = w.gen
    w.gen = torch.Generator().manual_seed(20261152)
    specs = [  # name, B, N, heads, dh, S, biases, eps
        ("ext_attn_eamlp_odd", 2, 13, 3, 7, 11, True, 1e-9),
        ("ext_attn_one_head_d7", 2, 29, 1, 7, 64, True, 1e-9),
        ("ext_attn_xmu_no_bias", 2, 37, 1, 12, 19, False, 0.0),
        ("ext_attn_many_blocks", 1, 131, 4, 9, 70, True, 1e-9),
        ("ext_attn_one_token", 2, 1, 2, 5, 3, True, 1e-9),
        ("ext_attn_s1_dh1", 2, 9, 5, 1, 1, True, 0.5),
    ]
    for name, b, n, heads, dh, s, bias, eps in specs:
        c = heads * dh
        w0 = w.randn(s, dh, scale=dh ** -0.5)
        w1 = w.randn(dh, s, scale=s ** -0.5)
        b0 = w.randn(s, scale=0.5) if bias else None
        b1 = w.randn(dh, scale=0.5) if bias else None
        x = w.randn(b, n, c, scale=1.5)
        w.add(name, "ExternalAttention", {"heads": heads, "eps": eps}, [x, w0, b0, w1, b1], const=(1, 2, 3, 4))
    w.gen = saved
