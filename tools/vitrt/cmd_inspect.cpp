// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt inspect MODEL [--plan] [--json]: verify, then ops, weights, and (with --plan) the memory plan.
#include <cstdio>
#include <map>

#include "cli_common.h"
#include "ops/op_registry.h"

namespace vitrt::cli {
namespace {

struct Options {
  std::string model;
  bool plan = false;
  bool json = false;
  std::string backend = "auto";
  int batch = 1;
  int opt_level = 1;
  std::string disabled_passes;
};

const char* arena_name(ArenaKind a) {
  switch (a) {
    case ArenaKind::kWeights: return "weights";
    case ArenaKind::kActivations: return "activations";
    case ArenaKind::kInput: return "input";
    case ArenaKind::kPersistent: return "persistent";
    case ArenaKind::kNone: break;
  }
  return "-";
}

const char* interp_name(Interpolation i) {
  return i == Interpolation::kBicubic ? "bicubic" : i == Interpolation::kBilinear ? "bilinear" : "nearest";
}

std::string floats(const std::vector<float>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "%s%g", i ? "," : "", v[i]);
    s += b;
  }
  return s;
}

int run_inspect(const Options& o) {
  std::shared_ptr<const Model> model;
  if (int rc = load_model_or_report(o.model, &model)) return rc;
  const Graph& g = model->graph;
  const ModelMetadata& md = g.metadata;
  std::map<std::string, int> histogram;
  for (const Node& n : g.nodes) histogram[op_type_name(n.type)]++;
  const Shape& in = g.tensors[g.inputs[0]].shape;
  const Shape& out = g.tensors[g.outputs[0]].shape;
  size_t constants = 0;
  for (const Tensor& t : g.tensors) constants += t.is_constant;

  std::unique_ptr<Session> session;
  if (o.plan) {
    RunOptions ro;
    ro.backend = o.backend;
    ro.opt_level = o.opt_level;
    ro.disabled_passes = o.disabled_passes;
    if (int rc = create_session_or_report(model, ro, o.batch, &session)) return rc;
  }

  if (o.json) {
    std::printf("{\"file\": \"%s\", \"format_version\": %u, \"producer\": \"%s\", \"arch\": \"%s\",\n",
                json_escape(o.model).c_str(), model->format_version, json_escape(md.producer).c_str(),
                json_escape(md.arch).c_str());
    std::printf(" \"input\": \"%s\", \"output\": \"%s\", \"classes\": %zu, \"ops\": %zu, \"tensors\": %zu, "
                "\"weights\": %zu, \"weight_bytes\": %llu,\n",
                in.str().c_str(), out.str().c_str(), md.labels.size(), g.nodes.size(), g.tensors.size(), constants,
                static_cast<unsigned long long>(model->weight_bytes));
    const Preprocess& p = md.preprocess;
    std::printf(" \"preprocess\": {\"resize_shorter\": %d, \"crop_h\": %d, \"crop_w\": %d, \"interpolation\": "
                "\"%s\", \"mean\": [%s], \"std\": [%s], \"channels\": %d},\n",
                p.resize_shorter, p.crop_h, p.crop_w, interp_name(p.interpolation), floats(p.mean).c_str(),
                floats(p.std).c_str(), p.channels);
    std::printf(" \"op_histogram\": {");
    size_t i = 0;
    for (const auto& kv : histogram) std::printf("%s\"%s\": %d", i++ ? ", " : "", kv.first.c_str(), kv.second);
    std::printf("}");
    if (session) {
      const MemoryReport& m = session->memory();
      std::printf(",\n \"plan\": {\"backend\": \"%s\", \"max_batch\": %d, \"activation_bytes\": %llu, "
                  "\"activation_lower_bound\": %llu, \"workspace_bytes\": %llu, \"steps\": [",
                  session->backend_name(), o.batch, static_cast<unsigned long long>(m.activation_bytes),
                  static_cast<unsigned long long>(m.activation_lower_bound),
                  static_cast<unsigned long long>(m.workspace_bytes));
      const Graph& pg = session->graph();
      for (size_t s = 0; s < pg.nodes.size(); ++s) {
        const Node& n = pg.nodes[s];
        std::printf("%s\n  {\"op\": \"%s\", \"name\": \"%s\", \"outputs\": [", s ? "," : "", op_type_name(n.type),
                    json_escape(n.name).c_str());
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          const int32_t t = n.outputs[k];
          const TensorPlacement& p = session->placements()[t];
          std::printf("%s{\"tensor\": \"%s\", \"shape\": \"%s\", \"arena\": \"%s\", \"offset\": %llu, \"bytes\": %llu, "
                      "\"first\": %d, \"last\": %d, \"inplace_of\": %d}",
                      k ? ", " : "", json_escape(pg.tensors[t].name).c_str(), session->tensor_shape(t).str().c_str(),
                      arena_name(p.arena), static_cast<unsigned long long>(p.offset),
                      static_cast<unsigned long long>(p.bytes), p.life.first, p.life.last, session->inplace_of(t));
        }
        std::printf("]}");
      }
      std::printf("\n ], \"ops\": %zu, \"passes\": [", pg.nodes.size());
      for (size_t i = 0; i < session->pass_report().size(); ++i) {
        const PassReport& r = session->pass_report()[i];
        std::printf("%s{\"name\": \"%s\", \"ran\": %s, \"modified\": %s, \"ops_after\": %zu}", i ? ", " : "",
                    r.name.c_str(), r.ran ? "true" : "false", r.modified ? "true" : "false", r.ops_after);
      }
      std::printf("]}");
    }
    std::printf("}\n");
    return kExitOk;
  }

  std::printf("%s: vitrt model, format version %u, written by %s\n", o.model.c_str(), model->format_version,
              md.producer.c_str());
  std::printf("  arch         %s\n", md.arch.c_str());
  std::printf("  input        %s float32 (NCHW)\n  output       %s (%zu labels)\n", in.str().c_str(),
              out.str().c_str(), md.labels.size());
  const Preprocess& p = md.preprocess;
  std::printf("  preprocess   resize shorter side to %d (%s), centre crop %dx%d, mean [%s], std [%s]\n",
              p.resize_shorter, interp_name(p.interpolation), p.crop_w, p.crop_h, floats(p.mean).c_str(),
              floats(p.std).c_str());
  std::printf("  graph        %zu ops, %zu tensors, %zu weights (%s)\n", g.nodes.size(), g.tensors.size(), constants,
              format_bytes(model->weight_bytes).c_str());
  for (const auto& kv : md.extra) std::printf("  %-12s %s\n", kv.first.c_str(), kv.second.c_str());
  std::printf("  ops         ");
  for (const auto& kv : histogram) std::printf(" %s×%d", kv.first.c_str(), kv.second);
  std::printf("\n");
  if (!session) return kExitOk;

  const MemoryReport& m = session->memory();
  const Graph& pg = session->graph();
  std::printf("\npasses      ");
  for (const PassReport& r : session->pass_report())
    std::printf(" %s:%s", r.name.c_str(), !r.ran ? "off" : r.modified ? "changed" : "unchanged");
  std::printf("  (%zu ops -> %zu)\n", g.nodes.size(), pg.nodes.size());
  std::printf("\nplan (backend %s, max batch %d)\n", session->backend_name(), o.batch);
  std::printf("  %-4s %-18s %-40s %-18s %-12s %12s %10s  %s\n", "step", "op", "name", "output shape", "arena",
              "offset", "bytes", "live");
  for (size_t s = 0; s < pg.nodes.size(); ++s) {
    const Node& n = pg.nodes[s];
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const int32_t t = n.outputs[k];
      const TensorPlacement& pl = session->placements()[t];
      std::string live = std::to_string(pl.life.first) + ".." + std::to_string(pl.life.last);
      if (session->inplace_of(t) >= 0) live += " (in place of " + pg.tensors[session->inplace_of(t)].name + ")";
      std::printf("  %-4s %-18s %-40s %-18s %-12s %12llu %10llu  %s\n", k ? "" : std::to_string(s).c_str(),
                  k ? "" : op_type_name(n.type), k ? ("  +" + pg.tensors[t].name).c_str() : n.name.c_str(),
                  session->tensor_shape(t).str().c_str(), arena_name(pl.arena),
                  static_cast<unsigned long long>(pl.offset), static_cast<unsigned long long>(pl.bytes), live.c_str());
    }
  }
  std::printf("\n  weights      %s (mapped from the file, zero-copy)\n", format_bytes(m.weight_bytes).c_str());
  std::printf("  activations  %s peak; liveness lower bound %s (%.3fx)\n", format_bytes(m.activation_bytes).c_str(),
              format_bytes(m.activation_lower_bound).c_str(),
              m.activation_lower_bound ? static_cast<double>(m.activation_bytes) / m.activation_lower_bound : 1.0);
  std::printf("  workspace    %s\n", format_bytes(m.workspace_bytes).c_str());
  return kExitOk;
}

}  // namespace

Runner add_inspect(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("inspect", "verify a model and print its ops, weights and memory plan");
  sub->add_option("model", o->model, "model file (.vitrt)")->required();
  sub->add_flag("--plan", o->plan, "also plan a session and print each step's tensor, arena offset and lifetime");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->add_option("-b,--backend", o->backend, "backend to plan for")->capture_default_str();
  sub->add_option("--opt-level", o->opt_level, "0: the graph as written; 1: after the planner passes")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  sub->add_option("--disable-pass", o->disabled_passes, "comma-separated planner passes to skip (or 'all')");
  sub->add_option("--batch", o->batch, "maximum batch to plan for")->capture_default_str()->check(CLI::Range(1, 4096));
  return [o] { return run_inspect(*o); };
}

}  // namespace vitrt::cli
