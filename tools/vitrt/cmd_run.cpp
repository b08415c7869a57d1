// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt run -m MODEL --input IN.npy --output OUT.npy: logits for a preprocessed float32 NCHW batch.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli_common.h"

namespace vitrt::cli {
namespace {

struct Options {
  RunOptions run;
  std::string input, output;
  std::string dump_dir;
};

// Writes every tensor the session computed (graph order) as DIR/NNN_<name>.npy, for comparison with PyTorch.
// The session keeps every intermediate (preserve_intermediates).
void dump_tensors(const api::Session& s, const std::string& dir) {
  int index = 0;
  for (const api::StepInfo& step : s.steps())
    for (const api::TensorInfo& t : step.outputs) {
      std::string name = t.name;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
      char prefix[16];
      std::snprintf(prefix, sizeof prefix, "%04d_", index++);
      if (!t.data)
        throw api::Error(VITRT_ERR_RUNTIME,
                         "tensor '" + t.name + "' of step '" + step.name + "' is not in memory");
      size_t n = 1;
      for (int64_t d : t.dims) n *= static_cast<size_t>(d);
      api::write_npy(dir + "/" + prefix + name + ".npy", api::Span<const float>(t.data, n), t.dims);
    }
}

int run_run(const Options& o) {
  std::unique_ptr<api::Model> model;
  if (int rc = load_model_or_report(o.run.model_path, &model)) return rc;
  std::unique_ptr<api::Array> x;
  try {
    x = std::make_unique<api::Array>(api::Array::read_npy(o.input));
  } catch (const api::Error& e) {
    return report_error("--input", e, false);
  }
  const std::vector<int64_t> shape = x->dims();
  const api::ModelInfo info = model->info();
  const std::vector<int64_t>& in = info.input_dims;
  if (shape.size() != 4 || shape[1] != in[1] || shape[2] != in[2] || shape[3] != in[3] || shape[0] < 1) {
    std::cerr << "vitrt: --input '" << o.input << "': expected float32 [N," << in[1] << "," << in[2] << ","
              << in[3] << "] (NCHW, preprocessed), got " << format_shape(shape) << "\n";
    return VITRT_EXIT_BAD_INPUT;
  }
  const int64_t n = shape[0];
  const int64_t batch = std::min<int64_t>(o.run.batch, n);
  std::unique_ptr<api::Session> session;
  if (!o.dump_dir.empty()) {
    // Every intermediate must survive the run: no arena reuse, and one run over the whole input.
    if (n > 4096) {
      std::cerr << "vitrt: --dump-dir: at most 4096 images\n";
      return VITRT_EXIT_USAGE;
    }
    RunOptions ro = o.run;
    ro.preserve_intermediates = true;
    if (int rc = create_session_or_report(*model, ro, n, &session)) return rc;
  } else if (int rc = create_session_or_report(*model, o.run, batch, &session)) {
    return rc;
  }
  const int64_t step = o.dump_dir.empty() ? batch : n;
  const std::vector<int64_t> one = output_shape_of_one(*model);
  const int64_t per_out = static_cast<int64_t>(output_elements_per_image(*model));
  const int64_t per_in = in[1] * in[2] * in[3];
  const float* xs = x->values().data();
  std::vector<float> y(static_cast<size_t>(n * per_out));
  try {
    for (int64_t s = 0; s < n; s += step) {
      const int64_t b = std::min(step, n - s);
      session->run(xs + s * per_in, static_cast<int32_t>(b), y.data() + s * per_out,
                   static_cast<size_t>(b * per_out));
    }
  } catch (const api::Error& e) {
    return report_error("run", e, false);
  }
  if (!o.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dump_dir, ec);
    try {
      dump_tensors(*session, o.dump_dir);
    } catch (const api::Error& e) {
      return report_error("--dump-dir", e, false);
    }
  }
  std::vector<int64_t> out_shape = one;
  out_shape[0] = n;
  try {
    api::write_npy(o.output, y, out_shape);
  } catch (const api::Error& e) {
    return report_error("--output", e, false);
  }
  return VITRT_EXIT_OK;
}

}  // namespace

Runner add_run(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("run", "run a preprocessed float32 NCHW .npy batch, write the logits as .npy");
  add_run_options(sub, &o->run);
  sub->add_option("-i,--input", o->input, "input .npy, float32 [N,C,H,W]")->required();
  sub->add_option("-o,--output", o->output, "output .npy, float32 [N,classes]")->required();
  sub->add_option("--dump-dir", o->dump_dir, "also write every intermediate tensor as DIR/NNN_<name>.npy");
  sub->footer(input_limits_help());
  return [o] { return run_run(*o); };
}

}  // namespace vitrt::cli
