// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// A program outside the project that uses the installed package only (vitrt.hpp over libvitrt.so), built by
// tests/package/run_package_test.sh with find_package(vitrt) and with pkg-config.
//   consumer MODEL IMAGE   prints "<top-1 label>\t<probability>"; exit 0
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include <vitrt.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer MODEL IMAGE\n");
    return 1;
  }
  try {
    // A failure is an exception with the library's status and message.
    try {
      vitrt::api::Model::load(std::string(argv[1]) + ".missing");
      std::fprintf(stderr, "loading a missing file did not throw\n");
      return 1;
    } catch (const vitrt::api::Error& e) {
      if (e.status() != VITRT_ERR_IO && e.status() != VITRT_ERR_BAD_MODEL) {
        std::fprintf(stderr, "unexpected status %d: %s\n", static_cast<int>(e.status()), e.what());
        return 1;
      }
    }
    vitrt::api::Model model = vitrt::api::Model::load(argv[1]);
    vitrt::api::SessionOptions opts;
    opts.max_batch = 2;
    vitrt::api::Session session(model, opts);
    // API version 3 through the installed headers: model info, the plan report, a caller buffer as a Span.
    const vitrt::api::ModelInfo info = model.info();
    const vitrt::api::PlanInfo plan = session.plan();
    if (info.num_classes != session.num_classes() || plan.num_steps < 1 ||
        session.steps().size() != static_cast<size_t>(plan.num_steps)) {
      std::fprintf(stderr, "model info (%d classes) or plan (%d steps) is wrong\n", info.num_classes,
                   plan.num_steps);
      return 1;
    }
    std::vector<float> x(model.input_shape().elements());
    vitrt::api::preprocess_image(model, argv[2], x);
    std::vector<float> logits = session.run(x.data(), 1);
    int best = 0;
    float mx = logits[0], sum = 0;
    for (int i = 1; i < session.num_classes(); ++i)
      if (logits[i] > mx) mx = logits[best = i];
    for (float v : logits) sum += std::exp(v - mx);
    std::printf("%s\t%.4f\n", model.label(best).c_str(), 1.0f / sum);
    return 0;
  } catch (const vitrt::api::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 2;
  }
}
