// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A session: one model planned for one backend and a maximum batch. Creation does all the work (shape
// inference at the maximum batch, kernel creation and weight packing, liveness, arena offsets, one allocation
// per arena); `run` only binds pointers and calls kernels, and performs no heap allocation.
// A session must be used by one thread at a time; any number of sessions may share one Model.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "loader/model_loader.h"
#include "memory/arena.h"
#include "memory/arena_guard.h"
#include "memory/liveness.h"
#include "memory/placement.h"
#include "planner/pass_manager.h"
#include "runtime/batch_tile.h"
#include "runtime/row_tile.h"

namespace vitrt {

struct SessionOptions {
  std::string backend = "auto";  // auto | cpu | ref | cuda
  int num_threads = 1;
  int64_t max_batch = 1;
  bool preserve_intermediates = false;  // no arena reuse: every tensor survives the run (for dumps)
  bool poison_activations = false;      // fill the activation arena with NaN before each run (tests)
  int opt_level = 1;                    // 0: run the model's graph as written; 1: run the planner passes
  // fp32, or bf16: GEMM operands rounded to bf16 with fp32 sums where the backend has such kernels (else
  // fp32); precision_report() says what runs. docs/architecture.md lists the ops per precision.
  Precision precision = Precision::kFp32;
  std::string disabled_passes;  // comma-separated pass names to skip (see planner/pass_manager.h)
  bool allow_inplace = true;    // let elementwise kernels write over their single-use input
  // Which leading steps run image by image at batch > 1 (runtime/batch_tile.h); VITRT_BATCH_TILE_KIB, when
  // set and these are the defaults, replaces min_image_bytes (0: no tile).
  BatchTileLimits batch_tile;
  // Which row-wise step chains run block of rows by block of rows (runtime/row_tile.h); VITRT_ROW_TILE_KIB
  // (0: none) and VITRT_ROW_BLOCK_KIB, when set and these are the defaults, replace the two limits.
  RowTileLimits row_tile;
  // Tests: a guard zone after every activation block and a fingerprint of every tensor, checked around every
  // step (memory/arena_guard.h); run() then fails naming the step that wrote where it must not. Slow.
  bool guard_arena = false;
  // Accumulates each step's wall time across runs (step_seconds()); two clock reads per step, no allocation.
  bool profile = false;
  // The most memory the session may plan (activation, workspace and persistent arenas together); 0 means this
  // machine's physical memory. A model needing more is refused at creation, naming its largest tensor.
  uint64_t max_memory_bytes = 0;
  // Overrides `backend` with a caller-made backend (embedders' own backends; tests' faulty kernels).
  std::function<std::unique_ptr<Backend>()> backend_factory;
};

struct MemoryReport {
  uint64_t weight_bytes = 0;      // mapped from the file (zero-copy)
  uint64_t activation_bytes = 0;  // activation arena (peak of the plan)
  uint64_t activation_lower_bound = 0;
  uint64_t workspace_bytes = 0;
  uint64_t persistent_bytes = 0;  // constants folded at plan time
  uint64_t resident_bytes = 0;    // the session's copies of file-mapped constants read at run time (§6.3)
};

class Session {
 public:
  static Status create(std::shared_ptr<const Model> model, const SessionOptions& options,
                       std::unique_ptr<Session>* out);
  ~Session();

  // input: float32 NCHW [batch, C, H, W], already preprocessed; output: float32 [batch, ...output shape].
  // 1 <= batch <= max_batch. output_capacity is in floats.
  Status run(const float* input, int64_t batch, float* output, size_t output_capacity);

  const Model& model() const { return *model_; }
  // The graph this session runs: the model's graph after the planner passes.
  const Graph& graph() const { return graph_; }
  const std::vector<PassReport>& pass_report() const { return pass_report_; }
  // Tensors whose memory is shared with an earlier tensor by an in-place kernel (index -> that tensor), -1
  // else.
  int32_t inplace_of(int32_t tensor) const { return alias_of_[tensor]; }
  const SessionOptions& options() const { return options_; }
  const char* backend_name() const { return backend_->name(); }
  // What the session computes in: the backend's report ("fp32", "bf16: ..."), with why bf16 is not used
  // when it was asked for and the backend has no bf16 kernels.
  const std::string& precision_report() const { return precision_report_; }
  Shape input_shape(int64_t batch) const;   // [batch,C,H,W]
  Shape output_shape(int64_t batch) const;  // e.g. [batch, classes]
  const std::vector<TensorPlacement>& placements() const { return placements_; }
  const MemoryReport& memory() const { return memory_; }
  // With options.profile: seconds spent in each step (indexed like graph().nodes) over profiled_runs() runs.
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  int64_t profiled_runs() const { return profiled_runs_; }
  void reset_profile();
  // The steps run image by image at batch > 1 (none: last < first).
  const StepRange& batch_tile() const { return batch_tile_; }
  // The steps whose images the threads run side by side at batch > 1, each thread its own images (the batch
  // tile's image by image first, the rest at the thread's images), and how many threads
  // (runtime/batch_tile.h); none (last < first) and 1 unless the plan chose one.
  const StepRange& batch_trunk() const { return batch_trunk_; }
  int batch_trunk_slots() const { return trunk_slots_; }
  // The step chains run block of rows by block of rows, in step order (at every batch).
  const std::vector<RowTile>& row_tiles() const { return row_tiles_; }
  // After run: the data and shape of any tensor still in memory (all of them with preserve_intermediates).
  const float* tensor_data(int32_t index) const;
  const Shape& tensor_shape(int32_t index) const { return shapes_[index]; }

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    int32_t src[kMaxOpInputs];
    int num_src = 0;
    int32_t dst[kMaxOpOutputs];
    int num_dst = 0;
    uint64_t workspace_bytes = 0;  // KernelInfo's
    bool reentrant = false;        // KernelInfo's
    bool fixed_rows = false;       // KernelInfo's
  };

  Session() = default;
  // Creation: plan() runs the steps below once, in this order.
  Status plan(const SessionOptions& options);
  Status make_backend(const SessionOptions& options);
  Status run_planner(const SessionOptions& options);  // graph_ after the passes, max_shapes_
  void give_back_copied_constants(const Node& node, uint64_t copied_srcs,
                                  std::vector<uint8_t>* read_at_run) const;
  // The bytes make_constants_resident will copy (64-byte aligned each), and their offsets in resident_.
  uint64_t plan_resident_constants(const std::vector<uint8_t>& read_at_run);
  // Copies them and gives their file pages back (Backend::keeps_constants_resident).
  Status make_constants_resident();
  Status create_kernels(const SessionOptions& options, std::vector<NodeMemoryTraits>* traits,
                        uint64_t* workspace_bytes);
  Status check_memory_limit(const MemoryPlan& plan, uint64_t workspace_bytes,
                            const SessionOptions& options) const;
  Status allocate_arenas(const MemoryPlan& plan, uint64_t workspace_bytes);
  void init_guard(const MemoryPlan& plan, uint64_t padding);
  void point_at_storage(MemoryPlan plan);
  // Shapes and tensor references for `batch` (<= the planned maximum); also called by run.
  Status bind_batch(int64_t batch);
  // Steps [first, last], each operand tensor t seen through view(t, &ref) (a tile's slice of it); timed
  // (profile) when `timed`.
  template <class View>
  Status run_steps_viewed(int first, int last, const View& view, KernelArgs* a, bool timed);
  // fn(t, args of thread t) on `slots` threads, each call's kernels at one thread with its own share of the
  // workspace (slot_workspace_bytes_); the first failing slot's status.
  template <class Fn>
  Status run_slots(int slots, const KernelArgs& args, const Fn& fn);
  // Steps batch_tile_ once per image of a `batch` > 1 (runtime/batch_tile.h).
  Status run_batch_tile(int64_t batch, KernelArgs* args);
  // The batch trunk's threads, each on images [first, end) of `batch`, its own slot of the trunk's interior
  // tensors and its own share of the workspace (run_trunk_slot).
  Status run_batch_trunk(int64_t batch, KernelArgs* args);
  Status run_trunk_slot(int64_t batch, int64_t first, int64_t end, int slot, const KernelArgs& args);
  // The batch trunk (none when it would not pay or cannot run: fewer than two threads, a kernel that is not
  // reentrant, an interior slice off the alignment) into batch_trunk_, trunk_slots_, trunk_inside_.
  void choose_batch_trunk(const SessionOptions& options);
  // Row tile `tile`'s steps once per block of rows (runtime/row_tile.h), its blocks on tile.slots threads.
  Status run_row_tile(const RowTile& tile, KernelArgs* args);
  // Blocks [first, end) of `tile` in turn, with the inside tensors' slot `slot`.
  Status run_row_blocks(const RowTile& tile, int64_t first, int64_t end, int slot, const KernelArgs& args);
  // Sets each row tile's slots and the per-thread workspace; returns the workspace the session needs.
  uint64_t assign_row_slots(const SessionOptions& options, uint64_t workspace_bytes);
  // The rows (element count / last dim) of every activation of `tile` at the bound batch.
  int64_t row_count(const RowTile& tile) const;
  // The shapes placement plans: each row tile's inside tensors at one block's rows.
  std::vector<Shape> placement_shapes() const;
  // Step s's kernel on `args`, timed with options_.profile and `timed` (a row tile's other threads are not:
  // the first one's time is the step's share of the tile's wall time).
  Status run_step(size_t s, const KernelArgs& args, bool timed = true);

  std::shared_ptr<const Model> model_;
  Graph graph_;
  std::vector<PassReport> pass_report_;
  std::vector<int32_t> alias_of_;
  SessionOptions options_;
  std::unique_ptr<Backend> backend_;
  std::string precision_report_;
  std::vector<Step> steps_;
  std::vector<TensorPlacement> placements_;
  std::vector<Shape> max_shapes_;
  std::vector<Shape> shapes_;  // for the bound batch
  std::vector<TensorRef> refs_;
  int64_t bound_batch_ = 0;
  Arena activations_;
  Arena workspace_;
  Arena resident_;                         // copies of file-mapped constants read at run time
  std::vector<uint64_t> resident_offset_;  // per tensor: its copy's offset in resident_, or kNotResident
  MemoryReport memory_;
  ArenaGuard guard_;  // only with options_.guard_arena
  std::vector<double> step_seconds_;
  int64_t profiled_runs_ = 0;
  StepRange batch_tile_;             // none (last < first) unless the plan chose one
  std::vector<int8_t> tile_inside_;  // per tensor: 1 for the tile's interior activations (lives_inside)
  StepRange batch_trunk_;            // none unless trunk_slots_ > 1
  int trunk_slots_ = 1;              // threads running the trunk's images side by side
  int64_t trunk_images_ = 1;         // the most images one trunk thread runs: max_batch / threads, rounded up
  uint64_t trunk_slot_bytes_ = 0;    // MemoryPlan::trunk_slot_bytes
  std::vector<int8_t> trunk_inside_;  // per tensor: 1 for the trunk's interior activations
  std::vector<RowTile> row_tiles_;
  std::vector<int8_t> row_inside_;     // per tensor: 1 for the activations living inside a row tile
  uint64_t slot_workspace_bytes_ = 0;  // each row-tile thread's share of the workspace
  std::vector<Status> slot_status_;    // each row-tile thread's result
};

}  // namespace vitrt
