#include "csi/server/endpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "testing/csi_socket.h"

namespace ccm::csi {
namespace {

using ::testing::HasSubstr;

struct EndpointCase {
  std::string endpoint;
  std::string want_path;   // empty: an error is expected
  std::string want_error;  // substring of the error
};

TEST(ParseEndpointTest, Table) {
  const std::string long_path = "/" + std::string(120, 'a');
  const EndpointCase cases[] = {
      {"unix:///csi/csi.sock", "/csi/csi.sock", ""},
      {"unix:/csi/csi.sock", "/csi/csi.sock", ""},
      {"unix://csi.sock", "csi.sock", ""},
      {"/var/lib/kubelet/plugins/csi.vsphere.vmware.com/csi.sock",
       "/var/lib/kubelet/plugins/csi.vsphere.vmware.com/csi.sock", ""},
      {"csi.sock", "csi.sock", ""},
      {"tcp://127.0.0.1:10000", "", "only unix sockets are supported"},
      {"tcp://127.0.0.1:10000", "", "not tcp"},
      {"http://x/y", "", "not http"},
      {"unix://", "", "names no socket path"},
      {"", "", "names no socket path"},
      {"unix://" + long_path, "", "at most 107"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.endpoint);
    absl::StatusOr<Endpoint> e = ParseEndpoint(c.endpoint);
    if (c.want_path.empty()) {
      ASSERT_FALSE(e.ok());
      EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(e.status().message()), HasSubstr(c.want_error));
    } else {
      ASSERT_TRUE(e.ok()) << e.status();
      EXPECT_EQ(e->socket_path, c.want_path);
      EXPECT_EQ(e->grpc_address, "unix:" + c.want_path);
    }
  }
}

TEST(RemoveStaleSocketTest, MissingFileIsFine) {
  testing::TempDir dir;
  EXPECT_TRUE(RemoveStaleSocket(dir.File("none.sock")).ok());
}

TEST(RemoveStaleSocketTest, RemovesASocketNobodyListensOn) {
  testing::TempDir dir;
  const std::string path = dir.File("csi.sock");
  testing::MakeSocketFile(path, /*keep_listening=*/false);
  ASSERT_EQ(access(path.c_str(), F_OK), 0);
  ASSERT_TRUE(RemoveStaleSocket(path).ok());
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(RemoveStaleSocketTest, RefusesASocketInUse) {
  testing::TempDir dir;
  const std::string path = dir.File("csi.sock");
  int fd = testing::MakeSocketFile(path, /*keep_listening=*/true);
  absl::Status s = RemoveStaleSocket(path);
  close(fd);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("in use"));
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << "a live socket must not be removed";
}

TEST(RemoveStaleSocketTest, NeverRemovesARegularFileOrDirectory) {
  testing::TempDir dir;
  const std::string file = dir.File("csi.sock");
  std::ofstream(file) << "not a socket";
  absl::Status s = RemoveStaleSocket(file);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a socket"));
  EXPECT_EQ(access(file.c_str(), F_OK), 0);

  const std::string sub = dir.File("subdir");
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  EXPECT_EQ(RemoveStaleSocket(sub).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(access(sub.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace ccm::csi
