#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Python overhead (issue 29): vitrt.Session.run against `vitrt bench` on DeiT-Tiny, at batch 1 and 8.

Both time the same model, input size, backend and thread count: `vitrt bench` in its own process (the C++ loop
around Session::run), vitrt.Session.run in this one (a numpy input, a new numpy output per call, the GIL
released around the run). The two alternate within every round so that load from other processes hits both
alike; the table gives the median over rounds of each side's median, and the ratio Python / CLI (targets:
<= 1.03 at batch 1, <= 1.01 at batch 8). DeiT-Tiny is made as bench/compare.py makes it (the reference module,
seeded weights by init_for_tests, converted with vitrt.convert) and cached in --work.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py --build build [--rounds 5] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def make_deit_tiny(work: str, vitrt) -> str:
    """DeiT-Tiny with seeded weights, as bench/compare.py makes it: the .vitrt path (cached)."""
    path = os.path.join(work, "deit_tiny.vitrt")
    if os.path.exists(path):
        return path
    import torch

    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    from vitrt_reference import common, deit

    model = deit.deit_tiny().eval()
    common.init_for_tests(model, 1)
    state = os.path.join(work, "deit_tiny.pth")
    torch.save(model.state_dict(), state)
    vitrt.convert(state, path)
    return path


def cli_median_ms(vitrt_bin: str, model: str, batch: int, a) -> float:
    out = subprocess.run([vitrt_bin, "bench", "-m", model, "--batch", str(batch), "--threads", str(a.threads),
                          "--backend", a.backend, "--repeat", str(a.repeat), "--warmup", str(a.warmup), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["rows"][0]["median_ms"]


def python_median_ms(vitrt, model, batch: int, a) -> float:
    import numpy as np

    session = vitrt.Session(model, backend=a.backend, threads=a.threads)
    x = np.random.default_rng(1234).standard_normal((batch, *model.input_shape), dtype=np.float32)
    for _ in range(a.warmup):
        session.run(x)
    ms = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        session.run(x)
        ms.append(1000 * (time.perf_counter() - t0))
    session.close()
    return statistics.median(ms)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build dir (bin/vitrt, python/vitrt)")
    ap.add_argument("--work", default=None, help="where DeiT-Tiny is cached (default: BUILD/bench_python)")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (CLI, Python alternate)")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per measurement")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(a.build), "python"))
    import vitrt

    work = a.work or os.path.join(a.build, "bench_python")
    os.makedirs(work, exist_ok=True)
    path = make_deit_tiny(work, vitrt)
    model = vitrt.Model(path)
    vitrt_bin = os.path.join(a.build, "bin", "vitrt")
    rows = []
    for batch in [int(b) for b in a.batches.split(",")]:
        cli, py = [], []
        for r in range(a.rounds):
            # Alternate which side goes first, so neither always follows the other's cache state.
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for side in order:
                if side == 0:
                    cli.append(cli_median_ms(vitrt_bin, path, batch, a))
                else:
                    py.append(python_median_ms(vitrt, model, batch, a))
        c, p = statistics.median(cli), statistics.median(py)
        # Each round's two measurements are adjacent in time: their ratio cancels slow drifts in the load.
        paired = statistics.median(b / a for a, b in zip(cli, py))
        # Load from other processes only adds time: the fastest round of each side is its least disturbed.
        fastest = min(py) / min(cli)
        rows.append({"batch": batch, "cli_ms": c, "python_ms": p, "ratio": p / c, "paired_ratio": paired,
                     "fastest_ratio": fastest,
                     "cli_rounds": cli, "python_rounds": py, "target": 1.03 if batch == 1 else 1.01})
    if a.json:
        print(json.dumps({"model": "deit_tiny", "threads": a.threads, "rounds": a.rounds, "repeat": a.repeat,
                          "rows": rows}, indent=1))
        return 0
    print(f"DeiT-Tiny, {a.threads} thread(s), backend {a.backend}: median of {a.rounds} interleaved rounds, each "
          f"the median of {a.repeat} runs after {a.warmup} warm-up")
    print("| batch | vitrt bench ms | Session.run ms | Python / CLI | median of per-round ratios | fastest / fastest "
          "| target |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        verdict = "met" if r["ratio"] <= r["target"] else "missed"
        print(f"| {r['batch']} | {r['cli_ms']:.3f} | {r['python_ms']:.3f} | {r['ratio']:.3f} | "
              f"{r['paired_ratio']:.3f} | {r['fastest_ratio']:.3f} | <= {r['target']:.2f} ({verdict}) |")
    for r in rows:
        print(f"batch {r['batch']} rounds (ms): CLI {[round(v, 2) for v in r['cli_rounds']]}, "
              f"Python {[round(v, 2) for v in r['python_rounds']]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
