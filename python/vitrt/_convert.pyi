# SPDX-License-Identifier: Apache-2.0
"""Type stubs of vitrt._convert (python/convert/convert_module.cpp): vitrt-convert in-process."""
from typing import Sequence, Tuple

def convert_command(argv: Sequence[str]) -> Tuple[int, str, str]: ...
