// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "planner/pass_manager.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "ir/shape_propagation.h"

namespace vitrt {
namespace {

std::vector<std::unique_ptr<Pass>> make_pipeline() {
  std::vector<std::unique_ptr<Pass>> p;
  p.push_back(create_fuse_attention_pass());            // first: later passes would blur the patterns
  p.push_back(create_fuse_external_attention_pass());   // before fuse_epilogue takes its Linears' biases
  p.push_back(create_fuse_performer_attention_pass());  // before canonicalize and fold_constants blur it
  p.push_back(create_fuse_nystrom_attention_pass());    // likewise: its exported graph is many plain ops
  p.push_back(create_fuse_linear_transformer_pass());   // before canonicalize merges its Reshape chains
  p.push_back(create_canonicalize_pass());
  p.push_back(create_fold_constants_pass());
  p.push_back(create_fuse_efficient_attention_pass());  // before channels_last_conv rewrites its 1x1 convs
  p.push_back(create_channels_last_conv_pass());
  p.push_back(create_channels_last_stem_pass());
  p.push_back(create_fuse_fastformer_pass());        // after fold_constants (the scale), before fuse_epilogue
  p.push_back(create_fuse_squeeze_excite_pass());    // before fuse_epilogue, though it takes fc1's Relu too
  p.push_back(create_fuse_selective_kernel_pass());  // before fuse_epilogue, though it takes a Relu epilogue
  p.push_back(create_fuse_epilogue_pass());
  p.push_back(create_fuse_conv_mlp_pass());  // after fuse_epilogue: takes the epilogues along
  p.push_back(create_eliminate_dead_code_pass());
  return p;
}

std::set<std::string> split_names(const std::string& text) {
  std::set<std::string> out;
  size_t p = 0;
  while (p <= text.size()) {
    size_t e = text.find(',', p);
    if (e == std::string::npos) e = text.size();
    std::string item = text.substr(p, e - p);
    if (!item.empty()) out.insert(item);
    p = e + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const auto& p : make_pipeline()) names.push_back(p->name());
  return names;
}

Status run_passes(Graph& graph, const PassContext& ctx, int opt_level, const std::string& disabled,
                  std::vector<PassReport>* report) {
  std::set<std::string> off = split_names(disabled);
  if (const char* env = std::getenv("VITRT_DISABLE_PASSES")) {
    const auto more = split_names(env);
    off.insert(more.begin(), more.end());
  }
  const std::vector<std::string> known = pass_names();
  for (const auto& n : off)
    if (n != "all" && std::find(known.begin(), known.end(), n) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return invalid_argument("unknown pass '" + n + "' (passes: " + list + ", or all)");
    }
  for (auto& pass : make_pipeline()) {
    PassReport r;
    r.name = pass->name();
    r.ran = opt_level > 0 && !off.count(r.name) && !off.count("all");
    if (r.ran) {
      Status st = pass->run(graph, ctx, &r.modified);
      if (!st.ok()) return st.with_context(std::string("pass ") + pass->name());
      if (r.modified) {
        Status v = graph.validate_structure();
        if (!v.ok())
          return runtime_error(std::string("pass ") + pass->name() + " broke the graph: " + v.message());
      }
    }
    r.ops_after = graph.nodes.size();
    if (report) report->push_back(r);
  }
  return Status::Ok();
}

}  // namespace vitrt
