#pragma once
// Test helpers: a private temporary directory for socket files (removed with its contents at
// the end), and a real gRPC client channel to a unix socket.

#include <grpcpp/channel.h>

#include <memory>
#include <string>

namespace ccm::csi::testing {

class TempDir {
 public:
  TempDir();  // /tmp/csi-test-XXXXXX; short, so socket paths stay far below 108 bytes
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A channel of its own (no subchannel shared with earlier channels) to the socket at `path`;
// it connects on first use.
std::shared_ptr<grpc::Channel> UnixChannel(const std::string& path);

// Creates a unix socket file at `path` the way a crashed plugin leaves it: bound, then closed
// without unlinking. With `keep_listening`, the socket stays open and listening (a live plugin)
// until the returned fd is closed; otherwise returns -1.
int MakeSocketFile(const std::string& path, bool keep_listening);

}  // namespace ccm::csi::testing
