"""Shared helpers for the reference models: test initialisation, test images, checkpoint containers and a
hand-written safetensors writer (the `safetensors` package is not a dependency)."""
import json
import math
import struct
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# ----------------------------------------------------------------------------------------------------------
# Initialisation
# ----------------------------------------------------------------------------------------------------------
def _randn(gen, shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64).float()


@torch.no_grad()
def init_for_tests(model, seed, qkv_gain=1.5, head_gain=1.0):
    """Seeded, well-conditioned random init (float32 draws from a float64 stream, so it is platform-stable).

    Linear/conv weights ~ N(0, 1/fan_in) (activations stay O(1) through LayerNorm'd pre-norm blocks);
    q/k/v projections get `qkv_gain` so attention is not flat; LayerNorm weight 1 + 0.1 N, bias 0.02 N;
    every other bias 0.02 N; tokens / position embeddings 0.02 N. Heads are named `head*` and get
    `head_gain`; use `calibrate_heads` afterwards to set the logit spread from real features.
    """
    gen = torch.Generator().manual_seed(int(seed))
    for mname, m in model.named_modules():
        for pname, p in m.named_parameters(recurse=False):
            full = f"{mname}.{pname}" if mname else pname
            if isinstance(m, nn.LayerNorm):
                p.copy_((1.0 + 0.1 * _randn(gen, p.shape)) if pname == "weight" else 0.02 * _randn(gen, p.shape))
            elif isinstance(m, (nn.Linear, nn.Conv2d)) and pname == "weight":
                fan_in = p.shape[1] * (p.shape[2] * p.shape[3] if p.dim() == 4 else 1)
                gain = 1.0
                leaf = mname.rsplit(".", 1)[-1]
                if leaf in ("qkv", "q", "kv"):
                    gain = qkv_gain
                elif leaf.startswith("head"):
                    gain = head_gain
                p.copy_(_randn(gen, p.shape) * (gain / math.sqrt(fan_in)))
            elif pname == "bias":
                p.copy_(0.02 * _randn(gen, p.shape))
            else:  # cls_token, dist_token, pos_embed, ...
                p.copy_(0.02 * _randn(gen, p.shape))
            assert torch.isfinite(p).all(), full
    return model


@torch.no_grad()
def calibrate_heads(model, x, target_std=4.0):
    """Scale every `head*` Linear weight so that its (bias-free) logits on `x` have standard deviation
    `target_std`. Deterministic; makes top-1/top-2 gaps large compared with float32 rounding."""
    feats = {}
    hooks = []
    for name, m in model.named_children():
        if name.startswith("head") and isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(lambda mod, inp, out, name=name: feats.__setitem__(name, inp[0])))
    model.eval()
    model(x)
    for h in hooks:
        h.remove()
    for name, f in feats.items():
        head = getattr(model, name)
        s = (f @ head.weight.t()).std().item()
        head.weight.mul_(target_std / max(s, 1e-12))
    return model


# ----------------------------------------------------------------------------------------------------------
# Test images
# ----------------------------------------------------------------------------------------------------------
def make_images(batch, img_size, seed):
    """Smooth, natural-looking RGB images in [0,1] (gradients + soft blobs + stripes + mild noise), different per
    image, quantised to 8 bit like a decoded photo, then normalised with the ImageNet mean/std. float32 NCHW."""
    rng = np.random.RandomState(seed)
    H = W = img_size
    yy, xx = np.meshgrid(np.linspace(0, 1, H), np.linspace(0, 1, W), indexing="ij")
    out = np.empty((batch, 3, H, W), dtype=np.float32)
    for b in range(batch):
        img = np.zeros((3, H, W))
        for c in range(3):
            a, bb, cc = rng.uniform(-0.5, 0.5, 3)
            img[c] = 0.5 + a * (xx - 0.5) + bb * (yy - 0.5) + cc * (xx - 0.5) * (yy - 0.5)
        for _ in range(rng.randint(4, 9)):
            cy, cx = rng.uniform(0.1, 0.9, 2)
            sy, sx = rng.uniform(0.04, 0.25, 2)
            amp = rng.uniform(-0.5, 0.5, 3)
            g = np.exp(-(((yy - cy) / sy) ** 2 + ((xx - cx) / sx) ** 2) / 2)
            img += amp[:, None, None] * g
        th = rng.uniform(0, np.pi)
        freq = rng.uniform(3, 12)
        img += 0.08 * rng.uniform(-1, 1, 3)[:, None, None] * np.sin(
            2 * np.pi * freq * (np.cos(th) * xx + np.sin(th) * yy))[None]
        img += 0.02 * rng.randn(3, H, W)
        img = np.round(np.clip(img, 0, 1) * 255) / 255
        mean = np.asarray(IMAGENET_MEAN)[:, None, None]
        std = np.asarray(IMAGENET_STD)[:, None, None]
        out[b] = ((img - mean) / std).astype(np.float32)
    return out


# ----------------------------------------------------------------------------------------------------------
# Saving
# ----------------------------------------------------------------------------------------------------------
def clone_state_dict(model_or_sd):
    sd = model_or_sd.state_dict() if isinstance(model_or_sd, nn.Module) else model_or_sd
    return OrderedDict((k, v.detach().clone().contiguous()) for k, v in sd.items())


_ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
              torch.int64: "I64", torch.int32: "I32", torch.uint8: "U8", torch.int8: "I8", torch.bool: "BOOL"}


def save_safetensors(path, sd, metadata=None):
    """Write a .safetensors file: u64 LE header length, JSON header {name: {dtype, shape, data_offsets}} (padded with
    spaces to a multiple of 8, as the reference writer does), then the little-endian tensor bytes back to back."""
    header = OrderedDict()
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blobs = []
    offset = 0
    for name, t in sd.items():
        t = t.detach().contiguous().cpu()
        data = t.numpy().astype(t.numpy().dtype.newbyteorder("<"), copy=False).tobytes() if t.numel() else b""
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    """Minimal reader (used to self-check the writer)."""
    np_dt = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
             "U8": np.uint8, "I8": np.int8, "BOOL": np.bool_}
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        arr = np.frombuffer(raw[base + a:base + b], dtype=np.dtype(np_dt[info["dtype"]]).newbyteorder("<"))
        out[name] = torch.from_numpy(arr.astype(np_dt[info["dtype"]]).reshape(info["shape"]).copy())
    return out


def save_in_container(path, sd, container):
    """container: 'raw' (the state_dict itself), 'model' ({'model': sd}, facebookresearch/deit and PVT style),
    'safetensors'. (The timm CheckpointSaver container is built by make_model_cases.py.)"""
    if container == "raw":
        torch.save(sd, path)
    elif container == "model":
        torch.save({"model": sd}, path)
    elif container == "safetensors":
        save_safetensors(path, sd, metadata={"format": "pt"})
    else:
        raise ValueError(f"unknown container {container!r}")
