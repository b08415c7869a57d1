// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The one table of ops (core/ops/op_list.h) and everything that follows from it: the schema rows, the file
// format's op codes (formats/op_codes.h) and every backend's answer for every op (backends/op_table.h).
#include <doctest/doctest.h>
#include <flatbuffers/flatbuffers.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/x86/x86_backend.h"
#include "model_bytes.h"
#include "model_writer.h"
#include "op_codes.h"
#include "op_options.h"
#include "ops/op_registry.h"
#include "test_graphs.h"
#include "vitrt_generated.h"
#if defined(VITRT_HAVE_CUDA)
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/host_plan.h"
#endif

using namespace vitrt;

namespace {

std::vector<OpType> all_ops() {
  std::vector<OpType> ops;
  for (int32_t i = 0; i < kNumOpTypes; ++i) ops.push_back(static_cast<OpType>(i));
  return ops;
}

// The attribute struct the op table names for `type`, default-constructed.
OpAttrs default_attrs(OpType type) {
  switch (type) {
#define VITRT_OP_DEFAULT_ATTRS(name, attrs, ...) \
  case OpType::k##name:                          \
    return attrs{};
    VITRT_OP_LIST(VITRT_OP_DEFAULT_ATTRS)
#undef VITRT_OP_DEFAULT_ATTRS
  }
  return NoAttrs{};
}

// A node of `type` with its default attributes and the fewest operands its schema allows.
Node minimal_node(OpType type) {
  const OpSchema* s = find_op_schema(type);
  Node n;
  n.type = type;
  n.attrs = default_attrs(type);
  for (int i = 0; i < s->min_inputs; ++i) n.inputs.push_back(i);
  for (int o = 0; o < s->min_outputs; ++o) n.outputs.push_back(s->min_inputs + o);
  n.name = std::string("test.") + s->name;
  return n;
}

// The bytes of a lone Operator table holding `node`'s options, as the writer encodes them.
std::vector<uint8_t> encoded_operator(const Node& node) {
  flatbuffers::FlatBufferBuilder fbb;
  const EncodedOptions opts = encode_op_options(fbb, node);
  fbb.Finish(fb::CreateOperator(fbb, 0, fbb.CreateVector(node.inputs), fbb.CreateVector(node.outputs),
                                opts.type, opts.offset, fbb.CreateString(node.name)));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace

TEST_CASE("op table: one schema row per op, named, with shape inference and a sane arity") {
  std::set<std::string> names;
  for (OpType t : all_ops()) {
    const OpSchema* s = find_op_schema(t);
    REQUIRE(s != nullptr);
    INFO("op ", s->name);
    CHECK(s->type == t);
    CHECK(std::string(op_type_name(t)) == s->name);
    CHECK(names.insert(s->name).second);
    CHECK(static_cast<bool>(s->infer));
    CHECK(s->min_inputs >= 1);
    CHECK(s->min_inputs <= s->max_inputs);
    CHECK(s->max_inputs <= kMaxOpInputs);
    CHECK(s->min_outputs >= 1);
    CHECK(s->min_outputs <= s->max_outputs);
    CHECK(s->max_outputs <= kMaxOpOutputs);
    CHECK(s->max_version >= 1);
    CHECK(s->origin == op_origin(t));
  }
  CHECK(find_op_schema(static_cast<OpType>(kNumOpTypes)) == nullptr);
  CHECK(find_op_schema(static_cast<OpType>(-1)) == nullptr);
  CHECK(std::string(op_type_name(static_cast<OpType>(kNumOpTypes))) == "UnknownOp");
}

TEST_CASE("formats: every serialised op has its own op code and round-trips; planner-only ops have none") {
  std::set<int32_t> codes;
  for (OpType t : all_ops()) {
    INFO("op ", op_type_name(t));
    OpCode code;
    const bool stored = op_code_of(t, &code);
    CHECK(stored == (op_origin(t) == OpOrigin::kSerialised));
    if (!stored) continue;
    CHECK(codes.insert(static_cast<int32_t>(code.builtin)).second);
    OpType back = OpType::kAdd;
    REQUIRE(op_type_of_code(code.builtin, &back).ok());
    CHECK(back == t);

    // The options: attrs -> Operator -> attrs gives the same struct, and encoding it again the same bytes.
    const Node n = minimal_node(t);
    const std::vector<uint8_t> bytes = encoded_operator(n);
    const fb::Operator* op = flatbuffers::GetRoot<fb::Operator>(bytes.data());
    CHECK(op->options_type() == code.options);
    Node decoded = n;
    decoded.attrs = NoAttrs{};
    const Status st = decode_op_options(*op, t, n.name, &decoded.attrs);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(decoded.attrs.index() == n.attrs.index());
    CHECK(encoded_operator(decoded) == bytes);
  }
  // No code is taken by an op of another kind either: every code the schema names maps to an op or is
  // refused.
  for (int32_t c = static_cast<int32_t>(fb::BuiltinOp::MIN); c <= static_cast<int32_t>(fb::BuiltinOp::MAX);
       ++c) {
    OpType t;
    const Status st = op_type_of_code(static_cast<fb::BuiltinOp>(c), &t);
    CHECK_MESSAGE((codes.count(c) == 1) == st.ok(), "code ", c, ": ", st.message());
    if (!st.ok()) CHECK(st.message().find(std::to_string(c)) != std::string::npos);
  }
}

TEST_CASE("formats: the planner's ConvMlp is never written, and its reserved code 25 is refused on load") {
  OpType t;
  Status st = op_type_of_code(fb::BuiltinOp::CONV_MLP, &t);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("op code 25 (CONV_MLP) is reserved") != std::string::npos, st.message());
  st = op_type_of_code(static_cast<fb::BuiltinOp>(1000), &t);
  CHECK_MESSAGE(st.message().find("unknown op 1000") != std::string::npos, st.message());

  // A file that holds the code anyway (crafted: the writer cannot make one) fails to load, naming the code.
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(test::tiny_classifier(), &bytes).ok());
  REQUIRE(test::load_model_bytes(bytes).ok());
  bytes = test::edited_model_bytes(bytes, [](fb::Model* m) {
    m->mutable_operator_codes()->GetMutableObject(0)->mutate_builtin(fb::BuiltinOp::CONV_MLP);
  });
  st = test::load_model_bytes(bytes);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("operator code #0: op code 25 (CONV_MLP) is reserved") != std::string::npos,
                st.message());

  // The writer refuses a planned graph's ConvMlp rather than storing it.
  Graph g;
  const int32_t src = g.add_activation("src", Shape{kDynamicDim, 4, 2});
  g.inputs = {src};
  const int32_t w1 = g.add_constant("fc1.w", Shape{4, 2}, std::vector<float>(8, 0.5f));
  const int32_t dw = g.add_constant("dw.w", Shape{4, 1, 3, 3}, std::vector<float>(36, 0.5f));
  const int32_t w2 = g.add_constant("fc2.w", Shape{2, 4}, std::vector<float>(8, 0.5f));
  const int32_t dst = g.add_activation("dst", Shape());
  ConvMlpAttrs a;
  a.height = a.width = 2;
  g.add_node(OpType::kConvMlp, a, {src, w1, kAbsent, dw, kAbsent, w2}, {dst}, "mlp");
  g.outputs = {dst};
  st = write_model_memory(g, &bytes);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(st.message().find("ConvMlp 'mlp'") != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find("made by the planner") != std::string::npos, st.message());
}

namespace {

// What `backend` says for every op, checked against its supports() and against the reference backend, which
// must be there for every op another backend hands to it (or whose node its own kernel declines).
void check_backend_answers(const Backend& backend) {
  const std::unique_ptr<Backend> ref = create_reference_backend();
  for (OpType t : all_ops()) {
    const OpImpl impl = backend.op_impl(t);
    INFO("backend ", backend.name(), ", op ", op_type_name(t), ": ", op_impl_name(impl));
    CHECK((impl == OpImpl::kKernel || impl == OpImpl::kReference || impl == OpImpl::kNotImplemented));
    const Node n = minimal_node(t);
    if (impl == OpImpl::kNotImplemented) CHECK_FALSE(backend.supports(n));
    if (impl == OpImpl::kReference) {
      CHECK(backend.supports(n));
      CHECK(ref->op_impl(t) == OpImpl::kKernel);
    }
  }
  const OpType beyond = static_cast<OpType>(kNumOpTypes);
  CHECK(backend.op_impl(beyond) == OpImpl::kNotImplemented);
  Node n = minimal_node(OpType::kAdd);
  n.type = beyond;
  CHECK_FALSE(backend.supports(n));
}

}  // namespace

TEST_CASE("backends: the reference backend has its own kernel for every op") {
  const std::unique_ptr<Backend> ref = create_reference_backend();
  check_backend_answers(*ref);
  for (OpType t : all_ops()) {
    INFO("op ", op_type_name(t));
    CHECK(ref->op_impl(t) == OpImpl::kKernel);
    CHECK(ref->supports(minimal_node(t)));
  }
}

TEST_CASE("backends: the cpu backend states an x86 kernel or the reference kernel for every op") {
  const std::unique_ptr<Backend> cpu = create_x86_backend();
  if (!cpu) {
    MESSAGE("skipped: no AVX2/AVX-512 here (or VITRT_FORCE_REF / VITRT_MAX_ISA=none)");
    return;
  }
  check_backend_answers(*cpu);
  int own = 0;
  for (OpType t : all_ops()) {
    const OpImpl impl = cpu->op_impl(t);
    INFO("op ", op_type_name(t), ": ", op_impl_name(impl));
    CHECK(impl != OpImpl::kNotImplemented);  // it falls back to the reference kernels for the others
    CHECK(cpu->supports(minimal_node(t)));
    if (impl == OpImpl::kKernel) ++own;
  }
  CHECK(own > 0);
  CHECK(cpu->op_impl(OpType::kLinear) == OpImpl::kKernel);
  CHECK(cpu->op_impl(OpType::kBatchNorm2d) == OpImpl::kReference);
}

#if defined(VITRT_HAVE_CUDA)
TEST_CASE(
    "backends: the cuda backend's table says kernel or not implemented, and agrees with its node check") {
  for (OpType t : all_ops()) {
    const OpImpl impl = cuda_op_impl(t);
    INFO("op ", op_type_name(t), ": ", op_impl_name(impl));
    CHECK(impl != OpImpl::kReference);  // no fallback to the CPU yet
    if (impl == OpImpl::kNotImplemented) CHECK_FALSE(cuda::cuda_supports_node(minimal_node(t)));
  }
  CHECK(cuda_op_impl(OpType::kLinear) == OpImpl::kKernel);
  CHECK(cuda_op_impl(OpType::kConv2d) == OpImpl::kNotImplemented);
  Status why;
  const std::unique_ptr<Backend> cuda = create_cuda_backend(0, &why);
  if (!cuda) {
    MESSAGE("the backend instance is skipped: ", why.message());
    return;
  }
  check_backend_answers(*cuda);
  for (OpType t : all_ops()) CHECK(cuda->op_impl(t) == cuda_op_impl(t));
}
#endif
