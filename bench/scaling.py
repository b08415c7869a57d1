#!/usr/bin/python3
"""Scaling benchmark of the attention mechanisms (issue 24): a ViT-Tiny-shaped model (dim 192, 3 heads, depth 12,
patch 16, timm blocks) whose attention is each mechanism in turn, at 196, 784, 3136 and 12544 patch tokens (224² to
1792² images), batch 1, 2 threads. For vitrt (`vitrt bench`, cpu backend) and PyTorch eager in its tuned
configuration (bench/compare.py's environment: OpenMP OpenBLAS, malloc tunables, set_num_threads, inference_mode):
median latency, images/s, and peak activation memory (vitrt: the planned arena, `activation_bytes`; PyTorch: the
growth of the process's peak RSS over its size before the first forward). Softmax attention is the quadratic baseline.

    bench/scaling.sh [BUILD_DIR] [--tokens 196,784] [--mechanisms softmax,linformer] [--repeat 5] [--out DIR]

Writes DIR/scaling.json, DIR/scaling.md (the table and the targets' ratios) and DIR/scaling.png (log-log tokens vs
time and vs memory). The defaults write to docs/ (docs/scaling.md, docs/scaling.png, which the README shows).
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from statistics import median

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
sys.path.insert(0, HERE)

DIM, HEADS, DEPTH, PATCH = 192, 3, 12, 16
DEFAULT_TOKENS = [196, 784, 3136, 12544]


def linformer(dim, heads, tokens):
    from vitrt_reference.attn_linformer import LinformerLucidrains
    return LinformerLucidrains(dim, heads, seq_len=tokens + 1, k=256)  # the paper's k = 256; +1: the class token


def performer(dim, heads, tokens):
    import torch
    from vitrt_reference.attn_performer import PerformerAttention
    return PerformerAttention(dim, heads, generator=torch.Generator().manual_seed(5))  # m = int(d ln d) = 266


def external(dim, heads, tokens):
    from vitrt_reference.attn_external import EAMLPAttention
    return EAMLPAttention(dim, heads)  # EAMLP: C' = 4C, 4h heads, 64 slots


def linear_transformer(dim, heads, tokens):
    from vitrt_reference.attn_linear import linear_attention_factory
    return linear_attention_factory()(dim, heads)  # idiap's AttentionLayer(LinearAttention): elu+1, eps 1e-6


def fastformer(dim, heads, tokens):
    from vitrt_reference.attn_fastformer import fastformer_attention
    return fastformer_attention(dim, heads)  # the official FastAttention (additive pooling, BertSelfOutput)


def nystrom(dim, heads, tokens):
    from vitrt_reference.attn_nystrom import NystromBlockAttention
    return NystromBlockAttention(dim, heads, num_landmarks=64)  # LRA form: 64 landmarks, global init, no V conv


def efficient(dim, heads, tokens):
    from vitrt_reference.attn_efficient import efficient_attention_factory
    g = int(round(math.sqrt(tokens)))
    return efficient_attention_factory((g, g))(dim, heads)  # official EfficientAttention, key/value channels = C


# name -> (vitrt route, --attn row or None, attn_factory(dim, heads, patch_tokens) or None for timm's attention,
#          whether the mechanism is linear in tokens). Route "checkpoint": torch.save + vitrt-convert --attn;
#          route "onnx": torch.onnx.export + vitrt-convert (the planner's pattern fuses it).
MECHANISMS = {
    "softmax": ("checkpoint", "softmax", None, False),
    "linformer": ("checkpoint", "linformer_lucidrains", linformer, True),
    "performer": ("checkpoint", "performer", performer, True),
    "external": ("checkpoint", "external", external, True),
    "linear_transformer": ("checkpoint", "linear_transformer", linear_transformer, True),
    "fastformer": ("checkpoint", "fastformer", fastformer, True),
    "nystrom": ("onnx", None, nystrom, True),
    "efficient": ("checkpoint", "efficient", efficient, True),  # on the patch grid: a ViT without class token
}


def build_model(mech, tokens, seed=7):
    import torch
    import vitrt_reference as R
    _, _, factory, _ = MECHANISMS[mech]
    side = int(round(math.sqrt(tokens))) * PATCH
    attn = None if factory is None else (lambda d, h: factory(d, h, tokens))
    vit = R.VisionTransformer
    if mech == "efficient":  # Efficient Attention is defined on the patch grid (docs/models.md): no class token
        from vitrt_reference.attn_efficient import PatchTokenViT as vit
    m = vit(img_size=side, patch_size=PATCH, num_classes=1000, embed_dim=DIM, depth=DEPTH, num_heads=HEADS,
            attn_factory=attn)
    R.init_for_tests(m, seed)
    return m.eval(), side


# ------------------------------------------------------------------------------------------------ torch worker
def torch_worker(a):
    import torch
    torch.set_num_threads(a.threads)
    model, side = build_model(a.mech, a.tokens)
    x = torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(1))
    ms = []
    before = rss_now()  # KiB: weights and the model's build, before any forward
    with torch.inference_mode():
        for _ in range(a.warmup):
            model(x)
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            model(x)
            ms.append((time.perf_counter() - t0) * 1e3)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"median_ms": median(ms), "min_ms": min(ms), "peak_growth_bytes": (peak - before) * 1024,
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))


def rss_now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


# ------------------------------------------------------------------------------------------------ driver
def run_json(cmd, env=None):
    r = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return json.loads(r.stdout.strip().splitlines()[-1])


def prepare(a, mech, tokens):
    """The vitrt model for (mech, tokens), cached in the work dir."""
    import torch
    route, attn, _, _ = MECHANISMS[mech]
    base = os.path.join(a.work, f"{mech}_{tokens}")
    out = base + ".vitrt"
    if os.path.exists(out):
        return out
    model, side = build_model(mech, tokens)
    cmd = [os.path.join(a.build, "bin", "vitrt-convert")]
    if route == "checkpoint":
        torch.save(model.state_dict(), base + ".pth")
        cmd += [base + ".pth", "-o", out, "--attn", attn, "--heads", str(HEADS)]
    else:
        with torch.no_grad():
            torch.onnx.export(model, torch.randn(1, 3, side, side), base + ".onnx", opset_version=17,
                              input_names=["image"], output_names=["logits"])
        cmd += [base + ".onnx", "-o", out]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    for f in (base + ".pth", base + ".onnx"):
        if os.path.exists(f):
            os.remove(f)
    return out


def time_vitrt(a, path):
    r = run_json([os.path.join(a.build, "bin", "vitrt"), "bench", "-m", path, "--backend", "cpu", "--batch", "1",
                  "--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup", str(a.warmup), "--json"])
    row = r["rows"][0]
    return {"median_ms": row["median_ms"], "activation_bytes": row["activation_bytes"]}


def time_torch(a, mech, tokens):
    import compare
    return run_json(["/usr/bin/python3", os.path.abspath(__file__), "--torch-worker", "--mech", mech, "--tokens",
                     str(tokens), "--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup",
                     str(a.warmup)], env=compare.torch_env("auto"))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def write_table(a, rows):
    mechs = [m for m in a.mechanisms if any(r["mech"] == m for r in rows)]
    toks = sorted({r["tokens"] for r in rows})
    get = {(r["mech"], r["tokens"]): r for r in rows}
    lines = [f"Scaling of the attention mechanisms (bench/scaling.sh): ViT-Tiny shape (dim {DIM}, {HEADS} heads, depth "
             f"{DEPTH}, patch {PATCH}), batch 1, {a.threads} threads, {cpu_model()}, {time.strftime('%Y-%m-%d')}. "
             f"Medians of {a.repeat} runs. vitrt memory: the planned activation arena; PyTorch: peak RSS growth "
             "over the size before the first forward.", "",
             "| mechanism | tokens | vitrt ms | vitrt img/s | PyTorch ms | vitrt / PyTorch | vitrt arena MiB | PyTorch peak MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for m in mechs:
        for t in toks:
            r = get.get((m, t))
            if not r:
                continue
            v, p = r.get("vitrt"), r.get("torch")
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
                m, t, f"{v['median_ms']:.1f}" if v else "–", f"{1e3 / v['median_ms']:.2f}" if v else "–",
                f"{p['median_ms']:.1f}" if p else "–",
                f"{v['median_ms'] / p['median_ms']:.2f}" if v and p else "–",
                f"{v['activation_bytes'] / 2**20:.1f}" if v else "–",
                f"{p['peak_growth_bytes'] / 2**20:.1f}" if p else "–"))
    lines += ["", "Targets (issue 24): time(12544)/time(3136) ≤ 4.6 and memory ratio ≤ 4.2 for every linear mechanism; "
              "vitrt ≤ 0.5× PyTorch at 3136 tokens; at 12544 tokens each linear mechanism ≥ 5× faster than vitrt's "
              "softmax model.", "",
              "| mechanism | vitrt time 12544/3136 | vitrt arena 12544/3136 | vitrt/PyTorch @3136 | softmax/mechanism @12544 |",
              "|---|---:|---:|---:|---:|"]
    sm = get.get(("softmax", 12544), {}).get("vitrt")
    for m in mechs:
        def ratio(f):
            try:
                return f"{f():.2f}"
            except (KeyError, TypeError, ZeroDivisionError):
                return "–"
        v12, v3 = get.get((m, 12544), {}).get("vitrt"), get.get((m, 3136), {}).get("vitrt")
        p3 = get.get((m, 3136), {}).get("torch")
        lines.append(f"| {m} | {ratio(lambda: v12['median_ms'] / v3['median_ms'])} | "
                     f"{ratio(lambda: v12['activation_bytes'] / v3['activation_bytes'])} | "
                     f"{ratio(lambda: v3['median_ms'] / p3['median_ms'])} | "
                     f"{ratio(lambda: sm['median_ms'] / v12['median_ms'])} |")
    with open(os.path.join(a.out, "scaling.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return "\n".join(lines)


def plot(a, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4.8))
    for i, m in enumerate(a.mechanisms):
        pts = sorted((r["tokens"], r) for r in rows if r["mech"] == m)
        if not pts:
            continue
        color = f"C{i}"
        vt = [(t, r["vitrt"]) for t, r in pts if r.get("vitrt")]
        pt = [(t, r["torch"]) for t, r in pts if r.get("torch")]
        ax_t.plot([t for t, _ in vt], [v["median_ms"] for _, v in vt], "-o", color=color, label=f"{m} vitrt")
        ax_t.plot([t for t, _ in pt], [p["median_ms"] for _, p in pt], "--x", color=color, label=f"{m} PyTorch")
        ax_m.plot([t for t, _ in vt], [v["activation_bytes"] / 2**20 for _, v in vt], "-o", color=color,
                  label=f"{m} vitrt arena")
        ax_m.plot([t for t, _ in pt], [max(p["peak_growth_bytes"], 1) / 2**20 for _, p in pt], "--x", color=color,
                  label=f"{m} PyTorch peak")
    for ax, what in ((ax_t, "latency, ms (batch 1)"), (ax_m, "activation memory, MiB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tokens")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.legend(fontsize=7, ncol=2)
    fig.suptitle(f"ViT-Tiny shape, {a.threads} threads, {cpu_model()}")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "scaling.png"), dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mech")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tokens", default=",".join(map(str, DEFAULT_TOKENS)))
    ap.add_argument("--mechanisms", default=",".join(MECHANISMS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--work", default=None, help="cache of converted models (default BUILD/bench-work/scaling)")
    a = ap.parse_args()
    if a.torch_worker:
        a.tokens = int(a.tokens)
        return torch_worker(a)
    a.tokens = [int(t) for t in a.tokens.split(",")]
    a.mechanisms = [m for m in a.mechanisms.split(",") if m]
    for m in a.mechanisms:
        if m not in MECHANISMS:
            ap.error(f"unknown mechanism {m} (known: {', '.join(MECHANISMS)})")
    for t in a.tokens:
        if int(round(math.sqrt(t))) ** 2 != t:
            ap.error(f"--tokens: {t} is not a square grid")
    a.work = a.work or os.path.join(a.build, "bench-work", "scaling")
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for t in a.tokens:
        for m in a.mechanisms:
            row = {"mech": m, "tokens": t}
            try:
                row["vitrt"] = time_vitrt(a, prepare(a, m, t))
            except subprocess.CalledProcessError as e:
                row["vitrt_error"] = (e.stderr or "")[-400:]
            if not a.skip_torch:
                try:
                    row["torch"] = time_torch(a, m, t)
                except subprocess.CalledProcessError as e:
                    row["torch_error"] = (e.stderr or "")[-400:]
            print(json.dumps(row), flush=True)
            rows.append(row)
    with open(os.path.join(a.out, "scaling.json"), "w") as f:
        json.dump({"cpu": cpu_model(), "threads": a.threads, "repeat": a.repeat, "rows": rows}, f, indent=1)
    print(write_table(a, rows))
    plot(a, rows)


if __name__ == "__main__":
    main()
