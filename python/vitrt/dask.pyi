import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

PathLike = Union[str, bytes, "os.PathLike[str]"]

IMAGE_EXTENSIONS: tuple
MEMORY_FRACTION: float
PARTITIONS_PER_THREAD: int
MAX_PARTITION: int

class ClassifyReport(Dict[str, Any]):
    total: int
    resumed: int
    retried: int
    written: int
    errors: int
    error_rows: int
    partitions: int
    partition_size: int
    seconds: float
    images_per_s: float

def list_images(folder: PathLike) -> List[str]: ...
def partition_size(
    n_items: int,
    item_bytes: int,
    workers: Sequence[Mapping[str, Any]],
    per_thread: int = ...,
    max_items: int = ...,
) -> int: ...
def read_table(path: PathLike, fmt: Optional[str] = ...) -> List[Dict[str, Any]]: ...
def classify(
    client: Any,
    source: Union[PathLike, Sequence[PathLike], np.ndarray, Any],
    model_path: PathLike,
    out: PathLike,
    top_k: int = ...,
    *,
    backend: str = ...,
    threads: int = ...,
    precision: str = ...,
    batch_size: int = ...,
    partition_size: Optional[int] = ...,
    retries: int = ...,
    resume: bool = ...,
    retry_errors: bool = ...,
    progress: bool = ...,
    ship_model: bool = ...,
    format: Optional[str] = ...,
    on_progress: Optional[Callable[[int, int], None]] = ...,
) -> ClassifyReport: ...
