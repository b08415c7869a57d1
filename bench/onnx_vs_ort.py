#!/usr/bin/python3
"""vitrt vs ONNX Runtime on the same .onnx files, in one run (bench/onnx_vs_ort.sh is the entry point).

For every model: export it (bench/export_onnx_zoo.py, cached in --cache; or take --onnx-dir/NAME.onnx), convert it
with vitrt-convert (a model vitrt cannot import is skipped with the converter's reason), then
  * check that both engines ran the same model: logits of the same images (batch 1 and 8) from `vitrt run` and
    from ORT, max abs difference next to the largest logit;
  * time batch 1 latency and batch 8 throughput in alternating rounds (vitrt first in even rounds, ORT first in
    odd ones), so that noise from other processes hits both peers: each round is one `vitrt bench --json`
    (--threads T, warm-up, R timed runs, its median) and R timed runs of a persistent onnxruntime-node session
    (bench/ort_bench.js --serve: graphOptimizationLevel 'all', intraOpNumThreads T, interOpNumThreads 1,
    sequential; one warm-up run per round). Reported: the median of the round medians, and their spread.
Prints the table with the ratios and the targets of issue 28, the CPU model and the ISA vitrt's x86 backend runs
(or --json). --profile-misses adds `vitrt bench --profile`'s time per op type for every row that misses its target.
"""
import argparse
import json
import math
import os
import subprocess
import sys

from cpu_info import cpu_and_isa

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MODELS = ["deit_tiny", "vit_b_16", "swin_t", "convnext_tiny", "resnet50", "mobilenet_v3_large",
                  "efficientnet_b0"]
QUICK_MODELS = ["deit_tiny", "resnet50", "mobilenet_v3_large"]
# Issue 28's targets, as vitrt time / ORT time: (batch 1 latency ratio at most, batch 8 throughput ratio at least).
TARGETS = {"transformer": (0.8, 1.1), "convnext": (1.0, 1.0), "cnn": (1.3, 0.8)}
FAMILY = {"deit_tiny": "transformer", "vit_b_16": "transformer", "swin_t": "transformer", "hf_vit_d32": "transformer",
          "convnext_tiny": "convnext"}  # everything else: cnn


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


# ---------------------------------------------------------------------------------------------- preparation
def onnx_for(a, name):
    if a.onnx_dir and os.path.exists(os.path.join(a.onnx_dir, f"{name}.onnx")):
        return os.path.join(a.onnx_dir, f"{name}.onnx")
    out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export_onnx_zoo.py"), "--out", a.cache, name],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return out.strip().splitlines()[-1]


def convert(a, name, onnx):
    """(model.vitrt, None) or (None, why vitrt-convert refused). Re-converted when the .onnx or the converter is
    newer than the cached model."""
    vmodel = os.path.join(a.cache, f"{name}.vitrt")
    if os.path.exists(vmodel) and os.path.getmtime(vmodel) > max(os.path.getmtime(onnx),
                                                                   os.path.getmtime(a.convert)):
        return vmodel, None
    r = subprocess.run([a.convert, onnx, "-o", vmodel + ".part"], capture_output=True, text=True)
    if r.returncode:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return None, lines[-1] if lines else f"vitrt-convert exit {r.returncode}"
    os.replace(vmodel + ".part", vmodel)
    return vmodel, None


def make_inputs(a, batches):
    """Natural-looking normalised images (tools/reference's make_images), as .npy for vitrt and raw for ORT."""
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    from vitrt_reference import make_images
    x = make_images(max(batches), 224, 1234)
    files = {}
    for b in batches:
        npy, raw = os.path.join(a.cache, f"input_b{b}.npy"), os.path.join(a.cache, f"input_b{b}.bin")
        np.save(npy, x[:b])
        x[:b].astype("<f4").tofile(raw)
        files[b] = (npy, raw, [b, 3, 224, 224])
    return files


# ---------------------------------------------------------------------------------------------- the peers
class OrtServer:
    """A persistent onnxruntime-node session (bench/ort_bench.js --serve)."""

    def __init__(self, a, onnx):
        env = dict(os.environ, NODE_PATH=os.path.join(a.node_dir, "node_modules"))
        self.p = subprocess.Popen(["node", os.path.join(HERE, "ort_bench.js"), "--serve", onnx, str(a.threads),
                                   "0" if a.no_spin else "1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.hello = self._read()

    def _read(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"onnxruntime-node exited (code {self.p.wait()})")
        r = json.loads(line)
        if "error" in r:
            raise RuntimeError("onnxruntime-node: " + r["error"])
        return r

    def ask(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        return self._read()

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def vitrt_round(a, vmodel, batch, warmup, repeat):
    r = subprocess.run([a.vitrt, "bench", "-m", vmodel, "--batch", str(batch), "--threads", str(a.threads),
                        "--backend", "cpu", "--repeat", str(repeat), "--warmup", str(warmup), "--json"],
                       check=True, capture_output=True, text=True, env=a.vitrt_env)
    return json.loads(r.stdout)["rows"][0]["median_ms"]


def ort_round(ort, inp, warmup, repeat):
    return median(ort.ask(cmd="time", input=inp[1], shape=inp[2], warmup=warmup, repeat=repeat)["ms"])


def logit_check(a, vmodel, ort, inp):
    import numpy as np
    npy, raw, shape = inp
    vout, oout = os.path.join(a.cache, "vitrt_out.npy"), os.path.join(a.cache, "ort_out.bin")
    subprocess.run([a.vitrt, "run", "-m", vmodel, "-i", npy, "-o", vout, "--backend", "cpu", "--threads",
                    str(a.threads), "--batch", str(shape[0])], check=True, stdout=subprocess.DEVNULL,
                   env=a.vitrt_env)
    oshape = ort.ask(cmd="logits", input=raw, shape=shape, output=oout)["shape"]
    v = np.load(vout).astype(np.float64).reshape(-1)
    o = np.fromfile(oout, dtype="<f4").astype(np.float64)
    if v.size != o.size:
        raise RuntimeError(f"vitrt wrote {v.size} logits, ORT {o.size} (shape {oshape})")
    return float(np.abs(v - o).max()), float(np.abs(o).max())


def time_batch(a, vmodel, ort, inp, batch):
    """Alternating rounds; repeat per round so that the slower peer spends about --round-seconds."""
    v0 = vitrt_round(a, vmodel, batch, 1, 1)
    o0 = ort_round(ort, inp, 1, 1)
    repeat = max(a.min_repeat, min(100, math.ceil(a.round_seconds * 1e3 / max(v0, o0))))
    vs, os_ = [], []
    for r in range(a.rounds):
        if r % 2 == 0:
            vs.append(vitrt_round(a, vmodel, batch, a.warmup, repeat))
            os_.append(ort_round(ort, inp, 1, repeat))
        else:
            os_.append(ort_round(ort, inp, 1, repeat))
            vs.append(vitrt_round(a, vmodel, batch, a.warmup, repeat))
    return {"repeat": repeat, "rounds": a.rounds, "vitrt_ms": median(vs), "ort_ms": median(os_),
            "vitrt_round_ms": vs, "ort_round_ms": os_}


def profile_top(a, vmodel, batch, n=6):
    """`vitrt bench --profile`'s op-type table: the n most expensive op types of one run."""
    out = subprocess.run([a.vitrt, "bench", "-m", vmodel, "--batch", str(batch), "--threads", str(a.threads),
                          "--backend", "cpu", "--repeat", "5", "--warmup", "2", "--profile", "--top", "0"],
                         check=True, capture_output=True, text=True, env=a.vitrt_env).stdout.splitlines()
    head = next((l for l in out if l.startswith("profile (")), "")
    rows = [l for l in out if l.startswith("| ") and not l.startswith("| op ") and not l.startswith("| backend")
            and "---" not in l and l.count("|") == 5]
    return head, rows[:n]


# ---------------------------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build dir with bin/vitrt, vitrt-convert")
    ap.add_argument("--models", default=None, help="comma list (default: %s; --quick: %s)"
                    % (",".join(DEFAULT_MODELS), ",".join(QUICK_MODELS)))
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 cheap models, 2 short rounds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=None, help="alternating rounds per batch (default 5; quick 2)")
    ap.add_argument("--round-seconds", type=float, default=None,
                    help="timed seconds per peer per round, sets the runs per round (default 1.5; quick 0.3)")
    ap.add_argument("--min-repeat", type=int, default=3, help="timed runs per round at least")
    ap.add_argument("--warmup", type=int, default=2, help="vitrt warm-up runs per round (a new process)")
    ap.add_argument("--cache", default=None, help="exports and converted models (default BUILD/bench-work/onnx_zoo)")
    ap.add_argument("--onnx-dir", default=None, help="take DIR/NAME.onnx instead of exporting when present")
    ap.add_argument("--node-dir", default=None, help="folder holding node_modules/onnxruntime-node")
    ap.add_argument("--profile-misses", action="store_true", help="vitrt's op-type profile for every miss")
    ap.add_argument("--no-spin", action="store_true",
                    help="both engines' idle threads sleep instead of spinning (vitrt: libgomp's "
                    "OMP_WAIT_POLICY=passive; ORT: session.intra_op.allow_spinning 0): for a machine busy with other "
                    "work, where a spinning thread burns the time slice its descheduled partner needs")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--save", default=None, help="also write the JSON to this file")
    a = ap.parse_args()
    a.rounds = a.rounds or (2 if a.quick else 5)
    a.round_seconds = a.round_seconds or (0.3 if a.quick else 1.5)
    a.vitrt = os.path.join(a.build, "bin", "vitrt")
    a.convert = os.path.join(a.build, "bin", "vitrt-convert")
    a.node_dir = a.node_dir or os.path.join(a.build, "bench-node")
    a.cache = a.cache or os.path.join(a.build, "bench-work", "onnx_zoo")
    os.makedirs(a.cache, exist_ok=True)
    a.vitrt_env = dict(os.environ, **({"OMP_WAIT_POLICY": "passive"} if a.no_spin else {}))
    models = a.models.split(",") if a.models else (QUICK_MODELS if a.quick else DEFAULT_MODELS)
    batches = (1, 8)
    inputs = make_inputs(a, batches)
    cpu, isa, ncpu = cpu_and_isa()
    rows, skipped, ort_version = [], [], None
    for name in models:
        log(f"[{name}] export")
        onnx = onnx_for(a, name)
        log(f"[{name}] vitrt-convert")
        vmodel, why = convert(a, name, onnx)
        if vmodel is None:
            log(f"[{name}] skipped: vitrt cannot import it: {why}")
            skipped.append({"model": name, "reason": why})
            continue
        ort = OrtServer(a, onnx)
        ort_version = ort.hello["version"]
        row = {"model": name, "family": FAMILY.get(name, "cnn"), "onnx": onnx,
               "onnx_mb": os.path.getsize(onnx) / 1e6, "ort_create_ms": ort.hello["create_ms"]}
        try:
            for b in batches:
                log(f"[{name}] logits, batch {b}")
                row[f"max_abs_diff_b{b}"], row[f"max_abs_logit_b{b}"] = logit_check(a, vmodel, ort, inputs[b])
            for b in batches:
                log(f"[{name}] timing batch {b}")
                row[f"b{b}"] = time_batch(a, vmodel, ort, inputs[b], b)
        finally:
            ort.close()
        lat, thr = TARGETS[row["family"]]
        row["b1_ratio"] = row["b1"]["vitrt_ms"] / row["b1"]["ort_ms"]  # latency: vitrt / ORT
        row["b8_ratio"] = row["b8"]["ort_ms"] / row["b8"]["vitrt_ms"]  # throughput: vitrt / ORT
        row["b1_met"], row["b8_met"] = row["b1_ratio"] <= lat, row["b8_ratio"] >= thr
        # The same ratios from each peer's fastest round: on a busy machine, closer to what each does undisturbed.
        row["b1_ratio_best"] = min(row["b1"]["vitrt_round_ms"]) / min(row["b1"]["ort_round_ms"])
        row["b8_ratio_best"] = min(row["b8"]["ort_round_ms"]) / min(row["b8"]["vitrt_round_ms"])
        if a.profile_misses:
            for b in batches:
                if not row[f"b{b}_met"]:
                    log(f"[{name}] profile, batch {b}")
                    row[f"b{b}_profile"] = profile_top(a, vmodel, b)
        rows.append(row)
    result = {"cpu": cpu, "vitrt_isa": isa, "cpus": ncpu, "threads": a.threads, "ort_version": ort_version,
              "no_spin": a.no_spin, "load_average": os.getloadavg(),
              "rounds": a.rounds, "round_seconds": a.round_seconds, "rows": rows, "skipped": skipped}
    if a.save:
        with open(a.save, "w") as f:
            json.dump(result, f, indent=1)
    if a.json:
        print(json.dumps(result, indent=1))
        return
    print(f"CPU: {cpu} ({ncpu} logical CPUs), vitrt x86 ISA: {isa}; onnxruntime-node {ort_version}; "
          f"load average at the end {os.getloadavg()[0]:.1f}"
          + ("; --no-spin (OMP_WAIT_POLICY=passive, ORT allow_spinning 0)" if a.no_spin else ""))
    print(f"threads {a.threads}; {a.rounds} alternating rounds per batch, medians of the round medians "
          f"(round spread in brackets); latency ratio = vitrt ms / ORT ms, throughput ratio = vitrt img/s / ORT img/s; "
          f"'best': the ratio of each peer's fastest round")
    print("| model | b1 vitrt ms | b1 ORT ms | b1 ratio (target) | b1 best | b8 vitrt img/s | b8 ORT img/s "
          "| b8 ratio (target) | b8 best | max abs Δlogit b1 / b8 (max abs logit) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lat, thr = TARGETS[r["family"]]
        b1, b8 = r["b1"], r["b8"]
        spread = lambda v: f"[{min(v):.1f}–{max(v):.1f}]"  # noqa: E731
        print(f"| {r['model']} | {b1['vitrt_ms']:.2f} {spread(b1['vitrt_round_ms'])} | {b1['ort_ms']:.2f} "
              f"{spread(b1['ort_round_ms'])} | {r['b1_ratio']:.2f} (≤ {lat}) {'met' if r['b1_met'] else 'MISS'} | "
              f"{r['b1_ratio_best']:.2f} | {8e3 / b8['vitrt_ms']:.1f} | {8e3 / b8['ort_ms']:.1f} | "
              f"{r['b8_ratio']:.2f} (≥ {thr}) {'met' if r['b8_met'] else 'MISS'} | {r['b8_ratio_best']:.2f} | "
              f"{r['max_abs_diff_b1']:.1e} / {r['max_abs_diff_b8']:.1e} ({r['max_abs_logit_b8']:.2g}) |")
    for s in skipped:
        print(f"| {s['model']} | skipped: vitrt cannot import it: {s['reason']} |")
    for r in rows:
        for b in batches:
            if f"b{b}_profile" in r:
                head, types = r[f"b{b}_profile"]
                print(f"\n{r['model']} batch {b} (missed): vitrt {head}")
                print("\n".join(types))


if __name__ == "__main__":
    main()
