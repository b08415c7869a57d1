#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds vitrt into build/ (binaries in build/bin, libvitrt.so in build/lib).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$jobs"
