// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt inspect MODEL [--plan] [--json]: verify, then ops, weights, and (with --plan) the memory plan.
#include <cstdio>
#include <map>

#include "cli_common.h"

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

int run_inspect(const Options& o) {
  std::unique_ptr<api::Model> model;
  if (int rc = load_model_or_report(o.model, &model)) return rc;
  const api::ModelInfo info = model->info();
  const std::map<std::string, int> histogram = model->op_counts();
  const std::string in = format_shape(info.input_dims), out = format_shape(info.output_dims);

  std::unique_ptr<api::Session> session;
  if (o.plan) {
    RunOptions ro;
    ro.backend = o.backend;
    ro.opt_level = o.opt_level;
    ro.disabled_passes = o.disabled_passes;
    if (int rc = create_session_or_report(*model, ro, o.batch, &session)) return rc;
  }
  const api::Preprocessing p = model->preprocessing();

  if (o.json) {
    std::printf("{\"file\": \"%s\", \"format_version\": %u, \"producer\": \"%s\", \"arch\": \"%s\",\n",
                json_escape(o.model).c_str(), info.format_version, json_escape(info.producer).c_str(),
                json_escape(info.arch).c_str());
    std::printf(
        " \"input\": \"%s\", \"output\": \"%s\", \"classes\": %d, \"ops\": %d, \"tensors\": %d, "
        "\"weights\": %d, \"weight_bytes\": %llu,\n",
        in.c_str(), out.c_str(), info.num_labels, info.num_ops, info.num_tensors, info.num_weights,
        static_cast<unsigned long long>(info.weight_bytes));
    std::printf(
        " \"preprocess\": {\"resize_shorter\": %d, \"crop_h\": %d, \"crop_w\": %d, \"interpolation\": "
        "\"%s\", \"mean\": [%s], \"std\": [%s], \"channels\": %d},\n",
        p.resize_shorter, p.crop_height, p.crop_width, p.interpolation.c_str(), format_floats(p.mean).c_str(),
        format_floats(p.std).c_str(), p.channels);
    std::printf(" \"op_histogram\": {");
    size_t i = 0;
    for (const auto& kv : histogram)
      std::printf("%s\"%s\": %d", i++ ? ", " : "", kv.first.c_str(), kv.second);
    std::printf("}");
    if (session) {
      const api::PlanInfo plan = session->plan();
      std::printf(
          ",\n \"plan\": {\"backend\": \"%s\", \"max_batch\": %d, \"activation_bytes\": %llu, "
          "\"activation_lower_bound\": %llu, \"workspace_bytes\": %llu, \"steps\": [",
          plan.backend.c_str(), o.batch, static_cast<unsigned long long>(plan.activation_bytes),
          static_cast<unsigned long long>(plan.activation_lower_bound),
          static_cast<unsigned long long>(plan.workspace_bytes));
      const std::vector<api::StepInfo> steps = session->steps();
      for (size_t s = 0; s < steps.size(); ++s) {
        const api::StepInfo& n = steps[s];
        std::printf("%s\n  {\"op\": \"%s\", \"name\": \"%s\", \"outputs\": [", s ? "," : "", n.op.c_str(),
                    json_escape(n.name).c_str());
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          const api::TensorInfo& t = n.outputs[k];
          std::printf(
              "%s{\"tensor\": \"%s\", \"shape\": \"%s\", \"arena\": \"%s\", \"offset\": %llu, \"bytes\": "
              "%llu, "
              "\"first\": %d, \"last\": %d, \"inplace_of\": %d}",
              k ? ", " : "", json_escape(t.name).c_str(), format_shape(t.dims).c_str(), t.arena.c_str(),
              static_cast<unsigned long long>(t.offset), static_cast<unsigned long long>(t.bytes),
              t.first_step, t.last_step, t.inplace_of);
        }
        std::printf("]}");
      }
      std::printf("\n ], \"ops\": %zu, \"passes\": [", steps.size());
      const std::vector<api::PassInfo> passes = session->passes();
      for (size_t i = 0; i < passes.size(); ++i) {
        const api::PassInfo& r = passes[i];
        std::printf("%s{\"name\": \"%s\", \"ran\": %s, \"modified\": %s, \"ops_after\": %d}", i ? ", " : "",
                    r.name.c_str(), r.ran ? "true" : "false", r.modified ? "true" : "false", r.ops_after);
      }
      std::printf("]}");
    }
    std::printf("}\n");
    return VITRT_EXIT_OK;
  }

  std::printf("%s: vitrt model, format version %u, written by %s\n", o.model.c_str(), info.format_version,
              info.producer.c_str());
  std::printf("  arch         %s\n", info.arch.c_str());
  std::printf("  input        %s %s (NCHW)\n  output       %s (%d labels)\n", in.c_str(),
              info.input_dtype.c_str(), out.c_str(), info.num_labels);
  std::printf("  preprocess   resize shorter side to %d (%s), centre crop %dx%d, mean [%s], std [%s]\n",
              p.resize_shorter, p.interpolation.c_str(), p.crop_width, p.crop_height,
              format_floats(p.mean).c_str(), format_floats(p.std).c_str());
  std::printf("  graph        %d ops, %d tensors, %d weights (%s)\n", info.num_ops, info.num_tensors,
              info.num_weights, format_bytes(info.weight_bytes).c_str());
  for (const auto& kv : model->metadata_entries())
    std::printf("  %-12s %s\n", kv.first.c_str(), kv.second.c_str());
  std::printf("  ops         ");
  for (const auto& kv : histogram) std::printf(" %s×%d", kv.first.c_str(), kv.second);
  std::printf("\n");
  if (!session) return VITRT_EXIT_OK;

  const api::PlanInfo plan = session->plan();
  std::printf("\npasses      ");
  for (const api::PassInfo& r : session->passes())
    std::printf(" %s:%s", r.name.c_str(), !r.ran ? "off" : r.modified ? "changed" : "unchanged");
  std::printf("  (%d ops -> %d)\n", info.num_ops, plan.num_steps);
  std::printf("\nplan (backend %s, max batch %d)\n", plan.backend.c_str(), o.batch);
  std::printf("  %-4s %-18s %-40s %-18s %-12s %12s %10s  %s\n", "step", "op", "name", "output shape", "arena",
              "offset", "bytes", "live");
  const std::vector<api::StepInfo> steps = session->steps();
  for (size_t s = 0; s < steps.size(); ++s) {
    const api::StepInfo& n = steps[s];
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const api::TensorInfo& t = n.outputs[k];
      std::string live = std::to_string(t.first_step) + ".." + std::to_string(t.last_step);
      if (t.inplace_of >= 0) live += " (in place of " + t.inplace_of_name + ")";
      std::printf("  %-4s %-18s %-40s %-18s %-12s %12llu %10llu  %s\n", k ? "" : std::to_string(s).c_str(),
                  k ? "" : n.op.c_str(), k ? ("  +" + t.name).c_str() : n.name.c_str(),
                  format_shape(t.dims).c_str(), t.arena.c_str(), static_cast<unsigned long long>(t.offset),
                  static_cast<unsigned long long>(t.bytes), live.c_str());
    }
  }
  std::printf("\n");
  print_tiles(*session);
  std::printf("\n  weights      %s (mapped from the file, zero-copy)\n",
              format_bytes(plan.weight_bytes).c_str());
  std::printf("  activations  %s peak; liveness lower bound %s (%.3fx)\n",
              format_bytes(plan.activation_bytes).c_str(), format_bytes(plan.activation_lower_bound).c_str(),
              plan.activation_lower_bound
                  ? static_cast<double>(plan.activation_bytes) / plan.activation_lower_bound
                  : 1.0);
  std::printf("  workspace    %s\n", format_bytes(plan.workspace_bytes).c_str());
  return VITRT_EXIT_OK;
}

}  // namespace

Runner add_inspect(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("inspect", "verify a model and print its ops, weights and memory plan");
  sub->add_option("model", o->model, "model file (.vitrt)")->required();
  sub->add_flag("--plan", o->plan,
                "also plan a session and print each step's tensor, arena offset and lifetime");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->add_option("-b,--backend", o->backend, "backend to plan for")->capture_default_str();
  sub->add_option("--opt-level", o->opt_level, "0: the graph as written; 1: after the planner passes")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  sub->add_option("--disable-pass", o->disabled_passes, "comma-separated planner passes to skip (or 'all')");
  sub->add_option("--batch", o->batch, "maximum batch to plan for")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  return [o] { return run_inspect(*o); };
}

}  // namespace vitrt::cli
