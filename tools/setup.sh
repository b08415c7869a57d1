#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything vitrt needs to build and test, from Debian's packages. Idempotent: when every package is
# already installed it does nothing; otherwise (as root, or through sudo) `apt-get update` then install.
#   tools/setup.sh            build + test dependencies
#   tools/setup.sh --build    build dependencies only (what tools/demo.sh needs)
#   tools/setup.sh --bench    build + test dependencies and what bench/compare.sh's peers need to run at their best
#   tools/setup.sh --fuzz     build dependencies and the clang/libFuzzer that tools/fuzz.sh builds with
set -euo pipefail

packages=(
  build-essential cmake pkg-config           # toolchain
  libflatbuffers-dev flatbuffers-compiler    # the .vitrt model format (schema + verifier)
  libxsimd-dev xtl-dev                       # portable SIMD for the fast CPU backend (xsimd needs xtl)
  doctest-dev                                # unit tests
  libcli11-dev                               # command-line parsing of vitrt / vitrt-convert
  nlohmann-json3-dev                         # safetensors headers and JSON test manifests
  libzip-dev                                 # torch.save checkpoints are zip archives
  libpng-dev libjpeg-dev                     # image decoding (libjpeg-turbo: the decoder PIL uses)
  libonnx-dev libprotobuf-dev                # ONNX import: ONNX's generated ModelProto classes over protobuf
  python3-dev pybind11-dev python3-pybind11  # the `vitrt` Python package (python/; skipped when missing)
)
test_packages=(
  python3-torch python3-numpy python3-pil    # the PyTorch/PIL references the tests compare against
  libopenblas0-openmp                        # torch's BLAS for the reference fixtures: without it Debian's torch
                                             # runs on the reference BLAS, 7x slower here (the zoo fixture's
                                             # ViT-B/16 alone took 540 s of CI's time); it is also the BLAS of
                                             # PyTorch's tuned configuration (bench/compare.py)
  python3-skimage                            # natural photos (astronaut, chelsea, coffee...): PIL parity, zoo calibration
  python3-torchvision                        # torchvision's models exported for the zoo test (tests/onnx/zoo_test.cpp)
  python3-onnx                               # torch.onnx.export of the reference models (tests/onnx)
  libonnx-testdata                           # ONNX's backend conformance cases (tests/onnx)
  python3-pytest                             # the Python package's tests (tests/python)
  python3-dask python3-distributed           # vitrt.dask and its tests on a LocalCluster (issue 29)
  dataset-fashion-mnist                      # the test split for tests/cli/bf16_agreement.sh (skips without it)
)
bench_packages=(
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers  # optional oneDNN: vitrt_gemm_ceiling (compare.sh's GEMM ceiling),
                                                   # vitrt_gemm_compare and VITRT_X86_ONEDNN=1 (its CMake config
                                                   # needs OpenCL); reconfigure the build after installing
  python3-matplotlib                         # bench/scaling.sh's plot (docs/scaling.png)
)
fuzz_packages=(
  clang-16 libfuzzer-16-dev libclang-rt-16-dev  # libFuzzer and the ASan/UBSan runtimes (tools/fuzz.sh)
  libomp-16-dev                              # clang's OpenMP (the x86 backend's loops; gcc's is libgomp)
  llvm-16                                    # llvm-symbolizer: sanitizer stacks with file:line
)
if [ "${1:-}" != "--build" ] && [ "${1:-}" != "--fuzz" ]; then
  packages+=("${test_packages[@]}")
fi
if [ "${1:-}" = "--bench" ]; then
  packages+=("${bench_packages[@]}")
fi
if [ "${1:-}" = "--fuzz" ]; then
  packages+=("${fuzz_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo=(sudo); else
    echo "setup: need root to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
