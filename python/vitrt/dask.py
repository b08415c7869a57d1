"""Classify many images on a Dask cluster: ``vitrt.dask.classify(client, source, model_path, out)``.

The same call runs on a ``distributed.LocalCluster`` and on ``dask-scheduler`` / ``dask-worker`` processes on other
hosts: the model is loaded once per worker by a worker plugin, the images go out in partitions, and the client
appends each finished partition's rows to a CSV or JSON-lines table, with a progress bar on stderr. A rerun with the
same output resumes: it skips what the table already holds. Partition sizing, memory and failure handling:
docs/scaleout.md.

    from distributed import Client, LocalCluster
    import vitrt.dask

    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
        report = vitrt.dask.classify(client, "photos/", "deit_tiny.vitrt", "labels.csv", top_k=5)
    print(report)
"""
import hashlib
import math
import os
import stat
import time

from distributed import as_completed

from . import _dask_worker
from ._dask_progress import Progress
from ._dask_table import ResultsTable, read_table, table_format

__all__ = ["classify", "ClassifyReport", "partition_size", "list_images", "read_table"]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")

# A partition's working set (its array block, a contiguous copy, the session's activations) must stay well under
# the worker's memory_limit divided among its threads: Dask starts spilling at 60% of the limit, so one block may
# take 15% of a thread's share (4 copies of it still fit below the spill threshold).
MEMORY_FRACTION = 0.15
# Enough partitions that the last wave is short and a lost worker costs little: at least this many per thread.
PARTITIONS_PER_THREAD = 4
# Bounds the rows lost to a client crash (a partition is written when it completes) and keeps progress smooth.
MAX_PARTITION = 4096


class ClassifyReport(dict):
    """What a run did: total (the source's images), resumed (of them, skipped as already in the table), retried
    (of them, re-queued by retry_errors), written (rows this run wrote), errors (of them, rows with an error),
    error_rows (the source's images whose row in the table now has an error, resumed ones included),
    partitions, partition_size, seconds, images_per_s."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def list_images(folder):
    """The .png/.jpg/.jpeg files under `folder` as the CLI finds them (tools/vitrt/cli_common.cpp): recursive,
    sorted by full path, symlinks to directories not followed, each file once."""
    found, seen = [], set()

    def walk(d):
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            raise OSError(f"cannot read directory {d!r}: {e.strerror}") from None
        for n in names:
            p = os.path.join(d, n)
            try:
                lst = os.lstat(p)
                st = os.stat(p) if stat.S_ISLNK(lst.st_mode) else lst
            except OSError:
                continue  # vanished or a dangling link
            if stat.S_ISDIR(lst.st_mode):
                walk(p)
            elif stat.S_ISREG(st.st_mode) and n.lower().endswith(IMAGE_EXTENSIONS):
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    found.append(p)

    walk(os.fspath(folder).rstrip("/") or "/")
    if not found:
        raise ValueError(f"directory {os.fspath(folder)!r} contains no .png/.jpg/.jpeg images")
    return sorted(found)


def partition_size(n_items, item_bytes, workers, per_thread=PARTITIONS_PER_THREAD, max_items=MAX_PARTITION):
    """Images per partition for `n_items` of `item_bytes` each on `workers` (client.scheduler_info()["workers"]
    values: dicts with nthreads and memory_limit, 0 meaning no limit).

    The smallest of: what fits in MEMORY_FRACTION of the tightest worker's memory per thread; n_items spread over
    `per_thread` partitions per thread of the whole cluster; max_items."""
    if not workers:
        raise RuntimeError("vitrt.dask: the cluster has no workers")
    threads = sum(max(1, int(w.get("nthreads", 1))) for w in workers)
    per_thread_memory = min(_memory_limit(w) / max(1, int(w.get("nthreads", 1))) for w in workers)
    by_memory = int(per_thread_memory * MEMORY_FRACTION) // max(1, item_bytes)
    by_balance = math.ceil(n_items / (threads * per_thread))
    return max(1, min(by_memory, by_balance, max_items))


def _memory_limit(w):
    limit = int(w.get("memory_limit") or 0)
    if limit > 0:
        return limit
    import psutil  # a dependency of distributed

    return psutil.virtual_memory().total


def _plugin_for(client, model_path, backend, threads, precision, batch_size, ship_model):
    """Registers the model plugin (named by the model's digest and the session options, so a rerun reuses it)."""
    model_bytes, digest = None, None
    if ship_model:
        with open(model_path, "rb") as f:
            model_bytes = f.read()
        digest = hashlib.sha256(model_bytes).hexdigest()[:16]
    elif os.path.exists(model_path):
        model_path = os.path.abspath(model_path)
        st = os.stat(model_path)
        digest = f"{st.st_size}-{st.st_mtime_ns}"  # a file rewritten in place gets a new plugin
    key = f"{model_path}|{digest}|{backend}|{threads}|{precision}|{batch_size}"
    name = "vitrt-model-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    if client.run_on_scheduler(_scheduler_has_plugin, name):
        return name  # loaded by an earlier call on every worker (and on workers that joined since)
    plugin = _dask_worker.ModelPlugin(name, model_path, backend, threads, precision, batch_size, model_bytes,
                                       digest if ship_model else None)
    try:
        client.register_worker_plugin(plugin, name=name)
    except Exception as e:
        try:
            client.unregister_worker_plugin(name)  # so workers joining later do not retry a broken setup
        except Exception:
            pass
        raise RuntimeError(f"vitrt.dask: loading model {model_path!r} on the workers failed: {e}") from e
    return name


def _scheduler_has_plugin(name, dask_scheduler=None):
    return name in dask_scheduler.worker_plugins


def _source_kind(source):
    """('paths', list of str) or ('array', dask array)."""
    try:
        import dask.array as da
        import numpy as np
    except ImportError:  # pragma: no cover - dask is a dependency of distributed
        da = np = None
    if isinstance(source, (str, bytes, os.PathLike)):
        path = os.fsdecode(source)
        if os.path.isdir(path):
            return "paths", list_images(path)
        return "paths", [path]
    if da is not None and isinstance(source, (da.Array, np.ndarray)):
        if source.ndim != 4:
            raise ValueError(f"vitrt.dask: an array source must be (N, C, H, W), got {source.ndim} dimensions "
                             f"{tuple(source.shape)}")
        if source.dtype != np.float32:
            raise TypeError(f"vitrt.dask: an array source must be float32 (preprocessed), got {source.dtype}")
        return "array", da.asarray(source)
    try:
        paths = [os.fsdecode(p) for p in source]
    except TypeError:
        raise TypeError(f"vitrt.dask: source must be a folder, a list of image paths or an (N, C, H, W) float32 "
                        f"array, not {type(source).__name__}") from None
    seen, unique = set(), []
    for p in paths:  # a path listed twice is one image: one row
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return "paths", unique


def classify(client, source, model_path, out, top_k=5, *, backend="auto", threads=1, precision="fp32",
             batch_size=16, partition_size=None, retries=3, resume=True, retry_errors=False, progress=True,
             ship_model=False, format=None, on_progress=None):
    """Classifies every image of `source` on the workers of `client` and writes one row per image to `out`.

    source: a folder (searched like ``vitrt classify DIR``), a list of image paths (as the workers see them), or a
        preprocessed (N, C, H, W) float32 dask or numpy array (rows keyed by index).
    model_path: a .vitrt file readable on every worker; with ship_model=True it is read here and sent to the
        workers instead. Without ship_model, each worker compares the file's size and modification time when a
        task starts and reloads the model if the file changed.
    out: the table, CSV (.csv) or JSON lines (.jsonl, .ndjson), or `format`. Rows are appended as partitions
        finish, in completion order: columns path (or index), label1, score1, ..., labelK, scoreK, error.
    threads: intra-op threads of each session; each worker thread gets its own session, so a worker uses
        nthreads x threads cores.
    partition_size: images per task (default: sized to the workers' memory and count, see partition_size()).
    retries: how often a task that raised is retried; tasks on a worker that died are rescheduled by the
        scheduler (up to distributed.scheduler.allowed-failures times).
    resume: skip the keys already in `out` (False: overwrite it). A file that is not a table of this kind is
        refused (ValueError) and left untouched.
    retry_errors: with resume, also re-queue the keys whose row in `out` has an error (a transient failure, say a
        worker without the mount); their new rows are appended, and read_table keeps the last row of each key.
    on_progress(done, total): called after each partition is written.

    An image that cannot be decoded or classified gets a row with its error and no labels; the job goes on.
    Returns a ClassifyReport. Raises ValueError/TypeError for bad arguments and RuntimeError when the model
    cannot be loaded on the workers; on any failure the rows already written stay, and a rerun resumes.
    """
    _check_int("top_k", top_k, 1)
    _check_int("batch_size", batch_size, 1)
    if partition_size is not None:
        _check_int("partition_size", partition_size, 1, "or None (sized to the cluster)")
    _check_int("retries", retries, 0)
    table_format(out, format)  # a bad extension fails before any work
    kind, items = _source_kind(source)
    name = _plugin_for(client, os.fspath(model_path), backend, threads, precision, batch_size, ship_model)
    info = client.run(_dask_worker.worker_model_info, name)
    if not info:
        raise RuntimeError("vitrt.dask: the cluster has no workers")
    classes = min(i["classes"] for i in info.values())
    top_k = min(top_k, classes) if classes else top_k

    table = ResultsTable(out, top_k, "path" if kind == "paths" else "index", format)
    start = time.monotonic()
    table.open(resume, retry_errors)
    keys = items if kind == "paths" else range(items.shape[0])
    # Only this source's keys: the table may hold rows of other sources written to the same file.
    resumed = sum(1 for k in keys if k in table.done)
    retried = sum(1 for k in keys if k in table.failed and k not in table.done)
    try:
        if kind == "paths":
            futures, total, part = _submit_paths(client, name, items, table.done, top_k, batch_size,
                                                 partition_size, retries, info)
        else:
            futures, total, part = _submit_array(client, name, items, table.done, top_k, batch_size,
                                                 partition_size, retries, info)
        bar = Progress(total, done=resumed, enabled=progress)
        written = errors = 0
        try:
            for fut in as_completed(futures):
                rows = fut.result()
                fut.release()
                n, e = table.write(rows)
                written += n
                errors += e
                bar.update(n)
                if on_progress is not None:
                    on_progress(bar.done, total)
        except BaseException:
            client.cancel(futures)
            raise
        finally:
            bar.close()
    finally:
        table.close()
    seconds = time.monotonic() - start
    return ClassifyReport(total=total, resumed=resumed, retried=retried, written=written, errors=errors,
                          error_rows=sum(1 for k in keys if k in table.failed), partitions=len(futures),
                          partition_size=part, seconds=seconds, images_per_s=written / seconds if seconds else 0.0)


def _check_int(name, value, least, otherwise=""):
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"vitrt.dask: {name} must be an integer >= {least}{' ' + otherwise if otherwise else ''}, "
                         f"got {value!r}")


def _submit_paths(client, name, paths, done, top_k, batch_size, part, retries, info):
    todo = [p for p in paths if p not in done]
    if part is None:
        # A file partition holds paths; its memory is one batch of decoded images at a time, so the bound that
        # matters is balance (the memory bound uses the input tensor of one image, a floor on what a row costs).
        part = partition_size(len(todo), _input_bytes(info), list(info.values()))
    chunks = [todo[i:i + part] for i in range(0, len(todo), part)]
    n = len(chunks)  # (top_k and batch_size positionally: client.map has a batch_size keyword of its own)
    futures = client.map(_dask_worker.classify_paths, [name] * n, chunks, [top_k] * n, [batch_size] * n,
                         retries=retries, pure=False)
    return futures, len(paths), part


def _submit_array(client, name, array, done, top_k, batch_size, part, retries, info):
    import dask

    n, c, h, w = array.shape
    want = [i for i in next(iter(info.values()))["input_shape"]][-3:]
    if want and [c, h, w] != want:
        raise ValueError(f"vitrt.dask: the array's images are {c}x{h}x{w} (C x H x W), the model takes "
                         f"{'x'.join(map(str, want))}")
    if part is None:
        part = partition_size(n, c * h * w * 4, list(info.values()))
    array = array.rechunk({0: part, 1: -1, 2: -1, 3: -1})
    blocks = array.to_delayed().ravel()
    tasks, begin = [], 0
    for blk, rows in zip(blocks, array.chunks[0]):
        if any(i not in done for i in range(begin, begin + rows)):
            tasks.append(dask.delayed(_dask_worker.classify_block, pure=True)(name, blk, begin, top_k, batch_size))
        begin += rows
    futures = client.compute(tasks, retries=retries)
    return futures, n, part


def _input_bytes(info):
    shape = next(iter(info.values()))["input_shape"]
    count = 4
    for d in shape[-3:]:
        count *= max(1, int(d))
    return count
