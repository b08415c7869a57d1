#!/usr/bin/python3
"""vitrt vs PyTorch vs ONNX Runtime, in one run, same weights and same input (bench/compare.sh is the entry point).

For every model (name=factory[:json kwargs], factories from tools/reference/vitrt_reference or --reference-module)
and batch: build the reference module with seeded weights (init_for_tests), save the state dict, convert it with
vitrt-convert, export ONNX (opset 14), then time
  * vitrt:    `vitrt bench --backend cpu --threads T` (warm-up, median of --repeat runs);
  * PyTorch:  Debian torch in its tuned configuration (libopenblas0-openmp, malloc tunables, set_num_threads(T),
              inference_mode), warm-up, median; OpenBLAS's kernel set (OPENBLAS_CORETYPE) is the fastest of its own
              choice and the cores this CPU can run, measured on a 1024^3 sgemm at the start of the run (Debian's
              OpenBLAS 0.3.21 does not know newer Intel Xeons and falls back to its SSE3 'Prescott' kernels there,
              4.6x slower than its AVX-512 'SkylakeX' ones);
  * ORT:      onnxruntime-node, intraOpNumThreads T, interOpNumThreads 1, graphOptimizationLevel 'all';
and the GEMM ceiling (oneDNN sgemm 1024^3, vitrt_gemm_ceiling) in the same run. Prints a table (latency, ratios,
GFLOP/s, % of ceiling) or --json. vitrt_gemm_ceiling is built only where oneDNN is installed (libdnnl-dev:
tools/setup.sh --bench, then reconfigure); without it the run goes on and reports no ceiling. Also checks vitrt's logits (`vitrt run`) against PyTorch's on the same input.

--max-isa avx2: every peer on the AVX2 path of an AVX-512 CPU, the stand-in for an AVX2-only server: vitrt with
VITRT_MAX_ISA=avx2, PyTorch with OpenBLAS's AVX2 kernel sets only (Haswell, Zen) and its oneDNN capped
(DNNL_MAX_CPU_ISA=AVX2, ATEN_CPU_CAPABILITY=avx2), the GEMM ceiling's oneDNN capped the same way. ONNX Runtime has no
such cap (its MLAS picks kernels by CPUID alone), so it is skipped, saying so. The table names the CPU and the ISA
vitrt ran.

--precision bf16: vitrt runs `--precision bf16` (docs/architecture.md §7.1; the table says what ran), vitrt fp32
is timed too for the bf16 speed-up, and PyTorch under `torch.autocast("cpu", dtype=torch.bfloat16)` joins as a
peer (ONNX Runtime's CPU provider has no bf16, so it stays fp32). Logits are then checked against PyTorch fp32.
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import time

from cpu_info import cpu_and_isa, cpu_flags_and_name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TUNED_ENV_SET = {
    "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu/openblas-openmp",
    "MALLOC_MMAP_THRESHOLD_": "4294967296",
    "MALLOC_TRIM_THRESHOLD_": "68719476736",
}
# The default suite is the target table: batch 1 and 8 at 224², SOFT-Tiny also at 448² and 896² (batch 1).
DEFAULT_MODELS = ["deit_tiny", "soft_tiny", "lavit_tiny", 'soft_tiny_448=soft_tiny:{"img_size":448}@1',
                  'soft_tiny_896=soft_tiny:{"img_size":896}@1', "pvt_v2_b0"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def load_factory(module, factory):
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    mod = importlib.import_module(module)
    return getattr(mod, factory), mod


def parse_model(spec, default_batches):
    """name[=factory[:json kwargs]][@batches]: e.g. soft_tiny_448=soft_tiny:{"img_size":448}@1"""
    spec, at, batches = spec.rpartition("@") if "@" in spec else (spec, "", default_batches)
    name, _, rest = spec.partition("=")
    factory, _, kw = (rest or name).partition(":")
    return name, factory, json.loads(kw) if kw else {}, [int(b) for b in batches.split(",")]


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


# ---------------------------------------------------------------------------------------------- torch worker
def blas_probe(a):
    """Prints OpenBLAS's sgemm GFLOP/s through torch (median of 7 runs of 1024^3 on a.threads threads)."""
    import torch
    torch.set_num_threads(a.threads)
    n = 1024
    x, y = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        x @ y
    ms = []
    for _ in range(7):
        t0 = time.perf_counter()
        x @ y
        ms.append(time.perf_counter() - t0)
    print(json.dumps({"gflops": 2 * n**3 / median(ms) / 1e9}))


def torch_worker(a):
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    factory, _ = load_factory(a.reference_module, a.factory)
    model = factory(**json.loads(a.kwargs)).eval()
    model.load_state_dict(torch.load(a.state, map_location="cpu"))
    x = torch.from_numpy(np.load(a.input))
    ms = []
    # bf16: PyTorch's own mixed precision on the CPU (its bf16 GEMMs through oneDNN where the CPU has them).
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16")
    if a.precision == "bf16":
        # PyTorch 2.x's CPU autocast leaves layer_norm off its fp32 list (CUDA's has it), so a LayerNorm fed by a
        # bf16 conv output (SOFT's landmark and patch-embedding paths) fails on its fp32 weight. Run each
        # LayerNorm in fp32, as CUDA autocast and vitrt's bf16 mode both do.
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.register_forward_pre_hook(lambda _m, args: tuple(t.float() for t in args))
    with torch.inference_mode(), autocast:
        for _ in range(a.warmup):
            y = model(x)
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            y = model(x)
            ms.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"median_ms": median(ms), "min_ms": min(ms), "torch": torch.__version__,
                      "threads": torch.get_num_threads(), "output": y.float().flatten().tolist()}))


# ---------------------------------------------------------------------------------------------- preparation
def count_gflop(model, x):
    """GFLOP of one forward (2·M·N·K of every mm/bmm/addmm/conv, counted at the aten level)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    aten = torch.ops.aten
    total = [0]

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            p = func.overloadpacket
            if p in (aten.mm, aten.bmm):
                a_, b_ = args[0], args[1]
                total[0] += 2 * a_.numel() * b_.shape[-1]
            elif p == aten.addmm:
                a_, b_ = args[1], args[2]
                total[0] += 2 * a_.numel() * b_.shape[-1]
            elif p == aten.convolution:
                w = args[1]
                total[0] += 2 * out.numel() * w[0].numel()
            return out

    with torch.no_grad(), Counter():
        model(x)
    return total[0] / 1e9


def prepare(a, name, factory_name, kwargs, batch, work):
    import numpy as np
    import torch
    factory, ref = load_factory(a.reference_module, factory_name)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    state = os.path.join(d, "model.pth")
    vmodel = os.path.join(d, "model.vitrt")
    onnx_path = os.path.join(d, f"model_b{batch}.onnx")
    model = factory(**kwargs).eval()
    if hasattr(ref, "init_for_tests"):
        ref.init_for_tests(model, 1)
    if hasattr(ref, "LaViT") and isinstance(model, ref.LaViT):
        ref.init_lavit_extras(model, 1)
    img = getattr(model, "img_size", 224)
    img = img[0] if isinstance(img, (tuple, list)) else img
    # Derived files (vitrt model, ONNX) are cached per folder; a changed state dict (other init, other kwargs)
    # invalidates them.
    fresh = state + ".new"
    torch.save(model.state_dict(), fresh)
    if not os.path.exists(state) or open(state, "rb").read() != open(fresh, "rb").read():
        for f in os.listdir(d):
            if f.endswith((".vitrt", ".onnx")):
                os.remove(os.path.join(d, f))
        os.replace(fresh, state)
    else:
        os.remove(fresh)
    if not os.path.exists(vmodel):
        size = [] if img == 224 else ["--image-size", str(img)]
        subprocess.run([a.convert, state, "-o", vmodel] + size, check=True, stdout=subprocess.DEVNULL)
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(batch, 3, img, img, generator=g)
    xin = os.path.join(d, f"input_b{batch}.npy")
    np.save(xin, x.numpy())
    x.numpy().astype("<f4").tofile(os.path.join(d, f"input_b{batch}.bin"))
    if not os.path.exists(onnx_path):
        with torch.no_grad():
            torch.onnx.export(model, x, onnx_path, opset_version=14, input_names=["input"], output_names=["logits"])
    gflop = count_gflop(model, x)
    return dict(dir=d, state=state, vmodel=vmodel, onnx=onnx_path, input=xin,
                input_bin=os.path.join(d, f"input_b{batch}.bin"), shape=list(x.shape), gflop=gflop)


# ---------------------------------------------------------------------------------------------- runners
def run_json(cmd, env=None):
    r = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return json.loads(r.stdout.strip().splitlines()[-1])


def time_vitrt(a, p, batch, precision):
    out = run_json([a.vitrt, "bench", "-m", p["vmodel"], "--batch", str(batch), "--threads", str(a.threads),
                    "--backend", a.backend, "--repeat", str(a.repeat), "--warmup", str(a.warmup), "--json",
                    "--precision", precision])
    row = out["rows"][0]
    return {"median_ms": row["median_ms"], "min_ms": row["min_ms"], "backend": row["backend"],
            "precision": row.get("precision", "fp32")}


def vitrt_logits(a, p):
    import numpy as np
    o = os.path.join(p["dir"], "vitrt_out.npy")
    subprocess.run([a.vitrt, "run", "-m", p["vmodel"], "-i", p["input"], "-o", o, "--backend", a.backend,
                    "--threads", str(a.threads), "--batch", str(p["shape"][0]), "--precision", a.precision],
                   check=True, stdout=subprocess.DEVNULL)
    return np.load(o).flatten()


def torch_env(core):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.update(TUNED_ENV_SET)
    if core != "auto":
        env["OPENBLAS_CORETYPE"] = core
    return env


def pick_openblas_core(a):
    """PyTorch at its best: OpenBLAS's own core choice, or a core this CPU supports that it measures faster (with
    --max-isa avx2: the fastest of its AVX2 cores)."""
    _, flags = cpu_flags_and_name()
    cores = ["auto"] if a.max_isa is None else []
    if "avx2" in flags:
        cores += ["Haswell", "Zen"]
    if not cores:
        sys.exit("compare: --max-isa avx2 needs a CPU with AVX2 (none found in /proc/cpuinfo)")
    if a.max_isa is None and {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        cores += ["SkylakeX"] + (["Cooperlake"] if "avx512_bf16" in flags else [])
    speeds = {}
    for c in cores:
        speeds[c] = run_json(["/usr/bin/python3", os.path.abspath(__file__), "--blas-probe",
                              "--threads", str(a.threads)], env=torch_env(c))["gflops"]
        log(f"PyTorch OpenBLAS core {c}: {speeds[c]:.0f} GFLOP/s (sgemm 1024^3)")
    best = max(speeds, key=speeds.get)
    return best, speeds


def time_torch(a, name, factory, kwargs, p, precision="fp32"):
    env = torch_env(a.openblas_core)
    return run_json(["/usr/bin/python3", os.path.abspath(__file__), "--torch-worker", "--factory", factory,
                     "--kwargs", json.dumps(kwargs), "--state", p["state"], "--input", p["input"],
                     "--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup", str(a.warmup),
                     "--reference-module", a.reference_module, "--precision", precision], env=env)


def time_ort(a, p):
    env = dict(os.environ)
    env["NODE_PATH"] = os.path.join(a.node_dir, "node_modules")
    return run_json(["node", os.path.join(HERE, "ort_bench.js"), p["onnx"], p["input_bin"],
                     ",".join(map(str, p["shape"])), str(a.warmup), str(a.repeat), str(a.threads)], env=env)


def gemm_ceiling(a):
    """{threads: row} from vitrt_gemm_ceiling, or None when the build has none (no oneDNN)."""
    if not os.access(a.gemm, os.X_OK):
        return None
    rows = [json.loads(l) for l in subprocess.run([a.gemm, "--threads", f"1,{a.threads}"], check=True,
                                                  capture_output=True, text=True).stdout.splitlines() if l.strip()]
    return {r["threads"]: r for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build dir with bin/vitrt, vitrt-convert")
    ap.add_argument("--model", action="append", help="name[=factory[:json kwargs]][@batches] (repeatable); default: "
                    "DeiT-Tiny, SOFT-Tiny, lavit_tiny, PVT v2-b0 at --batch, SOFT-Tiny at 448² and 896² batch 1")
    ap.add_argument("--reference-module", default="vitrt_reference", help="module with the factories")
    ap.add_argument("--batch", default="1,8", help="batches of models whose spec has no @batches")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                    help="bf16: vitrt --precision bf16 (and fp32, for the speed-up), PyTorch bf16 autocast as a peer")
    ap.add_argument("--node-dir", default=None, help="folder holding node_modules/onnxruntime-node")
    ap.add_argument("--work", default=None, help="scratch folder for checkpoints/models (default BUILD/bench-work)")
    ap.add_argument("--skip", default="", help="comma list of peers to skip: torch,ort")
    ap.add_argument("--max-isa", default=None, choices=["avx2"],
                    help="cap vitrt, PyTorch and the GEMM ceiling to this ISA (ONNX Runtime cannot be capped: skipped)")
    ap.add_argument("--json", action="store_true")
    # worker mode
    ap.add_argument("--openblas-core", default=None,
                    help="OPENBLAS_CORETYPE for PyTorch ('auto': OpenBLAS's own choice); default: the fastest measured")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--blas-probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--factory", help=argparse.SUPPRESS)
    ap.add_argument("--kwargs", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--state", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)
    if a.blas_probe:
        return blas_probe(a)
    a.vitrt = os.path.join(a.build, "bin", "vitrt")
    a.convert = os.path.join(a.build, "bin", "vitrt-convert")
    a.gemm = os.path.join(a.build, "bin", "vitrt_gemm_ceiling")
    a.node_dir = a.node_dir or os.path.join(a.build, "bench-node")
    work = a.work or os.path.join(a.build, "bench-work")
    skip = set(filter(None, a.skip.split(",")))
    if a.max_isa == "avx2":  # inherited by vitrt, the PyTorch workers and vitrt_gemm_ceiling
        os.environ.update({"VITRT_MAX_ISA": "avx2", "DNNL_MAX_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                           "ATEN_CPU_CAPABILITY": "avx2"})
        if "ort" not in skip:
            log("compare: --max-isa avx2 skips ONNX Runtime: its CPU provider cannot be capped to AVX2")
            skip.add("ort")
        if a.openblas_core is not None and a.openblas_core.lower() not in ("haswell", "zen"):
            sys.exit(f"compare: --max-isa avx2 needs --openblas-core Haswell or Zen (OpenBLAS's AVX2 kernel sets), "
                     f"not {a.openblas_core}")
    cpu, isa, _ = cpu_and_isa()
    if "torch" not in skip and not os.path.isdir(TUNED_ENV_SET["LD_LIBRARY_PATH"]):
        sys.exit("compare: %s is missing, so PyTorch would run on the reference BLAS, far from its best; "
                 "install libopenblas0-openmp (tools/setup.sh --bench) or pass --skip torch"
                 % TUNED_ENV_SET["LD_LIBRARY_PATH"])
    import numpy as np

    ceiling = gemm_ceiling(a)
    if ceiling is None:
        log(f"compare: {a.gemm} is missing: it is built only when oneDNN is installed (libdnnl-dev, "
            "tools/setup.sh --bench; then reconfigure the build), so this run reports no GEMM ceiling")
    blas_speeds = {}
    if "torch" not in skip and a.openblas_core is None:
        a.openblas_core, blas_speeds = pick_openblas_core(a)
    rows = []
    for spec in a.model or DEFAULT_MODELS:
        name, factory, kwargs, batches = parse_model(spec, a.batch)
        for batch in batches:
            log(f"[{name} batch {batch}] preparing")
            p = prepare(a, name, factory, kwargs, batch, work)
            row = {"model": name, "batch": batch, "threads": a.threads, "gflop": p["gflop"]}
            log(f"[{name} batch {batch}] vitrt ({a.precision})")
            row["vitrt"] = time_vitrt(a, p, batch, a.precision)
            if a.precision == "bf16":
                log(f"[{name} batch {batch}] vitrt (fp32)")
                row["vitrt_fp32"] = time_vitrt(a, p, batch, "fp32")
            if "torch" not in skip:
                log(f"[{name} batch {batch}] pytorch")
                t = time_torch(a, name, factory, kwargs, p)
                row["torch"] = {k: t[k] for k in ("median_ms", "min_ms", "torch", "threads")}
                if a.precision == "bf16":
                    log(f"[{name} batch {batch}] pytorch bf16 autocast")
                    tb = time_torch(a, name, factory, kwargs, p, "bf16")
                    row["torch_bf16"] = {k: tb[k] for k in ("median_ms", "min_ms")}
                try:
                    v = vitrt_logits(a, p)
                    ref = np.array(t["output"], dtype=np.float64)
                    row["max_abs_logit_diff_vs_torch"] = float(np.abs(v - ref).max())
                    row["max_abs_logit"] = float(np.abs(ref).max())
                except Exception as e:  # noqa: BLE001
                    row["logit_check_error"] = str(e)
            if "ort" not in skip:
                log(f"[{name} batch {batch}] onnxruntime")
                o = time_ort(a, p)
                row["ort"] = {k: o[k] for k in ("median_ms", "min_ms")}
            rows.append(row)
    # Ceiling and re-measure it at the end too (the machine is shared): report the max of both.
    ceiling2 = gemm_ceiling(a) if ceiling is not None else None
    ceil = {t: max(ceiling[t]["gflops"], ceiling2[t]["gflops"]) for t in ceiling} if ceiling is not None else {}
    for r in rows:
        v = r["vitrt"]["median_ms"]
        r["vitrt_gflops"] = r["gflop"] / (v / 1e3)
        if a.threads in ceil:
            r["pct_of_ceiling"] = 100.0 * r["vitrt_gflops"] / ceil[a.threads]
        if "torch" in r:
            r["ratio_vs_torch"] = v / r["torch"]["median_ms"]
        if "ort" in r:
            r["ratio_vs_ort"] = v / r["ort"]["median_ms"]
        if "torch_bf16" in r:
            r["ratio_vs_torch_bf16"] = v / r["torch_bf16"]["median_ms"]
        if "vitrt_fp32" in r:
            r["bf16_speedup"] = r["vitrt_fp32"]["median_ms"] / v
    result = {"cpu": cpu, "vitrt_isa": isa, "max_isa": a.max_isa, "skipped": sorted(skip),
              "threads": a.threads, "precision": a.precision, "repeat": a.repeat, "warmup": a.warmup,
              "gemm_ceiling_gflops": {str(k): v for k, v in ceil.items()},
              "gemm_ceiling_runs": [ceiling, ceiling2] if ceiling is not None else [], "torch_openblas_core": a.openblas_core,
              "torch_openblas_core_gflops": blas_speeds, "rows": rows}
    if a.json:
        print(json.dumps(result, indent=1, default=str))
        return
    print(f"CPU: {cpu}; vitrt x86 ISA: {isa}" + (f" (--max-isa {a.max_isa}: PyTorch and the ceiling capped too)"
                                                   if a.max_isa else "")
          + (f"; skipped: {', '.join(sorted(skip))}" if skip else ""))
    if ceil:
        print(f"GEMM ceiling (oneDNN sgemm 1024^3, median of runs, best of start/end): "
              + ", ".join(f"{k} thread(s) {v:.1f} GFLOP/s" for k, v in ceil.items()))
    else:
        print("GEMM ceiling: not measured (vitrt_gemm_ceiling needs oneDNN: tools/setup.sh --bench, reconfigure)")
    if a.openblas_core:
        print(f"PyTorch's OpenBLAS core: {a.openblas_core}"
              + (" (sgemm 1024^3: " + ", ".join(f"{c} {g:.0f}" for c, g in blas_speeds.items()) + " GFLOP/s)"
                 if blas_speeds else ""))
    print(f"threads {a.threads}, median of {a.repeat} runs after {a.warmup} warm-up; ratio = vitrt / peer (< 1: vitrt faster)")
    if a.precision == "bf16":
        for prec in sorted({r["vitrt"]["precision"] for r in rows}):
            print(f"vitrt precision: {prec}")
        print("| model | batch | GFLOP | vitrt bf16 ms | vitrt fp32 ms | bf16 speed-up | PyTorch bf16 ms | PyTorch fp32 ms "
              "| ORT fp32 ms | vs PyTorch bf16 | vs PyTorch fp32 | vs ORT | max |Δlogit| vs fp32 |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            f = lambda k: f"{r[k]['median_ms']:.2f}" if k in r else "-"  # noqa: E731
            g = lambda k: f"{r[k]:.2f}" if k in r else "-"  # noqa: E731
            dl = f"{r['max_abs_logit_diff_vs_torch']:.1e}" if "max_abs_logit_diff_vs_torch" in r else "-"
            print(f"| {r['model']} | {r['batch']} | {r['gflop']:.2f} | {f('vitrt')} | {f('vitrt_fp32')} | "
                  f"{g('bf16_speedup')} | {f('torch_bf16')} | {f('torch')} | {f('ort')} | {g('ratio_vs_torch_bf16')} | "
                  f"{g('ratio_vs_torch')} | {g('ratio_vs_ort')} | {dl} |")
        return
    print("| model | batch | GFLOP | vitrt ms | PyTorch ms | ORT ms | vs PyTorch | vs ORT | vitrt GFLOP/s | % ceiling | max |Δlogit| |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = lambda k: f"{r[k]['median_ms']:.2f}" if k in r else "-"  # noqa: E731
        g = lambda k: f"{r[k]:.2f}" if k in r else "-"  # noqa: E731
        dl = f"{r['max_abs_logit_diff_vs_torch']:.1e}" if "max_abs_logit_diff_vs_torch" in r else "-"
        pct = f"{r['pct_of_ceiling']:.0f}%" if "pct_of_ceiling" in r else "-"
        print(f"| {r['model']} | {r['batch']} | {r['gflop']:.2f} | {f('vitrt')} | {f('torch')} | {f('ort')} | "
              f"{g('ratio_vs_torch')} | {g('ratio_vs_ort')} | {r['vitrt_gflops']:.0f} | {pct} | {dl} |")


if __name__ == "__main__":
    main()
