# SPDX-License-Identifier: Apache-2.0
"""vitrt.Model / vitrt.Session: the same logits as the CLI, thread safety, errors, no leaks (issue 29)."""
import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import vitrt
from conftest import SHIPPED_MODELS, SOURCE_DIR, tool


def random_batch(model: vitrt.Model, n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, *model.input_shape), dtype=np.float32)


@pytest.mark.parametrize("name", SHIPPED_MODELS)
def test_logits_bit_identical_to_cli(shipped_models, tmp_path, name):
    model = vitrt.Model(shipped_models[name])
    x = random_batch(model, 5)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([tool("vitrt"), "run", "-m", shipped_models[name], "-i", str(tmp_path / "x.npy"), "-o",
                    str(tmp_path / "y.npy"), "--batch", "5", "--threads", "1"], check=True, capture_output=True)
    cli = np.load(tmp_path / "y.npy")
    with vitrt.Session(model, threads=1) as session:
        y = session.run(x)
    assert y.dtype == np.float32 and y.shape == (5, model.num_classes)
    assert np.array_equal(y, cli), f"{name}: largest difference {np.abs(y - cli).max()}"


def test_inspect(deit_path):
    model = vitrt.Model(deit_path)
    info = model.inspect()
    assert info["arch"] == model.arch and info["path"] == deit_path
    assert info["input_shape"] == model.input_shape == (3, 32, 32)
    assert info["num_classes"] == model.num_classes == 10
    assert info["labels"] == model.labels and info["labels"][0] == "T-shirt/top"
    assert info["output_dims"] == [-1, 10]
    assert sum(info["op_counts"].values()) == info["num_ops"] > 0
    assert info["preprocessing"]["interpolation"] == "bicubic"
    assert info["weight_bytes"] > 0 and isinstance(info["metadata"], dict)


def test_run_in_chunks_equals_whole_batch(deit_path):
    model = vitrt.Model(deit_path)
    x = random_batch(model, 7, seed=1)
    whole = vitrt.Session(model, threads=1, max_batch=7).run(x)
    chunked = vitrt.Session(model, threads=1, max_batch=3)
    y = chunked.run(x)  # chunks of 3, 3, 1
    assert np.allclose(y, whole, rtol=1e-5, atol=1e-5)
    assert np.array_equal(y[:3], chunked.run(np.ascontiguousarray(x[:3])))
    assert np.array_equal(chunked.run(x[6:]), y[6:])


def test_threads_sharing_a_model_agree_with_one(deit_path):
    model = vitrt.Model(deit_path)
    x = random_batch(model, 3, seed=2)
    expected = vitrt.Session(model, threads=1).run(x)
    results, errors = [None] * 8, []

    def worker(i: int) -> None:
        try:
            session = vitrt.Session(model, threads=1)
            results[i] = [session.run(x) for _ in range(5)]
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for runs in results:
        for y in runs:
            assert np.array_equal(y, expected)


def test_threads_sharing_a_session_take_turns(deit_path):
    model = vitrt.Model(deit_path)
    x = random_batch(model, 2, seed=3)
    session = vitrt.Session(model, threads=1)
    expected = session.run(x)
    out = []
    threads = [threading.Thread(target=lambda: out.append(session.run(x))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4 and all(np.array_equal(y, expected) for y in out)


def test_run_releases_the_gil(deit_path):
    """While one thread is inside run(), another runs Python code: a thread that kept the GIL through the run
    would leave no time stamp of the other strictly inside it."""
    model = vitrt.Model(deit_path)
    session = vitrt.Session(model, backend="ref", threads=1, max_batch=128)
    x = random_batch(model, 128, seed=4)
    window = []

    def run() -> None:
        t0 = time.perf_counter()
        session.run(x)
        window.extend((t0, time.perf_counter()))

    runner = threading.Thread(target=run)
    stamps = []
    runner.start()
    while runner.is_alive():
        stamps.append(time.perf_counter())
        time.sleep(0.0005)
    runner.join()
    t0, t1 = window
    inside = [t for t in stamps if t0 < t < t1]
    assert t1 - t0 > 0.02, "the run is too short to tell"
    assert len(inside) >= 3, f"{len(inside)} stamps of the other thread in a {1000 * (t1 - t0):.0f} ms run"


def test_bad_inputs_raise_bad_input_error(deit_path):
    model = vitrt.Model(deit_path)
    session = vitrt.Session(model, threads=1)
    x = random_batch(model, 2)
    cases = [
        (x.astype(np.float64), "dtype is float64, expected float32"),
        (x.astype(np.int32), "dtype is int32"),
        (x.astype(">f4"), "dtype is >f4"),
        (x[0], r"shape is \[3, 32, 32\], expected float32 \[N, 3, 32, 32\]"),
        (x.reshape(2, 3, 16, 64), r"shape is \[2, 3, 16, 64\]"),
        (x[:, :, ::-1, :], "not C-contiguous"),
        (x.transpose(0, 1, 3, 2), "not C-contiguous"),
        (np.asfortranarray(x), "not C-contiguous"),
        (x[:0], r"empty batch \[0, 3, 32, 32\]"),
        (x.tolist(), "expected a numpy.ndarray"),
    ]
    for bad, message in cases:
        with pytest.raises(vitrt.BadInputError, match=message):
            session.run(bad)
    for value, word in ((np.nan, "NaN"), (np.inf, "an infinity"), (-np.inf, "an infinity")):
        y = x.copy()
        y[1, 2, 3, 4] = value
        with pytest.raises(vitrt.BadInputError, match=f"holds {word} at image 1, element {2 * 1024 + 3 * 32 + 4}"):
            session.run(y)
    assert issubclass(vitrt.BadInputError, ValueError) and issubclass(vitrt.BadInputError, vitrt.Error)
    assert vitrt.BadInputError.exit_code == 3
    assert np.array_equal(session.run(x), session.run(x))  # still usable after the refusals


def test_closed_session(deit_path):
    model = vitrt.Model(deit_path)
    x = random_batch(model, 1)
    with vitrt.Session(model, threads=1) as session:
        session.run(x)
    assert session.closed
    with pytest.raises(vitrt.InvalidArgumentError, match="session is closed"):
        session.run(x)
    session.close()  # closing twice is harmless


def test_bad_files_and_options(deit_path, tmp_path):
    missing = tmp_path / "missing.vitrt"
    with pytest.raises(vitrt.FileError, match="cannot open '.*missing.vitrt': No such file"):
        vitrt.Model(missing)
    assert issubclass(vitrt.FileError, OSError) and vitrt.FileError.exit_code == 3
    corrupt = tmp_path / "corrupt.vitrt"
    corrupt.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(vitrt.BadModelError, match="corrupt.vitrt"):
        vitrt.Model(corrupt)
    with pytest.raises(vitrt.InvalidArgumentError, match="expected a str, bytes or os.PathLike"):
        vitrt.Model(42)
    model = vitrt.Model(deit_path)
    with pytest.raises(vitrt.InvalidArgumentError, match="gpu"):
        vitrt.Session(model, backend="gpu")
    with pytest.raises(vitrt.InvalidArgumentError, match="fp16"):
        vitrt.Session(model, precision="fp16")
    with pytest.raises(vitrt.InvalidArgumentError, match="threads must be >= 0"):
        vitrt.Session(model, threads=-1)
    with pytest.raises(vitrt.InvalidArgumentError, match="max_batch must be >= 1"):
        vitrt.Session(model, max_batch=0)


def test_model_argument_must_be_a_model(deit_path):
    # Session(None) dereferenced an empty model pointer (a segfault) before the binding refused it.
    with pytest.raises(vitrt.InvalidArgumentError, match="model must be a vitrt.Model, got NoneType"):
        vitrt.Session(None)
    with pytest.raises(vitrt.InvalidArgumentError, match="model must be a vitrt.Model, got str"):
        vitrt.Session(deit_path)


def test_empty_argv_is_refused():
    # An empty argv made CLI11 read argv[0] (a segfault in the converter, a logic_error in the CLI).
    from vitrt import _convert, _vitrt

    with pytest.raises(vitrt.InvalidArgumentError, match="argv is empty, expected the program name"):
        _convert.convert_command([])
    with pytest.raises(vitrt.InvalidArgumentError, match="argv is empty, expected the program name"):
        _vitrt._cli_main([])
    with pytest.raises(vitrt.InvalidArgumentError, match="argv holds a int"):
        _convert.convert_command(["vitrt-convert", 3])


def test_non_utf8_names_labels_and_paths(tmp_path):
    """Bytes that are not UTF-8 in labels, messages, converter logs and file names (issue 29 review)."""
    labels = tmp_path / "labels.txt"
    labels.write_bytes(b"caf\xe9\n" + b"".join(b"c%d\n" % i for i in range(1, 10)))
    # The destination's name is not UTF-8: the converter's "wrote <dst>" log quotes it.
    dst = tmp_path / os.fsdecode(b"caf\xe9.vitrt")
    out = vitrt.convert(SOURCE_DIR / "models" / "fashion_deit" / "fashion_deit.pth", dst, labels=labels)
    assert out.startswith("wrote ") and "\ufffd" in out
    model = vitrt.Model(dst)  # a str with a lone surrogate, as os.listdir lists it
    assert model.path == str(dst)
    assert vitrt.Model(os.fsencode(dst)).path == str(dst)  # bytes
    assert model.labels[0] == "caf\ufffd" and model.inspect()["labels"][0] == "caf\ufffd"
    assert model.inspect()["path"] == str(dst) and "caf" in repr(model)
    # A library message quoting such a name is still the right class, not a UnicodeDecodeError.
    with pytest.raises(vitrt.InvalidArgumentError, match="the path holds a NUL byte"):
        vitrt.Model(str(dst) + "\0ignored")
    with pytest.raises(vitrt.FileError, match="cannot open '.*caf\ufffd.missing'"):
        vitrt.Model(b"/nonexistent/caf\xe9.missing")
    image = tmp_path / os.fsdecode(b"caf\xe9.png")
    shutil.copy(SOURCE_DIR / "samples" / "fashion" / "000_ankle_boot.png", image)
    listed = [str(tmp_path / n) for n in os.listdir(tmp_path) if n.endswith(".png")]
    assert listed == [str(image)]
    session = vitrt.Session(model, threads=1)
    rows = session.classify(listed, top_k=10)
    assert rows[0]["image"] == listed[0] and rows[0]["error"] is None
    assert "caf\ufffd" in rows[0]["labels"]
    assert model.preprocess(listed[0]).shape == model.input_shape
    missing = session.classify([str(tmp_path / os.fsdecode(b"gone\xe9.png"))], errors="report")[0]
    assert "gone\ufffd.png" in missing["error"] and missing["image"].endswith("gone\udce9.png")
    with pytest.raises(vitrt.FileError, match="gone\ufffd.png"):
        session.classify(str(tmp_path / os.fsdecode(b"gone\xe9.png")))


def test_options_reported(deit_path):
    model = vitrt.Model(deit_path)
    session = vitrt.Session(model, backend="ref", threads=2)
    assert session.backend == "ref" and session.threads == 2 and session.precision == "fp32"
    session.run(random_batch(model, 5))  # re-planned for batch 5: the threads stay as constructed
    assert session.threads == 2
    assert session.model.path == deit_path
    assert vitrt.Session(model).threads >= 1  # threads=0: every core this process may use


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_leak_over_1000_create_run_free_loops(deit_path):
    x = random_batch(vitrt.Model(deit_path), 1)

    def loop(count: int) -> None:
        for _ in range(count):
            model = vitrt.Model(deit_path)
            session = vitrt.Session(model, threads=1)
            session.run(x)
            session.close()
            del session, model

    loop(100)  # allocator pools and caches reach their steady size
    before = resident_bytes()
    loop(1000)
    growth = resident_bytes() - before
    # One leaked plan (about 0.2 MB of arenas) or mapped model (1.3 MB) per loop would add >= 200 MB.
    assert growth < 8 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over 1000 loops"
