// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cpu/ref/ref_kernel.h"

#include <algorithm>
#include <cstring>

#include "backends/operand_check.h"

namespace vitrt {
namespace ref {

RefKernel::RefKernel(const KernelPlan& plan) : node_(*plan.node) {
  label_ = std::string(op_type_name(node_.type));
  if (!node_.name.empty()) label_ += " '" + node_.name + "'";
  planned_num_src_ = plan.num_src;
  planned_src_.assign(plan.src_shapes, plan.src_shapes + std::min(std::max(plan.num_src, 0), kMaxOpInputs));
  if (plan.num_dst > 0) planned_dst_ = plan.dst_shapes[0];
}

Status RefKernel::fail(const std::string& what) const {
  return runtime_error(label_ + ": " + what);
}

Status RefKernel::check_workspace(const KernelArgs& args, int64_t floats) const {
  if (floats <= 0) return Status::Ok();
  if (!args.workspace || args.workspace_bytes < static_cast<size_t>(floats) * sizeof(float))
    return fail("needs " + std::to_string(floats * static_cast<int64_t>(sizeof(float))) +
                " workspace bytes for these shapes, got " + std::to_string(args.workspace_bytes) +
                " (shapes larger than planned?)");
  return Status::Ok();
}

Status RefKernel::run(const KernelArgs& args) {
  const Status checked = check_float32_run(node_, args);
  if (!checked.ok()) return fail(checked.message());
  return compute(args);
}

void contiguous_strides(const Shape& s, int64_t* strides) {
  int64_t st = 1;
  for (int i = s.rank - 1; i >= 0; --i) {
    strides[i] = st;
    st *= s.dims[i];
  }
}

void LoopNest::init(int in_rank, const int64_t* in_dims, int nops, const int64_t* const* in_strides) {
  num_operands = nops;
  rank = 0;
  for (int d = 0; d < in_rank; ++d) {
    if (in_dims[d] == 1) continue;
    bool merge = rank > 0;
    for (int op = 0; op < nops && merge; ++op)
      merge = strides[op][rank - 1] == in_strides[op][d] * in_dims[d];
    if (merge) {
      dims[rank - 1] *= in_dims[d];
      for (int op = 0; op < nops; ++op) strides[op][rank - 1] = in_strides[op][d];
    } else {
      dims[rank] = in_dims[d];
      for (int op = 0; op < nops; ++op) strides[op][rank] = in_strides[op][d];
      ++rank;
    }
  }
}

void strided_copy(int rank, const int64_t* dims, const float* src, const int64_t* src_strides, float* dst,
                  const int64_t* dst_strides) {
  LoopNest nest;
  const int64_t* st[2] = {dst_strides, src_strides};
  nest.init(rank, dims, 2, st);
  nest.for_each_row([&](const int64_t* off, int64_t n, const int64_t* inner) {
    float* d = dst + off[0];
    const float* s = src + off[1];
    if (inner[0] == 1 && inner[1] == 1) {
      std::memcpy(d, s, static_cast<size_t>(n) * sizeof(float));
    } else if (inner[0] == 1 && inner[1] == 0) {
      const float v = *s;
      for (int64_t i = 0; i < n; ++i) d[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * inner[0]] = s[i * inner[1]];
    }
  });
}

void broadcast_strides(const Shape& s, const Shape& out, int64_t* strides) {
  int64_t contig[kMaxRank];
  contiguous_strides(s, contig);
  for (int i = 0; i < out.rank; ++i) {
    const int si = i - (out.rank - s.rank);
    strides[i] = (si < 0 || (s.dims[si] == 1 && out.dims[i] != 1)) ? 0 : contig[si];
  }
}

}  // namespace ref
}  // namespace vitrt
