// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LaViT's score edges (docs/models.md §4.2): the pre-softmax scores a layer keeps are ordinary graph edges
// from its attention node to the next LA layer of its stage, or to the next stage's AttentionResidual. These
// tests check that the converter wires them to exactly the right consumers, that the planner keeps each alive
// exactly from its producer to its reader, and, with one Θ weight edited, that exactly the blocks from the
// edited LA layer on change. A small synthetic checkpoint (64x64 input, h1 != h2 at every stage boundary,
// VA->LA->LA and VA->VA->LA chains) runs without fixtures; the PyTorch fixture
// (tools/reference/make_lavit_cases.py, score_edit.json) adds per-block hidden states and scores of the
// float64 reference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "common/npy.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

using namespace vitrt;
using json = nlohmann::json;

namespace {

// ---- a synthetic LaViT checkpoint -------------------------------------------------------------------------

constexpr int kImage = 64;                     // grids 16,8,4,2; N' = 4 in every stage
const int64_t kDims[4] = {64, 128, 192, 256};  // heads 1,2,3,4 (head dim 64)
const int kSr[4] = {8, 4, 2, 1};
const char* const kLayers[4] = {"VV", "VLL", "VVL", "VL"};  // V: Vanilla-Attention, L: Less-Attention
constexpr int kClasses = 10;

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float uniform() {  // [-1, 1)
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s_ >> 40) * (1.0 / 8388608.0)) - 1.0f;
  }

 private:
  uint64_t s_;
};

void put(convert::Checkpoint& ck, Rng& rng, const std::string& key, std::vector<int64_t> shape, float scale,
         float offset = 0.0f) {
  convert::CheckpointTensor t;
  t.name = key;
  t.source_type = "float32";
  t.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  t.values.resize(static_cast<size_t>(n));
  for (auto& v : t.values) v = offset + scale * rng.uniform();
  ck.tensors[key] = std::move(t);
}

void put_linear(convert::Checkpoint& ck, Rng& rng, const std::string& p, int64_t out, int64_t in) {
  put(ck, rng, p + ".weight", {out, in}, std::sqrt(3.0f / in));
  put(ck, rng, p + ".bias", {out}, 0.05f);
}

void put_norm(convert::Checkpoint& ck, Rng& rng, const std::string& p, int64_t c) {
  put(ck, rng, p + ".weight", {c}, 0.1f, 1.0f);
  put(ck, rng, p + ".bias", {c}, 0.05f);
}

// Θ/Ψ near a scaled identity, so scores stay informative through chains of LA layers.
void put_mixing(convert::Checkpoint& ck, Rng& rng, const std::string& p, int64_t n) {
  put(ck, rng, p + ".weight", {n, n}, 0.5f * std::sqrt(3.0f / n));
  for (int64_t i = 0; i < n; ++i) ck.tensors[p + ".weight"].values[static_cast<size_t>(i * n + i)] += 0.7f;
  put(ck, rng, p + ".bias", {n}, 0.05f);
}

convert::Checkpoint synthetic_lavit() {
  convert::Checkpoint ck;
  ck.container = "raw";
  Rng rng(7);
  int64_t prev = 3;
  const int64_t nk = (kImage / 32) * (kImage / 32);
  for (int s = 1; s <= 4; ++s) {
    const std::string ps = std::to_string(s);
    const int64_t c = kDims[s - 1], k = s == 1 ? 7 : 3, side = kImage >> (s + 1), n = side * side;
    put(ck, rng, "patch_embed" + ps + ".proj.weight", {c, prev, k, k}, std::sqrt(3.0f / (prev * k * k)));
    put(ck, rng, "patch_embed" + ps + ".proj.bias", {c}, 0.05f);
    put_norm(ck, rng, "patch_embed" + ps + ".norm", c);
    const std::string layers = kLayers[s - 1];
    for (size_t i = 0; i < layers.size(); ++i) {
      const std::string p = "block" + ps + "." + std::to_string(i);
      put_norm(ck, rng, p + ".norm1", c);
      if (layers[i] == 'V') {
        put_linear(ck, rng, p + ".attn.q", c, c);
        put_linear(ck, rng, p + ".attn.kv", 2 * c, c);
      } else {
        put_linear(ck, rng, p + ".attn.v", c, c);
        put_mixing(ck, rng, p + ".attn.theta", nk);
        put_mixing(ck, rng, p + ".attn.psi", n);
      }
      const int sr = kSr[s - 1];
      if (sr > 1) {
        put(ck, rng, p + ".attn.sr.weight", {c, c, sr, sr}, std::sqrt(3.0f / (c * sr * sr)));
        put(ck, rng, p + ".attn.sr.bias", {c}, 0.05f);
        put_norm(ck, rng, p + ".attn.norm", c);
      }
      put_linear(ck, rng, p + ".attn.proj", c, c);
      put_norm(ck, rng, p + ".norm2", c);
      put_linear(ck, rng, p + ".mlp.fc1", 2 * c, c);
      put(ck, rng, p + ".mlp.dwconv.dwconv.weight", {2 * c, 1, 3, 3}, std::sqrt(3.0f / 9));
      put(ck, rng, p + ".mlp.dwconv.dwconv.bias", {2 * c}, 0.05f);
      put_linear(ck, rng, p + ".mlp.fc2", c, 2 * c);
    }
    if (s >= 2) {
      const int64_t h1 = kDims[s - 2] / 64, h2 = c / 64;
      const std::string pr = "attn_res" + ps;
      put(ck, rng, pr + ".dw.weight", {h1, 1, 2, 2}, 0.5f);
      put(ck, rng, pr + ".dw.bias", {h1}, 0.05f);
      put(ck, rng, pr + ".pw.weight", {h2, h1, 1, 1}, std::sqrt(3.0f / h1));
      put(ck, rng, pr + ".pw.bias", {h2}, 0.05f);
      put(ck, rng, pr + ".gamma", {h2}, 0.3f, 0.5f);
    }
    put_norm(ck, rng, "norm" + ps, c);
    prev = c;
  }
  put_linear(ck, rng, "head", kClasses, prev);
  return ck;
}

// ---- converting and running -------------------------------------------------------------------------------

Status convert_and_load(const convert::Checkpoint& ck, const std::string& tag,
                        std::shared_ptr<const Model>* model, int image_size = 0) {
  convert::ConvertOptions opt;
  opt.image_size = image_size;
  Graph g;
  std::string log;
  VITRT_RETURN_IF_ERROR(convert::convert_checkpoint(ck, opt, &g, &log));
  const std::string path = "lavit_score_edge_" + tag + ".vitrt";
  VITRT_RETURN_IF_ERROR(write_model_file(g, path));
  Status s = load_model(path, model);
  std::remove(path.c_str());
  return s;
}

// A session that keeps every tensor, run once on `x`.
std::unique_ptr<Session> run_preserving(const std::shared_ptr<const Model>& model,
                                        const std::vector<float>& x) {
  SessionOptions so;
  so.backend = "ref";
  so.preserve_intermediates = true;
  so.poison_activations = true;
  std::unique_ptr<Session> s;
  Status st = Session::create(model, so, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::vector<float> y(static_cast<size_t>(s->output_shape(1).numel()));
  st = s->run(x.data(), 1, y.data(), y.size());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

int32_t find_tensor(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (g.tensors[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

int find_node(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

// Blocks in graph order: "blockS.I", from the nodes named "blockS.I.residual2" (each block's output).
std::vector<std::string> block_names(const Graph& g) {
  std::vector<std::string> out;
  const std::string suffix = ".residual2";
  for (const Node& n : g.nodes)
    if (n.name.rfind("block", 0) == 0 && n.name.size() > suffix.size() &&
        n.name.compare(n.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(n.name.substr(0, n.name.size() - suffix.size()));
  return out;
}

std::vector<float> tensor_values(const Session& s, int32_t t) {
  const float* p = s.tensor_data(t);
  REQUIRE(p != nullptr);
  return std::vector<float>(p, p + s.tensor_shape(t).numel());
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::fmax(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

std::vector<float> synthetic_image() {
  Rng rng(11);
  std::vector<float> x(3 * kImage * kImage);
  for (auto& v : x) v = 1.7f * rng.uniform();
  return x;
}

// Which layers of a stage export their scores: those followed by a LA layer, and a stage's last layer when a
// later stage's attention residual reads it.
bool exports_scores(const std::string& layers, size_t i, int stage) {
  return i + 1 < layers.size() ? layers[i + 1] == 'L' : stage < 4;
}

// ---- tests ------------------------------------------------------------------------------------------------

TEST_CASE("lavit: each score tensor feeds exactly the right layers and lives exactly that long") {
  std::shared_ptr<const Model> model;
  Status st = convert_and_load(synthetic_lavit(), "graph", &model, kImage);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const Graph& g = model->graph;
  CHECK(g.metadata.arch == "lavit");

  // Readers of every tensor.
  std::map<int32_t, std::vector<int>> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int32_t t : g.nodes[i].inputs)
      if (t >= 0) readers[t].push_back(static_cast<int>(i));

  SessionOptions so;
  so.backend = "ref";
  std::unique_ptr<Session> session;
  st = Session::create(model, so, &session);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const auto& place = session->placements();

  int score_edges = 0;
  for (int s = 1; s <= 4; ++s) {
    const std::string layers = kLayers[s - 1];
    for (size_t i = 0; i < layers.size(); ++i) {
      const std::string p = "block" + std::to_string(s) + "." + std::to_string(i);
      INFO(p);
      const int ni = find_node(g, p + ".attn");
      REQUIRE(ni >= 0);
      const Node& n = g.nodes[ni];
      CHECK(n.type == (layers[i] == 'V' ? OpType::kSoftmaxAttention : OpType::kReusedAttention));
      // Inputs: a LA layer reads the previous layer's scores; a stage's first layer (s >= 2) the residual.
      if (layers[i] == 'L') {
        const int prev = find_node(g, "block" + std::to_string(s) + "." + std::to_string(i - 1) + ".attn");
        REQUIRE(prev >= 0);
        REQUIRE(g.nodes[prev].outputs.size() == 2);
        CHECK(n.inputs[0] == g.nodes[prev].outputs[1]);
      } else if (i == 0 && s >= 2) {
        const int ar = find_node(g, "attn_res" + std::to_string(s));
        REQUIRE(ar >= 0);
        CHECK(g.nodes[ar].type == OpType::kAttentionResidual);
        REQUIRE(n.inputs.size() == 3);
        CHECK(n.inputs[2] == g.nodes[ar].outputs[0]);
        const std::string last = "block" + std::to_string(s - 1) + "." +
                                 std::to_string(std::string(kLayers[s - 2]).size() - 1) + ".attn";
        const int src = find_node(g, last);
        REQUIRE(src >= 0);
        REQUIRE(g.nodes[src].outputs.size() == 2);
        CHECK(g.nodes[ar].inputs[0] == g.nodes[src].outputs[1]);
        const auto& a = std::get<AttentionResidualAttrs>(g.nodes[ar].attrs);
        CHECK(a.height == (kImage >> s));
        CHECK(a.width == (kImage >> s));
      } else {
        CHECK(n.inputs.size() == 2);  // q, kv: no score bias
      }
      // Outputs: the scores only where someone reads them, and then exactly one reader.
      const bool exp = exports_scores(layers, i, s);
      REQUIRE(n.outputs.size() == (exp ? 2u : 1u));
      if (!exp) continue;
      ++score_edges;
      const int32_t sc = n.outputs[1];
      CHECK(g.tensors[sc].name == p + ".attn.scores");
      REQUIRE(readers[sc].size() == 1);
      const int reader = readers[sc][0];
      const std::string want = i + 1 < layers.size()
                                   ? "block" + std::to_string(s) + "." + std::to_string(i + 1) + ".attn"
                                   : "attn_res" + std::to_string(s + 1);
      CHECK(g.nodes[reader].name == want);
      // [1,h,N,N'] at batch 1.
      const Shape& shp = session->tensor_shape(sc);
      CHECK(shp.rank == 4);
      CHECK(shp[1] == kDims[s - 1] / 64);
      CHECK(shp[2] == (kImage >> (s + 1)) * (kImage >> (s + 1)));
      CHECK(shp[3] == (kImage / 32) * (kImage / 32));
      // Alive from its producer to its only reader, no longer (steps of the planned graph, where other passes
      // may have changed the op count).
      const Graph& planned = session->graph();
      CHECK(place[sc].arena == ArenaKind::kActivations);
      CHECK(place[sc].life.first == find_node(planned, g.nodes[ni].name));
      CHECK(place[sc].life.last == find_node(planned, g.nodes[reader].name));
    }
  }
  CHECK(score_edges == 7);  // 1.1 (-> attn_res2), 2.0, 2.1, 2.2 (-> attn_res3), 3.1, 3.2 (-> attn_res4), 4.0
  MESSAGE("score edges checked: ", score_edges);
}

TEST_CASE("lavit: a Θ edit changes exactly the blocks from the edited LA layer on") {
  const convert::Checkpoint base = synthetic_lavit();
  std::shared_ptr<const Model> m0;
  Status st = convert_and_load(base, "orig", &m0, kImage);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::vector<float> x = synthetic_image();
  auto s0 = run_preserving(m0, x);
  const std::vector<std::string> blocks = block_names(m0->graph);
  REQUIRE(blocks.size() == 10);

  // block2.1: a mid-stage LA layer feeding another LA layer; block3.2: a stage's last layer feeding
  // attn_res4.
  for (const std::string edited : {"block2.1", "block3.2"}) {
    INFO("edited ", edited);
    convert::Checkpoint ck = base;
    ck.tensors.at(edited + ".attn.theta.weight").values[1] += 0.5f;
    std::shared_ptr<const Model> m1;
    st = convert_and_load(ck, "edit", &m1, kImage);
    REQUIRE_MESSAGE(st.ok(), st.message());
    auto s1 = run_preserving(m1, x);
    bool downstream = false;
    for (const std::string& b : blocks) {
      INFO("block ", b);
      downstream = downstream || b == edited;
      const int32_t t0 = find_tensor(m0->graph, b + ".residual2"),
                    t1 = find_tensor(m1->graph, b + ".residual2");
      REQUIRE(t0 >= 0);
      REQUIRE(t1 >= 0);
      const double d = max_abs_diff(tensor_values(*s0, t0), tensor_values(*s1, t1));
      if (downstream)
        CHECK_MESSAGE(d > 1e-6, b, " should change (max diff ", d, ")");
      else
        CHECK_MESSAGE(d == 0.0, b, " should be bit-identical (max diff ", d, ")");
      const int32_t sc0 = find_tensor(m0->graph, b + ".attn.scores");
      if (sc0 >= 0) {
        const double ds = max_abs_diff(tensor_values(*s0, sc0),
                                       tensor_values(*s1, find_tensor(m1->graph, b + ".attn.scores")));
        CHECK_MESSAGE((ds > 0) == downstream, b, " scores diff ", ds);
      }
    }
  }
}

TEST_CASE("lavit: converting at another input size names psi/theta and the size the model was built for") {
  const convert::Checkpoint ck = synthetic_lavit();
  std::shared_ptr<const Model> m;
  Status st = convert_and_load(ck, "wrong", &m, 2 * kImage);
  REQUIRE_FALSE(st.ok());
  MESSAGE(st.message());
  for (const char* want :
       {"psi", "theta", "another input size", "64x64", "block2.1.attn.psi.weight", "[64,64]", "[256,256]"})
    CHECK_MESSAGE(st.message().find(want) != std::string::npos, "missing '", want, "' in: ", st.message());
  st = convert_and_load(ck, "odd", &m, kImage + 16);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("multiple of 32") != std::string::npos);
}

// ---- the PyTorch fixture ----------------------------------------------------------------------------------

std::string lavit_cases_dir() {
  const char* d = std::getenv("VITRT_FIXTURE_DIR");
  return std::string(d ? d : "fixtures") + "/lavit_cases";
}

TEST_CASE("lavit: per-block hidden states and scores match the PyTorch reference, original and Θ-edited") {
  const std::string dir = lavit_cases_dir();
  std::ifstream fe(dir + "/score_edit.json"), fm(dir + "/manifest.json");
  REQUIRE_MESSAGE((fe.good() && fm.good()),
                  "missing " << dir << "/score_edit.json (the lavit_cases fixture did not run)");
  const json edit = json::parse(fe), manifest = json::parse(fm);
  std::map<std::string, json> cases;
  for (const json& c : manifest["cases"]) cases[c["name"].get<std::string>()] = c;
  const json& orig_case = cases.at(edit["original_case"].get<std::string>());
  const json& edit_case = cases.at(edit["edited_case"].get<std::string>());

  std::vector<float> x;
  std::vector<int64_t> xs;
  REQUIRE(read_npy_f32(dir + "/" + orig_case["input"].get<std::string>(), &x, &xs).ok());
  const int64_t image = edit.value("image_index", 0), per_image = xs[1] * xs[2] * xs[3];
  x = std::vector<float>(x.begin() + image * per_image, x.begin() + (image + 1) * per_image);

  std::shared_ptr<const Model> models[2];
  std::unique_ptr<Session> sessions[2];
  const json* cs[2] = {&orig_case, &edit_case};
  for (int k = 0; k < 2; ++k) {
    convert::Checkpoint ck;
    Status st = convert::load_checkpoint(dir + "/" + (*cs[k])["checkpoint"].get<std::string>(), &ck);
    REQUIRE_MESSAGE(st.ok(), st.message());
    st = convert_and_load(ck, k ? "fx_edit" : "fx_orig", &models[k], 0);
    REQUIRE_MESSAGE(st.ok(), st.message());
    sessions[k] = run_preserving(models[k], x);
  }

  int checked = 0;
  for (const json& b : edit["blocks"]) {
    const std::string name = b["name"];
    INFO("block ", name);
    const int32_t t0 = find_tensor(models[0]->graph, name + ".residual2");
    const int32_t t1 = find_tensor(models[1]->graph, name + ".residual2");
    REQUIRE(t0 >= 0);
    REQUIRE(t1 >= 0);
    const std::vector<float> h0 = tensor_values(*sessions[0], t0), h1 = tensor_values(*sessions[1], t1);
    const double dh = max_abs_diff(h0, h1);
    if (b["expect_changed"].get<bool>())
      CHECK_MESSAGE(dh > 0, name, " should differ between the original and the edited model");
    else
      CHECK_MESSAGE(dh == 0, name, " should be bit-identical (max diff ", dh, ")");
    // Against the float64 reference (stored as float32).
    const char* keys[2][2] = {{"original_hidden", "original_scores"}, {"edited_hidden", "edited_scores"}};
    for (int k = 0; k < 2; ++k) {
      std::vector<float> ref;
      std::vector<int64_t> rs;
      REQUIRE(read_npy_f32(dir + "/" + b[keys[k][0]].get<std::string>(), &ref, &rs).ok());
      double scale = 0;
      for (float v : ref) scale = std::fmax(scale, std::fabs(v));
      const double err = max_abs_diff(k ? h1 : h0, ref);
      CHECK_MESSAGE(err <= 1e-4 * std::fmax(scale, 1.0), name, (k ? " edited" : " original"),
                    " hidden: max err ", err, " (scale ", scale, ")");
      const int32_t sc = find_tensor(models[k]->graph, name + ".attn.scores");
      if (sc < 0) continue;  // this layer's scores have no reader, so the graph does not keep them
      REQUIRE(read_npy_f32(dir + "/" + b[keys[k][1]].get<std::string>(), &ref, &rs).ok());
      scale = 0;
      for (float v : ref) scale = std::fmax(scale, std::fabs(v));
      const double serr = max_abs_diff(tensor_values(*sessions[k], sc), ref);
      CHECK_MESSAGE(serr <= 1e-4 * std::fmax(scale, 1.0), name, (k ? " edited" : " original"),
                    " scores: max err ", serr, " (scale ", scale, ")");
      ++checked;
    }
  }
  CHECK(checked > 0);
  MESSAGE("blocks checked against PyTorch: ", edit["blocks"].size(), " (", checked, " score tensors)");
}

}  // namespace
