// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "loader/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vitrt {

Status MappedFile::open(const std::string& path, std::shared_ptr<MappedFile>* out) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below as not a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return io_error("cannot stat '" + path + "': " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return io_error("'" + path + "' is " + what + ", not a model file");
  }
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ > 0) {
    void* p = mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return io_error("cannot mmap '" + path + "': " + std::strerror(e));
    }
    f->data_ = static_cast<const uint8_t*>(p);
    f->owned_ = true;
  }
  ::close(fd);
  *out = std::move(f);
  return Status::Ok();
}

std::shared_ptr<MappedFile> MappedFile::borrow(const void* data, size_t size) {
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->data_ = static_cast<const uint8_t*>(data);
  f->size_ = size;
  return f;
}

void MappedFile::drop_pages(const void* data, size_t size) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (page == 0 || page > (uintptr_t{1} << 30) || size == 0) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data), end = begin + size;
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (end < begin || last <= first) return;
  madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (owned_ && data_) munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace vitrt
