"""What ``vitrt.dask.classify`` runs on the Dask workers: the model plugin and the partition tasks.

The model is loaded once per worker process by ``ModelPlugin.setup`` (a ``distributed.WorkerPlugin``, registered
with ``client.register_worker_plugin``, so workers that join later load it too). A ``vitrt.Model`` may be shared by
threads but a ``vitrt.Session`` serves one thread at a time (engine/include/vitrt.h), so the plugin keeps a pool of
sessions: a task borrows one, and a worker with N threads ends up with at most N sessions. A model read from a path
(not shipped) is checked when a task starts: if the file's size or modification time on this worker changed, it is
loaded again (the plugin's name, made on the client, cannot tell when the client does not see the file).
"""
import contextlib
import os
import queue
import threading

import numpy as np
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin


class ModelPlugin(WorkerPlugin):
    """Loads a vitrt model on each worker; `model_bytes` (optional) ships the file itself to workers that cannot
    read `model_path` (it is written once into the worker's local directory, named by its digest)."""

    def __init__(self, name, model_path, backend, threads, precision, max_batch, model_bytes=None, digest=None):
        self.name = name
        self.max_batch = max_batch
        self.model_path = model_path
        self.backend = backend
        self.threads = threads
        self.precision = precision
        self.model_bytes = model_bytes
        self.digest = digest

    def setup(self, worker):
        path = self.model_path
        if self.model_bytes is not None:
            path = os.path.join(worker.local_directory, f"vitrt-{self.digest}.vitrt")
            if not os.path.exists(path):
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "wb") as f:
                    f.write(self.model_bytes)
                os.replace(tmp, path)
        self._lock = threading.Lock()
        self._load(path)

    def _load(self, path):
        import vitrt

        st = os.stat(path)
        model = vitrt.Model(path)
        labels = model_labels(model)
        # A session is created here too, so a bad backend or precision fails the registration, not every task.
        pool = queue.LifoQueue()
        pool.put(self._new_session(model))
        self.model, self.labels, self._pool = model, labels, pool
        self._path, self._stamp = path, (st.st_size, st.st_mtime_ns)

    def refresh(self):
        """Reloads the model if its file changed since it was loaded (a shipped model's copy never does)."""
        if self.model_bytes is not None:
            return
        try:
            st = os.stat(self._path)
        except OSError:
            return  # gone or unreadable now: keep the loaded model; a task reading the file again would fail
        if (st.st_size, st.st_mtime_ns) != self._stamp:
            with self._lock:
                if (st.st_size, st.st_mtime_ns) != self._stamp:
                    self._load(self._path)

    def _new_session(self, model):
        import vitrt

        return vitrt.Session(model, backend=self.backend, threads=self.threads, precision=self.precision,
                             max_batch=self.max_batch)

    def teardown(self, worker):
        self._pool = None
        self.model = None

    @contextlib.contextmanager
    def session(self):
        pool, model = self._pool, self.model  # a session goes back to its own model's pool
        try:
            s = pool.get_nowait()
        except queue.Empty:
            s = self._new_session(model)
        try:
            yield s
        finally:
            pool.put(s)


def model_labels(model):
    """The model's class names in class order (numbered where the file has none)."""
    labels = list(model.labels)
    return [labels[c] if c < len(labels) else str(c) for c in range(model.num_classes)]


def _plugin(name):
    worker = get_worker()
    plugin = worker.plugins.get(name)
    if plugin is None or getattr(plugin, "model", None) is None:
        raise RuntimeError(f"vitrt.dask: the model plugin {name!r} is not loaded on worker {worker.address} "
                           f"(its setup failed or it was unregistered; see the worker's log)")
    plugin.refresh()
    return plugin


def worker_model_info(name, dask_worker=None):
    """For client.run: the model's input shape and classes, this worker's threads and memory limit."""
    plugin = dask_worker.plugins.get(name)
    model = getattr(plugin, "model", None)
    return {"input_shape": list(model.input_shape) if model is not None else [],
            "classes": len(plugin.labels) if model is not None else 0,
            "nthreads": dask_worker.state.nthreads, "memory_limit": dask_worker.memory_manager.memory_limit or 0}


def _error_text(e):
    return f"{type(e).__name__}: {e}"


def _classify_files(session, paths, top_k):
    """Rows for `paths`; an unreadable image costs only its own row (Session.classify's errors="report")."""
    results = session.classify(list(paths), top_k=top_k, errors="report")
    return [(p, list(r["labels"]), [float(x) for x in r["probabilities"]], r["error"]) for p, r in zip(paths, results)]


def classify_paths(name, paths, top_k, batch_size):
    """Task: classifies a partition of image files, `batch_size` images per session call."""
    plugin = _plugin(name)
    rows = []
    with plugin.session() as s:
        for i in range(0, len(paths), batch_size):
            rows.extend(_classify_files(s, paths[i:i + batch_size], top_k))
    return rows


def softmax_top_k(logits, k, labels):
    """The CLI's top-k (tools/vitrt/cmd_classify.cpp): probabilities summed in double, rounded to float, ties to
    the lower class index."""
    order = np.argsort(-logits, kind="stable")[:k]
    z = logits.astype(np.float64) - float(logits.max())
    p = np.exp(z) / np.exp(z).sum()
    return [labels[c] for c in order], [float(np.float32(p[c])) for c in order]


def _classify_rows(session, block, start, top_k, labels):
    import vitrt

    try:
        logits = session.run(np.ascontiguousarray(block, dtype=np.float32))
        return [(start + i, *softmax_top_k(logits[i], top_k, labels), None) for i in range(len(block))]
    except vitrt.Error:
        if len(block) == 1:
            raise
    rows = []
    for i in range(len(block)):
        try:
            rows.extend(_classify_rows(session, block[i:i + 1], start + i, top_k, labels))
        except vitrt.Error as e:
            rows.append((start + i, [], [], _error_text(e)))
    return rows


def classify_block(name, block, start, top_k, batch_size):
    """Task: classifies a block of an (N, C, H, W) float32 array whose first row has index `start`."""
    plugin = _plugin(name)
    rows = []
    with plugin.session() as s:
        for i in range(0, len(block), batch_size):
            rows.extend(_classify_rows(s, block[i:i + batch_size], start + i, top_k, plugin.labels))
    return rows
