#!/usr/bin/python3
"""Fashion-MNIST helpers: an IDX reader (plain or gzipped files) and an ImageFolder exporter.

Data: Debian's `dataset-fashion-mnist` package (apt-get install -y dataset-fashion-mnist) installs
/usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz; --data-dir overrides.

    /usr/bin/python3 tools/train/fashion_mnist.py --export-imagefolder /tmp/fm_test --split test [--limit 500]

writes DIR/<class_slug>/<index>.png (28x28 grayscale, index = position in the split, zero-padded to 5 digits) and
DIR/labels.txt (the class names in class order). Class slugs are the lower-cased names with every run of
non-alphanumerics turned into '_' (see CLASS_SLUGS), e.g. 'T-shirt/top' -> 't_shirt_top'.
"""
import argparse
import gzip
import os
import re
import struct
import sys

import numpy as np

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


CLASS_SLUGS = [slug(c) for c in CLASSES]
_PREFIX = {"train": "train", "test": "t10k"}


def _open(path):
    if os.path.exists(path):
        return open(path, "rb")
    if os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rb")
    raise FileNotFoundError(f"{path}[.gz] not found (apt-get install -y dataset-fashion-mnist, or pass --data-dir)")


def read_idx(path):
    """Reads an IDX file (unsigned-byte payload) into a numpy array; `path` may omit a trailing .gz."""
    if path.endswith(".gz"):
        path = path[:-3]
    with _open(path) as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {data[:4].hex()})")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {arr.size} bytes of payload, header says {dims}")
    return arr.reshape(dims)


def load_split(split="train", data_dir=DEFAULT_DATA_DIR):
    """Returns (images uint8 [N,28,28], labels int64 [N]) of the 'train' (60k) or 'test' (10k) split."""
    p = _PREFIX[split]
    images = read_idx(os.path.join(data_dir, f"{p}-images-idx3-ubyte"))
    labels = read_idx(os.path.join(data_dir, f"{p}-labels-idx1-ubyte")).astype(np.int64)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{split}: {images.shape[0]} images but {labels.shape[0]} labels")
    return images, labels


def export_imagefolder(out_dir, split="test", data_dir=DEFAULT_DATA_DIR, limit=None):
    from PIL import Image
    images, labels = load_split(split, data_dir)
    n = len(images) if limit is None else min(limit, len(images))
    for s in CLASS_SLUGS:
        os.makedirs(os.path.join(out_dir, s), exist_ok=True)
    for i in range(n):
        Image.fromarray(images[i], mode="L").save(os.path.join(out_dir, CLASS_SLUGS[labels[i]], f"{i:05d}.png"))
    with open(os.path.join(out_dir, "labels.txt"), "w") as f:
        f.write("\n".join(CLASSES) + "\n")
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    ap.add_argument("--export-imagefolder", metavar="DIR", help="write the split as DIR/<class_slug>/<index>.png")
    ap.add_argument("--split", choices=["train", "test"], default="test")
    ap.add_argument("--limit", type=int, default=None, help="export only the first N images of the split")
    a = ap.parse_args(argv)
    if a.export_imagefolder:
        n = export_imagefolder(a.export_imagefolder, a.split, a.data_dir, a.limit)
        print(f"wrote {n} {a.split} images to {a.export_imagefolder}/<class>/<index>.png")
    else:
        for split in ("train", "test"):
            x, y = load_split(split, a.data_dir)
            print(f"{split}: images {x.shape} {x.dtype}, labels {y.shape}, per class {np.bincount(y).tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
