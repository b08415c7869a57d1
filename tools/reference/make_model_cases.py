#!/usr/bin/python3
"""Model test fixtures: checkpoints in the containers the converter must read, inputs, and float32/float64 logits
from vitrt's own reference models (tools/reference/vitrt_reference). Run by ctest (fixture `model_cases`):

    /usr/bin/python3 tools/reference/make_model_cases.py --out build/fixtures/model_cases

Writes DIR/<case>/{checkpoint, input.npy, logits_f32.npy, logits_f64.npy, labels.txt} and DIR/manifest.json
(paths in the manifest are relative to DIR). `--self-check [DUMP_DIR]` also checks parameter counts of every
factory and, with DUMP_DIR, the PVT v2 b2/b2_li key dumps from docs/models.md.
"""
import argparse
import copy
import json
import os
import sys
import time
from collections import OrderedDict

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vitrt_reference as R  # noqa: E402

BATCH = 2
TARGET_LOGIT_STD = 4.0
MIN_GAP = 0.05          # absolute top-1/top-2 gap required for every image (float64 logits)
MIN_GAP_RATIO = 1000.0  # ... and relative to max |f32 - f64|


def forward_both(model, x32):
    model.eval()
    with torch.no_grad():
        l32 = model(torch.from_numpy(x32)).numpy()
        m64 = copy.deepcopy(model).double().eval()
        l64 = m64(torch.from_numpy(x32).double()).numpy()
    return l32.astype(np.float32), l64.astype(np.float64)


def top_gap(logits):
    s = np.sort(logits, axis=1)
    return s[:, -1] - s[:, -2]


def build(factory, seed, x32, **kw):
    """Init deterministically, calibrate the head(s) on x; if any image's top-1/top-2 gap is too small, or all images
    share one top-1 class (a batch mix-up would go unnoticed), redraw the head(s) from the next seed (deterministic)."""
    model = getattr(R, factory)(**kw)
    R.init_for_tests(model, seed)
    return calibrate(model, seed, x32, factory)


def calibrate(model, seed, x32, what):
    """Calibrate the head(s) of an initialised model on x (see build); returns (model, l32, l64)."""
    for attempt in range(50):
        R.calibrate_heads(model, torch.from_numpy(x32), TARGET_LOGIT_STD)
        l32, l64 = forward_both(model, x32)
        diff = float(np.abs(l32 - l64).max())
        gap = float(top_gap(l64).min())
        top1 = l64.argmax(1)
        if (gap >= MIN_GAP and gap >= MIN_GAP_RATIO * diff and (l32.argmax(1) == top1).all()
                and (len(top1) < 2 or len(set(top1.tolist())) > 1)):
            return model, l32, l64
        g = torch.Generator().manual_seed(seed * 1000 + attempt + 1)
        with torch.no_grad():
            for name, m in model.named_children():
                if name.startswith("head"):
                    m.weight.copy_(torch.randn(*m.weight.shape, generator=g, dtype=torch.float64).float())
                    m.bias.copy_(0.02 * torch.randn(*m.bias.shape, generator=g, dtype=torch.float64).float())
    raise RuntimeError(f"{what}: could not get a clear top-1 margin")


def describe(model, factory):
    if isinstance(model, R.VisionTransformer):
        return dict(arch="deit", variant=factory, embed_dims=[model.embed_dim], depths=[model.depth],
                    num_heads=[model.num_heads], patch_size=model.patch_embed.patch_size[0], mlp_ratios=[4.0],
                    distilled=model.distilled, img_size=model.patch_embed.img_size[0], num_classes=model.num_classes)
    return dict(arch="pvt_v2", variant=factory, embed_dims=model.embed_dims, depths=model.depths,
                num_heads=model.num_heads, patch_size=4, mlp_ratios=[float(r) for r in model.mlp_ratios],
                sr_ratios=model.sr_ratios, linear=model.linear, img_size=model.img_size,
                num_classes=model.num_classes)


def write_labels(path, n):
    w = max(3, len(str(n - 1)))
    with open(path, "w") as f:
        for i in range(n):
            f.write(f"class_{i:0{w}d}\n")


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.rows = []

    def case_dir(self, name):
        d = os.path.join(self.out, name)
        os.makedirs(d, exist_ok=True)
        return d

    def add(self, name, model, factory, seed, x32, l32, l64, ckpt_file, container, extra=None):
        d = self.case_dir(name)
        np.save(os.path.join(d, "input.npy"), x32)
        np.save(os.path.join(d, "logits_f32.npy"), l32)
        np.save(os.path.join(d, "logits_f64.npy"), l64)
        write_labels(os.path.join(d, "labels.txt"), l32.shape[1])
        diff = float(np.abs(l32.astype(np.float64) - l64).max())
        gaps = top_gap(l64)
        entry = OrderedDict(name=name, expect_error=False)
        entry.update(describe(model, factory))
        entry.update(checkpoint=f"{name}/{ckpt_file}", container=container, input=f"{name}/input.npy",
                     logits_f32=f"{name}/logits_f32.npy", logits_f64=f"{name}/logits_f64.npy",
                     labels=f"{name}/labels.txt", batch=int(x32.shape[0]),
                     params=int(sum(p.numel() for p in model.parameters())), seed=seed,
                     max_abs_f32_vs_f64=diff, max_abs_logit=float(np.abs(l64).max()),
                     min_top1_gap=float(gaps.min()), argmax=[int(i) for i in l64.argmax(1)])
        if extra:
            entry.update(extra)
        self.cases.append(entry)
        self.rows.append((name, float(np.abs(l64).max()), diff, float(gaps.min()), l32.argmax(1).tolist(),
                          l64.argmax(1).tolist()))

    def add_error(self, name, base, ckpt_file, container, detail):
        entry = OrderedDict(name=name, expect_error=True)
        for k in ("arch", "variant", "embed_dims", "depths", "num_heads", "patch_size", "mlp_ratios", "distilled",
                  "img_size", "num_classes"):
            if k in base:
                entry[k] = base[k]
        entry.update(checkpoint=f"{name}/{ckpt_file}", container=container, input=None, logits_f32=None,
                     logits_f64=None, labels=None, error_detail=detail)
        self.cases.append(entry)

    def path(self, name, f):
        return os.path.join(self.case_dir(name), f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--self-check", nargs="?", const="", default=None, metavar="DUMP_DIR",
                    help="check parameter counts (and key dumps in DUMP_DIR) and exit")
    args = ap.parse_args()
    torch.set_grad_enabled(False)

    if args.self_check is not None:
        fails = R.self_check(args.self_check or None)
        print("self-check:", "ok" if not fails else fails)
        sys.exit(1 if fails else 0)

    if not args.out:
        ap.error("--out is required")
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    W = Writer(args.out)

    # ---- deit_tiny: full DeiT-Tiny, {'model': sd} (facebookresearch/deit) ----
    x = R.make_images(BATCH, 224, seed=101)
    m, l32, l64 = build("deit_tiny", 1, x)
    R.save_in_container(W.path("deit_tiny", "model.pth"), R.clone_state_dict(m), "model")
    W.add("deit_tiny", m, "deit_tiny", 1, x, l32, l64, "model.pth", "model")

    # ---- deit_2layer: depth 2, 10 classes, raw state_dict; also the base of the error cases ----
    x = R.make_images(BATCH, 224, seed=102)
    m, l32, l64 = build("deit_tiny", 2, x, depth=2, num_classes=10)
    sd2 = R.clone_state_dict(m)
    R.save_in_container(W.path("deit_2layer", "model.pth"), sd2, "raw")
    W.add("deit_2layer", m, "deit_tiny", 2, x, l32, l64, "model.pth", "raw")
    base2 = describe(m, "deit_tiny")

    # ---- deit_tiny_timm: depth 4, timm CheckpointSaver container; logits are for state_dict_ema ----
    x = R.make_images(BATCH, 224, seed=103)
    ema, l32, l64 = build("deit_tiny", 3, x, depth=4)
    train = R.deit_tiny(depth=4)
    R.init_for_tests(train, 33)
    R.calibrate_heads(train, torch.from_numpy(x), TARGET_LOGIT_STD)
    with torch.enable_grad():  # one real SGD step so the optimizer state holds momentum buffers
        opt = torch.optim.SGD(train.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-5, nesterov=True)
        train.train()
        loss = torch.nn.functional.cross_entropy(train(torch.from_numpy(x)), torch.tensor([1, 2]))
        loss.backward()
        opt.step()
        opt.zero_grad()
    train.eval()
    non_ema_l32 = train(torch.from_numpy(x)).numpy().astype(np.float32)
    assert (non_ema_l32.argmax(1) != l32.argmax(1)).any(), "EMA and non-EMA weights should disagree"
    ckpt = {
        "epoch": 3,
        "arch": "deit_tiny_patch16_224",
        "state_dict": OrderedDict(("module." + k, v) for k, v in R.clone_state_dict(train).items()),
        "optimizer": opt.state_dict(),
        "version": 2,
        "args": argparse.Namespace(model="deit_tiny_patch16_224", img_size=224, crop_pct=0.875,
                                   interpolation="bicubic", mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)),
        "metric": np.float64(72.2),
        "state_dict_ema": R.clone_state_dict(ema),
    }
    torch.save(ckpt, W.path("deit_tiny_timm", "model_best.pth.tar"))
    np.save(W.path("deit_tiny_timm", "logits_f32_non_ema.npy"), non_ema_l32)
    W.add("deit_tiny_timm", ema, "deit_tiny", 3, x, l32, l64, "model_best.pth.tar", "timm",
          extra=dict(logits_f32_non_ema="deit_tiny_timm/logits_f32_non_ema.npy", state_dict_key="state_dict_ema",
                     key_prefix_in_state_dict="module."))

    # ---- deit_safetensors: depth 2, .safetensors written by hand ----
    x = R.make_images(BATCH, 224, seed=104)
    m, l32, l64 = build("deit_tiny", 4, x, depth=2, num_classes=10)
    sdst = R.clone_state_dict(m)
    R.save_in_container(W.path("deit_safetensors", "model.safetensors"), sdst, "safetensors")
    back = R.load_safetensors(W.path("deit_safetensors", "model.safetensors"))
    assert list(back) == list(sdst) and all(torch.equal(back[k], sdst[k]) for k in sdst), "safetensors round trip"
    W.add("deit_safetensors", m, "deit_tiny", 4, x, l32, l64, "model.safetensors", "safetensors")

    # ---- PVT v2 ----
    x = R.make_images(BATCH, 224, seed=105)
    m, l32, l64 = build("pvt_v2_b0", 5, x)
    R.save_in_container(W.path("pvt_v2_b0", "model.pth"), R.clone_state_dict(m), "model")
    W.add("pvt_v2_b0", m, "pvt_v2_b0", 5, x, l32, l64, "model.pth", "model")

    x = R.make_images(BATCH, 224, seed=106)
    m, l32, l64 = build("pvt_v2_b1", 6, x, depths=(1, 1, 1, 1), num_classes=10)
    R.save_in_container(W.path("pvt_v2_b1_2cls", "model.pth"), R.clone_state_dict(m), "raw")
    W.add("pvt_v2_b1_2cls", m, "pvt_v2_b1", 6, x, l32, l64, "model.pth", "raw")

    x = R.make_images(BATCH, 224, seed=107)
    m, l32, l64 = build("pvt_v2_b2_li", 7, x, depths=(1, 1, 1, 1), num_classes=10)
    R.save_in_container(W.path("pvt_v2_b2_li_small", "model.pth"), R.clone_state_dict(m), "model")
    W.add("pvt_v2_b2_li_small", m, "pvt_v2_b2_li", 7, x, l32, l64, "model.pth", "model")

    # ---- error cases (from deit_2layer's weights) ----
    sd = OrderedDict(sd2)
    del sd["blocks.1.attn.proj.weight"]
    R.save_in_container(W.path("deit_missing_key", "model.pth"), sd, "raw")
    W.add_error("deit_missing_key", base2, "model.pth", "raw", "missing key blocks.1.attn.proj.weight")

    sd = OrderedDict(sd2)
    sd["blocks.0.foo.weight"] = torch.zeros(192)
    R.save_in_container(W.path("deit_extra_key", "model.pth"), sd, "raw")
    W.add_error("deit_extra_key", base2, "model.pth", "raw", "unexpected key blocks.0.foo.weight")

    manifest = OrderedDict(version=1, generator="tools/reference/make_model_cases.py", torch=torch.__version__,
                           mean=list(R.IMAGENET_MEAN), std=list(R.IMAGENET_STD), cases=W.cases)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:  # one line per case
        head = json.dumps(OrderedDict((k, v) for k, v in manifest.items() if k != "cases"))
        f.write(head[:-1] + ', "cases": [\n' + ",\n".join(json.dumps(c) for c in W.cases) + "\n]}\n")
    json.load(open(os.path.join(args.out, "manifest.json")))

    # ---- report ----
    print(f"{'case':20s} {'max|logit|':>10s} {'max|f32-f64|':>12s} {'min gap':>8s} {'gap/diff':>9s} "
          f"{'argmax f32':>12s} {'argmax f64':>12s}")
    bad = []
    for name, mx, diff, gap, a32, a64 in W.rows:
        ratio = gap / diff if diff > 0 else float("inf")
        print(f"{name:20s} {mx:10.3f} {diff:12.3e} {gap:8.3f} {ratio:9.2e} {str(a32):>12s} {str(a64):>12s}")
        if a32 != a64 or gap < MIN_GAP or ratio < MIN_GAP_RATIO:
            bad.append(name)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(args.out) for f in fs)
    print(f"wrote {len(W.cases)} cases to {args.out} ({total / 2**20:.1f} MiB) in {time.time() - t0:.1f} s")
    if bad:
        print("FAILED margin checks:", bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
