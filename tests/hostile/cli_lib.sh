#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared helpers of the tests/hostile/cli_*.sh scripts. Source it after setting `build`; it sets `bin`, a private
# `work` folder removed on exit, and ok/bad/expect_exit/finish.
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# expect_exit CODE PATTERN DESCRIPTION -- command...: the command exits with CODE within 60 s and stderr matches
# PATTERN (extended regex). A hang counts as a failure (timeout's exit 124).
expect_exit() {
  local want=$1 pattern=$2 what=$3
  shift 4
  timeout 60 "$@" >"$work/out" 2>"$work/err" </dev/null
  local got=$?
  if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$work/err"; then
    ok "$what (exit $got: $(head -c 200 "$work/err" | tr '\n' ' '))"
  else
    bad "$what: exit $got (want $want), stderr: $(head -c 400 "$work/err")"
  fi
}

# Address-space caps (ulimit -v) prove that a reader refuses a crafted header before allocating what it declares.
# Under ASan (tools/test.sh --sanitize exports VITRT_SANITIZED) the cap would stop the sanitizer reserving its
# shadow memory, so sanitized runs go uncapped; the checks still see the refusal (ASan itself aborts on a huge
# allocation), and a check that needs the cap to fail an allocation asks `sanitized` and is skipped.
sanitized() { [ -n "${VITRT_SANITIZED:-}" ]; }
# KiB of address space a binary's shared libraries map before main (file sizes of what ldd resolves): caps are a
# budget on top of it, so a build that links large libraries (-DVITRT_CUDA=ON links cuBLAS, ~0.5 GB of
# libcublasLt) still starts under them, and the budget itself is the same in every build.
shared_libs_kib() {
  local total=0 lib
  for lib in $(ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
    total=$((total + $(stat -Lc %s "$lib") / 1024))
  done
  echo "$total"
}

# finish: prints the count line and exits non-zero when anything failed.
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
