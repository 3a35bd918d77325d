// csi-sanity v5.4.0, the whole suite (issue 53 item 3), against our controller and node plugin as
// a cluster runs them (the real kube-apiserver, the default overlay's manifests and RBAC, the
// vCenter simulator's CNS). The node works on real block devices: this process runs in a private
// mount namespace (as the node tests do), and an attach in CNS shows on the node as the CNS
// volume's file on a loop device, linked under wwn-0x<disk UUID> in the node plugin's by-id
// folder (DiskBridge, below); a detach takes it away. Every spec must pass or be skipped for a
// capability the driver does not announce.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "integration/csi/loop_device.h"
#include "peers/csi_stack.h"
#include "peers/peers.h"

namespace ccm::peers {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ::ccm::csi::testing::LoopDevice;

// The node's mounts stay in this process's namespace (entered before any thread starts).
const bool kPrivateMounts = ::ccm::csi::testing::EnterPrivateMountNamespace().ok();

std::string Spec() {
  return R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "c1", "hosts": 1}],
    "vms": [{"name": "node-1", "cluster": "c1"}],
    "datastores": [{"name": "ds1", "capacity_mb": 512000, "clusters": ["c1"]}]}]
})";
}

// What vSphere and udev do for the node VM: a disk CNS attaches to it appears as a block device
// (the volume's file on a loop device) linked as by-id/wwn-0x<disk UUID>; a detach removes both.
class DiskBridge {
 public:
  DiskBridge(::ccm::testing::VcsimProcess& vcsim, std::string vm_moid, std::string by_id)
      : vcsim_(vcsim), vm_(std::move(vm_moid)), by_id_(std::move(by_id)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~DiskBridge() {
    stop_.Notify();
    thread_.join();
    for (auto& [id, disk] : disks_) Remove(disk);
  }
  std::vector<std::string> errors() {
    absl::MutexLock l(&mu_);
    return errors_;
  }

 private:
  struct Disk {
    std::string link;
    std::unique_ptr<LoopDevice> loop;
  };

  void Run() {
    while (!stop_.WaitForNotificationWithTimeout(absl::Milliseconds(20))) {
      auto volumes = vcsim_.CnsVolumes();
      if (!volumes.ok()) continue;
      std::set<std::string> attached;
      for (const auto& v : *volumes) {
        if (v.attached_vm != vm_ || v.file.empty()) continue;
        attached.insert(v.id);
        if (!disks_.count(v.id)) Add(v);
      }
      // A disk that could not be set up is an error only if the next look still finds it
      // attached and it fails again: csi-sanity may detach and delete a volume between our look
      // and the loop device's set-up (its file then gone with it).
      std::erase_if(failed_, [&](const std::string& id) { return !attached.count(id); });
      for (auto it = disks_.begin(); it != disks_.end();) {
        if (attached.count(it->first)) {
          ++it;
          continue;
        }
        Remove(it->second);
        it = disks_.erase(it);
      }
    }
  }

  void Add(const ::ccm::testing::VcsimCnsVolume& v) {
    auto loop = LoopDevice::Attach(v.file);
    if (!loop.ok()) {
      if (failed_.insert(v.id).second) return;  // looked at again by the next poll
      absl::MutexLock l(&mu_);
      errors_.push_back(absl::StrCat(v.id, ": ", loop.status().message()));
      return;
    }
    failed_.erase(v.id);
    std::string uuid = absl::AsciiStrToLower(absl::StrReplaceAll(v.disk_uuid, {{"-", ""}}));
    Disk d{absl::StrCat(by_id_, "/wwn-0x", uuid), *std::move(loop)};
    std::error_code ec;
    fs::create_symlink(d.loop->path(), d.link, ec);
    disks_[v.id] = std::move(d);
  }

  static void Remove(Disk& d) {
    std::error_code ec;
    fs::remove(d.link, ec);
    d.loop->Release();
  }

  ::ccm::testing::VcsimProcess& vcsim_;
  const std::string vm_, by_id_;
  std::map<std::string, Disk> disks_;  // CNS volume ID -> its device (the thread's only)
  std::set<std::string> failed_;       // attached, set-up failed once (the thread's only)
  absl::Mutex mu_;
  std::vector<std::string> errors_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread thread_;
};

// Specs csi-sanity skips for a capability the driver does not announce, by the words of its
// Skip() message; anything else skipped is a failure.
bool SkippedForAbsentCapability(const std::string& message) {
  for (const char* absent : {"not supported", "Not supported", "does not support"}) {
    if (absl::StrContains(message, absent)) return true;
  }
  return false;
}

TEST(SanityTest, WholeSuitePasses) {
  ASSERT_TRUE(kPrivateMounts) << "needs root and mount(2): unshare(CLONE_NEWNS)";
  auto stack =
      CsiStack::Start("sanity", {.spec = Spec(), .overlay = "default", .kcm_controllers = {}});
  ASSERT_TRUE(stack.ok()) << stack.status();
  CsiStack& s = **stack;
  const std::string by_id = s.dir() + "/by-id";
  fs::create_directories(by_id);
  ASSERT_TRUE(
      s.AddNode("node-1", "", {"CSI_DEVICE_BY_ID_DIR=" + by_id, "CSI_DEVICE_WAIT=20s"}).ok())
      << s.Logs();
  std::string moid;
  for (const auto& v : s.vcsim().info().vms) moid = v.name == "node-1" ? v.moid : moid;
  auto bridge = std::make_unique<DiskBridge>(s.vcsim(), moid, by_id);

  auto sanity = Program("csi-sanity-v5.4.0");
  ASSERT_TRUE(sanity.ok());
  const std::string report = s.dir() + "/sanity.json";
  std::vector<std::string> argv = {*sanity,
                                   "--csi.endpoint=" + s.NodeSocket("node-1"),
                                   "--csi.controllerendpoint=" + s.socket(),
                                   "--csi.mountdir=" + s.dir() + "/mnt",
                                   "--csi.stagingdir=" + s.dir() + "/staging",
                                   "--csi.testvolumesize=1073741824",
                                   "--csi.testvolumeexpandsize=2147483648",
                                   "--csi.testnodevolumeattachlimit",
                                   "--ginkgo.json-report=" + report,
                                   "--ginkgo.no-color"};
  // For a developer chasing one spec: e.g. PEERS_SANITY_ARGS=--ginkgo.focus=NodeStage (the
  // count of passed specs is then not checked).
  const char* extra = std::getenv("PEERS_SANITY_ARGS");
  if (extra != nullptr && *extra != '\0') argv.push_back(extra);
  auto run = integration::ChildProcess::Start(argv, s.dir() + "/csi-sanity");
  ASSERT_TRUE(run.ok()) << run.status();
  std::optional<int> code = (*run)->WaitExit(absl::Minutes(4));
  EXPECT_TRUE(bridge->errors().empty()) << absl::StrJoin(bridge->errors(), "\n");
  bridge.reset();
  ASSERT_TRUE(code.has_value()) << "csi-sanity ran over 4 minutes";
  const std::string out = (*run)->Stdout();
  std::ifstream in(report);
  json suites = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(suites.is_array()) << out.substr(out.size() > 6000 ? out.size() - 6000 : 0);
  int passed = 0;
  std::vector<std::string> failed, bad_skips;
  for (const json& suite : suites) {
    for (const json& spec : suite.value("SpecReports", json::array())) {
      if (spec.value("LeafNodeType", "") != "It") continue;
      const std::string name = absl::StrCat(
          absl::StrJoin(spec.value("ContainerHierarchyTexts", std::vector<std::string>{}), " / "),
          " / ", spec.value("LeafNodeText", ""));
      const std::string state = spec.value("State", "");
      const std::string message = spec.value("Failure", json::object()).value("Message", "");
      if (state == "passed") {
        ++passed;
      } else if (state == "pending") {
        continue;  // disabled in csi-sanity itself (XIt)
      } else if (state == "skipped") {
        if (!SkippedForAbsentCapability(message)) bad_skips.push_back(name + ": " + message);
      } else {
        failed.push_back(name + ": " + message.substr(0, 600));
      }
    }
  }
  EXPECT_TRUE(failed.empty()) << failed.size() << " failed:\n"
                              << absl::StrJoin(failed, "\n\n") << s.Logs(2000);
  EXPECT_TRUE(bad_skips.empty()) << absl::StrJoin(bad_skips, "\n");
  if (extra == nullptr || *extra == '\0') {
    EXPECT_GT(passed, 50);
  }
  EXPECT_EQ(*code, 0) << out.substr(out.size() > 3000 ? out.size() - 3000 : 0);
  std::printf("csi-sanity v5.4.0: %d specs passed\n", passed);
  // Nothing of the node's is left: every disk detached, nothing mounted.
  EXPECT_TRUE(::ccm::csi::testing::LoopDevicesBackedUnder(s.dir()).empty());
  EXPECT_TRUE(::ccm::csi::testing::MountsUnder(s.dir()).empty());
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  return ccm::peers::Main(argc, argv, "peers_sanity_test",
                          {"etcd", "kube-apiserver", "csi-sanity-v5.4.0"});
}
