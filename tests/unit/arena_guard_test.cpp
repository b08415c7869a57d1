// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The arena guard test mode (SessionOptions::guard_arena): correct kernels pass on every backend, and kernels that
// write past their output or into a live input are caught at the step that does it, by name.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

std::shared_ptr<const Model> guarded_model() {
  static std::vector<uint8_t> bytes;
  static uint8_t* aligned = nullptr;
  if (!aligned) {
    REQUIRE(write_model_memory(test::tiny_classifier(), &bytes).ok());
    aligned = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64));
    std::memcpy(aligned, bytes.data(), bytes.size());
  }
  std::shared_ptr<const Model> m;
  REQUIRE(load_model_from_memory(aligned, bytes.size(), &m).ok());
  return m;
}

enum class Fault { kNone, kPastEnd, kIntoInput };

// Runs the reference kernel, then misbehaves.
class FaultyKernel final : public Kernel {
 public:
  FaultyKernel(std::unique_ptr<Kernel> inner, Fault fault) : inner_(std::move(inner)), fault_(fault) {}
  Status run(const KernelArgs& args) override {
    VITRT_RETURN_IF_ERROR(inner_->run(args));
    if (fault_ == Fault::kPastEnd) args.dst[0]->f32()[args.dst[0]->numel()] = 42.0f;  // one float too many
    if (fault_ == Fault::kIntoInput) static_cast<float*>(args.src[0]->data)[1] += 1.0f;  // writes its input
    return Status::Ok();
  }

 private:
  std::unique_ptr<Kernel> inner_;
  Fault fault_;
};

// The reference backend, with one faulty kernel for the node named `target`.
class FaultyBackend final : public Backend {
 public:
  FaultyBackend(std::string target, Fault fault)
      : ref_(create_reference_backend()), target_(std::move(target)), fault_(fault) {}
  const char* name() const override { return "faulty"; }
  OpImpl op_impl(OpType type) const override { return ref_->op_impl(type); }
  bool supports(const Node& node) const override { return ref_->supports(node); }
  Status create_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) override {
    VITRT_RETURN_IF_ERROR(ref_->create_kernel(plan, kernel, info));
    if (plan.node->name == target_) {
      *kernel = std::make_unique<FaultyKernel>(std::move(*kernel), fault_);
      info->may_inplace = false;
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<Backend> ref_;
  std::string target_;
  Fault fault_;
};

Status run_guarded(SessionOptions o, int batch, std::vector<float>* y) {
  o.guard_arena = true;
  o.max_batch = 4;
  std::unique_ptr<Session> s;
  VITRT_RETURN_IF_ERROR(Session::create(guarded_model(), o, &s));
  const auto x = test::pseudo_random(static_cast<size_t>(batch) * 192, 17, 1.0f);
  y->assign(static_cast<size_t>(batch) * 5, NAN);
  for (int rep = 0; rep < 2; ++rep) VITRT_RETURN_IF_ERROR(s->run(x.data(), batch, y->data(), y->size()));
  return Status::Ok();
}

}  // namespace

TEST_CASE("arena guard: correct kernels pass on every backend, at every batch, with the same logits") {
  for (const char* backend : {"ref", "cpu"}) {
    for (int batch : {1, 3, 4}) {
      CAPTURE(backend);
      CAPTURE(batch);
      SessionOptions o;
      o.backend = backend;
      o.poison_activations = true;
      std::vector<float> guarded, plain;
      Status st = run_guarded(o, batch, &guarded);
      REQUIRE_MESSAGE(st.ok(), st.message());
      o.max_batch = 4;
      std::unique_ptr<Session> s;
      REQUIRE(Session::create(guarded_model(), o, &s).ok());
      const auto x = test::pseudo_random(static_cast<size_t>(batch) * 192, 17, 1.0f);
      plain.assign(guarded.size(), NAN);
      REQUIRE(s->run(x.data(), batch, plain.data(), plain.size()).ok());
      CHECK(guarded == plain);
    }
  }
}

TEST_CASE("arena guard: a kernel writing past the end of its output is named") {
  for (const char* target : {"qkv", "gelu", "pool"}) {
    CAPTURE(target);
    SessionOptions o;
    const std::string t = target;
    o.backend_factory = [t] { return std::make_unique<FaultyBackend>(t, Fault::kPastEnd); };
    std::vector<float> y;
    Status st = run_guarded(o, 3, &y);
    REQUIRE_FALSE(st.ok());
    MESSAGE(st.message());
    CHECK(st.message().find("wrote past the end of tensor") != std::string::npos);
    CHECK(st.message().find(std::string("'") + target + "'") != std::string::npos);
  }
}

TEST_CASE("arena guard: a kernel writing into a live tensor is caught before that tensor is read again") {
  // "ln" reads "cat", which the residual Add reads again later.
  SessionOptions o;
  o.backend_factory = [] { return std::make_unique<FaultyBackend>("ln", Fault::kIntoInput); };
  std::vector<float> y;
  Status st = run_guarded(o, 2, &y);
  REQUIRE_FALSE(st.ok());
  MESSAGE(st.message());
  CHECK(st.message().find("tensor 'cat'") != std::string::npos);
  CHECK(st.message().find("'residual'") != std::string::npos);
  // Without the guard the same fault goes unnoticed: the run "succeeds" with wrong logits.
  o.max_batch = 4;
  std::unique_ptr<Session> s;
  REQUIRE(Session::create(guarded_model(), o, &s).ok());
  const auto x = test::pseudo_random(2 * 192, 17, 1.0f);
  CHECK(s->run(x.data(), 2, y.data(), y.size()).ok());
}

TEST_CASE("arena guard: no backend from the factory is an error") {
  SessionOptions o;
  o.backend_factory = [] { return std::unique_ptr<Backend>(); };
  std::unique_ptr<Session> s;
  CHECK(Session::create(guarded_model(), o, &s).code() == StatusCode::kInvalidArgument);
}
