// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `torch_zip`: checkpoint file bytes -> load_checkpoint (recognised by content: torch.save zip
// with its restricted unpickler, or safetensors). Before writing the file the harness recomputes the CRC-32
// of every stored (uncompressed) zip entry, as torch.save would have written it, so mutations of data.pkl and
// of the storages get past libzip's CRC check and reach the unpickler and the tensor readers.
#include <zlib.h>

#include <cstring>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint_check.h"
#include "fuzz_util.h"

namespace {

uint32_t rd32(const uint8_t* p) {
  return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint16_t rd16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}
void wr32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Best effort: entries the central directory describes consistently get a correct CRC; anything odd is left
// for the reader to reject.
void fix_zip_crcs(std::vector<uint8_t>& z) {
  const size_t n = z.size();
  if (n < 22) return;
  size_t eocd = n - 22;
  const size_t stop = n > 22 + 65535 ? n - 22 - 65535 : 0;
  while (rd32(&z[eocd]) != 0x06054b50u) {
    if (eocd == stop) return;
    --eocd;
  }
  const uint16_t entries = rd16(&z[eocd + 10]);
  size_t cd = rd32(&z[eocd + 16]);
  for (uint16_t e = 0; e < entries; ++e) {
    if (cd > n || n - cd < 46 || rd32(&z[cd]) != 0x02014b50u) return;
    const uint16_t method = rd16(&z[cd + 10]);
    const uint32_t csize = rd32(&z[cd + 20]);
    const size_t local = rd32(&z[cd + 42]);
    const size_t next = cd + 46 + rd16(&z[cd + 28]) + rd16(&z[cd + 30]) + rd16(&z[cd + 32]);
    if (method == 0 && csize != 0xffffffffu && local <= n && n - local >= 30 &&
        rd32(&z[local]) == 0x04034b50u) {
      const size_t begin = local + 30 + rd16(&z[local + 26]) + rd16(&z[local + 28]);
      if (begin <= n && n - begin >= csize) {
        const uint32_t crc = static_cast<uint32_t>(crc32(0, z.data() + begin, csize));
        wr32(&z[cd + 16], crc);
        wr32(&z[local + 14], crc);
      }
    }
    cd = next;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vitrt::fuzz::InputFile file("torch_zip");
  std::vector<uint8_t> bytes(data, data + size);
  fix_zip_crcs(bytes);
  vitrt::convert::Checkpoint ckpt;
  if (vitrt::fuzz::step_ok("load_checkpoint",
                           vitrt::convert::load_checkpoint(file.write(bytes.data(), bytes.size()), &ckpt)))
    vitrt::fuzz::check_checkpoint(ckpt);
  return 0;
}
