#!/usr/bin/python3
"""LaViT test fixtures (docs/models.md §4.2) from vitrt's own reference (tools/reference/vitrt_reference/lavit.py), in the
manifest format of make_model_cases.py. Run by ctest (fixture `lavit_cases`):

    /usr/bin/python3 tools/reference/make_lavit_cases.py --out build/fixtures/lavit_cases

Writes DIR/<case>/{checkpoint, input.npy, logits_f32.npy, logits_f64.npy, labels.txt}, DIR/manifest.json (paths
relative to DIR) and DIR/score_edit.json + DIR/score_edit/*.npy: per-block hidden states and kept scores (float64
reference stored as float32, image 0) of lavit_tiny_b1 and of lavit_tiny_theta_edit (the same weights with one Θ
weight changed), so a test can check that exactly the blocks from the edited LA layer on change. Cases sharing
weights share one file (to keep DIR near 200 MB): lavit_tiny_b2 runs lavit_tiny_theta_edit's raw state_dict (other
images, batch 2), lavit_small_b2 lavit_small_b1's, lavit_wrong_size lavit_tiny_b1's; `shares_weights_with` names
the owner.
`--self-check` checks the parameter counts of lavit_tiny/small/base against §4.2 and exits.
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
from vitrt_reference import lavit as L  # noqa: E402

TARGET_LOGIT_STD = 4.0
MIN_GAP = 0.05          # absolute top-1/top-2 gap required for every image (float64 logits)
MIN_GAP_RATIO = 1000.0  # ... and relative to max |f32 - f64|
FACTORIES = {"lavit_tiny": L.lavit_tiny, "lavit_small": L.lavit_small, "lavit_base": L.lavit_base}

THETA_EDIT = ("block3.1.attn.theta.weight", (0, 0), 0.5)


def features(model, x32, collect=False):
    """Pooled features (the head's input) in float32 and in float64 (a double copy of the model); with collect,
    also the float64 per-block (name, hidden, scores) list. model(x) == model.head(features), so the head can be
    redrawn without running the backbone again."""
    model.eval()
    col = [] if collect else None
    with torch.no_grad():
        f32 = model.forward_features(torch.from_numpy(x32))
        f64 = copy.deepcopy(model).double().eval().forward_features(torch.from_numpy(x32).double(), collect=col)
    return f32, f64, col


def logits(model, feats):
    with torch.no_grad():
        l32 = model.head(feats[0]).numpy().astype(np.float32)
        l64 = torch.nn.functional.linear(feats[1], model.head.weight.double(), model.head.bias.double()).numpy()
    return l32, l64.astype(np.float64)


def top_gap(logits):
    s = np.sort(logits, axis=1)
    return s[:, -1] - s[:, -2]


def margins_ok(l32, l64, groups):
    diff = float(np.abs(l32 - l64).max())
    gap = float(top_gap(l64).min())
    top1 = l64.argmax(1)
    distinct = all(len(set(top1[g].tolist())) > 1 for g in groups if len(top1[g]) > 1)
    return gap >= MIN_GAP and gap >= MIN_GAP_RATIO * diff and (l32.argmax(1) == top1).all() and distinct


def edit_weights(model, edit):
    key, idx, delta = edit
    edited = copy.deepcopy(model)
    sd = R.clone_state_dict(edited)
    sd[key][idx] += delta
    edited.load_state_dict(sd)
    return edited, sd


def build(factory, seed, x32, groups, edit=None, edited_groups=None, **kw):
    """common.init_for_tests + lavit.init_lavit_extras (Θ/Ψ = I + noise, gamma ~ 0.6), head calibrated on x (as
    common.calibrate_heads: logit std TARGET_LOGIT_STD on x); if an image's top-1/top-2 gap is too small, or the
    images of a group (one case's batch) share a top-1 class, redraw the head from the next seed (deterministic).
    With `edit`, the edited copy (same head) must pass too, on `edited_groups`.
    Returns model, feats (f32, f64, blocks64) and, with edit, edited model, its state_dict and feats."""
    model = FACTORIES[factory](**kw)
    R.init_for_tests(model, seed)
    L.init_lavit_extras(model, seed)
    feats = features(model, x32, collect=edit is not None)
    if edit is not None:
        edited, _ = edit_weights(model, edit)
        efeats = features(edited, x32, collect=True)
    for attempt in range(50):
        with torch.no_grad():
            s = (feats[0] @ model.head.weight.t()).std().item()
            model.head.weight.mul_(TARGET_LOGIT_STD / max(s, 1e-12))
        ok = margins_ok(*logits(model, feats), groups)
        if ok and edit is not None:
            ok = margins_ok(*logits(model, efeats), edited_groups)
        if ok:
            if edit is None:
                return model, feats
            edited, sd_edit = edit_weights(model, edit)  # now with the final head
            return model, feats, edited, sd_edit, efeats
        g = torch.Generator().manual_seed(seed * 1000 + attempt + 1)
        with torch.no_grad():
            model.head.weight.copy_(torch.randn(*model.head.weight.shape, generator=g, dtype=torch.float64).float())
            model.head.bias.copy_(0.02 * torch.randn(*model.head.bias.shape, generator=g, dtype=torch.float64).float())
    raise RuntimeError(f"{factory}: could not get a clear top-1 margin")


def describe(model, factory):
    return dict(arch="lavit", variant=factory, embed_dims=model.embed_dims, depths=model.depths,
                num_heads=model.num_heads, patch_size=4, mlp_ratios=[float(r) for r in model.mlp_ratios],
                sr_ratios=model.sr_ratios, la_layers=model.la_layers,
                va_layers=[d - a for d, a in zip(model.depths, model.la_layers)], img_size=model.img_size,
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

    def path(self, name, f):
        return os.path.join(self.case_dir(name), f)

    def add(self, name, model, factory, seed, x32, l32, l64, checkpoint, container, extra=None):
        """checkpoint: path relative to DIR (may be in another case's folder)."""
        x32, l32, l64 = np.ascontiguousarray(x32), np.ascontiguousarray(l32), np.ascontiguousarray(l64)
        d = self.case_dir(name)
        np.save(os.path.join(d, "input.npy"), x32)
        np.save(os.path.join(d, "logits_f32.npy"), l32)
        np.save(os.path.join(d, "logits_f64.npy"), l64)
        write_labels(os.path.join(d, "labels.txt"), l32.shape[1])
        diff = float(np.abs(l32.astype(np.float64) - l64).max())
        gaps = top_gap(l64)
        entry = OrderedDict(name=name, expect_error=False)
        entry.update(describe(model, factory))
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

    def add_error(self, name, base, checkpoint, container, detail, extra=None):
        entry = OrderedDict(name=name, expect_error=True)
        for k in ("arch", "variant", "embed_dims", "depths", "num_heads", "patch_size", "mlp_ratios", "sr_ratios",
                  "la_layers", "va_layers", "img_size", "num_classes"):
            if k in base:
                entry[k] = base[k]
        entry.update(checkpoint=checkpoint, container=container, input=None, logits_f32=None, logits_f64=None,
                     labels=None)
        if extra:
            entry.update(extra)
        entry["error_detail"] = detail
        self.cases.append(entry)


def save_ckpt(W, name, sd, container, fname="model.pth"):
    R.save_in_container(W.path(name, fname), sd, container)
    back = torch.load(W.path(name, fname), map_location="cpu")
    back = back["model"] if container == "model" else back
    assert list(back) == list(sd) and all(torch.equal(back[k], sd[k]) for k in sd), f"{name}: round trip"
    return f"{name}/{fname}"


def dump_blocks(blocks64, tag, out_dir):
    """float64 reference, image 0, stored as float32: hidden state [N,C] after each block and the scores [h,N,N']
    it keeps."""
    files = OrderedDict()
    for k, (bname, hid, s) in enumerate(blocks64):
        hid, s = hid[0].numpy(), s[0].numpy()
        hf, sf = f"score_edit/{tag}_{k:02d}_{bname}_hidden.npy", f"score_edit/{tag}_{k:02d}_{bname}_scores.npy"
        np.save(os.path.join(out_dir, hf), hid.astype(np.float32))
        np.save(os.path.join(out_dir, sf), s.astype(np.float32))
        files[bname] = (hf, sf, hid, s)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--self-check", action="store_true", help="check parameter counts against §4.2 and exit")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))

    if args.self_check:
        fails = L.self_check()
        print("self-check:", "ok" if not fails else fails)
        sys.exit(1 if fails else 0)
    if not args.out:
        ap.error("--out is required")
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    W = Writer(args.out)

    # ---- lavit_tiny: one init; image 0 -> lavit_tiny_b1 ({'model': sd}, batch 1, 1000 classes) and
    #      lavit_tiny_theta_edit (the same weights + one Θ edit, raw sd); images 1,2 -> lavit_tiny_b2 (batch 2,
    #      the edited weights' raw-sd file: a third lavit_tiny file would push DIR well past 200 MB) ----
    key, idx, delta = THETA_EDIT
    xt = R.make_images(3, 224, seed=301)
    tiny, feats, edited, sd_edit, efeats = build("lavit_tiny", 31, xt, groups=[slice(0, 1), slice(1, 3)],
                                                 edit=THETA_EDIT, edited_groups=[slice(0, 1), slice(1, 3)])
    sd_tiny = R.clone_state_dict(tiny)
    ck_tiny = save_ckpt(W, "lavit_tiny_b1", sd_tiny, "model")
    l32, l64 = logits(tiny, feats)
    W.add("lavit_tiny_b1", tiny, "lavit_tiny", 31, xt[:1], l32[:1], l64[:1], ck_tiny, "model")
    base_tiny = describe(tiny, "lavit_tiny")
    ck_edit = save_ckpt(W, "lavit_tiny_theta_edit", sd_edit, "raw")
    l32, l64 = logits(edited, efeats)
    W.add("lavit_tiny_b2", edited, "lavit_tiny", 31, xt[1:], l32[1:], l64[1:], ck_edit, "raw",
          extra=dict(shares_weights_with="lavit_tiny_theta_edit"))

    # ---- lavit_small_b1 / _b2: one set of weights (one file), 100 classes, batch 1 and batch 2 ----
    x = R.make_images(3, 224, seed=303)
    m, f = build("lavit_small", 33, x, groups=[slice(0, 1), slice(1, 3)], num_classes=100)
    ck_small = save_ckpt(W, "lavit_small_b1", R.clone_state_dict(m), "model")
    l32, l64 = logits(m, f)
    W.add("lavit_small_b1", m, "lavit_small", 33, x[:1], l32[:1], l64[:1], ck_small, "model")
    W.add("lavit_small_b2", m, "lavit_small", 33, x[1:], l32[1:], l64[1:], ck_small, "model",
          extra=dict(shares_weights_with="lavit_small_b1"))

    # ---- lavit_tiny_theta_edit: lavit_tiny_b1's weights with one Θ weight changed, image 0 ----
    l32, l64 = logits(edited, efeats)
    W.add("lavit_tiny_theta_edit", edited, "lavit_tiny", 31, xt[:1], l32[:1], l64[:1], ck_edit, "raw",
          extra=dict(edited_from="lavit_tiny_b1", edit=dict(key=key, index=list(idx), delta=delta)))

    # per-block dumps for "the score edge is consumed by the right layers"
    os.makedirs(os.path.join(args.out, "score_edit"), exist_ok=True)
    orig = dump_blocks(feats[2], "orig", args.out)
    edit = dump_blocks(efeats[2], "edit", args.out)
    types = dict(tiny.layer_types())
    edited_block = key.split(".attn.")[0]
    blocks, first_changed, seen = [], None, False
    for k, bname in enumerate(orig):
        seen = seen or bname == edited_block
        dh = float(np.abs(orig[bname][2] - edit[bname][2]).max())
        ds = float(np.abs(orig[bname][3] - edit[bname][3]).max())
        changed = dh > 0 or ds > 0
        if changed and first_changed is None:
            first_changed = bname
        # unchanged before the edited layer (bit-identical), changed at and after it
        assert changed == seen, f"{bname}: changed={changed} (|dh|={dh}, |ds|={ds})"
        stage, layer = bname[len("block"):].split(".")
        blocks.append(OrderedDict(index=k, name=bname, stage=int(stage), layer=int(layer), type=types[bname],
                                  hidden_shape=list(orig[bname][2].shape), scores_shape=list(orig[bname][3].shape),
                                  original_hidden=orig[bname][0], original_scores=orig[bname][1],
                                  edited_hidden=edit[bname][0], edited_scores=edit[bname][1],
                                  expect_changed=changed, max_abs_diff_hidden=dh, max_abs_diff_scores=ds))
    score_edit = OrderedDict(
        original_case="lavit_tiny_b1", edited_case="lavit_tiny_theta_edit", image_index=0,
        dtype="float32 (rounded from the float64 reference)",
        edit=dict(key=key, index=list(idx), delta=delta), edited_block=edited_block, first_changed_block=first_changed,
        note="hidden: state after the block (after its MLP), [N,C]; scores: the pre-softmax scores the block keeps "
             "(including the attention residual in a stage's first layer), [h,N,N']. Blocks before the edited LA "
             "layer are bit-identical in the reference; the edited block and every later block differ (later "
             "stages also through attn_res).",
        blocks=blocks)
    with open(os.path.join(args.out, "score_edit.json"), "w") as f:
        json.dump(score_edit, f, indent=1)

    # ---- lavit_wrong_size: lavit_tiny_b1's checkpoint converted for 256x256: Ψ/Θ do not fit ----
    for bad in (256,):
        try:
            lavit_bad = L.lavit_tiny(img_size=bad)
            lavit_bad.load_state_dict(sd_tiny)
            raise AssertionError("a 224 LaViT loaded at 256")
        except RuntimeError as e:
            assert "psi" in str(e), e
        try:
            tiny(torch.zeros(1, 3, bad, bad))
            raise AssertionError("a 224 LaViT ran at 256")
        except AssertionError as e:
            assert "psi" in str(e), e
    W.add_error("lavit_wrong_size", base_tiny, ck_tiny, "model",
                "lavit_tiny_b1's block2.1.attn.psi.weight (784x784) is built for 224x224; image_size 256 needs "
                "1024x1024: psi", extra=dict(convert_options=dict(image_size=256), shares_weights_with="lavit_tiny_b1"))

    manifest = OrderedDict(version=1, generator="tools/reference/make_lavit_cases.py", torch=torch.__version__,
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
    print(f"score edit {key}{list(idx)} += {delta}: first changed block {first_changed}; max |d hidden| per block: "
          + " ".join(f"{b['name']}={b['max_abs_diff_hidden']:.2e}" for b in blocks))
    print("score MACs per LA layer, lavit_tiny 224 (VA at the same position: q, k projections + Q·Kᵀ; LA: Θ + Ψ):")
    for r in L.score_macs(tiny):
        print(f"  {r['block']}: N={r['N']} N'={r['Nk']} C={r['C']} h={r['h']}  VA q {r['va']['q'] / 1e6:.2f}M "
              f"k {r['va']['k'] / 1e6:.2f}M QKᵀ {r['va']['qk'] / 1e6:.2f}M = {r['va_total'] / 1e6:.2f}M | LA Θ "
              f"{r['la']['theta'] / 1e6:.2f}M Ψ {r['la']['psi'] / 1e6:.2f}M = {r['la_total'] / 1e6:.2f}M | saved "
              f"{r['saved'] / 1e6:+.2f}M MACs ({2 * r['saved'] / 1e6:+.2f} MFLOPs)")
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(args.out) for f in fs)
    print(f"wrote {len(W.cases)} cases to {args.out} ({total / 2**20:.1f} MiB) in {time.time() - t0:.1f} s")
    if bad:
        print("FAILED margin checks:", bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
