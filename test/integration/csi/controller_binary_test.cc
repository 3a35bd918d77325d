// vsphere-csi-driver in controller mode, the real binary against the simulator and the API
// emulator: a CreateVolume whose CNS task outlives the provisioner's deadline and the controller
// itself (killed with SIGKILL while the task runs) makes exactly one volume when retried by the
// restarted controller, which finds the task in its CnsVolumeOperationRequest (issue 20 item 1);
// and every API call the controller makes is granted by the manifest's controller roles.
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <memory>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "csi/proto/csi.grpc.pb.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "integration/csi/syncer_env.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"

namespace ccm::csi::syncer::testing {
namespace {

using ::ccm::integration::ChildProcess;
using ::ccm::testing::Eventually;

constexpr char kNamespace[] = "vmware-system-csi";

// "verb resource" pairs the controller's ClusterRole and its Roles grant.
std::set<std::string> ControllerGrants() {
  std::set<std::string> allowed;
  for (const YAML::Node& d :
       YAML::LoadAllFromFile(CCM_SOURCE_DIR "/manifests/vsphere-csi-driver.yaml")) {
    if (!d.IsMap() || !d["kind"] || !d["metadata"]) continue;
    const std::string kind = d["kind"].as<std::string>();
    const std::string name = d["metadata"]["name"].as<std::string>();
    if (!((kind == "ClusterRole" && name == "vsphere-csi-controller-role") ||
          (kind == "Role" && absl::StartsWith(name, "vsphere-csi-controller-")))) {
      continue;
    }
    for (const auto& rule : d["rules"])
      for (const auto& r : rule["resources"])
        for (const auto& v : rule["verbs"])
          allowed.insert(v.as<std::string>() + " " + r.as<std::string>());
  }
  return allowed;
}

class ControllerBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start(/*start_syncer=*/false).ok());
    const std::string url = env_.vcsim().info().url;  // https://127.0.0.1:PORT/sdk
    const std::string port = url.substr(url.rfind(':') + 1, url.find("/sdk") - url.rfind(':') - 1);
    conf_ = env_.dir() + "/csi-vsphere.conf";
    std::ofstream(conf_) << "[Global]\ncluster-id = \"" << kClusterId << "\"\n\n"
                         << "[VirtualCenter \"127.0.0.1\"]\nport = \"" << port << "\"\n"
                         << "user = \"admin\"\npassword = \"secret\"\n"
                         << "ca-file = \"" << env_.vcsim().info().ca_file << "\"\n";
    // node-1 is a Node the CPI initialised.
    const auto& vm = env_.vcsim().info().vms.front();
    ASSERT_TRUE(env_.emu()
                    .Put("nodes", {{"metadata", {{"name", vm.name}}},
                                   {"spec", {{"providerID", "vsphere://" + vm.uuid}}}})
                    .ok());
    sock_ = env_.dir() + "/csi.sock";
  }

  std::unique_ptr<ChildProcess> StartController(const std::string& name) {
    auto p = ChildProcess::Start(
        {"/usr/bin/env", "-i", "X_CSI_MODE=controller", "CSI_ENDPOINT=unix://" + sock_,
         "VSPHERE_CSI_CONFIG=" + conf_, "KUBECONFIG=" + env_.kubeconfig(),
         std::string("CSI_NAMESPACE=") + kNamespace, CSI_DRIVER_BINARY, "--metrics-port=0",
         "--v=2"},
        env_.dir() + "/" + name);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : nullptr;
  }

  grpc::Status Create(const std::string& name, absl::Duration deadline,
                      ::csi::v1::CreateVolumeResponse* resp) {
    auto stub = ::csi::v1::Controller::NewStub(csi::testing::UnixChannel(sock_));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    ::csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    auto* cap = req.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("ext4");
    cap->mutable_access_mode()->set_mode(
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    req.mutable_capacity_range()->set_required_bytes(int64_t{1} << 30);
    return stub->CreateVolume(&ctx, req, resp);
  }

  int VolumesNamed(const std::string& name) {
    int n = 0;
    for (const auto& v :
         env_.vcsim().CnsVolumes().value_or(std::vector<ccm::testing::VcsimCnsVolume>{}))
      n += v.name == name;
    return n;
  }

  SyncerEnv env_;
  std::string conf_, sock_;
};

TEST_F(ControllerBinaryTest, ACreateKilledWhileItsTaskRunsMakesOneVolumeWhenRetried) {
  ASSERT_TRUE(env_.vcsim().SetCnsDelay("CnsCreateVolume", 3000).ok());
  env_.emu().ResetRequestCounts();
  std::unique_ptr<ChildProcess> first = StartController("controller-1");
  ASSERT_NE(first, nullptr);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s;
  // The provisioner's deadline passes while the CNS task runs (Unavailable while the controller
  // is still loading its caches: then it never started one).
  ASSERT_TRUE(Eventually([&] {
    s = Create("pvc-kill", absl::Milliseconds(1500), &resp);
    return s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  })) << s.error_message()
      << first->Stderr();
  // The task is recorded...
  std::string task;
  ASSERT_TRUE(Eventually([&] {
    auto r = env_.emu().Get("cnsvolumeoperationrequests", kNamespace, "pvc-kill");
    if (!r.ok()) return false;
    task = r->value("/status/latestOperationDetails/0/taskId"_json_pointer, std::string());
    return !task.empty();
  })) << first->Stderr();
  // ...and the controller dies before it ends.
  first->Signal(SIGKILL);
  first->WaitExit(absl::Seconds(10));
  EXPECT_EQ(VolumesNamed("pvc-kill"), 0) << "the task has not ended yet";

  std::unique_ptr<ChildProcess> second = StartController("controller-2");
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(Eventually([&] {
    s = Create("pvc-kill", absl::Seconds(20), &resp);
    return s.ok();
  })) << s.error_message()
      << second->Stderr();
  EXPECT_EQ(VolumesNamed("pvc-kill"), 1) << "a second disk was made";
  EXPECT_TRUE(absl::StrContains(second->Stderr(), "started earlier")) << second->Stderr();
  auto r = env_.emu().Get("cnsvolumeoperationrequests", kNamespace, "pvc-kill");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->value("/status/volumeID"_json_pointer, std::string()), resp.volume().volume_id());
  EXPECT_EQ(r->value("/status/latestOperationDetails/0/taskStatus"_json_pointer, std::string()),
            "Success");
  // The same request again: the volume, no third task.
  ASSERT_TRUE(Create("pvc-kill", absl::Seconds(20), &resp).ok());
  EXPECT_EQ(VolumesNamed("pvc-kill"), 1);

  second->Signal(SIGTERM);
  EXPECT_EQ(second->WaitExit(absl::Seconds(15)), 0) << second->Stderr();
  // Least privilege: every call is granted to vsphere-csi-controller.
  const std::set<std::string> allowed = ControllerGrants();
  for (const auto& [key, count] : env_.emu().RequestCounts()) {
    if (absl::StartsWith(key, "get discovery")) continue;
    EXPECT_TRUE(allowed.count(key)) << key << " is not granted to vsphere-csi-controller";
  }
}

}  // namespace
}  // namespace ccm::csi::syncer::testing
