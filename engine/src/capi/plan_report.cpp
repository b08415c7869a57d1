// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's plan report (`vitrt inspect --plan`, `vitrt bench --profile`, `vitrt run --dump-dir`): the
// session's backend and memory, its planner passes, and each step with its output tensors' placement.
#include "capi/capi_internal.h"

using namespace vitrt::capi;

namespace {

const char* arena_name(vitrt::ArenaKind a) {
  switch (a) {
    case vitrt::ArenaKind::kWeights:
      return "weights";
    case vitrt::ArenaKind::kActivations:
      return "activations";
    case vitrt::ArenaKind::kInput:
      return "input";
    case vitrt::ArenaKind::kPersistent:
      return "persistent";
    case vitrt::ArenaKind::kNone:
      break;
  }
  return "-";
}

// Checks `step` against the session's planned graph; names the function and the range when out of it.
vitrt_status_t check_step(const vitrt::Session& s, int32_t step, const char* function) {
  const size_t steps = s.graph().nodes.size();
  if (step < 0 || static_cast<size_t>(step) >= steps)
    return fail(VITRT_ERR_INVALID_ARGUMENT, std::string(function) + ": step " + std::to_string(step) +
                                                " outside 0.." + std::to_string(steps) +
                                                " (exclusive) of the plan of '" + s.model().path + "'");
  return VITRT_OK;
}

}  // namespace

extern "C" {

vitrt_status_t vitrt_session_get_plan(const vitrt_session_t* session, vitrt_plan_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_session_get_plan")) return st;
    if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_plan: null session");
    const vitrt::Session& s = *session->session;
    const vitrt::MemoryReport& m = s.memory();
    vitrt_plan_info_t r = {};
    r.struct_size = sizeof r;
    r.backend = s.backend_name();
    r.max_batch = static_cast<int32_t>(s.options().max_batch);
    r.num_steps = static_cast<int32_t>(s.graph().nodes.size());
    r.num_passes = static_cast<int32_t>(s.pass_report().size());
    r.weight_bytes = m.weight_bytes;
    r.activation_bytes = m.activation_bytes;
    r.activation_lower_bound = m.activation_lower_bound;
    r.workspace_bytes = m.workspace_bytes;
    r.persistent_bytes = m.persistent_bytes;
    r.profiled_runs = s.profiled_runs();
    r.precision = s.precision_report().c_str();
    r.num_tiles = static_cast<int32_t>(s.row_tiles().size()) + (s.batch_tile().last >= s.batch_tile().first) +
                  (s.batch_trunk_slots() > 1);
    return copy_info(r, info);
  });
}

vitrt_status_t vitrt_session_get_tile(const vitrt_session_t* session, int32_t index,
                                      vitrt_tile_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_session_get_tile")) return st;
    if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_tile: null session");
    const vitrt::Session& s = *session->session;
    const vitrt::StepRange batch = s.batch_tile(), trunk = s.batch_trunk();
    const bool has_batch = batch.last >= batch.first, has_trunk = s.batch_trunk_slots() > 1;
    const size_t tiles = s.row_tiles().size() + has_batch + has_trunk;
    if (index < 0 || static_cast<size_t>(index) >= tiles)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_tile: tile " + std::to_string(index) +
                                                  " outside 0.." + std::to_string(tiles) + " (exclusive)");
    vitrt_tile_info_t r = {};
    r.struct_size = sizeof r;
    if (has_batch && index == 0) {
      r.kind = "batch";
      r.first_step = batch.first, r.last_step = batch.last;
      r.block = 1;
      r.threads = 1;
    } else if (has_trunk && index == has_batch) {
      r.kind = "trunk";
      r.first_step = trunk.first, r.last_step = trunk.last;
      r.block = (s.options().max_batch + s.batch_trunk_slots() - 1) / s.batch_trunk_slots();
      r.threads = s.batch_trunk_slots();
    } else {
      const vitrt::RowTile& t = s.row_tiles()[static_cast<size_t>(index) - has_batch - has_trunk];
      r.kind = "rows";
      r.first_step = t.steps.first, r.last_step = t.steps.last;
      r.block = t.block_rows;
      r.threads = t.slots;
    }
    return copy_info(r, info);
  });
}

vitrt_status_t vitrt_session_get_pass(const vitrt_session_t* session, int32_t index,
                                      vitrt_pass_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_session_get_pass")) return st;
    if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_pass: null session");
    const auto& passes = session->session->pass_report();
    if (index < 0 || static_cast<size_t>(index) >= passes.size())
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_pass: pass " + std::to_string(index) +
                                                  " outside 0.." + std::to_string(passes.size()) +
                                                  " (exclusive)");
    const vitrt::PassReport& p = passes[index];
    vitrt_pass_info_t r = {};
    r.struct_size = sizeof r;
    r.name = p.name.c_str();
    r.ran = p.ran;
    r.modified = p.modified;
    r.ops_after = static_cast<int32_t>(p.ops_after);
    return copy_info(r, info);
  });
}

vitrt_status_t vitrt_session_get_step(const vitrt_session_t* session, int32_t step, vitrt_step_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_session_get_step")) return st;
    if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_step: null session");
    const vitrt::Session& s = *session->session;
    if (vitrt_status_t st = check_step(s, step, "vitrt_session_get_step")) return st;
    const vitrt::Node& n = s.graph().nodes[step];
    vitrt_step_info_t r = {};
    r.struct_size = sizeof r;
    r.op = vitrt::op_type_name(n.type);
    r.name = n.name.c_str();
    r.num_outputs = static_cast<int32_t>(n.outputs.size());
    const auto& seconds = s.step_seconds();
    r.seconds = static_cast<size_t>(step) < seconds.size() ? seconds[step] : 0.0;
    return copy_info(r, info);
  });
}

vitrt_status_t vitrt_session_get_step_output(const vitrt_session_t* session, int32_t step, int32_t output,
                                             vitrt_tensor_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_session_get_step_output")) return st;
    if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_step_output: null session");
    const vitrt::Session& s = *session->session;
    if (vitrt_status_t st = check_step(s, step, "vitrt_session_get_step_output")) return st;
    const vitrt::Graph& g = s.graph();
    const vitrt::Node& n = g.nodes[step];
    if (output < 0 || static_cast<size_t>(output) >= n.outputs.size())
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_step_output: output " +
                                                  std::to_string(output) + " outside 0.." +
                                                  std::to_string(n.outputs.size()) + " (exclusive) of step " +
                                                  std::to_string(step) + " ('" + n.name + "')");
    const int32_t t = n.outputs[output];
    const vitrt::TensorPlacement& p = s.placements()[t];
    vitrt_tensor_info_t r = {};
    r.struct_size = sizeof r;
    r.name = g.tensors[t].name.c_str();
    r.index = t;
    copy_shape(s.tensor_shape(t), &r.rank, r.dims);
    r.arena = arena_name(p.arena);
    r.offset = p.offset;
    r.bytes = p.bytes;
    r.first_step = p.life.first;
    r.last_step = p.life.last;
    r.inplace_of = s.inplace_of(t);
    r.inplace_of_name = r.inplace_of >= 0 ? g.tensors[r.inplace_of].name.c_str() : nullptr;
    // Without preserve_intermediates a tensor's arena block is reused by later steps: its pointer would lie.
    r.data = s.options().preserve_intermediates ? s.tensor_data(t) : nullptr;
    return copy_info(r, info);
  });
}

vitrt_status_t vitrt_session_reset_profile(vitrt_session_t* session) {
  if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_reset_profile: null session");
  session->session->reset_profile();
  return report(vitrt::Status::Ok());
}

}  // extern "C"
