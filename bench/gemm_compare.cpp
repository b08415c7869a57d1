// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt_gemm_compare [--threads 1,2] [--repeat R] [--batch 1,8] [--filter TEXT] [--stat min] [--clock cpu]
// [--cold 1|2]:
// the cpu backend's own packed GEMM against oneDNN (the kernels it replaced) on the Linear and Conv2d shapes
// of DeiT-Tiny, SOFT-Tiny, LaViT-Tiny, ViT-B/16 and Swin-T (plus one 784³ product, the shape of SOFT's Newton steps at
// 896²)
// and the convs of ResNet-50, MobileNetV3-L and EfficientNet-B0 (`--filter r50`, `mbv3`, `effb0`), in the
// same process: both kernels are planned from the same one-node graph and run alternately, R times each; one
// line per (shape, batch, threads) with the median (or fastest) milliseconds, GFLOP/s and own/oneDNN speed
// ratio (> 1: ours is faster). --cold 1 evicts the caches before every run (weight and input come from
// memory); --cold 2 then reads the input (a model's layer: its input just written, its weight cold).
// --precision bf16 (Linear shapes; the channels-last bf16 convs are not among the problems) compares the
// session-precision-bf16 kernel on AMX tiles ("own") with the AVX512-BF16 tiles (the "dnnl" columns) where
// the CPU has AMX, and says so and exits where it has no AVX512-BF16.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/onednn/onednn_kernels.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/op_registry.h"

using namespace vitrt;

namespace {

struct Problem {
  const char* model;
  bool conv;
  // Linear: x [items, rows, k] · W[n, k]ᵀ; Conv2d: x [items, cin, h, w], W [cout, cin, kh, kw].
  int64_t rows, k, n;
  int64_t cin, h, w, cout, kh, stride, pad;
  Activation act;
};

Problem linear(const char* model, int64_t rows, int64_t k, int64_t n, Activation act = Activation::kNone) {
  return Problem{model, false, rows, k, n, 0, 0, 0, 0, 0, 0, 0, act};
}
Problem conv(const char* model, int64_t cin, int64_t hw, int64_t cout, int64_t kh, int64_t s, int64_t p,
             Activation act = Activation::kNone) {
  return Problem{model, true, 0, 0, 0, cin, hw, hw, cout, kh, s, p, act};
}

std::vector<Problem> problems() {
  const Activation gelu = Activation::kGeluErf, relu = Activation::kRelu;
  return {
      linear("deit", 197, 192, 576),
      linear("deit", 197, 192, 192),
      linear("deit", 197, 192, 768, gelu),
      linear("deit", 197, 768, 192),
      linear("deit", 1, 192, 1000),
      conv("deit", 3, 224, 192, 16, 16, 0),
      linear("soft", 3136, 64, 64),
      linear("soft", 3136, 64, 256, gelu),
      linear("soft", 3136, 256, 64),
      linear("soft", 784, 128, 128),
      linear("soft", 784, 128, 512, gelu),
      linear("soft", 784, 512, 128),
      linear("soft", 196, 320, 320),
      linear("soft", 196, 320, 1280, gelu),
      linear("soft", 196, 1280, 320),
      linear("soft", 50, 512, 512),
      linear("soft", 50, 512, 2048, gelu),
      linear("soft", 50, 2048, 512),
      conv("soft", 3, 224, 32, 3, 2, 1),
      conv("soft", 32, 112, 32, 3, 1, 1),
      conv("soft", 32, 112, 64, 3, 2, 1),
      conv("soft", 64, 56, 128, 3, 2, 1),
      conv("soft", 128, 28, 320, 3, 2, 1),
      conv("soft", 320, 14, 512, 3, 2, 1),
      linear("lavit", 3136, 64, 512, gelu),
      linear("lavit", 3136, 512, 64),
      linear("lavit", 784, 128, 1024, gelu),
      linear("lavit", 784, 1024, 128),
      linear("lavit", 49, 512, 2048, gelu),
      linear("lavit", 49, 2048, 512),
      conv("lavit", 3, 224, 64, 7, 4, 3),
      conv("lavit", 64, 56, 64, 8, 8, 0),
      conv("lavit", 128, 28, 128, 4, 4, 0),
      conv("lavit", 320, 14, 320, 2, 2, 0),
      conv("lavit", 64, 56, 128, 3, 2, 1),
      linear("soft896", 784, 784, 784),  // a SOFT-896 Newton product
      // torchvision ViT-B/16 at 224² (197 tokens): qkv, proj, fc1 (GELU), fc2.
      linear("vitb", 197, 768, 2304),
      linear("vitb", 197, 768, 768),
      linear("vitb", 197, 768, 3072, gelu),
      linear("vitb", 197, 3072, 768),
      // torchvision Swin-T at 224² (issue 28's ONNX zoo), a selection: the first stage's four Linears on 56²
      // tokens, and some of the later stages' (28², 14², 7²) and of the patch mergings' reductions.
      linear("swin", 3136, 96, 288),
      linear("swin", 3136, 96, 96),
      linear("swin", 3136, 96, 384, gelu),
      linear("swin", 3136, 384, 96),
      linear("swin", 784, 384, 192),
      linear("swin", 784, 192, 576),
      linear("swin", 784, 192, 768, gelu),
      linear("swin", 196, 384, 1152),
      linear("swin", 196, 1536, 384),
      linear("swin", 49, 768, 2304),
      linear("swin", 49, 768, 3072, gelu),
      linear("swin", 49, 3072, 768),
      // torchvision ResNet-50 (issue 28's ONNX zoo): the stem, each stage's 1×1 and 3×3 convs, ReLU fused.
      conv("r50", 3, 224, 64, 7, 2, 3, relu),
      conv("r50", 64, 56, 64, 1, 1, 0, relu),
      conv("r50", 64, 56, 64, 3, 1, 1, relu),
      conv("r50", 64, 56, 256, 1, 1, 0),
      conv("r50", 256, 56, 64, 1, 1, 0, relu),
      conv("r50", 128, 56, 128, 3, 2, 1, relu),
      conv("r50", 128, 28, 128, 3, 1, 1, relu),
      conv("r50", 512, 28, 128, 1, 1, 0, relu),
      conv("r50", 128, 28, 512, 1, 1, 0),
      conv("r50", 256, 14, 256, 3, 1, 1, relu),
      conv("r50", 1024, 14, 256, 1, 1, 0, relu),
      conv("r50", 256, 14, 1024, 1, 1, 0),
      conv("r50", 512, 7, 512, 3, 1, 1, relu),
      conv("r50", 2048, 7, 512, 1, 1, 0, relu),
      conv("r50", 512, 7, 2048, 1, 1, 0),
      conv("r50", 1024, 14, 2048, 1, 2, 0),
      // MobileNetV3-L and EfficientNet-B0's pointwise (1×1) convs: expansions and projections, 112² to 7².
      conv("mbv3", 16, 112, 64, 1, 1, 0, relu),
      conv("mbv3", 64, 56, 24, 1, 1, 0),
      conv("mbv3", 24, 56, 72, 1, 1, 0, relu),
      conv("mbv3", 72, 28, 40, 1, 1, 0),
      conv("mbv3", 40, 28, 120, 1, 1, 0, relu),
      conv("mbv3", 120, 28, 40, 1, 1, 0),
      conv("mbv3", 80, 14, 200, 1, 1, 0),
      conv("mbv3", 200, 14, 80, 1, 1, 0),
      conv("mbv3", 112, 14, 672, 1, 1, 0),
      conv("mbv3", 672, 14, 112, 1, 1, 0),
      conv("mbv3", 160, 7, 960, 1, 1, 0),
      conv("mbv3", 960, 7, 160, 1, 1, 0),
      conv("effb0", 32, 112, 16, 1, 1, 0),
      conv("effb0", 16, 112, 96, 1, 1, 0),
      conv("effb0", 144, 56, 24, 1, 1, 0),
      conv("effb0", 24, 56, 144, 1, 1, 0),
      conv("effb0", 240, 28, 40, 1, 1, 0),
      conv("effb0", 480, 14, 80, 1, 1, 0),
      conv("effb0", 672, 14, 112, 1, 1, 0),
      conv("effb0", 1152, 7, 192, 1, 1, 0),
      conv("effb0", 192, 7, 1152, 1, 1, 0),
      conv("effb0", 320, 7, 1280, 1, 1, 0),
  };
}

struct Buffer {
  explicit Buffer(size_t floats)
      : p(static_cast<float*>(std::aligned_alloc(64, (floats * 4 + 127) / 64 * 64))) {}
  ~Buffer() { std::free(p); }
  float* p;
};

// One planned kernel with its operands.
struct Bench {
  Graph graph;
  KernelPlan plan;
  std::unique_ptr<Kernel> kernel;
  KernelInfo info;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The CPU time of the whole process (all threads), for --clock cpu: on a loaded machine it leaves out the
// time the kernel's threads wait for a core (spin-waits at the kernel's end still count).
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoll(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

// Writes and reads 64 MiB, twice the last-level cache of the machines here, so that the next kernel run
// finds its weight and input in memory, as a model's run does for its layers' weights (ResNet-50: 100 MB).
void evict_caches() {
  static std::vector<float> junk(size_t{16} << 20);
  static volatile float sink = 0;
  float s = 0;
  for (size_t i = 0; i < junk.size(); i += 16) junk[i] += 1.0f;
  for (size_t i = 0; i < junk.size(); i += 16) s += junk[i];
  sink = s;
}

// Reads n floats, so that they are in cache (the input a model's previous layer just wrote).
void warm(const float* p, int64_t n) {
  static volatile float sink = 0;
  float s = 0;
  for (int64_t i = 0; i < n; i += 16) s += p[i];
  sink = s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> threads = {1, 2}, batches = {1, 8};
  int repeat = 20;
  std::string filter;
  bool use_min = false;    // --stat min: the fastest run instead of the median (on a loaded machine)
  bool cpu_clock = false;  // --clock cpu: process CPU time per thread instead of wall time
  int cold = 0;  // --cold 1: evict the caches (write 64 MiB) before every timed run; 2: then read the input
  bool bf16 = false;  // --precision bf16: AMX (own) against AVX512-BF16
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = parse_list(argv[i + 1]);
    if (!std::strcmp(argv[i], "--batch")) batches = parse_list(argv[i + 1]);
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--filter")) filter = argv[i + 1];
    if (!std::strcmp(argv[i], "--stat")) use_min = !std::strcmp(argv[i + 1], "min");
    if (!std::strcmp(argv[i], "--clock")) cpu_clock = !std::strcmp(argv[i + 1], "cpu");
    if (!std::strcmp(argv[i], "--cold")) cold = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--precision")) bf16 = !std::strcmp(argv[i + 1], "bf16");
  }
  auto ctx = std::make_shared<x86::Context>();
  ctx->options = x86_options_from_env();  // VITRT_MAX_ISA, VITRT_GEMM_TILE, ... as in a session
  ctx->isa = x86_effective_isa(ctx->options);
  if (ctx->isa == X86Isa::kNone) {
    std::fprintf(stderr, "vitrt_gemm_compare: no AVX2+FMA\n");
    return 1;
  }
  ctx->simd = ctx->isa == X86Isa::kAvx512 ? x86::simd_table_avx512() : x86::simd_table_avx2();
  // --precision bf16: own = the session's bf16 kernel (AMX where the CPU has it), other = AVX512-BF16.
  auto other_ctx = std::make_shared<x86::Context>();
  other_ctx->options = ctx->options;
  other_ctx->isa = ctx->isa;
  other_ctx->simd = ctx->simd;
  if (bf16) {
    if (ctx->isa != X86Isa::kAvx512 || !x86_has_avx512_bf16()) {
      std::fprintf(stderr, "vitrt_gemm_compare: --precision bf16 needs AVX512-BF16 (and the AVX-512 path)\n");
      return 1;
    }
    ctx->bf16 = other_ctx->bf16 = true;
    ctx->amx = x86::amx_kernels(ctx->options);
    other_ctx->amx = nullptr;
    std::printf(
        "# bf16: own = %s, dnnl columns = AVX512-BF16 tiles\n",
        ctx->amx ? ctx->amx->name : "AVX512-BF16 tiles too (this CPU has no AMX, or VITRT_X86_AMX=0)");
  }
  const std::unique_ptr<x86::AltKernels> dnnl = onednn::create_kernels(ctx->options, ctx->isa);
  if (!dnnl) {
    std::fprintf(stderr, "vitrt_gemm_compare: oneDNN cannot create its CPU engine\n");
    return 1;
  }
  std::printf("%-6s %-34s %5s %2s %9s %9s %8s %8s %6s\n", "model", "shape", "batch", "t", "own_ms", "dnnl_ms",
              "own_gf", "dnnl_gf", "ratio");
  for (const Problem& pb : problems()) {
    for (int64_t items : batches) {
      if (!pb.conv && pb.rows == 1 && items > 1) continue;  // the head: one row per image, shown at batch 1
      char shape[96];
      if (pb.conv)
        std::snprintf(shape, sizeof shape, "conv %lldx%lld^2 ->%lld k%lld s%lld", (long long)pb.cin,
                      (long long)pb.h, (long long)pb.cout, (long long)pb.kh, (long long)pb.stride);
      else
        std::snprintf(shape, sizeof shape, "linear M%lld K%lld N%lld%s", (long long)(pb.rows * items),
                      (long long)pb.k, (long long)pb.n, pb.act == Activation::kNone ? "" : " gelu");
      if (!filter.empty() && (std::string(pb.model) + " " + shape).find(filter) == std::string::npos)
        continue;
      if (bf16 && pb.conv) continue;
      Shape xs, ws, bs, ys;
      OpAttrs attrs;
      double flops;
      if (pb.conv) {
        const int64_t ho = (pb.h + 2 * pb.pad - pb.kh) / pb.stride + 1;
        xs = Shape{items, pb.cin, pb.h, pb.w};
        ws = Shape{pb.cout, pb.cin, pb.kh, pb.kh};
        bs = Shape{pb.cout};
        ys = Shape{items, pb.cout, ho, ho};
        Conv2dAttrs a;
        a.stride_h = a.stride_w = static_cast<int32_t>(pb.stride);
        a.pad_h = a.pad_w = static_cast<int32_t>(pb.pad);
        a.activation = pb.act;
        attrs = a;
        flops = 2.0 * items * pb.cout * ho * ho * pb.cin * pb.kh * pb.kh;
      } else {
        xs = Shape{items, pb.rows, pb.k};
        ws = Shape{pb.n, pb.k};
        bs = Shape{pb.n};
        ys = Shape{items, pb.rows, pb.n};
        attrs = LinearAttrs{pb.act};
        flops = 2.0 * items * pb.rows * pb.k * pb.n;
      }
      std::vector<float> wv(static_cast<size_t>(ws.numel())), bv(static_cast<size_t>(bs.numel()), 0.1f);
      for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
      Buffer x(static_cast<size_t>(xs.numel())), y(static_cast<size_t>(ys.numel()));
      for (int64_t i = 0; i < xs.numel(); ++i) x.p[i] = 0.02f * static_cast<float>(i % 53) - 0.5f;
      for (int64_t t : threads) {
        Bench b[2];  // 0: own, 1: oneDNN
        for (int which = 0; which < 2; ++which) {
          Graph& g = b[which].graph;
          const int32_t xi = g.add_activation("x", xs);
          const int32_t wi = g.add_constant("w", ws, wv);
          const int32_t bi = g.add_constant("b", bs, bv);
          const int32_t yi = g.add_activation("y", ys);
          g.add_node(pb.conv ? OpType::kConv2d : OpType::kLinear, attrs, {xi, wi, bi}, {yi}, "op");
          KernelPlan& p = b[which].plan;
          p.node = &g.nodes.back();
          p.graph = &g;
          p.num_src = 3;
          p.src_tensors[0] = &g.tensors[xi];
          p.src_tensors[1] = &g.tensors[wi];
          p.src_tensors[2] = &g.tensors[bi];
          p.src_shapes[0] = xs;
          p.src_shapes[1] = ws;
          p.src_shapes[2] = bs;
          p.num_dst = 1;
          p.dst_shapes[0] = ys;
          p.num_threads = static_cast<int>(t);
          Status s = which == 0 ? (pb.conv ? x86::create_conv2d_gemm : x86::create_linear_gemm)(
                                      ctx, p, &b[which].kernel, &b[which].info)
                     : bf16    ? x86::create_linear_gemm(other_ctx, p, &b[which].kernel, &b[which].info)
                     : pb.conv ? dnnl->create_conv2d(p, &b[which].kernel, &b[which].info)
                               : dnnl->create_linear(p, &b[which].kernel, &b[which].info);
          if (!s.ok() || !b[which].kernel) {
            std::fprintf(stderr, "%s %s: %s declined\n", pb.model, shape, which ? "oneDNN" : "own");
            return 1;
          }
        }
        double med[2];
        std::vector<double> ms[2];
        for (int r = 0; r < repeat + 3; ++r) {
          for (int which = 0; which < 2; ++which) {
            Buffer ws_buf(b[which].info.workspace_bytes / 4 + 16);
            TensorRef src[3], dst;
            const float* ptrs[3] = {x.p, b[which].graph.tensors[1].f32(), bv.data()};
            const Shape shapes[3] = {xs, ws, bs};
            KernelArgs args;
            for (int i = 0; i < 3; ++i) {
              src[i].data = const_cast<float*>(ptrs[i]);
              src[i].shape = shapes[i];
              args.src[i] = &src[i];
            }
            args.num_src = 3;
            dst.data = y.p;
            dst.shape = ys;
            args.dst[0] = &dst;
            args.num_dst = 1;
            args.workspace = ws_buf.p;
            args.workspace_bytes = b[which].info.workspace_bytes;
            args.num_threads = static_cast<int>(t);
            if (cold) evict_caches();
            if (cold == 2) warm(x.p, xs.numel());
            const double t0 = cpu_clock ? cpu_ms() : now_ms();
            const Status s = b[which].kernel->run(args);
            // CPU time over the threads: the wall time they would take on idle cores
            const double t1 = cpu_clock ? t0 + (cpu_ms() - t0) / static_cast<double>(t) : now_ms();
            if (!s.ok()) {
              std::fprintf(stderr, "%s %s: %s\n", pb.model, shape, s.message().c_str());
              return 1;
            }
            if (r >= 3) ms[which].push_back(t1 - t0);
          }
        }
        for (int which = 0; which < 2; ++which) {
          std::sort(ms[which].begin(), ms[which].end());
          med[which] = use_min ? ms[which].front() : ms[which][ms[which].size() / 2];
        }
        std::printf("%-6s %-34s %5lld %2lld %9.4f %9.4f %8.1f %8.1f %6.2f\n", pb.model, shape,
                    (long long)items, (long long)t, med[0], med[1], flops / (med[0] * 1e6),
                    flops / (med[1] * 1e6), med[1] / med[0]);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
