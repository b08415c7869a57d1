// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The one table of ops (docs/architecture.md §11.1). Everything else that lists ops follows from it:
//   * the IR enum `OpType` (ir/op_type.h) and kNumOpTypes, in this order;
//   * the op names and the OpSchema rows of ops/op_registry.cpp (arity, versions, shape inference);
//   * the declarations of the shape inference functions (ops/op_registry.h);
//   * the per-backend tables (backends/op_table.h), which must state for every op, in this order, a kernel
//     factory, the reference kernel or "not implemented": a missing row fails the build;
//   * the file-format mapping (formats/op_codes.cpp), which must give every serialised op its op code.
//
// One line per op:
//   X(Name, Attrs, infer_fn, min_inputs, max_inputs, min_outputs, max_outputs, max_version, origin)
//     Name         OpType::k<Name>; also the op's display name ("Name")
//     Attrs        its attribute struct in ir/op_attrs.h (NoAttrs when it has none)
//     infer_fn     its shape inference, in ops/<op>.cpp (ops may share one)
//     max_version  versions 1..max_version are understood
//     origin       kSerialised: may appear in a model file (it has a BuiltinOp in formats/schema/vitrt.fbs);
//                  kPlannerOnly: made by a planner pass inside a session, never written or read
//
// The IR enum is not the file format's: reordering is allowed (formats/op_codes.cpp maps each serialised op
// to its fixed on-disk code), but new ops go at the end to keep diffs small.
#define VITRT_OP_LIST(X)                                                                                   \
  X(Conv2d, Conv2dAttrs, infer_conv2d, 2, 4, 1, 1, 1, kSerialised)                                         \
  X(BatchNorm2d, BatchNorm2dAttrs, infer_batch_norm2d, 5, 5, 1, 1, 1, kSerialised)                         \
  X(Linear, LinearAttrs, infer_linear, 2, 4, 1, 1, 1, kSerialised)                                         \
  X(LayerNorm, LayerNormAttrs, infer_layer_norm, 1, 3, 1, 1, 1, kSerialised)                               \
  X(Gelu, GeluAttrs, infer_unary, 1, 1, 1, 1, 1, kSerialised)                                              \
  X(Relu, NoAttrs, infer_unary, 1, 1, 1, 1, 1, kSerialised)                                                \
  X(Add, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Mul, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Concat, ConcatAttrs, infer_concat, 1, kMaxOpInputs, 1, 1, 1, kSerialised)                              \
  X(Slice, SliceAttrs, infer_slice, 1, 1, 1, 1, 2, kSerialised)                                            \
  X(Reshape, ReshapeAttrs, infer_reshape, 1, 1, 1, 1, 1, kSerialised)                                      \
  X(Transpose, TransposeAttrs, infer_transpose, 1, 1, 1, 1, 1, kSerialised)                                \
  X(ReduceMean, ReduceMeanAttrs, infer_reduce_mean, 1, 1, 1, 1, 1, kSerialised)                            \
  X(Softmax, SoftmaxAttrs, infer_softmax, 1, 1, 1, 1, 1, kSerialised)                                      \
  X(SoftmaxAttention, SoftmaxAttentionAttrs, infer_softmax_attention, 1, 5, 1, 2, 3, kSerialised)          \
  X(AdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs, infer_adaptive_avg_pool2d, 1, 1, 1, 1, 1, kSerialised)      \
  X(LinearAttention, LinearAttentionAttrs, infer_linear_attention, 6, 6, 1, 1, 1, kSerialised)             \
  X(ReusedAttention, ReusedAttentionAttrs, infer_reused_attention, 6, 6, 1, 2, 1, kSerialised)             \
  X(AttentionResidual, AttentionResidualAttrs, infer_attention_residual, 6, 6, 1, 1, 1, kSerialised)       \
  X(MatMul, NoAttrs, infer_matmul, 2, 2, 1, 1, 1, kSerialised)                                             \
  X(Sub, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Div, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Exp, NoAttrs, infer_unary, 1, 1, 1, 1, 1, kSerialised)                                                 \
  X(ReduceSum, ReduceMeanAttrs, infer_reduce_mean, 1, 1, 1, 1, 1, kSerialised)                             \
  X(ReduceMax, ReduceMeanAttrs, infer_reduce_mean, 1, 1, 1, 1, 1, kSerialised)                             \
  X(ConvMlp, ConvMlpAttrs, infer_conv_mlp, 1, 8, 1, 1, 1, kPlannerOnly)                                    \
  X(Unary, UnaryAttrs, infer_unary_kind, 1, 1, 1, 1, 1, kSerialised)                                       \
  X(Pow, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Min, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Max, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Pool2d, Pool2dAttrs, infer_pool2d, 1, 1, 1, 1, 1, kSerialised)                                         \
  X(Reduce, ReduceAttrs, infer_reduce, 1, 1, 1, 1, 1, kSerialised)                                         \
  X(LogSoftmax, SoftmaxAttrs, infer_softmax, 1, 1, 1, 1, 1, kSerialised)                                   \
  X(InstanceNorm, InstanceNormAttrs, infer_instance_norm, 3, 3, 1, 1, 1, kSerialised)                      \
  X(Compare, CompareAttrs, infer_compare, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(Where, NoAttrs, infer_where, 3, 3, 1, 1, 1, kSerialised)                                               \
  X(Pad, PadAttrs, infer_pad, 1, 1, 1, 1, 1, kSerialised)                                                  \
  X(Expand, ExpandAttrs, infer_expand, 1, 1, 1, 1, 1, kSerialised)                                         \
  X(SqueezeExcite, SqueezeExciteAttrs, infer_squeeze_excite, 2, 5, 1, 1, 1, kSerialised)                   \
  X(Fmod, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                     \
  X(Mod, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                      \
  X(ConvTranspose, ConvTransposeAttrs, infer_conv_transpose, 2, 3, 1, 1, 1, kSerialised)                   \
  X(ArgMax, ArgMaxAttrs, infer_arg_max, 1, 1, 1, 1, 1, kSerialised)                                        \
  X(Trilu, TriluAttrs, infer_trilu, 1, 1, 1, 1, 1, kSerialised)                                            \
  X(CumSum, CumSumAttrs, infer_cum_sum, 1, 1, 1, 1, 1, kSerialised)                                        \
  X(GatherElements, GatherElementsAttrs, infer_gather_elements, 2, 2, 1, 1, 1, kSerialised)                \
  X(TopK, TopKAttrs, infer_top_k, 1, 1, 2, 2, 1, kSerialised)                                              \
  X(Resize, ResizeAttrs, infer_resize, 1, 1, 1, 1, 1, kSerialised)                                         \
  X(ExternalAttention, ExternalAttentionAttrs, infer_external_attention, 2, 5, 1, 1, 1, kSerialised)       \
  X(PerformerAttention, PerformerAttentionAttrs, infer_performer_attention, 4, 4, 1, 1, 1, kSerialised)    \
  X(NystromAttention, NystromAttentionAttrs, infer_nystrom_attention, 3, 4, 1, 1, 1, kSerialised)          \
  X(SelectiveKernel, SelectiveKernelAttrs, infer_selective_kernel, 2, 22, 1, 1, 1, kSerialised)            \
  X(ScatterND, ScatterNDAttrs, infer_scatter_nd, 3, 3, 1, 1, 1, kSerialised)                               \
  X(FastformerAttention, FastformerAttentionAttrs, infer_fastformer_attention, 6, 6, 1, 1, 1, kSerialised) \
  X(KernelizedAttention, KernelizedAttentionAttrs, infer_kernelized_attention, 3, 3, 1, 1, 1, kSerialised) \
  X(PRelu, NoAttrs, infer_binary_broadcast, 2, 2, 1, 1, 1, kSerialised)                                    \
  X(Lrn, LrnAttrs, infer_lrn, 1, 1, 1, 1, 1, kSerialised)
