// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `model`: model file bytes -> loader -> planner (session on the ref backend, batch 1) -> one
// run. The harness rewrites the file's CRC-32 over the fuzzed bytes before loading (as the writer does), so
// mutations reach the structure behind the checksum instead of all stopping at it; the library has no bypass.
#include <cstring>
#include <memory>
#include <vector>

#include "file_checksum.h"
#include "fuzz_util.h"
#include "loader/model_loader.h"
#include "runtime/session.h"
#include "vitrt_generated.h"

namespace {

// Work per input: a graph whose activations at batch 1 add up to more than this is not run (the fuzzer looks
// for crashes, not for slow but legitimate models). Sessions get the same cap as their memory limit.
constexpr uint64_t kMaxActivationBytes = 256ull << 20;
constexpr uint64_t kMaxOutputFloats = 1u << 24;

// Stores the checksum the loader expects, when the header verifies far enough to locate its field.
void fix_checksum(uint8_t* data, size_t size) {
  if (size < 12 || !vitrt::fb::SizePrefixedModelBufferHasIdentifier(data)) return;
  uint32_t fb_len;
  std::memcpy(&fb_len, data, 4);
  if (fb_len > size - 4) return;
  flatbuffers::Verifier verifier(data, 4 + static_cast<size_t>(fb_len), 64, 1u << 22);
  if (!vitrt::fb::VerifySizePrefixedModelBuffer(verifier)) return;
  const uint8_t* field = vitrt::crc32_field_address(vitrt::fb::GetSizePrefixedModel(data));
  if (!field) return;
  vitrt::FileChecksum crc(static_cast<size_t>(field - data));
  crc.update(data, size);
  const uint32_t value = crc.value();
  std::memcpy(data + (field - data), &value, 4);  // little-endian host, as the format
}

// Sets options.max_memory_bytes where SessionOptions has it (the session's own bound on its plan).
template <typename T>
auto set_memory_limit(T* o, uint64_t bytes, int) -> decltype(o->max_memory_bytes = bytes, void()) {
  o->max_memory_bytes = bytes;
}
template <typename T>
void set_memory_limit(T*, uint64_t, long) {}

// Sum of the activation tensors' sizes at batch 1 as the loader inferred them; false when over the cap.
bool small_enough(const vitrt::Graph& g) {
  uint64_t total = 0;
  for (const auto& t : g.tensors) {
    if (t.is_constant) continue;
    uint64_t n = 4;
    for (int d = 0; d < t.shape.rank; ++d) {
      const int64_t dim = t.shape.dims[d] < 1 ? 1 : t.shape.dims[d];
      if (static_cast<uint64_t>(dim) > kMaxActivationBytes / n) return false;
      n *= static_cast<uint64_t>(dim);
    }
    total += n;
    if (total > kMaxActivationBytes) return false;
  }
  return true;
}

struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The loader needs 64-byte aligned memory (weights are read in place).
  const size_t padded = (size + 63) / 64 * 64 + 64;
  std::unique_ptr<uint8_t, AlignedFree> buf(static_cast<uint8_t*>(std::aligned_alloc(64, padded)));
  if (size) std::memcpy(buf.get(), data, size);
  fix_checksum(buf.get(), size);

  std::shared_ptr<const vitrt::Model> model;
  if (!vitrt::fuzz::step_ok("load", vitrt::load_model_from_memory(buf.get(), size, &model))) return 0;
  if (!small_enough(model->graph)) return 0;

  vitrt::SessionOptions opt;
  opt.backend = "ref";
  opt.max_batch = 1;
  // Both the planned graph and the graph as written: the last byte picks, so each input is deterministic.
  opt.opt_level = (size && (data[size - 1] & 1)) ? 0 : 1;
  set_memory_limit(&opt, kMaxActivationBytes, 0);
  std::unique_ptr<vitrt::Session> session;
  if (!vitrt::fuzz::step_ok("session", vitrt::Session::create(model, opt, &session))) return 0;

  const vitrt::Shape in = session->input_shape(1);
  const vitrt::Shape out = session->output_shape(1);
  const int64_t in_n = in.numel(), out_n = out.numel();
  VITRT_FUZZ_CHECK(in_n > 0 && out_n > 0, "a session was created for an empty input or output");
  if (static_cast<uint64_t>(in_n) > kMaxActivationBytes / 4 ||
      static_cast<uint64_t>(out_n) > kMaxOutputFloats)
    return 0;
  std::vector<float> input(static_cast<size_t>(in_n));
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0f;
  std::vector<float> output(static_cast<size_t>(out_n));
  (void)vitrt::fuzz::step_ok("run", session->run(input.data(), 1, output.data(), output.size()));
  return 0;
}
