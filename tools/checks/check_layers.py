#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The include-direction check (docs/architecture.md): a layer may include its own headers and those of the
layers below it, never one above. Every quoted #include of every C/C++/CUDA file in the repository is resolved
the way the build resolves it (the including file's folder first, then the include roots) and both ends are
mapped to their layer. Exit 1, listing each upward include, if there is one.

    tools/checks/check_layers.py [REPO]        # REPO defaults to this file's repository
"""
import os
import re
import sys

# Lowest first. A path belongs to the first layer with a matching prefix.
LAYERS = [
    ("core", ["core/"]),
    ("formats", ["formats/"]),
    ("backends", ["backends/"]),
    ("engine", ["engine/"]),
    ("converter", ["converter/"]),
    ("tools", ["tools/"]),
    ("python", ["python/"]),
    ("tests", ["tests/", "bench/"]),
]
# Where the build looks for a quoted include after the including file's own folder.
INCLUDE_ROOTS = ["", "core", "engine/src", "engine/include", "formats", "converter", "tests"]
SOURCE = re.compile(r"\.(c|cc|cpp|h|hpp|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GENERATED = {"vitrt_generated.h": "formats"}  # flatc output, made in the build tree from formats/schema


def layer_of(path):
    for rank, (name, prefixes) in enumerate(LAYERS):
        if any(path.startswith(p) for p in prefixes):
            return rank, name
    return None


def resolve(repo, src, inc):
    for base in [os.path.dirname(src)] + INCLUDE_ROOTS:
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(repo, cand)):
            return cand
    return None


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    violations, checked = [], 0
    for top, dirs, files in os.walk(repo):
        rel_top = os.path.relpath(top, repo)
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        for f in files:
            if not SOURCE.search(f):
                continue
            src = os.path.normpath(os.path.join(rel_top, f))
            src_layer = layer_of(src)
            if not src_layer:
                continue
            with open(os.path.join(repo, src), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                checked += 1
                if inc in GENERATED:
                    dst_name = GENERATED[inc]
                    dst_rank = [n for n, _ in LAYERS].index(dst_name)
                    target = inc
                else:
                    target = resolve(repo, src, inc)
                    if target is None:
                        continue  # a system or generated header
                    dst = layer_of(target)
                    if not dst:
                        continue
                    dst_rank, dst_name = dst
                if dst_rank > src_layer[0]:
                    violations.append(f"{src} ({src_layer[1]}) includes {target} ({dst_name})")
    for v in violations:
        print("upward include:", v)
    print(f"layers: {' < '.join(n for n, _ in LAYERS)}; {checked} includes checked, {len(violations)} upward")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
