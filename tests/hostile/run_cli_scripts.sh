#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every tests/hostile/cli_*.sh (hostile inputs through the command-line tools, one script per input class)
# and fails if any of them fails. Each script prints "ok ..." / "FAIL ..." lines and exits non-zero on a failure.
set -uo pipefail
build=$1
fixtures=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for script in "$here"/cli_*.sh; do
  [ -e "$script" ] || continue
  echo "== $(basename "$script")"
  if ! bash "$script" "$build" "$fixtures"; then
    echo "FAIL $(basename "$script")"
    status=1
  fi
done
exit $status
