// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// End to end against PyTorch: checkpoints written by real torch.save (tools/reference/make_model_cases.py) go
// through the converter, the file format and the loader, then run on the reference backend. Logits must match
// PyTorch's float64 run within a tolerance derived from PyTorch's own float32-vs-float64 difference, and
// within 1e-4 relative; argmax must agree.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "common/npy.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

using namespace vitrt;
using json = nlohmann::json;

namespace {

// The case folders written by tools/reference/make_<family>_cases.py (ctest fixtures), all in one format.
const char* const kCaseSets[] = {"model_cases", "soft_cases", "lavit_cases", "shipped_cases",
                                 "vit_attention_cases"};

std::string g_case_dir;  // the case set being checked
std::string fixture_dir() {
  return g_case_dir;
}

std::string case_set_dir(const char* set) {
  const char* d = std::getenv("VITRT_FIXTURE_DIR");
  return std::string(d ? d : "fixtures") + "/" + set;
}

Status convert_case(const json& c, const std::string& out_path, std::string* log) {
  convert::Checkpoint ckpt;
  VITRT_RETURN_IF_ERROR(
      convert::load_checkpoint(fixture_dir() + "/" + c["checkpoint"].get<std::string>(), &ckpt));
  convert::ConvertOptions opt;
  if (c.contains("convert_options")) {
    const json& o = c["convert_options"];
    opt.arch = o.value("arch", opt.arch);
    opt.image_size = o.value("image_size", 0);
    opt.attn = o.value("attn", opt.attn);
    opt.heads = o.value("heads", opt.heads);
    opt.emit = o.value("emit", opt.emit);
    opt.landmarks = o.value("landmarks", opt.landmarks);
    opt.nystrom_init = o.value("nystrom_init", opt.nystrom_init);
  }
  if (c.contains("labels") && c["labels"].is_string())
    opt.labels_path = fixture_dir() + "/" + c["labels"].get<std::string>();
  Graph g;
  VITRT_RETURN_IF_ERROR(convert::convert_checkpoint(ckpt, opt, &g, log));
  return write_model_file(g, out_path);
}

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

void check_case(const json& c) {
  const std::string name = c["name"];
  const std::string path = name + ".vitrt";
  std::string log;
  Status st = convert_case(c, path, &log);
  if (c["expect_error"].get<bool>()) {
    REQUIRE_FALSE(st.ok());
    MESSAGE(name << ": " << st.message());
    const std::string detail = c["error_detail"];
    const std::string key = detail.substr(detail.rfind(' ') + 1);
    CHECK_MESSAGE(st.message().find(key) != std::string::npos,
                  "the message should name " << key << ": " << st.message());
    return;
  }
  REQUIRE_MESSAGE(st.ok(), name << ": " << st.message());
  std::shared_ptr<const Model> model;
  st = load_model(path, &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(model->graph.metadata.arch.rfind(c["arch"].get<std::string>(), 0) == 0);

  std::vector<float> x;
  std::vector<int64_t> xs;
  REQUIRE(read_npy_f32(fixture_dir() + "/" + c["input"].get<std::string>(), &x, &xs).ok());
  std::vector<double> ref;
  std::vector<int64_t> rs;
  REQUIRE(read_npy_f64(fixture_dir() + "/" + c["logits_f64"].get<std::string>(), &ref, &rs).ok());
  const int batch = static_cast<int>(xs[0]);
  const int classes = static_cast<int>(rs[1]);

  const double f32_err = c["max_abs_f32_vs_f64"], scale = c["max_abs_logit"];
  // PyTorch's own float32 error times a margin for a different (but equally valid) summation order, floored
  // at a few float32 ulps of the logit scale.
  const double tol = std::max(8.0 * f32_err, 4e-7 * scale);
  // Every session here runs with the arena guard (memory/arena_guard.h): on these real graphs no kernel
  // writes outside its output and no two live tensors share bytes. Outputs are poisoned: unwritten elements
  // show as NaN.
  auto run_on = [&](const std::string& backend, int threads, std::unique_ptr<Session>* s,
                    std::vector<float>* out) {
    SessionOptions so;
    so.backend = backend;
    so.max_batch = batch;
    so.num_threads = threads;
    so.poison_activations = true;
    so.guard_arena = true;
    Status cs = Session::create(model, so, s);
    REQUIRE_MESSAGE(cs.ok(), cs.message());
    // The fused ops the plan must hold (e.g. what --emit primitive wrote as plain ops, fused back).
    if (c.contains("planned_ops"))
      for (const auto& want : c["planned_ops"].items()) {
        int planned = 0;
        for (const Node& n : (*s)->graph().nodes) planned += want.key() == op_type_name(n.type);
        CHECK_MESSAGE(planned == want.value().get<int>(),
                      name << " (" << backend << "): " << planned << " " << want.key() << " planned");
      }
    out->assign(static_cast<size_t>(batch) * classes, NAN);
    cs = (*s)->run(x.data(), batch, out->data(), out->size());
    REQUIRE_MESSAGE(cs.ok(), cs.message());
    double err = 0;
    for (size_t i = 0; i < out->size(); ++i) {
      REQUIRE_MESSAGE(std::isfinite((*out)[i]),
                      name << " (" << backend << "): logit " << i << " is not finite");
      err = std::max(err, std::abs((*out)[i] - ref[i]));
    }
    MESSAGE(name << " (" << backend << "): max |vitrt - torch64| = " << err << " (torch32 vs torch64: "
                 << f32_err << ", tolerance " << tol << ", relative " << err / scale << ")");
    CHECK_MESSAGE(err <= 1e-4 * scale,
                  name << " (" << backend << "): relative error " << err / scale << " > 1e-4");
    for (int b = 0; b < batch; ++b) {
      const int want = c["argmax"][b];
      CHECK_MESSAGE(argmax(out->data() + b * classes, classes) == want,
                    name << " (" << backend << "): argmax of image " << b);
    }
    return err;
  };
  // The fast backend is held to 1e-4 relative, as every backend is against the reference.
  std::unique_ptr<Session> fast;
  std::vector<float> yf;
  run_on("cpu", 2, &fast, &yf);
  fast.reset();
  // The reference backend: within PyTorch's own float32 error.
  std::unique_ptr<Session> session;
  std::vector<float> y;
  const double max_err = run_on("ref", 1, &session, &y);
  CHECK_MESSAGE(max_err <= tol, name << ": logits differ from PyTorch by " << max_err << " > " << tol);
  // Batch 1 inside the batch-2 plan gives the first image's logits; a model whose images affect each other
  // (Nyströmformer's global initialisation) gives PyTorch's logits of that image alone.
  std::vector<float> y1(classes);
  REQUIRE(session->run(x.data(), 1, y1.data(), y1.size()).ok());
  std::vector<double> alone(y.begin(), y.begin() + classes);
  if (c.contains("logits_first_f64")) {
    std::vector<int64_t> fs;
    REQUIRE(read_npy_f64(fixture_dir() + "/" + c["logits_first_f64"].get<std::string>(), &alone, &fs).ok());
    REQUIRE(alone.size() == static_cast<size_t>(classes));
  }
  for (int i = 0; i < classes; ++i) CHECK(std::abs(y1[i] - alone[i]) <= tol);
  if (c.contains("logits_f32_non_ema")) {
    std::vector<float> other;
    std::vector<int64_t> os;
    REQUIRE(read_npy_f32(fixture_dir() + "/" + c["logits_f32_non_ema"].get<std::string>(), &other, &os).ok());
    double d = 0;
    for (size_t i = 0; i < other.size(); ++i) d = std::max(d, static_cast<double>(std::abs(other[i] - y[i])));
    CHECK_MESSAGE(d > 100 * tol, "the converter picked state_dict instead of state_dict_ema");
  }
  std::remove(path.c_str());
}

}  // namespace

// VITRT_MODEL_CASE_SHARD splits the sets over two ctest runs that ctest runs side by side
// (tests/CMakeLists.txt: under the sanitizers this test case is CI's longest, SOFT's cases about half of it):
// "soft" checks soft_cases only, "rest" every other set; unset, all of them. Together the two shards check
// every set exactly once.
bool case_set_selected(const std::string& set, const char* shard) {
  if (!shard || !*shard) return true;
  return (set == "soft_cases") == (std::string(shard) == "soft");
}

TEST_CASE("models: every PyTorch case converts and matches, or fails with a clear message") {
  const char* shard = std::getenv("VITRT_MODEL_CASE_SHARD");
  REQUIRE_MESSAGE((!shard || !*shard || std::string(shard) == "soft" || std::string(shard) == "rest"),
                  "VITRT_MODEL_CASE_SHARD is '" << std::string(shard) << "': expected soft, rest or nothing");
  int sets = 0, skipped = 0;
  for (const char* set : kCaseSets) {
    if (!case_set_selected(set, shard)) {
      ++skipped;
      continue;
    }
    g_case_dir = case_set_dir(set);
    std::ifstream f(g_case_dir + "/manifest.json");
    REQUIRE_MESSAGE(f.good(), "missing " << g_case_dir << "/manifest.json (its ctest fixture did not run)");
    ++sets;
    const json m = json::parse(f);
    REQUIRE(!m["cases"].empty());
    for (const json& c : m["cases"]) {
      const std::string name = std::string(set) + "/" + c["name"].get<std::string>();
      SUBCASE(name.c_str()) {
        g_case_dir = case_set_dir(set);
        check_case(c);
      }
    }
  }
  CHECK(sets > 0);
  CHECK(sets + skipped == static_cast<int>(sizeof(kCaseSets) / sizeof(kCaseSets[0])));
}
