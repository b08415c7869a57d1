#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""Fits the piecewise polynomials of the table GELUs and prints a coefficient table.

g(a) = erf(a/sqrt(2))/2 = Phi(a) - 1/2 for a = |x| >= 0 (so GELU(x) = x/2 + |x|*g(|x|)), on N intervals of
width h centred on n*h (n = round(a/h), t = a/h - n in [-1/2, 1/2]): a degree-D polynomial in t per interval,
least squares on 40 Chebyshev nodes; interval 0 is odd (odd powers of t only, fitted for relative error, so
that erf keeps its relative accuracy near 0); the last interval (where erf(a/sqrt(2)) rounds to 1 in float)
is the constant 1/2. Then it checks the table in float32 arithmetic (one rounding per fused multiply-add, as
the kernels compute) against math.erf on a dense sweep and prints the largest errors.

Two tables, one per ISA's permute:
  avx512  N = 32, h = 3/16, D = 4: two 16-lane vpermt2ps per coefficient (backends/cpu/x86/gelu_table_avx512.h)
  avx2    N = 8,  h = 7/8,  D = 7: one 8-lane vpermps per coefficient (backends/cpu/x86/gelu_table_avx2.h)

Usage: /usr/bin/python3 tools/fit_gelu_table.py [avx512|avx2]   (needs numpy; default avx512)

The least-squares solve may differ in the last digit or two of the smallest coefficients (|c| < 2e-7) from one
numpy / LAPACK build to another: gelu_table_avx512.h holds the table of the build that fitted it, within the
same error bounds.
"""
import math
import sys

import numpy as np

TABLES = {"avx512": (3 / 16, 32, 4), "avx2": (7 / 8, 8, 7)}
F32 = np.float32
erf = np.vectorize(math.erf)


def g(a):
    return 0.5 * erf(a / math.sqrt(2))


def fit(h, n_int, degree):
    c = np.zeros((degree + 1, n_int))
    t = 0.5 * np.cos((2 * np.arange(40) + 1) * np.pi / 80)
    for n in range(n_int - 1):
        y = g((n + t) * h)
        if n == 0:
            odd = list(range(1, degree + 1, 2))
            a = np.stack([t**k for k in odd], 1)
            w = 1 / np.abs(y)
            c[odd, 0] = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)[0]
        else:
            a = np.stack([t**k for k in range(degree + 1)], 1)
            c[:, n] = np.linalg.lstsq(a, y, rcond=None)[0]
    c[0, n_int - 1] = 0.5
    return c.astype(F32)


def fma(a, b, c):  # float32 a*b + c with one rounding (exact in float64 for float32 inputs, then rounded)
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(F32)


def table_g(c, x, h, n_int):
    degree = c.shape[0] - 1
    a = np.abs(x.astype(F32))
    u = np.minimum((a * F32(1 / h)).astype(F32), F32(n_int - 1))
    n = ((u + F32(2**23)).astype(F32) - F32(2**23)).astype(F32)
    t = (u - n).astype(F32)
    i = n.astype(np.int64)
    p = c[degree][i]
    for k in range(degree - 1, -1, -1):
        p = fma(p, t, c[k][i])
    return p


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "avx512"
    if name not in TABLES:
        sys.exit(f"fit_gelu_table: unknown table '{name}' (avx512 or avx2)")
    h, n_int, degree = TABLES[name]
    c = fit(h, n_int, degree)
    x = np.concatenate([np.linspace(0, 8, 2000001), np.geomspace(1e-30, 1e-2, 20000)]).astype(F32)
    exact = erf(x.astype(np.float64) / math.sqrt(2))
    got = 2 * table_g(c, x, h, n_int).astype(np.float64)
    pos = exact > 0
    print(f"// {name}: erf: largest absolute error {np.abs(got - exact).max():.2e}, relative "
          f"{(np.abs(got - exact)[pos] / exact[pos]).max():.2e}")
    xs = np.concatenate([-x, x])
    gelu = fma(np.abs(xs), table_g(c, xs, h, n_int), (F32(0.5) * xs).astype(F32)).astype(np.float64)
    xd = xs.astype(np.float64)
    want = 0.5 * xd * (1 + erf(xd / math.sqrt(2)))
    print(f"// GELU: largest |error| / |x| {(np.abs(gelu - want) / np.maximum(np.abs(xd), 1e-38)).max():.2e}")
    for k in range(degree + 1):
        print(f"    {{// t^{k}")
        vals = [f"{v:.9e}f" for v in c[k]]
        for j in range(0, n_int, 4):
            print("     " + ", ".join(vals[j:j + 4]) + ",")
        print("    },")


if __name__ == "__main__":
    main()
