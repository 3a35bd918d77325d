#include "testing/csi_socket.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace ccm::csi::testing {

TempDir::TempDir() {
  char tmpl[] = "/tmp/csi-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::shared_ptr<grpc::Channel> UnixChannel(const std::string& path) {
  // A private subchannel pool: gRPC otherwise shares one subchannel per target across channels,
  // so a fresh channel to a socket that did not exist a moment ago would inherit the old
  // subchannel's reconnect backoff (1 s, 1.6 s, ...) and a test waiting for a server to come up
  // would wait for that backoff instead of the server.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
}

int MakeSocketFile(const std::string& path, bool keep_listening) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    throw std::runtime_error("bind failed: " + path);
  }
  if (keep_listening) {
    listen(fd, 1);
    return fd;
  }
  close(fd);
  return -1;
}

}  // namespace ccm::csi::testing
