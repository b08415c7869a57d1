#!/usr/bin/python3
"""Trains the demo model: a small DeiT (timm VisionTransformer key names) on Fashion-MNIST, CPU only.

    apt-get install -y dataset-fashion-mnist
    /usr/bin/python3 tools/train/train_deit_fashion.py            # ~10 min on 2 cores; writes the files below
    /usr/bin/python3 tools/train/train_deit_fashion.py --eval-only # re-evaluate the saved checkpoint, rewrite samples

Writes models/fashion_deit/{fashion_deit.pth,labels.txt} and samples/fashion/{NNN_<class>.png,expected.txt}.
Model: VisionTransformer(img_size=32, patch_size=8, in_chans=3, embed_dim=64, depth=6, num_heads=1, mlp_ratio=4,
num_classes=10) from tools/reference/vitrt_reference/deit.py. Inputs are the 28x28 grayscale images replicated to
RGB and upscaled with PIL bicubic to 32x32, i.e. exactly the eval pipeline the converted model carries:
PIL open -> convert('RGB') -> resize shorter side to 32 (bicubic) -> centre crop 32 -> ToTensor ->
Normalize(mean=(0.5,0.5,0.5), std=(0.5,0.5,0.5)).
"""
import argparse
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
sys.path.insert(0, HERE)
from vitrt_reference.deit import VisionTransformer  # noqa: E402
import fashion_mnist as fm  # noqa: E402

IMG = 32
MEAN = (0.5, 0.5, 0.5)
STD = (0.5, 0.5, 0.5)
CONFIG = dict(img_size=IMG, patch_size=8, in_chans=3, num_classes=10, embed_dim=64, depth=6, num_heads=1,
              mlp_ratio=4.0, qkv_bias=True, eps=1e-6)


def build_model():
    return VisionTransformer(**CONFIG)


def init_weights(model):
    """timm's ViT init: trunc_normal(0.02) for Linear weights, pos_embed and cls_token; zero biases; LN (1, 0)."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    nn.init.trunc_normal_(model.pos_embed, std=0.02)
    nn.init.trunc_normal_(model.cls_token, std=0.02)


def eval_preprocess(img):
    """The converted model's pipeline (what torchvision's Resize(32, BICUBIC) / CenterCrop(32) / ToTensor /
    Normalize do; written with PIL + numpy because there is no torchvision here)."""
    img = img.convert("RGB")
    w, h = img.size
    if w <= h:
        size = (IMG, int(IMG * h / w))
    else:
        size = (int(IMG * w / h), IMG)
    if size != (w, h):
        img = img.resize(size, Image.BICUBIC)
    w, h = img.size
    left, top = int(round((w - IMG) / 2.0)), int(round((h - IMG) / 2.0))
    img = img.crop((left, top, left + IMG, top + IMG))
    x = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1).float().div(255)
    return (x - torch.tensor(MEAN).view(3, 1, 1)) / torch.tensor(STD).view(3, 1, 1)


def upscale_split(images):
    """uint8 [N,28,28] -> uint8 [N,32,32]: PIL convert('RGB') + bicubic resize, one channel kept (all three equal)."""
    out = np.empty((len(images), IMG, IMG), dtype=np.uint8)
    for i, a in enumerate(images):
        rgb = np.asarray(Image.fromarray(a, mode="L").convert("RGB").resize((IMG, IMG), Image.BICUBIC))
        if i < 64:
            assert (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 0] == rgb[..., 2]).all()
        out[i] = rgb[..., 0]
    return torch.from_numpy(out)


def normalize_u8(x):
    """uint8 [B,H,W] -> float [B,3,H,W] (ToTensor + Normalize, grey replicated to RGB)."""
    x = x.float().div(255).unsqueeze(1)
    return ((x - MEAN[0]) / STD[0]).expand(-1, 3, -1, -1).contiguous()


def augment(xb, pad, gen):
    """Random crop with zero padding (pixel value 0 = background) and horizontal flip, on uint8 [B,H,W]."""
    b = xb.shape[0]
    xp = F.pad(xb, (pad, pad, pad, pad))
    oy = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
    ox = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
    ar = torch.arange(IMG)
    rows = (oy[:, None] + ar)[:, :, None]
    cols = (ox[:, None] + ar)[:, None, :]
    out = xp[torch.arange(b)[:, None, None], rows, cols]
    flip = torch.rand(b, generator=gen) < 0.5
    out[flip] = out[flip].flip(-1)
    return out


@torch.no_grad()
def predict(model, x_u8, bs=500):
    model.eval()
    return torch.cat([F.softmax(model(normalize_u8(x_u8[i:i + bs])), -1) for i in range(0, len(x_u8), bs)])


def write_samples(model, test_x, test_y, test_u8, out_dir, count):
    """The first `count` distinct classes met scanning the test split, each with its first image that the model
    classifies correctly and confidently (p >= 0.6); top-1 recomputed through the literal eval pipeline."""
    probs = predict(model, test_u8)
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".png"):
            os.remove(os.path.join(out_dir, f))
    seen, rows = set(), []
    for i in range(len(test_y)):
        y = int(test_y[i])
        if y in seen or int(probs[i].argmax()) != y or float(probs[i, y]) < 0.6:
            continue
        seen.add(y)
        name = f"{i:03d}_{fm.CLASS_SLUGS[y]}.png"
        path = os.path.join(out_dir, name)
        Image.fromarray(test_x[i], mode="L").save(path)
        model.eval()
        with torch.no_grad():
            p = F.softmax(model(eval_preprocess(Image.open(path)).unsqueeze(0)), -1)[0]
        assert torch.allclose(p, probs[i], atol=1e-5), "the batched and the per-file pipelines disagree"
        rows.append((name, fm.CLASSES[y], fm.CLASSES[int(p.argmax())], float(p.max())))
        if len(rows) == count:
            break
    with open(os.path.join(out_dir, "expected.txt"), "w") as f:
        f.write("# Fashion-MNIST test-split images (28x28 grayscale; file name = test index _ true class) and the\n"
                "# PyTorch top-1 of models/fashion_deit/fashion_deit.pth through the eval pipeline: PIL open ->\n"
                "# convert('RGB') -> resize 32 (bicubic) -> centre crop 32 -> ToTensor -> Normalize(0.5, 0.5).\n"
                "# Tab-separated: file, true label, top-1 label, top-1 probability.\n")
        for r in rows:
            f.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]:.4f}\n")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=fm.DEFAULT_DATA_DIR)
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "fashion_deit"))
    ap.add_argument("--samples", default=os.path.join(ROOT, "samples", "fashion"))
    ap.add_argument("--num-samples", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr", type=float, default=1e-5)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--warmup-epochs", type=float, default=0.5)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--pad", type=int, default=2, help="random-crop padding in pixels of the 32x32 image")
    ap.add_argument("--clip-grad", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-only", action="store_true", help="load OUT/fashion_deit.pth, evaluate, write samples")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    ckpt_path = os.path.join(a.out, "fashion_deit.pth")

    t0 = time.time()
    test_x, test_y = fm.load_split("test", a.data_dir)
    test_u8 = upscale_split(test_x)
    test_t = torch.from_numpy(test_y)
    model = build_model()

    if a.eval_only:
        ck = torch.load(ckpt_path, map_location="cpu")
        model.load_state_dict(ck["model"])
        args = ck["args"]
    else:
        train_x, train_y = fm.load_split("train", a.data_dir)
        train_u8 = upscale_split(train_x)
        train_t = torch.from_numpy(train_y)
        print(f"data ready in {time.time() - t0:.1f} s: train {tuple(train_u8.shape)}, test {tuple(test_u8.shape)}",
              flush=True)
        init_weights(model)
        decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and n not in ("pos_embed", "cls_token")]
        no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and n not in ("pos_embed", "cls_token"))]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=a.lr)
        steps_per_epoch = len(train_u8) // a.batch_size  # drop_last
        total, warm = a.epochs * steps_per_epoch, int(a.warmup_epochs * steps_per_epoch)

        def lr_at(s):
            if s < warm:
                return a.lr * (s + 1) / warm
            return a.min_lr + 0.5 * (a.lr - a.min_lr) * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm)))

        gen = torch.Generator().manual_seed(a.seed)
        t_train, step = time.time(), 0
        for ep in range(a.epochs):
            model.train()
            perm = torch.randperm(len(train_u8), generator=gen)
            run_loss, run_ok, seen = 0.0, 0, 0
            for k in range(steps_per_epoch):
                idx = perm[k * a.batch_size:(k + 1) * a.batch_size]
                xb = normalize_u8(augment(train_u8[idx], a.pad, gen))
                yb = train_t[idx]
                for g in opt.param_groups:
                    g["lr"] = lr_at(step)
                logits = model(xb)
                loss = F.cross_entropy(logits, yb, label_smoothing=a.smoothing)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if a.clip_grad:
                    nn.utils.clip_grad_norm_(model.parameters(), a.clip_grad)
                opt.step()
                step += 1
                run_loss += float(loss) * len(idx)
                run_ok += int((logits.argmax(-1) == yb).sum())
                seen += len(idx)
            msg = (f"epoch {ep + 1}/{a.epochs}: loss {run_loss / seen:.4f}, train acc {100 * run_ok / seen:.2f}%, "
                   f"lr {lr_at(step - 1):.2e}, {time.time() - t_train:.0f} s")
            if ep + 1 == a.epochs or (ep + 1) % 3 == 0:
                msg += f", test acc {100 * float((predict(model, test_u8).argmax(-1) == test_t).float().mean()):.2f}%"
            print(msg, flush=True)
        train_s = time.time() - t_train
        args = dict(model="deit_fashion", dataset="fashion-mnist", **{k: v for k, v in CONFIG.items()},
                    input_size=[3, IMG, IMG], crop_pct=1.0, interpolation="bicubic", mean=list(MEAN), std=list(STD),
                    epochs=a.epochs, batch_size=a.batch_size, opt="adamw", lr=a.lr, min_lr=a.min_lr,
                    weight_decay=a.weight_decay, sched="cosine", warmup_epochs=a.warmup_epochs,
                    smoothing=a.smoothing, aug=f"random crop 32 pad {a.pad} (zeros) + hflip", clip_grad=a.clip_grad,
                    seed=a.seed, threads=a.threads, train_seconds=round(train_s, 1))

    probs = predict(model, test_u8)
    acc = 100 * float((probs.argmax(-1) == test_t).float().mean())
    per_class = [100 * float((probs.argmax(-1)[test_t == c] == c).float().mean()) for c in range(10)]
    print(f"test accuracy {acc:.2f}% (10k); per class " +
          ", ".join(f"{fm.CLASSES[c]} {per_class[c]:.1f}" for c in range(10)), flush=True)
    if not a.eval_only:
        args["test_acc1"] = round(acc, 2)
        os.makedirs(a.out, exist_ok=True)
        torch.save({"model": model.state_dict(), "args": args}, ckpt_path)
        with open(os.path.join(a.out, "labels.txt"), "w") as f:
            f.write("\n".join(fm.CLASSES) + "\n")
        print(f"saved {ckpt_path} ({os.path.getsize(ckpt_path) / 1e6:.2f} MB)", flush=True)
    for r in write_samples(model, test_x, test_y, test_u8, a.samples, a.num_samples):
        print(f"  {r[0]:24s} true {r[1]:12s} top-1 {r[2]:12s} p={r[3]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
