// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "arch/fold_batch_norm.h"

#include <cmath>

namespace vitrt::convert {

void fold_batch_norm(const std::vector<float>& w, const std::vector<float>& bias,
                     const std::vector<float>& gamma, const std::vector<float>& beta,
                     const std::vector<float>& mean, const std::vector<float>& var, double eps,
                     std::vector<float>* w_out, std::vector<float>* b_out) {
  const size_t cout = gamma.size();
  const size_t per = cout ? w.size() / cout : 0;
  w_out->resize(w.size());
  b_out->resize(cout);
  for (size_t o = 0; o < cout; ++o) {
    const double s = static_cast<double>(gamma[o]) / std::sqrt(static_cast<double>(var[o]) + eps);
    for (size_t i = 0; i < per; ++i) (*w_out)[o * per + i] = static_cast<float>(w[o * per + i] * s);
    const double b0 = bias.empty() ? 0.0 : static_cast<double>(bias[o]);
    (*b_out)[o] = static_cast<float>((b0 - mean[o]) * s + beta[o]);
  }
}

void conv_bn_weights(GraphBuilder& b, const Checkpoint& ckpt, const std::string& conv, const std::string& bn,
                     const std::vector<int64_t>& w_shape, bool conv_bias, double eps, int32_t* weight,
                     int32_t* bias) {
  const int64_t cout = w_shape.empty() ? 0 : w_shape[0];
  struct Need {
    std::string key;
    std::vector<int64_t> shape;
  };
  std::vector<Need> needs = {{conv + ".weight", w_shape}};
  if (conv_bias) needs.push_back({conv + ".bias", {cout}});
  for (const char* p : {".weight", ".bias", ".running_mean", ".running_var"})
    needs.push_back({bn + p, {cout}});
  bool ok = true;
  for (const Need& n : needs) ok = ok && b.shape_of(n.key) == n.shape;
  b.ignore(bn + ".num_batches_tracked");
  if (!ok) {
    // Let the builder record what is missing or misshapen; the graph is never finished.
    for (const Need& n : needs) {
      const int32_t t = b.weight(n.key, n.shape);
      if (n.key == conv + ".weight") *weight = t;
      if (n.key == bn + ".bias") *bias = t;
    }
    return;
  }
  for (const Need& n : needs) b.ignore(n.key);
  auto values = [&](const std::string& key) -> const std::vector<float>& { return b.float_values(key); };
  static const std::vector<float> kNone;
  std::vector<float> w, bb;
  fold_batch_norm(values(conv + ".weight"), conv_bias ? values(conv + ".bias") : kNone,
                  values(bn + ".weight"), values(bn + ".bias"), values(bn + ".running_mean"),
                  values(bn + ".running_var"), eps, &w, &bb);
  Shape ws;
  Shape::from_vector(w_shape, &ws);
  *weight = b.constant(conv + ".weight+" + bn, ws, std::move(w));
  *bias = b.constant(conv + ".bias+" + bn, Shape{cout}, std::move(bb));
}

}  // namespace vitrt::convert
