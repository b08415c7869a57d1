// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt_mlp_pipeline [--repeat R] [--images N]: what fusing the PVT v2 / LaViT MLP gains on this machine
// at each stage shape and band height, measured on the cpu backend's own AVX-512 kernels, single-threaded
// (the study behind ConvMlp, backends/cpu/x86/conv_mlp.cpp, which runs the row-pipelined form).
//   op by op:       fc1 over N images -> 3x3 depthwise conv + GELU -> fc2 + residual, each over the whole
//                   batch, as a session runs them with fuse_conv_mlp off (the hidden tensor goes through
//                   memory);
//   row-pipelined:  per image, a band of `rows` output rows at a time: fc1 on the band's rows (plus one halo
//                   row each side, kept from the previous band), the conv rows, fc2 on them, so the hidden
//                   band stays in L2. Same kernels, same arithmetic: the outputs must be bitwise equal.
// One line per (stage shape, band rows) with the median ms per image and pipelined/op-by-op.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/depthwise_nhwc.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/packed_linear.h"
#include "backends/cpu/x86/x86_internal.h"

using namespace vitrt::x86;

namespace {

struct Stage {
  const char* name;
  int64_t side, c, hidden;
};

void fill(AlignedFloats* v, uint32_t seed, float scale) {
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < v->size(); ++i) {
    s = s * 1664525u + 1013904223u;
    v->data()[i] = scale * (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
}

// A random Linear [n, k] with bias on the packed GEMM, one thread.
PackedLinear random_linear(int64_t n, int64_t k, int64_t rows, uint32_t seed) {
  AlignedFloats w(static_cast<size_t>(n * k));
  fill(&w, seed, 0.1f);
  PackedLinear l(true, w.data(), n, k, rows, vitrt::x86_options_from_env().gemm_tile);  // VITRT_GEMM_TILE
  fill(&l.bias, seed + 1, 0.1f);
  return l;
}

struct Mlp {
  Stage s;
  int64_t images;
  AlignedFloats x, res, out_ops, out_rows, hidden, act, dw_w, dw_b, band, band_act;
  PackedLinear fc1, fc2;
  DepthwiseRow conv;

  Mlp(const Stage& st, int64_t n_images, int64_t rows)
      : s(st),
        images(n_images),
        fc1(random_linear(st.hidden, st.c, st.side * st.side * n_images, 11)),
        fc2(random_linear(st.c, st.hidden, st.side * st.side * n_images, 13)) {
    const size_t tokens = static_cast<size_t>(images * s.side * s.side);
    x = AlignedFloats(tokens * s.c), res = AlignedFloats(tokens * s.c), out_ops = AlignedFloats(tokens * s.c),
    out_rows = AlignedFloats(tokens * s.c);
    hidden = AlignedFloats(tokens * s.hidden), act = AlignedFloats(tokens * s.hidden);
    dw_w = AlignedFloats(static_cast<size_t>(9 * s.hidden)),
    dw_b = AlignedFloats(static_cast<size_t>(s.hidden));
    band = AlignedFloats(static_cast<size_t>((rows + 2) * s.side * s.hidden));
    band_act = AlignedFloats(static_cast<size_t>(rows * s.side * s.hidden));
    fill(&x, 1, 1.0f), fill(&res, 2, 1.0f), fill(&dw_w, 3, 0.3f), fill(&dw_b, 4, 0.1f);
    conv.w = conv.wo = s.side;
    conv.c = s.hidden;
    conv.wt = dw_w.data();
    conv.kh = conv.kw = 3;
    conv.pad_h = conv.pad_w = 1;
    conv.bias = dw_b.data();
    conv.act = GemmAct::kGeluErf;
  }

  void op_by_op() {
    const int64_t n = s.side * s.side;
    fc1.run(x.data(), images * n, true, GemmAct::kNone, nullptr, hidden.data(), s.hidden);
    DepthwiseRow r = conv;
    r.h = s.side;
    for (int64_t i = 0; i < images * s.side; ++i) {
      r.src = hidden.data() + i / s.side * n * s.hidden;
      r.oy = i % s.side;
      r.dst = act.data() + i * s.side * s.hidden;
      depthwise_nhwc_row_avx512(r);
    }
    fc2.run(act.data(), images * n, true, GemmAct::kNone, res.data(), out_ops.data(), s.c);
  }

  // The band holds fc1 rows [lo, hi) of the image, row lo first; the conv sees it as an image of hi - lo
  // rows, whose edges are the real image's edges exactly where the band touches them.
  void row_pipelined(int64_t rows) {
    const int64_t n = s.side * s.side, row = s.side * s.hidden;
    for (int64_t b = 0; b < images; ++b) {
      const float* xb = x.data() + b * n * s.c;
      int64_t lo = 0, hi = 0;
      for (int64_t y0 = 0; y0 < s.side; y0 += rows) {
        const int64_t y1 = std::min(s.side, y0 + rows);
        const int64_t need_lo = std::max<int64_t>(0, y0 - 1), need_hi = std::min(s.side, y1 + 1);
        const int64_t kept = hi > need_lo ? hi - need_lo : 0;
        if (kept) std::memmove(band.data(), band.data() + (need_lo - lo) * row, kept * row * sizeof(float));
        fc1.run(xb + (need_lo + kept) * s.side * s.c, (need_hi - need_lo - kept) * s.side, true,
                GemmAct::kNone, nullptr, band.data() + kept * row, s.hidden);
        lo = need_lo, hi = need_hi;
        DepthwiseRow r = conv;
        r.src = band.data();
        r.h = hi - lo;
        for (int64_t oy = y0; oy < y1; ++oy) {
          r.oy = oy - lo;
          r.dst = band_act.data() + (oy - y0) * row;
          depthwise_nhwc_row_avx512(r);
        }
        const int64_t at = (b * n + y0 * s.side) * s.c;
        fc2.run(band_act.data(), (y1 - y0) * s.side, true, GemmAct::kNone, res.data() + at,
                out_rows.data() + at, s.c);
      }
    }
  }
};

template <class F>
double median_ms(int repeat, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 11;
  int64_t images = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--images" && i + 1 < argc) {
      images = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: vitrt_mlp_pipeline [--repeat R] [--images N]\n");
      return 2;
    }
  }
  if (vitrt::x86_detect_isa() != vitrt::X86Isa::kAvx512) {
    std::fprintf(stderr, "vitrt_mlp_pipeline: this CPU has no AVX-512\n");
    return 1;
  }
  const Stage stages[] = {{"lavit stage 1", 56, 64, 512},
                          {"lavit stage 2", 28, 128, 1024},
                          {"lavit stage 3", 14, 320, 1280},
                          {"pvt_v2_b0 stage 1", 56, 32, 256},
                          {"pvt_v2_b0 stage 2", 28, 64, 512}};
  std::printf("single thread, %lld images, median of %d runs, ms per image\n", static_cast<long long>(images),
              repeat);
  std::printf(
      "| MLP | tokens x C -> hidden | band rows | op by op | row-pipelined | ratio "
      "|\n|---|---|---|---|---|---|\n");
  for (const Stage& s : stages) {
    for (int64_t rows : {1, 4}) {
      Mlp m(s, images, rows);
      m.op_by_op(), m.row_pipelined(rows);  // warm-up
      if (std::memcmp(m.out_ops.data(), m.out_rows.data(), m.out_ops.size() * sizeof(float)) != 0) {
        std::fprintf(stderr, "vitrt_mlp_pipeline: %s: the pipelined output differs from op by op\n", s.name);
        return 1;
      }
      double ops = 0, piped = 0;
      for (int round = 0; round < 2; ++round) {  // alternate, so that drift hits both alike
        ops += median_ms(repeat, [&] { m.op_by_op(); });
        piped += median_ms(repeat, [&] { m.row_pipelined(rows); });
      }
      ops /= 2 * images, piped /= 2 * images;
      std::printf("| %s | %lld x %lld -> %lld | %lld | %.3f | %.3f | %.2f |\n", s.name,
                  static_cast<long long>(s.side * s.side), static_cast<long long>(s.c),
                  static_cast<long long>(s.hidden), static_cast<long long>(rows), ops, piped, piped / ops);
    }
  }
  return 0;
}
