# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""SelectiveKernel op cases for make_op_cases.py (docs/linear_attention.md "SE and SK"): the select-and-fuse
part of a Selective Kernel block, written as the SK modules compute it (tools/reference/vitrt_reference/sk.py):
U = the sum of the branches, s = its mean over H, W, z = act(BN(fc_reduce(s))), the branch weights a softmax
over the branches of fc_select(z) viewed as [B, M, C], V = the sum of a_i·branch_i.

Inputs as the op takes them: the M branches, then fc_reduce_weight, fc_reduce_bias?, z_scale?, z_shift?,
fc_select_weight, fc_select_bias?. The Writer hands the op only the present inputs, so the attributes also say
which optional ones are there ("fc_reduce_bias", "z_bn", "fc_select_bias"; the engine ignores these keys).
The forms cover the three modules (survey SKModule: no reduce bias, BN + ReLU on z, select bias; xmu
SKAttention: reduce bias, no BN, no activation, select bias; timm SelectiveKernelAttn: no biases, BN + ReLU)
plus one branch and 2-D / 4-D weights. Drawn from their own generator, so no other case changes.
"""
import torch
import torch.nn.functional as F


def selective_kernel(attrs, xs):
    m = attrs["branches"]
    branches, rest = xs[:m], list(xs[m:])
    wr = rest.pop(0)
    br = rest.pop(0) if attrs["fc_reduce_bias"] else None
    scale, shift = (rest.pop(0), rest.pop(0)) if attrs["z_bn"] else (None, None)
    ws = rest.pop(0)
    bs = rest.pop(0) if attrs["fc_select_bias"] else None
    feats = torch.stack(branches, 1)  # [B, M, C, H, W]
    b, _, c = feats.shape[:3]
    s = feats.sum(1).mean((2, 3))
    z = F.linear(s, wr.reshape(wr.shape[0], c), br)
    if scale is not None:
        z = z * scale + shift
    if attrs["z_activation"] == "relu":
        z = F.relu(z)
    a = F.linear(z, ws.reshape(m * c, -1), bs).view(b, m, c)
    a = torch.softmax(a, dim=1)
    return (feats * a[..., None, None]).sum(1)


OPS = {"SelectiveKernel": selective_kernel}


def check_against_modules():
    """The formula above is the three modules' select-and-fuse (vitrt_reference/sk.py), in float64, their BN on
    z folded to a scale and shift and the survey's / xmu's per-branch select layers concatenated."""
    import torch.nn as nn
    from vitrt_reference.sk import SKModule, SKAttention, SelectiveKernel

    def fold(bn):
        s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        return [s, bn.bias - bn.running_mean * s]

    with torch.random.fork_rng(), torch.no_grad():  # the global generator's state is left as it was
        torch.manual_seed(11)
        survey = SKModule(32, M=3, L=8).double().eval()
        xmu = SKAttention(16, L=8).double().eval()
        timm = SelectiveKernel(32, 32).double().eval()
        for m in (survey, xmu, timm):
            for bn in m.modules():
                if isinstance(bn, nn.BatchNorm2d):
                    bn.running_mean.uniform_(-1, 1)
                    bn.running_var.uniform_(0.5, 2)
                    bn.weight.uniform_(0.5, 1.5)
        x = torch.randn(2, 32, 7, 5, dtype=torch.float64)
        x16 = x[:, :16].contiguous()
        halves = torch.split(x, 16, 1)
        forms = [
            (survey, x, [c(x) for c in survey.convs] + [survey.fc[0].weight] + fold(survey.fc[1]) +
             [torch.cat([f.weight for f in survey.fcs]), torch.cat([f.bias for f in survey.fcs])],
             dict(branches=3, z_activation="relu", fc_reduce_bias=False, z_bn=True, fc_select_bias=True)),
            (xmu, x16, [c(x16) for c in xmu.convs] + [xmu.fc.weight, xmu.fc.bias] +
             [torch.cat([f.weight for f in xmu.fcs]), torch.cat([f.bias for f in xmu.fcs])],
             dict(branches=4, z_activation="none", fc_reduce_bias=True, z_bn=False, fc_select_bias=True)),
            (timm, x, [p(halves[i]) for i, p in enumerate(timm.paths)] + [timm.attn.fc_reduce.weight] +
             fold(timm.attn.bn) + [timm.attn.fc_select.weight],
             dict(branches=2, z_activation="relu", fc_reduce_bias=False, z_bn=True, fc_select_bias=False)),
        ]
        for module, inp, xs, attrs in forms:
            err = (selective_kernel(attrs, xs) - module(inp)).abs().max().item()
            assert err < 1e-12, f"{type(module).__name__}: the op's formula is {err} off the module"


def cases(w):
    check_against_modules()
    saved = w.gen
    w.gen = torch.Generator().manual_seed(20261154)
    # name, B, M, C, H, W, d, fc_reduce_bias, z_bn, z_activation, fc_select_bias, conv-shaped weights
    specs = [
        ("sk_survey", 2, 2, 13, 7, 9, 5, False, True, "relu", True, True),
        ("sk_xmu", 2, 4, 11, 5, 3, 7, True, False, "none", True, False),
        ("sk_timm", 2, 3, 17, 6, 5, 8, False, True, "relu", False, True),
        ("sk_one_branch", 2, 1, 7, 3, 11, 3, True, True, "relu", True, False),
        ("sk_one_pixel", 3, 2, 9, 1, 1, 4, True, False, "relu", False, False),
        ("sk_wide_row", 1, 5, 6, 1, 37, 2, False, False, "none", True, True),
    ]
    for name, b, m, c, h, wd, d, has_br, bn, act, has_bs, conv in specs:
        branches = [F.relu(w.randn(b, c, h, wd, scale=1.0, offset=0.2)) for _ in range(m)]
        wr = w.randn(d, c, scale=c ** -0.5)
        ws = w.randn(m * c, d, scale=1.5 * d ** -0.5)
        inputs = branches + [
            wr.reshape(d, c, 1, 1) if conv else wr,
            w.randn(d, scale=0.3) if has_br else None,
            w.rand(d, lo=0.5, hi=1.5) if bn else None,
            w.randn(d, scale=0.3) if bn else None,
            ws.reshape(m * c, d, 1, 1) if conv else ws,
            w.randn(m * c, scale=0.5) if has_bs else None,
        ]
        while inputs[-1] is None:
            inputs.pop()
        attrs = {"branches": m, "z_activation": act, "fc_reduce_bias": has_br, "z_bn": bn,
                 "fc_select_bias": has_bs}
        w.add(name, "SelectiveKernel", attrs, inputs, const=tuple(range(m, len(inputs))))
    w.gen = saved
