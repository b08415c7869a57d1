# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""PerformerAttention op cases for make_op_cases.py (docs/linear_attention.md, Performer): the op computed by
the lucidrains transcription in vitrt_reference/attn_performer.py, on odd shapes (1 head with d = 7, N not a
multiple of any vector width, batch 2, cross attention with Nk != Nq, m < d and m > d), both kernels and both
key stabilisers. Drawn from their own generator, so no other case changes."""
import torch

from vitrt_reference.attn_performer import gaussian_orthogonal_random_matrix, performer_op


def performer(attrs, xs):
    q, k, v, w = xs
    return performer_op(q, k, v, w, attrs["heads"], attrs["kernel"] == "generalized", attrs["key_max"])


OPS = {"PerformerAttention": performer}


def cases(w):
    saved = w.gen
    w.gen = torch.Generator().manual_seed(20261126)
    specs = [  # name, B, Nq, Nk, heads, d, m, kernel, key max
        ("performer_1head_d7", 2, 13, 13, 1, 7, 13, "softmax", "per_head"),
        ("performer_3heads_global", 2, 19, 19, 3, 8, 16, "softmax", "global"),
        ("performer_cross_m_lt_d", 2, 5, 23, 2, 9, 6, "softmax", "per_head"),
        ("performer_generalized", 2, 17, 17, 2, 7, 20, "generalized", "per_head"),
        ("performer_deit_like", 1, 65, 65, 3, 16, 44, "softmax", "per_head"),
    ]
    for name, b, nq, nk, h, d, m, kernel, key_max in specs:
        c = h * d
        proj = gaussian_orthogonal_random_matrix(m, d, generator=w.gen)
        q = w.randn(b, nq, c)
        k = w.randn(b, nk, c)
        v = w.randn(b, nk, c)
        attrs = {"heads": h, "kernel": kernel, "key_max": key_max}
        w.add(name, "PerformerAttention", attrs, [q, k, v, proj], const=(3,))
    w.gen = saved
