#pragma once
// Reading and writing bytes of a simulated disk's file (the simulator's CNS volumes and
// snapshots are files: test/fixtures/vcsim/src/vcsim/cns_files.go), for tests of their data.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccm::testing {

// -1 when the file cannot be read.
inline int64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

inline absl::Status WriteAt(const std::string& path, int64_t offset, absl::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  ssize_t n = ::pwrite(fd, data.data(), data.size(), offset);
  ::close(fd);
  if (n != static_cast<ssize_t>(data.size())) {
    return absl::InternalError(absl::StrCat("write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// "" when the bytes cannot be read.
inline std::string ReadAt(const std::string& path, int64_t offset, size_t size) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "";
  std::string out(size, '\0');
  ssize_t n = ::pread(fd, out.data(), size, offset);
  ::close(fd);
  return n == static_cast<ssize_t>(size) ? out : "";
}

}  // namespace ccm::testing
