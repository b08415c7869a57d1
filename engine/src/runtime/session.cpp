// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "runtime/session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

#include "backends/backend_registry.h"
#include "ir/shape_propagation.h"
#include "loader/mapped_file.h"
#include "memory/placement.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace {

constexpr uint64_t kAlignment = 64;  // AVX-512 loads
constexpr uint64_t kOverread = 64;   // kernels may read up to one vector past a tensor's end
constexpr uint64_t kNotResident = UINT64_MAX;

// The bytes a constant's copy takes in the session's block: its data, the kernels' over-read, aligned.
uint64_t resident_span(uint64_t bytes) {
  return (bytes + kOverread + kAlignment - 1) / kAlignment * kAlignment;
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

// Activation blocks: 64-byte aligned, padded for the kernels' over-read and, in guard mode, a guard zone.
PlacementOptions placement_options(const SessionOptions& options, const MappedFile& file) {
  PlacementOptions po;
  po.allow_inplace = options.allow_inplace;
  po.preserve_intermediates = options.preserve_intermediates;
  po.alignment = kAlignment;
  po.padding = kOverread + (options.guard_arena ? ArenaGuard::kGuardBytes : 0);
  po.file = file.data();
  po.file_size = file.size();
  return po;
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

}  // namespace

Session::~Session() = default;

Status Session::create(std::shared_ptr<const Model> model, const SessionOptions& options,
                       std::unique_ptr<Session>* out) {
  if (!model) return invalid_argument("null model");
  if (options.max_batch < 1 || options.max_batch > 65536)
    return invalid_argument("max_batch must be in 1..65536, got " + std::to_string(options.max_batch));
  if (options.num_threads < 1 || options.num_threads > 1024)
    return invalid_argument("num_threads must be in 1..1024, got " + std::to_string(options.num_threads));
  std::unique_ptr<Session> s(new (std::nothrow) Session());
  if (!s) return out_of_memory("session");
  s->model_ = std::move(model);
  s->options_ = options;
  try {
    VITRT_RETURN_IF_ERROR(s->plan(options));
  } catch (const std::bad_alloc&) {
    return out_of_memory("out of memory while planning the session");
  }
  *out = std::move(s);
  return Status::Ok();
}

// Backend -> planner passes and shapes -> kernels -> placement (memory/placement.h) -> arenas -> guards.
Status Session::plan(const SessionOptions& options) {
  VITRT_RETURN_IF_ERROR(make_backend(options));
  VITRT_RETURN_IF_ERROR(run_planner(options));
  std::vector<NodeMemoryTraits> traits;
  uint64_t workspace_bytes = 0;
  VITRT_RETURN_IF_ERROR(create_kernels(options, &traits, &workspace_bytes));
  PlacementOptions po = placement_options(options, *model_->file);
  // Guard mode checks every step at the full batch, and dumps need every image's intermediates: no tile. The
  // backend says whether a tile pays (Backend::batch_tile: the CPU backends; ref for its exactness tests).
  // The row tiles follow the same rules (the same hook: a GPU gains nothing from either).
  if (!options.guard_arena && !options.preserve_intermediates && backend_->batch_tile()) {
    const BatchTileLimits limits = batch_tile_limits_from_env(options.batch_tile);
    batch_tile_ = choose_batch_tile(graph_, max_shapes_, options.max_batch, limits, backend_->alignment());
    if (limits.min_image_bytes != UINT64_MAX) choose_batch_trunk(options);  // VITRT_BATCH_TILE_KIB=0: neither
    row_tiles_ =
        choose_row_tiles(graph_, max_shapes_, options.max_batch, row_tile_limits_from_env(options.row_tile),
                         backend_->alignment(), trunk_slots_ > 1 ? batch_trunk_ : batch_tile_);
    // A kernel that takes only its planned rows keeps its chain untiled.
    row_tiles_.erase(std::remove_if(row_tiles_.begin(), row_tiles_.end(),
                                    [&](const RowTile& tile) {
                                      for (int s = tile.steps.first; s <= tile.steps.last; ++s)
                                        if (steps_[s].fixed_rows) return true;
                                      return false;
                                    }),
                     row_tiles_.end());
  }
  po.batch_tile = batch_tile_;
  po.batch_trunk = batch_trunk_;
  po.batch_trunk_slots = trunk_slots_;
  const std::vector<Lifetime> life = compute_lifetimes(graph_);
  tile_inside_.assign(graph_.tensors.size(), 0);
  row_inside_.assign(graph_.tensors.size(), 0);
  for (size_t i = 0; i < life.size(); ++i) {
    if (graph_.tensors[i].is_constant) continue;
    tile_inside_[i] = lives_inside(life[i], batch_tile_);
    for (const RowTile& tile : row_tiles_) row_inside_[i] |= lives_inside(life[i], tile.steps);
  }
  for (const RowTile& tile : row_tiles_) po.row_tiles.push_back(tile.steps);
  workspace_bytes = assign_row_slots(options, workspace_bytes);
  MemoryPlan placement = plan_memory(graph_, placement_shapes(), traits, po);
  trunk_slot_bytes_ = placement.trunk_slot_bytes;
  VITRT_RETURN_IF_ERROR(check_memory_limit(placement, workspace_bytes, options));
  VITRT_RETURN_IF_ERROR(allocate_arenas(placement, workspace_bytes));
  VITRT_RETURN_IF_ERROR(make_constants_resident());
  if (options.guard_arena) init_guard(placement, po.padding);
  point_at_storage(std::move(placement));
  return bind_batch(options.max_batch);
}

std::vector<Shape> Session::placement_shapes() const {
  std::vector<Shape> shapes = max_shapes_;
  // One trunk thread's slot: the batch tile's interior tensors hold one image, the others its images.
  if (trunk_slots_ > 1)
    for (size_t t = 0; t < shapes.size(); ++t)
      if (trunk_inside_[t]) shapes[t][0] = tile_inside_[t] ? 1 : trunk_images_;  // dim 0 is the batch
  for (const RowTile& tile : row_tiles_)
    for (int s = tile.steps.first; s <= tile.steps.last; ++s)
      for (int32_t t : graph_.nodes[s].outputs)
        if (row_inside_[t]) shapes[t] = row_block_shape(max_shapes_[t], tile.block_rows * tile.slots);
  return shapes;
}

// One parallel call per tile instead of one per kernel per block: where every kernel of a tile is reentrant,
// each thread runs its share of the blocks at one thread, in its own slot of the inside tensors (in its own
// core's L2) and of the workspace.
uint64_t Session::assign_row_slots(const SessionOptions& options, uint64_t workspace_bytes) {
  uint64_t slot_bytes = 0;
  if (trunk_slots_ > 1)  // the trunk's threads take the same shares of the workspace
    for (int s = batch_trunk_.first; s <= batch_trunk_.last; ++s)
      slot_bytes = std::max(slot_bytes, steps_[s].workspace_bytes);
  for (RowTile& tile : row_tiles_) {
    bool reentrant = options.num_threads > 1;
    uint64_t ws = 0;
    for (int s = tile.steps.first; s <= tile.steps.last; ++s) {
      reentrant = reentrant && steps_[s].reentrant;
      ws = std::max(ws, steps_[s].workspace_bytes);
    }
    if (!reentrant) continue;
    // No more slots than blocks at the maximum batch: a slot beyond them would only grow the arena.
    const Shape& shape = max_shapes_[graph_.nodes[tile.steps.first].outputs[0]];
    const int64_t blocks = (shape.numel() / shape.dim(-1) + tile.block_rows - 1) / tile.block_rows;
    tile.slots = static_cast<int>(std::min<int64_t>(options.num_threads, blocks));
    if (tile.slots <= 1) {
      tile.slots = 1;
      continue;
    }
    slot_bytes = std::max(slot_bytes, ws);
  }
  slot_workspace_bytes_ = (slot_bytes + kAlignment - 1) / kAlignment * kAlignment;
  slot_status_.assign(static_cast<size_t>(options.num_threads), Status::Ok());
  // num_threads <= 1024 and a kernel's workspace is far below 2^53: no overflow.
  return std::max(workspace_bytes, slot_workspace_bytes_ * static_cast<uint64_t>(options.num_threads));
}

Status Session::make_backend(const SessionOptions& options) {
  if (options.precision != Precision::kFp32 && options.precision != Precision::kBf16)
    return invalid_argument("precision must be fp32 or bf16, got " +
                            std::to_string(static_cast<int>(options.precision)));
  if (options.backend_factory) {
    backend_ = options.backend_factory();
    if (!backend_) return invalid_argument("the session's backend_factory returned no backend");
  } else {
    VITRT_RETURN_IF_ERROR(create_backend(options.backend, &backend_, options.precision));
  }
  // bf16 where it cannot run is fp32, never a failure; the report says so.
  precision_report_ = backend_->precision_report();
  if (options.precision == Precision::kBf16 && precision_report_ == "fp32")
    precision_report_ =
        std::string("fp32: bf16 was asked for, but backend '") + backend_->name() + "' has no bf16 kernels";
  return Status::Ok();
}

Status Session::run_planner(const SessionOptions& options) {
  graph_ = model_->graph;  // constants still point into the mapped file
  PassContext ctx;
  ctx.backend = backend_.get();
  VITRT_RETURN_IF_ERROR(run_passes(graph_, ctx, options.opt_level, options.disabled_passes, &pass_report_));
  max_shapes_.assign(graph_.tensors.size(), Shape());
  return propagate_shapes(graph_, options.max_batch, max_shapes_.data());
}

// One kernel per node, created with the shapes at the maximum batch. Reports what each allows for its
// output's memory and the largest workspace any of them needs.
Status Session::create_kernels(const SessionOptions& options, std::vector<NodeMemoryTraits>* traits,
                               uint64_t* workspace_bytes) {
  const Graph& g = graph_;
  traits->assign(g.nodes.size(), NodeMemoryTraits());
  *workspace_bytes = 0;
  steps_.clear();
  steps_.reserve(g.nodes.size());
  // Constants some kernel made so far reads at run time: their file pages stay resident.
  std::vector<uint8_t> read_at_run(g.tensors.size(), 0);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (!backend_->supports(node))
      return unsupported(describe_node(node, n) + ": not supported by backend '" + backend_->name() + "'");
    KernelPlan kp;
    kp.node = &node;
    kp.graph = &g;
    kp.num_threads = options.num_threads;
    Step step;
    step.num_src = kp.num_src = static_cast<int>(node.inputs.size());
    for (int i = 0; i < kp.num_src; ++i) {
      const int32_t t = node.inputs[i];
      step.src[i] = t;
      kp.src_tensors[i] = t == kAbsent ? nullptr : &g.tensors[t];
      if (t != kAbsent) kp.src_shapes[i] = max_shapes_[t];
    }
    step.num_dst = kp.num_dst = static_cast<int>(node.outputs.size());
    for (int o = 0; o < kp.num_dst; ++o) {
      step.dst[o] = node.outputs[o];
      kp.dst_shapes[o] = max_shapes_[node.outputs[o]];
    }
    KernelInfo info;
    Status st = backend_->create_kernel(kp, &step.kernel, &info);
    if (!st.ok()) return st.with_context(describe_node(node, n));
    if (!step.kernel) return runtime_error(describe_node(node, n) + ": backend returned no kernel");
    *workspace_bytes = std::max<uint64_t>(*workspace_bytes, info.workspace_bytes);
    step.workspace_bytes = info.workspace_bytes;
    step.reentrant = info.reentrant;
    step.fixed_rows = info.fixed_rows;
    (*traits)[n].may_inplace = info.may_inplace;
    (*traits)[n].is_view = info.is_view;
    give_back_copied_constants(node, info.copied_srcs, &read_at_run);
    steps_.push_back(std::move(step));
  }
  memory_.resident_bytes = backend_->keeps_constants_resident() ? plan_resident_constants(read_at_run) : 0;
  step_seconds_.assign(options.profile ? steps_.size() : 0, 0.0);
  return Status::Ok();
}

// A model file's weights are mapped, and a kernel that packs one at creation touches every page of it: they
// would stay resident beside the packed copy for the session's life (ResNet-50 at batch 1: 102 MB mapped,
// plus what the kernels packed). Right after a kernel is made, the pages of each file-mapped constant it
// copied and never reads again are given back, unless an earlier kernel reads that constant at run time; a
// later one that does just maps them again from the file (docs/architecture.md §6.3). Giving back right away,
// not after the last kernel, keeps them out of the creation's peak too.
void Session::give_back_copied_constants(const Node& node, uint64_t copied_srcs,
                                         std::vector<uint8_t>* read_at_run) const {
  for (size_t i = 0; i < node.inputs.size() && i < 64; ++i) {
    const int32_t t = node.inputs[i];
    if (t == kAbsent) continue;
    const Tensor& tensor = graph_.tensors[t];
    if (!tensor.is_constant) continue;
    if (!(copied_srcs >> i & 1)) {
      (*read_at_run)[t] = 1;
    } else if (tensor.constant.file_mapped && !(*read_at_run)[t]) {
      MappedFile::drop_pages(tensor.constant.data, tensor.constant.size);
    }
  }
}

// The file-mapped constants some kernel reads at run time get a copy in the session's own memory (the
// backend asks for it: Backend::keeps_constants_resident, docs/architecture.md §6.3). On a virtualised host
// (2-core Zen 5 VM), ResNet-50 reading its large conv weights from the file map ran 2x slower every ~0.5-1 s
// (p90 1.5-2x the median at one thread); from anonymous memory every run took the median's time.
uint64_t Session::plan_resident_constants(const std::vector<uint8_t>& read_at_run) {
  resident_offset_.assign(graph_.tensors.size(), kNotResident);
  uint64_t bytes = 0;
  for (size_t t = 0; t < graph_.tensors.size(); ++t) {
    const Tensor& tensor = graph_.tensors[t];
    if (!read_at_run[t] || !tensor.is_constant || !tensor.constant.file_mapped || tensor.constant.size == 0)
      continue;
    resident_offset_[t] = bytes;
    // Each size is that of a verified tensor inside the mapped file: the sum stays far below 2^63.
    bytes += resident_span(tensor.constant.size);
  }
  return bytes;
}

// One constant at a time, copied and then its file pages given back: the copies' pages are touched only here,
// so the creation's peak holds one constant twice, not all of them (ResNet-50 at batch 8: +69 MB otherwise).
Status Session::make_constants_resident() {
  VITRT_RETURN_IF_ERROR(
      resident_.allocate(memory_.resident_bytes, kAlignment, "resident constants", /*touch=*/false));
  for (size_t t = 0; t < resident_offset_.size(); ++t) {
    if (resident_offset_[t] == kNotResident) continue;
    const ConstantData& c = graph_.tensors[t].constant;
    uint8_t* dst = resident_.data() + resident_offset_[t];
    std::memcpy(dst, c.data, c.size);
    std::memset(dst + c.size, 0, resident_span(c.size) - c.size);  // what the kernels' over-read sees
    MappedFile::drop_pages(c.data, c.size);
  }
  return Status::Ok();
}

// The plan (activations + workspace + persistent constants + the weights' copies) against max_memory_bytes or
// this machine's memory; a refusal names the largest activation.
Status Session::check_memory_limit(const MemoryPlan& plan, uint64_t workspace_bytes,
                                   const SessionOptions& options) const {
  const uint64_t limit = options.max_memory_bytes ? options.max_memory_bytes : physical_memory_bytes();
  // Each term bounded far below 2^63.
  const uint64_t planned =
      plan.activation_bytes + workspace_bytes + plan.persistent_bytes + memory_.resident_bytes;
  if (planned <= limit) return Status::Ok();
  const std::vector<TensorPlacement>& place = plan.placements;
  size_t largest = 0;
  for (size_t i = 0; i < place.size(); ++i)
    if (place[i].arena == ArenaKind::kActivations && place[i].bytes > place[largest].bytes) largest = i;
  return out_of_memory("the plan at batch " + std::to_string(options.max_batch) + " needs " + gib(planned) +
                       " (activations " + gib(plan.activation_bytes) + ", workspace " + gib(workspace_bytes) +
                       (memory_.resident_bytes
                            ? ", copies of weights read at run time " + gib(memory_.resident_bytes)
                            : std::string()) +
                       "), more than the session's memory limit of " + gib(limit) +
                       (options.max_memory_bytes ? "" : " (this machine's memory)") +
                       "; its largest tensor is '" + graph_.tensors[largest].name + "' " +
                       max_shapes_[largest].str() + " (" + gib(place[largest].bytes) + ")");
}

// One allocation each for the activation and workspace arenas, sized by the plan; the memory report.
Status Session::allocate_arenas(const MemoryPlan& plan, uint64_t workspace_bytes) {
  VITRT_RETURN_IF_ERROR(activations_.allocate(plan.activation_bytes, kAlignment, "activation"));
  VITRT_RETURN_IF_ERROR(workspace_.allocate(workspace_bytes + kOverread, kAlignment, "workspace"));
  memory_.weight_bytes = plan.weight_bytes;
  memory_.activation_bytes = plan.activation_bytes;
  memory_.activation_lower_bound = plan.activation_lower_bound;
  memory_.workspace_bytes = workspace_bytes;
  memory_.persistent_bytes = plan.persistent_bytes;
  return Status::Ok();
}

// guard_arena: one guard block per activation, sized as the arena planner placed it (data + padding,
// aligned).
void Session::init_guard(const MemoryPlan& plan, uint64_t padding) {
  const size_t nt = plan.placements.size();
  std::vector<ArenaGuard::Block> blocks(nt);
  for (size_t i = 0; i < nt; ++i) {
    const TensorPlacement& p = plan.placements[i];
    if (p.arena != ArenaKind::kActivations) continue;
    blocks[i].offset = p.offset;
    blocks[i].end = p.offset + (p.bytes + padding + kAlignment - 1) / kAlignment * kAlignment;
    blocks[i].life = p.life;
    blocks[i].root = plan.root[i];
    blocks[i].name = graph_.tensors[i].name;
  }
  guard_.init(&graph_, std::move(blocks), activations_.data());
}

// Keeps the placement and points every tensor's reference at its bytes: weights and folded constants where
// they are, activations into the arena (the input's is bound at each run).
void Session::point_at_storage(MemoryPlan plan) {
  placements_ = std::move(plan.placements);
  alias_of_ = std::move(plan.alias_of);
  const Graph& g = graph_;
  const size_t nt = g.tensors.size();
  shapes_.assign(nt, Shape());
  refs_.assign(nt, TensorRef());
  for (size_t i = 0; i < nt; ++i) {
    refs_[i].dtype = g.tensors[i].dtype;
    const TensorPlacement& p = placements_[i];
    if (p.arena == ArenaKind::kWeights || p.arena == ArenaKind::kPersistent)
      refs_[i].data = i < resident_offset_.size() && resident_offset_[i] != kNotResident
                          ? resident_.data() + resident_offset_[i]
                          : const_cast<uint8_t*>(g.tensors[i].constant.data);
    if (p.arena == ArenaKind::kActivations) refs_[i].data = activations_.data() + p.offset;
  }
}

Status Session::bind_batch(int64_t batch) {
  const Graph& g = graph_;
  VITRT_RETURN_IF_ERROR(propagate_shapes(g, batch, shapes_.data()));
  for (size_t i = 0; i < shapes_.size(); ++i) {
    // A row tile's inside tensors hold one block of rows (run_row_tile), whatever the batch; a trunk's
    // interior ones one thread's images (run_trunk_slot), or one image inside the batch tile.
    uint64_t bytes = tensor_bytes(g.tensors[i], shapes_[i]);
    if (trunk_slots_ > 1 && trunk_inside_[i])
      bytes = bytes / static_cast<uint64_t>(batch) *
              static_cast<uint64_t>(tile_inside_[i] ? 1 : std::min(batch, trunk_images_));
    if (placements_[i].arena == ArenaKind::kActivations && !row_inside_[i] && bytes > placements_[i].bytes)
      return runtime_error("tensor '" + g.tensors[i].name + "' needs more memory at batch " +
                           std::to_string(batch) + " than planned at batch " +
                           std::to_string(options_.max_batch));
    refs_[i].shape = shapes_[i];
  }
  // Every activation of a row tile has the same rows at batch 1 and at the maximum (choose_row_tiles); a
  // graph whose rows are not linear in the batch would break that between them.
  for (const RowTile& tile : row_tiles_)
    for (int s = tile.steps.first; s <= tile.steps.last; ++s)
      for (const std::vector<int32_t>* tensors : {&g.nodes[s].inputs, &g.nodes[s].outputs})
        for (int32_t t : *tensors)
          if (t != kAbsent && !g.tensors[t].is_constant &&
              shapes_[t].numel() / shapes_[t].dim(-1) != row_count(tile))
            return runtime_error(describe_node(g.nodes[s], s) + ": tensor '" + g.tensors[t].name + "' " +
                                 shapes_[t].str() + " has other rows than its row tile at batch " +
                                 std::to_string(batch));
  if (options_.guard_arena) {
    std::vector<uint64_t> bytes(shapes_.size());
    for (size_t i = 0; i < shapes_.size(); ++i) bytes[i] = tensor_bytes(g.tensors[i], shapes_[i]);
    guard_.bind(bytes);
  }
  bound_batch_ = batch;
  return Status::Ok();
}

Shape Session::input_shape(int64_t batch) const {
  Shape s = graph_.tensors[graph_.inputs[0]].shape;
  s[0] = batch;
  return s;
}

Shape Session::output_shape(int64_t batch) const {
  Shape s = graph_.tensors[graph_.outputs[0]].shape;
  for (int d = 0; d < s.rank; ++d)
    if (s[d] == kDynamicDim) s[d] = batch;
  return s;
}

const float* Session::tensor_data(int32_t index) const {
  if (index < 0 || static_cast<size_t>(index) >= refs_.size()) return nullptr;
  return static_cast<const float*>(refs_[index].data);
}

void Session::reset_profile() {
  std::fill(step_seconds_.begin(), step_seconds_.end(), 0.0);
  profiled_runs_ = 0;
}

Status Session::run(const float* input, int64_t batch, float* output, size_t output_capacity) {
  if (!input || !output) return invalid_argument("run: null input or output pointer");
  if (batch < 1 || batch > options_.max_batch)
    return bad_input("run: batch " + std::to_string(batch) + " outside 1.." +
                     std::to_string(options_.max_batch) + " (the session's max_batch)");
  if (batch != bound_batch_) VITRT_RETURN_IF_ERROR(bind_batch(batch));
  const Graph& g = graph_;
  const int32_t in = g.inputs[0];
  refs_[in].data = const_cast<float*>(input);
  const int32_t out = g.outputs[0];
  const size_t out_numel = static_cast<size_t>(shapes_[out].numel());
  if (output_capacity < out_numel)
    return invalid_argument("run: output buffer holds " + std::to_string(output_capacity) + " floats, " +
                            std::to_string(out_numel) + " needed");
  if (options_.poison_activations) {
    float* a = reinterpret_cast<float*>(activations_.data());
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 0; i < activations_.size() / sizeof(float); ++i) a[i] = nan;
  }
  const bool guard = options_.guard_arena;
  if (guard) guard_.begin_run();
  const bool profile = options_.profile;
  if (profile) ++profiled_runs_;
  KernelArgs args;
  args.workspace = workspace_.data();
  args.workspace_bytes = memory_.workspace_bytes;
  args.num_threads = options_.num_threads;
  size_t s = 0;
  if (batch > 1 && trunk_slots_ > 1) {
    VITRT_RETURN_IF_ERROR(run_batch_trunk(batch, &args));
    s = static_cast<size_t>(batch_trunk_.last) + 1;
  } else if (batch > 1 && batch_tile_.last >= batch_tile_.first) {
    VITRT_RETURN_IF_ERROR(run_batch_tile(batch, &args));
    s = static_cast<size_t>(batch_tile_.last) + 1;
  }
  size_t next_row_tile = 0;  // row tiles never overlap the batch tile (choose_row_tiles)
  for (; s < steps_.size(); ++s) {
    while (next_row_tile < row_tiles_.size() &&
           static_cast<size_t>(row_tiles_[next_row_tile].steps.first) < s)
      ++next_row_tile;
    if (next_row_tile < row_tiles_.size() &&
        static_cast<size_t>(row_tiles_[next_row_tile].steps.first) == s) {
      VITRT_RETURN_IF_ERROR(run_row_tile(row_tiles_[next_row_tile], &args));
      s = static_cast<size_t>(row_tiles_[next_row_tile].steps.last);
      continue;
    }
    Step& step = steps_[s];
    args.num_src = step.num_src;
    for (int i = 0; i < step.num_src; ++i)
      args.src[i] = step.src[i] == kAbsent ? nullptr : &refs_[step.src[i]];
    args.num_dst = step.num_dst;
    for (int o = 0; o < step.num_dst; ++o) args.dst[o] = &refs_[step.dst[o]];
    if (guard)
      VITRT_RETURN_IF_ERROR(
          guard_.before_step(static_cast<int>(s), step.src, step.num_src, step.dst, step.num_dst));
    VITRT_RETURN_IF_ERROR(run_step(s, args));
    if (guard) VITRT_RETURN_IF_ERROR(guard_.after_step(static_cast<int>(s), step.dst, step.num_dst));
  }
  std::memcpy(output, refs_[out].data, out_numel * sizeof(float));
  refs_[in].data = nullptr;
  return Status::Ok();
}

Status Session::run_step(size_t s, const KernelArgs& args, bool timed) {
  const bool profile = options_.profile && timed;
  const auto t0 = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  Status st = steps_[s].kernel->run(args);
  if (!st.ok()) return st.with_context(describe_node(graph_.nodes[s], s));
  if (profile)
    step_seconds_[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

template <class View>
Status Session::run_steps_viewed(int first, int last, const View& view, KernelArgs* a, bool timed) {
  TensorRef src[kMaxOpInputs], dst[kMaxOpOutputs];
  for (int s = first; s <= last; ++s) {
    const Step& step = steps_[s];
    a->num_src = step.num_src;
    for (int i = 0; i < step.num_src; ++i) {
      a->src[i] = nullptr;
      if (step.src[i] == kAbsent) continue;
      view(step.src[i], &src[i]);
      a->src[i] = &src[i];
    }
    a->num_dst = step.num_dst;
    for (int o = 0; o < step.num_dst; ++o) {
      view(step.dst[o], &dst[o]);
      a->dst[o] = &dst[o];
    }
    VITRT_RETURN_IF_ERROR(run_step(static_cast<size_t>(s), *a, timed));
  }
  return Status::Ok();
}

template <class Fn>
Status Session::run_slots(int slots, const KernelArgs& args, const Fn& fn) {
  struct Job {
    Session* session;
    const KernelArgs* args;
    const Fn* fn;
  } job{this, &args, &fn};
  backend_->run_parallel(
      slots,
      [](void* p, int t) {
        const Job& j = *static_cast<const Job*>(p);
        Session& self = *j.session;
        KernelArgs a = *j.args;
        a.num_threads = 1;
        a.workspace =
            static_cast<uint8_t*>(a.workspace) + static_cast<uint64_t>(t) * self.slot_workspace_bytes_;
        a.workspace_bytes = self.slot_workspace_bytes_;
        self.slot_status_[t] = (*j.fn)(t, a);
      },
      &job);
  for (int t = 0; t < slots; ++t)
    if (!slot_status_[t].ok()) return slot_status_[t];
  return Status::Ok();
}

// Image b's view of tensor t: boundary activations at slice b, interior ones at slice 0 (every image reuses
// the first image's bytes; the placement kept them apart from the boundary tensors), constants whole.
Status Session::run_batch_tile(int64_t batch, KernelArgs* args) {
  for (int64_t b = 0; b < batch; ++b) {
    auto image_ref = [&](int32_t t, TensorRef* r) {
      *r = refs_[t];
      if (graph_.tensors[t].is_constant) return;
      const uint64_t image_bytes = tensor_bytes(graph_.tensors[t], shapes_[t]) / static_cast<uint64_t>(batch);
      r->shape[0] = 1;  // choose_batch_tile checked that dim 0 is the batch
      if (r->data && !tile_inside_[t]) r->data = static_cast<uint8_t*>(r->data) + b * image_bytes;
    };
    VITRT_RETURN_IF_ERROR(run_steps_viewed(batch_tile_.first, batch_tile_.last, image_ref, args, true));
  }
  return Status::Ok();
}

void Session::choose_batch_trunk(const SessionOptions& options) {
  batch_trunk_ = StepRange{};
  trunk_slots_ = 1;
  trunk_inside_.assign(graph_.tensors.size(), 0);
  if (options.num_threads < 2 || options.max_batch < 2) return;
  // Every per-image step from the first, whatever its sizes; it must hold the batch tile.
  BatchTileLimits any;
  any.min_image_bytes = 0;
  any.max_weight_bytes = UINT64_MAX;
  const StepRange trunk =
      choose_batch_tile(graph_, max_shapes_, options.max_batch, any, backend_->alignment());
  if (trunk.last < trunk.first || (batch_tile_.last >= batch_tile_.first && trunk.last < batch_tile_.last))
    return;
  for (int s = trunk.first; s <= trunk.last; ++s)
    if (!steps_[s].reentrant) return;
  // Slot t of an interior tensor starts t slots in, and image i of a slot i images in: both must keep the
  // alignment, as the boundary slices do (choose_batch_tile).
  const std::vector<Lifetime> life = compute_lifetimes(graph_);
  const uint64_t alignment = std::max<uint64_t>(backend_->alignment(), 1);
  std::vector<int8_t> inside(graph_.tensors.size(), 0);
  for (size_t t = 0; t < inside.size(); ++t) {
    if (graph_.tensors[t].is_constant || !lives_inside(life[t], trunk)) continue;
    if (tensor_bytes(graph_.tensors[t], max_shapes_[t]) / static_cast<uint64_t>(options.max_batch) %
        alignment)
      return;
    inside[t] = 1;
  }
  batch_trunk_ = trunk;
  trunk_slots_ = static_cast<int>(std::min<int64_t>(options.num_threads, options.max_batch));
  trunk_images_ = (options.max_batch + trunk_slots_ - 1) / trunk_slots_;
  trunk_inside_ = std::move(inside);
}

// Thread `slot`'s images [first, end): each image through the batch tile's steps, then all of them through
// the rest of the trunk at once. Tensor t's view: constants whole; the batch tile's interior tensors at the
// slot's one image; the trunk's other interior tensors at the slot's images (image i of them i images in);
// the trunk's boundary tensors at the images' own slices.
Status Session::run_trunk_slot(int64_t batch, int64_t first, int64_t end, int slot, const KernelArgs& args) {
  KernelArgs a = args;
  // Steps [first_step, last_step] on images [b, b + n).
  auto run_images = [&](int first_step, int last_step, int64_t b, int64_t n) {
    auto view = [&](int32_t t, TensorRef* r) {
      *r = refs_[t];
      if (graph_.tensors[t].is_constant) return;
      const uint64_t image_bytes = tensor_bytes(graph_.tensors[t], shapes_[t]) / static_cast<uint64_t>(batch);
      r->shape[0] = n;  // choose_batch_tile checked that dim 0 is the batch
      if (!r->data) return;
      uint8_t* data = static_cast<uint8_t*>(r->data);
      if (trunk_inside_[t])
        r->data = data + static_cast<uint64_t>(slot) * trunk_slot_bytes_ +
                  (tile_inside_[t] ? 0 : static_cast<uint64_t>(b - first) * image_bytes);
      else
        r->data = data + static_cast<uint64_t>(b) * image_bytes;
    };
    return run_steps_viewed(first_step, last_step, view, &a, slot == 0);
  };
  int rest = batch_trunk_.first;
  if (batch_tile_.last >= batch_tile_.first) {
    for (int64_t b = first; b < end; ++b)
      VITRT_RETURN_IF_ERROR(run_images(batch_tile_.first, batch_tile_.last, b, 1));
    rest = batch_tile_.last + 1;
  }
  return run_images(rest, batch_trunk_.last, first, end - first);
}

// Thread t runs images [t x batch / slots, (t + 1) x batch / slots) through the whole trunk at one thread, in
// its own slot: each image's tensors stay in the caches of the core that made them and no barrier separates
// the steps. (Two threads sharing every step, as the other steps run, move about half of each step's input
// from the other core: MobileNetV3-L's 112² and 56² steps at batch 8 ran no faster on two threads than on
// one.)
Status Session::run_batch_trunk(int64_t batch, KernelArgs* args) {
  const int slots = static_cast<int>(std::min<int64_t>(trunk_slots_, batch));
  return run_slots(slots, *args, [&](int t, const KernelArgs& a) {
    return run_trunk_slot(batch, batch * t / slots, batch * (t + 1) / slots, t, a);
  });
}

int64_t Session::row_count(const RowTile& tile) const {
  const Shape& shape = shapes_[graph_.nodes[tile.steps.first].outputs[0]];
  return shape.numel() / shape.dim(-1);
}

// Block [r0, r0 + n) of rows: crossing activations seen at their rows r0.. (the slice keeps the alignment:
// choose_row_tiles), inside ones at the slot's rows (every block of a thread reuses its slot's bytes, which
// the placement sized to slots x one block), constants whole.
Status Session::run_row_blocks(const RowTile& tile, int64_t first, int64_t end, int slot,
                               const KernelArgs& args) {
  KernelArgs a = args;
  const int64_t rows = row_count(tile);
  auto block_ref = [&](int32_t t, int64_t r0, int64_t n, TensorRef* r) {
    *r = refs_[t];
    if (graph_.tensors[t].is_constant) return;
    r->shape = row_block_shape(shapes_[t], n);
    const uint64_t row_bytes =
        static_cast<uint64_t>(shapes_[t].dim(-1)) * dtype_size(graph_.tensors[t].dtype);
    const int64_t row = row_inside_[t] ? slot * tile.block_rows : r0;
    if (r->data) r->data = static_cast<uint8_t*>(r->data) + static_cast<uint64_t>(row) * row_bytes;
  };
  for (int64_t b = first; b < end; ++b) {
    const int64_t r0 = b * tile.block_rows, n = std::min(tile.block_rows, rows - r0);
    auto view = [&](int32_t t, TensorRef* r) { block_ref(t, r0, n, r); };
    VITRT_RETURN_IF_ERROR(run_steps_viewed(tile.steps.first, tile.steps.last, view, &a, slot == 0));
  }
  return Status::Ok();
}

Status Session::run_row_tile(const RowTile& tile, KernelArgs* args) {
  const int64_t blocks = (row_count(tile) + tile.block_rows - 1) / tile.block_rows;
  // At a batch below the maximum there may be fewer blocks than slots: then fewer threads, each with a block.
  const int slots = static_cast<int>(std::min<int64_t>(tile.slots, blocks));
  if (slots <= 1) return run_row_blocks(tile, 0, blocks, 0, *args);
  // Thread t: blocks [t x blocks / slots, (t + 1) x blocks / slots).
  return run_slots(slots, *args, [&](int t, const KernelArgs& a) {
    return run_row_blocks(tile, blocks * t / slots, blocks * (t + 1) / slots, t, a);
  });
}

}  // namespace vitrt
