// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Session precision bf16 end to end on random-init fixtures: DeiT-Tiny-shaped (tools/reference/
// make_model_cases.py: deit_tiny, 12 layers, and deit_2layer), SOFT-Tiny (make_soft_cases.py: soft_tiny_b2,
// whose LinearAttention runs K1·W in bf16) and LaViT-Tiny (make_lavit_cases.py: lavit_tiny_b2, whose
// ReusedAttention runs Ψ·T in bf16). Where the CPU has AVX512-BF16 the cpu backend's report says bf16 and
// the logits stay within 2e-2 of fp32 relative to the largest logit, with the same argmax, while differing
// from fp32 (the bf16 kernels did run). On deit_2layer and lavit_tiny_b2 the same holds with the AMX kernel
// on its model of the tile instructions (X86Options::amx_model), whose logits must also be nearer the
// AVX512-BF16 run's than that run is to fp32: the first layer's operands are the same bf16 values, summed in
// another order, and each layer's input is rounded to bf16 again, so the two drift apart by rounding flips
// (measured: 0.21% and 0.41% of the largest logit, against 0.88% and 1.08% from fp32). Where bf16 cannot run
// (the AVX2 path, the reference backend, a CPU without AVX512-BF16) the session falls back to fp32, says why,
// and gives fp32's logits bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_backend.h"
#include "checkpoint/checkpoint.h"
#include "common/npy.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

using namespace vitrt;

namespace {

std::string fixture_set(const std::string& set) {
  const char* d = std::getenv("VITRT_FIXTURE_DIR");
  return std::string(d ? d : "fixtures") + "/" + set;
}
std::string case_dir() {
  return fixture_set("model_cases");
}

// checkpoint: a path inside the fixture directory.
std::shared_ptr<const Model> convert_path(const std::string& checkpoint, const std::string& name) {
  convert::Checkpoint ck;
  Status st = convert::load_checkpoint(checkpoint, &ck);
  REQUIRE_MESSAGE(st.ok(), st.message());
  Graph g;
  std::string log;
  st = convert::convert_checkpoint(ck, convert::ConvertOptions(), &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::string path = name + "_bf16_test.vitrt";
  REQUIRE(write_model_file(g, path).ok());
  std::shared_ptr<const Model> m;
  st = load_model(path, &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

std::shared_ptr<const Model> convert_case(const std::string& name, const char* container_file) {
  return convert_path(case_dir() + "/" + name + "/" + container_file, name);
}

struct Run {
  std::vector<float> logits;
  std::string precision;
};

Run run(const std::shared_ptr<const Model>& model, const std::vector<float>& x, int batch,
        const SessionOptions& o) {
  std::unique_ptr<Session> s;
  Status st = Session::create(model, o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const size_t per_image = static_cast<size_t>(s->output_shape(1).numel());
  Run r;
  r.logits.assign(per_image * batch, NAN);
  st = s->run(x.data(), batch, r.logits.data(), r.logits.size());
  REQUIRE_MESSAGE(st.ok(), st.message());
  r.precision = s->precision_report();
  return r;
}

int argmax(const float* v, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return static_cast<int>(best);
}

// A fixture of set `set` (a folder under VITRT_FIXTURE_DIR): the checkpoint and the input, as paths inside
// it.
void check_case(const std::string& set, const std::string& name, const std::string& checkpoint,
                const std::string& input, bool amx_model = false) {
  CAPTURE(name);
  const std::shared_ptr<const Model> model = convert_path(fixture_set(set) + "/" + checkpoint, name);
  std::vector<float> x;
  std::vector<int64_t> xs;
  REQUIRE(read_npy_f32(fixture_set(set) + "/" + input, &x, &xs).ok());
  const int batch = static_cast<int>(xs[0]);

  SessionOptions o;
  o.backend = "cpu";
  o.max_batch = batch;
  o.num_threads = 2;
  o.poison_activations = true;
  const Run fp32 = run(model, x, batch, o);
  CHECK(fp32.precision == "fp32");
  o.precision = Precision::kBf16;
  const Run bf16 = run(model, x, batch, o);
  const size_t classes = fp32.logits.size() / batch;

  // Falls back to fp32, saying why, wherever no bf16 kernel runs: the logits are fp32's exactly.
  auto check_fallback = [&](const Run& r, const std::string& why) {
    CAPTURE(r.precision);
    CHECK(r.precision.rfind("fp32: bf16 was asked for, but ", 0) == 0);
    CHECK(r.precision.find(why) != std::string::npos);
    CHECK(r.logits == fp32.logits);
  };
  if (x86_has_avx512_bf16() && x86_effective_isa(X86Options{}) == X86Isa::kAvx512) {
    CHECK(
        bf16.precision.rfind(
            "bf16: Linear (with a constant weight, on the packed GEMM) and plain SoftmaxAttention's products",
            0) == 0);
    double scale = 0, err = 0;
    for (size_t i = 0; i < fp32.logits.size(); ++i) {
      REQUIRE(std::isfinite(bf16.logits[i]));
      scale = std::max(scale, static_cast<double>(std::fabs(fp32.logits[i])));
      err = std::max(err, static_cast<double>(std::fabs(bf16.logits[i] - fp32.logits[i])));
    }
    MESSAGE(name, ": bf16 vs fp32 max |logit difference| ", err, ", relative to the largest logit ",
            err / scale);
    CHECK(err <= 2e-2 * scale);
    CHECK(err > 0);  // bf16 did run
    for (int b = 0; b < batch; ++b)
      CHECK(argmax(bf16.logits.data() + b * classes, classes) ==
            argmax(fp32.logits.data() + b * classes, classes));
    if (amx_model) {
      o.backend_factory = [] {
        X86Options xo;
        xo.bf16 = true;
        xo.amx_model = true;
        return create_x86_backend(xo);
      };
      x86::gemm_amx_model_faulted(true);
      const Run amx = run(model, x, batch, o);
      o.backend_factory = nullptr;
      CHECK_FALSE(x86::gemm_amx_model_faulted(true));  // no tile use the hardware would refuse, on any thread
      CAPTURE(amx.precision);
      CHECK(amx.precision.find("from 16 rows on amx-bf16 32x32 (model)") != std::string::npos);
      double amx_err = 0, amx_vs_bf16 = 0;
      for (size_t i = 0; i < fp32.logits.size(); ++i) {
        REQUIRE(std::isfinite(amx.logits[i]));
        amx_err = std::max(amx_err, static_cast<double>(std::fabs(amx.logits[i] - fp32.logits[i])));
        amx_vs_bf16 = std::max(amx_vs_bf16, static_cast<double>(std::fabs(amx.logits[i] - bf16.logits[i])));
      }
      MESSAGE(name, ": AMX (model) vs fp32 ", amx_err / scale, ", vs AVX512-BF16 ", amx_vs_bf16 / scale,
              " of the largest logit");
      CHECK(amx_err <= 2e-2 * scale);
      CHECK(amx_vs_bf16 <= 0.75 * err);
      CHECK(amx.logits != bf16.logits);  // the AMX kernel did run
      for (int b = 0; b < batch; ++b)
        CHECK(argmax(amx.logits.data() + b * classes, classes) ==
              argmax(fp32.logits.data() + b * classes, classes));
    }
  } else {
    MESSAGE("bf16 kernels skipped: this CPU has no AVX512-BF16 or the ISA is capped below AVX-512");
    check_fallback(bf16, "");
  }
  // The AVX2 path has no bf16 GEMM.
  o.backend_factory = [] {
    X86Options xo;
    xo.max_isa = X86Isa::kAvx2;
    xo.bf16 = true;
    return create_x86_backend(xo);
  };
  if (x86_detect_isa() >= X86Isa::kAvx2 && x86_effective_isa(X86Options{}) >= X86Isa::kAvx2) {
    o.precision = Precision::kFp32;
    const Run avx2_fp32 = run(model, x, batch, o);
    o.precision = Precision::kBf16;
    const Run avx2_bf16 = run(model, x, batch, o);
    CHECK(avx2_bf16.precision ==
          "fp32: bf16 was asked for, but the ISA in use is avx2 (AVX512-BF16 needs AVX-512)");
    CHECK(avx2_bf16.logits == avx2_fp32.logits);
  }
  // The reference backend has no bf16 kernels at all.
  o.backend_factory = nullptr;
  o.backend = "ref";
  o.num_threads = 1;
  const Run ref_bf16 = run(model, x, batch, o);
  CHECK(ref_bf16.precision == "fp32: bf16 was asked for, but backend 'ref' has no bf16 kernels");
}

}  // namespace

void check_case(const std::string& name, bool amx_model = false) {
  check_case("model_cases", name, name + "/model.pth", name + "/input.npy", amx_model);
}

TEST_CASE("session precision bf16 on DeiT-Tiny: within 2e-2 of fp32, same argmax; fp32 where it cannot run") {
  check_case("deit_2layer", /*amx_model=*/true);
  check_case("deit_tiny");
}

TEST_CASE("session precision bf16 on SOFT-Tiny and LaViT-Tiny: within 2e-2 of fp32, same argmax") {
  check_case("soft_cases", "soft_tiny_b2", "soft_tiny_b2/model.pth", "soft_tiny_b2/input.npy");
  check_case("lavit_cases", "lavit_tiny_b2", "lavit_tiny_theta_edit/model.pth", "lavit_tiny_b2/input.npy",
             /*amx_model=*/true);
}

TEST_CASE("session precision: a value that is neither fp32 nor bf16 is refused, naming it") {
  const std::shared_ptr<const Model> model = convert_case("deit_2layer", "model.pth");
  SessionOptions o;
  o.precision = static_cast<Precision>(7);
  std::unique_ptr<Session> s;
  const Status st = Session::create(model, o, &s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("precision must be fp32 or bf16, got 7") != std::string::npos);
}
