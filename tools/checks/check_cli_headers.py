#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The CLI uses only the public API (docs/architecture.md, "The C API"): every file of tools/vitrt/ may include
its own headers (tools/vitrt/*), the public headers (engine/include/vitrt.h, vitrt.hpp), and headers from outside
the repository (the C++ library, POSIX, CLI11, nlohmann_json); never another header of this repository. The build
enforces the same thing (vitrt_cli links libvitrt.so only and sees only engine/include), this check names the
file and the include. Exit 1, listing each offending include, if there is one.

    tools/checks/check_cli_headers.py [REPO]       # REPO defaults to this file's repository
    tools/checks/check_cli_headers.py --self-test [REPO]  # first proves the check fails on an internal include
"""
import os
import re
import sys
import tempfile

CLI_DIR = "tools/vitrt"
PUBLIC = {"engine/include/vitrt.h", "engine/include/vitrt.hpp"}
# Where a header of this repository could be found by any of its targets' include paths.
INCLUDE_ROOTS = ["", "core", "engine/src", "engine/include", "formats", "converter", "backends", "tests", "tools"]
SOURCE = re.compile(r"\.(c|cc|cpp|h|hpp)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def resolve(repo, src, inc, quoted):
    bases = ([os.path.dirname(src)] if quoted else []) + INCLUDE_ROOTS
    for base in bases:
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(repo, cand)):
            return cand
    return None


def check(repo):
    violations, checked = [], 0
    for top, _, files in os.walk(os.path.join(repo, CLI_DIR)):
        for f in sorted(files):
            if not SOURCE.search(f):
                continue
            src = os.path.relpath(os.path.join(top, f), repo)
            with open(os.path.join(repo, src), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for kind, inc in INCLUDE.findall(text):
                checked += 1
                target = resolve(repo, src, inc, kind == '"')
                if target is None:
                    if kind == '"':
                        violations.append(f"{src} includes \"{inc}\", which is not in tools/vitrt/ or public")
                    continue  # a system or third-party header
                if target in PUBLIC or target.startswith(CLI_DIR + "/"):
                    continue
                violations.append(f"{src} includes {target}, not a public header (vitrt.h, vitrt.hpp)")
    return violations, checked


def self_test():
    with tempfile.TemporaryDirectory() as repo:
        for path, text in {
            "engine/include/vitrt.hpp": "",
            "engine/src/runtime/session.h": "",
            "tools/vitrt/good.cpp": '#include "vitrt.hpp"\n#include <vector>\n',
            "tools/vitrt/bad.cpp": '#include "runtime/session.h"\n',
        }.items():
            os.makedirs(os.path.join(repo, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(repo, path), "w") as fh:
                fh.write(text)
        violations, _ = check(repo)
        ok = len(violations) == 1 and "bad.cpp" in violations[0] and "engine/src/runtime/session.h" in violations[0]
        print("self-test:", "ok" if ok else "FAILED", violations)
        return 0 if ok else 1


def main():
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        if self_test():
            return 1
        args = args[1:]
    repo = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "..", ".."))
    violations, checked = check(repo)
    for v in violations:
        print("non-public include:", v)
    print(f"{CLI_DIR}: {checked} includes checked, {len(violations)} outside the public API")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
