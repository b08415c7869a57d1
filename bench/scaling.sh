#!/bin/sh
# Scaling of the attention mechanisms with tokens, vitrt vs PyTorch eager (issue 24; bench/scaling.py says what is
# measured). Usage: bench/scaling.sh [BUILD_DIR] [scaling.py options]
#   bench/scaling.sh build                          every mechanism at 196, 784, 3136, 12544 tokens (writes docs/)
#   bench/scaling.sh build --tokens 196,784 --out /tmp/s   a quick look
# Needs BUILD/bin/vitrt and vitrt-convert, /usr/bin/python3 with torch, onnx and matplotlib (tools/setup.sh --bench).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$HERE/../build}
[ $# -gt 0 ] && shift
BUILD=$(cd "$BUILD" && pwd)
for t in vitrt vitrt-convert; do
  [ -x "$BUILD/bin/$t" ] || { echo "missing $BUILD/bin/$t: cmake --build $BUILD --target vitrt_cli vitrt-convert" >&2; exit 1; }
done
exec /usr/bin/python3 "$HERE/scaling.py" --build "$BUILD" "$@"
