#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command: installs what is missing, builds into build/, runs every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh -DVITRT_BUILD_TESTS=ON
jobs=$(nproc 2>/dev/null || echo 2)
cd build
ctest --output-on-failure -j"$jobs" --timeout 1800
