// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/read_limits.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace vitrt::convert {

Status regular_file_size(const std::string& path, uint64_t* size) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return io_error(std::string("cannot open the file: ") + std::strerror(errno));
  const mode_t m = st.st_mode;
  const char* kind = S_ISDIR(m)    ? "a directory"
                     : S_ISFIFO(m) ? "a FIFO (named pipe)"
                     : S_ISSOCK(m) ? "a socket"
                     : S_ISCHR(m)  ? "a character device"
                     : S_ISBLK(m)  ? "a block device"
                     : S_ISREG(m)  ? nullptr
                                   : "not a regular file";
  if (kind) return bad_input(std::string("the path is ") + kind + ", not a regular file");
  *size = static_cast<uint64_t>(st.st_size);
  return Status::Ok();
}

}  // namespace vitrt::convert
