// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SelectiveKernel (core/ir/op_attrs.h, SelectiveKernelAttrs): x_0 .. x_{M-1} [B,C,H,W], fc_reduce_weight
// [d,C] or [d,C,1,1], fc_reduce_bias [d]?, z_scale [d]?, z_shift [d]?, fc_select_weight [M·C,d] or
// [M·C,d,1,1], fc_select_bias [M·C]? -> [B,C,H,W]. Also the attribute rules (ops/selective_kernel_attrs.h).
#include "common/checked_math.h"
#include "ops/op_registry.h"
#include "ops/selective_kernel_attrs.h"

namespace vitrt {

// op_list.h's max_inputs for SelectiveKernel. Its min_inputs, 2 (branch 0, then branch 1 or with one branch
// fc_reduce_weight), are the inputs present whatever M is: the rest is checked here.
static_assert(kMaxSelectiveKernelBranches + 6 == 22, "core/ops/op_list.h: SelectiveKernel's max_inputs");

std::string selective_kernel_attrs_problem(const SelectiveKernelAttrs& a) {
  if (a.branches < 1 || a.branches > kMaxSelectiveKernelBranches)
    return "branches must be 1.." + std::to_string(kMaxSelectiveKernelBranches) + ", got " +
           std::to_string(a.branches);
  const int act = static_cast<int>(a.z_activation);
  if (act < 0 || act >= kNumSelectiveKernelActivations)
    return "z_activation " + std::to_string(act) + " is unknown";
  return "";
}

namespace {

// A fully connected weight [rows, cols], also as a 1x1 convolution's [rows, cols, 1, 1].
bool is_fc_weight(const Shape& w, int64_t rows, int64_t cols) {
  if (w.rank == 2) return w[0] == rows && w[1] == cols;
  return w.rank == 4 && w[0] == rows && w[1] == cols && w[2] == 1 && w[3] == 1;
}

}  // namespace

Status infer_selective_kernel(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  auto fail = [](const std::string& what) { return bad_model("SelectiveKernel: " + what); };
  const auto& a = std::get<SelectiveKernelAttrs>(node.attrs);
  const std::string why = selective_kernel_attrs_problem(a);
  if (!why.empty()) return fail(why);
  const SelectiveKernelInputs in{a.branches};
  if (num_src < in.fc_select_weight() + 1 || num_src > in.count())
    return fail(std::to_string(a.branches) + " branches take " + std::to_string(in.fc_select_weight() + 1) +
                ".." + std::to_string(in.count()) + " inputs, got " + std::to_string(num_src));
  auto optional = [&](int i) { return i < num_src ? src[i] : nullptr; };
  for (int i = 0; i < a.branches; ++i)
    if (!src[i]) return fail("branch " + std::to_string(i) + " is required");
  const Shape& x = *src[0];
  if (x.rank != 4) return fail("branch 0 must be [B,C,H,W], got " + x.str());
  for (int i = 1; i < a.branches; ++i)
    if (*src[i] != x)
      return fail("branch " + std::to_string(i) + " must have branch 0's shape " + x.str() + ", got " +
                  src[i]->str());
  const int64_t c = x[1];
  const std::string cs = std::to_string(c);
  if (!src[in.fc_reduce_weight()]) return fail("fc_reduce_weight is required");
  if (!src[in.fc_select_weight()]) return fail("fc_select_weight is required");
  const Shape& wr = *src[in.fc_reduce_weight()];
  const int64_t d = wr.rank >= 1 ? wr[0] : -1;
  if (d < 1 || !is_fc_weight(wr, d, c))
    return fail("fc_reduce_weight must be [d," + cs + "] or [d," + cs + ",1,1], got " + wr.str());
  const std::string ds = std::to_string(d);
  if (optional(in.fc_reduce_bias()) && *src[in.fc_reduce_bias()] != Shape{d})
    return fail("fc_reduce_bias must be [" + ds + "], got " + src[in.fc_reduce_bias()]->str());
  const Shape* scale = optional(in.z_scale());
  const Shape* shift = optional(in.z_shift());
  if (!scale != !shift) return fail("z_scale and z_shift come together");
  if (scale && (*scale != Shape{d} || *shift != Shape{d}))
    return fail("z_scale and z_shift must be [" + ds + "], got " + scale->str() + " and " + shift->str());
  int64_t mc = 0;
  if (!checked_mul(c, static_cast<int64_t>(a.branches), &mc)) return fail("M·C overflows");
  const std::string mcs = std::to_string(mc);
  if (!is_fc_weight(*src[in.fc_select_weight()], mc, d))
    return fail("fc_select_weight must be [" + mcs + "," + ds + "] or [" + mcs + "," + ds + ",1,1], got " +
                src[in.fc_select_weight()]->str());
  if (optional(in.fc_select_bias()) && *src[in.fc_select_bias()] != Shape{mc})
    return fail("fc_select_bias must be [" + mcs + "], got " + src[in.fc_select_bias()]->str());
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
