# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python package's tests: the build's tools and the shipped models, converted once.

ctest runs these with PYTHONPATH=<build>/python and VITRT_BINARY_DIR / VITRT_SOURCE_DIR set (tests/CMakeLists.txt).
"""
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("VITRT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BINARY_DIR = pathlib.Path(os.environ.get("VITRT_BINARY_DIR", SOURCE_DIR / "build"))
SHIPPED_MODELS = ("fashion_deit", "fashion_soft", "fashion_lavit")


def tool(name: str) -> str:
    path = BINARY_DIR / "bin" / name
    if not path.exists():
        pytest.skip(f"{path} is not built")
    return str(path)


@pytest.fixture(scope="session")
def shipped_models(tmp_path_factory) -> dict:
    """models/fashion_*/*.pth converted with vitrt-convert (with their labels): name -> .vitrt path."""
    out = tmp_path_factory.mktemp("models")
    models = {}
    for name in SHIPPED_MODELS:
        src = SOURCE_DIR / "models" / name
        dst = out / f"{name}.vitrt"
        subprocess.run([tool("vitrt-convert"), str(src / f"{name}.pth"), "-o", str(dst), "--labels",
                        str(src / "labels.txt")], check=True, capture_output=True)
        models[name] = str(dst)
    return models


@pytest.fixture(scope="session")
def deit_path(shipped_models) -> str:
    return shipped_models["fashion_deit"]
