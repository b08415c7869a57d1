# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ConvTranspose and ArgMax op cases for make_op_cases.py (the ONNX importer's ConvTranspose, ArgMax / ArgMin).

ConvTranspose is PyTorch's F.conv_transpose2d. Its padding is symmetric and its output_padding smaller than the
stride or the dilation, so the general form (asymmetric pads, any output_padding) is built from it: the
transposed convolution without padding, zeros appended where output_padding reaches past it, the pads cropped
off, the bias added. The generator checks that construction against F.conv_transpose2d's own padding on every
case PyTorch can express.

ArgMax follows numpy.argmax / argmin, as ONNX's reference does (select_last_index: the same on the axis
reversed); a NaN wins (the first, or the last with select_last_index). The expected index is a float.

Both draw from their own generator, so no other case changes.
"""
import numpy as np
import torch
import torch.nn.functional as F


def conv_transpose_size(n, k, pb, pe, s, d, op):
    return (n - 1) * s - pb - pe + d * (k - 1) + 1 + op


def conv_transpose(attrs, xs):
    x, w = xs[0], xs[1]
    b = xs[2] if len(xs) > 2 else None
    s = (attrs["stride_h"], attrs["stride_w"])
    d = (attrs["dilation_h"], attrs["dilation_w"])
    pb = (attrs["pad_top"], attrs["pad_left"])
    pe = (attrs["pad_bottom"], attrs["pad_right"])
    op = (attrs["output_padding_h"], attrs["output_padding_w"])
    g = attrs["groups"]
    direct = pb == pe and all(o < max(si, di) for o, si, di in zip(op, s, d))
    if direct and not attrs.get("_constructed"):
        return F.conv_transpose2d(x, w, b, s, pb, op, g, d)
    y = F.conv_transpose2d(x, w, None, s, 0, 0, g, d)
    out = [conv_transpose_size(x.shape[2 + i], w.shape[2 + i], pb[i], pe[i], s[i], d[i], op[i]) for i in range(2)]
    extra = [max(0, pb[i] + out[i] - y.shape[2 + i]) for i in range(2)]
    y = F.pad(y, (0, extra[1], 0, extra[0]))[:, :, pb[0]:pb[0] + out[0], pb[1]:pb[1] + out[1]]
    return y + b[None, :, None, None] if b is not None else y


def arg_max(attrs, xs):
    x = xs[0].numpy()
    ax = attrs["axis"] % x.ndim
    fn = np.argmax if attrs["kind"] == "max" else np.argmin
    if attrs["select_last_index"]:
        idx = x.shape[ax] - 1 - fn(np.flip(x, ax), axis=ax)
    else:
        idx = fn(x, axis=ax)
    if attrs["keepdims"]:
        idx = np.expand_dims(idx, ax)
    return torch.from_numpy(np.ascontiguousarray(idx).astype(np.float64)).to(xs[0].dtype)


OPS = {"ConvTranspose": conv_transpose, "ArgMax": arg_max}


def conv_transpose_cases(w):
    specs = [  # name, B, Cin, H, W, Cout, (kh, kw), (sh, sw), (top, left, bottom, right), (dh, dw), (oph, opw), groups, bias
        ("convt_k2s2_unet", 2, 6, 5, 7, 4, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), (0, 0), 1, True),
        ("convt_k4s2p1_dcgan", 2, 5, 6, 5, 3, (4, 4), (2, 2), (1, 1, 1, 1), (1, 1), (0, 0), 1, True),
        ("convt_k3s1p1", 1, 7, 9, 8, 5, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (0, 0), 1, True),
        ("convt_k3s3_odd", 2, 3, 4, 5, 2, (3, 3), (3, 3), (0, 0, 0, 0), (1, 1), (0, 0), 1, False),
        ("convt_k3s2p1_outpad1", 2, 4, 5, 6, 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 1, True),
        ("convt_k3s3_outpad2", 1, 3, 4, 3, 4, (3, 3), (3, 3), (1, 1, 1, 1), (1, 1), (2, 1), 1, True),
        ("convt_dilated", 2, 4, 5, 6, 3, (3, 2), (1, 2), (0, 1, 0, 1), (2, 3), (1, 0), 1, True),
        ("convt_grouped2", 2, 6, 5, 4, 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (0, 0), 2, True),
        ("convt_depthwise", 1, 5, 6, 7, 5, (4, 4), (2, 2), (1, 1, 1, 1), (1, 1), (0, 0), 5, True),
        ("convt_grouped3_rect", 2, 9, 4, 7, 6, (2, 5), (3, 1), (0, 2, 0, 2), (1, 1), (2, 0), 3, True),
        ("convt_asym_pads", 2, 4, 5, 6, 3, (3, 3), (2, 2), (0, 1, 1, 0), (1, 1), (0, 0), 1, True),
        ("convt_asym_outpad", 1, 3, 6, 5, 4, (4, 3), (2, 3), (2, 0, 1, 2), (1, 2), (1, 2), 1, True),
        ("convt_asym_grouped_dilated", 2, 6, 3, 4, 4, (3, 3), (3, 2), (1, 2, 2, 0), (2, 2), (0, 1), 2, False),
        ("convt_1x1", 2, 13, 3, 5, 7, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), (0, 0), 1, True),
        ("convt_1d_as_2d", 2, 5, 1, 11, 3, (1, 5), (1, 3), (0, 2, 0, 1), (1, 1), (0, 1), 1, True),
        ("convt_wide_m", 1, 17, 7, 9, 24, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 1, True),
        ("convt_large_pix", 1, 8, 13, 21, 5, (2, 3), (2, 1), (0, 1, 0, 1), (1, 1), (0, 0), 1, True),
    ]
    for name, b, cin, h, wd, cout, k, s, p, d, op, g, bias in specs:
        attrs = {"stride_h": s[0], "stride_w": s[1], "pad_top": p[0], "pad_left": p[1], "pad_bottom": p[2],
                 "pad_right": p[3], "dilation_h": d[0], "dilation_w": d[1], "output_padding_h": op[0],
                 "output_padding_w": op[1], "groups": g}
        fan = cin // g * k[0] * k[1]
        x = w.randn(b, cin, h, wd)
        wt = w.randn(cin, cout // g, k[0], k[1], scale=fan ** -0.5)
        inputs = [x, wt] + ([w.randn(cout, scale=0.5)] if bias else [])
        with torch.no_grad():
            xs64 = [t.double() for t in inputs]
            built = conv_transpose(dict(attrs, _constructed=True), xs64)
            if p[:2] == p[2:] and all(o < max(si, di) for o, si, di in zip(op, s, d)):
                direct = conv_transpose(attrs, xs64)
                assert direct.shape == built.shape and torch.allclose(direct, built, rtol=0, atol=1e-12), name
        w.add(name, "ConvTranspose", attrs, inputs, const=(1, 2))


def arg_max_cases(w):
    specs = [  # name, kind, shape, axis, keepdims, select_last_index, ties, nan
        ("argmax_logits", "max", (3, 1000), -1, False, False, False, False),
        ("argmax_logits_keep", "max", (2, 37), 1, True, False, False, False),
        ("argmin_channels", "min", (2, 5, 4, 3), 1, True, False, False, False),
        ("argmax_inner_axis", "max", (2, 3, 7, 70), 2, False, False, False, False),
        ("argmax_ties_first", "max", (2, 9, 13), 1, True, False, True, False),
        ("argmax_ties_last", "max", (2, 9, 13), 1, True, True, True, False),
        ("argmin_ties_last", "min", (2, 13, 9), -1, False, True, True, False),
        ("argmin_ties_first_axis0", "min", (5, 3, 4), 0, True, False, True, False),
        ("argmax_nan_first", "max", (2, 6, 11), 2, True, False, False, True),
        ("argmax_nan_last", "max", (2, 6, 11), -1, False, True, False, True),
        ("argmin_nan", "min", (3, 17, 5), 1, False, False, False, True),
        ("argmin_nan_last", "min", (3, 17, 5), 1, True, True, False, True),
        ("argmax_len1_axis", "max", (2, 1, 5), 1, True, False, False, False),
        ("argmax_3d_odd", "max", (2, 129, 3), 1, False, False, False, False),
    ]
    for name, kind, shape, axis, keep, last, ties, nan in specs:
        x = w.randn(*shape)
        if ties:  # few distinct values: many ties
            x = torch.round(x * 1.5)
        if nan:  # two NaNs in some lines, one in others
            flat = x.view(-1)
            idx = torch.randint(0, flat.numel(), (max(2, flat.numel() // 8),), generator=w.gen)
            flat[idx] = float("nan")
        attrs = {"kind": kind, "axis": axis, "keepdims": keep, "select_last_index": last}
        w.add(name, "ArgMax", attrs, [x])


def cases(w):
    saved = w.gen
    w.gen = torch.Generator().manual_seed(20261141)
    conv_transpose_cases(w)
    arg_max_cases(w)
    w.gen = saved
