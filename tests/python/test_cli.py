# SPDX-License-Identifier: Apache-2.0
"""Session.classify, vitrt.convert and `python3 -m vitrt`: the same results as the command-line tools
(issue 29)."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import vitrt
from conftest import BINARY_DIR, SOURCE_DIR, tool

SAMPLES = sorted(str(p) for p in (SOURCE_DIR / "samples" / "fashion").glob("*.png"))


def python_m_vitrt(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(BINARY_DIR / "python"))
    return subprocess.run([sys.executable, "-m", "vitrt", *args], capture_output=True, text=True, env=env)


def cli_classify(model_path: str) -> list:
    out = subprocess.run([tool("vitrt"), "classify", "-m", model_path, *SAMPLES, "-k", "3", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["results"]


def test_classify_matches_the_cli(deit_path):
    model = vitrt.Model(deit_path)
    rows = vitrt.Session(model, threads=1).classify(SAMPLES, top_k=3)
    cli = cli_classify(deit_path)
    assert [r["image"] for r in rows] == [c["image"] for c in cli] == SAMPLES
    for row, c in zip(rows, cli):
        assert row["error"] is None
        assert row["indices"] == [t["index"] for t in c["top"]]
        assert row["labels"] == [t["label"] for t in c["top"]]
        # The CLI prints 6 significant digits.
        assert np.allclose(row["probabilities"], [t["probability"] for t in c["top"]], rtol=1e-5, atol=0)
        assert np.allclose(row["logits"], [t["logit"] for t in c["top"]], rtol=1e-5, atol=1e-6)


def test_classify_bytes_equals_paths(deit_path):
    model = vitrt.Model(deit_path)
    session = vitrt.Session(model, threads=1, max_batch=3)  # 8 images in chunks of 3
    by_path = session.classify(SAMPLES)
    data = [open(p, "rb").read() for p in SAMPLES]
    by_bytes = session.classify(data)
    assert [r["image"] for r in by_bytes] == [f"<bytes #{i}>" for i in range(len(SAMPLES))]
    for a, b in zip(by_path, by_bytes):
        assert (a["indices"], a["logits"], a["probabilities"]) == (b["indices"], b["logits"], b["probabilities"])
    assert np.array_equal(model.preprocess(SAMPLES[0]), model.preprocess(bytearray(data[0])))
    assert model.preprocess(SAMPLES[0]).shape == model.input_shape
    one = session.classify(SAMPLES[1], top_k=1)  # a single path
    assert len(one) == 1 and one[0]["labels"] == by_path[1]["labels"][:1]


def test_classify_bad_images(deit_path, tmp_path):
    session = vitrt.Session(vitrt.Model(deit_path), threads=1)
    truncated = open(SAMPLES[0], "rb").read()[:100]
    with pytest.raises(vitrt.BadInputError, match=r"<bytes #1>"):
        session.classify([SAMPLES[0], truncated])
    with pytest.raises(vitrt.FileError, match="nothing.png"):
        session.classify([str(tmp_path / "nothing.png")])
    rows = session.classify([SAMPLES[0], truncated, str(tmp_path / "nothing.png"), SAMPLES[1]], errors="report")
    assert [r["error"] is None for r in rows] == [True, False, False, True]
    assert "<bytes #1>" in rows[1]["error"] and rows[1]["labels"] == []
    assert rows[3]["labels"] == session.classify(SAMPLES[1])[0]["labels"]
    with pytest.raises(vitrt.InvalidArgumentError, match="top_k must be >= 1"):
        session.classify(SAMPLES, top_k=0)
    with pytest.raises(vitrt.InvalidArgumentError, match="errors must be"):
        session.classify(SAMPLES, errors="ignore")


def test_convert_equals_vitrt_convert(shipped_models, tmp_path):
    src = SOURCE_DIR / "models" / "fashion_deit"
    dst = tmp_path / "deit.vitrt"
    summary = vitrt.convert(src / "fashion_deit.pth", dst, labels=src / "labels.txt")
    assert summary.startswith(f"wrote {dst}: deit")
    assert dst.read_bytes() == open(shipped_models["fashion_deit"], "rb").read()
    # Options reach the converter: another preprocessing.
    other = tmp_path / "deit_other.vitrt"
    vitrt.convert(src / "fashion_deit.pth", other, resize=40, crop=32, mean=[0.5] * 3, std=(0.25, 0.25, 0.25),
                  interp="bilinear", verify=False)
    pre = vitrt.Model(other).inspect()["preprocessing"]
    assert (pre["resize_shorter"], pre["crop"], pre["interpolation"]) == (40, (32, 32), "bilinear")
    assert pre["std"] == [0.25] * 3


def test_convert_errors(tmp_path):
    src = SOURCE_DIR / "models" / "fashion_deit"
    with pytest.raises(vitrt.InvalidArgumentError, match="--emit"):
        vitrt.convert(src / "fashion_deit.pth", tmp_path / "x.vitrt", emit="bogus")
    with pytest.raises(vitrt.InvalidArgumentError, match="unknown option 'colour'"):
        vitrt.convert(src / "fashion_deit.pth", tmp_path / "x.vitrt", colour="red")
    with pytest.raises(vitrt.BadModelError, match="missing.pth"):
        vitrt.convert(tmp_path / "missing.pth", tmp_path / "x.vitrt")
    with pytest.raises(vitrt.BadInputError, match="bad labels file"):
        vitrt.convert(src / "fashion_deit.pth", tmp_path / "x.vitrt", labels=tmp_path / "missing.txt")
    assert not (tmp_path / "x.vitrt").exists()


def test_python_m_vitrt_mirrors_the_cli(deit_path, tmp_path):
    r = python_m_vitrt("classify", "-m", deit_path, *SAMPLES, "-k", "3", "--json", "--threads", "1")
    assert r.returncode == 0, r.stderr
    cli = subprocess.run([tool("vitrt"), "classify", "-m", deit_path, *SAMPLES, "-k", "3", "--json",
                          "--threads", "1"], capture_output=True, text=True)
    assert r.stdout == cli.stdout
    x = np.random.default_rng(5).standard_normal((2, 3, 32, 32), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    r = python_m_vitrt("run", "-m", deit_path, "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "y.npy"), vitrt.Session(vitrt.Model(deit_path), threads=1).run(x))
    r = python_m_vitrt("bench", "-m", deit_path, "--repeat", "2", "--warmup", "1", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["rows"][0]["batch"] == 1
    src = SOURCE_DIR / "models" / "fashion_deit"
    r = python_m_vitrt("convert", str(src / "fashion_deit.pth"), "-o", str(tmp_path / "m.vitrt"))
    assert r.returncode == 0 and r.stdout.startswith("wrote") and (tmp_path / "m.vitrt").exists()
    # Exit codes are the tools': usage 1, bad model 2, bad input 3.
    assert python_m_vitrt("classify").returncode == 1
    assert python_m_vitrt("classify", "-m", str(tmp_path / "x.npy"), SAMPLES[0]).returncode == 2
    r = python_m_vitrt("run", "-m", deit_path, "-i", str(tmp_path / "nothing.npy"), "-o", str(tmp_path / "o.npy"))
    assert r.returncode == 3 and "nothing.npy" in r.stderr
    assert python_m_vitrt("convert", "--emit", "x").returncode == 1


def test_convert_onnx(tmp_path):
    """An ONNX export (the onnx_cases fixture's 2-layer DeiT) through vitrt.convert: the same file as
    vitrt-convert writes, and PyTorch's logits."""
    fixtures = pathlib.Path(os.environ.get("VITRT_FIXTURE_DIR", BINARY_DIR / "fixtures"))
    case = fixtures / "onnx_cases" / "deit_tiny_2layer"
    if not (case / "opset17.onnx").exists():
        pytest.skip(f"{case} not made (ctest fixture_onnx_cases)")
    dst = tmp_path / "onnx.vitrt"
    assert vitrt.convert(case / "opset17.onnx", dst).startswith(f"wrote {dst}")
    subprocess.run([tool("vitrt-convert"), str(case / "opset17.onnx"), "-o", str(tmp_path / "cli.vitrt")],
                   check=True, capture_output=True)
    assert dst.read_bytes() == (tmp_path / "cli.vitrt").read_bytes()
    x = np.load(case / "input.npy")
    y = vitrt.Session(vitrt.Model(dst), threads=1).run(x)
    assert np.allclose(y, np.load(case / "logits_f32.npy"), rtol=1e-4, atol=1e-4)
