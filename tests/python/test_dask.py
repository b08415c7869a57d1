"""vitrt.dask on a LocalCluster of 2 worker processes (1 thread each) over a few hundred generated images.

Checks: the table equals single-process Session.classify row for row; a corrupt image is reported in its row; a
worker SIGKILLed while it runs a partition does not lose or duplicate an image; an interrupted run resumes from
what it wrote (a torn last line included, a half-written partition with a duplicate key, a file that is not a table
left untouched, error rows retried with retry_errors); a worker reloads a model file rewritten in place; a
preprocessed array gives Session.classify's top-k; the same call
works on dask-scheduler/dask-worker processes; bad arguments are clear errors. Run by ctest (tests/python/dask.cmake)
with PYTHONPATH=build/python; skipped, with the reason, where the extension is not built or the build is sanitized.
"""
import logging
import os
import signal
import subprocess

import numpy as np
import pytest

SRC = os.environ.get("VITRT_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("VITRT_BINARY_DIR") or os.path.join(SRC, "build")
TOP_K = 3


def _skip_reason():
    if os.environ.get("VITRT_SANITIZED"):
        return (f"sanitized build (VITRT_SANITIZED={os.environ['VITRT_SANITIZED']}): the extension would need the "
                f"sanitizer runtime preloaded into python; the plain build runs these tests")
    try:
        import distributed  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (tools/setup.sh installs python3-distributed and python3-pil)"
    try:
        import vitrt.dask  # noqa: F401
    except ImportError as e:
        return f"the vitrt Python package is not importable ({e}): build it with pybind11 and PYTHONPATH=build/python"
    return None


_REASON = _skip_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("model") / "fashion_deit.vitrt")
    deit = os.path.join(SRC, "models", "fashion_deit")
    subprocess.run([os.path.join(BIN, "bin", "vitrt-convert"), os.path.join(deit, "fashion_deit.pth"), "-o", out,
                    "--labels", os.path.join(deit, "labels.txt")], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """(folder, good paths, corrupt paths): 240 PNG/JPEG variations of samples/fashion in two sub-folders."""
    from PIL import Image

    root = tmp_path_factory.mktemp("images")
    sample_dir = os.path.join(SRC, "samples", "fashion")
    samples = sorted(os.path.join(sample_dir, n) for n in os.listdir(sample_dir))
    bases = [np.asarray(Image.open(p).convert("L"), dtype=np.float32) for p in samples]
    rng = np.random.default_rng(29)
    good = []
    for i in range(240):
        sub = root / ("a" if i % 2 else "b")
        sub.mkdir(exist_ok=True)
        pixels = np.clip(bases[i % len(bases)] + rng.normal(0, 12, bases[0].shape), 0, 255).astype(np.uint8)
        img = Image.fromarray(pixels, mode="L").resize((28 + 4 * (i % 3),) * 2)
        if i % 3 == 0:
            img = img.convert("RGB")
        path = str(sub / f"{i:03d}.{'jpg' if i % 4 == 0 else 'png'}")
        img.save(path)
        good.append(path)
    with open(good[1], "rb") as f:
        head = f.read(60)
    corrupt = [str(root / "a" / "corrupt.png"), str(root / "b" / "not_an_image.jpg")]
    with open(corrupt[0], "wb") as f:
        f.write(head)  # a PNG cut off inside its header chunk
    with open(corrupt[1], "w") as f:
        f.write("this is text\n")
    return str(root), sorted(good), sorted(corrupt)


@pytest.fixture(scope="module")
def reference(model_path, images):
    """Single-process Session.classify: path -> (labels, scores)."""
    import vitrt

    _, good, corrupt = images
    with vitrt.Session(vitrt.Model(model_path), threads=1) as s:
        results = s.classify(good, top_k=TOP_K)
        for p in corrupt:
            with pytest.raises(vitrt.Error):
                s.classify([p], top_k=TOP_K)
    return {p: (list(r["labels"]), [float(x) for x in r["probabilities"]]) for p, r in zip(good, results)}


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as c:
        yield c


def _check_table(rows, images, reference, key="path"):
    """Every image exactly once; good ones equal the reference, corrupt ones carry their error."""
    _, good, corrupt = images
    keys = [r[key] for r in rows]
    assert len(keys) == len(set(keys)), "an image appears twice"
    assert sorted(keys) == sorted(good + corrupt)
    for r in rows:
        if r[key] in corrupt:
            assert r["error"] and not r["labels"], r
            assert os.path.basename(r[key]) in r["error"], f"the error does not name the file: {r['error']}"
        else:
            assert r["error"] is None, r
            assert (r["labels"], r["scores"]) == reference[r[key]], r[key]


def test_folder_equals_single_process_and_reports_corrupt_images(client, model_path, images, reference, tmp_path):
    import vitrt.dask

    out = tmp_path / "labels.csv"
    report = vitrt.dask.classify(client, images[0], model_path, out, top_k=TOP_K)
    rows = vitrt.dask.read_table(out)
    _check_table(rows, images, reference)
    assert report.total == report.written == len(rows) == 242
    assert report.errors == 2 and report.resumed == 0


def test_worker_killed_mid_job_loses_and_duplicates_nothing(client, model_path, images, reference, tmp_path):
    import vitrt.dask

    paths = images[1] + images[2]
    killed = []

    def kill_a_busy_worker(done, total):
        if killed:
            return
        busy = {w: keys for w, keys in client.processing().items() if keys}
        if not busy:
            return  # try again after the next partition
        worker = sorted(busy)[0]
        pid = client.run(os.getpid, workers=[worker])[worker]
        os.kill(pid, signal.SIGKILL)
        killed.append((worker, pid, len(busy[worker]), done, total))

    out = tmp_path / "labels.jsonl"
    report = vitrt.dask.classify(client, paths, model_path, out, top_k=TOP_K, partition_size=4, batch_size=2,
                                 progress=False, on_progress=kill_a_busy_worker)
    assert killed, "no worker was busy after any partition: nothing was killed"
    worker, pid, in_flight, done, total = killed[0]
    assert in_flight >= 1 and done < total, killed
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed process
    assert pid not in client.run(os.getpid).values()
    rows = vitrt.dask.read_table(out)
    _check_table(rows, images, reference)
    assert report.written == len(paths)


class _Interrupted(Exception):
    pass


def test_interrupted_run_resumes_from_what_it_wrote(client, model_path, images, reference, tmp_path):
    import vitrt.dask

    out = tmp_path / "labels.csv"

    def stop_after_three(done, total):
        if done >= 3 * 8:
            raise _Interrupted()

    with pytest.raises(_Interrupted):
        vitrt.dask.classify(client, images[0], model_path, out, top_k=TOP_K, partition_size=8, progress=False,
                            on_progress=stop_after_three)
    first = out.read_text()
    written_before = len(first.splitlines()) - 1
    assert 24 <= written_before < 242
    with open(out, "a") as f:
        f.write(images[1][0] + ",Bag,0.5")  # a row torn by a crash mid-write: no newline, too few fields
    report = vitrt.dask.classify(client, images[0], model_path, out, top_k=TOP_K, progress=False)
    assert report.resumed == written_before and report.written == 242 - written_before
    assert out.read_text().startswith(first), "the rows written before the interruption changed"
    _check_table(vitrt.dask.read_table(out), images, reference)
    again = vitrt.dask.classify(client, images[0], model_path, out, top_k=TOP_K, progress=False)
    assert again.written == 0 and again.resumed == 242 and again.partitions == 0


def test_array_source_equals_single_process_classify(client, model_path, images, reference, tmp_path):
    """A Dask array of preprocessed images (Model.preprocess, the CLI's preprocessing) gives the same top-k as
    Session.classify on the files; a row holding NaN is reported in its row."""
    import dask.array as da
    import vitrt
    import vitrt.dask

    model = vitrt.Model(model_path)
    paths = images[1][:70]
    x = np.stack([model.preprocess(p) for p in paths]).astype(np.float32)
    x[5, 0, 3, 3] = np.nan
    out = tmp_path / "array.jsonl"
    report = vitrt.dask.classify(client, da.from_array(x, chunks=(16, -1, -1, -1)), model_path, out, top_k=TOP_K,
                                 progress=False, ship_model=True)
    rows = sorted(vitrt.dask.read_table(out), key=lambda r: r["index"])
    assert [r["index"] for r in rows] == list(range(70)) and report.written == 70 and report.errors == 1
    assert rows[5]["error"] and "NaN" in rows[5]["error"] and not rows[5]["labels"]
    for r in rows[:5] + rows[6:]:
        labels, scores = reference[paths[r["index"]]]
        assert r["error"] is None and r["labels"] == labels, r
        np.testing.assert_allclose(r["scores"], scores, rtol=1e-6)
    with pytest.raises(ValueError, match=r"3x16x16 .*the model takes 3x32x32"):
        vitrt.dask.classify(client, np.zeros((4, 3, 16, 16), np.float32), model_path, tmp_path / "bad.jsonl")
    with pytest.raises(TypeError, match="float32"):
        vitrt.dask.classify(client, np.zeros((4, 3, 32, 32)), model_path, tmp_path / "bad.jsonl")


def test_bad_arguments_are_clear_errors(client, model_path, images, tmp_path):
    import vitrt.dask

    with pytest.raises(ValueError, match=r"extension '\.txt'"):
        vitrt.dask.classify(client, images[1][:4], model_path, tmp_path / "out.txt")
    with pytest.raises(RuntimeError, match="missing.vitrt"):
        vitrt.dask.classify(client, images[1][:4], str(tmp_path / "missing.vitrt"), tmp_path / "out.csv")
    out = tmp_path / "k.csv"
    vitrt.dask.classify(client, images[1][:4], model_path, out, top_k=2, progress=False)
    with pytest.raises(ValueError, match="cannot resume"):
        vitrt.dask.classify(client, images[1][:4], model_path, out, top_k=TOP_K, progress=False)
    for arg, value, expected in [("partition_size", 0, ">= 1"), ("retries", -1, ">= 0"), ("top_k", 0, ">= 1"),
                                 ("top_k", True, ">= 1"), ("batch_size", 2.5, ">= 1")]:
        with pytest.raises(ValueError, match=f"{arg} must be an integer {expected}"):
            vitrt.dask.classify(client, images[1][:4], model_path, tmp_path / "v.csv", **{arg: value})


@pytest.mark.parametrize("name,content", [("notes.csv", b"path,comment\nmy notes, keep them\ntorn line"),
                                          ("notes.csv", b"a single line without newline"),
                                          ("notes.jsonl", b"not json at all")])
def test_resume_leaves_a_file_that_is_not_a_table_untouched(client, model_path, images, tmp_path, name, content):
    import vitrt.dask

    out = tmp_path / name
    out.write_bytes(content)
    with pytest.raises(ValueError, match="cannot resume"):
        vitrt.dask.classify(client, images[1][:2], model_path, out, top_k=TOP_K, progress=False)
    assert out.read_bytes() == content, "the file was changed before it was checked"


def test_retry_errors_requeues_failed_rows(client, model_path, images, reference, tmp_path):
    import shutil

    import vitrt.dask

    late = str(tmp_path / "late.png")  # missing on the first run (a worker without the mount, say)
    paths = images[1][:4] + [late]
    out = tmp_path / "retry.csv"
    first = vitrt.dask.classify(client, paths, model_path, out, top_k=TOP_K, progress=False)
    assert first.written == 5 and first.errors == 1 and first.error_rows == 1
    shutil.copy(images[1][0], late)
    again = vitrt.dask.classify(client, paths, model_path, out, top_k=TOP_K, progress=False)
    assert again.resumed == 5 and again.written == 0 and again.error_rows == 1 and again.retried == 0
    retry = vitrt.dask.classify(client, paths, model_path, out, top_k=TOP_K, progress=False, retry_errors=True)
    assert retry.resumed == 4 and retry.retried == 1 and retry.written == 1 and retry.errors == 0
    assert retry.error_rows == 0
    assert len(out.read_text().splitlines()) == 1 + 6  # the failed row stays; the new one comes after it
    rows = vitrt.dask.read_table(out)
    assert sorted(r["path"] for r in rows) == sorted(paths)
    late_row = next(r for r in rows if r["path"] == late)
    assert late_row["error"] is None and (late_row["labels"], late_row["scores"]) == reference[images[1][0]]


def test_resumed_counts_only_this_sources_keys(client, model_path, images, tmp_path):
    import vitrt.dask

    out = tmp_path / "shared.jsonl"
    vitrt.dask.classify(client, images[1][:4], model_path, out, top_k=TOP_K, progress=False)
    report = vitrt.dask.classify(client, images[1][3:6], model_path, out, top_k=TOP_K, progress=False)
    assert report.total == 3 and report.resumed == 1 and report.written == 2


def test_half_written_partition_with_a_duplicate_resumes_each_key_once(client, model_path, images, reference,
                                                                        tmp_path):
    """A crash left half of a partition's rows, a key written twice (a partition recomputed after a lost worker
    before the dedupe existed) and a torn line: the rerun adds each missing key once and nothing else."""
    import csv

    import vitrt.dask

    paths = images[1][:16]
    out = tmp_path / "half.csv"
    header = ["path"] + [c for i in range(1, TOP_K + 1) for c in (f"label{i}", f"score{i}")] + ["error"]
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for p in paths[:4] + [paths[2]]:  # half of the first partition of 8, paths[2] twice
            labels, scores = reference[p]
            w.writerow([p] + [x for ls in zip(labels, map(repr, scores)) for x in ls] + [""])
        f.write(paths[4] + ",Bag,0.")  # torn
    report = vitrt.dask.classify(client, paths, model_path, out, top_k=TOP_K, partition_size=8, progress=False)
    assert report.resumed == 4 and report.written == 12
    with open(out, newline="") as f:
        keys = [row[0] for row in csv.reader(f)][1:]
    assert sorted(keys) == sorted(paths + [paths[2]]), "a key is missing or was written again"
    rows = vitrt.dask.read_table(out)
    assert sorted(r["path"] for r in rows) == sorted(paths)
    for r in rows:
        assert r["error"] is None and (r["labels"], r["scores"]) == reference[r["path"]], r


def test_worker_reloads_a_model_rewritten_in_place(model_path, tmp_path):
    """ship_model=False: the plugin compares the file's size and mtime when a task starts (plugin.refresh) and
    reloads a model rewritten under the same name, which a client that cannot see the file would not notice."""
    import shutil
    import types

    from vitrt import _dask_worker

    path = str(tmp_path / "model.vitrt")
    shutil.copy(model_path, path)
    plugin = _dask_worker.ModelPlugin("p", path, "auto", 1, "fp32", 4)
    plugin.setup(types.SimpleNamespace(local_directory=str(tmp_path)))
    before = plugin.labels
    plugin.refresh()
    assert plugin.labels is before, "reloaded an unchanged file"
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"renamed class {i}\n" for i in range(10)))
    deit = os.path.join(SRC, "models", "fashion_deit")
    subprocess.run([os.path.join(BIN, "bin", "vitrt-convert"), os.path.join(deit, "fashion_deit.pth"), "-o",
                    path + ".new", "--labels", str(labels)], check=True, capture_output=True)
    os.replace(path + ".new", path)
    plugin.refresh()
    assert plugin.labels[0] == "renamed class 0"
    with plugin.session() as s:
        assert s.model.labels[0] == "renamed class 0"


def test_task_on_a_worker_sees_a_model_rewritten_in_place(client, model_path, tmp_path):
    """The same through a real worker: a task looks the plugin up (_dask_worker._plugin), which reloads."""
    import shutil

    import vitrt.dask
    from vitrt import _dask_worker

    path = str(tmp_path / "rewritten.vitrt")
    shutil.copy(model_path, path)
    name = vitrt.dask._plugin_for(client, path, "auto", 1, "fp32", 4, False)
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"relabelled {i}\n" for i in range(10)))
    deit = os.path.join(SRC, "models", "fashion_deit")
    subprocess.run([os.path.join(BIN, "bin", "vitrt-convert"), os.path.join(deit, "fashion_deit.pth"), "-o",
                    path + ".new", "--labels", str(labels)], check=True, capture_output=True)
    os.replace(path + ".new", path)
    for worker in client.scheduler_info()["workers"]:
        fut = client.submit(lambda n: _dask_worker._plugin(n).labels[0], name, workers=[worker], pure=False)
        assert fut.result() == "relabelled 0", worker


def test_same_call_on_dask_scheduler_and_dask_worker_processes(model_path, images, reference, tmp_path):
    """What the README shows for other hosts: a dask-scheduler and a dask-worker started from the command line."""
    import json
    import time

    import vitrt.dask
    from distributed import Client

    sched_file = str(tmp_path / "scheduler.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), os.path.dirname(
        os.path.dirname(vitrt.dask.__file__))) if p))
    procs = [subprocess.Popen(["dask-scheduler", "--no-dashboard", "--port", "0", "--scheduler-file", sched_file],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)]
    try:
        for _ in range(300):  # until the scheduler has written its address
            try:
                with open(sched_file) as f:
                    json.load(f)
                break
            except (OSError, ValueError):
                time.sleep(0.1)
        procs.append(subprocess.Popen(["dask-worker", "--scheduler-file", sched_file, "--nworkers", "1", "--nthreads",
                                       "1", "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, cwd=tmp_path))
        with Client(scheduler_file=sched_file, timeout=60) as c:
            c.wait_for_workers(1, timeout=60)
            out = tmp_path / "remote.csv"
            paths = images[1][:24] + images[2]
            vitrt.dask.classify(c, paths, model_path, out, top_k=TOP_K, progress=False, ship_model=True)
        rows = vitrt.dask.read_table(out)
        _check_table(rows, (None, images[1][:24], images[2]), reference)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)
