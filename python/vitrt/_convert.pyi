# SPDX-License-Identifier: Apache-2.0
"""Type stubs of vitrt._convert (python/convert/convert_module.cpp): vitrt-convert in-process."""
import os
from typing import Sequence, Tuple, Union

def convert_command(argv: Sequence[Union[str, bytes, os.PathLike]]) -> Tuple[int, str, str]: ...
