#!/usr/bin/python3
"""ONNX zoo fixtures: torchvision's classifiers (Debian's python3-torchvision 0.14, random init, weights=None,
nothing downloaded) calibrated so their activations are alive, exported by torch.onnx.export, with PyTorch's
logits in float64 and float32 on two real photographs. Run by ctest (fixture `onnx_zoo`, test onnx_zoo):

    /usr/bin/python3 tools/reference/make_onnx_zoo.py --out build/fixtures/onnx_zoo [--models a,b]

Writes DIR/<model>.opset<N>.onnx (input "input" [batch,3,224,224] with a dynamic batch, output "logits"),
DIR/input.npy [2,3,224,224] (skimage's astronaut and coffee: shorter side 256, centre crop 224, ImageNet mean and
std), DIR/<model>.logits64.npy, DIR/<model>.logits32.npy and DIR/manifest.json ({"models": {name: {"onnx":
{opset: file}, "argmax": [..], "max_abs_logit", "max_abs_f32_vs_f64", "top_gap"}}, "script_sha256"}).

Cached: when DIR/manifest.json was written by this very script (its sha256) for the same models, nothing is
made again (vit_b_16's export alone is 346 MB; the whole set about 1.3 GB and a few minutes on 2 cores).

Random weights give dead or degenerate activations, so each model is calibrated first (`prepare` below):
  * BatchNorm running statistics measured on real images: random 224 crops (scale 0.25-1 of the shorter side,
    random flips) of skimage's photographs, BatchNorm layers alone in train mode with momentum=None (a
    cumulative average), then eval; every BatchNorm then normalises what it actually sees;
  * vit_b_16: its q and k projections scaled so that softmax rows are not flat (checked: the first block's mean
    largest attention weight is many times 1/197), its zero-initialised head given random values;
  * convnext_tiny: layer scale drawn from [0.1, 1] instead of 1e-6 (otherwise every block is a near-identity);
  * swin_t: its window attentions' q and k projections scaled by 3 and relative position bias tables drawn at
    std 1 (torchvision: 0.02), so the softmax is not flat and the shifted-window mask matters;
  * every model: its classifier's input standardised over the calibration crops (folded into the last Linear),
    or the features' common positive mean gives every image the same top-1 class.
The script fails unless every model's logits are alive: the two images' top-1 classes differ, and each image's
gap between its top-1 and top-2 logits is at least 100x PyTorch's own float32-vs-float64 difference (so the
engine's argmax is a real check).

Opset 14 as well for four models: swin_t (its window padding and mask arithmetic in opset 14's forms),
convnext_tiny and vit_b_16 (LayerNormalization is opset 17's; at 14 torch
writes it as ReduceMean/Sub/Pow/Sqrt/Div, the form the importer must recognise, ViT's attention behind it),
and resnet50 (BatchNormalization-14 beside opset 17's BatchNormalization-15, the classic CNN form).

Adding a model: one line in MODELS (its opsets, its calibration steps); the test reads the manifest.
"""
import argparse
import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image
from skimage import data as skdata

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
CALIBRATION_IMAGES = ["astronaut", "chelsea", "coffee", "rocket", "immunohistochemistry", "retina", "camera",
                      "brick", "grass", "gravel"]
TEST_IMAGES = ["astronaut", "coffee"]


def photo(name):
    """An skimage photograph as float RGB [3,H,W] in [0,1] (grey ones repeated on the three channels)."""
    a = np.asarray(getattr(skdata, name)())
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    return torch.from_numpy(a[..., :3].astype(np.float32) / 255.0).permute(2, 0, 1).contiguous()


def test_input():
    """The two test images as torchvision's eval transform makes them: shorter side 256, centre crop 224."""
    out = []
    for name in TEST_IMAGES:
        im = Image.fromarray(np.asarray(getattr(skdata, name)())).convert("RGB")
        w, h = im.size
        s = 256 / min(w, h)
        im = im.resize((max(256, round(w * s)), max(256, round(h * s))), Image.BILINEAR)
        w, h = im.size
        left, top = (w - 224) // 2, (h - 224) // 2
        a = np.asarray(im.crop((left, top, left + 224, top + 224)), dtype=np.float32) / 255.0
        out.append((torch.from_numpy(a).permute(2, 0, 1) - MEAN) / STD)
    return torch.stack(out).contiguous()


def calibration_batches(gen, batches=4, size=16):
    """Random crops of the calibration photos at 224 (scale 0.25-1 of the shorter side, flips), normalised."""
    photos = [photo(n) for n in CALIBRATION_IMAGES]
    for _ in range(batches):
        crops = []
        for _ in range(size):
            p = photos[int(torch.randint(len(photos), (1,), generator=gen))]
            _, h, w = p.shape
            side = int(min(h, w) * (0.25 + 0.75 * float(torch.rand(1, generator=gen))))
            y = int(torch.randint(h - side + 1, (1,), generator=gen))
            x = int(torch.randint(w - side + 1, (1,), generator=gen))
            c = F.interpolate(p[None, :, y:y + side, x:x + side], size=(224, 224), mode="bilinear",
                              align_corners=False, antialias=True)[0]
            if float(torch.rand(1, generator=gen)) < 0.5:
                c = c.flip(-1)
            crops.append((c - MEAN) / STD)
        yield torch.stack(crops)


def calibrate_batchnorm(model, gen):
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    model.eval()
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over every calibration batch
        m.train()
    with torch.no_grad():
        for x in calibration_batches(gen, batches=3):
            model(x)
    model.eval()


def calibrate_head(model, gen):
    """Standardises the classifier's input (the last Linear's) over the calibration crops, folded into its
    weight and bias: W' = W / sigma, b' = b - W' mu. Without it every image gets the same top-1 class (ReLU'd,
    pooled features share a large positive mean, and W mu is the same for every image). A head without a bias
    (maxvit_t's, after a Tanh) is only scaled."""
    head = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]
    feats = []
    hook = head.register_forward_pre_hook(lambda m, inp: feats.append(inp[0].detach().reshape(-1, m.in_features)))
    model.eval()
    with torch.no_grad():
        for x in calibration_batches(gen, batches=2):
            model(x)
        hook.remove()
        f = torch.cat(feats)
        mu, sigma = f.mean(0), f.std(0) + 1e-3
        head.weight /= sigma
        if head.bias is not None:
            head.bias -= head.weight @ mu


def sharpen_vit_attention(model, gen, factor=3.0):
    """Scales every encoder block's q and k projections (in_proj rows 0..2D) by `factor`: q.k grows factor^2."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.MultiheadAttention):
                d = m.embed_dim
                m.in_proj_weight[:2 * d] *= factor
                m.in_proj_bias[:2 * d] *= factor
        head = model.heads.head
        head.weight.normal_(0, 0.05, generator=gen)
        head.bias.normal_(0, 0.05, generator=gen)  # calibrate_head then centres it


def vit_first_block_attention_peak(model, x):
    """The mean over heads, queries and images of the largest softmax weight in the first block's attention."""
    enc = model.encoder
    with torch.no_grad():
        tokens = model._process_input(x)
        tokens = torch.cat([model.class_token.expand(x.shape[0], -1, -1), tokens], dim=1) + enc.pos_embedding
        blk = enc.layers[0]
        y = blk.ln_1(tokens)
        attn = blk.self_attention
        d, h = attn.embed_dim, attn.num_heads
        q, k, _ = F.linear(y, attn.in_proj_weight, attn.in_proj_bias).split(d, dim=-1)
        q = q.view(x.shape[0], -1, h, d // h).transpose(1, 2)
        k = k.view(x.shape[0], -1, h, d // h).transpose(1, 2)
        p = torch.softmax(q @ k.transpose(-1, -2) / (d // h) ** 0.5, dim=-1)
        return float(p.max(-1).values.mean()), tokens.shape[1]


def convnext_layer_scale(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("layer_scale"):
                p.copy_(0.1 + 0.9 * torch.rand(p.shape, generator=gen))


def sharpen_swin_attention(model, gen, factor=3.0):
    """Scales every window attention's q and k projections (qkv rows 0..2C) by `factor` and redraws its relative
    position bias table at std 1 (torchvision draws it at 0.02), so softmax rows are not flat and the shifted
    windows' mask (-100 between regions) decides real weights."""
    from torchvision.models.swin_transformer import ShiftedWindowAttention
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, ShiftedWindowAttention):
                c = m.qkv.in_features
                m.qkv.weight[:2 * c] *= factor
                m.qkv.bias[:2 * c] *= factor
                m.relative_position_bias_table.normal_(0, 1.0, generator=gen)


# name: (opsets, calibration steps after construction). Constructor arguments where torchvision needs them.
MODELS = {
    "resnet50": ((17, 14), [calibrate_batchnorm, calibrate_head]),
    "mobilenet_v3_large": ((17,), [calibrate_batchnorm, calibrate_head]),
    "efficientnet_b0": ((17,), [calibrate_batchnorm, calibrate_head]),
    "regnet_y_400mf": ((17,), [calibrate_batchnorm, calibrate_head]),
    "shufflenet_v2_x1_0": ((17,), [calibrate_batchnorm, calibrate_head]),
    "densenet121": ((17,), [calibrate_batchnorm, calibrate_head]),
    "googlenet": ((17,), [calibrate_batchnorm, calibrate_head]),
    "convnext_tiny": ((17, 14), [convnext_layer_scale, calibrate_head]),
    "vit_b_16": ((17, 14), [sharpen_vit_attention, calibrate_head]),
    "swin_t": ((17, 14), [sharpen_swin_attention, calibrate_head]),
}
CONSTRUCTOR_ARGS = {"googlenet": {"init_weights": True, "aux_logits": False}}


def build(name, seed):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None, **CONSTRUCTOR_ARGS.get(name, {})).eval()
    for step in MODELS[name][1]:
        step(model, gen)
    return model.eval()


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    args = ap.parse_args()
    names = [n for n in args.models.split(",") if n]
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r} (known: {', '.join(MODELS)})")
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    digest = script_hash()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        files_there = all(os.path.exists(os.path.join(args.out, p)) for m in old.get("models", {}).values()
                          for p in m["onnx"].values())
        if old.get("script_sha256") == digest and sorted(old.get("models", {})) == sorted(names) and files_there:
            print(f"{manifest_path}: made by this script already (sha256 {digest[:12]}), kept")
            return
        os.remove(manifest_path)  # a partial set must never pass for a complete one
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    x = test_input()
    np.save(os.path.join(args.out, "input.npy"), x.numpy())
    models, failures = {}, []
    for i, name in enumerate(names):
        t0 = time.time()
        model = build(name, 20261126 + i)
        with torch.no_grad():
            y32 = model(x).numpy().astype(np.float64)
        onnx = {}
        for opset in MODELS[name][0]:
            path = f"{name}.opset{opset}.onnx"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, x[:1], os.path.join(args.out, path), opset_version=opset,
                                  input_names=["input"], output_names=["logits"],
                                  dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
            onnx[str(opset)] = path
        note = ""
        if name == "vit_b_16":
            peak, tokens = vit_first_block_attention_peak(model, x)
            note = f", attention peak {peak:.3f} (flat: {1 / tokens:.4f})"
            if peak < 10 / tokens:
                failures.append(f"{name}: attention is nearly flat (mean largest weight {peak:.4f})")
        with torch.no_grad():
            y64 = model.double()(x.double()).numpy()
        np.save(os.path.join(args.out, f"{name}.logits32.npy"), y32)
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        top = np.sort(y64, axis=1)
        gap = float((top[:, -1] - top[:, -2]).min())
        d32 = float(np.abs(y32 - y64).max())
        argmax = [int(a) for a in y64.argmax(1)]
        models[name] = {"onnx": onnx, "argmax": argmax, "max_abs_logit": float(np.abs(y64).max()),
                        "max_abs_f32_vs_f64": d32, "top_gap": gap}
        print(f"{name}: argmax {argmax}, max |logit| {np.abs(y64).max():.3g}, logit std "
              f"{y64.std(1).min():.3g}, top1-top2 gap {gap:.3g}, torch32 vs 64 {d32:.2e}{note}, "
              f"{time.time() - t0:.1f} s", flush=True)
        if len(set(argmax)) < len(argmax):
            failures.append(f"{name}: both images have top-1 class {argmax[0]} (logits not alive)")
        if not gap >= 100 * d32:
            failures.append(f"{name}: top-1/top-2 gap {gap:.3g} < 100x the float32 error {d32:.3g}")
    if failures:
        sys.exit("\n".join(failures))
    with open(manifest_path, "w") as f:
        json.dump({"models": models, "script_sha256": digest, "torchvision": torchvision.__version__}, f,
                  indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
