// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Attention written as Hugging Face's transformers writes it for ViT, DeiT, Swin and PVT v2, exported by
// torch.onnx.export (fixture onnx_hf_attention_cases, tools/reference/make_onnx_hf_attention_cases.py):
// separate query/key/value Linears (and one packed qkv case), the scores divided by sqrt(d) for head sizes
// 32, 7, 48 and 24, where sqrt(d) is not a power of 2 and the export keeps the Div (and q divided before the
// product, d = 12: the op's scale on q); Swin's window attention adds its relative position bias and,
// shifted, the attention mask built in the forward pass (Swin V2's cosine attention the same, on separate q,
// k, v); PVT v2's reads 4 keys from its reduced grid for 64 queries. Each attention plans to one
// SoftmaxAttention with no Softmax left, multiplying by fl(1/fl(sqrt(d))) (cosine: q and k normalised, a
// scale per head), with its score terms, and on ref and cpu, fused and with fuse_attention disabled, the
// logits are within 1e-4 of PyTorch's float64 logits relative to their largest magnitude, with the same
// argmax, at batch 1 and 2, with poisoned activations. Near misses (the scalar divided by the scores or by q,
// one divisor per head, a divisor of 0) stay plain ops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"
#include "ops/op_test_util.h"

using namespace vitrt;

TEST_CASE("Hugging Face style attention (scores / sqrt(d)) plans to SoftmaxAttention and matches PyTorch") {
  const std::string dir = test::export_fixture_dir("onnx_hf_attention_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 8);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    test::ExportedCase ec;
    test::load_exported_case(dir, name, "logits64.npy", &ec);
    const int blocks = c["blocks"].get<int>();
    const auto terms = c["terms"].get<std::vector<std::string>>();
    REQUIRE(terms.size() == static_cast<size_t>(blocks));
    const float scale = 1.0f / std::sqrt(static_cast<float>(c["head_size"].get<int>()));
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = test::make_session(ec.model, backend, 2);
      auto unfused = test::make_session(ec.model, backend, 2, "fuse_attention");
      const auto ops = test::check_fused_plan(*fused, *unfused, "SoftmaxAttention", blocks);
      CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
      // In block order: the scale, and the score terms (a bias; a bias and the window mask) as inputs.
      int block = 0;
      for (const Node& n : fused->graph().nodes) {
        if (n.type != OpType::kSoftmaxAttention || block >= blocks) continue;
        CAPTURE(block);
        const auto& a = std::get<SoftmaxAttentionAttrs>(n.attrs);
        const std::string form = c["scale"].get<std::string>();
        CHECK(a.scale_on_q == (form == "q"));
        if (form == "cosine") {  // q and k normalised, one scale per head, the product's scale 1
          CHECK(a.qk_norm);
          CHECK(a.head_scales.size() == static_cast<size_t>(a.num_heads));
          CHECK(a.scale == 1.0f);
        } else {
          CHECK_FALSE(a.qk_norm);
          CHECK(a.scale == scale);
        }
        const size_t layout_inputs = a.inputs == AttentionInputs::kQkvPacked ? 1 : 3;
        const std::string& t = terms[static_cast<size_t>(block)];
        CHECK(n.inputs.size() == layout_inputs + (t == "bias" ? 1 : t == "bias_mask" ? 2 : 0));
        ++block;
      }
      for (int64_t n = 1; n <= ec.batch(); ++n) {
        CAPTURE(n);
        for (Session* s : {fused.get(), unfused.get()}) {
          const bool is_fused = s == fused.get();
          CAPTURE(is_fused);
          test::check_logits(test::run_batch(*s, ec.x, n), ec.y64, n, ec.classes());
        }
      }
    }
  }
}

// Near misses, in vit_d32's export (the scores divided) and vit_qdiv_d12's (q divided): the first block's
// Div changed so that it no longer is SoftmaxAttention's arithmetic stays plain ops (the second block still
// fuses), and the plan computes what the unfused graph does.
TEST_CASE("Hugging Face style attention near misses stay unfused") {
  const std::string dir = test::export_fixture_dir("onnx_hf_attention_cases");
  struct Form {
    const char* name;
    int64_t heads, d;
  };
  for (const Form& form : {Form{"vit_d32", 3, 32}, Form{"vit_qdiv_d12", 4, 12}}) {
    CAPTURE(form.name);
    Graph base;
    std::string log;
    Status st =
        convert::convert_onnx_file(dir + "/" + form.name + ".onnx", convert::ConvertOptions{}, &base, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    std::vector<float> x;
    std::vector<int64_t> xs;
    REQUIRE(read_npy_f32(dir + "/" + form.name + ".input.npy", &x, &xs).ok());
    // Block 0's scores (or q) / sqrt(d): the first Div by a scalar constant.
    auto first_div = [](const Graph& g) {
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        if (n.type == OpType::kDiv && n.inputs.size() == 2 && g.tensors[n.inputs[1]].is_constant &&
            g.tensors[n.inputs[1]].shape.numel() == 1)
          return static_cast<int>(i);
      }
      return -1;
    };
    REQUIRE(first_div(base) >= 0);
    const float root_d = std::sqrt(static_cast<float>(form.d));
    REQUIRE(*base.tensors[base.nodes[first_div(base)].inputs[1]].f32() == root_d);
    std::vector<float> per_head(static_cast<size_t>(form.heads), root_d);
    per_head[0] = 5.0f;
    const std::map<std::string, std::function<void(Graph&)>> edits = {
        {"the scalar divided by the scores (or q)",
         [&](Graph& g) {
           Node& n = g.nodes[first_div(g)];
           std::swap(n.inputs[0], n.inputs[1]);
         }},
        {"one divisor per head",
         [&](Graph& g) {
           Node& n = g.nodes[first_div(g)];
           n.inputs[1] = g.add_constant("per_head", Shape{1, form.heads, 1, 1}, per_head);
         }},
        {"a divisor of 0",
         [&](Graph& g) {
           Node& n = g.nodes[first_div(g)];
           n.inputs[1] = g.add_constant("zero", Shape{1}, {0.0f});
         }},
    };
    for (const auto& [what, edit] : edits) {
      CAPTURE(what);
      Graph g = base;
      edit(g);
      test::check_near_miss(g, x, "SoftmaxAttention", "fuse_attention");
    }
  }
}
