#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Converts a PyTorch-made DeiT fixture, corrupts a copy, and runs the C example against both; then the calls of
# API versions 3 to 5 (capi_info.c) on the same model, a sample image and the fixture's input.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
cases=$build/fixtures/model_cases/deit_2layer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bin/vitrt-convert" "$cases/model.pth" -o "$work/m.vitrt" --labels "$cases/labels.txt" >/dev/null
cp "$work/m.vitrt" "$work/bad.vitrt"
printf '\xff' | dd of="$work/bad.vitrt" bs=1 seek=20000 conv=notrunc status=none
"$build/bin/vitrt_capi_example" "$work/m.vitrt" "$cases/input.npy" "$cases/logits_f64.npy" "$work/bad.vitrt"
"$build/bin/vitrt_capi_info" "$work/m.vitrt" "$cases/input.npy" "$src/samples/fashion/000_ankle_boot.png" "$work"
