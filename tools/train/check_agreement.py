#!/usr/bin/python3
"""Compares `vitrt eval --predictions` with PyTorch, image by image, for a shipped Fashion-MNIST model:

    /usr/bin/python3 tools/train/fashion_mnist.py --export-imagefolder /tmp/fm10k --split test
    build/bin/vitrt-convert models/fashion_soft/fashion_soft.pth -o /tmp/soft.vitrt --labels models/fashion_soft/labels.txt
    build/bin/vitrt eval -m /tmp/soft.vitrt /tmp/fm10k --predictions /tmp/soft.tsv
    /usr/bin/python3 tools/train/check_agreement.py --model soft /tmp/soft.tsv

PyTorch runs the model's literal eval pipeline on every image file listed (PIL open -> RGB -> bicubic resize ->
centre crop -> ToTensor -> Normalize, as tools/train/train_fashion.py) and the script prints both top-1
accuracies, the argmax agreement and the largest top-1 probability difference. Exit status 1 when the agreement is
below --min-agreement (default 99.9%) or the accuracies differ by more than --max-acc-diff (default 0.05 points).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_fashion as T  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(T.MODELS), required=True)
    ap.add_argument("--checkpoint", help="default: models/fashion_<model>/fashion_<model>.pth")
    ap.add_argument("predictions", help="the TSV written by `vitrt eval --predictions`")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--min-agreement", type=float, default=99.9)
    ap.add_argument("--max-acc-diff", type=float, default=0.05)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    spec = T.MODELS[a.model]
    T.IMG = spec["img"]
    model = T.build_model(spec)
    ckpt = a.checkpoint or os.path.join(T.ROOT, "models", f"fashion_{a.model}", f"fashion_{a.model}.pth")
    model.load_state_dict(torch.load(ckpt, map_location="cpu")["model"])
    model.eval()

    rows = []
    with open(a.predictions) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            path, truth, pred, prob = line.rstrip("\n").split("\t")
            rows.append((path, int(truth), int(pred), float(prob)))
    if not rows:
        sys.exit(f"{a.predictions}: no predictions")
    agree = torch_ok = vitrt_ok = 0
    worst = 0.0
    with torch.no_grad():
        for s in range(0, len(rows), a.batch):
            chunk = rows[s:s + a.batch]
            x = torch.stack([T.eval_preprocess(Image.open(r[0])) for r in chunk])
            p = F.softmax(model(x), -1)
            for r, pr in zip(chunk, p):
                top = int(pr.argmax())
                agree += top == r[2]
                torch_ok += top == r[1]
                vitrt_ok += r[2] == r[1]
                worst = max(worst, abs(float(pr[top]) - r[3])) if top == r[2] else worst
    n = len(rows)
    acc_t, acc_v, agr = 100.0 * torch_ok / n, 100.0 * vitrt_ok / n, 100.0 * agree / n
    print(f"{a.model}: {n} images; top-1 PyTorch {acc_t:.2f}%, vitrt {acc_v:.2f}% (diff {acc_v - acc_t:+.2f}); "
          f"argmax agreement {agr:.2f}% ({n - agree} differ); max top-1 probability difference {worst:.2e}")
    return 0 if agr >= a.min_agreement and abs(acc_v - acc_t) <= a.max_acc_diff else 1


if __name__ == "__main__":
    sys.exit(main())
