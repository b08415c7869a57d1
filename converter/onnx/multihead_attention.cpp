// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// normalize_multihead_attention (graph_normalize.h). torch.nn.MultiheadAttention with batch_first
// (torchvision's ViT, torch 1.13's F.multi_head_attention_forward) computes self-attention token-major;
// torch.onnx.export writes, with x [B,N,C], h heads of width d = C/h:
//   xt = x.transpose(0, 1)                               Transpose (1,0,2)          [N,B,C]
//   q, k, v = in_proj(xt).chunk(3, -1)                   Linear, Slice ×3 (axis 2)  [N,B,C] each
//   q = q.view(N, B·h, d).transpose(0, 1) · 2^-k         Reshape, Transpose (1,0,2), Mul (q / √d, a power of
//                                                        two; the importer writes x / 2^k as x · 2^-k)
//   kᵀ = k.view(N, B·h, d) permuted (1,2,0)              Reshape, Transpose           [B·h,d,N]
//   v = v.view(N, B·h, d).transpose(0, 1)                Reshape, Transpose (1,0,2)   [B·h,N,d]
//   o = softmax(q @ kᵀ, -1) @ v                          MatMul, Softmax, MatMul      [B·h,N,d]
//   y = out_proj(o.transpose(0, 1).view(N·B, C))         Transpose, Reshape, Linear   [N·B,C]
//   y = y.view(N, B, C).transpose(0, 1)                  Reshape, Transpose           [B,N,C]
// The rewrite writes the same attention in timm's form, op for op as --emit primitive writes packed-qkv
// SoftmaxAttention (converter/arch/primitive_emit.cpp), which the planner's fuse_attention matches:
//   qkv = in_proj(x) [B,N,3C] → reshape (B,N,3,h,d) → permute (2,0,3,1,4) → slices → [B,h,N,d] each,
//   s = (q @ kᵀ) · 2^-k (or (q / c) @ kᵀ, (q · s) @ kᵀ: below), o = softmax(s) @ v → permute (0,2,1,3) →
//   reshape (B,N,C) → out_proj.
// Each Linear computes the same rows (one row per token, whatever the order of the rows), each MatMul the
// same dot products in the same order ([B·h] and [B,h] are the same batch of matrices), so the values are the
// same but for the scale: q · 2^-k · k_j and (q · k_j) · 2^-k are equal in float32 (a power of two only moves
// the exponent) above the subnormal range, so a power-of-two scale (√d for d = 4^n: ViT-B, ViT-L) moves onto
// the scores. Any other scale (q / √d for d = 80, ViT-H; 32, 48, ...: a Div by the export's constant) stays
// on q as written, the same operation on the same elements of q, now its heads [B,h,N,d]: q_heads / c, which
// fuse_attention takes as the op's scale on q. A mask added to the scores, or an intermediate read elsewhere
// (the attention weights returned) leaves the block as it is.
// torch 2 writes the same module through scaled_dot_product_attention (match_sdpa below): its data movement
// is checked by tracing element indices, and its scores are already (q @ kᵀ) · scale (sdpa_attention.cpp).
#include <algorithm>
#include <cmath>

#include "ir/shape_propagation.h"
#include "onnx/graph_normalize.h"
#include "onnx/graph_rewrite.h"

namespace vitrt::convert {
namespace {

// Elements one index trace of match_sdpa may hold (ViT-L at 224: 197 tokens × 2 images × 3072 = 1.2 M).
constexpr int64_t kMaxTracedElements = int64_t{1} << 24;

bool perm_is(const Node& n, std::vector<int32_t> perm) {
  return std::get<TransposeAttrs>(n.attrs).perm == perm;
}

// One matched block: the tensors the timm form is built from, and every node it replaces.
struct Block {
  int32_t x = -1, in_w = -1, in_b = -1, out_w = -1, out_b = -1, scale = -1, y = -1;
  // Where the scale goes: the scores (a power of two), or q's heads as written, multiplied or divided.
  bool scale_on_q = false;
  OpType q_scale_op = OpType::kMul;
  LinearAttrs in_attrs, out_attrs;
  int64_t n = 0, c = 0, h = 0, d = 0;
  std::vector<size_t> nodes;
};

class MhaNormalizer {
 public:
  explicit MhaNormalizer(Graph& g) : g_(g), uses_(g) {}

  Status run(int* rewritten) {
    *rewritten = 0;
    s1_.assign(g_.tensors.size(), Shape());
    s2_.assign(g_.tensors.size(), Shape());
    VITRT_RETURN_IF_ERROR(propagate_shapes(g_, 1, s1_.data()));
    VITRT_RETURN_IF_ERROR(propagate_shapes(g_, 2, s2_.data()));
    std::vector<bool> erase(g_.nodes.size(), false);
    std::vector<std::vector<Node>> before(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      Block b;
      if (g_.nodes[i].type != OpType::kSoftmax) continue;
      if (!match(i, &b) && !(b = Block{}, match_sdpa(i, &b))) continue;
      bool taken = false;
      for (size_t n : b.nodes) taken = taken || erase[n];
      if (taken) continue;
      for (size_t n : b.nodes) erase[n] = true;
      // The new nodes go where the block's last node was: everything they read is computed by then.
      emit(b, block_name(g_.nodes[i].name), &before[b.nodes.back()]);
      ++*rewritten;
    }
    if (*rewritten) splice_and_prune(g_, std::move(erase), std::move(before));
    return Status::Ok();
  }

 private:
  // The node producing `t` as type `type`, when `t` is read only once (so the rewrite may drop it).
  const Node* only(int32_t t, OpType type, Block* b) const {
    if (t < 0 || uses_.readers[t] != 1) return nullptr;
    const Node* n = uses_.producer_of(g_, t, type);
    if (n) b->nodes.push_back(static_cast<size_t>(uses_.producer[t]));
    return n;
  }

  // The node reading `t` (its only reader) when it is of `type`, reading `t` as input `input`.
  const Node* sole_reader(int32_t t, OpType type, size_t input, Block* b) const {
    if (uses_.readers[t] != 1 || uses_.reader[t] < 0) return nullptr;
    const auto r = static_cast<size_t>(uses_.reader[t]);
    const Node& n = g_.nodes[r];
    if (n.type != type || n.inputs.size() <= input || n.inputs[input] != t || n.outputs.size() != 1)
      return nullptr;
    b->nodes.push_back(r);
    return &n;
  }

  // Shape of `t` at batch 1 and at batch 2.
  bool shapes_are(int32_t t, const Shape& at1, const Shape& at2) const {
    return s1_[t] == at1 && s2_[t] == at2;
  }

  bool power_of_two_scalar(int32_t t) const {
    float v;
    int e;
    return scalar_float_constant(g_, t, &v) && std::isnormal(v) && v > 0 && std::frexp(v, &e) == 0.5f;
  }

  // q, k or v: Slice `part` of the projection's last axis, viewed as [N, B·h, d]; returns the projection.
  int32_t head_view(int32_t t, int64_t part, Block* b) const {
    const Node* view = only(t, OpType::kReshape, b);
    const Node* slice = view ? only(view->inputs[0], OpType::kSlice, b) : nullptr;
    if (!slice) return -1;
    const auto& a = std::get<SliceAttrs>(slice->attrs);
    const int32_t proj = slice->inputs[0];
    const Shape& ps = s1_[proj];
    if (ps.rank != 3 || (a.axis != 2 && a.axis != -1) || a.step != 1 || ps[2] % 3 != 0) return -1;
    const int64_t c = ps[2] / 3;
    if (a.start != part * c || !(a.end == (part + 1) * c || (part == 2 && a.end >= 3 * c))) return -1;
    b->c = c;
    const Shape& vs = s1_[t];
    if (vs.rank != 3 || vs[1] <= 0 || vs[2] <= 0 || vs[1] * vs[2] != c ||
        !shapes_are(t, Shape{ps[0], vs[1], vs[2]}, Shape{ps[0], 2 * vs[1], vs[2]}))
      return -1;
    if (b->h == 0) b->h = vs[1], b->d = vs[2], b->n = ps[0];
    return b->h == vs[1] && b->d == vs[2] && b->n == ps[0] ? proj : -1;
  }

  bool match(size_t softmax, Block* b) const {
    const Node& sm = g_.nodes[softmax];
    const int32_t axis = std::get<SoftmaxAttrs>(sm.attrs).axis;
    if ((axis != -1 && axis != 2) || s1_[sm.inputs[0]].rank != 3) return false;
    // Scores: (q · s) @ kᵀ or (q / c) @ kᵀ.
    const Node* qk = only(sm.inputs[0], OpType::kMatMul, b);
    if (!qk || qk->inputs.size() != 2) return false;
    const int32_t q_scaled = qk->inputs[0];
    const bool divided = uses_.producer_of(g_, q_scaled, OpType::kDiv) != nullptr;
    const Node* scaled = only(q_scaled, divided ? OpType::kDiv : OpType::kMul, b);
    if (!scaled || scaled->inputs.size() != 2) return false;
    float unused;
    const int side = divided ? (scalar_float_constant(g_, scaled->inputs[1], &unused) ? 1 : -1)
                     : scalar_float_constant(g_, scaled->inputs[1], &unused) ? 1
                     : scalar_float_constant(g_, scaled->inputs[0], &unused) ? 0
                                                                             : -1;
    if (side < 0) return false;
    b->scale = scaled->inputs[side];
    b->scale_on_q = divided || !power_of_two_scalar(b->scale);
    b->q_scale_op = divided ? OpType::kDiv : OpType::kMul;
    const Node* qt = only(scaled->inputs[1 - side], OpType::kTranspose, b);
    const Node* kt = only(qk->inputs[1], OpType::kTranspose, b);
    if (!qt || !kt || !perm_is(*qt, {1, 0, 2}) || !perm_is(*kt, {1, 2, 0})) return false;
    // softmax @ v, back to [N·B, C], out_proj, back to [B,N,C].
    b->nodes.push_back(softmax);
    const Node* pv = sole_reader(sm.outputs[0], OpType::kMatMul, 0, b);
    const Node* vt = pv && pv->inputs.size() == 2 ? only(pv->inputs[1], OpType::kTranspose, b) : nullptr;
    if (!vt || !perm_is(*vt, {1, 0, 2})) return false;
    const Node* merged = sole_reader(pv->outputs[0], OpType::kTranspose, 0, b);
    const Node* rows = merged && perm_is(*merged, {1, 0, 2})
                           ? sole_reader(merged->outputs[0], OpType::kReshape, 0, b)
                           : nullptr;
    const Node* out = rows ? sole_reader(rows->outputs[0], OpType::kLinear, 0, b) : nullptr;
    const Node* tokens = out ? sole_reader(out->outputs[0], OpType::kReshape, 0, b) : nullptr;
    const Node* y = tokens ? sole_reader(tokens->outputs[0], OpType::kTranspose, 0, b) : nullptr;
    if (!y || !perm_is(*y, {1, 0, 2}) || out->inputs.size() < 2) return false;
    // q, k and v: the three thirds of one in_proj of x.transpose(0, 1).
    const int32_t proj = head_view(qt->inputs[0], 0, b);
    if (proj < 0 || head_view(kt->inputs[0], 1, b) != proj || head_view(vt->inputs[0], 2, b) != proj)
      return false;
    if (uses_.readers[proj] != 3) return false;
    const Node* in = uses_.producer_of(g_, proj, OpType::kLinear);
    if (!in || in->inputs.size() < 2) return false;
    b->nodes.push_back(static_cast<size_t>(uses_.producer[proj]));
    const Node* xt = uses_.producer_of(g_, in->inputs[0], OpType::kTranspose);
    if (!xt || !perm_is(*xt, {1, 0, 2})) return false;
    // Sizes: x [B,N,C] with the batch first; every view at the sizes the rewrite assumes, at batch 1 and 2.
    const int64_t n = b->n, c = b->c, h = b->h;
    b->x = xt->inputs[0];
    if (!shapes_are(b->x, Shape{1, n, c}, Shape{2, n, c}) ||
        !shapes_are(rows->outputs[0], {n, c}, {2 * n, c}) ||
        !shapes_are(out->outputs[0], {n, c}, {2 * n, c}) ||
        !shapes_are(tokens->outputs[0], {n, 1, c}, {n, 2, c}) ||
        !shapes_are(sm.inputs[0], {h, n, n}, {2 * h, n, n}) ||
        !shapes_are(y->outputs[0], {1, n, c}, {2, n, c}))
      return false;
    b->in_w = in->inputs[1];
    b->in_b = in->inputs.size() > 2 ? in->inputs[2] : kAbsent;
    b->in_attrs = std::get<LinearAttrs>(in->attrs);
    b->out_w = out->inputs[1];
    b->out_b = out->inputs.size() > 2 ? out->inputs[2] : kAbsent;
    b->out_attrs = std::get<LinearAttrs>(out->attrs);
    b->y = y->outputs[0];
    if (b->in_attrs.activation != Activation::kNone) return false;
    // The block's last node (the final Transpose) last: emit() places the new nodes there.
    const size_t last = static_cast<size_t>(uses_.producer[b->y]);
    b->nodes.erase(std::remove(b->nodes.begin(), b->nodes.end(), last), b->nodes.end());
    b->nodes.push_back(last);
    return true;
  }

  // --- torch 2's form (F.multi_head_attention_forward through scaled_dot_product_attention) ---------------
  // The same computation with other data movement between the three Linear-ish steps: q, k and v are taken
  // from the projection P [N,B,3C] by Reshape / Transpose / Slice chains and viewed [B,h,N,d]; the scores are
  // (q @ kᵀ) · scale after normalize_sdpa_attention; the heads go back to rows [N·B, C] for out_proj and its
  // rows to [B,N,C] through further chains. Rather than one fixed op sequence, each chain is checked by
  // running it on element indices at batch 1 and 2 (trace below): it must place every element where the
  // layout above says, so any exporter's arrangement of pure data movement is accepted and nothing else is.

  static bool movement(const Node& n) {
    return (n.type == OpType::kReshape || n.type == OpType::kTranspose || n.type == OpType::kSlice) &&
           n.inputs.size() == 1 && n.outputs.size() == 1;
  }

  // The movement ops from the first non-movement producer up to `t` (in graph order); its source in *src.
  std::vector<size_t> chain_to(int32_t t, int32_t* src) const {
    std::vector<size_t> chain;
    while (t >= 0 && uses_.producer[t] >= 0 && movement(g_.nodes[uses_.producer[t]]) && chain.size() < 64) {
      chain.insert(chain.begin(), static_cast<size_t>(uses_.producer[t]));
      t = g_.nodes[uses_.producer[t]].inputs[0];
    }
    *src = t;
    return chain;
  }

  // The movement ops reading `t` one after another (each the only reader) up to the first value read by
  // anything else; that value in *end.
  std::vector<size_t> chain_from(int32_t t, int32_t* end) const {
    std::vector<size_t> chain;
    while (uses_.readers[t] == 1 && uses_.reader[t] >= 0 && movement(g_.nodes[uses_.reader[t]]) &&
           chain.size() < 64) {
      chain.push_back(static_cast<size_t>(uses_.reader[t]));
      t = g_.nodes[uses_.reader[t]].outputs[0];
    }
    *end = t;
    return chain;
  }

  // For each element of the chain's result at batch `batch` (shapes s1_ / s2_), the flat index of the source
  // element it holds; empty when a step is not plain data movement.
  std::vector<int64_t> trace(const std::vector<size_t>& chain, int32_t src, int batch) const {
    const std::vector<Shape>& s = batch == 1 ? s1_ : s2_;
    std::vector<int64_t> idx(static_cast<size_t>(s[src].numel()));
    for (size_t e = 0; e < idx.size(); ++e) idx[e] = static_cast<int64_t>(e);
    for (size_t c : chain) {
      const Node& n = g_.nodes[c];
      const Shape &in = s[n.inputs[0]], &out = s[n.outputs[0]];
      if (out.numel() > static_cast<int64_t>(idx.size()) || in.numel() != static_cast<int64_t>(idx.size()))
        return {};
      std::vector<int64_t> next(static_cast<size_t>(out.numel()));
      if (n.type == OpType::kReshape) {
        if (out.numel() != in.numel()) return {};
        next = idx;
      } else {
        // Element e of the output: its multi-index, mapped to the input's.
        std::vector<int32_t> perm;
        SliceAttrs sl;
        if (n.type == OpType::kTranspose) {
          perm = std::get<TransposeAttrs>(n.attrs).perm;
          if (static_cast<int>(perm.size()) != in.rank || out.rank != in.rank) return {};
        } else {
          sl = std::get<SliceAttrs>(n.attrs);
          if (sl.axis < 0) sl.axis += in.rank;
          if (sl.axis < 0 || sl.axis >= in.rank || sl.step < 1 || out.rank != in.rank) return {};
          if (sl.start < 0) sl.start += in[sl.axis];
          sl.start = std::clamp<int64_t>(sl.start, 0, in[sl.axis]);
        }
        std::vector<int64_t> at(static_cast<size_t>(out.rank), 0), stride(static_cast<size_t>(in.rank), 1);
        for (int d = in.rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * in[d + 1];
        for (size_t e = 0; e < next.size(); ++e) {
          int64_t from = 0;
          for (int d = 0; d < out.rank; ++d) {
            const int64_t i =
                n.type == OpType::kTranspose ? at[d] : (d == sl.axis ? sl.start + at[d] * sl.step : at[d]);
            const int dim = n.type == OpType::kTranspose ? perm[d] : d;
            if (dim < 0 || dim >= in.rank || i >= in[dim]) return {};
            from += i * stride[dim];
          }
          next[e] = idx[static_cast<size_t>(from)];
          for (int d = out.rank - 1; d >= 0; --d) {
            if (++at[d] < out[d]) break;
            at[d] = 0;
          }
        }
      }
      idx = std::move(next);
    }
    return idx;
  }

  bool match_sdpa(size_t softmax, Block* b) const {
    const Node& sm = g_.nodes[softmax];
    const int32_t axis = std::get<SoftmaxAttrs>(sm.attrs).axis;
    if ((axis != -1 && axis != 3) || s1_[sm.inputs[0]].rank != 4) return false;
    const Node* scaled = only(sm.inputs[0], OpType::kMul, b);
    if (!scaled || scaled->inputs.size() != 2) return false;
    float unused;
    const int side = scalar_float_constant(g_, scaled->inputs[1], &unused)   ? 1
                     : scalar_float_constant(g_, scaled->inputs[0], &unused) ? 0
                                                                             : -1;
    if (side < 0) return false;
    b->scale = scaled->inputs[side];
    const Node* qk = only(scaled->inputs[1 - side], OpType::kMatMul, b);
    if (!qk || qk->inputs.size() != 2) return false;
    const Node* kt = only(qk->inputs[1], OpType::kTranspose, b);
    if (!kt || !perm_is(*kt, {0, 1, 3, 2})) return false;
    b->nodes.push_back(softmax);
    const Node* pv = sole_reader(sm.outputs[0], OpType::kMatMul, 0, b);
    if (!pv || pv->inputs.size() != 2) return false;
    const int32_t q4 = qk->inputs[0], k4 = kt->inputs[0], v4 = pv->inputs[1];
    const Shape& qs = s1_[q4];
    if (qs.rank != 4 || qs[0] != 1 || s1_[k4] != qs || s1_[v4] != qs ||
        s2_[q4] != Shape{2, qs[1], qs[2], qs[3]})
      return false;
    const int64_t h = qs[1], n = qs[2], d = qs[3], c = h * d;
    b->h = h, b->n = n, b->d = d, b->c = c;
    // q, k, v from one projection P = Linear(x.transpose(0, 1)) [N,B,3C].
    std::vector<size_t> parts[3];
    int32_t proj = -1;
    const int32_t heads[3] = {q4, k4, v4};
    for (int p = 0; p < 3; ++p) {
      int32_t src;
      parts[p] = chain_to(heads[p], &src);
      if (parts[p].empty() || (proj >= 0 && src != proj)) return false;
      proj = src;
    }
    const Node* in = uses_.producer_of(g_, proj, OpType::kLinear);
    if (!in || in->inputs.size() < 2) return false;
    const Node* xt = uses_.producer_of(g_, in->inputs[0], OpType::kTranspose);
    if (!xt || !perm_is(*xt, {1, 0, 2})) return false;
    b->x = xt->inputs[0];
    if (s1_[b->x] != Shape{1, n, c} || s2_[b->x] != Shape{2, n, c}) return false;
    // The traces hold one index per element of the projection at batch 2: bounded like a folded constant
    // (a file may declare any size; a larger block stays unfused, and correct).
    if (s2_[proj].numel() > kMaxTracedElements) return false;
    for (int batch = 1; batch <= 2; ++batch)
      for (int p = 0; p < 3; ++p) {
        const std::vector<int64_t> got = trace(parts[p], proj, batch);
        if (static_cast<int64_t>(got.size()) != batch * c * n) return false;
        size_t e = 0;
        for (int64_t bb = 0; bb < batch; ++bb)
          for (int64_t hh = 0; hh < h; ++hh)
            for (int64_t t = 0; t < n; ++t)
              for (int64_t j = 0; j < d; ++j, ++e)
                if (got[e] != (t * batch + bb) * 3 * c + p * c + hh * d + j) return false;
      }
    // softmax @ v back to token-major rows [N·B, C], out_proj, back to [B,N,C].
    int32_t rows, y;
    const std::vector<size_t> merge = chain_from(pv->outputs[0], &rows);
    if (merge.empty() || uses_.readers[rows] != 1 || uses_.reader[rows] < 0) return false;
    const Node& out = g_.nodes[uses_.reader[rows]];
    if (out.type != OpType::kLinear || out.inputs[0] != rows || out.inputs.size() < 2) return false;
    const size_t out_index = static_cast<size_t>(uses_.reader[rows]);
    const std::vector<size_t> back = chain_from(out.outputs[0], &y);
    if (back.empty() || s1_[y] != Shape{1, n, c} || s2_[y] != Shape{2, n, c}) return false;
    for (int batch = 1; batch <= 2; ++batch) {
      const std::vector<int64_t> r = trace(merge, pv->outputs[0], batch),
                                 t = trace(back, out.outputs[0], batch);
      if (static_cast<int64_t>(r.size()) != batch * n * c || static_cast<int64_t>(t.size()) != batch * n * c)
        return false;
      // rows[t·B + b, hh·d + j] = o[b, hh, t, j]; y[b, t, k] = out[t·B + b, k].
      for (int64_t bb = 0; bb < batch; ++bb)
        for (int64_t tt = 0; tt < n; ++tt)
          for (int64_t k = 0; k < c; ++k) {
            const int64_t row = tt * batch + bb, hh = k / d, j = k % d;
            if (r[static_cast<size_t>(row * c + k)] != ((bb * h + hh) * n + tt) * d + j ||
                t[static_cast<size_t>((bb * n + tt) * c + k)] != row * c + k)
              return false;
          }
    }
    // Every node of the chains goes; each value they compute must be read inside the block only.
    for (int p = 0; p < 3; ++p) b->nodes.insert(b->nodes.end(), parts[p].begin(), parts[p].end());
    b->nodes.insert(b->nodes.end(), merge.begin(), merge.end());
    b->nodes.push_back(out_index);
    b->nodes.insert(b->nodes.end(), back.begin(), back.end());
    b->nodes.push_back(static_cast<size_t>(uses_.producer[proj]));
    std::sort(b->nodes.begin(), b->nodes.end());
    b->nodes.erase(std::unique(b->nodes.begin(), b->nodes.end()), b->nodes.end());
    std::vector<bool> inside(g_.nodes.size(), false);
    for (size_t i : b->nodes) inside[i] = true;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      for (int32_t t : g_.nodes[i].inputs)
        if (!inside[i] && t >= 0 && t != y && uses_.producer[t] >= 0 && inside[uses_.producer[t]])
          return false;
    for (int32_t t : g_.outputs)
      if (t != y && uses_.producer[t] >= 0 && inside[uses_.producer[t]]) return false;
    b->in_w = in->inputs[1];
    b->in_b = in->inputs.size() > 2 ? in->inputs[2] : kAbsent;
    b->in_attrs = std::get<LinearAttrs>(in->attrs);
    b->out_w = out.inputs[1];
    b->out_b = out.inputs.size() > 2 ? out.inputs[2] : kAbsent;
    b->out_attrs = std::get<LinearAttrs>(out.attrs);
    b->y = y;
    if (b->in_attrs.activation != Activation::kNone) return false;
    const size_t last = static_cast<size_t>(uses_.producer[y]);
    b->nodes.erase(std::remove(b->nodes.begin(), b->nodes.end(), last), b->nodes.end());
    b->nodes.push_back(last);
    return true;
  }

  // The exporter names the block's nodes <module>/<op>: the new nodes are named after the module, and the
  // merge (whose node the fused op becomes) is the module itself, as --emit primitive names it.
  static std::string block_name(const std::string& softmax) {
    const size_t slash = softmax.find_last_of('/');
    return slash == std::string::npos || slash == 0 ? softmax + ".mha" : softmax.substr(0, slash);
  }

  int32_t add(std::vector<Node>* out, OpType type, OpAttrs attrs, std::vector<int32_t> inputs,
              const std::string& name, int32_t output = -1) {
    if (output < 0) output = g_.add_activation(name, Shape());
    out->push_back(make_node(type, std::move(attrs), std::move(inputs), output, name));
    return output;
  }

  void emit(const Block& b, const std::string& name, std::vector<Node>* out) {
    std::vector<int32_t> in = {b.x, b.in_w};
    if (b.in_b != kAbsent) in.push_back(b.in_b);
    const int32_t qkv = add(out, OpType::kLinear, b.in_attrs, in, name + ".qkv");
    const int32_t heads =
        add(out, OpType::kReshape, ReshapeAttrs{{0, 0, 3, b.h, b.d}}, {qkv}, name + ".qkv.reshape");
    const int32_t parts =
        add(out, OpType::kTranspose, TransposeAttrs{{2, 0, 3, 1, 4}}, {heads}, name + ".qkv.permute");
    int32_t qkv_heads[3];
    for (int64_t p = 0; p < 3; ++p) {
      const std::string np = name + ".qkv.unbind" + std::to_string(p);
      const int32_t s = add(out, OpType::kSlice, SliceAttrs{0, p, p + 1}, {parts}, np + ".slice");
      qkv_heads[p] = add(out, OpType::kReshape, ReshapeAttrs{{-1, b.h, b.n, b.d}}, {s}, np);
    }
    const int32_t kt =
        add(out, OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {qkv_heads[1]}, name + ".k.transpose");
    int32_t s;
    if (b.scale_on_q) {
      const int32_t q = add(out, b.q_scale_op, NoAttrs{}, {qkv_heads[0], b.scale}, name + ".q.scaled");
      s = add(out, OpType::kMatMul, NoAttrs{}, {q, kt}, name + ".qk");
    } else {
      const int32_t qk = add(out, OpType::kMatMul, NoAttrs{}, {qkv_heads[0], kt}, name + ".qk");
      s = add(out, OpType::kMul, NoAttrs{}, {qk, b.scale}, name + ".scores");
    }
    const int32_t p = add(out, OpType::kSoftmax, SoftmaxAttrs{-1}, {s}, name + ".softmax");
    const int32_t o = add(out, OpType::kMatMul, NoAttrs{}, {p, qkv_heads[2]}, name + ".pv");
    const int32_t t =
        add(out, OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {o}, name + ".merge.permute");
    const int32_t merged = add(out, OpType::kReshape, ReshapeAttrs{{0, 0, b.c}}, {t}, name);
    in = {merged, b.out_w};
    if (b.out_b != kAbsent) in.push_back(b.out_b);
    add(out, OpType::kLinear, b.out_attrs, in, name + ".out_proj", b.y);
  }

  Graph& g_;
  GraphUses uses_;
  std::vector<Shape> s1_, s2_;
};

}  // namespace

Status normalize_multihead_attention(Graph* g, int* rewritten) {
  return MhaNormalizer(*g).run(rewritten);
}

}  // namespace vitrt::convert
