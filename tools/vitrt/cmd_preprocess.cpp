// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt preprocess -m MODEL IMAGE --output X.npy: the exact tensor the model would get for IMAGE.
#include "cli_common.h"
#include "common/npy.h"
#include "image/image.h"

namespace vitrt::cli {
namespace {

struct Options {
  std::string model, image, output;
};

int run_preprocess(const Options& o) {
  std::shared_ptr<const Model> model;
  if (int rc = load_model_or_report(o.model, &model)) return rc;
  const Graph& g = model->graph;
  const Shape& in = g.tensors[g.inputs[0]].shape;
  std::vector<float> x(static_cast<size_t>(in[1] * in[2] * in[3]));
  Status st = load_and_preprocess(o.image, g.metadata.preprocess, x.data());
  if (!st.ok()) return report_error("preprocess", st, false);
  st = write_npy_f32(o.output, x.data(), {1, in[1], in[2], in[3]});
  if (!st.ok()) return report_error("--output", st, false);
  return kExitOk;
}

}  // namespace

Runner add_preprocess(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("preprocess", "write the preprocessed input tensor of an image as .npy [1,C,H,W]");
  sub->add_option("-m,--model", o->model, "model file (.vitrt)")->required();
  sub->add_option("image", o->image, "PNG or JPEG image")->required();
  sub->add_option("-o,--output", o->output, "output .npy")->required();
  sub->footer(input_limits_help());
  return [o] { return run_preprocess(*o); };
}

}  // namespace vitrt::cli
