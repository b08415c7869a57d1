// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// NystromAttention: Nyströmformer (docs/linear_attention.md, Nyströmformer) step by step as the official
// PyTorch code writes it, every product and softmax in double. For each batch item b and head h (channels
// c = h·d + j):
//   Q = q·q_scale, K = k·k_scale                                  [N,d]
//   Q̃, K̃ = means of Q, K over the m landmark segments            [m,d]  (nystrom_segment)
//   k1 = softmax(Q K̃ᵀ) [N,m], k2 = softmax(Q̃ K̃ᵀ) [m,m], k3 = softmax(Q̃ Kᵀ) [m,N]
//   Z0 = k2ᵀ / s with s the largest column sum of k2 (over the whole batch and all heads for kGlobal),
//   then `iterations` × { KV = k2·Z; Z = (Z/4)·(13I − KV·(15I − KV·(7I − KV))) }
//   X = (k1·Z)·(k3·V) + Σ_t w[h][t]·V[n + t − ks/2]   (the depthwise V conv, zero padded)
// The global initialisation needs every k2 of the batch first (phase 1) before any item iterates (phase 2).
// Scratch (doubles, plan-time workspace): k2 [B·h][m][m], column maxima [B·h], then per item Q, K [N,d],
// Q̃, K̃ [m,d], k1 [N,m], k3 [m,N], k1·Z [N,m], Z, KV and two temporaries [m,m], k3·V [m,d].
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/nystrom_attention_geometry.h"

namespace vitrt {
namespace ref {
namespace {

using Dims = NystromGeometry;

struct Layout {
  int64_t k2, colmax, q, k, ql, kl, k1, k3, k1z, z, kv, t1, t2, k3v, total;  // in doubles
};

// False when the sizes overflow.
bool layout_of(const Dims& s, Layout* l) {
  int64_t off = 0;
  bool ok = true;
  auto take = [&](std::initializer_list<int64_t> dims) {
    int64_t n = 1;
    for (int64_t x : dims) ok = ok && checked_mul(n, x, &n);
    const int64_t at = off;
    ok = ok && checked_add(off, n, &off);
    return at;
  };
  l->k2 = take({s.batch, s.heads, s.m, s.m});
  l->colmax = take({s.batch, s.heads});
  l->q = take({s.n, s.d});
  l->k = take({s.n, s.d});
  l->ql = take({s.m, s.d});
  l->kl = take({s.m, s.d});
  l->k1 = take({s.n, s.m});
  l->k3 = take({s.m, s.n});
  l->k1z = take({s.n, s.m});
  l->z = take({s.m, s.m});
  l->kv = take({s.m, s.m});
  l->t1 = take({s.m, s.m});
  l->t2 = take({s.m, s.m});
  l->k3v = take({s.m, s.d});
  l->total = off;
  return ok;
}

// c[r][j] = Σ_t a[r][t]·b[t][j]: a [rows,k], b [k,cols], c [rows,cols], all row-major.
void matmul(const double* a, const double* b, int64_t rows, int64_t k, int64_t cols, double* c) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += a[r * k + t] * b[t * cols + j];
      c[r * cols + j] = acc;
    }
}

// c[r][j] = softmax over j of Σ_t a[r][t]·b[j][t]: a [rows,d], b [cols,d].
void softmax_scores(const double* a, const double* b, int64_t rows, int64_t cols, int64_t d, double* c) {
  for (int64_t r = 0; r < rows; ++r) {
    double* row = c + r * cols;
    double top = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (int64_t t = 0; t < d; ++t) acc += a[r * d + t] * b[j * d + t];
      row[j] = acc;
      top = std::max(top, acc);
    }
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += row[j] = std::exp(row[j] - top);
    for (int64_t j = 0; j < cols; ++j) row[j] /= sum;
  }
}

// dst[i][j] = diag·[i == j] − src[i][j] over [m,m].
void diag_minus(double diag, const double* src, int64_t m, double* dst) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) dst[i * m + j] = (i == j ? diag : 0.0) - src[i * m + j];
}

class NystromAttentionKernel final : public RefKernel {
 public:
  NystromAttentionKernel(const KernelPlan& plan, const NystromAttentionAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    Dims s;
    const Status decoded = decode_nystrom_geometry(a_, shapes, args.num_src, &s);
    if (!decoded.ok()) return fail(decoded.message());
    Layout l;
    if (!layout_of(s, &l)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, 2 * l.total));
    double* ws = static_cast<double*>(args.workspace);
    const int64_t items = s.batch * s.heads, mm = s.m * s.m;
    // Phase 1: k2 of every item and its largest column sum.
    for (int64_t bh = 0; bh < items; ++bh) {
      load_item(args, s, l, bh, ws);
      double* k2 = ws + l.k2 + bh * mm;
      softmax_scores(ws + l.ql, ws + l.kl, s.m, s.m, s.d, k2);
      double best = -INFINITY;
      for (int64_t j = 0; j < s.m; ++j) {
        double col = 0;
        for (int64_t i = 0; i < s.m; ++i) col += k2[i * s.m + j];
        best = std::max(best, col);
      }
      ws[l.colmax + bh] = best;
    }
    double global = -INFINITY;
    for (int64_t bh = 0; bh < items; ++bh) global = std::max(global, ws[l.colmax + bh]);
    // Phase 2: the iterative inverse and the output, per item.
    for (int64_t bh = 0; bh < items; ++bh) {
      load_item(args, s, l, bh, ws);
      const double* k2 = ws + l.k2 + bh * mm;
      double *z = ws + l.z, *kv = ws + l.kv, *t1 = ws + l.t1, *t2 = ws + l.t2;
      const double top = a_.init == NystromInit::kGlobal ? global : ws[l.colmax + bh];
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.m; ++j) z[i * s.m + j] = k2[j * s.m + i] / top;
      for (int32_t it = 0; it < a_.iterations; ++it) {
        matmul(k2, z, s.m, s.m, s.m, kv);  // KV = k2·Z
        diag_minus(7.0, kv, s.m, t1);      // 7I − KV
        matmul(kv, t1, s.m, s.m, s.m, t2);
        diag_minus(15.0, t2, s.m, t1);  // 15I − KV·(7I − KV)
        matmul(kv, t1, s.m, s.m, s.m, t2);
        diag_minus(13.0, t2, s.m, t1);  // 13I − KV·(...)
        for (int64_t i = 0; i < mm; ++i) kv[i] = 0.25 * z[i];
        matmul(kv, t1, s.m, s.m, s.m, z);
      }
      double* k1 = ws + l.k1;
      double* k3 = ws + l.k3;
      softmax_scores(ws + l.q, ws + l.kl, s.n, s.m, s.d, k1);
      softmax_scores(ws + l.ql, ws + l.k, s.m, s.n, s.d, k3);
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const float* v = args.src[2]->f32() + b * s.n * s.c + h * s.d;
      double* k3v = ws + l.k3v;
      for (int64_t p = 0; p < s.m; ++p)
        for (int64_t j = 0; j < s.d; ++j) {
          double acc = 0;
          for (int64_t t = 0; t < s.n; ++t) acc += k3[p * s.n + t] * static_cast<double>(v[t * s.c + j]);
          k3v[p * s.d + j] = acc;
        }
      double* k1z = ws + l.k1z;
      matmul(k1, z, s.n, s.m, s.m, k1z);
      const float* w = s.ks > 0 ? args.src[3]->f32() + h * s.ks : nullptr;
      float* out = args.dst[0]->f32() + b * s.n * s.c + h * s.d;
      for (int64_t i = 0; i < s.n; ++i)
        for (int64_t j = 0; j < s.d; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < s.m; ++p) acc += k1z[i * s.m + p] * k3v[p * s.d + j];
          for (int64_t t = 0; t < s.ks; ++t) {
            const int64_t src = i + t - s.ks / 2;
            if (src >= 0 && src < s.n) acc += static_cast<double>(w[t]) * v[src * s.c + j];
          }
          out[i * s.c + j] = static_cast<float>(acc);
        }
    }
    return Status::Ok();
  }

 private:
  // Q, K of item bh (scaled, in double) and their landmark means.
  void load_item(const KernelArgs& args, const Dims& s, const Layout& l, int64_t bh, double* ws) const {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const float* q = args.src[0]->f32() + b * s.n * s.c + h * s.d;
    const float* k = args.src[1]->f32() + b * s.n * s.c + h * s.d;
    double *qd = ws + l.q, *kd = ws + l.k;
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0; j < s.d; ++j) {
        qd[i * s.d + j] = static_cast<double>(q[i * s.c + j]) * a_.q_scale;
        kd[i * s.d + j] = static_cast<double>(k[i * s.c + j]) * a_.k_scale;
      }
    for (int64_t p = 0; p < s.m; ++p) {
      const NystromSegment seg = nystrom_segment(s.n, s.m, p);
      for (int64_t j = 0; j < s.d; ++j) {
        double sq = 0, sk = 0;
        for (int64_t i = seg.start; i < seg.start + seg.count; ++i) {
          sq += qd[i * s.d + j];
          sk += kd[i * s.d + j];
        }
        ws[l.ql + p * s.d + j] = sq / static_cast<double>(seg.count);
        ws[l.kl + p * s.d + j] = sk / static_cast<double>(seg.count);
      }
    }
  }

  NystromAttentionAttrs a_;
};

}  // namespace

Status create_nystrom_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const NystromAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string where = "NystromAttention '" + plan.node->name + "'";
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  Dims dims;
  Status s = decode_nystrom_geometry(*a, shapes, plan.num_src, &dims);
  if (!s.ok()) return s.with_context(where);
  Layout l;
  int64_t bytes = 0;
  if (!layout_of(dims, &l) || !checked_mul(l.total, static_cast<int64_t>(sizeof(double)), &bytes))
    return bad_model(where + ": workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<NystromAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
