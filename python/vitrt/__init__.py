# SPDX-License-Identifier: Apache-2.0
"""vitrt: inference for efficient vision transformers, from Python.

    import numpy as np, vitrt
    model = vitrt.Model("fashion_deit.vitrt")
    with vitrt.Session(model, threads=2) as session:
        logits = session.run(np.zeros((8, *model.input_shape), np.float32))   # [8, classes]
        session.classify(["shirt.png", "boot.jpg"], top_k=3)                   # labels, probabilities
    vitrt.convert("deit.pth", "deit.vitrt", labels="labels.txt")               # vitrt-convert's flags

The package is a thin layer over libvitrt.so's C API (engine/include/vitrt.hpp); errors are vitrt.Error
subclasses carrying the library's message.
"""

from .errors import (BadInputError, BadModelError, Error, ExecutionError, FileError, InvalidArgumentError,
                     OutOfMemoryError, UnsupportedError)
from ._vitrt import Model, Session, __version__
from .convert import convert

__all__ = [
    "Model",
    "Session",
    "convert",
    "Error",
    "InvalidArgumentError",
    "BadModelError",
    "BadInputError",
    "UnsupportedError",
    "OutOfMemoryError",
    "ExecutionError",
    "FileError",
    "__version__",
]
