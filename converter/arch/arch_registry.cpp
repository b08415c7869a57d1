// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Architecture detection (from checkpoint keys), dispatch, labels and preprocessing metadata.
#include <cmath>
#include <new>

#include "arch/arch.h"

namespace vitrt::convert {
namespace {

struct ArchEntry {
  const char* name;
  ArchBuildFn build;
  const char* signature_key;  // a key only this family has
};

const ArchEntry kArchs[] = {
    {"deit", build_deit, "blocks.0.norm1.weight"},  // any attention (arch/vit_attention.h)
    {"pvt_v2", build_pvt_v2, "block1.0.mlp.dwconv.dwconv.weight"},
    {"soft", build_soft, "block1.0.att.mha.W_q.weight"},
    {"soft_norm", build_soft_norm,
     nullptr},  // same keys as soft: chosen by --arch or the checkpoint's arch name
    {"lavit", build_lavit, "attn_res2.gamma"},
};

const ArchEntry* find_arch(const std::string& name) {
  for (const auto& a : kArchs)
    if (name == a.name) return &a;
  return nullptr;
}

// Parses "a,b,c" (or "(a, b, c)") into floats.
bool parse_floats(std::string text, std::vector<float>* out) {
  out->clear();
  for (char& ch : text)
    if (ch == '(' || ch == ')' || ch == '[' || ch == ']') ch = ' ';
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find(',', p);
    if (e == std::string::npos) e = text.size();
    const std::string item = text.substr(p, e - p);
    if (item.find_first_not_of(' ') != std::string::npos) {
      char* end = nullptr;
      const float v = std::strtof(item.c_str(), &end);
      if (end == item.c_str()) return false;
      out->push_back(v);
    }
    p = e + 1;
  }
  return !out->empty();
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

bool all_positive(const std::vector<float>& v) {
  for (float x : v)
    if (!(x > 0)) return false;
  return true;
}

// timm's resolve_data_config from the training args, where the checkpoint carries them. Values that would
// make a wrong model (a NaN mean, a zero std, an absurd resize) are refused, unless the option they feed is
// given.
Status apply_checkpoint_args(const Checkpoint& ckpt, const ConvertOptions& opt, Preprocess* pp,
                             std::string* log) {
  auto arg = [&](const char* k) -> std::string {
    auto it = ckpt.args.find(k);
    return it == ckpt.args.end() || it->second == "None" || it->second.empty() ? std::string() : it->second;
  };
  const std::string crop_pct = arg("crop_pct"), interp = arg("interpolation"), mean = arg("mean"),
                    stdv = arg("std");
  auto refused = [](const std::string& arg, const std::string& text, const char* why, const char* flag) {
    return bad_input("the checkpoint's args give " + arg + " = '" + text + "', " + why + " (pass " + flag +
                     " to override it)");
  };
  if (!crop_pct.empty() && !opt.resize) {
    const double cp = std::strtod(crop_pct.c_str(), nullptr);
    if (cp > 0 && cp <= 1) {
      const double resize = std::floor(pp->crop_h / cp);
      if (!(resize <= kMaxImageSide))
        return refused("crop_pct", crop_pct, "which would resize beyond the 65536-pixel limit", "--resize");
      pp->resize_shorter = static_cast<int32_t>(resize);
      *log += "preprocess: crop_pct " + crop_pct + " from the checkpoint args\n";
    }
  }
  if (interp == "bilinear") pp->interpolation = Interpolation::kBilinear;
  if (interp == "bicubic") pp->interpolation = Interpolation::kBicubic;
  if (!interp.empty()) *log += "preprocess: interpolation '" + interp + "' from the checkpoint args\n";
  std::vector<float> v;
  if (!mean.empty() && opt.mean.empty() && parse_floats(mean, &v) && v.size() == pp->mean.size()) {
    if (!all_finite(v)) return refused("mean", mean, "which is not finite", "--mean");
    pp->mean = v;
  }
  if (!stdv.empty() && opt.std.empty() && parse_floats(stdv, &v) && v.size() == pp->std.size()) {
    if (!all_finite(v) || !all_positive(v))
      return refused("std", stdv, "which is not finite and positive", "--std");
    pp->std = v;
  }
  return Status::Ok();
}

// The input side the model was trained at, where the training args say (timm's `input_size` = C,H,W or
// `img_size`); 0 when they do not, or when H != W.
int image_size_from_args(const Checkpoint& ckpt, std::string* log) {
  for (const char* key : {"input_size", "img_size"}) {
    auto it = ckpt.args.find(key);
    if (it == ckpt.args.end()) continue;
    std::vector<float> v;
    if (!parse_floats(it->second, &v)) continue;
    const float side = v.back();
    if (v.size() >= 2 && v[v.size() - 2] != side) continue;
    if (side >= 1 && side <= 65536 && side == std::floor(side)) {
      *log += std::string("image size: ") + std::to_string(static_cast<int>(side)) +
              " from the checkpoint args (" + key + ")\n";
      return static_cast<int>(side);
    }
  }
  return 0;
}

}  // namespace

std::string known_archs() {
  std::string s = "auto";
  for (const auto& a : kArchs) s += std::string("|") + a.name;
  return s;
}

Status detect_arch(const Checkpoint& ckpt, std::string* arch, std::string* why) {
  std::vector<const ArchEntry*> hits;
  for (const auto& a : kArchs)
    if (a.signature_key && ckpt.tensors.count(a.signature_key)) hits.push_back(&a);
  // LaViT is built on PVT v2 and shares its keys: its attention residual decides.
  if (hits.size() == 2 && std::string(hits[1]->name) == "lavit") hits.erase(hits.begin());
  if (hits.size() == 1) {
    *arch = hits[0]->name;
    *why = std::string("found key '") + hits[0]->signature_key + "'";
    if (*arch == "soft") {
      // SOFT and SOFT-Norm have identical keys (docs/models.md §10): the checkpoint's own model name decides.
      const std::string& hint = ckpt.arch_hint;
      if (hint.find("norm") != std::string::npos) {
        *arch = "soft_norm";
        *why += " and the checkpoint names its model '" + hint + "'";
      } else if (!hint.empty()) {
        *why += "; the checkpoint names its model '" + hint + "' (not a Norm variant)";
      } else {
        *why +=
            "; SOFT and SOFT-Norm have identical keys and the checkpoint names no model, so plain SOFT was "
            "chosen (pass --arch soft_norm for a SOFT-Norm checkpoint)";
      }
    }
    return Status::Ok();
  }
  if (ckpt.tensors.count("pos_embed1") && ckpt.tensors.count("block1.0.attn.q.weight"))
    return unsupported(
        "this looks like a PVT v1 checkpoint (pos_embed1 without dwconv); PVT v1 is not supported");
  std::string keys;
  int n = 0;
  for (const auto& kv : ckpt.tensors) {
    if (n++ == 8) {
      keys += ", ...";
      break;
    }
    keys += (n > 1 ? ", " : "") + kv.first;
  }
  return bad_input("cannot tell the architecture from the keys (" + std::to_string(ckpt.tensors.size()) +
                   " tensors: " + keys + "); pass --arch " + known_archs());
}

Status check_options(const ConvertOptions& opt) {
  auto side = [](int v, const char* flag) {
    if (v >= 0 && v <= kMaxImageSide) return Status::Ok();
    return invalid_argument(std::string(flag) + " " + std::to_string(v) + " is out of range (1 to " +
                            std::to_string(kMaxImageSide) + ")");
  };
  VITRT_RETURN_IF_ERROR(side(opt.image_size, "--image-size"));
  VITRT_RETURN_IF_ERROR(side(opt.resize, "--resize"));
  VITRT_RETURN_IF_ERROR(side(opt.crop, "--crop"));
  if (!all_finite(opt.mean)) return invalid_argument("--mean values must be finite numbers");
  if (!all_finite(opt.std) || !all_positive(opt.std))
    return invalid_argument("--std values must be finite and positive");
  return Status::Ok();
}

namespace {

Status convert_impl(const Checkpoint& ckpt, const ConvertOptions& opt, Graph* out, std::string* log) {
  VITRT_RETURN_IF_ERROR(check_options(opt));
  if (!opt.onnx_output.empty())
    return invalid_argument("--onnx-output '" + opt.onnx_output +
                            "' applies to ONNX models; this is a checkpoint");
  std::vector<std::string> labels;
  if (!opt.labels_path.empty()) VITRT_RETURN_IF_ERROR(read_labels_file(opt.labels_path, &labels));
  std::string arch = opt.arch;
  if (arch.empty() || arch == "auto") {
    std::string why;
    VITRT_RETURN_IF_ERROR(detect_arch(ckpt, &arch, &why));
    *log += "architecture: " + arch + " (auto-detected: " + why + ")\n";
  } else {
    *log += "architecture: " + arch + " (--arch)\n";
  }
  const ArchEntry* entry = find_arch(arch);
  if (!entry) return invalid_argument("unknown --arch '" + arch + "' (expected " + known_archs() + ")");
  if (opt.emit != "fused" && opt.emit != "primitive")
    return invalid_argument("--emit must be 'fused' or 'primitive', got '" + opt.emit + "'");
  ConvertOptions build_opt = opt;
  if (!build_opt.image_size) build_opt.image_size = image_size_from_args(ckpt, log);
  GraphBuilder b(ckpt);
  b.set_emit_primitive(opt.emit == "primitive");
  ArchInfo info;
  VITRT_RETURN_IF_ERROR(entry->build(b, ckpt, build_opt, &info));
  Graph g;
  VITRT_RETURN_IF_ERROR(b.finish(&g));
  *log += "model: " + info.description + "\n";

  ModelMetadata& md = g.metadata;
  md.producer = "vitrt-convert";
  md.arch = info.arch;
  md.extra["source.container"] = ckpt.container;
  if (!ckpt.arch_hint.empty()) md.extra["source.arch"] = ckpt.arch_hint;
  Preprocess pp = info.preprocess;
  if (pp.channels == 1) {
    pp.mean = {0.5f};
    pp.std = {0.5f};
  }
  VITRT_RETURN_IF_ERROR(apply_checkpoint_args(ckpt, opt, &pp, log));
  VITRT_RETURN_IF_ERROR(apply_preprocess_flags(opt, info.image_size, &pp));
  md.preprocess = pp;

  const Shape& logits = b.shape(g.outputs[0]);
  const int64_t classes = logits.rank == 2 ? logits[1] : 0;
  if (!opt.labels_path.empty()) {
    VITRT_RETURN_IF_ERROR(apply_labels(std::move(labels), "labels file '" + opt.labels_path + "'", &g));
  } else {
    for (int64_t i = 0; i < classes; ++i) md.labels.push_back("class_" + std::to_string(i));
  }
  *out = std::move(g);
  return Status::Ok();
}

}  // namespace

Status apply_preprocess_flags(const ConvertOptions& opt, int64_t image_size, Preprocess* pp) {
  if (opt.crop) pp->crop_h = pp->crop_w = opt.crop;
  if (opt.resize) pp->resize_shorter = opt.resize;
  if (!opt.interpolation.empty()) {
    if (opt.interpolation == "bilinear")
      pp->interpolation = Interpolation::kBilinear;
    else if (opt.interpolation == "bicubic")
      pp->interpolation = Interpolation::kBicubic;
    else
      return invalid_argument("--interp must be bilinear or bicubic, got '" + opt.interpolation + "'");
  }
  auto expand = [&](const std::vector<float>& v, const char* flag, std::vector<float>* dst) -> Status {
    if (v.empty()) return Status::Ok();
    if (v.size() == 1)
      dst->assign(static_cast<size_t>(pp->channels), v[0]);
    else if (v.size() == static_cast<size_t>(pp->channels))
      *dst = v;
    else
      return invalid_argument(std::string(flag) + " needs 1 or " + std::to_string(pp->channels) + " values");
    return Status::Ok();
  };
  VITRT_RETURN_IF_ERROR(expand(opt.mean, "--mean", &pp->mean));
  VITRT_RETURN_IF_ERROR(expand(opt.std, "--std", &pp->std));
  if (!all_finite(pp->mean) || !all_finite(pp->std) || !all_positive(pp->std))
    return bad_input("the model's normalisation (mean/std) is not finite with a positive std");
  if (pp->crop_h != image_size || pp->crop_w != image_size)
    return invalid_argument("--crop " + std::to_string(pp->crop_h) + " differs from the model input size " +
                            std::to_string(image_size) + " (use --image-size to change the input size)");
  return Status::Ok();
}

Status convert_checkpoint(const Checkpoint& ckpt, const ConvertOptions& opt, Graph* out, std::string* log) {
  try {
    return convert_impl(ckpt, opt, out, log);
  } catch (const std::bad_alloc&) {
    return out_of_memory("out of memory while building the model");
  }
}

}  // namespace vitrt::convert
