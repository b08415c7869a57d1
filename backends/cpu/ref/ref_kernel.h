// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What every reference kernel shares: a copy of its node, run-time validation of the actual shapes against
// the op's own shape inference (so a wrong shape is a Status, never a crash), and an allocation-free strided
// loop nest used by the layout ops (Concat, Slice, Transpose) and the broadcasting binary ops.
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "backends/backend.h"

namespace vitrt {
namespace ref {

class RefKernel : public Kernel {
 public:
  explicit RefKernel(const KernelPlan& plan);

  // Validates operands (check_float32_run in backends/operand_check.h: presence, dtype, data, shapes
  // consistent with the op's shape inference), then computes.
  Status run(const KernelArgs& args) final;

 protected:
  // Called with validated args: src shapes infer to exactly dst[0]'s shape.
  virtual Status compute(const KernelArgs& args) = 0;

  // runtime_error naming the op: "Linear 'blocks.0.mlp.fc1': <what>".
  Status fail(const std::string& what) const;
  // Fails unless the kernel's scratch needs (`floats` float32 values) fit in the workspace it was given.
  Status check_workspace(const KernelArgs& args, int64_t floats) const;

  Node node_;
  std::string label_;
  int planned_num_src_ = 0;
  std::vector<Shape> planned_src_;  // planned_num_src_ shapes
  Shape planned_dst_;
};

// Contiguous row-major strides (in elements) of `s`.
void contiguous_strides(const Shape& s, int64_t* strides);

// A loop nest over up to four strided operands, with dimensions of size 1 dropped and adjacent dimensions
// that are contiguous for every operand merged, so the innermost loop is as long as possible.
struct LoopNest {
  static constexpr int kMaxOperands = 4;  // Where: dst, cond, a, b
  int rank = 0;
  int num_operands = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxOperands][kMaxRank] = {};

  // Builds the nest from `rank` dims and per-operand strides (element units).
  void init(int rank, const int64_t* dims, int num_operands, const int64_t* const* strides);

  // Calls fn(offsets, n, inner_strides) for each innermost row: offsets[op] is the element offset of the
  // row's first element for each operand, n its length, inner_strides[op] the stride along it.
  template <class Fn>
  void for_each_row(Fn&& fn) const {
    int64_t off[kMaxOperands] = {};
    int64_t inner[kMaxOperands] = {};
    if (rank == 0) {
      fn(off, int64_t{1}, inner);
      return;
    }
    for (int d = 0; d < rank; ++d)
      if (dims[d] <= 0) return;
    const int last = rank - 1;
    for (int op = 0; op < num_operands; ++op) inner[op] = strides[op][last];
    int64_t idx[kMaxRank] = {};
    for (;;) {
      fn(off, dims[last], inner);
      int d = last - 1;
      for (; d >= 0; --d) {
        ++idx[d];
        for (int op = 0; op < num_operands; ++op) off[op] += strides[op][d];
        if (idx[d] < dims[d]) break;
        for (int op = 0; op < num_operands; ++op) off[op] -= strides[op][d] * dims[d];
        idx[d] = 0;
      }
      if (d < 0) return;
    }
  }
};

// dst[dst_strides] = src[src_strides] over `dims` (a stride 0 on src broadcasts).
void strided_copy(int rank, const int64_t* dims, const float* src, const int64_t* src_strides, float* dst,
                  const int64_t* dst_strides);

// Strides that broadcast `s` (numpy rules, right-aligned) to an output of rank `out_rank` and dims `out`:
// 0 where `s` has no such axis or has size 1 against a larger output.
void broadcast_strides(const Shape& s, const Shape& out, int64_t* strides);

// The node's attributes as T, or a bad_model Status when the node carries another kind.
template <class T>
Status get_attrs(const KernelPlan& plan, const T** out) {
  const T* a = std::get_if<T>(&plan.node->attrs);
  if (!a)
    return bad_model(std::string(op_type_name(plan.node->type)) + " '" + plan.node->name +
                     "': wrong attributes");
  *out = a;
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
