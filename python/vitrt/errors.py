# SPDX-License-Identifier: Apache-2.0
"""vitrt's exceptions: one class per status code of the C API (engine/include/vitrt.h), all under vitrt.Error.

Each carries the library's message (naming the file, tensor or op involved), ``status`` (the C status code) and
``exit_code`` (what the command-line tools exit with for it). They also derive from the builtin exception a
Python caller would expect (ValueError for a bad argument or input, MemoryError, OSError), so either catches them.
"""

__all__ = [
    "Error",
    "InvalidArgumentError",
    "BadModelError",
    "BadInputError",
    "UnsupportedError",
    "OutOfMemoryError",
    "ExecutionError",
    "FileError",
    "error_class",
]


class Error(Exception):
    """Any failure reported by vitrt."""

    status = 0
    exit_code = 4  # a runtime failure, unless a subclass says otherwise


class InvalidArgumentError(Error, ValueError):
    """VITRT_ERR_INVALID_ARGUMENT: an out-of-range option or argument, or a closed session used."""

    status = 1
    exit_code = 1


class BadModelError(Error):
    """VITRT_ERR_BAD_MODEL: the model file is corrupt, truncated or inconsistent."""

    status = 2
    exit_code = 2


class BadInputError(Error, ValueError):
    """VITRT_ERR_BAD_INPUT: an input (image, array, batch) is unusable: wrong dtype or shape, NaN..."""

    status = 3
    exit_code = 3


class UnsupportedError(Error):
    """VITRT_ERR_UNSUPPORTED: valid, but not supported by this build (an op version, a backend)."""

    status = 4
    exit_code = 4


class OutOfMemoryError(Error, MemoryError):
    """VITRT_ERR_OUT_OF_MEMORY: a plan or buffer larger than the memory allowed."""

    status = 5
    exit_code = 4


class ExecutionError(Error):
    """VITRT_ERR_RUNTIME: a failure while running."""

    status = 6
    exit_code = 4


class FileError(Error, OSError):
    """VITRT_ERR_IO: a file could not be read (missing, unreadable)."""

    status = 7
    exit_code = 3


_BY_STATUS = {c.status: c for c in (InvalidArgumentError, BadModelError, BadInputError, UnsupportedError,
                                    OutOfMemoryError, ExecutionError, FileError)}


def error_class(status: int) -> type:
    """The exception class for a C status code (vitrt.Error for an unknown one)."""
    return _BY_STATUS.get(status, Error)
