"""vitrt's own PyTorch reference models (ground truth for the engine's tests), written from
docs/models.md. No timm dependency."""
from .deit import (VisionTransformer, deit_tiny, deit_small, deit_base, deit_tiny_distilled, deit_small_distilled,
                   deit_base_distilled)
from .pvt_v2 import (PyramidVisionTransformerV2, pvt_v2_b0, pvt_v2_b1, pvt_v2_b2, pvt_v2_b2_li, pvt_v2_b3, pvt_v2_b4,
                     pvt_v2_b5)
from .soft import (SoftmaxFreeVisionTransformer, soft_tiny, soft_small, soft_medium, soft_large, soft_huge,
                   soft_norm_tiny, soft_norm_small, soft_norm_medium, soft_norm_large, soft_norm_huge)
from .lavit import LaViT, lavit_tiny, lavit_small, lavit_base, init_lavit_extras
from .common import (init_for_tests, calibrate_heads, make_images, clone_state_dict, save_safetensors,
                     load_safetensors, save_in_container, IMAGENET_MEAN, IMAGENET_STD)

# Parameter counts from docs/models.md (§5.2 exact formula; §6.2 [ran] rounded to 1e3).
EXPECTED_PARAMS = {
    "deit_tiny": 5_717_416, "deit_small": 22_050_664, "deit_base": 86_567_656,
    "pvt_v2_b0": 3_667e3, "pvt_v2_b1": 14_009e3, "pvt_v2_b2": 25_363e3, "pvt_v2_b2_li": 22_554e3,
    "pvt_v2_b3": 45_239e3, "pvt_v2_b4": 62_556e3, "pvt_v2_b5": 81_956e3,
}


def read_key_dump(path):
    """Parse a `name<TAB>(d0, d1, ...)` dump (docs/models.md companion files) into [(name, shape tuple)]."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            name, shape = line.split("\t")
            dims = [s.strip() for s in shape.strip("()").split(",") if s.strip()]
            out.append((name, tuple(int(d) for d in dims)))
    return out


def check_keys_against_dump(model, path):
    """Returns a list of differences (empty when names, order and shapes all match)."""
    want = read_key_dump(path)
    have = [(k, tuple(v.shape)) for k, v in model.state_dict().items()]
    errs = []
    wd, hd = dict(want), dict(have)
    for k in wd.keys() - hd.keys():
        errs.append(f"missing {k} {wd[k]}")
    for k in hd.keys() - wd.keys():
        errs.append(f"unexpected {k} {hd[k]}")
    for k in wd.keys() & hd.keys():
        if wd[k] != hd[k]:
            errs.append(f"shape {k}: have {hd[k]} want {wd[k]}")
    if not errs and [k for k, _ in want] != [k for k, _ in have]:
        errs.append("same keys but different order")
    return errs


def self_check(dump_dir=None, verbose=True):
    """Parameter counts of every factory vs docs/models.md, and (if dump_dir holds them) the PVT v2 b2/b2_li key dumps.
    Returns the list of failures."""
    import os
    import torch
    fails = []
    factories = {n: globals()[n] for n in EXPECTED_PARAMS}
    torch.set_grad_enabled(False)
    for name, fn in factories.items():
        n = sum(p.numel() for p in fn().parameters())
        want = EXPECTED_PARAMS[name]
        ok = (n == want) if name.startswith("deit") else abs(n - want) <= 500
        if verbose:
            print(f"  params {name:14s} {n:>11,d}  expected {int(want):>11,d}  {'ok' if ok else 'MISMATCH'}")
        if not ok:
            fails.append(f"{name}: {n} params, expected {want}")
    if dump_dir:
        for name, fn in (("pvt_v2_b2", pvt_v2_b2), ("pvt_v2_b2_li", pvt_v2_b2_li)):
            path = os.path.join(dump_dir, f"{name}_state_dict.txt")
            if not os.path.exists(path):
                fails.append(f"{path} not found")
                continue
            errs = check_keys_against_dump(fn(), path)
            if verbose:
                print(f"  keys   {name:14s} vs {os.path.basename(path)}: {'ok' if not errs else errs[:5]}")
            fails += [f"{name}: {e}" for e in errs]
    return fails
