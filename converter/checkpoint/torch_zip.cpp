// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/torch_zip.h"

#include <zip.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "checkpoint/container.h"
#include "checkpoint/element_type.h"
#include "checkpoint/read_limits.h"
#include "checkpoint/unpickler.h"

namespace vitrt::convert {
namespace {

struct ZipCloser {
  void operator()(zip_t* z) const {
    if (z) zip_discard(z);
  }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const {
    if (f) zip_fclose(f);
  }
};

class TorchArchive {
 public:
  Status open(const std::string& path, uint64_t file_size) {
    file_size_ = file_size;
    int err = 0;
    zip_.reset(zip_open(path.c_str(), ZIP_RDONLY, &err));
    if (!zip_) {
      zip_error_t e;
      zip_error_init_with_code(&e, err);
      const std::string msg = zip_error_strerror(&e);
      zip_error_fini(&e);
      if (err == ZIP_ER_OPEN || err == ZIP_ER_READ)
        return io_error("cannot read the file (libzip: " + msg + ")");
      return bad_input("damaged or truncated zip archive (libzip: " + msg + ")");
    }
    return find_pickle();
  }

  const std::string& prefix() const { return prefix_; }

  bool has(const std::string& name) const { return zip_name_locate(zip_.get(), name.c_str(), 0) >= 0; }

  // The size an entry declares, once checked against the bytes the archive really has for it: a stored
  // entry's size must equal its compressed size, a deflated one may be at most kMaxDeflateRatio times it, and
  // the compressed bytes must fit in the file. Other methods and encryption are refused (torch.save writes
  // stored entries; PyTorch itself reads nothing but stored and deflated ones).
  Status entry_size(const std::string& name, uint64_t* size) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip_.get(), name.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
      return bad_input("zip entry '" + name + "' is missing");
    if (!(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD))
      return bad_input("zip entry '" + name + "' has no compressed size or method");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      return unsupported("zip entry '" + name + "' is encrypted");
    const std::string sizes =
        std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) + " compressed bytes";
    if (st.comp_size > file_size_)
      return bad_input("zip entry '" + name + "' claims " + std::to_string(st.comp_size) +
                       " compressed bytes, more than the whole " + std::to_string(file_size_) + "-byte file");
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.size != st.comp_size)
        return bad_input("stored (uncompressed) zip entry '" + name + "' claims " + sizes);
    } else if (st.comp_method == ZIP_CM_DEFLATE) {
      if (st.size / kMaxDeflateRatio > st.comp_size)
        return bad_input("deflated zip entry '" + name + "' claims " + sizes + ", more than deflate's " +
                         std::to_string(kMaxDeflateRatio) + ":1 can expand to");
    } else {
      return unsupported("zip entry '" + name + "' uses compression method " +
                         std::to_string(st.comp_method) + "; torch.save archives are stored or deflated");
    }
    *size = st.size;
    return Status::Ok();
  }

  // Reads the first `want` bytes of an entry (its size checked by entry_size first): only as far as the
  // caller needs, so a large entry is never inflated beyond what its tensors use. Reading a whole entry also
  // makes libzip verify its CRC.
  Status read(const std::string& name, uint64_t want, std::vector<uint8_t>* out) {
    uint64_t size = 0;
    VITRT_RETURN_IF_ERROR(entry_size(name, &size));
    if (want > size)
      return bad_input("zip entry '" + name + "' has " + std::to_string(size) + " bytes, fewer than the " +
                       std::to_string(want) + " needed");
    out->resize(static_cast<size_t>(want));
    std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen(zip_.get(), name.c_str(), 0));
    if (!f)
      return bad_input("cannot open zip entry '" + name + "' (libzip: " + zip_strerror(zip_.get()) + ")");
    uint64_t done = 0;
    while (done < want) {
      const zip_int64_t n = zip_fread(f.get(), out->data() + done, want - done);
      if (n < 0)
        return bad_input("zip entry '" + name + "' is damaged (libzip: " + zip_file_strerror(f.get()) + ")");
      if (n == 0) return bad_input("zip entry '" + name + "' is truncated");
      done += static_cast<uint64_t>(n);
    }
    if (want < size) return Status::Ok();
    uint8_t extra;
    const zip_int64_t n = zip_fread(f.get(), &extra, 1);  // reaching the end makes libzip check the CRC
    if (n < 0)
      return bad_input("zip entry '" + name + "' is damaged (libzip: " + zip_file_strerror(f.get()) + ")");
    if (n > 0) return bad_input("zip entry '" + name + "' is longer than its recorded size");
    return Status::Ok();
  }

  // Reads a whole entry of at most `max_size` bytes.
  Status read_all(const std::string& name, uint64_t max_size, std::vector<uint8_t>* out) {
    uint64_t size = 0;
    VITRT_RETURN_IF_ERROR(entry_size(name, &size));
    if (size > max_size)
      return bad_input("zip entry '" + name + "' has " + std::to_string(size) + " bytes, more than the " +
                       std::to_string(max_size) + " allowed");
    return read(name, size, out);
  }

 private:
  Status find_pickle() {
    const zip_int64_t count = zip_get_num_entries(zip_.get(), 0);
    std::string best, listing;
    bool torchscript = false, npy = false;
    for (zip_int64_t i = 0; i < count; ++i) {
      const char* c = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), 0);
      if (!c) continue;
      const std::string n = c;
      if (i < 6) listing += (i ? ", " : "") + n;
      const bool pkl = n == "data.pkl" || (n.size() > 9 && n.compare(n.size() - 9, 9, "/data.pkl") == 0);
      if (pkl && (best.empty() || n.size() < best.size())) best = n;
      torchscript |= n.size() >= 13 && n.compare(n.size() - 13, 13, "constants.pkl") == 0;
      npy |= n.size() >= 4 && n.compare(n.size() - 4, 4, ".npy") == 0;
    }
    if (torchscript)
      return unsupported(
          "this is a TorchScript archive (torch.jit.save), not a torch.save checkpoint; load it "
          "with torch.jit.load and torch.save(model.state_dict(), path)");
    if (best.empty()) {
      if (npy) return bad_input("this is a NumPy .npz archive, not a torch.save checkpoint");
      return bad_input("zip archive without a data.pkl entry, so not a torch.save checkpoint (entries: " +
                       (listing.empty() ? std::string("none") : listing) + ")");
    }
    prefix_ = best.substr(0, best.size() - 8);
    return Status::Ok();
  }

  std::unique_ptr<zip_t, ZipCloser> zip_;
  std::string prefix_;
  uint64_t file_size_ = 0;
};

struct Pending {
  std::string name;
  const pickle::Value* tensor;
  ElementInfo elem;
  StridedView view = {};
  int64_t numel = 0;
};

}  // namespace

Status load_torch_zip(const std::string& path, Checkpoint* out) {
  uint64_t file_size = 0;
  VITRT_RETURN_IF_ERROR(regular_file_size(path, &file_size));
  ExpansionBudget budget(file_size);
  TorchArchive ar;
  VITRT_RETURN_IF_ERROR(ar.open(path, file_size));
  const std::string& pre = ar.prefix();

  if (ar.has(pre + "byteorder")) {
    std::vector<uint8_t> bo;
    VITRT_RETURN_IF_ERROR(ar.read_all(pre + "byteorder", 64, &bo));
    const std::string order(bo.begin(), bo.end());
    if (order != "little")
      return unsupported("the checkpoint was saved on a '" + order +
                         "'-endian machine; only little-endian checkpoints are supported");
  }

  std::vector<uint8_t> pkl;
  uint64_t pkl_size = 0;
  VITRT_RETURN_IF_ERROR(ar.entry_size(pre + "data.pkl", &pkl_size));
  VITRT_RETURN_IF_ERROR(budget.charge(pkl_size, "zip entry '" + pre + "data.pkl'"));
  VITRT_RETURN_IF_ERROR(ar.read_all(pre + "data.pkl", kMaxPickleBytes, &pkl));
  pickle::Arena arena;
  pickle::Value* root = nullptr;
  VITRT_RETURN_IF_ERROR(pickle::unpickle(pkl.data(), pkl.size(), pre + "data.pkl", &arena, &root));
  std::vector<uint8_t>().swap(pkl);

  std::vector<SelectedTensor> selected;
  VITRT_RETURN_IF_ERROR(select_state_dict(root, out, &selected));

  // Group by storage so each storage entry is read once and released before the next.
  std::map<std::string, std::vector<Pending>> by_key;
  for (const auto& s : selected) {
    const pickle::Value* st = s.second->storage;
    ElementInfo elem;
    if (!element_from_torch_storage(st->storage_type, &elem))
      return unsupported(
          "tensor '" + s.first + "' has storage type torch." + st->storage_type +
          ", which the converter cannot read (complex and quantized tensors are not supported)");
    by_key[st->key].push_back({s.first, s.second, elem});
  }
  for (auto& group : by_key) {
    const std::string entry = pre + "data/" + group.first;
    uint64_t bytes = 0;
    Status found = ar.entry_size(entry, &bytes);
    if (!found.ok()) return found.with_context("storage of tensor '" + group.second[0].name + "'");
    // Before anything is allocated: each storage must fit in its entry, each view in its storage, and the
    // float32 values plus the part of the entry the views reach must fit the budget.
    uint64_t need = 0;  // bytes of the entry the views read
    for (Pending& p : group.second) {
      const pickle::Value* st = p.tensor->storage;
      if (static_cast<uint64_t>(st->numel) > bytes / p.elem.size)
        return bad_input("storage '" + entry + "' has " + std::to_string(bytes) + " bytes, fewer than the " +
                         std::to_string(st->numel) + " " + p.elem.name + " elements tensor '" + p.name +
                         "' declares");
      p.view.offset = p.tensor->offset;
      p.view.size = p.tensor->size;
      p.view.stride = p.tensor->stride;
      int64_t end = 0;
      Status s = check_view(p.view, st->numel, &p.numel, &end);
      if (!s.ok()) return s.with_context("tensor '" + p.name + "'");
      need = std::max(need, static_cast<uint64_t>(end) * p.elem.size);
      VITRT_RETURN_IF_ERROR(budget.charge(static_cast<uint64_t>(p.numel) * sizeof(float),
                                          "the float32 values of tensor '" + p.name + "'"));
    }
    VITRT_RETURN_IF_ERROR(budget.charge(need, "storage '" + entry + "'"));
    std::vector<uint8_t> data;
    VITRT_RETURN_IF_ERROR(ar.read(entry, need, &data));
    for (const Pending& p : group.second) {
      CheckpointTensor& t = out->tensors[p.name];
      t.name = p.name;
      t.source_dtype = p.elem.dtype;
      t.source_type = p.elem.name;
      t.shape = p.view.size;
      gather_float32(data.data(), p.elem, p.view, p.numel, &t.values);
    }
  }
  return Status::Ok();
}

}  // namespace vitrt::convert
