#!/bin/sh
# vitrt vs ONNX Runtime on the same .onnx files (issue 28's benchmark): DeiT-Tiny (the project's reference model),
# torchvision vit_b_16, swin_t, convnext_tiny, resnet50, mobilenet_v3_large, efficientnet_b0 (opset 17, dynamic
# batch, random init), batch 1 latency and batch 8 throughput, 2 threads, alternating rounds, logits compared.
# Usage: bench/onnx_vs_ort.sh [BUILD_DIR] [onnx_vs_ort.py options]
#   bench/onnx_vs_ort.sh build                 the default suite (about 10-15 min on 2 cores, exports included)
#   bench/onnx_vs_ort.sh build --quick         smoke run: deit_tiny, resnet50, mobilenet_v3_large, 2 short rounds
#   bench/onnx_vs_ort.sh build --models vit_b_16 --rounds 7 --profile-misses [--onnx-dir DIR] [--json]
# Exports and converted models are cached in BUILD/bench-work/onnx_zoo (--cache); onnxruntime-node@1.30.0 is
# installed into BUILD/bench-node on first use. Needs BUILD/bin/vitrt and vitrt-convert, node and /usr/bin/python3
# with torch, torchvision and numpy.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$HERE/../build}
[ $# -gt 0 ] && shift
BUILD=$(cd "$BUILD" && pwd)
for t in vitrt vitrt-convert; do
  [ -x "$BUILD/bin/$t" ] || { echo "missing $BUILD/bin/$t: cmake --build $BUILD --target vitrt_cli vitrt-convert" >&2; exit 1; }
done
"$HERE/install_ort_node.sh" "$BUILD/bench-node"
exec /usr/bin/python3 "$HERE/onnx_vs_ort.py" --build "$BUILD" "$@"
