// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_selective_kernel: the select-and-fuse part of a Selective Kernel block (docs/linear_attention.md,
// "SE and SK") written as plain ops becomes one SelectiveKernel op; the branch convolutions stay. The three
// forms torch.onnx.export writes (tools/reference/vitrt_reference/sk.py):
//   F = the M branches [B,C,H,W] stacked on axis k of a rank-5 tensor: Concat on axis k of each branch
//       reshaped with a 1 at k (torch.stack; xmu k = 0, timm k = 1), or the branches concatenated on the
//       channels and reshaped to [B,M,C,H,W] (the survey, k = 1);
//   U = ReduceSum of F over axis k, or a tree of Adds of exactly the branches (xmu's sum(list));
//   s = AdaptiveAvgPool2d(1) or ReduceMean over H, W of U (kept as [B,C,1,1]), or ReduceMean over W then over
//       H (xmu's U.mean(-1).mean(-1), [B,C]);
//   z = fc_reduce(s), a 1x1 Conv2d on [B,C,1,1] or a Linear on [B,C], then Relu (a node or the conv's
//       epilogue) or nothing (xmu);
//   L = the select logits with F's shape but H = W = 1: one fc_select layer [B,M·C(,1,1)] reshaped (timm), or
//       M per-branch layers [B,C(,1,1)] concatenated in branch order on axis k, each through any reshapes
//       (the survey's concatenation on the channels then one reshape; xmu's view(B,C,1,1) then stack);
//   y = ReduceSum over axis k (no keepdims) of Mul(F, Softmax(L, axis k)).
// Reshapes keep row-major order, so a reshape between two shapes checked here is exactly the view the form
// needs. Per-branch select weights and biases are concatenated into one [M·C,d] weight and [M·C] bias (a
// missing bias as zeros). Every intermediate must be read only inside the block and be no graph output,
// every shape exactly the block's; anything else is left alone. Done only where the session's backend
// implements SelectiveKernel.
#include <algorithm>
#include <set>

#include "ops/op_registry.h"
#include "ops/selective_kernel_attrs.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

// One fully connected layer of the block: its node, weight and bias (kAbsent when it has none).
struct FcLayer {
  int32_t node = -1;
  int32_t weight = kAbsent, bias = kAbsent;
};

struct SkBlock {
  int k = 1;                      // the branch axis of the rank-5 tensors
  std::vector<int32_t> branches;  // x_0 .. x_{M-1}
  std::vector<int32_t> nodes;     // every node the fused op replaces but the final ReduceSum
  FcLayer reduce;                 // fc_reduce
  std::vector<FcLayer> select;    // one layer [M·C, d], or M layers [C, d]
  SelectiveKernelActivation act = SelectiveKernelActivation::kNone;
};

class FuseSelectiveKernelPass final : public Pass {
 public:
  const char* name() const override { return "fuse_selective_kernel"; }
  const char* description() const override {
    return "stacked branches -> sum -> mean -> fc_reduce -> (Relu) -> fc_select -> softmax over branches -> "
           "weighted sum -> one SelectiveKernel op";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const GraphIndex index(g);
    std::vector<bool> erase(g.nodes.size(), false);
    const size_t num_nodes = g.nodes.size();
    for (size_t i = 0; i < num_nodes; ++i) {
      SkBlock sk;
      if (!Matcher(g, index, erase).match(i, &sk)) continue;
      const Node& out = g.nodes[i];
      const int32_t m = static_cast<int32_t>(sk.branches.size());
      Node fused;
      fused.type = OpType::kSelectiveKernel;
      fused.name = out.name;
      fused.attrs = SelectiveKernelAttrs{m, sk.act};
      fused.inputs = sk.branches;
      const FcLayer select = sk.select.size() == 1 ? sk.select[0] : concatenated(g, sk, out.name);
      for (int32_t t : {sk.reduce.weight, sk.reduce.bias, kAbsent, kAbsent, select.weight, select.bias})
        fused.inputs.push_back(t);
      while (fused.inputs.back() == kAbsent) fused.inputs.pop_back();
      fused.outputs = out.outputs;
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      for (int32_t n : sk.nodes) erase[n] = true;
      g.nodes[i] = std::move(fused);
      *modified = true;
    }
    if (*modified) erase_nodes(g, erase);
    return Status::Ok();
  }

 private:
  // The per-branch select layers' weights [C,d(,1,1)] stacked into one [M·C,d] constant, their biases into
  // one [M·C] (zeros for a layer without bias; kAbsent when none has one).
  static FcLayer concatenated(Graph& g, const SkBlock& sk, const std::string& name) {
    const Shape w0 = g.tensors[sk.select[0].weight].shape;
    const int64_t c = w0[0], d = w0[1], m = static_cast<int64_t>(sk.select.size());
    std::vector<float> w, b;
    bool any_bias = false;
    for (const FcLayer& l : sk.select) {
      const float* src = g.tensors[l.weight].f32();
      w.insert(w.end(), src, src + c * d);
      any_bias = any_bias || l.bias != kAbsent;
    }
    FcLayer r;
    r.weight = g.add_constant(name + ".fc_select_weight", Shape{m * c, d}, std::move(w));
    if (any_bias) {
      for (const FcLayer& l : sk.select) {
        if (l.bias == kAbsent) {
          b.insert(b.end(), static_cast<size_t>(c), 0.0f);
        } else {
          const float* src = g.tensors[l.bias].f32();
          b.insert(b.end(), src, src + c);
        }
      }
      r.bias = g.add_constant(name + ".fc_select_bias", Shape{m * c}, std::move(b));
    }
    return r;
  }

  class Matcher {
   public:
    Matcher(const Graph& g, const GraphIndex& index, const std::vector<bool>& erase)
        : g_(g), index_(index), erase_(erase) {}

    bool match(size_t root, SkBlock* sk) {
      sk_ = sk;
      const Node& out = g_.nodes[root];
      // y = ReduceSum over axis k of P, keepdims 0: [B,C,H,W] from rank 5.
      if (out.type != OpType::kReduceSum || out.inputs.size() != 1 || out.outputs.size() != 1) return false;
      const int32_t p = out.inputs[0];
      if (!single_axis(out, 5, &sk->k) || std::get<ReduceMeanAttrs>(out.attrs).keepdims) return false;
      const Shape& fs = shape(p);
      const Shape& ys = shape(out.outputs[0]);
      if (fs.rank != 5 || ys.rank != 4) return false;
      const int k = sk->k;
      if (k != 0 && k != 1) return false;
      x_ = k == 0 ? Shape{fs[1], fs[2], fs[3], fs[4]} : Shape{fs[0], fs[2], fs[3], fs[4]};
      if (ys != x_) return false;
      m_ = fs[k];
      if (m_ < 1 || m_ > kMaxSelectiveKernelBranches) return false;
      // P = Mul(F, A) in either order, A = Softmax(L, axis k) with F's shape but H = W = 1.
      int32_t mul = -1;
      if (!producer(p, OpType::kMul, 1, &mul) || g_.nodes[mul].inputs.size() != 2) return false;
      Shape as = fs;
      as[3] = as[4] = 1;
      for (int a_operand : {1, 0}) {
        const int32_t f = g_.nodes[mul].inputs[1 - a_operand], a = g_.nodes[mul].inputs[a_operand];
        if (shape(f) != fs || shape(a) != as) continue;
        const size_t mark = sk->nodes.size();
        f_reduced_ = kAbsent;
        add_leaves_.clear();
        if (attention(a, as) && stacked(f) && leaves_are_branches()) return true;
        sk->nodes.resize(mark);
        sk->branches.clear();
        sk->select.clear();
      }
      return false;
    }

   private:
    const Shape& shape(int32_t t) const { return g_.tensors[t].shape; }

    // The producer of `t`, of type `type`, read `readers` times in all (all inside the block) and no graph
    // output; recorded as one of the block's nodes.
    bool producer(int32_t t, OpType type, int readers, int32_t* node) {
      if (t == kAbsent || index_.consumers[t] != readers || is_graph_output(g_, t)) return false;
      const int32_t n = index_.producer[t];
      if (n < 0 || erase_[n] || g_.nodes[n].type != type || g_.nodes[n].outputs.size() != 1) return false;
      if (std::find(sk_->nodes.begin(), sk_->nodes.end(), n) == sk_->nodes.end()) sk_->nodes.push_back(n);
      *node = n;
      return true;
    }

    // The fused op's weights are float32 constants (per-branch ones are concatenated from their data).
    bool is_float_constant(int32_t t) const {
      return g_.tensors[t].is_constant && g_.tensors[t].dtype == DType::kFloat32 &&
             g_.tensors[t].f32() != nullptr;
    }

    OpType producer_type(int32_t t) const {
      const int32_t n = index_.producer[t];
      return n < 0 ? OpType::kAdd : g_.nodes[n].type;
    }
    bool produced_by(int32_t t, OpType type) const {
      return index_.producer[t] >= 0 && producer_type(t) == type;
    }

    // Follows single-reader Reshapes back from `t` (each a view; their shapes are checked by the caller).
    int32_t through_reshapes(int32_t t) {
      int32_t n = -1;
      while (produced_by(t, OpType::kReshape) && producer(t, OpType::kReshape, 1, &n))
        t = g_.nodes[n].inputs[0];
      return t;
    }

    // The one axis of a reduction over a tensor of rank `rank`.
    bool single_axis(const Node& n, int rank, int* axis) const {
      const auto& a = std::get<ReduceMeanAttrs>(n.attrs);
      return a.axes.size() == 1 && normalize_axis(a.axes[0], rank, axis);
    }

    // F: the branches stacked on axis k (read by the Mul, and by U's ReduceSum when U is one).
    bool stacked(int32_t f) {
      const int k = sk_->k;
      const int readers = index_.consumers[f];
      if (readers != 1 && readers != 2) return false;
      int32_t n = -1;
      if (produced_by(f, OpType::kConcat)) {
        // torch.stack: each branch viewed with a 1 at axis k, concatenated on k.
        if (!producer(f, OpType::kConcat, readers, &n)) return false;
        int axis;
        if (!normalize_axis(std::get<ConcatAttrs>(g_.nodes[n].attrs).axis, 5, &axis) || axis != k)
          return false;
        const Node& cat = g_.nodes[n];
        if (static_cast<int64_t>(cat.inputs.size()) != m_) return false;
        Shape one = shape(f);
        one[k] = 1;
        for (int32_t t : cat.inputs) {
          int32_t r = -1;
          if (shape(t) != one || !producer(t, OpType::kReshape, 1, &r)) return false;
          const int32_t b = g_.nodes[r].inputs[0];
          if (shape(b) != x_) return false;
          sk_->branches.push_back(b);
        }
      } else {
        // The survey's cat on the channels, viewed as [B,M,C,H,W].
        if (k != 1 || !producer(f, OpType::kReshape, readers, &n)) return false;
        const int32_t flat = g_.nodes[n].inputs[0];
        const Shape want{x_[0], m_ * x_[1], x_[2], x_[3]};
        if (shape(flat) != want || !producer(flat, OpType::kConcat, 1, &n)) return false;
        int axis;
        if (!normalize_axis(std::get<ConcatAttrs>(g_.nodes[n].attrs).axis, 4, &axis) || axis != 1)
          return false;
        if (static_cast<int64_t>(g_.nodes[n].inputs.size()) != m_) return false;
        for (int32_t b : g_.nodes[n].inputs) {
          if (shape(b) != x_) return false;
          sk_->branches.push_back(b);
        }
      }
      return readers == 2 ? f_reduced_ == f : f_reduced_ == kAbsent;
    }

    // U: a ReduceSum of F over k, or Adds of exactly the branches. Called before `stacked`, so it records
    // which F a ReduceSum reads (f_reduced_) or which branches the Adds read (add_leaves_), checked after.
    bool fused_sum(int32_t u) {
      if (shape(u) != x_) return false;
      int32_t n = -1;
      if (produced_by(u, OpType::kReduceSum)) {
        int axis;
        if (!producer(u, OpType::kReduceSum, 1, &n) || g_.nodes[n].inputs.size() != 1 ||
            !single_axis(g_.nodes[n], 5, &axis) || axis != sk_->k ||
            std::get<ReduceMeanAttrs>(g_.nodes[n].attrs).keepdims)
          return false;
        f_reduced_ = g_.nodes[n].inputs[0];
        return true;
      }
      return add_tree(u, 1);
    }

    // The leaves of a tree of single-reader Adds of [B,C,H,W] tensors rooted at `t` (t itself read `readers`
    // times).
    bool add_tree(int32_t t, int readers) {
      int32_t n = -1;
      if (!produced_by(t, OpType::kAdd) || !producer(t, OpType::kAdd, readers, &n)) return false;
      for (int32_t in : g_.nodes[n].inputs) {
        if (shape(in) != x_) return false;
        if (produced_by(in, OpType::kAdd) && index_.consumers[in] == 1 && !is_graph_output(g_, in)) {
          if (!add_tree(in, 1)) return false;
        } else {
          add_leaves_.push_back(in);
        }
      }
      return true;
    }

    // s: the channel means of U, as [B,C,1,1] (conv form) or [B,C] (vector form).
    bool squeeze(int32_t s, bool* vector_form) {
      const Shape image_vec{x_[0], x_[1], 1, 1}, flat_vec{x_[0], x_[1]};
      *vector_form = shape(s) == flat_vec;
      if (!*vector_form && shape(s) != image_vec) return false;
      int32_t n = -1;
      const OpType type = producer_type(s);
      if (index_.producer[s] < 0) return false;
      if (type == OpType::kAdaptiveAvgPool2d && !*vector_form) {
        const auto& a = std::get<AdaptiveAvgPool2dAttrs>(g_.nodes[index_.producer[s]].attrs);
        if (a.out_h != 1 || a.out_w != 1 || !producer(s, type, 1, &n)) return false;
        return fused_sum(g_.nodes[n].inputs[0]);
      }
      if (type != OpType::kReduceMean || !producer(s, type, 1, &n)) return false;
      const auto& a = std::get<ReduceMeanAttrs>(g_.nodes[n].attrs);
      const int32_t in = g_.nodes[n].inputs[0];
      if (shape(in) == x_) {  // over H and W at once
        int k2, k3;
        if (a.axes.size() != 2 || !normalize_axis(a.axes[0], 4, &k2) || !normalize_axis(a.axes[1], 4, &k3) ||
            std::set<int>{k2, k3} != std::set<int>{2, 3} || a.keepdims == *vector_form)
          return false;
        return fused_sum(in);
      }
      // xmu: U.mean(-1).mean(-1), over W ([B,C,H]) then over H ([B,C]).
      int axis;
      if (!*vector_form || a.keepdims || a.axes.size() != 1 || !normalize_axis(a.axes[0], 3, &axis) ||
          axis != 2 || shape(in) != Shape{x_[0], x_[1], x_[2]} || !producer(in, OpType::kReduceMean, 1, &n))
        return false;
      const auto& inner = std::get<ReduceMeanAttrs>(g_.nodes[n].attrs);
      if (inner.keepdims || inner.axes.size() != 1 || !normalize_axis(inner.axes[0], 4, &axis) || axis != 3)
        return false;
      return fused_sum(g_.nodes[n].inputs[0]);
    }

    // The fully connected layer producing `t`: a 1x1 Conv2d (groups 1, unpadded, channels first) on
    // [B,in,1,1] or a Linear without residual on [B,in]; its epilogue in *act.
    bool fc(int32_t t, bool vector_form, int readers, FcLayer* layer, Activation* act) {
      int32_t n = -1;
      if (!producer(t, vector_form ? OpType::kLinear : OpType::kConv2d, readers, &n)) return false;
      const Node& node = g_.nodes[n];
      if (node.inputs.size() < 2 || node.inputs[1] == kAbsent || !is_float_constant(node.inputs[1]))
        return false;
      layer->node = n;
      layer->weight = node.inputs[1];
      layer->bias = node.inputs.size() > 2 ? node.inputs[2] : kAbsent;
      if (layer->bias != kAbsent && !is_float_constant(layer->bias)) return false;
      const Shape& w = shape(layer->weight);
      if (vector_form) {
        if (node.inputs.size() > 3 && node.inputs[3] != kAbsent) return false;  // a residual
        *act = std::get<LinearAttrs>(node.attrs).activation;
        return w.rank == 2;
      }
      const auto& a = std::get<Conv2dAttrs>(node.attrs);
      *act = a.activation;
      return !a.channels_last && a.groups == 1 && a.pad_h == 0 && a.pad_w == 0 && w.rank == 4 && w[2] == 1 &&
             w[3] == 1;
    }

    // A: the softmax over the branches of the select logits, then everything behind them down to U.
    bool attention(int32_t a, const Shape& as) {
      int32_t n = -1;
      if (!producer(a, OpType::kSoftmax, 1, &n)) return false;
      int axis;
      if (!normalize_axis(std::get<SoftmaxAttrs>(g_.nodes[n].attrs).axis, 5, &axis) || axis != sk_->k)
        return false;
      const int32_t l = g_.nodes[n].inputs[0];
      if (shape(l) != as) return false;
      // The select layers: one [B,M·C(,1,1)] behind reshapes, or M [B,C(,1,1)] concatenated on k.
      std::vector<int32_t> select_out;
      if (produced_by(l, OpType::kConcat)) {
        if (!producer(l, OpType::kConcat, 1, &n)) return false;
        if (!normalize_axis(std::get<ConcatAttrs>(g_.nodes[n].attrs).axis, 5, &axis) || axis != sk_->k ||
            static_cast<int64_t>(g_.nodes[n].inputs.size()) != m_)
          return false;
        for (int32_t t : g_.nodes[n].inputs) select_out.push_back(through_reshapes(t));
      } else {
        const int32_t t = through_reshapes(l);
        if (produced_by(t, OpType::kConcat)) {  // the survey: per-branch convs concatenated on channels
          if (!producer(t, OpType::kConcat, 1, &n) || shape(t) != Shape{x_[0], m_ * x_[1], 1, 1})
            return false;
          if (!normalize_axis(std::get<ConcatAttrs>(g_.nodes[n].attrs).axis, 4, &axis) || axis != 1 ||
              static_cast<int64_t>(g_.nodes[n].inputs.size()) != m_)
            return false;
          for (int32_t s : g_.nodes[n].inputs) select_out.push_back(through_reshapes(s));
        } else {
          select_out.push_back(t);
        }
      }
      // Every select layer reads the same z.
      const int64_t rows = select_out.size() == 1 ? m_ * x_[1] : x_[1];
      const bool vector_form = shape(select_out[0]).rank == 2;
      const Shape want = vector_form ? Shape{x_[0], rows} : Shape{x_[0], rows, 1, 1};
      int32_t z = kAbsent;
      for (int32_t t : select_out) {
        FcLayer layer;
        Activation act;
        if (shape(t) != want || !fc(t, vector_form, 1, &layer, &act) || act != Activation::kNone)
          return false;
        const int32_t zin = g_.nodes[layer.node].inputs[0];
        if (z != kAbsent && zin != z) return false;
        z = zin;
        sk_->select.push_back(layer);
      }
      const int64_t d = shape(z).rank >= 2 ? shape(z)[1] : -1;
      for (const FcLayer& layer : sk_->select) {
        const Shape& w = shape(layer.weight);
        if (w[0] != rows || w[1] != d) return false;
        if (layer.bias != kAbsent && shape(layer.bias) != Shape{rows}) return false;
      }
      // z = act(fc_reduce(s)): Relu as a node or as fc_reduce's epilogue, or none.
      const int readers = static_cast<int>(sk_->select.size());
      const Shape zs = vector_form ? Shape{x_[0], d} : Shape{x_[0], d, 1, 1};
      if (shape(z) != zs) return false;
      int32_t t = z;
      bool relu_node = false;
      if (produced_by(z, OpType::kRelu)) {
        if (!producer(z, OpType::kRelu, readers, &n)) return false;
        t = g_.nodes[n].inputs[0];
        if (shape(t) != zs) return false;
        relu_node = true;
      }
      Activation act;
      if (!fc(t, vector_form, relu_node ? 1 : readers, &sk_->reduce, &act)) return false;
      if (relu_node ? act != Activation::kNone : act != Activation::kNone && act != Activation::kRelu)
        return false;
      sk_->act = relu_node || act == Activation::kRelu ? SelectiveKernelActivation::kRelu
                                                       : SelectiveKernelActivation::kNone;
      const Shape& wr = shape(sk_->reduce.weight);
      if (wr[0] != d || wr[1] != x_[1]) return false;
      if (sk_->reduce.bias != kAbsent && shape(sk_->reduce.bias) != Shape{d}) return false;
      bool s_vector = false;
      const int32_t s = g_.nodes[sk_->reduce.node].inputs[0];
      if (!squeeze(s, &s_vector) || s_vector != vector_form) return false;
      return true;
    }

    // After `attention` and `stacked` found U and F: the Adds' leaves must be the branches, each once.
    bool leaves_are_branches() const {
      if (f_reduced_ != kAbsent) return add_leaves_.empty();
      std::vector<int32_t> a = add_leaves_, b = sk_->branches;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      return a == b;
    }

    const Graph& g_;
    const GraphIndex& index_;
    const std::vector<bool>& erase_;
    SkBlock* sk_ = nullptr;
    Shape x_;
    int64_t m_ = 0;
    int32_t f_reduced_ = kAbsent;
    std::vector<int32_t> add_leaves_;
  };
};

}  // namespace

std::unique_ptr<Pass> create_fuse_selective_kernel_pass() {
  return std::make_unique<FuseSelectiveKernelPass>();
}

}  // namespace vitrt
