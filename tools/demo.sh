#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first command of the README: installs the build dependencies, builds vitrt, converts the bundled
# PyTorch checkpoint (a small DeiT trained on Fashion-MNIST, models/fashion_deit/) with vitrt-convert, and
# classifies the bundled sample images (samples/fashion/), printing the top-3 labels with probabilities.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --build
tools/build.sh -DVITRT_BUILD_TESTS=OFF >/dev/null
echo
echo "== converting models/fashion_deit/fashion_deit.pth"
build/bin/vitrt-convert models/fashion_deit/fashion_deit.pth -o build/fashion_deit.vitrt \
  --labels models/fashion_deit/labels.txt
echo
echo "== classifying samples/fashion/"
build/bin/vitrt classify -m build/fashion_deit.vitrt samples/fashion -k 3
echo
echo "expected (PyTorch on the same files): samples/fashion/expected.txt"
