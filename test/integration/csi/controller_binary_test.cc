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
#include <thread>

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

class ControllerBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start(/*start_syncer=*/false).ok());
    conf_ = env_.dir() + "/csi-vsphere.conf";
    WriteConf(kClusterId);
    // node-1 is a Node the CPI initialised.
    const auto& vm = env_.vcsim().info().vms.front();
    ASSERT_TRUE(env_.emu()
                    .Put("nodes", {{"metadata", {{"name", vm.name}}},
                                   {"spec", {{"providerID", "vsphere://" + vm.uuid}}}})
                    .ok());
    sock_ = env_.dir() + "/csi.sock";
  }

  // `env` and `flags` are added to the container's.
  std::unique_ptr<ChildProcess> StartController(const std::string& name,
                                                const std::vector<std::string>& env = {},
                                                const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {
        "/usr/bin/env", "-i", "X_CSI_MODE=controller", "CSI_ENDPOINT=unix://" + sock_,
        "VSPHERE_CSI_CONFIG=" + conf_, "KUBECONFIG=" + env_.kubeconfig(),
        std::string("CSI_NAMESPACE=") + kNamespace,
        // The reference's container environment: accepted, no effect here.
        "X_CSI_SPEC_DISABLE_LEN_CHECK=true", "X_CSI_SERIAL_VOL_ACCESS_TIMEOUT=3m",
        "INCLUSTER_CLIENT_QPS=100", "INCLUSTER_CLIENT_BURST=100", "LOGGER_LEVEL=PRODUCTION"};
    argv.insert(argv.end(), env.begin(), env.end());
    for (const char* a :
         {CSI_DRIVER_BINARY, "--metrics-port=0", "--config-check-period=200ms", "--v=2"}) {
      argv.push_back(a);
    }
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto p = ChildProcess::Start(argv, env_.dir() + "/" + name);
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

  // Whether the controller answers a CreateVolume ("pvc-warm"): Unavailable while it loads its
  // caches.
  bool Loaded(ChildProcess& c) {
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s;
    const bool ok = Eventually([&] {
      s = Create("pvc-warm", absl::Seconds(20), &resp);
      return s.ok();
    });
    if (!ok) ADD_FAILURE() << s.error_message() << c.Stderr();
    return ok;
  }

  int VolumesNamed(const std::string& name) {
    int n = 0;
    for (const auto& v :
         env_.vcsim().CnsVolumes().value_or(std::vector<ccm::testing::VcsimCnsVolume>{}))
      n += v.name == name;
    return n;
  }

  // csi-vsphere.conf with `cluster_id` ("" = none), replaced in one rename as the kubelet
  // swaps a Secret volume's files.
  void WriteConf(const std::string& cluster_id, const std::string& password = "secret",
                 const std::string& extra = "") {
    env_.WriteCsiConf(conf_ + ".new", cluster_id, password, extra);
    ASSERT_EQ(std::rename((conf_ + ".new").c_str(), conf_.c_str()), 0);
  }
  std::string StoredClusterId() {
    auto cm = env_.emu().Get("configmaps", kNamespace, "vsphere-csi-cluster-id");
    return cm.ok() ? cm->value("/data/clusterID"_json_pointer, std::string()) : "";
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

// Issue 55: a CreateVolume of a name without a record writes its record before sending anything,
// so it sends no CnsQueryVolume by name: one CNS call. A record without a task (the controller
// died after sending CnsCreateVolume, before recording its task) makes the retry ask CNS for the
// name, and it answers the volume CNS made instead of making a second one.
TEST_F(ControllerBinaryTest, ANewNameIsNotLookedUpAndARecordWithoutATaskIs) {
  std::unique_ptr<ChildProcess> c = StartController("controller");
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(Loaded(*c));
  auto before = env_.vcsim().CnsCounters();
  ASSERT_TRUE(before.ok());
  env_.emu().ResetRequestCounts();
  ::csi::v1::CreateVolumeResponse created;
  ASSERT_TRUE(Create("pvc-new", absl::Seconds(20), &created).ok());
  // Its record: created (no read before), then updated with the task and with the result.
  EXPECT_EQ(env_.emu().RequestCount("create cnsvolumeoperationrequests"), 1);
  EXPECT_EQ(env_.emu().RequestCount("get cnsvolumeoperationrequests"), 0);
  EXPECT_EQ(env_.emu().RequestCount("update cnsvolumeoperationrequests"), 2);
  auto after = env_.vcsim().CnsCounters();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["CnsQueryVolume"] - (*before)["CnsQueryVolume"], 0);
  EXPECT_EQ((*after)["CnsCreateVolume"] - (*before)["CnsCreateVolume"], 1);

  // As a controller killed between the task and its record leaves it.
  auto r = env_.emu().Get("cnsvolumeoperationrequests", kNamespace, "pvc-new");
  ASSERT_TRUE(r.ok()) << r.status();
  nlohmann::json crashed = *r;
  crashed["status"] = {{"latestOperationDetails",
                        {{{"taskStatus", "InProgress"},
                          {"vCenterServer", (*r)["status"]["latestOperationDetails"][0].value(
                                                "vCenterServer", "")}}}}};
  ASSERT_TRUE(env_.emu().Put("cnsvolumeoperationrequests", crashed).ok());
  ::csi::v1::CreateVolumeResponse again;
  ASSERT_TRUE(Create("pvc-new", absl::Seconds(20), &again).ok()) << c->Stderr();
  EXPECT_EQ(again.volume().volume_id(), created.volume().volume_id());
  EXPECT_EQ(VolumesNamed("pvc-new"), 1) << "a second disk was made";
  auto last = env_.vcsim().CnsCounters();
  ASSERT_TRUE(last.ok());
  EXPECT_GE((*last)["CnsQueryVolume"] - (*after)["CnsQueryVolume"], 1);
  EXPECT_EQ((*last)["CnsCreateVolume"], (*after)["CnsCreateVolume"]);
  c->Signal(SIGTERM);
  EXPECT_EQ(c->WaitExit(absl::Seconds(15)), 0) << c->Stderr();
}

// A create CNS refuses at the call itself: its record, written before, ends as an Error (so it is
// cleaned up in time instead of staying "InProgress" for ever), and the retry creates the volume.
TEST_F(ControllerBinaryTest, ACreateCnsRefusesEndsItsRecord) {
  std::unique_ptr<ChildProcess> c = StartController("controller");
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(Loaded(*c));
  ::csi::v1::CreateVolumeResponse resp;
  // Every datastore refuses at the call.
  ASSERT_TRUE(env_.vcsim().SetCnsFault("CnsCreateVolume", "CnsFault", "refused", -1, "soap").ok());
  EXPECT_FALSE(Create("pvc-refused", absl::Seconds(20), &resp).ok());
  auto last_status = [&] {
    auto r = env_.emu().Get("cnsvolumeoperationrequests", kNamespace, "pvc-refused");
    if (!r.ok()) return r.status().ToString();
    const nlohmann::json& latest = (*r)["status"]["latestOperationDetails"];
    return latest.empty() ? std::string() : latest.back().value("taskStatus", "");
  };
  EXPECT_EQ(last_status(), "Error");
  ASSERT_TRUE(env_.vcsim().ClearCnsFaults().ok());
  ASSERT_TRUE(Create("pvc-refused", absl::Seconds(20), &resp).ok()) << c->Stderr();
  EXPECT_EQ(VolumesNamed("pvc-refused"), 1);
  EXPECT_EQ(last_status(), "Success");
  c->Signal(SIGTERM);
  EXPECT_EQ(c->WaitExit(absl::Seconds(15)), 0) << c->Stderr();
}

TEST_F(ControllerBinaryTest, WithoutClusterIdOneIsGeneratedIntoTheConfigMapAndKept) {
  WriteConf("");
  // The reference's client rate variables (issue 54 item 5): a good one taken, a bad one named.
  std::unique_ptr<ChildProcess> first =
      StartController("no-id-1", {"INCLUSTER_CLIENT_QPS=7", "INCLUSTER_CLIENT_BURST=lots"});
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(Eventually([&] { return !StoredClusterId().empty(); })) << first->Stderr();
  EXPECT_TRUE(
      absl::StrContains(first->Stderr(), "INCLUSTER_CLIENT_BURST=\"lots\" is not a number"));
  EXPECT_TRUE(absl::StrContains(first->Stderr(), "Kubernetes client rate: 7 requests/s, burst 50"));
  const std::string id = StoredClusterId();
  EXPECT_EQ(id.size(), 36u) << id;  // a UUID, as the reference generates it
  auto cm = env_.emu().Get("configmaps", kNamespace, "vsphere-csi-cluster-id");
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ(cm->value("immutable", false), true);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s;
  ASSERT_TRUE(Eventually([&] { return (s = Create("pvc-gen-id", absl::Seconds(20), &resp)).ok(); }))
      << s.error_message() << first->Stderr();
  // Its vCenter sessions name it as the reference's do, with the cluster-id and the component.
  auto agents = env_.vcsim().RequestsByAgent();
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_GT((*agents)[absl::StrCat("k8s-csi-useragent-", id, "-controller")], 0);
  first->Signal(SIGTERM);
  EXPECT_EQ(first->WaitExit(absl::Seconds(15)), 0);
  // The volume is filed under that ID; a restart reads it back, it does not make another.
  bool filed = false;
  // No cluster-distribution either (issue 54 item 4): the API server's version names it.
  for (const auto& v :
       env_.vcsim().CnsVolumes().value_or(std::vector<ccm::testing::VcsimCnsVolume>{}))
    filed |= v.name == "pvc-gen-id" && v.cluster_id == id && v.cluster_distribution == "VanillaK8S";
  EXPECT_TRUE(filed);
  std::unique_ptr<ChildProcess> second = StartController("no-id-2");
  ASSERT_TRUE(Eventually([&] { return (s = Create("pvc-gen-id", absl::Seconds(20), &resp)).ok(); }))
      << s.error_message() << second->Stderr();
  EXPECT_EQ(VolumesNamed("pvc-gen-id"), 1) << "found by name under the same cluster-id";
  EXPECT_EQ(StoredClusterId(), id);
  second->Signal(SIGTERM);
  EXPECT_EQ(second->WaitExit(absl::Seconds(15)), 0);
}

TEST_F(ControllerBinaryTest, AClusterIdThatDiffersFromTheConfigMapStopsTheStart) {
  ASSERT_TRUE(
      env_.emu()
          .Put("configmaps",
               {{"metadata", {{"name", "vsphere-csi-cluster-id"}, {"namespace", kNamespace}}},
                {"immutable", true},
                {"data", {{"clusterID", "generated-before"}}}})
          .ok());
  WriteConf("another-id");
  std::unique_ptr<ChildProcess> p = StartController("conflict");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->WaitExit(absl::Seconds(20)), 1);
  EXPECT_TRUE(absl::StrContains(p->Stderr(), "the ConfigMap wins")) << p->Stderr();
  EXPECT_TRUE(absl::StrContains(p->Stderr(), "generated-before")) << p->Stderr();
  // The same value in both is no conflict.
  WriteConf("generated-before");
  std::unique_ptr<ChildProcess> same = StartController("same");
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s;
  ASSERT_TRUE(Eventually([&] {
    return (s = Create("pvc-same-id", absl::Seconds(20), &resp)).ok();
  })) << s.error_message()
      << same->Stderr();
  same->Signal(SIGTERM);
  EXPECT_EQ(same->WaitExit(absl::Seconds(15)), 0);
}

// Issue 43: a vCenter that hangs (TCP open, no answer: every request held) does not hold the
// stop. SIGTERM ends the controller within 5 s, exit code 0, while an RPC waits on vCenter.
TEST_F(ControllerBinaryTest, AHungVCenterIsReportedAndDoesNotHoldTheStop) {
  std::unique_ptr<ChildProcess> p =
      StartController("hung", {"POD_NAME=vsphere-csi-controller-0"}, {"--vcenter-hang-timeout=2s"});
  ASSERT_NE(p, nullptr);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s;
  ASSERT_TRUE(Eventually([&] {
    return (s = Create("pvc-before-hang", absl::Seconds(20), &resp)).ok();
  })) << s.error_message()
      << p->Stderr();
  auto cns_calls = [&] {  // CNS requests reach the simulator as POST /vsanHealth
    auto rest = env_.vcsim().RestCounters().value_or(std::map<std::string, int>{});
    return rest["POST /vsanHealth"];
  };
  const int before = cns_calls();
  ASSERT_TRUE(env_.vcsim().SetFault("blackhole").ok());
  const absl::Time hung = absl::Now();
  // An RPC now waits on the hung vCenter (the provisioner's deadline is far away).
  std::thread rpc([&] { s = Create("pvc-during-hang", absl::Seconds(60), &resp); });
  ASSERT_TRUE(Eventually([&] { return cns_calls() > before; })) << p->Stderr();
  // Reported within --vcenter-hang-timeout plus the 5 s status poll, as a Warning on the Pod.
  std::string event;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& e : env_.emu().List("events", kNamespace)) {
          if (e.value("reason", "") == "VCenterUnavailable") event = e.value("message", "");
        }
        return !event.empty();
      },
      absl::Seconds(20)))
      << p->Stderr();
  const absl::Duration reported = absl::Now() - hung;
  RecordProperty("hang_reported_ms", absl::StrCat(absl::ToInt64Milliseconds(reported)));
  EXPECT_LT(reported, absl::Seconds(2 + 5 + 2));
  EXPECT_TRUE(absl::StrContains(event, "is not answering")) << event;
  EXPECT_TRUE(absl::StrContains(p->Stderr(), "is not answering")) << p->Stderr();
  const absl::Time term = absl::Now();
  p->Signal(SIGTERM);
  const std::optional<int> code = p->WaitExit(absl::Seconds(5));
  const absl::Duration took = absl::Now() - term;
  rpc.join();
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << p->Stderr();
  EXPECT_EQ(*code, 0) << p->Stderr();
  EXPECT_FALSE(s.ok()) << "the RPC cannot have succeeded on a hung vCenter";
  RecordProperty("sigterm_to_exit_ms", absl::StrCat(absl::ToInt64Milliseconds(took)));
  ASSERT_TRUE(env_.vcsim().SetFault("none").ok());
}

// Issue 43, "API server hangs": every Kubernetes request is held while an RPC writes its
// operation record. SIGTERM still ends the controller within 5 s.
TEST_F(ControllerBinaryTest, AHungApiServerDoesNotHoldTheStop) {
  std::unique_ptr<ChildProcess> p = StartController("hung-api");
  ASSERT_NE(p, nullptr);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s;
  ASSERT_TRUE(Eventually([&] {
    return (s = Create("pvc-before-api-hang", absl::Seconds(20), &resp)).ok();
  })) << s.error_message()
      << p->Stderr();
  const int64_t records = env_.emu().RequestCount("create cnsvolumeoperationrequests");
  env_.emu().InjectDelay({.delay = absl::InfiniteDuration()});
  std::thread rpc([&] { s = Create("pvc-during-api-hang", absl::Seconds(60), &resp); });
  // The RPC is in flight, held writing its record (before, SIGTERM could come first and the
  // server refuse the RPC, which tested nothing).
  EXPECT_TRUE(Eventually(
      [&] { return env_.emu().RequestCount("create cnsvolumeoperationrequests") > records; }));
  const absl::Time term = absl::Now();
  p->Signal(SIGTERM);
  const std::optional<int> code = p->WaitExit(absl::Seconds(5));
  const absl::Duration took = absl::Now() - term;
  rpc.join();
  env_.emu().ClearFaults();
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << p->Stderr();
  EXPECT_EQ(*code, 0) << p->Stderr();
  RecordProperty("sigterm_to_exit_ms", absl::StrCat(absl::ToInt64Milliseconds(took)));
}

// Issue 42 item 4: the vCenter password is rotated (in vCenter, then in the Secret that holds
// csi-vsphere.conf); the controller takes the new file without a restart. A vCenter added to the
// file needs a new process: the controller stops cleanly and exits 1 for the pod to restart.
TEST_F(ControllerBinaryTest, ARotatedPasswordAppliesLiveAnAddedVCenterRestarts) {
  std::unique_ptr<ChildProcess> p = StartController("rotate");
  ASSERT_NE(p, nullptr);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s;
  ASSERT_TRUE(Eventually([&] { return (s = Create("pvc-before", absl::Seconds(20), &resp)).ok(); }))
      << s.error_message() << p->Stderr();

  // vCenter's administrator rotates the password; the sessions end (as they do when vCenter
  // restarts), so the old password no longer logs in.
  ASSERT_TRUE(env_.vcsim().SetPassword("admin", "rotated").ok());
  ASSERT_TRUE(env_.vcsim().InvalidateSessions().ok());
  s = Create("pvc-stale", absl::Seconds(5), &resp);
  EXPECT_FALSE(s.ok()) << "the old password still logs in";

  WriteConf(kClusterId, "rotated");
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(p->Stderr(), "password changed"); }))
      << p->Stderr();
  EXPECT_TRUE(absl::StrContains(p->Stderr(), "applying it live")) << p->Stderr();
  ASSERT_TRUE(Eventually([&] { return (s = Create("pvc-after", absl::Seconds(20), &resp)).ok(); }))
      << s.error_message() << p->Stderr();
  EXPECT_TRUE(p->Running()) << "the same process serves with the new password";
  EXPECT_EQ(p->Stderr().find("rotated"), std::string::npos) << "a password in the log";

  // A broken file: logged, the running config stays.
  std::ofstream(conf_ + ".new") << "[Global]\nport = \"many\"\n";
  ASSERT_EQ(std::rename((conf_ + ".new").c_str(), conf_.c_str()), 0);
  ASSERT_TRUE(Eventually([&] {
    return absl::StrContains(p->Stderr(), "is invalid, keeping the running one");
  })) << p->Stderr();
  EXPECT_TRUE(Create("pvc-broken-file", absl::Seconds(20), &resp).ok());

  // Another vCenter (with the topology-categories the reference requires for two): a new process
  // is needed.
  WriteConf(kClusterId, "rotated",
            "[VirtualCenter \"vc-new\"]\nuser = \"u\"\npassword = \"p\"\n[Labels]\n"
            "topology-categories = \"k8s-zone\"\n");
  EXPECT_EQ(p->WaitExit(absl::Seconds(20)), 1) << p->Stderr();
  EXPECT_TRUE(absl::StrContains(p->Stderr(), "vCenter added: vc-new")) << p->Stderr();
}

}  // namespace
}  // namespace ccm::csi::syncer::testing
