#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The installable package: `cmake --install BUILD --prefix P`, then a program outside the project is built
# against P twice (CMake find_package(vitrt) and pkg-config) and classifies a sample image through the installed
# library; its top-1 label must be PyTorch's (models/fashion_deit/expected.txt). So must the installed Python
# package.
set -uo pipefail
build=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

prefix=$work/prefix
if cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
  ok "cmake --install into a fresh prefix"
else
  bad "cmake --install: $(tail -5 "$work/install.log")"
fi
lib=$(ls "$prefix"/lib*/libvitrt.so.0 "$prefix"/lib/*/libvitrt.so.0 2>/dev/null | head -1)
if [ -n "$lib" ] && [ -f "$prefix/include/vitrt.h" ] && [ -f "$prefix/include/vitrt.hpp" ] &&
   readelf -d "$lib" | grep -q 'SONAME.*libvitrt.so.0'; then
  ok "installed libvitrt.so.0 (versioned SONAME), vitrt.h, vitrt.hpp"
else
  bad "installed tree lacks the library with its SONAME or the headers: $(cd "$prefix" && find . | head -20)"
fi
[ -x "$prefix/bin/vitrt" ] && [ -x "$prefix/bin/vitrt-convert" ] && ok "installed the vitrt and vitrt-convert tools" || bad "no bin/vitrt or bin/vitrt-convert in the installed tree"
libdir=$(dirname "$lib")

model=$work/fashion_deit.vitrt
"$build/bin/vitrt-convert" "$src/models/fashion_deit/fashion_deit.pth" -o "$model" \
  --labels "$src/models/fashion_deit/labels.txt" >/dev/null 2>"$work/convert.err" || bad "convert: $(cat "$work/convert.err")"
image=$src/samples/fashion/000_ankle_boot.png
want=$(awk -F'\t' '$1 == "000_ankle_boot.png" { print $3 }' "$src/models/fashion_deit/expected.txt")

# The installed CLI links libvitrt.so only and finds the installed copy (its RPATH is relative to bin/).
if out=$(env -u LD_LIBRARY_PATH "$prefix/bin/vitrt" inspect "$model" 2>&1) &&
   [ "$(realpath "$(env -u LD_LIBRARY_PATH ldd "$prefix/bin/vitrt" | awk '/libvitrt.so.0/ { print $3 }')")" = \
     "$(realpath "$libdir/libvitrt.so.0")" ]; then
  ok "installed bin/vitrt runs on the installed libvitrt.so.0 ($(printf '%s' "$out" | sed -n 2p | tr -s ' '))"
else
  bad "installed bin/vitrt: $out; $(ldd "$prefix/bin/vitrt" | grep vitrt)"
fi

# A sanitized build's library (tools/test.sh --sanitize sets VITRT_SANITIZED) needs its sanitizer runtime loaded
# first: the consumer is built with the same -fsanitize, as a downstream user of such a build would.
san=()
[ -n "${VITRT_SANITIZED:-}" ] && san=("-fsanitize=$VITRT_SANITIZED")

check_consumer() {  # check_consumer HOW BINARY
  local out
  if out=$(env -u LD_LIBRARY_PATH "$2" "$model" "$image" 2>"$work/err"); then
    if [ "$(printf '%s' "$out" | cut -f1)" = "$want" ]; then
      ok "$1: consumer classifies the sample as '$want' through the installed library ($out)"
    else
      bad "$1: consumer printed '$out', PyTorch's top-1 is '$want'"
    fi
  else
    bad "$1: consumer failed: $(cat "$work/err")"
  fi
}

# 1. CMake: find_package(vitrt) from the installed prefix.
if cmake -S "$src/tests/package" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_BUILD_RPATH="$libdir" -DCMAKE_CXX_FLAGS="${san[*]}" >"$work/cfg.log" 2>&1 &&
   cmake --build "$work/cmake-build" >"$work/build.log" 2>&1; then
  ok "find_package(vitrt) + target vitrt::vitrt build a consumer"
  check_consumer "cmake" "$work/cmake-build/consumer"
else
  bad "CMake consumer build: $(tail -15 "$work/cfg.log" "$work/build.log")"
fi

# 2. pkg-config, with the .pc file found through PKG_CONFIG_PATH only.
pcdir=$(dirname "$(find "$prefix" -name vitrt.pc | head -1)")
if flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs vitrt) &&
   c++ -std=c++17 "${san[@]}" "$src/tests/package/consumer.cpp" -o "$work/consumer-pc" $flags -Wl,-rpath,"$libdir" \
     2>"$work/pc.log"; then
  ok "pkg-config vitrt ($flags) builds a consumer"
  check_consumer "pkg-config" "$work/consumer-pc"
else
  bad "pkg-config consumer build: $(cat "$work/pc.log")"
fi

# 3. The Python package (built where pybind11 is found, never in a sanitized build): the installed copy imports
# without PYTHONPATH tricks beyond the prefix's site dir, finds the installed libvitrt.so.0 through its relative
# rpath, and classifies the sample as PyTorch does.
if [ -d "$build/python/vitrt" ]; then
  site=$(dirname "$(find "$prefix" -path '*-packages/vitrt/__init__.py' | head -1)")
  site=$(dirname "$site")
  if out=$(cd "$work" && env -u LD_LIBRARY_PATH PYTHONPATH="$site" "${VITRT_PYTHON:-/usr/bin/python3}" -c '
import sys, vitrt
m = vitrt.Model(sys.argv[1])
print(vitrt.__file__, vitrt.Session(m, threads=1).classify(sys.argv[2], top_k=1)[0]["labels"][0], sep="\t")
' "$model" "$image" 2>&1) && [ "$(printf '%s' "$out" | cut -f2)" = "$want" ] &&
     case "$(printf '%s' "$out" | cut -f1)" in "$prefix"/*) true ;; *) false ;; esac; then
    ok "installed Python package ($site) classifies the sample as '$want'"
  else
    bad "installed Python package: $out"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
