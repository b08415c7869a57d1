// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt run -m MODEL --input IN.npy --output OUT.npy: logits for a preprocessed float32 NCHW batch.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli_common.h"
#include "common/npy.h"

namespace vitrt::cli {
namespace {

struct Options {
  RunOptions run;
  std::string input, output;
  std::string dump_dir;
};

// Writes every tensor the session computed (graph order) as DIR/NNN_<name>.npy, for comparison with PyTorch.
Status dump_tensors(const Session& s, const std::string& dir) {
  const Graph& g = s.graph();
  int index = 0;
  for (const Node& n : g.nodes)
    for (int32_t t : n.outputs) {
      std::string name = g.tensors[t].name;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
      char prefix[16];
      std::snprintf(prefix, sizeof prefix, "%04d_", index++);
      VITRT_RETURN_IF_ERROR(
          write_npy_f32(dir + "/" + prefix + name + ".npy", s.tensor_data(t), s.tensor_shape(t).to_vector()));
    }
  return Status::Ok();
}

int run_run(const Options& o) {
  std::shared_ptr<const Model> model;
  if (int rc = load_model_or_report(o.run.model_path, &model)) return rc;
  std::vector<float> x;
  std::vector<int64_t> shape;
  Status st = read_npy_f32(o.input, &x, &shape);
  if (!st.ok()) return report_error("--input", st, false);
  const Graph& g = model->graph;
  const Shape& in = g.tensors[g.inputs[0]].shape;
  if (shape.size() != 4 || shape[1] != in[1] || shape[2] != in[2] || shape[3] != in[3] || shape[0] < 1) {
    Shape got;
    Shape::from_vector(shape, &got);
    std::cerr << "vitrt: --input '" << o.input << "': expected float32 [N," << in[1] << "," << in[2] << ","
              << in[3] << "] (NCHW, preprocessed), got " << got.str() << "\n";
    return kExitBadInput;
  }
  const int64_t n = shape[0];
  const int64_t batch = std::min<int64_t>(o.run.batch, n);
  std::unique_ptr<Session> session;
  if (!o.dump_dir.empty()) {
    // Every intermediate must survive the run: no arena reuse, and one run over the whole input.
    if (n > 4096) {
      std::cerr << "vitrt: --dump-dir: at most 4096 images\n";
      return kExitUsage;
    }
    SessionOptions so;
    so.backend = o.run.backend;
    so.num_threads = o.run.threads;
    so.max_batch = n;
    so.opt_level = o.run.opt_level;
    so.disabled_passes = o.run.disabled_passes;
    so.preserve_intermediates = true;
    st = Session::create(model, so, &session);
    if (!st.ok()) return report_error("cannot create a session", st, false);
  } else if (int rc = create_session_or_report(model, o.run, batch, &session)) {
    return rc;
  }
  const int64_t step = o.dump_dir.empty() ? batch : n;
  const Shape one = session->output_shape(1);
  const int64_t per_out = one.numel();
  const int64_t per_in = in[1] * in[2] * in[3];
  std::vector<float> y(static_cast<size_t>(n * per_out));
  for (int64_t s = 0; s < n; s += step) {
    const int64_t b = std::min(step, n - s);
    st = session->run(x.data() + s * per_in, b, y.data() + s * per_out, static_cast<size_t>(b * per_out));
    if (!st.ok()) return report_error("run", st, false);
  }
  if (!o.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dump_dir, ec);
    st = dump_tensors(*session, o.dump_dir);
    if (!st.ok()) return report_error("--dump-dir", st, false);
  }
  std::vector<int64_t> out_shape = one.to_vector();
  out_shape[0] = n;
  st = write_npy_f32(o.output, y.data(), out_shape);
  if (!st.ok()) return report_error("--output", st, false);
  return kExitOk;
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
