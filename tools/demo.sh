#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first command of the README: installs the build dependencies, builds vitrt, converts the bundled
# PyTorch checkpoint (a small SOFT trained on Fashion-MNIST, models/fashion_soft/) with vitrt-convert, and
# classifies the bundled sample images (samples/fashion/), printing the top-3 labels with probabilities.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --build
tools/build.sh -DVITRT_BUILD_TESTS=OFF >/dev/null
echo
echo "== converting models/fashion_soft/fashion_soft.pth"
build/bin/vitrt-convert models/fashion_soft/fashion_soft.pth -o build/fashion_soft.vitrt \
  --labels models/fashion_soft/labels.txt
echo
echo "== classifying samples/fashion/"
build/bin/vitrt classify -m build/fashion_soft.vitrt samples/fashion -k 3
echo
echo "expected (PyTorch on the same files): models/fashion_soft/expected.txt"
