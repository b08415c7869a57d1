#!/usr/bin/python3
"""SOFT / SOFT-Norm test fixtures (docs/models.md §3): checkpoints in the containers the converter must read, inputs and
float32/float64 logits from vitrt's own reference (tools/reference/vitrt_reference/soft.py), plus per-op cases for
the two Newton-Raphson pseudo-inverses. Run by ctest (fixture `soft_cases`):

    /usr/bin/python3 tools/reference/make_soft_cases.py --out build/fixtures/soft_cases

Writes DIR/<case>/{checkpoint, input.npy, logits_f32.npy, logits_f64.npy, labels.txt} and DIR/manifest.json in the
format of make_model_cases.py (paths relative to DIR), with an optional per-case "convert_options" object
({"arch": "soft_norm"} or {"image_size": 448}) naming the vitrt-convert options to use. DIR/newton/ holds the
Newton cases and their own manifest.json (paths relative to DIR/newton):
    {"cases": [{"name", "variant": "scaled"|"legacy", "iterations", "regularizer", "input", "expected64",
                "expected32", "cond", ...}]}
input is K2 (float32 [B,h,m,m]); expected64/expected32 are the PyTorch iteration run in float64 (on the float32
K2 upcast) and in float32. `--self-check [DUMP_DIR]` checks parameter counts and the SOFT-Tiny key dump.
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
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vitrt_reference as R  # noqa: E402
from vitrt_reference import soft as S  # noqa: E402

TARGET_LOGIT_STD = 4.0
MIN_GAP = 0.05          # absolute top-1/top-2 gap required for every image (float64 logits)
MIN_GAP_RATIO = 1000.0  # ... and relative to max |f32 - f64|
# Test init on top of common.init_for_tests: W_q is scaled by Q_GAIN and the landmark LayerNorm(d) affine by
# LANDMARK_LN_SCALE so that the Gaussian kernels are neither ~0 (K1) / ~I (K2) nor all ~1: the attention path then
# contributes as much as the V conv and K2 is moderately ill-conditioned, so the Newton iteration really matters.
# The kernels are very sensitive to LANDMARK_LN_SCALE (0.8: K2 cond up to ~1e4; 1.0: K2 ~ I and K1 ~ 0); cases may
# override it (build(..., ln_scale=)).
Q_GAIN = 0.8
LANDMARK_LN_SCALE = 0.85


# ----------------------------------------------------------------------------------------------------------
# Model init
# ----------------------------------------------------------------------------------------------------------
@torch.no_grad()
def init_soft(model, seed, x, q_gain=None, ln_scale=None):
    """common.init_for_tests + the SOFT gains above + BatchNorm: random affine and non-trivial running stats drawn
    around the real statistics of each BN's input on `x` (in forward order, so activations stay O(1))."""
    q_gain = Q_GAIN if q_gain is None else q_gain
    ln_scale = LANDMARK_LN_SCALE if ln_scale is None else ln_scale
    R.init_for_tests(model, seed)
    for name, m in model.named_modules():
        if name.endswith(".W_q"):
            m.weight.mul_(q_gain)
            m.bias.mul_(q_gain)
        elif name.endswith(".Qnorm_act.0"):
            m.weight.mul_(ln_scale)
            m.bias.mul_(ln_scale)
    g = torch.Generator().manual_seed(int(seed) * 7919 + 17)
    done = set()

    def pre(mod, inp):
        if id(mod) in done:
            return
        done.add(id(mod))
        xi = inp[0].double()
        mu, sd = xi.mean((0, 2, 3)), xi.std((0, 2, 3)).clamp_min(1e-3)
        C = mu.numel()

        def rn():
            return torch.randn(C, generator=g, dtype=torch.float64)

        mod.running_mean.copy_((mu + 0.3 * sd * rn()).float())
        mod.running_var.copy_((sd * sd * torch.exp(0.4 * rn())).float())
        mod.weight.copy_((1.0 + 0.2 * rn()).float())
        mod.bias.copy_((0.3 * rn()).float())
        mod.num_batches_tracked.fill_(int(torch.randint(1000, 200000, (1,), generator=g)))

    hooks = [m.register_forward_pre_hook(pre) for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    model.eval()
    model(x)
    for h in hooks:
        h.remove()
    return model


def features_both(model, x32):
    """forward_features in float32 and float64 (a float64 copy of the same weights), on the whole batch (the legacy
    Newton of SOFT-Norm couples the images of a batch)."""
    model.eval()
    f32 = model.forward_features(torch.from_numpy(x32))
    f64 = copy.deepcopy(model).double().eval().forward_features(torch.from_numpy(x32).double())
    return f32, f64


def top_gap(logits):
    s = np.sort(logits, axis=1)
    return s[:, -1] - s[:, -2]


def head_logits(head, f32, f64):
    """The head is the model's last op, so head(features) is exactly the model's output (float32 and float64)."""
    l32 = head(f32).numpy().astype(np.float32)
    l64 = F.linear(f64, head.weight.double(), head.bias.double()).numpy().astype(np.float64)
    return l32, l64


@torch.no_grad()
def fit_head(head, feats, seed):
    """feats: [(f32, f64)] for every case sharing this head. Scales the head so its bias-free logits have std
    TARGET_LOGIT_STD over all images; redraws it (deterministically) until every image has a clear top-1 (absolute and
    relative to the f32-vs-f64 difference), f32 and f64 agree, and no batch has a single top-1 class.
    Returns [(l32, l64)] per case."""
    allf = torch.cat([f for f, _ in feats])
    for attempt in range(50):
        s = (allf @ head.weight.t()).std().item()
        head.weight.mul_(TARGET_LOGIT_STD / max(s, 1e-12))
        out, ok = [], True
        for f32, f64 in feats:
            l32, l64 = head_logits(head, f32, f64)
            diff = float(np.abs(l32 - l64).max())
            gap = float(top_gap(l64).min())
            top1 = l64.argmax(1)
            ok &= (gap >= MIN_GAP and gap >= MIN_GAP_RATIO * diff and bool((l32.argmax(1) == top1).all())
                   and (len(top1) < 2 or len(set(top1.tolist())) > 1))
            out.append((l32, l64))
        if ok:
            return out
        g = torch.Generator().manual_seed(seed * 1000 + attempt + 1)
        head.weight.copy_(torch.randn(*head.weight.shape, generator=g, dtype=torch.float64).float())
        head.bias.copy_(0.02 * torch.randn(*head.bias.shape, generator=g, dtype=torch.float64).float())
    raise RuntimeError("could not get a clear top-1 margin")


def build(factories, seed, runs, q_gain=None, ln_scale=None, **kw):
    """One set of weights evaluated by several factories (SOFT and SOFT-Norm have identical keys).
    runs: [(factory, float32 NCHW batch)]. Returns {factory: model} (sharing nothing, equal weights) and
    [(l32, l64)] per run."""
    models = OrderedDict((f, S.FACTORIES[f](**kw)) for f in factories)
    base = models[factories[0]]
    init_soft(base, seed, torch.from_numpy(runs[0][1]), q_gain, ln_scale)
    for f, m in models.items():
        if m is not base:
            m.load_state_dict(base.state_dict())
    feats = [features_both(models[f], x) for f, x in runs]
    out = fit_head(base.head, feats, seed)
    for m in models.values():
        if m is not base:
            m.load_state_dict(base.state_dict())
    return models, out


@torch.no_grad()
def other_weights(sd, model, x, seed):
    """The 'state_dict' (non-EMA) weights of a timm container: `sd` with a different head and final LayerNorm. The
    other tensors are the very same objects, so torch.save stores them once (keeps the fixture small) while the
    logits still differ by far more than any tolerance. Returns (state_dict, float32 logits on x)."""
    g = torch.Generator().manual_seed(seed)
    out = OrderedDict(sd)
    for k in ("norm.weight", "norm.bias", "head.weight", "head.bias"):
        t = torch.randn(*sd[k].shape, generator=g, dtype=torch.float64).float()
        out[k] = (1.0 + 0.1 * t) if k == "norm.weight" else (0.02 * t if k.endswith("bias") else t)
    m = copy.deepcopy(model)
    m.load_state_dict(out)
    R.calibrate_heads(m, torch.from_numpy(x), TARGET_LOGIT_STD)
    out["head.weight"] = m.head.weight.detach().clone()
    return out, m(torch.from_numpy(x)).numpy().astype(np.float32)


def describe(model, factory):
    return OrderedDict(arch="soft_norm" if model.norm_variant else "soft", variant=factory,
                       embed_dims=model.embed_dims, depths=model.depths, num_heads=model.num_heads, patch_size=4,
                       mlp_ratios=[float(r) for r in model.mlp_ratios], sr_ratios=model.sr_ratios,
                       v_conv_kernels=list(S.V_CONV_KERNELS), head_dim=S.HEAD_DIM,
                       newton=OrderedDict(variant="legacy" if model.norm_variant else "scaled",
                                          iterations=model.newton_max_iter,
                                          regularizer=0.0 if model.norm_variant else 0.01),
                       img_size=model.img_size, num_classes=model.num_classes)


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

    def path(self, name, f):
        return os.path.join(self.case_dir(name), f)

    def add(self, name, model, factory, seed, x32, l32, l64, checkpoint, container, extra=None, img_size=None):
        """checkpoint: path relative to DIR (cases sharing weights share one file)."""
        d = self.case_dir(name)
        np.save(os.path.join(d, "input.npy"), x32)
        np.save(os.path.join(d, "logits_f32.npy"), l32)
        np.save(os.path.join(d, "logits_f64.npy"), l64)
        write_labels(os.path.join(d, "labels.txt"), l32.shape[1])
        diff = float(np.abs(l32.astype(np.float64) - l64).max())
        gaps = top_gap(l64)
        entry = OrderedDict(name=name, expect_error=False)
        entry.update(describe(model, factory))
        if img_size is not None:
            entry["img_size"] = img_size
        entry.update(checkpoint=checkpoint, container=container, input=f"{name}/input.npy",
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


def timm_args(model_name, img_size=224, num_classes=1000):
    """The argparse.Namespace SOFT's main.py pickles into its timm checkpoints (a representative subset)."""
    return argparse.Namespace(model=model_name, img_size=img_size, crop_pct=None, interpolation="", mean=None,
                              std=None, num_classes=num_classes, newton_max_iter=20, kernel_method="torch",
                              model_ema=True, model_ema_decay=0.99996, batch_size=128, lr=0.0005, opt="adamw",
                              weight_decay=0.05, epochs=300, drop_path=0.1, pretrained=False, initial_checkpoint="")


@torch.no_grad()
def fake_optimizer_state(model, seed, trained=("head.", "norm.")):
    """An SGD-momentum state_dict over all parameters, after one step in which only the parameters named `trained`
    had gradients: real param_groups and per-parameter buffers, but small (keeps the fixture small). `model` is
    stepped: pass a copy."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=5e-4, momentum=0.9, weight_decay=0.05, nesterov=True)
    for name, p in model.named_parameters():
        if name.startswith(trained):
            p.grad = 1e-3 * torch.randn(*p.shape, generator=g, dtype=torch.float64).float()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return opt.state_dict()


# ----------------------------------------------------------------------------------------------------------
# Newton per-op cases
# ----------------------------------------------------------------------------------------------------------
def clustered_gaussian_k2(B, h, m, d, clusters, spread, scale, seed):
    """K2 = exp(-|l_i - l_j|^2 / 2) for landmarks drawn around `clusters` centres (within-cluster std `spread`, centre
    std `scale`): nearly repeated rows, i.e. ill-conditioned like SOFT's bottleneck kernels. float32 [B,h,m,m]."""
    g = torch.Generator().manual_seed(seed)
    c = scale * torch.randn(B, h, clusters, d, generator=g, dtype=torch.float64)
    idx = torch.randint(0, clusters, (m,), generator=g)
    pts = c[:, :, idx] + spread * torch.randn(B, h, m, d, generator=g, dtype=torch.float64)
    return torch.exp(-S.gaussian_sq_dist(pts, pts) / 2).float()


def write_newton_cases(out):
    d = os.path.join(out, "newton")
    os.makedirs(d, exist_ok=True)
    specs = [  # name, B, h, m, clusters, spread, scale
        ("m7", 1, 2, 7, 3, 0.003, 0.5),
        ("m49", 2, 2, 49, 10, 0.006, 0.4),
        ("m196", 1, 3, 196, 24, 0.01, 0.35),
        ("m196_b2", 2, 2, 196, 40, 0.01, 0.3),
    ]
    cases, rows = [], []
    for i, (tag, B, h, m, k, spread, scale) in enumerate(specs):
        K2 = clustered_gaussian_k2(B, h, m, 32, k, spread, scale, seed=500 + i)
        cond = float(torch.linalg.cond(K2.double()).min())
        assert cond >= 1e4, (tag, cond)
        for variant in ("scaled", "legacy"):
            name = f"{variant}_{tag}"
            info32, info64 = {}, {}
            if variant == "scaled":
                e32 = S.newton_inv_scaled(K2, 20)
                e64 = S.newton_inv_scaled(K2.double(), 20)
            else:
                e32 = S.newton_inv_legacy(K2, 20, info32)
                e64 = S.newton_inv_legacy(K2.double(), 20, info64)
                assert info32["backtracks"] == info64["backtracks"]
            e32, e64 = e32.numpy(), e64.numpy()
            assert np.isfinite(e32).all() and np.isfinite(e64).all()
            files = {}
            for key, arr in (("input", K2.numpy()), ("expected64", e64), ("expected32", e32)):
                files[key] = f"{name}_{key}.npy"
                np.save(os.path.join(d, files[key]), arr)
            diff = float(np.abs(e32.astype(np.float64) - e64).max())
            # distance of the 20-step result from the true inverse of what it iterates on
            P = K2.double() + (0.01 * torch.eye(m, dtype=torch.float64) if variant == "scaled" else 0)
            true_err = float((torch.as_tensor(e64) - torch.linalg.inv(P)).abs().max())
            c = OrderedDict(name=name, variant=variant, iterations=20,
                            regularizer=0.01 if variant == "scaled" else 0.0, input=files["input"],
                            expected64=files["expected64"], expected32=files["expected32"], cond=cond,
                            shape=list(K2.shape), max_abs_f32_vs_f64=diff, max_abs_expected=float(np.abs(e64).max()),
                            max_abs_vs_true_inverse=true_err)
            if variant == "legacy":
                c.update(alpha=info64["alpha"], backtracks=info64["backtracks"])
            cases.append(c)
            rows.append((name, list(K2.shape), cond, float(np.abs(e64).max()), diff, true_err,
                         info64.get("backtracks", "-")))
    with open(os.path.join(d, "manifest.json"), "w") as f:
        f.write('{"version": 1, "generator": "tools/reference/make_soft_cases.py", "cases": [\n'
                + ",\n".join(json.dumps(c) for c in cases) + "\n]}\n")
    json.load(open(os.path.join(d, "manifest.json")))
    return rows


# ----------------------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--self-check", nargs="?", const="", default=None, metavar="DUMP_DIR",
                    help="check parameter counts (and the SOFT-Tiny key dump in DUMP_DIR) and exit")
    args = ap.parse_args()
    torch.set_grad_enabled(False)

    if args.self_check is not None:
        fails = S.self_check(args.self_check or None)
        print("self-check:", "ok" if not fails else fails)
        sys.exit(1 if fails else 0)
    if not args.out:
        ap.error("--out is required")
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    W = Writer(args.out)
    times = []

    def lap(what):
        times.append((what, time.time() - (times[-1][2] if times else t0), time.time()))

    # ---- SOFT-Tiny weights W, shared by the SOFT and the SOFT-Norm cases (identical keys, docs/models.md §3.6) ----
    # Each fixture file is written once (size): soft_tiny_b2/model.pth ({'model': sd}, no arch) also serves
    # soft_tiny_norm_noarch (--arch soft_norm) and soft_tiny_448 (--image-size 448); soft_tiny_norm_b2 reads
    # soft_tiny_norm_b1's timm container.
    xt1 = R.make_images(1, 224, seed=201)
    xt2 = R.make_images(2, 224, seed=202)
    xn1 = R.make_images(1, 224, seed=205)
    xn2 = R.make_images(2, 224, seed=206)
    models, logits = build(["soft_tiny", "soft_norm_tiny"], 21,
                           [("soft_tiny", xt1), ("soft_tiny", xt2), ("soft_norm_tiny", xn1), ("soft_norm_tiny", xn2)])
    (lt1, lt2, ln1, ln2) = logits
    mt, mn = models["soft_tiny"], models["soft_norm_tiny"]
    sd = R.clone_state_dict(mt)
    lap("tiny weights")

    # soft_tiny_b1: timm CheckpointSaver container; the evaluated weights are state_dict_ema
    other, non_ema = other_weights(sd, mt, xt1, 22)
    assert np.abs(non_ema - lt1[0]).max() > 1.0, "EMA and non-EMA weights should disagree"
    ckpt = OrderedDict([
        ("epoch", 299), ("arch", "soft_tiny"),
        ("state_dict", OrderedDict(("module." + k, v) for k, v in other.items())),
        ("optimizer", fake_optimizer_state(copy.deepcopy(mt), 23)), ("version", 2), ("args", timm_args("soft_tiny")),
        ("state_dict_ema", sd), ("metric", 79.3)])
    torch.save(ckpt, W.path("soft_tiny_b1", "model_best.pth.tar"))
    np.save(W.path("soft_tiny_b1", "logits_f32_non_ema.npy"), non_ema)
    W.add("soft_tiny_b1", mt, "soft_tiny", 21, xt1, *lt1, "soft_tiny_b1/model_best.pth.tar", "timm",
          extra=dict(logits_f32_non_ema="soft_tiny_b1/logits_f32_non_ema.npy", state_dict_key="state_dict_ema",
                     key_prefix_in_state_dict="module."))
    # soft_tiny_b2: {'model': sd}
    R.save_in_container(W.path("soft_tiny_b2", "model.pth"), sd, "model")
    W.add("soft_tiny_b2", mt, "soft_tiny", 21, xt2, *lt2, "soft_tiny_b2/model.pth", "model")

    # soft_tiny_norm_b1 / _b2: timm container whose arch (and args.model) is soft_norm_tiny
    other, non_ema = other_weights(sd, mn, xn1, 42)
    ckpt = OrderedDict([
        ("epoch", 299), ("arch", "soft_norm_tiny"),
        ("state_dict", OrderedDict(("module." + k, v) for k, v in other.items())),
        ("optimizer", fake_optimizer_state(copy.deepcopy(mn), 43)), ("version", 2),
        ("args", timm_args("soft_norm_tiny")), ("state_dict_ema", sd), ("metric", 79.4)])
    torch.save(ckpt, W.path("soft_tiny_norm_b1", "model_best.pth.tar"))
    np.save(W.path("soft_tiny_norm_b1", "logits_f32_non_ema.npy"), non_ema)
    # the same weights run as plain SOFT: what a converter that ignored the arch would produce
    wrong_arch = head_logits(mt.head, *features_both(mt, xn1))[1]
    wrong_arch_diff = float(np.abs(wrong_arch - ln1[1]).max())
    assert wrong_arch_diff > 0.05, wrong_arch_diff
    np.save(W.path("soft_tiny_norm_b1", "logits_f64_as_soft.npy"), wrong_arch)
    W.add("soft_tiny_norm_b1", mn, "soft_norm_tiny", 21, xn1, *ln1, "soft_tiny_norm_b1/model_best.pth.tar", "timm",
          extra=dict(logits_f32_non_ema="soft_tiny_norm_b1/logits_f32_non_ema.npy", state_dict_key="state_dict_ema",
                     key_prefix_in_state_dict="module.", logits_f64_as_soft="soft_tiny_norm_b1/logits_f64_as_soft.npy",
                     max_abs_norm_vs_soft=wrong_arch_diff))
    # b2: the reference is computed on the whole batch (the legacy alpha is global over it); each image run alone is
    # recorded too, to show the size of that coupling.
    mn64 = copy.deepcopy(mn).double().eval()
    alone64 = np.concatenate([mn64(torch.from_numpy(xn2[i:i + 1]).double()).numpy() for i in range(len(xn2))])
    coupling = [float(np.abs(alone64[i] - ln2[1][i]).max()) for i in range(len(xn2))]
    np.save(W.path("soft_tiny_norm_b2", "logits_f64_each_alone.npy"), alone64)
    W.add("soft_tiny_norm_b2", mn, "soft_norm_tiny", 21, xn2, *ln2, "soft_tiny_norm_b1/model_best.pth.tar", "timm",
          extra=dict(state_dict_key="state_dict_ema", key_prefix_in_state_dict="module.", batch_coupled=True,
                     logits_f64_each_alone="soft_tiny_norm_b2/logits_f64_each_alone.npy",
                     max_abs_alone_vs_batch=coupling))
    # noarch: a checkpoint that names no model; the converter must be told it is SOFT-Norm
    W.add("soft_tiny_norm_noarch", mn, "soft_norm_tiny", 21, xn1, *ln1, "soft_tiny_b2/model.pth", "model",
          extra=dict(convert_options={"arch": "soft_norm"}))
    # 448x448: pos embeds resized bilinearly from the 224 tables, m = 196 landmarks per stage. Its own weights, with
    # less clustered landmarks (LayerNorm scale 1.0): with the shared weights K2 reaches cond ~1e7 at m = 196 and a
    # 1e-6 relative change of the input moves the float64 logits by ~3e-3, so no float32 engine (PyTorch's own
    # float32 run included) could be compared at 1e-4.
    x448 = R.make_images(1, 448, seed=207)
    models448, ((l32_448, l64_448),) = build(["soft_tiny"], 24, [("soft_tiny", x448)], ln_scale=1.0, num_classes=10)
    m448 = models448["soft_tiny"]
    R.save_in_container(W.path("soft_tiny_448", "model.pth"), R.clone_state_dict(m448), "model")
    W.add("soft_tiny_448", m448, "soft_tiny", 24, x448, l32_448, l64_448, "soft_tiny_448/model.pth", "model",
          extra=dict(convert_options={"image_size": 448}), img_size=448)
    lap("tiny cases")

    # ---- soft_small [1,3,7,4] (the published Small), 100 classes, raw state_dict (one file for b1 and b2) ----
    x1 = R.make_images(1, 224, seed=203)
    x2 = R.make_images(2, 224, seed=204)
    models, ((l32a, l64a), (l32b, l64b)) = build(["soft_small"], 31, [("soft_small", x1), ("soft_small", x2)],
                                                 depths=(1, 3, 7, 4), num_classes=100)
    m = models["soft_small"]
    R.save_in_container(W.path("soft_small_b1", "model.pth"), R.clone_state_dict(m), "raw")
    W.add("soft_small_b1", m, "soft_small", 31, x1, l32a, l64a, "soft_small_b1/model.pth", "raw")
    W.add("soft_small_b2", m, "soft_small", 31, x2, l32b, l64b, "soft_small_b1/model.pth", "raw")
    lap("soft_small")

    newton_rows = write_newton_cases(args.out)
    lap("newton")

    manifest = OrderedDict(version=1, generator="tools/reference/make_soft_cases.py", torch=torch.__version__,
                           mean=list(R.IMAGENET_MEAN), std=list(R.IMAGENET_STD), cases=W.cases)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:  # one line per case
        head = json.dumps(OrderedDict((k, v) for k, v in manifest.items() if k != "cases"))
        f.write(head[:-1] + ', "cases": [\n' + ",\n".join(json.dumps(c) for c in W.cases) + "\n]}\n")
    json.load(open(os.path.join(args.out, "manifest.json")))

    # ---- report ----
    print(f"{'case':22s} {'max|logit|':>10s} {'max|f32-f64|':>12s} {'min gap':>8s} {'gap/diff':>9s} "
          f"{'argmax f32':>12s} {'argmax f64':>12s}")
    bad = []
    for name, mx, diff, gap, a32, a64 in W.rows:
        ratio = gap / diff if diff > 0 else float("inf")
        print(f"{name:22s} {mx:10.3f} {diff:12.3e} {gap:8.3f} {ratio:9.2e} {str(a32):>12s} {str(a64):>12s}")
        if a32 != a64 or gap < MIN_GAP or ratio < MIN_GAP_RATIO:
            bad.append(name)
    print("soft_tiny_norm_b2: each image alone vs in the batch (legacy global alpha): max |dlogit| = "
          + ", ".join(f"{c:.3e}" for c in coupling))
    print(f"\n{'newton case':18s} {'shape':>16s} {'cond':>9s} {'max|V|':>9s} {'max|f32-f64|':>12s} "
          f"{'|V-inv|':>9s} {'backtr':>6s}")
    for name, shape, cond, mx, diff, terr, bt in newton_rows:
        print(f"{name:18s} {str(shape):>16s} {cond:9.2e} {mx:9.3g} {diff:12.3e} {terr:9.3g} {str(bt):>6s}")
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(args.out) for f in fs)
    print("\ntimes: " + ", ".join(f"{w} {t:.1f}s" for w, t, _ in times))
    print(f"wrote {len(W.cases)} cases + {len(newton_rows)} newton cases to {args.out} ({total / 2**20:.1f} MiB) "
          f"in {time.time() - t0:.1f} s")
    if bad:
        print("FAILED margin checks:", bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
