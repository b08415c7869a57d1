// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A tiny DeiT checkpoint made in memory (embed 4, one block, patch 2 on a 2x2 image; convert with heads "1"):
// the labels fuzz target converts it, and make_model_seeds writes it as a model seed.
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"

namespace vitrt::fuzz {

inline void add_tensor(vitrt::convert::Checkpoint* ck, const std::string& name, std::vector<int64_t> shape) {
  auto& t = ck->tensors[name];
  t.name = name;
  t.source_type = "float32";
  t.shape = shape;
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  t.values.assign(n, 0.0f);
  for (size_t i = 0; i < n; ++i) t.values[i] = static_cast<float>((i * 7) % 5) * 0.1f - 0.2f;
}

inline vitrt::convert::Checkpoint tiny_deit(int64_t classes) {
  vitrt::convert::Checkpoint ck;
  ck.container = "raw";
  add_tensor(&ck, "patch_embed.proj.weight", {4, 3, 2, 2});
  add_tensor(&ck, "patch_embed.proj.bias", {4});
  add_tensor(&ck, "cls_token", {1, 1, 4});
  add_tensor(&ck, "pos_embed", {1, 2, 4});
  for (const char* ln : {"blocks.0.norm1", "blocks.0.norm2", "norm"}) {
    add_tensor(&ck, std::string(ln) + ".weight", {4});
    add_tensor(&ck, std::string(ln) + ".bias", {4});
  }
  add_tensor(&ck, "blocks.0.attn.qkv.weight", {12, 4});
  add_tensor(&ck, "blocks.0.attn.qkv.bias", {12});
  add_tensor(&ck, "blocks.0.attn.proj.weight", {4, 4});
  add_tensor(&ck, "blocks.0.attn.proj.bias", {4});
  add_tensor(&ck, "blocks.0.mlp.fc1.weight", {4, 4});
  add_tensor(&ck, "blocks.0.mlp.fc1.bias", {4});
  add_tensor(&ck, "blocks.0.mlp.fc2.weight", {4, 4});
  add_tensor(&ck, "blocks.0.mlp.fc2.bias", {4});
  add_tensor(&ck, "head.weight", {classes, 4});
  add_tensor(&ck, "head.bias", {classes});
  return ck;
}

}  // namespace vitrt::fuzz
