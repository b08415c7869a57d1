#!/usr/bin/python3
"""Parity fixtures for the models the repository ships (models/fashion_*/fashion_*.pth, trained weights): each
checkpoint with the bundled sample images (samples/fashion/*.png) put through the model's literal eval pipeline
(PIL, as tools/train/train_fashion.py evaluates), and PyTorch's float32 and float64 logits. Run by ctest (fixture
`shipped_cases`):

    /usr/bin/python3 tools/reference/make_shipped_cases.py --out build/fixtures/shipped_cases

Writes DIR/<model>/{checkpoint, input.npy, logits_f32.npy, logits_f64.npy, labels.txt} and DIR/manifest.json in the
format of make_model_cases.py (paths relative to DIR), so tests/models/model_parity_test.cpp checks them too.
"""
import argparse
import copy
import json
import os
import shutil
import sys
from collections import OrderedDict

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
import train_fashion as T  # noqa: E402

ARCH = {"deit": "deit", "soft": "soft", "lavit": "lavit"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    os.makedirs(a.out, exist_ok=True)
    samples_dir = os.path.join(ROOT, "samples", "fashion")
    samples = sorted(f for f in os.listdir(samples_dir) if f.endswith(".png"))
    assert samples, "no sample images in samples/fashion"
    cases = []
    for name in sorted(T.MODELS):
        src = os.path.join(ROOT, "models", f"fashion_{name}", f"fashion_{name}.pth")
        if not os.path.exists(src):
            continue
        spec = T.MODELS[name]
        T.IMG = spec["img"]
        model = T.build_model(spec)
        ck = torch.load(src, map_location="cpu")
        model.load_state_dict(ck["model"])
        model.eval()
        x = torch.stack([T.eval_preprocess(Image.open(os.path.join(samples_dir, f))) for f in samples]).numpy()
        l32 = model(torch.from_numpy(x)).numpy().astype(np.float32)
        l64 = copy.deepcopy(model).double()(torch.from_numpy(x).double()).numpy()
        d = os.path.join(a.out, name)
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(src, os.path.join(d, "checkpoint.pth"))
        shutil.copyfile(os.path.join(ROOT, "models", f"fashion_{name}", "labels.txt"), os.path.join(d, "labels.txt"))
        np.save(os.path.join(d, "input.npy"), x.astype(np.float32))
        np.save(os.path.join(d, "logits_f32.npy"), l32)
        np.save(os.path.join(d, "logits_f64.npy"), l64)
        diff = float(np.abs(l32.astype(np.float64) - l64).max())
        top1 = l64.argmax(1)
        assert (l32.argmax(1) == top1).all(), f"{name}: PyTorch float32 and float64 disagree on a sample's top-1"
        cases.append(OrderedDict(
            name=f"shipped_{name}", expect_error=False, arch=ARCH[name], img_size=spec["img"],
            checkpoint=f"{name}/checkpoint.pth", container="model", input=f"{name}/input.npy",
            logits_f32=f"{name}/logits_f32.npy", logits_f64=f"{name}/logits_f64.npy", labels=f"{name}/labels.txt",
            batch=int(x.shape[0]), samples=samples, max_abs_f32_vs_f64=diff, max_abs_logit=float(np.abs(l64).max()),
            argmax=[int(i) for i in top1]))
        print(f"{name}: {len(samples)} samples, max |f32 - f64| {diff:.2e}, argmax {top1.tolist()}")
    assert cases, "no shipped model found under models/"
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
