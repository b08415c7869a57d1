// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvMlp (the planner's fused PVT v2 / LaViT MLP): src [B,N,C], fc1_weight [Ch,C], fc1_bias [Ch]?,
// dw_weight [Ch,1,2·pad_h+1,2·pad_w+1], dw_bias [Ch]?, fc2_weight [Co,Ch], fc2_bias [Co]?, residual [B,N,Co]?
// -> [B,N,Co], N = height·width.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_conv_mlp(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<ConvMlpAttrs>(node.attrs);
  auto fail = [](const std::string& what) { return bad_model("ConvMlp: " + what); };
  auto optional = [&](int i) { return i < num_src ? src[i] : nullptr; };
  const Shape& s = *src[0];
  if (s.rank != 3) return fail("src must be [B,N,C], got " + s.str());
  if (a.height < 1 || a.width < 1 || static_cast<int64_t>(a.height) * a.width != s[1])
    return fail("grid " + std::to_string(a.height) + "x" + std::to_string(a.width) + " does not hold " +
                std::to_string(s[1]) + " tokens");
  if (a.pad_h < 0 || a.pad_w < 0) return fail("negative padding");
  const int64_t c = s[2];
  // Inputs 1, 3 and 5 are required but sit among optional ones, so the schema only demands input 0.
  if (!optional(1) || src[1]->rank != 2 || (*src[1])[1] != c)
    return fail("fc1_weight must be [Ch," + std::to_string(c) + "]");
  const int64_t ch = (*src[1])[0];
  const std::string chs = std::to_string(ch);
  if (optional(2) && *src[2] != Shape{ch}) return fail("fc1_bias must be [" + chs + "]");
  const Shape want_dw{ch, 1, 2 * int64_t{a.pad_h} + 1, 2 * int64_t{a.pad_w} + 1};
  if (!optional(3) || *src[3] != want_dw) return fail("dw_weight must be " + want_dw.str());
  if (optional(4) && *src[4] != Shape{ch}) return fail("dw_bias must be [" + chs + "]");
  if (!optional(5) || src[5]->rank != 2 || (*src[5])[1] != ch)
    return fail("fc2_weight must be [Co," + chs + "]");
  const Shape out{s[0], s[1], (*src[5])[0]};
  if (optional(6) && *src[6] != Shape{out[2]})
    return fail("fc2_bias must be [" + std::to_string(out[2]) + "]");
  if (optional(7) && *src[7] != out) return fail("residual must be " + out.str() + ", got " + src[7]->str());
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
