// The real vsphere-csi-driver binary in node mode, as a child of this test process (so inside
// its private mount namespace): start-up errors from the environment, NodeGetInfo from the Node
// object in the API emulator, and a stage/publish/unpublish/unstage of a loop device through it.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "integration/csi/node_env.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

using ::ccm::integration::ChildProcess;
using ::testing::HasSubstr;

std::vector<std::string> Driver(const std::vector<std::string>& env,
                                const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {"/usr/bin/env", "-i"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(CSI_DRIVER_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

nlohmann::json FeatureStates(const std::string& high_pv_node_density) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", "internal-feature-states.csi.vsphere.vmware.com"},
            {"namespace", "vmware-system-csi"}}},
          {"data",
           {{"trigger-csi-fullsync", "false"},
            {"pv-to-backingdiskobjectid-mapping", "false"},
            {"high-pv-node-density", high_pv_node_density}}}};
}

class NodeBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = NodeEnv::Start();  // for its directories and disks; its own server is unused
    ASSERT_TRUE(env.ok()) << env.status();
    env_ = std::move(*env);
    sock_ = env_->dir() + "/driver.sock";
  }
  std::unique_ptr<NodeEnv> env_;
  std::string sock_;
};

TEST_F(NodeBinaryTest, StartUpErrorsNameTheVariable) {
  struct Case {
    std::vector<std::string> env;
    std::string message;
  } cases[] = {
      {{"X_CSI_MODE=node", "CSI_ENDPOINT=unix://" + sock_}, "NODE_NAME is not set"},
      {{"X_CSI_MODE=node", "CSI_ENDPOINT=unix://" + sock_, "NODE_NAME=n", "CSI_DEVICE_WAIT=soon"},
       "CSI_DEVICE_WAIT=\"soon\""},
      {{"X_CSI_MODE=node", "CSI_ENDPOINT=unix://" + sock_, "NODE_NAME=n",
        "MAX_VOLUMES_PER_NODE=300"},
       "300"},
  };
  for (const Case& c : cases) {
    auto p = ChildProcess::Start(Driver(c.env), env_->dir() + "/driver");
    ASSERT_TRUE(p.ok()) << p.status();
    std::optional<int> code = (*p)->WaitExit(absl::Seconds(20));
    ASSERT_TRUE(code.has_value()) << c.message;
    EXPECT_EQ(*code, 1) << (*p)->Stderr();
    EXPECT_THAT((*p)->Stderr(), HasSubstr(c.message));
  }
}

TEST_F(NodeBinaryTest, ServesTheNodeServiceFromTheEnvironment) {
  ccm::testing::KubeEmulator emu;
  ASSERT_TRUE(emu.Start().ok());
  const std::string kubeconfig = env_->dir() + "/kubeconfig";
  ASSERT_TRUE(emu.WriteKubeconfig(kubeconfig).ok());
  ASSERT_TRUE(
      emu.Create("nodes",
                 {{"apiVersion", "v1"},
                  {"kind", "Node"},
                  {"metadata", {{"name", "worker-1"}}},
                  {"spec", {{"providerID", "vsphere://4237AAAA-BBBB-CCCC-DDDD-EEEEFFFF0000"}}}})
          .ok());
  ASSERT_TRUE(emu.Create("namespaces", {{"apiVersion", "v1"},
                                        {"kind", "Namespace"},
                                        {"metadata", {{"name", "vmware-system-csi"}}}})
                  .ok());
  auto made = emu.Create("configmaps", FeatureStates("false"));
  ASSERT_TRUE(made.ok()) << made.status();
  // The reference's DaemonSet: --fss-name and --fss-namespace=$(CSI_NAMESPACE), no
  // MAX_VOLUMES_PER_NODE.
  auto p = ChildProcess::Start(
      Driver({"X_CSI_MODE=node", "CSI_ENDPOINT=unix://" + sock_, "NODE_NAME=worker-1",
              "KUBECONFIG=" + kubeconfig, "CSI_NAMESPACE=vmware-system-csi",
              "CSI_DEVICE_BY_ID_DIR=" + env_->by_id_dir(), "CSI_DEVICE_WAIT=5s",
              "VSPHERE_CSI_CONFIG=" + env_->dir() + "/no-csi-vsphere.conf"},
             {"--fss-name=internal-feature-states.csi.vsphere.vmware.com",
              "--fss-namespace=vmware-system-csi"}),
      env_->dir() + "/driver");
  ASSERT_TRUE(p.ok()) << p.status();
  auto node = ::csi::v1::Node::NewStub(UnixChannel(sock_));
  ::csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    grpc::ClientContext ctx;
    return node->NodeGetInfo(&ctx, {}, &info).ok();
  })) << (*p)->Stderr();
  EXPECT_EQ(info.node_id(), "4237aaaa-bbbb-cccc-dddd-eeeeffff0000");
  EXPECT_EQ(info.max_volumes_per_node(), 59);
  EXPECT_FALSE(info.has_accessible_topology());
  // high-pv-node-density turned on in the ConfigMap: 255, without a restart.
  ASSERT_TRUE(emu.Put("configmaps", FeatureStates("true")).ok());
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    grpc::ClientContext ctx;
    return node->NodeGetInfo(&ctx, {}, &info).ok() && info.max_volumes_per_node() == 255;
  })) << (*p)->Stderr();
  EXPECT_THAT((*p)->Stderr(), HasSubstr("high-pv-node-density: off -> on"));

  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  const std::string target = env_->NewTargetPath();
  {
    grpc::ClientContext ctx;
    ::csi::v1::NodeStageVolumeResponse r;
    grpc::Status s =
        node->NodeStageVolume(&ctx, StageReq("v", disk->uuid, staging, NodeMountCap("xfs")), &r);
    ASSERT_TRUE(s.ok()) << s.error_message() << (*p)->Stderr();
  }
  {
    grpc::ClientContext ctx;
    ::csi::v1::NodePublishVolumeResponse r;
    grpc::Status s = node->NodePublishVolume(
        &ctx, PublishReq("v", disk->uuid, staging, target, NodeMountCap("xfs")), &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // The driver's mounts are in this process's namespace: the test writes through them.
  ASSERT_TRUE(WriteFile(target + "/hello", "from the test").ok());
  auto back = ReadFile(staging + "/hello");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, "from the test");
  {
    grpc::ClientContext ctx;
    ::csi::v1::NodeUnpublishVolumeResponse r;
    ASSERT_TRUE(node->NodeUnpublishVolume(&ctx, UnpublishReq("v", target), &r).ok());
  }
  {
    grpc::ClientContext ctx;
    ::csi::v1::NodeUnstageVolumeResponse r;
    ASSERT_TRUE(node->NodeUnstageVolume(&ctx, UnstageReq("v", staging), &r).ok());
  }
  EXPECT_TRUE(MountsUnder(env_->dir()).empty());
  node.reset();
  // Issue 43: the API server hangs (the feature-state watch is held); SIGTERM still ends the
  // plugin within 5 s.
  emu.InjectDelay({.delay = absl::InfiniteDuration()});
  (*p)->Signal(SIGTERM);
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(5));
  emu.ClearFaults();
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << (*p)->Stderr();
  EXPECT_EQ(*code, 0) << (*p)->Stderr();
}

}  // namespace
}  // namespace ccm::csi::testing
