#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""Per-op parity cases for the backend tests (tests/ops): random inputs, PyTorch results.

Each case is one op on float32 inputs. The expected output is computed by torch.nn.functional twice: on the
inputs widened to float64 (the reference) and on the float32 inputs themselves (PyTorch's own float32 error,
from which the tests derive their tolerance). Everything is written as .npy next to manifest.json:

  {"version": 1, "cases": [{"name", "op", "attrs", "inputs": [{"file", "const", "batched"} | null],
                            "expected64", "expected32", "batchable"}]}

`const` inputs (weights) become graph constants; `batched` inputs have the batch in dim 0. A case is
`batchable` when running it on the first batch item of every batched input yields the first item of the
expected output (the tests then plan at the full batch and run with batch 1).

Usage: make_op_cases.py --out DIR   (needs torch and numpy; Debian's /usr/bin/python3 with python3-torch)
"""
import argparse
import importlib
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

ACTIVATIONS = {"none": lambda x: x, "relu": F.relu, "gelu_erf": F.gelu,
               "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}


def attention(attrs, xs):
    h, scale, layout = attrs["num_heads"], attrs["scale"], attrs["inputs"]
    if layout == "separate":
        q, k, v = xs
    elif layout == "qkv":
        c = xs[0].shape[2] // 3
        q, k, v = xs[0][..., :c], xs[0][..., c:2 * c], xs[0][..., 2 * c:]
    else:
        c = xs[0].shape[2]
        q, k, v = xs[0], xs[1][..., :c], xs[1][..., c:]
    b, nq, c = q.shape
    nk, d = k.shape[1], c // h
    qh = q.reshape(b, nq, h, d).transpose(1, 2)
    kh = k.reshape(b, nk, h, d).transpose(1, 2)
    vh = v.reshape(b, nk, h, d).transpose(1, 2)
    p = torch.softmax((qh @ kh.transpose(-2, -1)) * scale, dim=-1)
    return (p @ vh).transpose(1, 2).reshape(b, nq, c)


def concat(attrs, xs):
    axis = attrs["axis"] % xs[0].dim()
    target = list(torch.broadcast_shapes(*[tuple(1 if i == axis else s for i, s in enumerate(x.shape)) for x in xs]))
    parts = []
    for x in xs:
        t = list(target)
        t[axis] = x.shape[axis]
        parts.append(x.expand(*t))
    return torch.cat(parts, axis)


def reshape(attrs, xs):
    x = xs[0]
    return x.reshape([x.shape[i] if v == 0 else v for i, v in enumerate(attrs["shape"])])


def reduce_kind(attrs, x):
    """The Reduce op's kinds (core/ir/op_attrs.h, ReduceKind) with PyTorch's reductions."""
    dims, keep, kind = attrs["axes"], attrs["keepdims"], attrs["kind"]
    if kind == "min":
        return x.amin(dim=dims, keepdim=keep)
    if kind == "prod":  # torch.prod takes one dim: the largest first, so the others keep their index
        for d in sorted((d % x.dim() for d in dims), reverse=True):
            x = x.prod(dim=d, keepdim=keep)
        return x
    if kind == "l1":
        return x.abs().sum(dim=dims, keepdim=keep)
    if kind == "l2":
        return torch.linalg.vector_norm(x, 2, dim=dims, keepdim=keep)
    if kind == "sum_square":
        return (x * x).sum(dim=dims, keepdim=keep)
    if kind == "log_sum":
        return torch.log(x.sum(dim=dims, keepdim=keep))
    if kind == "log_sum_exp":
        return torch.logsumexp(x, dim=dims, keepdim=keep)
    raise ValueError(kind)


def pool_output_size(n, k, pb, pe, s, d, ceil_mode):
    """ONNX's and PyTorch's pooling output size (PyTorch's pooling_output_shape with asymmetric padding)."""
    room = n + pb + pe - (d * (k - 1) + 1)
    out = (room + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + pb:
        out -= 1
    return out


def pool2d(attrs, xs):
    """Pool2d. Symmetric padding of at most half the window goes straight to F.max_pool2d / F.avg_pool2d;
    asymmetric padding is built from them: the input is padded explicitly (-inf for max, 0 for average, and the
    ceil_mode overhang likewise), pooled without padding, and an average divides the window sums by the pooled
    count of input positions (or of input and padding with count_include_pad). The generator checks that this
    construction equals PyTorch's own on every symmetric case."""
    x = xs[0]
    k, s, d = (attrs["kernel_h"], attrs["kernel_w"]), (attrs["stride_h"], attrs["stride_w"]), \
        (attrs["dilation_h"], attrs["dilation_w"])
    pb, pe = (attrs["pad_top"], attrs["pad_left"]), (attrs["pad_bottom"], attrs["pad_right"])
    if pb == pe and all(p <= kk // 2 for p, kk in zip(pb, k)) and not attrs.get("_constructed"):
        if attrs["kind"] == "max":
            return F.max_pool2d(x, k, s, pb, d, ceil_mode=attrs["ceil_mode"])
        assert d == (1, 1)
        return F.avg_pool2d(x, k, s, pb, ceil_mode=attrs["ceil_mode"],
                            count_include_pad=attrs["count_include_pad"])
    out = [pool_output_size(x.shape[2 + i], k[i], pb[i], pe[i], s[i], d[i], attrs["ceil_mode"]) for i in range(2)]
    # Trailing room so that every window of the output fits (the ceil_mode overhang).
    over = [max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (x.shape[2 + i] + pb[i] + pe[i])) for i in range(2)]
    pad = (pb[1], pe[1] + over[1], pb[0], pe[0] + over[0])
    if attrs["kind"] == "max":
        y = F.max_pool2d(F.pad(x, pad, value=-math.inf), k, s, 0, d)
        return y[:, :, :out[0], :out[1]]
    assert d == (1, 1)
    total = F.avg_pool2d(F.pad(x, pad), k, s, divisor_override=1)
    inside = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)
    if attrs["count_include_pad"]:  # input and padding count, the overhang does not
        mask = F.pad(F.pad(inside, (pb[1], pe[1], pb[0], pe[0]), value=1.0), (0, over[1], 0, over[0]))
    else:
        mask = F.pad(inside, pad)
    count = F.avg_pool2d(mask, k, s, divisor_override=1)
    return (total / count)[:, :, :out[0], :out[1]]


def slice_(attrs, xs):
    """x[start:end:step] along one axis, Python's slice (numpy's, as torch has no negative steps)."""
    x = xs[0]
    axis = attrs["axis"] % x.dim()
    index = (slice(None),) * axis + (slice(attrs["start"], attrs["end"], attrs.get("step", 1)),)
    return torch.from_numpy(x.numpy()[index].copy())


COMPARE = {"equal": torch.eq, "less": torch.lt, "greater": torch.gt, "less_or_equal": torch.le,
           "greater_or_equal": torch.ge, "not_equal": torch.ne}


def pad(attrs, xs):
    """ONNX Pad: numpy.pad (its reflect is PyTorch's: the edge is not repeated; edge is replicate)."""
    x = xs[0]
    r = x.dim()
    widths = [(attrs["pads"][d], attrs["pads"][d + r]) for d in range(r)]
    mode = attrs["mode"]
    if mode == "constant":
        y = np.pad(x.numpy(), widths, mode="constant", constant_values=attrs["value"])
    else:
        y = np.pad(x.numpy(), widths, mode="reflect" if mode == "reflect" else "edge")
    return torch.from_numpy(y)


def squeeze_excite(attrs, xs):
    """SqueezeExcite as PyTorch's SE modules compute it (torchvision's SqueezeExcitation): adaptive average pool
    to 1x1, 1x1 conv, ReLU or SiLU, 1x1 conv, sigmoid or hard sigmoid (F.hardsigmoid for PyTorch's 1/6, 1/2),
    scale. xs: x, fc1_weight, [fc1_bias], fc2_weight, [fc2_bias] (absent biases are left out; a bias is the
    only 1-D input)."""
    x, w1 = xs[0], xs[1]
    i = 2
    b1 = xs[i] if xs[i].dim() == 1 else None
    i += b1 is not None
    w2 = xs[i]
    b2 = xs[i + 1] if len(xs) > i + 1 else None
    c, cr = x.shape[1], w1.shape[0]
    s = F.adaptive_avg_pool2d(x, 1)
    h = F.conv2d(s, w1.reshape(cr, c, 1, 1), b1)
    h = F.silu(h) if attrs["activation"] == "silu" else F.relu(h)
    z = F.conv2d(h, w2.reshape(c, cr, 1, 1), b2)
    if attrs["gate"] == "sigmoid":
        g = torch.sigmoid(z)
    elif (attrs["gate_alpha"], attrs["gate_beta"]) == (1.0 / 6.0, 0.5):
        g = F.hardsigmoid(z)
    else:
        g = torch.clamp(attrs["gate_alpha"] * z + attrs["gate_beta"], 0.0, 1.0)
    return x * g


def expand(attrs, xs):
    x = xs[0]
    return torch.broadcast_to(x, torch.broadcast_shapes(tuple(x.shape), tuple(attrs["shape"]))).contiguous()


# Model-family ops live in their own modules beside this file (op_cases_<family>.py): each provides
# OPS = {op name: fn(attrs, inputs) -> output} and cases(writer).
EXTRA_MODULES = ("op_cases_soft", "op_cases_lavit", "op_cases_convt_argmax", "op_cases_external", "op_cases_performer",
                 "op_cases_nystrom", "op_cases_sk", "op_cases_fastformer", "op_cases_kernelized")
EXTRA_OPS = {}


def run_op(op, attrs, xs):
    if op == "Conv2d" and attrs.get("channels_last"):
        nchw = dict(attrs, channels_last=False)
        return run_op("Conv2d", nchw, [xs[0].permute(0, 3, 1, 2)] + list(xs[1:])).permute(0, 2, 3, 1)
    if op == "Conv2d":
        y = F.conv2d(xs[0], xs[1], xs[2] if len(xs) > 2 else None, (attrs["stride_h"], attrs["stride_w"]),
                     (attrs["pad_h"], attrs["pad_w"]), (attrs["dilation_h"], attrs["dilation_w"]), attrs["groups"])
        return ACTIVATIONS[attrs["activation"]](y)
    if op == "BatchNorm2d":
        return F.batch_norm(xs[0], xs[3], xs[4], xs[1], xs[2], training=False, eps=attrs["eps"])
    if op == "ConvMlp":  # the planner's fused PVT v2 / LaViT MLP, written as PyTorch's modules compute it
        b, n, _ = xs[0].shape
        h, w, ch = attrs["height"], attrs["width"], xs[1].shape[0]
        y = ACTIVATIONS[attrs["fc1_activation"]](F.linear(xs[0], xs[1], xs[2]))
        y = y.transpose(1, 2).reshape(b, ch, h, w)
        y = F.conv2d(y, xs[3], xs[4], 1, (attrs["pad_h"], attrs["pad_w"]), 1, ch)
        y = ACTIVATIONS[attrs["dw_activation"]](y).flatten(2).transpose(1, 2)
        y = ACTIVATIONS[attrs["fc2_activation"]](F.linear(y, xs[5], xs[6]))
        return y + xs[7] if len(xs) > 7 else y
    if op == "Linear":
        y = ACTIVATIONS[attrs["activation"]](F.linear(xs[0], xs[1], xs[2] if len(xs) > 2 else None))
        return y + xs[3] if len(xs) > 3 else y  # the residual the planner fuses in
    if op == "LayerNorm":
        g = xs[1] if len(xs) > 1 else None
        b = xs[2] if len(xs) > 2 else None
        return F.layer_norm(xs[0], (xs[0].shape[-1],), g, b, attrs["eps"])
    if op == "Gelu":
        return F.gelu(xs[0], approximate="tanh" if attrs["approximation"] == "tanh" else "none")
    if op == "Relu":
        return F.relu(xs[0])
    if op == "Add":
        return xs[0] + xs[1]
    if op == "Mul":
        return xs[0] * xs[1]
    if op == "Concat":
        return concat(attrs, xs)
    if op == "Slice":
        return slice_(attrs, xs)
    if op == "Reshape":
        return reshape(attrs, xs)
    if op == "Transpose":
        return xs[0].permute(attrs["perm"])
    if op == "Sub":
        return xs[0] - xs[1]
    if op == "Div":
        return xs[0] / xs[1]
    if op == "Exp":
        return torch.exp(xs[0])
    if op == "ReduceSum":
        return xs[0].sum(dim=attrs["axes"], keepdim=attrs["keepdims"])
    if op == "ReduceMax":
        return xs[0].amax(dim=attrs["axes"], keepdim=attrs["keepdims"])
    if op == "ReduceMean":
        return xs[0].mean(dim=attrs["axes"], keepdim=attrs["keepdims"])
    if op == "MatMul":
        return torch.matmul(xs[0], xs[1])
    if op == "Softmax":
        return F.softmax(xs[0], dim=attrs["axis"])
    if op == "SoftmaxAttention":
        return attention(attrs, xs)
    if op == "AdaptiveAvgPool2d":
        return F.adaptive_avg_pool2d(xs[0], (attrs["out_h"], attrs["out_w"]))
    if op == "Pool2d":
        return pool2d(attrs, xs)
    if op == "Reduce":
        return reduce_kind(attrs, xs[0])
    if op == "LogSoftmax":
        return F.log_softmax(xs[0], dim=attrs["axis"])
    if op == "InstanceNorm":
        return F.instance_norm(xs[0], weight=xs[1], bias=xs[2], eps=attrs["eps"])
    if op == "Compare":
        return COMPARE[attrs["kind"]](xs[0], xs[1]).to(xs[0].dtype)
    if op == "Where":
        return torch.where(xs[0] != 0, xs[1], xs[2])
    if op == "Pad":
        return pad(attrs, xs)
    if op == "Expand":
        return expand(attrs, xs)
    if op == "SqueezeExcite":
        return squeeze_excite(attrs, xs)
    if op == "Resize":
        return resize(attrs, xs)
    if op in EXTRA_OPS:
        return EXTRA_OPS[op](attrs, xs)
    raise ValueError(op)


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.names = set()
        self.gen = torch.Generator().manual_seed(20240601)

    def randn(self, *shape, scale=1.0, offset=0.0):
        return torch.randn(*shape, generator=self.gen) * scale + offset

    def rand(self, *shape, lo=0.0, hi=1.0):
        return torch.rand(*shape, generator=self.gen) * (hi - lo) + lo

    def add(self, name, op, attrs, inputs, const=()):
        """inputs: list of float32 tensors (None for an absent optional input); const: indices of weights."""
        assert name not in self.names, name
        self.names.add(name)
        xs32 = [None if x is None else x.to(torch.float32).contiguous() for x in inputs]
        present32 = [x for x in xs32 if x is not None] if op != "LayerNorm" else xs32
        with torch.no_grad():
            y64 = run_op(op, attrs, [None if x is None else x.double() for x in present32])
            y32 = run_op(op, attrs, present32)
        batch = y64.shape[0] if y64.dim() > 0 else 0
        entries = []
        batched = []
        for i, x in enumerate(xs32):
            if x is None:
                entries.append(None)
                batched.append(False)
                continue
            fname = f"{name}.in{i}.npy"
            np.save(os.path.join(self.out, fname), x.numpy())
            is_b = i not in const and x.dim() > 0 and batch >= 2 and x.shape[0] == batch
            batched.append(is_b)
            entries.append({"file": fname, "const": i in const, "batched": is_b})
        batchable = False
        if batch >= 2 and any(batched):
            try:
                sub = [None if x is None else (x[:1] if b else x) for x, b in zip(xs32, batched)]
                sub = [x for x in sub if x is not None] if op != "LayerNorm" else sub
                with torch.no_grad():
                    y1 = run_op(op, attrs, [None if x is None else x.double() for x in sub])
                batchable = tuple(y1.shape) == (1,) + tuple(y64.shape[1:]) and bool(torch.allclose(y1, y64[:1]))
            except RuntimeError:
                batchable = False
        np.save(os.path.join(self.out, f"{name}.out64.npy"), y64.numpy())
        np.save(os.path.join(self.out, f"{name}.out32.npy"), y32.numpy())
        self.cases.append({"name": name, "op": op, "attrs": attrs, "inputs": entries,
                           "expected64": f"{name}.out64.npy", "expected32": f"{name}.out32.npy",
                           "batchable": batchable})

    def finish(self):
        with open(os.path.join(self.out, "manifest.json"), "w") as f:
            json.dump({"version": 1, "cases": self.cases}, f, indent=1)


def conv_cases(w):
    # name, B, Cin, H, W, Cout, (kh, kw), (sh, sw), (ph, pw), (dh, dw), groups, bias, activation
    specs = [
        ("conv_patch4", 2, 3, 16, 16, 8, (4, 4), (4, 4), (0, 0), (1, 1), 1, True, "none"),
        ("conv_patch16", 1, 3, 32, 32, 24, (16, 16), (16, 16), (0, 0), (1, 1), 1, True, "none"),
        ("conv_3x3_same", 2, 4, 9, 9, 5, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, "none"),
        ("conv_k7s4p3_overlap", 2, 3, 29, 31, 7, (7, 7), (4, 4), (3, 3), (1, 1), 1, True, "none"),
        ("conv_k3s2p1_overlap", 2, 7, 13, 13, 13, (3, 3), (2, 2), (1, 1), (1, 1), 1, True, "none"),
        ("conv_depthwise", 2, 13, 7, 7, 13, (3, 3), (1, 1), (1, 1), (1, 1), 13, True, "none"),
        ("conv_depthwise_mult2", 1, 6, 8, 5, 12, (3, 3), (1, 1), (1, 1), (1, 1), 6, True, "none"),
        ("conv_dilated", 1, 5, 11, 10, 3, (3, 3), (1, 1), (2, 2), (2, 2), 1, True, "none"),
        ("conv_grouped3", 2, 6, 8, 8, 9, (3, 3), (2, 2), (1, 1), (1, 1), 3, True, "none"),
        ("conv_1x1", 2, 97, 5, 5, 7, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "none"),
        ("conv_1x1_s2", 2, 7, 5, 6, 3, (1, 1), (2, 2), (0, 0), (1, 1), 1, True, "none"),
        ("conv_1x1_pad1", 1, 3, 4, 4, 2, (1, 1), (1, 1), (1, 1), (1, 1), 1, True, "none"),
        ("conv_sr2", 1, 16, 14, 14, 16, (2, 2), (2, 2), (0, 0), (1, 1), 1, True, "none"),
        ("conv_asym", 2, 3, 10, 12, 4, (3, 5), (2, 1), (1, 2), (1, 2), 1, True, "none"),
        ("conv_nobias", 2, 4, 6, 6, 3, (3, 3), (1, 1), (0, 0), (1, 1), 1, False, "none"),
        ("conv_out1x1", 1, 3, 5, 5, 2, (5, 5), (1, 1), (0, 0), (1, 1), 1, True, "none"),
        ("conv_relu", 2, 4, 7, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, "relu"),
        ("conv_gelu", 2, 4, 7, 7, 6, (3, 3), (2, 2), (1, 1), (1, 1), 2, True, "gelu_erf"),
        ("conv_gelu_tanh", 1, 6, 7, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 6, True, "gelu_tanh"),
    ]
    for name, b, cin, h, wd, cout, k, s, p, d, g, bias, act in specs:
        fan = cin // g * k[0] * k[1]
        x = w.randn(b, cin, h, wd)
        wt = w.randn(cout, cin // g, k[0], k[1], scale=1.0 / math.sqrt(fan))
        inputs = [x, wt] + ([w.randn(cout, scale=0.5)] if bias else [])
        attrs = {"stride_h": s[0], "stride_w": s[1], "pad_h": p[0], "pad_w": p[1], "dilation_h": d[0],
                 "dilation_w": d[1], "groups": g, "activation": act}
        w.add(name, "Conv2d", attrs, inputs, const=(1, 2))


def linear_cases(w):
    specs = [  # name, input shape, N, bias, activation
        ("linear_small", (2, 7, 13), 5, True, "none"),
        ("linear_deit_qkv", (2, 197, 192), 576, True, "none"),
        ("linear_deit_fc1_gelu", (1, 197, 192), 768, True, "gelu_erf"),
        ("linear_2d", (3, 97), 3, True, "none"),
        ("linear_rank4", (2, 3, 4, 8), 6, True, "none"),
        ("linear_k1", (2, 5, 1), 4, True, "none"),
        ("linear_n1", (2, 5, 9), 1, True, "none"),
        ("linear_nobias", (2, 7, 33), 17, False, "none"),
        ("linear_relu", (2, 13, 16), 24, True, "relu"),
        ("linear_gelu_tanh", (2, 3, 16), 7, True, "gelu_tanh"),
        ("linear_head", (3, 192), 1000, True, "none"),
    ]
    for name, shape, n, bias, act in specs:
        k = shape[-1]
        inputs = [w.randn(*shape), w.randn(n, k, scale=1.0 / math.sqrt(k))] + ([w.randn(n, scale=0.5)] if bias else [])
        w.add(name, "Linear", {"activation": act}, inputs, const=(1, 2))


def norm_cases(w):
    for name, shape, eps in [("bn_basic", (2, 7, 5, 3), 1e-5), ("bn_eps3", (1, 13, 4, 4), 1e-3),
                             ("bn_1x1", (3, 97, 1, 1), 1e-5)]:
        c = shape[1]
        w.add(name, "BatchNorm2d", {"eps": eps},
              [w.randn(*shape, scale=2.0, offset=0.5), w.randn(c), w.randn(c), w.randn(c, scale=0.5),
               w.rand(c, lo=0.1, hi=3.0)], const=(1, 2, 3, 4))
    for name, shape, eps, affine, offset in [
            ("ln_small", (2, 7, 13), 1e-5, "both", 0.0), ("ln_deit", (2, 197, 192), 1e-6, "both", 0.0),
            ("ln_offset", (2, 5, 64), 1e-6, "both", 100.0), ("ln_noaffine", (3, 7, 9), 1e-5, "none", 0.0),
            ("ln_gamma_only", (2, 3, 8), 1e-5, "gamma", 0.0), ("ln_c1", (3, 1), 1e-5, "both", 0.0),
            ("ln_2d", (4, 97), 1e-5, "both", 1.0), ("ln_rank4", (2, 3, 5, 7), 1e-5, "both", 0.0)]:
        c = shape[-1]
        x = w.randn(*shape, offset=offset)
        if affine == "both":
            w.add(name, "LayerNorm", {"eps": eps}, [x, w.randn(c, offset=1.0), w.randn(c)], const=(1, 2))
        elif affine == "gamma":
            w.add(name, "LayerNorm", {"eps": eps}, [x, w.randn(c, offset=1.0), None], const=(1,))
        else:
            w.add(name, "LayerNorm", {"eps": eps}, [x])


def elementwise_cases(w):
    w.add("gelu_erf", "Gelu", {"approximation": "erf"}, [w.randn(2, 97, 13, scale=3.0)])
    w.add("gelu_tanh", "Gelu", {"approximation": "tanh"}, [w.randn(2, 97, 13, scale=3.0)])
    w.add("gelu_erf_wide", "Gelu", {"approximation": "erf"}, [torch.linspace(-12, 12, 1001).reshape(7, 143)])
    w.add("gelu_tanh_wide", "Gelu", {"approximation": "tanh"}, [torch.linspace(-12, 12, 1001).reshape(7, 143)])
    w.add("relu", "Relu", {}, [w.randn(3, 7, 5)])
    w.add("relu_1d", "Relu", {}, [w.randn(1)])
    for op in ("Add", "Mul"):
        p = op.lower()
        for name, a, b in [("same", (2, 7, 13), (2, 7, 13)), ("row", (2, 7, 13), (13,)),
                           ("mid", (2, 7, 13), (1, 7, 1)), ("both", (2, 1, 5), (1, 7, 1)),
                           ("scalar", (3, 4), (1,)), ("rank", (4, 3, 1, 5), (3, 7, 1)),
                           ("chan", (2, 13, 7, 7), (1, 13, 1, 1)), ("left_bcast", (13,), (2, 7, 13)),
                           ("batch_item", (3, 5, 4), (3, 1, 1))]:
            w.add(f"{p}_{name}", op, {}, [w.randn(*a), w.randn(*b)])


def layout_cases(w):
    c = 12
    w.add("concat_cls", "Concat", {"axis": 1}, [w.randn(1, 1, c), w.randn(2, 7, c)])
    w.add("concat_cls_dist", "Concat", {"axis": 1}, [w.randn(1, 1, c), w.randn(1, 1, c), w.randn(3, 5, c)])
    w.add("concat_last", "Concat", {"axis": -1}, [w.randn(2, 3, 4), w.randn(2, 3, 7)])
    w.add("concat_axis0", "Concat", {"axis": 0}, [w.randn(2, 3, 4), w.randn(1, 3, 4)])
    w.add("concat_bcast_mid", "Concat", {"axis": 2}, [w.randn(2, 1, 3), w.randn(1, 5, 2), w.randn(2, 5, 1)])
    w.add("concat_single", "Concat", {"axis": 0}, [w.randn(3, 4)])
    x = w.randn(2, 7, 5)
    for name, axis, start, end in [("slice_cls", 1, 0, 1), ("slice_tokens", 1, 1, 10 ** 9),
                                   ("slice_neg_start", 1, -3, 10 ** 9), ("slice_neg_end", -1, 1, -1),
                                   ("slice_clamp", 2, -100, 3), ("slice_axis0", 0, 1, 2),
                                   ("slice_neg_both", -2, -5, -2)]:
        w.add(name, "Slice", {"axis": axis, "start": start, "end": end}, [x.clone()])
    for name, shape, target in [("reshape_heads", (2, 7, 12), [0, 7, 3, 4]), ("reshape_flat", (2, 7, 12), [-1, 12]),
                                ("reshape_zero_infer", (2, 7, 12), [0, -1]), ("reshape_keep2", (2, 3, 4, 5), [0, 0, -1]),
                                ("reshape_split", (3, 20), [0, 4, 5])]:
        w.add(name, "Reshape", {"shape": target}, [w.randn(*shape)])
    for name, shape, perm in [("transpose_heads", (2, 7, 3, 4), [0, 2, 1, 3]), ("transpose_last2", (2, 5, 6), [0, 2, 1]),
                              ("transpose_nchw_nlc", (2, 13, 3, 5), [0, 2, 3, 1]),
                              ("transpose_mixed", (2, 3, 4, 5), [3, 1, 0, 2]), ("transpose_identity", (4, 3), [0, 1]),
                              ("transpose_1d", (5,), [0])]:
        w.add(name, "Transpose", {"perm": perm}, [w.randn(*shape)])


def reduce_softmax_cases(w):
    for name, shape, axes, keep in [("mean_tokens", (2, 49, 13), [1], False), ("mean_hw_keep", (2, 13, 5, 5), [2, 3], True),
                                    ("mean_last", (2, 7, 13), [-1], False), ("mean_0_2", (3, 4, 5), [0, 2], False),
                                    ("mean_all_keep", (2, 3, 4), [0, 1, 2], True), ("mean_hw", (2, 7, 3, 4), [-2, -1], False)]:
        w.add(name, "ReduceMean", {"axes": axes, "keepdims": keep}, [w.randn(*shape, offset=0.5)])
    for name, shape, axis in [("softmax_last", (2, 3, 7, 7), -1), ("softmax_mid", (2, 5, 3), 1),
                              ("softmax_axis0", (3, 4), 0), ("softmax_wide", (2, 197), -1), ("softmax_len1", (3, 1), -1)]:
        w.add(name, "Softmax", {"axis": axis}, [w.randn(*shape, scale=4.0)])


def primitive_cases(w):
    """The plain ops of --emit primitive (MatMul, Sub, Div, Exp, ReduceSum, ReduceMax). Drawn from their own
    generator, after every other case, so adding them changed no earlier case's data."""
    w.gen = torch.Generator().manual_seed(20261122)
    w.add("exp", "Exp", {}, [w.randn(3, 7, 5, scale=3.0)])
    w.add("exp_neg_dist", "Exp", {}, [-w.rand(2, 19, 7, lo=0.0, hi=40.0)])
    for op in ("Sub", "Div"):
        for name, a, b in [("same", (2, 7, 13), (2, 7, 13)), ("row", (2, 7, 13), (13,)), ("both", (2, 1, 5), (1, 7, 1)),
                           ("scalar", (3, 4), (1,)), ("left_bcast", (13,), (2, 7, 13))]:
            y = w.randn(*b)
            if op == "Div":  # denominators away from zero
                y = torch.where(y < 0, y - 0.5, y + 0.5)
            w.add(f"{op.lower()}_{name}", op, {}, [w.randn(*a), y])
    w.add("div_scalar_num", "Div", {}, [torch.tensor([1.8]), w.rand(2, 3, 1, 1, lo=0.5, hi=9.0)])
    for op in ("ReduceSum", "ReduceMax"):
        for name, shape, axes, keep in [("last_keep", (2, 3, 7, 7), [-1], True), ("mid", (2, 5, 3), [1], False),
                                        ("two_keep", (2, 3, 7, 7), [2, 3], True), ("all", (3, 4), [0, 1], False)]:
            w.add(f"{op[6:].lower()}_{name}", op, {"axes": axes, "keepdims": keep}, [w.randn(*shape, offset=0.5)])
    # Channels-last convolutions (the planner's channels_last_conv pass): depthwise 3x3 as in the PVT v2 / LaViT
    # MLP, odd sizes and channel counts not a multiple of 16, strides, a dense and a grouped one.
    for name, x, wshape, stride, pad, groups, act in [
            ("conv_nhwc_dw3", (2, 7, 5, 37), (37, 1, 3, 3), 1, 1, 37, "none"),
            ("conv_nhwc_dw3_gelu", (1, 9, 9, 64), (64, 1, 3, 3), 1, 1, 64, "gelu_erf"),
            ("conv_nhwc_dw3_s2", (3, 8, 6, 19), (19, 1, 3, 3), 2, 1, 19, "none"),
            ("conv_nhwc_dw5", (2, 6, 7, 33), (33, 1, 5, 5), 1, 2, 33, "relu"),
            ("conv_nhwc_dense_s2", (2, 8, 8, 6), (10, 6, 2, 2), 2, 0, 1, "none"),
            ("conv_nhwc_grouped", (2, 5, 5, 8), (6, 4, 3, 3), 1, 1, 2, "none")]:
        attrs = {"stride_h": stride, "stride_w": stride, "pad_h": pad, "pad_w": pad, "dilation_h": 1, "dilation_w": 1,
                 "groups": groups, "activation": act, "channels_last": True}
        w.add(name, "Conv2d", attrs, [w.randn(*x), w.randn(*wshape, scale=0.3), w.randn(wshape[0], scale=0.1)],
              const=(1, 2))
    # Linear with a fused residual (fuse_epilogue), after the activation.
    for name, x, n, act in [("linear_residual", (2, 7, 13), 9, "none"), ("linear_residual_gelu", (3, 5, 33), 19, "gelu_erf"),
                            ("linear_residual_wide", (2, 11, 64), 100, "relu")]:
        w.add(name, "Linear", {"activation": act},
              [w.randn(*x), w.randn(n, x[-1], scale=0.3), w.randn(n, scale=0.1), w.randn(*x[:-1], n)], const=(1, 2))
    # ConvMlp (the planner's fuse_conv_mlp): PVT v2's MLP (GELU after the conv), the linear variant's ReLU after
    # fc1, a 5x1 kernel, with and without the residual; odd grids and widths.
    for name, (b, h, wd, c, ch, co), (ph, pw), acts, residual in [
            ("conv_mlp_pvt", (2, 7, 5, 13, 52, 13), (1, 1), ("none", "gelu_erf", "none"), True),
            ("conv_mlp_relu", (3, 4, 9, 8, 33, 8), (1, 1), ("relu", "gelu_erf", "none"), True),
            ("conv_mlp_k5x1_tanh", (2, 9, 3, 6, 20, 11), (2, 0), ("gelu_tanh", "relu", "gelu_erf"), False)]:
        attrs = {"height": h, "width": wd, "pad_h": ph, "pad_w": pw, "fc1_activation": acts[0],
                 "dw_activation": acts[1], "fc2_activation": acts[2]}
        inputs = [w.randn(b, h * wd, c), w.randn(ch, c, scale=c ** -0.5), w.randn(ch, scale=0.1),
                  w.randn(ch, 1, 2 * ph + 1, 2 * pw + 1, scale=0.3), w.randn(ch, scale=0.1),
                  w.randn(co, ch, scale=ch ** -0.5), w.randn(co, scale=0.1)]
        if residual:
            inputs.append(w.randn(b, h * wd, co))
        w.add(name, "ConvMlp", attrs, inputs, const=(1, 2, 3, 4, 5, 6))
    # q·kᵀ and p·v of attention, plus broadcast batch axes and odd sizes.
    for name, a, b in [("matmul_heads", (2, 3, 7, 5), (2, 3, 5, 9)), ("matmul_2d", (7, 5), (5, 3)),
                       ("matmul_bcast_b", (2, 3, 7, 5), (5, 4)), ("matmul_bcast_mid", (2, 1, 7, 5), (3, 5, 4)),
                       ("matmul_rank", (3, 7, 5), (2, 1, 5, 6)), ("matmul_odd", (2, 17, 33), (2, 33, 19)),
                       ("matmul_row", (3, 1, 13), (3, 13, 1))]:
        w.add(name, "MatMul", {}, [w.randn(*a), w.randn(*b)])


def pool_cases(w):
    # Divisible and non-divisible bins (overlapping windows), upsampling (out > in), PVT v2-li's 56x56 -> 7x7.
    for name, shape, out in [("pool_56_to_7", (2, 5, 56, 56), (7, 7)), ("pool_13x11_to_7x3", (2, 3, 13, 11), (7, 3)),
                             ("pool_odd_to_1", (3, 7, 9, 5), (1, 1)), ("pool_up_3_to_5", (1, 2, 3, 3), (5, 5)),
                             ("pool_7_to_7", (2, 4, 7, 7), (7, 7))]:
        w.add(name, "AdaptiveAvgPool2d", {"out_h": out[0], "out_w": out[1]}, [w.randn(*shape, offset=0.3)])


def pool2d_cases(w):
    """Pool2d (ONNX MaxPool / AveragePool): GoogLeNet's and SqueezeNet's 3x3 stride-2 ceil_mode windows, ResNet's
    stem, dilation, non-square windows, asymmetric (SAME-style) padding, count_include_pad with the ceil_mode
    overhang, odd sizes. Drawn from their own generator, after every other case, so no earlier case changed."""
    w.gen = torch.Generator().manual_seed(20261126)
    specs = [  # name, kind, shape, (kh, kw), (sh, sw), (top, left, bottom, right), (dh, dw), ceil, include_pad
        ("maxpool_googlenet_ceil", "max", (2, 5, 13, 11), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), True, False),
        ("maxpool_squeezenet_ceil", "max", (1, 7, 14, 10), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), True, False),
        ("maxpool_resnet_stem", "max", (2, 3, 9, 10), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, False),
        ("maxpool_k2s2_odd", "max", (3, 2, 7, 9), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False, False),
        ("maxpool_k2s2_odd_ceil", "max", (3, 2, 7, 9), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), True, False),
        ("maxpool_rect", "max", (2, 3, 8, 13), (2, 3), (1, 2), (1, 1, 1, 1), (1, 1), False, False),
        ("maxpool_dilated_ceil", "max", (1, 3, 10, 11), (3, 2), (2, 3), (1, 1, 1, 1), (2, 3), True, False),
        ("maxpool_same_upper", "max", (2, 3, 7, 6), (2, 3), (1, 1), (0, 1, 1, 1), (1, 1), False, False),
        ("maxpool_asym_ceil", "max", (2, 4, 9, 8), (3, 3), (2, 2), (1, 0, 2, 1), (1, 1), True, False),
        ("maxpool_whole_image", "max", (3, 5, 7, 5), (7, 5), (1, 1), (0, 0, 0, 0), (1, 1), False, False),
        ("maxpool_ceil_drop_last", "max", (1, 2, 5, 7), (2, 2), (2, 2), (1, 1, 1, 1), (1, 1), True, False),
        ("avgpool_ceil_drop_last_incl", "average", (1, 2, 5, 7), (2, 2), (2, 2), (1, 1, 1, 1), (1, 1), True, True),
        ("avgpool_k3s1p1", "average", (2, 3, 7, 9), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, False),
        ("avgpool_k3s1p1_incl", "average", (2, 3, 7, 9), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, True),
        ("avgpool_k3s2p1_ceil", "average", (2, 4, 8, 11), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, False),
        ("avgpool_k3s2p1_ceil_incl", "average", (2, 4, 8, 11), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, True),
        ("avgpool_k2s2_ceil", "average", (1, 6, 7, 5), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), True, False),
        ("avgpool_rect", "average", (2, 3, 9, 6), (3, 2), (2, 1), (0, 0, 0, 0), (1, 1), False, False),
        ("avgpool_asym", "average", (2, 3, 7, 6), (3, 2), (1, 2), (2, 0, 1, 1), (1, 1), False, False),
        ("avgpool_asym_incl_ceil", "average", (2, 3, 8, 7), (3, 3), (2, 2), (2, 0, 1, 2), (1, 1), True, True),
    ]
    for name, kind, shape, k, s, p, d, ceil, incl in specs:
        attrs = {"kind": kind, "kernel_h": k[0], "kernel_w": k[1], "stride_h": s[0], "stride_w": s[1],
                 "pad_top": p[0], "pad_left": p[1], "pad_bottom": p[2], "pad_right": p[3], "dilation_h": d[0],
                 "dilation_w": d[1], "ceil_mode": ceil, "count_include_pad": incl}
        x = w.randn(*shape)
        # The padded construction must agree with PyTorch wherever PyTorch takes the padding itself.
        with torch.no_grad():
            direct, built = pool2d(attrs, [x.double()]), pool2d(dict(attrs, _constructed=True), [x.double()])
        assert direct.shape == built.shape and torch.allclose(direct, built, rtol=0, atol=1e-12), name
        w.add(name, "Pool2d", attrs, [x])


def reduce_norm_cases(w):
    """Reduce (every kind), LogSoftmax and InstanceNorm on odd shapes: one, several, negative and
    non-adjacent axes, keepdims both ways, the batch axis too; log-sum-exp and log-softmax around ±80, where
    a float32 exp over- or underflows without the max shift. Drawn from their own generator, after every
    other case, so no earlier case changed."""
    w.gen = torch.Generator().manual_seed(20261127)
    specs = [  # name, kind, shape, axes, keepdims, input (randn offset/scale or uniform range)
        ("reduce_min_last", "min", (2, 5, 7), [-1], False, "randn"),
        ("reduce_min_two_keep", "min", (3, 4, 5, 6), [1, 3], True, "randn"),
        ("reduce_min_all", "min", (2, 3, 5), [0, 1, 2], True, "randn"),
        ("reduce_prod_mid", "prod", (2, 7, 5), [1], False, "near1"),
        ("reduce_prod_two_keep", "prod", (3, 4, 3, 5), [-1, 1], True, "near1"),
        ("reduce_l1_two", "l1", (2, 5, 3, 7), [2, -1], False, "randn"),
        ("reduce_l1_keep", "l1", (3, 9, 4), [1], True, "randn"),
        ("reduce_l2_last", "l2", (2, 3, 17), [-1], False, "randn"),
        ("reduce_l2_image_keep", "l2", (2, 3, 5, 7), [2, 3], True, "randn"),
        ("reduce_sum_square_mid", "sum_square", (2, 6, 5), [1], True, "randn"),
        ("reduce_sum_square_batch", "sum_square", (3, 4, 5), [0, 2], False, "randn"),
        ("reduce_log_sum_last", "log_sum", (2, 5, 9), [-1], False, "positive"),
        ("reduce_log_sum_two_keep", "log_sum", (3, 4, 5, 2), [0, 2], True, "positive"),
        ("reduce_log_sum_exp_last", "log_sum_exp", (2, 4, 13), [-1], False, "randn"),
        ("reduce_log_sum_exp_large", "log_sum_exp", (2, 7, 6), [1], True, "large"),
        ("reduce_log_sum_exp_small", "log_sum_exp", (3, 5, 4), [1, 2], False, "small"),
    ]
    for name, kind, shape, axes, keep, dist in specs:
        if dist == "near1":
            x = w.rand(*shape, lo=0.6, hi=1.5)
        elif dist == "positive":
            x = w.rand(*shape, lo=0.05, hi=2.0)
        elif dist == "large":
            x = w.randn(*shape, scale=3.0, offset=80.0)
        elif dist == "small":
            x = w.randn(*shape, scale=3.0, offset=-120.0)
        else:
            x = w.randn(*shape)
        w.add(name, "Reduce", {"kind": kind, "axes": axes, "keepdims": keep}, [x])
    for name, shape, axis, offset in [("log_softmax_last", (2, 5, 11), -1, 0.0), ("log_softmax_mid", (3, 7, 4), 1, 0.0),
                                      ("log_softmax_first", (4, 3, 5), 0, 0.0),
                                      ("log_softmax_large", (2, 3, 9), -1, 90.0),
                                      ("log_softmax_image", (2, 6, 5, 3), 1, -50.0)]:
        w.add(name, "LogSoftmax", {"axis": axis}, [w.randn(*shape, scale=4.0, offset=offset)])
    for name, shape, eps in [("instance_norm_image", (2, 5, 7, 9), 1e-5), ("instance_norm_1d", (3, 4, 11), 1e-5),
                             ("instance_norm_3d", (2, 3, 4, 3, 5), 1e-3), ("instance_norm_single", (1, 7, 1, 13), 1e-2),
                             ("instance_norm_offset", (2, 3, 6, 5), 1e-5)]:
        x = w.randn(*shape, scale=2.0, offset=3.0 if name.endswith("offset") else 0.0)
        c = shape[1]
        w.add(name, "InstanceNorm", {"eps": eps}, [x, w.randn(c, offset=1.0), w.randn(c, scale=0.5)], const=(1, 2))


def data_cases(w):
    """Strided and reversed Slice (Swin's x[:, 0::2] and flips), Compare of every kind (ties, NaN, infinities,
    broadcasting), Where (three-way broadcasting, a NaN condition), Pad (constant / reflect / edge, checked
    against F.pad where PyTorch pads those axes) and Expand. Drawn from their own generator, after every other
    case, so no earlier case changed."""
    w.gen = torch.Generator().manual_seed(20261127)
    int64_min, big = -2 ** 63, 2 ** 62
    x = w.randn(3, 7, 5, 4)
    for name, axis, start, end, step in [
            ("slice_step2_even", 1, 0, big, 2), ("slice_step2_odd", 1, 1, big, 2), ("slice_step3_inner", 2, 1, -1, 3),
            ("slice_reverse", 1, -1, int64_min, -1), ("slice_reverse_last", -1, -1, int64_min, -1),
            ("slice_step_neg2_partial", 1, 5, 0, -2), ("slice_step_beyond", 2, 3, big, 100),
            ("slice_reverse_axis0", 0, big, int64_min, -1), ("slice_step_neg3_clamped", 2, 100, -100, -3)]:
        w.add(name, "Slice", {"axis": axis, "start": start, "end": end, "step": step}, [x.clone()])
    ties = torch.round(w.randn(2, 3, 5) * 2) / 2
    other = torch.round(w.randn(3, 1) * 2) / 2
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5])
    for kind in COMPARE:
        w.add(f"compare_{kind}_bcast", "Compare", {"kind": kind}, [ties, other])
        w.add(f"compare_{kind}_special", "Compare", {"kind": kind},
              [special.reshape(6, 1).expand(6, 6).contiguous(), special.reshape(1, 6)])
    cond = (w.randn(3, 1, 5) > 0).float()
    cond[0, 0, 1] = float("nan")  # non-zero: picks a
    w.add("where_bcast3", "Where", {}, [cond, w.randn(1, 4, 5), w.randn(5)])
    w.add("where_same", "Where", {}, [(w.randn(2, 3, 7) > 0.3).float(), w.randn(2, 3, 7), w.randn(2, 3, 7)])
    img = w.randn(2, 3, 5, 6)
    for name, mode, pads, value in [
            ("pad_constant_hw", "constant", [0, 0, 1, 2, 0, 0, 3, 0], 0.0),
            ("pad_constant_value_all", "constant", [0, 1, 2, 1, 0, 2, 0, 3], -1.25),
            ("pad_reflect_hw", "reflect", [0, 0, 2, 1, 0, 0, 4, 5], 0.0),
            ("pad_edge_hw", "edge", [0, 0, 3, 0, 0, 0, 1, 7], 0.0),
            ("pad_edge_channels", "edge", [0, 2, 0, 0, 0, 1, 0, 0], 0.0)]:
        attrs = {"mode": mode, "pads": pads, "value": value}
        if pads[:2] == [0, 0] and pads[4:6] == [0, 0]:  # PyTorch pads these: the references must agree
            torch_mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}[mode]
            kw = {"value": value} if mode == "constant" else {}
            direct = F.pad(img.double(), (pads[2 + 1], pads[6 + 1], pads[2], pads[6]), mode=torch_mode, **kw)
            assert torch.equal(direct, pad(attrs, [img.double()])), name
        w.add(name, "Pad", attrs, [img.clone()])
    w.add("pad_reflect_3d", "Pad", {"mode": "reflect", "pads": [0, 3, 1, 0, 2, 2], "value": 0.0}, [w.randn(2, 4, 3)])
    w.add("expand_tokens", "Expand", {"shape": [1, 4, 1]}, [w.randn(2, 1, 6)])
    w.add("expand_rank_up", "Expand", {"shape": [3, 1, 5, 1]}, [w.randn(5, 2)])
    w.add("expand_keep", "Expand", {"shape": [1, 1]}, [w.randn(3, 4)])


def squeeze_excite_cases(w):
    """SqueezeExcite (the planner's fused SE block; also a file op): torchvision's SE-ResNet / MobileNetV3 /
    EfficientNet forms (ReLU or SiLU, sigmoid or PyTorch's hard sigmoid, ONNX's HardSigmoid defaults 0.2, 0.5),
    weights as [Cr,C] and as 1x1 convs, without biases, odd sizes, a 1x1 map, a single hidden unit. Drawn from
    their own generator, after every other case, so no earlier case changed."""
    w.gen = torch.Generator().manual_seed(20261128)
    specs = [  # name, x shape, Cr, activation, gate, (alpha, beta), conv-shaped weights, biases
        ("se_resnet_relu_sigmoid", (2, 13, 7, 9), 5, "relu", "sigmoid", (0.0, 0.0), True, True),
        ("se_effnet_silu_sigmoid", (3, 24, 5, 3), 6, "silu", "sigmoid", (0.0, 0.0), True, True),
        ("se_mbv3_relu_hardsigmoid", (2, 16, 6, 6), 8, "relu", "hard_sigmoid", (1.0 / 6.0, 0.5), True, True),
        ("se_onnx_hardsigmoid", (2, 19, 4, 5), 7, "silu", "hard_sigmoid", (0.2, 0.5), False, True),
        ("se_linear_no_bias", (2, 37, 11, 1), 9, "relu", "sigmoid", (0.0, 0.0), False, False),
        ("se_one_hidden_1x1_map", (3, 10, 1, 1), 1, "relu", "sigmoid", (0.0, 0.0), True, True),
        ("se_wide_plane", (1, 8, 17, 33), 2, "silu", "hard_sigmoid", (1.0 / 6.0, 0.5), True, True),
    ]
    for name, shape, cr, act, gate, (alpha, beta), conv, bias in specs:
        c = shape[1]
        w1 = w.randn(cr, c, scale=c ** -0.5)
        w2 = w.randn(c, cr, scale=cr ** -0.5)
        if conv:
            w1, w2 = w1.reshape(cr, c, 1, 1), w2.reshape(c, cr, 1, 1)
        b1 = w.randn(cr, scale=0.5) if bias else None
        b2 = w.randn(c, scale=0.5) if bias else None
        attrs = {"activation": act, "gate": gate, "gate_alpha": alpha, "gate_beta": beta}
        w.add(name, "SqueezeExcite", attrs, [w.randn(*shape, offset=0.3), w1, b1, w2, b2], const=(1, 2, 3, 4))


TORCH_RESIZE_MODES = {1: "linear", 2: "bilinear", 3: "trilinear"}


def resize(attrs, xs):
    """F.interpolate as the case was made (size or scale_factor, align_corners); the IR attributes beside."""
    t = attrs["torch"]
    mode = t["mode"]
    if mode == "linear":
        mode = TORCH_RESIZE_MODES[len(attrs["sizes"])]
    kw = {} if mode == "nearest" else {"align_corners": t["align_corners"]}
    if t["scale_factor"] is not None:
        return F.interpolate(xs[0], scale_factor=t["scale_factor"], mode=mode, **kw)
    return F.interpolate(xs[0], size=tuple(attrs["sizes"]), mode=mode, **kw)


def resize_attrs(x_shape, mode, align, size=None, scale=None):
    """The IR's Resize attributes for F.interpolate over the trailing axes (docs/onnx.md, Resize): steps as
    PyTorch's float scale (1/scale_factor, in/out, or (in - 1)/(out - 1) with align_corners), scales as ONNX's."""
    spatial = x_shape[2:]
    f32 = np.float32
    sizes, steps, scales = [], [], []
    for i, n in enumerate(spatial):
        out = size[i] if size is not None else int(math.floor(n * scale))
        if align:
            step = f32(n - 1) / f32(out - 1) if out > 1 else f32(0)
        elif scale is not None:
            step = f32(1.0 / scale)
        else:
            step = f32(n) / f32(out)
        sizes.append(out)
        steps.append(float(step))
        scales.append(float(scale) if scale is not None else out / n)
    ir_mode = {"nearest": "nearest", "linear": "linear", "bicubic": "cubic"}[mode]
    return {"mode": ir_mode, "coordinate": "align_corners" if align else ("asymmetric" if mode == "nearest" else
                                                                          "half_pixel"),
            "nearest": "floor", "cubic_a": -0.75, "exclude_outside": False, "sizes": sizes, "steps": steps,
            "scales": scales, "torch": {"mode": mode, "align_corners": align, "scale_factor": scale}}


def resize_cases(w):
    """Resize against F.interpolate: nearest, (bi/tri)linear and bicubic, align_corners True and False, up and
    down, odd sizes, non-integer scale factors, one changed axis, 1-D and 3-D resizes. Drawn from their own
    generator, after every other case, so no earlier case changed."""
    w.gen = torch.Generator().manual_seed(20261129)
    specs = [  # name, x shape, torch mode, align_corners, size, scale_factor
        ("resize_bilinear_up_odd", (2, 3, 5, 7), "linear", False, (11, 13), None),
        ("resize_bilinear_down_odd", (2, 3, 13, 9), "linear", False, (5, 4), None),
        ("resize_bilinear_align_up", (2, 3, 5, 7), "linear", True, (11, 13), None),
        ("resize_bilinear_align_down", (1, 4, 13, 9), "linear", True, (6, 4), None),
        ("resize_bilinear_scale_1p7", (2, 2, 9, 11), "linear", False, None, 1.7),
        ("resize_bilinear_scale_0p6", (2, 2, 9, 11), "linear", False, None, 0.6),
        ("resize_bilinear_scale_2", (1, 3, 7, 6), "linear", False, None, 2.0),
        ("resize_bilinear_width_only", (2, 3, 7, 9), "linear", False, (7, 20), None),
        ("resize_bicubic_up_odd", (2, 3, 5, 7), "bicubic", False, (11, 13), None),
        ("resize_bicubic_down_odd", (2, 3, 13, 9), "bicubic", False, (5, 4), None),
        ("resize_bicubic_align_up", (2, 3, 5, 7), "bicubic", True, (11, 13), None),
        ("resize_bicubic_align_down", (1, 4, 13, 9), "bicubic", True, (6, 4), None),
        ("resize_bicubic_scale_1p7", (2, 2, 9, 11), "bicubic", False, None, 1.7),
        ("resize_bicubic_scale_0p6", (1, 2, 9, 11), "bicubic", False, None, 0.6),
        ("resize_bicubic_pos_embed_14_to_20", (1, 32, 14, 14), "bicubic", False, (20, 20), None),
        ("resize_bicubic_tiny_2x2", (2, 3, 2, 2), "bicubic", False, (5, 3), None),
        ("resize_nearest_up_odd", (2, 3, 5, 7), "nearest", False, (11, 13), None),
        ("resize_nearest_down_odd", (2, 3, 13, 9), "nearest", False, (5, 4), None),
        ("resize_nearest_scale_2", (1, 3, 4, 5), "nearest", False, None, 2.0),
        ("resize_nearest_scale_1p7", (2, 2, 9, 11), "nearest", False, None, 1.7),
        ("resize_nearest_2_to_82", (1, 2, 2, 3), "nearest", False, (82, 7), None),
        ("resize_linear_1d", (2, 5, 9), "linear", False, (17,), None),
        ("resize_linear_1d_align_down", (2, 5, 17), "linear", True, (6,), None),
        ("resize_trilinear_3d", (1, 2, 3, 4, 5), "linear", False, (5, 3, 7), None),
        ("resize_nearest_1d", (2, 3, 10), "nearest", False, (7,), None),
    ]
    for name, shape, mode, align, size, scale in specs:
        w.add(name, "Resize", resize_attrs(shape, mode, align, size, scale), [w.randn(*shape)])


def attention_cases(w):
    specs = [  # name, layout, B, Nq, Nk, C, heads, scale (None: d^-0.5)
        ("attn_sep", "separate", 2, 7, 7, 12, 3, None),
        ("attn_sep_nq_ne_nk", "separate", 2, 13, 5, 16, 2, None),
        ("attn_sep_1head", "separate", 1, 9, 4, 8, 1, 0.3),
        ("attn_qkv_deit", "qkv", 2, 50, 50, 48, 3, None),
        ("attn_qkv_8heads", "qkv", 2, 17, 17, 64, 8, None),
        ("attn_qkv_n1", "qkv", 2, 1, 1, 12, 2, None),
        ("attn_qkv_97", "qkv", 1, 97, 97, 20, 4, None),
        ("attn_kv_pvt", "q_kv", 2, 56, 14, 32, 1, None),
        ("attn_kv_pvt_2heads", "q_kv", 2, 49, 13, 24, 2, None),
        ("attn_kv_nk1", "q_kv", 1, 13, 1, 8, 2, None),
        ("attn_kv_5heads", "q_kv", 2, 7, 3, 40, 5, 1.7),
    ]
    for name, layout, b, nq, nk, c, h, scale in specs:
        scale = (c // h) ** -0.5 if scale is None else scale
        if layout == "separate":
            inputs = [w.randn(b, nq, c), w.randn(b, nk, c), w.randn(b, nk, c)]
        elif layout == "qkv":
            inputs = [w.randn(b, nq, 3 * c)]
        else:
            inputs = [w.randn(b, nq, c), w.randn(b, nk, 2 * c)]
        w.add(name, "SoftmaxAttention", {"num_heads": h, "scale": scale, "inputs": layout}, inputs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(2)
    w = Writer(args.out)
    conv_cases(w)
    linear_cases(w)
    norm_cases(w)
    elementwise_cases(w)
    layout_cases(w)
    reduce_softmax_cases(w)
    attention_cases(w)
    pool_cases(w)
    for name in EXTRA_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        EXTRA_OPS.update(mod.OPS)
        mod.cases(w)
    primitive_cases(w)
    pool2d_cases(w)
    reduce_norm_cases(w)
    data_cases(w)
    squeeze_excite_cases(w)
    resize_cases(w)
    w.finish()
    print(f"wrote {len(w.cases)} op cases to {args.out}")


if __name__ == "__main__":
    main()
