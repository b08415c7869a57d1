#!/bin/sh
# Installs onnxruntime-node@1.30.0 into DIR/node_modules on first use (bench/compare.sh, bench/onnx_vs_ort.sh).
# --ignore-scripts: its install script downloads GPU binaries and fails offline; the CPU library is in the package.
# Usage: bench/install_ort_node.sh DIR   (e.g. BUILD/bench-node; never committed)
set -e
DIR=${1:?usage: install_ort_node.sh DIR}
if [ ! -d "$DIR/node_modules/onnxruntime-node" ]; then
  mkdir -p "$DIR"
  (cd "$DIR" && npm install --silent --no-audit --no-fund onnxruntime-node@1.30.0 --ignore-scripts >&2)
fi
