#!/bin/sh
# vitrt vs PyTorch (tuned) vs ONNX Runtime in one run. Usage: bench/compare.sh [BUILD_DIR] [compare.py options]
#   e.g. bench/compare.sh build --repeat 20   (the default suite: DeiT-Tiny, SOFT-Tiny, lavit_tiny, PVT v2-b0 at
#   batch 1 and 8, SOFT-Tiny at 448² and 896² batch 1) [--json] [--model 'soft_448=soft_tiny:{"img_size":448}@1']
#   [--precision bf16]: vitrt bf16 next to vitrt fp32, with PyTorch bf16 autocast as a peer.
# Installs onnxruntime-node@1.30.0 (--ignore-scripts) into BUILD_DIR/bench-node on first use (never committed).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$HERE/../build}
[ $# -gt 0 ] && shift
BUILD=$(cd "$BUILD" && pwd)
"$HERE/../tools/setup.sh" --bench >&2  # the peers' tuned configuration (OpenBLAS-OpenMP for PyTorch)
"$HERE/install_ort_node.sh" "$BUILD/bench-node"
for t in vitrt vitrt-convert; do
  [ -x "$BUILD/bin/$t" ] || { echo "missing $BUILD/bin/$t: cmake --build $BUILD --target vitrt_cli vitrt-convert vitrt_gemm_ceiling" >&2; exit 1; }
done
# The GEMM ceiling is measured with oneDNN: built only when it is installed (compare.py says so if absent).
[ -x "$BUILD/bin/vitrt_gemm_ceiling" ] || echo "note: no $BUILD/bin/vitrt_gemm_ceiling (needs oneDNN, which setup.sh --bench installs: reconfigure $BUILD and build it for a GEMM ceiling)" >&2
exec /usr/bin/python3 "$HERE/compare.py" --build "$BUILD" "$@"
