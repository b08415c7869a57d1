// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/container.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace vitrt::convert {
namespace {

using pickle::Kind;
using pickle::Value;

const char* const kContainers[] = {"state_dict_ema", "state_dict", "model"};

// repr() of a Python float: the shortest digits that round-trip, fixed notation for exponents -4..15.
std::string python_float(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[64];
  int digits = 1;
  for (; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  const char* e = std::strchr(buf, 'e');
  const int exp = e ? std::atoi(e + 1) : 0;
  if (exp < -4 || exp >= 16) return buf;
  const int decimals = digits - 1 - exp > 0 ? digits - 1 - exp : 0;
  std::snprintf(buf, sizeof buf, "%.*f", decimals, f);
  std::string s = buf;
  if (decimals == 0) s += ".0";
  return s;
}

bool render_scalar(const Value* v, std::string* text) {
  switch (v->kind) {
    case Kind::kNone:
      *text = "None";
      return true;
    case Kind::kBool:
      *text = v->b ? "True" : "False";
      return true;
    case Kind::kInt:
      if (v->big) return false;
      *text = std::to_string(v->i);
      return true;
    case Kind::kFloat:
      *text = python_float(v->f);
      return true;
    case Kind::kStr:
      *text = v->s;
      return true;
    default:
      return false;
  }
}

std::string describe(const Value* v) {
  if (v->kind == Kind::kOpaque || v->kind == Kind::kRecord)
    return std::string("a pickled '") + v->s + "' object";
  return std::string("a ") + pickle::kind_name(v->kind);
}

Status refused(const Value* v, const std::string& where) {
  return bad_input(where + " is built by '" + v->s + "' (pickle byte " + std::to_string(v->where) +
                   "), which is outside the restricted unpickler's allowlist; it was not executed and the " +
                   "checkpoint is refused");
}

std::string list_keys(const Value* d) {
  std::string keys;
  size_t n = 0;
  for (const auto& kv : d->entries) {
    if (n++ == 12) {
      keys += ", ...";
      break;
    }
    std::string k;
    if (!render_scalar(kv.first, &k)) k = std::string("<") + pickle::kind_name(kv.first->kind) + ">";
    keys += (n > 1 ? ", '" : "'") + k + "'";
  }
  return keys.empty() ? "none" : keys;
}

void read_args(const Value* args, Checkpoint* out) {
  if (!args || (args->kind != Kind::kRecord && args->kind != Kind::kDict)) return;
  for (const auto& kv : args->entries) {
    std::string text;
    if (kv.first->kind == Kind::kStr && render_arg(kv.second, &text)) out->args[kv.first->s] = text;
  }
}

}  // namespace

bool render_arg(const Value* v, std::string* text) {
  if (v->kind != Kind::kList && v->kind != Kind::kTuple) return render_scalar(v, text);
  text->clear();
  for (size_t k = 0; k < v->items.size(); ++k) {
    std::string item;
    if (!render_scalar(v->items[k], &item)) return false;
    *text += (k ? "," : "") + item;
  }
  return true;
}

Status select_state_dict(const Value* root, Checkpoint* out, std::vector<SelectedTensor>* tensors) {
  if (root->kind == Kind::kOpaque)
    return bad_input(
        "the checkpoint is a pickled '" + root->s +
        "' object (e.g. a whole model saved with torch.save(model)), not a state_dict; it is outside "
        "the restricted unpickler's allowlist. Save model.state_dict() instead");
  if (root->kind != Kind::kDict)
    return bad_input(std::string("the checkpoint holds a ") + pickle::kind_name(root->kind) +
                     ", not a dict / state_dict");

  const Value* sd = nullptr;
  for (const char* name : kContainers) {
    const Value* v = pickle::dict_get(root, name);
    if (!v || v->kind == Kind::kNone) continue;
    if (v->kind == Kind::kOpaque) return refused(v, std::string("checkpoint['") + name + "']");
    if (v->kind != Kind::kDict)
      return bad_input(std::string("checkpoint['") + name + "'] is " + describe(v) + ", not a state_dict");
    sd = v;
    out->container = name;
    break;
  }
  if (!sd) {
    bool any = false;
    for (const auto& kv : root->entries)
      any |= kv.second->kind == Kind::kTensor || kv.second->kind == Kind::kOpaque;
    if (!any)
      return bad_input(
          "no state_dict found: the checkpoint is a dict without tensors and without a "
          "'state_dict_ema', 'state_dict' or 'model' entry (top-level keys: " +
          list_keys(root) + ")");
    sd = root;
    out->container = "raw";
  }

  if (sd != root) {
    const Value* args = pickle::dict_get(root, "args");
    read_args(args, out);
    const Value* arch = pickle::dict_get(root, "arch");
    if (arch && arch->kind == Kind::kStr)
      out->arch_hint = arch->s;
    else if (out->args.count("model") && out->args["model"] != "None")
      out->arch_hint = out->args["model"];
    for (const auto& kv : root->entries) {
      std::string k;
      if (!render_scalar(kv.first, &k)) k = std::string("<") + pickle::kind_name(kv.first->kind) + ">";
      if (k != out->container && k != "args" && k != "arch") out->skipped.push_back(k);
    }
  }

  std::map<std::string, std::pair<std::string, size_t>> seen;  // stripped name -> (original name, index)
  for (const auto& kv : sd->entries) {
    if (kv.first->kind != Kind::kStr) {
      out->skipped.push_back(std::string("state_dict key of type ") + pickle::kind_name(kv.first->kind));
      continue;
    }
    const std::string& orig = kv.first->s;
    const Value* v = kv.second;
    if (v->kind == Kind::kOpaque) return refused(v, "state_dict entry '" + orig + "'");
    if (v->kind != Kind::kTensor) {
      out->skipped.push_back("state_dict entry '" + orig + "' (" + describe(v) + ", not a tensor)");
      continue;
    }
    std::string name = orig.rfind("module.", 0) == 0 ? orig.substr(7) : orig;
    auto it = seen.find(name);
    if (it != seen.end() && it->second.first != orig)
      return bad_input("state_dict entries '" + it->second.first + "' and '" + orig + "' both become '" +
                       name + "' once the 'module.' prefix is stripped");
    if (it != seen.end()) {  // the same key twice: the later wins, as in Python
      (*tensors)[it->second.second].second = v;
      continue;
    }
    seen[name] = {orig, tensors->size()};
    tensors->emplace_back(name, v);
  }
  if (tensors->empty())
    return bad_input("the selected state_dict ('" + out->container + "') holds no tensors");
  return Status::Ok();
}

}  // namespace vitrt::convert
