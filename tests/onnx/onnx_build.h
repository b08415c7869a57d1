// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Building small ONNX models in a test with ONNX's own protobuf classes.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace vitrt::test {

inline onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims,
                                      std::vector<float> values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

// `dims` values base + 0.01·((i·7) mod 13): small, distinct, deterministic weights.
inline onnx::TensorProto pattern_tensor(const std::string& name, std::vector<int64_t> dims, float base) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(base + 0.01f * static_cast<float>((i * 7) % 13));
  return float_tensor(name, std::move(dims), std::move(v));
}

inline onnx::TensorProto int_tensor(const std::string& name, std::vector<int64_t> dims,
                                    std::vector<int64_t> values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                                 std::vector<std::string> out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out[0]);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

inline void set_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void set_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// A model at `opset` with one float input `x` of shape [batch, dims...] and the graph output `y`.
inline onnx::ModelProto model_with_input(std::vector<int64_t> dims, int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("vitrt-test");
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("test");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  return m;
}

}  // namespace vitrt::test
