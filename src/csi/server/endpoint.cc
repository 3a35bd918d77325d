#include "csi/server/endpoint.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ccm::csi {
namespace {

// sun_path holds 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;

// Whether a process accepts connections on the socket file at `path`.
bool SomeoneListens(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return connected;
}

}  // namespace

absl::StatusOr<Endpoint> ParseEndpoint(absl::string_view endpoint) {
  absl::string_view path = endpoint;
  if (absl::ConsumePrefix(&path, "unix://") || absl::ConsumePrefix(&path, "unix:")) {
    // unix:///abs -> /abs; unix://rel -> rel; unix:/abs -> /abs
  } else if (auto scheme = endpoint.find("://"); scheme != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CSI endpoint \"", endpoint, "\": only unix sockets are supported (unix:///path/csi.sock",
        " or a plain path), not ", endpoint.substr(0, scheme)));
  }
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CSI endpoint \"", endpoint, "\" names no socket path"));
  }
  if (path.size() > kMaxSocketPath) {
    return absl::InvalidArgumentError(
        absl::StrCat("CSI endpoint \"", endpoint, "\": the path is ", path.size(),
                     " bytes, a unix socket path has at most ", kMaxSocketPath));
  }
  return Endpoint{std::string(path), absl::StrCat("unix:", path)};
}

absl::Status RemoveStaleSocket(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("CSI endpoint ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("CSI endpoint ", path, " exists and is not a socket; refusing to remove it"));
  }
  if (SomeoneListens(path)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CSI endpoint ", path, " is in use: another process accepts connections on it"));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove stale CSI socket ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace ccm::csi
