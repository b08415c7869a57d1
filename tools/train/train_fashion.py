#!/usr/bin/python3
"""Trains the shipped Fashion-MNIST models on the CPU: a small SOFT (the demo model), a small LaViT (with LA layers
and attention residuals) and a small DeiT, each from the project's PyTorch reference modules.

    apt-get install -y dataset-fashion-mnist
    /usr/bin/python3 tools/train/train_fashion.py --model soft             # writes models/fashion_soft/
    /usr/bin/python3 tools/train/train_fashion.py --model lavit            # writes models/fashion_lavit/
    /usr/bin/python3 tools/train/train_fashion.py --model deit             # writes models/fashion_deit/
    /usr/bin/python3 tools/train/train_fashion.py --model soft --eval-only # re-evaluate a saved checkpoint
    /usr/bin/python3 tools/train/train_fashion.py --model soft --eval-only --samples samples/fashion
                                                                           # re-pick the bundled sample images

Writes models/fashion_<model>/{fashion_<model>.pth,labels.txt,expected.txt}: the checkpoint ({'model', 'args'};
the args carry the eval pipeline the converter reads), the class names, and PyTorch's top-1 on every image of
samples/fashion/. Inputs are the 28x28 grayscale images replicated to RGB and upscaled with PIL bicubic to the
model's side once, i.e. exactly the eval pipeline the converted model carries:
PIL open -> convert('RGB') -> resize shorter side to IMG (bicubic) -> centre crop IMG -> ToTensor ->
Normalize(mean=(0.5,0.5,0.5), std=(0.5,0.5,0.5)). The models and recipes are in MODELS below and in each
models/fashion_<model>/README.md.
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
from vitrt_reference.lavit import LaViT  # noqa: E402
from vitrt_reference.soft import SoftmaxFreeVisionTransformer  # noqa: E402
import fashion_mnist as fm  # noqa: E402

MEAN = (0.5, 0.5, 0.5)
STD = (0.5, 0.5, 0.5)

# name -> (builder kwargs, input side, random-crop padding, default epochs, default lr). Every model: 3 input
# channels (grey replicated), 10 classes.
MODELS = {
    # ViT: patch 8 on 32x32 -> 16 tokens + class token, 1 head of 64.
    "deit": dict(cls=VisionTransformer, img=32, pad=2, epochs=10, lr=2e-3,
                 config=dict(img_size=32, patch_size=8, in_chans=3, num_classes=10, embed_dim=64, depth=6,
                             num_heads=1, mlp_ratio=4.0, qkv_bias=True, eps=1e-6)),
    # SOFT on 32x32: conv stem -> 8x8, then 4x4 and 2x2 grids with landmark ratio 2 (16, 4, 1 landmarks), the
    # Newton pseudo-inverse (20 scaled iterations) trained through, then a softmax stage on [cls | 1x1].
    "soft": dict(cls=SoftmaxFreeVisionTransformer, img=32, pad=2, epochs=4, lr=2e-3,
                 config=dict(img_size=32, in_chans=3, num_classes=10, embed_dims=(32, 64, 128, 256),
                             mlp_ratios=(8, 8, 4, 4), depths=(1, 2, 1, 1), sr_ratios=(2, 2, 2, 1))),
    # LaViT on 64x64: PVT v2 stages at 16x16, 8x8, 4x4, 2x2 (N' = 4 keys everywhere); the second layer of stages
    # 2-4 is a Less-Attention layer, stages 2-4 start with the attention residual of the previous stage.
    "lavit": dict(cls=LaViT, img=64, pad=4, epochs=3, lr=2e-3,
                  config=dict(img_size=64, in_chans=3, num_classes=10, embed_dims=(64, 128, 192, 256),
                              mlp_ratios=(2, 2, 4, 4), depths=(1, 2, 2, 2), la_layers=(0, 1, 1, 1))),
}
IMG = None  # the chosen model's input side (set in main)


def build_model(spec):
    return spec["cls"](**spec["config"])


def init_weights(model, conv_init):
    """timm's ViT init: trunc_normal(0.02) for Linear weights, pos embeds and cls_token; zero biases; LN (1, 0);
    with conv_init, conv weights normal(0, sqrt(2 / fan_out)) as timm's PVT v2 and SOFT do (the DeiT recipe keeps
    PyTorch's default conv init)."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    for n, p in model.named_parameters():
        if n.startswith("pos_embed") or n == "cls_token":
            nn.init.trunc_normal_(p, std=0.02)
    for m in model.modules() if conv_init else ():
        if isinstance(m, nn.Conv2d):  # timm's PVT v2 / SOFT conv init: fan-out normal
            fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
            nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    for name, m in model.named_modules():
        if name.endswith(".theta") or name.endswith(".psi"):
            # LaViT LA transforms start as the identity: an LA layer first reuses the previous scores as they are
            nn.init.eye_(m.weight)
            nn.init.zeros_(m.bias)


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


def pipeline_probs(model, path):
    model.eval()
    with torch.no_grad():
        return F.softmax(model(eval_preprocess(Image.open(path)).unsqueeze(0)), -1)[0]


def pick_samples(probs, test_x, test_y, out_dir, count):
    """Rewrites out_dir with the first `count` distinct classes met scanning the test split, each with its first
    image that the model classifies correctly and confidently (p >= 0.6)."""
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".png"):
            os.remove(os.path.join(out_dir, f))
    seen = set()
    for i in range(len(test_y)):
        y = int(test_y[i])
        if y in seen or int(probs[i].argmax()) != y or float(probs[i, y]) < 0.6:
            continue
        seen.add(y)
        Image.fromarray(test_x[i], mode="L").save(os.path.join(out_dir, f"{i:03d}_{fm.CLASS_SLUGS[y]}.png"))
        if len(seen) == count:
            break


def write_expected(model, name, probs, samples_dir, out_path):
    """PyTorch's top-1 on every bundled sample image, through the literal per-file eval pipeline (checked against
    the batched pipeline the accuracy is measured with)."""
    rows = []
    for f in sorted(os.listdir(samples_dir)):
        if not f.endswith(".png"):
            continue
        p = pipeline_probs(model, os.path.join(samples_dir, f))
        index, true = int(f.split("_", 1)[0]), fm.CLASSES[fm.CLASS_SLUGS.index(f.split("_", 1)[1][:-4])]
        assert torch.allclose(p, probs[index], atol=1e-5), "the batched and the per-file pipelines disagree"
        top = torch.topk(p, 3)
        rows.append((f, true, [(fm.CLASSES[int(c)], float(v)) for v, c in zip(top.values, top.indices)]))
    with open(out_path, "w") as g:
        g.write(f"# PyTorch's top-3 of models/fashion_{name}/fashion_{name}.pth on {os.path.relpath(samples_dir, ROOT)}/ (Fashion-MNIST\n"
                f"# test-split images; file name = test index _ true class) through the eval pipeline: PIL open ->\n"
                f"# convert('RGB') -> resize {IMG} (bicubic) -> centre crop {IMG} -> ToTensor -> Normalize(0.5, 0.5).\n"
                "# Tab-separated: file, true label, then label probability for the top 3.\n")
        for f, true, top in rows:
            g.write(f"{f}\t{true}\t" + "\t".join(f"{c}\t{v:.4f}" for c, v in top) + "\n")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=fm.DEFAULT_DATA_DIR)
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--out", help="output folder (default models/fashion_<model>)")
    ap.add_argument("--samples", help="re-pick the bundled sample images into this folder (the demo model's job)")
    ap.add_argument("--samples-dir", default=os.path.join(ROOT, "samples", "fashion"),
                    help="the bundled sample images expected.txt is written for")
    ap.add_argument("--num-samples", type=int, default=8)
    ap.add_argument("--epochs", type=int, help="default: the model's recipe")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, help="default: the model's recipe")
    ap.add_argument("--min-lr", type=float, default=1e-5)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--warmup-epochs", type=float, default=0.5)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--pad", type=int, help="random-crop padding in pixels of the model's input (default: recipe)")
    ap.add_argument("--clip-grad", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-only", action="store_true", help="load the saved checkpoint, evaluate, write expected.txt")
    a = ap.parse_args()
    global IMG
    spec = MODELS[a.model]
    IMG = spec["img"]
    for k in ("epochs", "lr", "pad"):
        if getattr(a, k) is None:
            setattr(a, k, spec[k])
    a.out = a.out or os.path.join(ROOT, "models", f"fashion_{a.model}")

    torch.set_num_threads(a.threads)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    ckpt_path = os.path.join(a.out, f"fashion_{a.model}.pth")

    t0 = time.time()
    test_x, test_y = fm.load_split("test", a.data_dir)
    test_u8 = upscale_split(test_x)
    test_t = torch.from_numpy(test_y)
    model = build_model(spec)

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
        init_weights(model, conv_init=a.model != "deit")
        def decays(n, p):
            return p.ndim >= 2 and not n.startswith("pos_embed") and n != "cls_token"
        decay = [p for n, p in model.named_parameters() if decays(n, p)]
        no_decay = [p for n, p in model.named_parameters() if not decays(n, p)]
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
        args = dict(model=f"{a.model}_fashion", dataset="fashion-mnist",
                    **{k: list(v) if isinstance(v, tuple) else v for k, v in spec["config"].items()},
                    input_size=[3, IMG, IMG], crop_pct=1.0, interpolation="bicubic", mean=list(MEAN), std=list(STD),
                    epochs=a.epochs, batch_size=a.batch_size, opt="adamw", lr=a.lr, min_lr=a.min_lr,
                    weight_decay=a.weight_decay, sched="cosine", warmup_epochs=a.warmup_epochs,
                    smoothing=a.smoothing, aug=f"random crop {IMG} pad {a.pad} (zeros) + hflip", clip_grad=a.clip_grad,
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
    if a.samples:
        pick_samples(probs, test_x, test_y, a.samples, a.num_samples)
    for f, true, top in write_expected(model, a.model, probs, a.samples or a.samples_dir,
                                       os.path.join(a.out, "expected.txt")):
        print(f"  {f:24s} true {true:12s} top-1 {top[0][0]:12s} p={top[0][1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
