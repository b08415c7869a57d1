#!/bin/sh
# vitrt.dask against the CLI on the same images (issue 29; bench/python_dask.py says what is measured).
# Usage: bench/python_dask.sh [BUILD_DIR] [python_dask.py options]
#   bench/python_dask.sh build                      Fashion-MNIST test set (10,000 PNGs) and the same as JPEGs
#   bench/python_dask.sh build --limit 2000 --rounds 3   a quicker look
# Needs BUILD/bin/vitrt, vitrt-convert and BUILD/python/vitrt (the Python package), /usr/bin/python3 with
# python3-distributed and python3-pil, and the dataset-fashion-mnist package (apt-get install -y dataset-fashion-mnist).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$HERE/../build}
[ $# -gt 0 ] && shift
BUILD=$(cd "$BUILD" && pwd)
for t in vitrt vitrt-convert; do
  [ -x "$BUILD/bin/$t" ] || { echo "missing $BUILD/bin/$t: cmake --build $BUILD --target vitrt_cli vitrt-convert" >&2; exit 1; }
done
[ -d "$BUILD/python/vitrt" ] || { echo "missing $BUILD/python/vitrt: the Python package is built when pybind11 is found (tools/setup.sh)" >&2; exit 1; }
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 "$HERE/python_dask.py" --build "$BUILD" "$@"
