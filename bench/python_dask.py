#!/usr/bin/python3
"""Images/s of vitrt.dask.classify on a LocalCluster against the CLI, same images, same model (issue 29).

Data: the Fashion-MNIST test split (Debian's dataset-fashion-mnist), exported as an ImageFolder of 28x28 PNGs by
tools/train/fashion_mnist.py, and the same images as 64x64 RGB JPEGs (quality 90) in a second folder, so JPEG
decoding and a real resize are part of the work. Model: models/fashion_deit (converted here).

Configurations, each timed end to end (wall clock from the call until the last row is written):
  cli 2        `vitrt eval -m MODEL DIR --threads 2` (a process: start, load, decode, preprocess, infer)
  cli 1        the same with --threads 1 (on a machine loaded by other jobs a 2-thread session can lose most of
               its speed waiting for its second thread, so the faster CLI row is the baseline)
  dask 1x2     one worker process with 2 threads (2 sessions of 1 thread), vitrt.dask.classify to a CSV
  dask 2x1     two worker processes with 1 thread each
The clusters are started once, before the rounds (cluster start-up is not per job); the model plugin is
registered inside each classify call and counted. Rounds interleave the configurations (cli, 1x2, 2x1, cli, ...)
and the table gives medians, so a machine shared with other jobs hurts all of them alike. Target: each cluster
configuration at >= 0.9x the faster CLI row's images/s. Then bench/python_overhead.py (session.run vs
`vitrt bench`), when present, adds the Python overhead rows.
"""
import argparse
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def export_datasets(work, limit):
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import fashion_mnist as fm
    from PIL import Image

    png = os.path.join(work, "fm_png")
    n = fm.export_imagefolder(png, "test", limit=limit)
    jpg = os.path.join(work, "fm_jpeg")
    for cls in sorted(os.listdir(png)):
        src = os.path.join(png, cls)
        if not os.path.isdir(src):
            continue
        os.makedirs(os.path.join(jpg, cls))
        for name in os.listdir(src):
            img = Image.open(os.path.join(src, name)).convert("RGB").resize((64, 64), Image.BICUBIC)
            img.save(os.path.join(jpg, cls, name[:-4] + ".jpg"), quality=90)
    shutil.copy(os.path.join(png, "labels.txt"), os.path.join(jpg, "labels.txt"))
    return n, {"Fashion-MNIST test (28x28 PNG)": png, "Fashion-MNIST test (64x64 JPEG)": jpg}


def time_cli(build, model, folder, threads):
    t = time.perf_counter()
    subprocess.run([os.path.join(build, "bin", "vitrt"), "eval", "-m", model, folder, "--threads", str(threads)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def time_dask(client, model, folder, out):
    import vitrt.dask

    if os.path.exists(out):
        os.remove(out)
    t = time.perf_counter()
    report = vitrt.dask.classify(client, folder, model, out, top_k=5, progress=False, resume=False)
    seconds = time.perf_counter() - t
    if report.errors:
        raise RuntimeError(f"{report.errors} images failed in {folder}")
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--limit", type=int, default=None, help="only the first N test images (default: all 10,000)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", help="keep the exported images here (default: a temporary folder)")
    a = ap.parse_args()
    from distributed import Client, LocalCluster

    work = a.work or tempfile.mkdtemp(prefix="vitrt_dask_bench_")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "fashion_deit.vitrt")
    deit = os.path.join(ROOT, "models", "fashion_deit")
    subprocess.run([os.path.join(a.build, "bin", "vitrt-convert"), os.path.join(deit, "fashion_deit.pth"), "-o", model,
                    "--labels", os.path.join(deit, "labels.txt")], check=True, stdout=subprocess.DEVNULL)
    n, datasets = export_datasets(work, a.limit)

    clusters = {}
    try:
        for label, workers, threads in (("dask 1x2", 1, 2), ("dask 2x1", 2, 1)):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            clusters[label] = (cluster, Client(cluster))
        configs = ["cli 2", "cli 1", *clusters]
        times = {(d, c): [] for d in datasets for c in configs}
        for r in range(a.rounds):
            for d, folder in datasets.items():
                for t in (2, 1):
                    times[(d, f"cli {t}")].append(time_cli(a.build, model, folder, t))
                for label, (_, client) in clusters.items():
                    times[(d, label)].append(time_dask(client, model, folder, os.path.join(work, "out.csv")))
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()

    print(f"{cpu_name()}, {os.cpu_count()} cores; models/fashion_deit (32x32 input); {n} images per run; "
          f"median of {a.rounds} interleaved rounds, wall clock per run")
    print("| images | configuration | s | images/s | vs faster CLI |")
    print("|---|---|---|---|---|")
    for d in datasets:
        cli = min(statistics.median(times[(d, c)]) for c in ("cli 1", "cli 2"))
        for c in configs:
            s = statistics.median(times[(d, c)])
            if c.startswith("cli"):
                name = f"`vitrt eval --threads {c[-1]}`"
            else:
                name = c.replace("dask ", "vitrt.dask, ") + " (workers x threads)"
            print(f"| {d} | {name} | {s:.2f} | {n / s:.0f} | {cli / s:.2f}x |")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)

    overhead = os.path.join(HERE, "python_overhead.py")
    if os.path.exists(overhead):
        print()
        sys.stdout.flush()
        return subprocess.call([sys.executable, overhead, "--build", a.build])
    print("\n(bench/python_overhead.py is not in this tree: no Python overhead rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
