# SPDX-License-Identifier: Apache-2.0
"""vitrt.convert(): vitrt-convert in-process (the converter's own command line and code,
converter/convert_command.h).

    vitrt.convert("deit.pth", "deit.vitrt", labels="labels.txt")
    vitrt.convert("model.onnx", "model.vitrt")                   # ONNX, recognised by its content
"""
import os
from typing import Any, Sequence, Union

from .errors import BadInputError, BadModelError, ExecutionError, InvalidArgumentError

__all__ = ["convert", "OPTIONS"]

# Keyword -> vitrt-convert flag (`vitrt-convert --help` says what each means).
OPTIONS = {
    "arch": "--arch",
    "labels": "--labels",
    "image_size": "--image-size",
    "emit": "--emit",
    "attn": "--attn",
    "heads": "--heads",
    "resize": "--resize",
    "crop": "--crop",
    "interp": "--interp",
    "interpolation": "--interp",
    "mean": "--mean",
    "std": "--std",
    "verify": None,  # verify=False: --no-verify
}

_ERRORS = {1: InvalidArgumentError, 2: BadModelError, 3: BadInputError}


def _flag_value(name: str, value: Any) -> Union[str, bytes]:
    if isinstance(value, (list, tuple)):
        return ",".join(_flag_value(name, v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float, os.PathLike)):
        raise InvalidArgumentError(
            f"vitrt.convert: {name}={value!r}: expected a str, number, path or a list of them")
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


Path = Union[str, bytes, os.PathLike]  # a str is encoded as os.fsencode does (surrogateescape)


def command_line(src: Path, dst: Path, **options: Any) -> Sequence[Union[str, bytes]]:
    """The vitrt-convert arguments (without the program name) that convert(src, dst, **options) runs."""
    args = [os.fspath(src), "-o", os.fspath(dst)]
    for name, value in options.items():
        if name not in OPTIONS:
            raise InvalidArgumentError(f"vitrt.convert: unknown option '{name}' (known: {', '.join(OPTIONS)})")
        if name == "verify":
            if not isinstance(value, bool):
                raise InvalidArgumentError(f"vitrt.convert: verify={value!r}: expected True or False")
            if not value:
                args.append("--no-verify")
        elif value is not None:
            args += [OPTIONS[name], _flag_value(name, value)]
    return args


def convert(src: Path, dst: Path, **options: Any) -> str:
    """Converts a PyTorch checkpoint (.pth zip, .safetensors) or an ONNX model into a .vitrt model file.

    The keywords are vitrt-convert's flags (arch, labels, image_size, emit, attn, heads, resize, crop, interp,
    mean, std; lists for the comma-separated ones; verify=False skips the verification). Returns what
    vitrt-convert prints on success ("wrote DST: ARCH, N ops, M MB of weights"). A failure raises the class of
    its exit code (InvalidArgumentError for a bad option, BadModelError for a bad checkpoint, BadInputError for a
    bad labels file, ExecutionError otherwise) with the converter's message. Paths may be str (a name os.listdir
    gives with undecodable bytes works), bytes or os.PathLike; bytes in the converter's output that are not UTF-8
    (a checkpoint key, a file name) come back as U+FFFD.
    """
    from . import _convert  # the converter and its engine copy load on first use

    rc, out, err = _convert.convert_command(["vitrt-convert", *command_line(src, dst, **options)])
    if rc != 0:
        lines = [line for line in err.splitlines() if line.startswith("vitrt-convert:")]
        raise _ERRORS.get(rc, ExecutionError)("\n".join(lines) if lines else err.strip())
    return out.strip()
