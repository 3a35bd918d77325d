// The CNS client (src/vsphere/cns) against the simulator fixture's CNS service (cns.go).
#include "vsphere/cns/cns_client.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/call_deadline.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/disk_file.h"
#include "testing/eventually.h"
#include "testing/fake_clock.h"
#include "testing/static_credentials.h"
#include "vsphere/client.h"
#include "vsphere/credential_source.h"
#include "vsphere/property_collector.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {
namespace {

using ::ccm::testing::Eventually;
using ::ccm::testing::VcsimCnsVolume;
using ::testing::HasSubstr;

constexpr char kSpec[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 2}],
    "vms": [{"name": "node-1"}, {"name": "node-2"}],
    "datastores": [{"name": "ds-small", "capacity_mb": 2048},
                   {"name": "ds-big", "capacity_mb": 10240}]
  }]
})";

constexpr int64_t kMiB = 1024 * 1024;

class Recorder {
 public:
  void Add(absl::string_view method, absl::StatusCode code) {
    absl::MutexLock l(&mu_);
    calls_.emplace_back(std::string(method), code);
  }
  int Count(absl::string_view method) {
    absl::MutexLock l(&mu_);
    return static_cast<int>(std::count_if(calls_.begin(), calls_.end(),
                                          [&](const auto& c) { return c.first == method; }));
  }

 private:
  absl::Mutex mu_;
  std::vector<std::pair<std::string, absl::StatusCode>> calls_ ABSL_GUARDED_BY(mu_);
};

class CnsClientTest : public ccm::testing::SimulatorSuite<CnsClientTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override {
    ASSERT_TRUE(sim().ClearCnsFaults().ok());
    ClientOptions o = ccm::testing::SimClientOptions(sim().info());
    o.observer = [this](absl::string_view m, absl::StatusCode c, absl::Duration) {
      recorder_.Add(m, c);
      if (m == "ModifyListView") HoldIfAsked();
    };
    vim_ = std::make_unique<Client>(std::move(o), &creds_);
    cns_ = std::make_unique<CnsClient>(*vim_);
    for (const auto& vm : sim().info().vms) vms_[vm.name] = {"VirtualMachine", vm.moid};
  }
  // Every test leaves the simulator without volumes, so capacities start full.
  void TearDown() override {
    ASSERT_TRUE(sim().ClearCnsFaults().ok());
    auto vols = sim().CnsVolumes();
    ASSERT_TRUE(vols.ok()) << vols.status();
    for (const auto& v : *vols) {
      if (!v.attached_vm.empty()) {
        EXPECT_TRUE(cns_->DetachVolume(v.id, {"VirtualMachine", v.attached_vm}).ok());
      }
      EXPECT_TRUE(cns_->DeleteVolume(v.id).ok()) << v.id;
    }
  }

  // Datastore by name -> {moref, summary.freeSpace}, through the property collector.
  std::pair<Moref, int64_t> Datastore(const std::string& name) {
    auto all = RetrieveAllOfType(*vim_, "Datastore", {"name", "summary.freeSpace"});
    EXPECT_TRUE(all.ok()) << all.status();
    if (!all.ok()) return {};
    for (const ObjectContent& o : *all) {
      if (o.GetText("name") == name) {
        return {o.obj, std::stoll(o.GetText("summary.freeSpace"))};
      }
    }
    ADD_FAILURE() << "no datastore " << name;
    return {};
  }
  Moref Ds(const std::string& name) { return Datastore(name).first; }
  int64_t FreeMb(const std::string& name) { return Datastore(name).second / kMiB; }

  CreateSpec Spec(const std::string& name, int64_t mb, std::vector<Moref> datastores) {
    CreateSpec s;
    s.name = name;
    s.capacity_mb = mb;
    s.datastores = std::move(datastores);
    s.metadata.container_cluster.cluster_id = "cluster-a";
    s.metadata.container_cluster.vsphere_user = "admin";
    return s;
  }
  std::string Create(const std::string& name, int64_t mb, std::vector<Moref> datastores) {
    auto r = cns_->CreateVolume(Spec(name, mb, std::move(datastores)));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->volume_id : "";
  }

  // The next ModifyListView's caller, once vCenter answered, waits in the observer (inside the
  // task waiter's set-up lock) until ReleaseHeld().
  void HoldNextModifyListView() {
    absl::MutexLock l(&hold_mu_);
    hold_next_ = true;
  }
  bool WaitUntilHeld() {
    absl::MutexLock l(&hold_mu_);
    return hold_mu_.AwaitWithTimeout(absl::Condition(&holding_), absl::Seconds(30));
  }
  void ReleaseHeld() {
    absl::MutexLock l(&hold_mu_);
    holding_ = false;
  }
  void HoldIfAsked() {
    absl::MutexLock l(&hold_mu_);
    if (!hold_next_) return;
    hold_next_ = false;
    holding_ = true;
    auto released = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(hold_mu_) { return !holding_; };
    hold_mu_.Await(absl::Condition(&released));
  }

  absl::Mutex hold_mu_;
  bool hold_next_ ABSL_GUARDED_BY(hold_mu_) = false;
  bool holding_ ABSL_GUARDED_BY(hold_mu_) = false;
  StaticCredentialSource creds_{Credentials{"admin", Secret("secret")}};
  Recorder recorder_;
  std::unique_ptr<Client> vim_;
  std::unique_ptr<CnsClient> cns_;
  std::map<std::string, Moref> vms_;
};

TEST_F(CnsClientTest, CreatePlacesOneVolumeAndTakesItsCapacity) {
  const int64_t small = FreeMb("ds-small"), big = FreeMb("ds-big");
  auto r = cns_->CreateVolume(Spec("pvc-one", 1024, {Ds("ds-small"), Ds("ds-big")}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->datastore, Ds("ds-small"));
  EXPECT_EQ(r->volume_id.size(), 36u);  // an FCD id is a UUID
  EXPECT_EQ(FreeMb("ds-small"), small - 1024);
  EXPECT_EQ(FreeMb("ds-big"), big);
  auto vols = sim().CnsVolumes();
  ASSERT_TRUE(vols.ok());
  ASSERT_EQ(vols->size(), 1u);  // one placement, not one volume per datastore
  EXPECT_EQ((*vols)[0].id, r->volume_id);
  EXPECT_EQ((*vols)[0].cluster_id, "cluster-a");
  EXPECT_EQ(recorder_.Count("CnsCreateVolume"), 1);  // counted as a vCenter request
}

TEST_F(CnsClientTest, CreateSkipsADatastoreWithoutRoom) {
  const std::string a = Create("pvc-fill", 1536, {Ds("ds-small"), Ds("ds-big")});
  auto b = cns_->CreateVolume(Spec("pvc-next", 1024, {Ds("ds-small"), Ds("ds-big")}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->datastore, Ds("ds-big"));
  EXPECT_EQ(FreeMb("ds-small"), 512);
  EXPECT_EQ(FreeMb("ds-big"), 10240 - 1024);
  EXPECT_NE(a, b->volume_id);
}

TEST_F(CnsClientTest, NoRoomIsAClearError) {
  auto r = cns_->CreateVolume(Spec("pvc-huge", 50000, {Ds("ds-small"), Ds("ds-big")}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(FaultName(r.status()), "CnsFault");
  EXPECT_THAT(r.status().message(), HasSubstr("pvc-huge"));
  EXPECT_THAT(r.status().message(), HasSubstr("insufficient disk space"));
  EXPECT_EQ(FreeMb("ds-small"), 2048);
  auto vols = sim().CnsVolumes();
  ASSERT_TRUE(vols.ok());
  EXPECT_TRUE(vols->empty());
}

TEST_F(CnsClientTest, QueriesByIdNameAndDatastoreWithPaging) {
  std::set<std::string> big_ids;
  for (int i = 0; i < 5; ++i) big_ids.insert(Create(absl::StrCat("q-", i), 100, {Ds("ds-big")}));
  const std::string small_id = Create("q-small", 100, {Ds("ds-small")});

  QueryFilter by_id;
  by_id.volume_ids = {small_id, *big_ids.begin()};
  auto q = cns_->QueryVolume(by_id);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->volumes.size(), 2u);

  QueryFilter by_name;
  by_name.names = {"q-small"};
  q = cns_->QueryVolume(by_name);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 1u);
  const Volume& v = q->volumes[0];
  EXPECT_EQ(v.volume_id, small_id);
  EXPECT_EQ(v.capacity_mb, 100);
  EXPECT_EQ(v.volume_type, "BLOCK");
  EXPECT_EQ(v.metadata.container_cluster.cluster_id, "cluster-a");
  EXPECT_EQ(v.metadata.container_cluster.cluster_flavor, "VANILLA");

  QueryFilter by_ds;
  by_ds.datastores = {Ds("ds-small")};
  q = cns_->QueryVolume(by_ds);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].volume_id, small_id);

  QueryFilter unknown_cluster;
  unknown_cluster.container_cluster_ids = {"cluster-b"};
  q = cns_->QueryVolume(unknown_cluster);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_TRUE(q->volumes.empty());

  // Pages of 2 over the five ds-big volumes.
  QueryFilter paged;
  paged.datastores = {Ds("ds-big")};
  paged.cursor = Cursor{0, 2, 0};
  std::set<std::string> seen;
  std::vector<size_t> sizes;
  for (int page = 0; page < 10; ++page) {
    q = cns_->QueryVolume(paged);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->cursor.total_records, 5);
    sizes.push_back(q->volumes.size());
    for (const Volume& pv : q->volumes) seen.insert(pv.volume_id);
    if (q->cursor.offset >= q->cursor.total_records) break;
    paged.cursor->offset = q->cursor.offset;
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(seen, big_ids);
}

TEST_F(CnsClientTest, AttachReturnsEachVolumesOwnDiskUuid) {
  const std::string a = Create("att-a", 100, {Ds("ds-big")});
  const std::string b = Create("att-b", 100, {Ds("ds-big")});
  auto ua = cns_->AttachVolume(a, vms_["node-1"]);
  auto ub = cns_->AttachVolume(b, vms_["node-1"]);
  ASSERT_TRUE(ua.ok()) << ua.status();
  ASSERT_TRUE(ub.ok()) << ub.status();
  EXPECT_NE(*ua, *ub);
  EXPECT_THAT(*ua, ::testing::StartsWith("6000C29"));
  auto vols = sim().CnsVolumes();
  ASSERT_TRUE(vols.ok());
  for (const auto& v : *vols) {
    EXPECT_EQ(v.disk_uuid, v.id == a ? *ua : *ub);
    EXPECT_EQ(v.attached_vm, vms_["node-1"].value);
  }
  // The VM shows the disk (vDiskId = volume id), as vCenter does; the other VM does not.
  auto on1 = cns_->AttachedDiskUuid(vms_["node-1"], a);
  ASSERT_TRUE(on1.ok()) << on1.status();
  EXPECT_EQ(*on1, *ua);
  auto on2 = cns_->AttachedDiskUuid(vms_["node-2"], a);
  ASSERT_TRUE(on2.ok()) << on2.status();
  EXPECT_EQ(*on2, "");
}

TEST_F(CnsClientTest, AttachStateIsPerVm) {
  const std::string v = Create("att-state", 100, {Ds("ds-big")});
  auto uuid = cns_->AttachVolume(v, vms_["node-1"]);
  ASSERT_TRUE(uuid.ok()) << uuid.status();

  auto other = cns_->AttachVolume(v, vms_["node-2"]);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FaultName(other.status()), "ResourceInUse");
  // vCenter answers ResourceInUse for the same VM too; the VM's devices tell it is attached there.
  auto again = cns_->AttachVolume(v, vms_["node-1"]);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  auto here = cns_->AttachedDiskUuid(vms_["node-1"], v);
  ASSERT_TRUE(here.ok());
  EXPECT_EQ(*here, *uuid);

  absl::Status wrong = cns_->DetachVolume(v, vms_["node-2"]);
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(cns_->DetachVolume(v, vms_["node-1"]).ok());
  auto moved = cns_->AttachVolume(v, vms_["node-2"]);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, *uuid);  // the disk keeps its UUID
  auto gone = cns_->AttachedDiskUuid(vms_["node-1"], v);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, "");
}

TEST_F(CnsClientTest, DeleteOfAnAttachedVolumeFailsThenDetachAndDeleteGiveCapacityBack) {
  const int64_t before = FreeMb("ds-small");
  const std::string v = Create("del-att", 512, {Ds("ds-small")});
  EXPECT_EQ(FreeMb("ds-small"), before - 512);
  ASSERT_TRUE(cns_->AttachVolume(v, vms_["node-2"]).ok());

  absl::Status del = cns_->DeleteVolume(v);
  ASSERT_FALSE(del.ok());
  EXPECT_EQ(del.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FaultName(del), "ResourceInUse");
  EXPECT_THAT(del.message(), HasSubstr("in use"));
  EXPECT_EQ(FreeMb("ds-small"), before - 512);

  ASSERT_TRUE(cns_->DetachVolume(v, vms_["node-2"]).ok());
  ASSERT_TRUE(cns_->DeleteVolume(v).ok());
  EXPECT_EQ(FreeMb("ds-small"), before);
  QueryFilter f;
  f.volume_ids = {v};
  auto q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->volumes.empty());
}

// Issue 55: deletes that arrive while a CnsDeleteVolume is being sent go out together, in one call
// naming all their volumes; each reads its own volume's result from the shared task (an attached
// volume's fault is its own, the others are deleted).
TEST_F(CnsClientTest, ConcurrentDeletesShareOneCallEachWithItsOwnResult) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Create(absl::StrCat("joined-", i), 10, {Ds("ds-big")}));
  ASSERT_TRUE(cns_->AttachVolume(ids[4], vms_["node-2"]).ok());
  const std::string first = Create("joined-first", 10, {Ds("ds-big")});
  auto cns_posts = [&] {
    auto rest = sim().RestCounters();
    return rest.ok() ? (*rest)["POST /vsanHealth"] : -1;
  };
  const int posts = cns_posts();
  const int deletes = recorder_.Count("CnsDeleteVolume");
  ASSERT_TRUE(sim().SetFault("blackhole", 1, 0, "POST /vsanHealth").ok());
  absl::Status first_done;
  std::vector<absl::Status> done(ids.size());
  std::vector<std::thread> threads;
  threads.emplace_back([&] { first_done = cns_->DeleteVolume(first); });
  absl::Cleanup join = [&] {
    (void)sim().SetFault("none");
    for (std::thread& t : threads) t.join();
  };
  ASSERT_TRUE(Eventually([&] { return cns_posts() > posts; }));  // the first call is held
  for (size_t i = 0; i < ids.size(); ++i) {
    threads.emplace_back([&, i] { done[i] = cns_->DeleteVolume(ids[i]); });
  }
  cns_->deletes().AwaitQueuedForTest(ids.size());
  std::move(join).Invoke();  // the held call fails or is sent again; then the five go as one
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(done[i].ok()) << ids[i] << ": " << done[i];
  EXPECT_EQ(done[4].code(), absl::StatusCode::kFailedPrecondition) << done[4];
  EXPECT_EQ(FaultName(done[4]), "ResourceInUse");
  // The five deletes in one call; the held one perhaps sent again alone.
  EXPECT_LE(recorder_.Count("CnsDeleteVolume") - deletes, 3) << first_done;
  QueryFilter f;
  f.volume_ids = ids;
  auto q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].volume_id, ids[4]);
  ASSERT_TRUE(cns_->DetachVolume(ids[4], vms_["node-2"]).ok());
  EXPECT_TRUE(cns_->DeleteVolume(ids[4]).ok());
}

TEST_F(CnsClientTest, UnknownVolumesAndVmsAreNotFound) {
  const std::string unknown = "11111111-2222-3333-4444-555555555555";
  EXPECT_EQ(cns_->DeleteVolume(unknown).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cns_->AttachVolume(unknown, vms_["node-1"]).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(cns_->ExtendVolume(unknown, 200).code(), absl::StatusCode::kNotFound);
  const std::string v = Create("nf", 100, {Ds("ds-big")});
  auto r = cns_->AttachVolume(v, {"VirtualMachine", "vm-does-not-exist"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("vm-does-not-exist"));
}

// Issue 54 item 8: a task that succeeds naming no result for its volume (what govmomi's
// cns/simulator answers for a volume it does not know) is decided from the volume as CNS has it
// now, one query, never failed on the answer's shape: each change done is success, one not done
// Unavailable (tried again), an extension of a volume CNS does not have NotFound.
TEST_F(CnsClientTest, TasksNamingNoResultAreDecidedFromTheVolume) {
  auto no_result = [&](const std::string& method, bool done) {
    ASSERT_TRUE(
        sim().SetCnsFault(method, "NoResult", "", 1, done ? "noresult" : "noresult-undone").ok());
  };
  no_result("CnsCreateVolume", true);
  const std::string v = Create("quiet", 512, {Ds("ds-big")});
  ASSERT_FALSE(v.empty());  // its ID found by its name

  no_result("CnsAttachVolume", false);
  EXPECT_EQ(cns_->AttachVolume(v, vms_["node-1"]).status().code(), absl::StatusCode::kUnavailable);
  no_result("CnsAttachVolume", true);
  auto disk = cns_->AttachVolume(v, vms_["node-1"]);
  ASSERT_TRUE(disk.ok()) << disk.status();
  EXPECT_THAT(*disk, HasSubstr("6000C29"));

  no_result("CnsDetachVolume", false);
  EXPECT_EQ(cns_->DetachVolume(v, vms_["node-1"]).code(), absl::StatusCode::kUnavailable);
  no_result("CnsDetachVolume", true);
  EXPECT_TRUE(cns_->DetachVolume(v, vms_["node-1"]).ok());

  no_result("CnsExtendVolume", false);
  EXPECT_EQ(cns_->ExtendVolume(v, 1024).code(), absl::StatusCode::kUnavailable);
  no_result("CnsExtendVolume", true);
  EXPECT_TRUE(cns_->ExtendVolume(v, 1024).ok());

  VolumeMetadata m;
  m.container_cluster.cluster_id = "cluster-a";
  m.entity_metadata = {{"PERSISTENT_VOLUME", "pv-quiet", "", {}, false, "cluster-a", {}}};
  no_result("CnsUpdateVolumeMetadata", false);
  EXPECT_EQ(cns_->UpdateVolumeMetadata(v, m).code(), absl::StatusCode::kUnavailable);
  no_result("CnsUpdateVolumeMetadata", true);
  EXPECT_TRUE(cns_->UpdateVolumeMetadata(v, m).ok());
  // A batch: the volume without a result is decided alone.
  no_result("CnsUpdateVolumeMetadata", true);
  auto batch = cns_->UpdateVolumesMetadata({{v, m}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_TRUE((*batch)[0].ok()) << (*batch)[0];

  no_result("CnsDeleteVolume", false);
  EXPECT_EQ(cns_->DeleteVolume(v).code(), absl::StatusCode::kUnavailable);
  no_result("CnsDeleteVolume", true);
  EXPECT_TRUE(cns_->DeleteVolume(v).ok());
  // Deleted again (a retried DeleteVolume): CNS names nothing, the volume is gone: success.
  no_result("CnsDeleteVolume", false);
  EXPECT_TRUE(cns_->DeleteVolume(v).ok());
  no_result("CnsExtendVolume", false);
  EXPECT_EQ(cns_->ExtendVolume(v, 2048).code(), absl::StatusCode::kNotFound);
}

TEST_F(CnsClientTest, ExtendTakesCapacityFromTheDatastore) {
  const std::string v = Create("ext", 1024, {Ds("ds-small")});
  ASSERT_TRUE(cns_->AttachVolume(v, vms_["node-1"]).ok());
  ASSERT_TRUE(cns_->ExtendVolume(v, 1536).ok());
  EXPECT_EQ(FreeMb("ds-small"), 2048 - 1536);
  QueryFilter f;
  f.volume_ids = {v};
  auto q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].capacity_mb, 1536);

  absl::Status shrink = cns_->ExtendVolume(v, 512);
  EXPECT_EQ(shrink.code(), absl::StatusCode::kInvalidArgument);
  absl::Status too_big = cns_->ExtendVolume(v, 4096);
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.message(), HasSubstr("insufficient disk space"));
  EXPECT_EQ(FreeMb("ds-small"), 2048 - 1536);
}

// A vCenter whose version says 7.0U3 but whose CNS refuses a snapshot call as an unknown method
// (issue 42 item 6): the call answers Unimplemented and the client stops offering snapshots.
TEST_F(CnsClientTest, ASnapshotCallRefusedAsUnknownTurnsSnapshotsOff) {
  const std::string v = Create("no-snap-api", 64, {Ds("ds-small")});
  auto before = cns_->SnapshotsSupported();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(*before);  // the simulator says 7.0.3.0
  ASSERT_TRUE(sim()
                  .SetCnsFault("CnsQuerySnapshots", "InvalidRequest",
                               "Unable to resolve WSDL method name CnsQuerySnapshots for "
                               "namespace name urn:vsan",
                               1, "soap")
                  .ok());
  auto snaps = cns_->SnapshotsOf(v);
  EXPECT_EQ(snaps.status().code(), absl::StatusCode::kUnimplemented) << snaps.status();
  EXPECT_THAT(snaps.status().message(), HasSubstr("has no CNS snapshot API"));
  auto after = cns_->SnapshotsSupported();
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(*after);
  EXPECT_TRUE(cns_->DeleteVolume(v).ok());
}

// Snapshots as vCenter keeps them: a copy of the disk file at that moment; a volume from one
// starts as that copy; a volume with snapshots is neither deleted nor extended.
TEST_F(CnsClientTest, SnapshotsCopyTheDiskAndGuardTheVolume) {
  const std::string v = Create("snap-src", 64, {Ds("ds-small")});
  auto vols = sim().CnsVolumes();
  ASSERT_TRUE(vols.ok()) << vols.status();
  ASSERT_EQ(vols->size(), 1u);
  const std::string file = (*vols)[0].file;
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(ccm::testing::FileSize(file), 64 * kMiB);  // sparse, of the volume's capacity
  ASSERT_TRUE(ccm::testing::WriteAt(file, 4096, "first").ok());

  auto s1 = cns_->CreateSnapshot(v, "snap-1-" + v);
  ASSERT_TRUE(s1.ok()) << s1.status();
  EXPECT_EQ(s1->volume_id, v);
  EXPECT_EQ(s1->description, "snap-1-" + v);
  EXPECT_LT(absl::Now() - s1->create_time, absl::Minutes(1));
  ASSERT_TRUE(ccm::testing::WriteAt(file, 4096, "later").ok());

  auto listed = cns_->SnapshotsOf(v);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0], *s1);
  EXPECT_EQ(FaultName(cns_->DeleteVolume(v)), "CnsFault");  // it has a snapshot
  EXPECT_FALSE(cns_->ExtendVolume(v, 128).ok());

  CreateSpec restore = Spec("snap-restore", 64, {});
  restore.source_volume_id = v;
  restore.source_snapshot_id = s1->snapshot_id;
  auto r = cns_->CreateVolume(restore);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->datastore, Ds("ds-small"));  // where the snapshot is
  vols = sim().CnsVolumes();
  ASSERT_TRUE(vols.ok());
  auto restored = std::find_if(vols->begin(), vols->end(),
                               [&](const VcsimCnsVolume& x) { return x.id == r->volume_id; });
  ASSERT_NE(restored, vols->end());
  EXPECT_EQ(ccm::testing::ReadAt(restored->file, 4096, 5), "first");
  EXPECT_EQ(ccm::testing::ReadAt(file, 4096, 5), "later");

  restore.capacity_mb = 128;  // not the snapshot's size
  auto wrong = cns_->CreateVolume(restore);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument) << wrong.status();

  EXPECT_EQ(cns_->DeleteSnapshot(v, "no-such-snapshot").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cns_->SnapshotsOf("no-such-volume").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(cns_->DeleteSnapshot(v, s1->snapshot_id).ok());
  listed = cns_->SnapshotsOf(v);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(listed->empty());
  EXPECT_GE(recorder_.Count("CnsQuerySnapshots"), 3);
}

// vCenter's own limit (32 snapshots of a disk) and faults on demand, named as vCenter names them.
TEST_F(CnsClientTest, SnapshotLimitAndInjectedFaults) {
  const std::string v = Create("snap-limit", 16, {Ds("ds-small")});
  std::vector<std::string> ids;
  for (int i = 0; i < 32; ++i) {
    auto s = cns_->CreateSnapshot(v, absl::StrCat("s", i));
    ASSERT_TRUE(s.ok()) << i << ": " << s.status();
    ids.push_back(s->snapshot_id);
  }
  auto over = cns_->CreateSnapshot(v, "s32");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(FaultName(over.status()), "CnsFault");
  EXPECT_THAT(over.status().message(), HasSubstr("32 snapshots"));
  auto all = cns_->SnapshotsOf(v);  // 32 in pages of 128: one page
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 32u);

  ASSERT_TRUE(sim().SetCnsFault("CnsDeleteSnapshots", "NotSupported", "busy", 1, "task").ok());
  absl::Status refused = cns_->DeleteSnapshot(v, ids[0]);
  EXPECT_EQ(FaultName(refused), "NotSupported");
  EXPECT_THAT(refused.message(), HasSubstr("busy"));
  ASSERT_TRUE(sim().SetCnsFault("CnsQuerySnapshots", "InvalidState", "restarting", 1, "soap").ok());
  absl::Status soap = cns_->SnapshotsOf(v).status();
  EXPECT_EQ(FaultName(soap), "InvalidState");
  EXPECT_THAT(soap.message(), HasSubstr("restarting"));
  for (const std::string& id : ids) ASSERT_TRUE(cns_->DeleteSnapshot(v, id).ok()) << id;
}

TEST_F(CnsClientTest, UpdatedMetadataShowsInQueries) {
  const std::string v = Create("meta", 100, {Ds("ds-big")});
  VolumeMetadata m;
  m.container_cluster.cluster_id = "cluster-a";
  m.container_cluster.vsphere_user = "admin";
  EntityMetadata pv{"PERSISTENT_VOLUME", "pv-meta", "", {{"app", "db"}}, false, "cluster-a", {}};
  EntityMetadata pvc{"PERSISTENT_VOLUME_CLAIM",
                     "data",
                     "ns1",
                     {{"tier", "gold"}},
                     false,
                     "cluster-a",
                     {{"PERSISTENT_VOLUME", "pv-meta", "", "cluster-a"}}};
  m.entity_metadata = {pv, pvc};
  ASSERT_TRUE(cns_->UpdateVolumeMetadata(v, m).ok());

  QueryFilter f;
  f.labels = {{"tier", "gold"}};
  auto q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].volume_id, v);
  EXPECT_EQ(q->volumes[0].metadata.entity_metadata, m.entity_metadata);

  // The PVC is deleted: an update that removes that entity leaves the PV's.
  VolumeMetadata del;
  del.container_cluster = m.container_cluster;
  EntityMetadata gone = pvc;
  gone.remove = true;
  gone.labels.clear();
  gone.referred_entity.clear();
  del.entity_metadata = {gone};
  ASSERT_TRUE(cns_->UpdateVolumeMetadata(v, del).ok());
  f.labels.clear();
  f.volume_ids = {v};
  q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].metadata.entity_metadata, std::vector<EntityMetadata>{pv});
}

TEST_F(CnsClientTest, SeveralVolumesMetadataInOneCall) {
  const std::string a = Create("batch-a", 100, {Ds("ds-big")});
  const std::string b = Create("batch-b", 100, {Ds("ds-big")});
  auto update = [](const std::string& id, const std::string& pv) {
    MetadataUpdate u;
    u.volume_id = id;
    u.metadata.container_cluster.cluster_id = "cluster-a";
    u.metadata.entity_metadata = {{"PERSISTENT_VOLUME", pv, "", {}, false, "cluster-a", {}}};
    return u;
  };
  const int calls = recorder_.Count("CnsUpdateVolumeMetadata");
  auto r = cns_->UpdateVolumesMetadata(
      {update(a, "pv-a"), update("no-such-volume", "pv-x"), update(b, "pv-b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(recorder_.Count("CnsUpdateVolumeMetadata") - calls, 1);
  ASSERT_EQ(r->size(), 3u);
  EXPECT_TRUE((*r)[0].ok()) << (*r)[0];
  EXPECT_EQ((*r)[1].code(), absl::StatusCode::kNotFound) << (*r)[1];
  EXPECT_THAT((*r)[1].message(), HasSubstr("no-such-volume"));
  EXPECT_TRUE((*r)[2].ok()) << (*r)[2];
  QueryFilter f;
  f.volume_ids = {a, b};
  auto q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 2u);
  for (const Volume& v : q->volumes) {
    ASSERT_EQ(v.metadata.entity_metadata.size(), 1u) << v.volume_id;
    EXPECT_EQ(v.metadata.entity_metadata[0].entity_name, v.volume_id == a ? "pv-a" : "pv-b");
  }
  // The task failing as a whole is the call's error.
  ASSERT_TRUE(sim().SetCnsFault("CnsUpdateVolumeMetadata", "CnsFault", "injected", 1, "task").ok());
  auto failed = cns_->UpdateVolumesMetadata({update(a, "pv-a")});
  EXPECT_FALSE(failed.ok());
}

// An in-tree VMDK registered by its URL path (CSI migration): once, CnsAlreadyRegisteredFault
// naming its volume the second time; a wrong datacenter, datastore or file is NotFound naming
// it; CnsQueryVolumeInfo gives its file; keepAfterDeleteVm is set through vim25.
TEST_F(CnsClientTest, InTreeDiskRegistersByUrlPath) {
  auto disk = sim().CreateInTreeDisk("dc1", "ds-big", "kubevols/legacy.vmdk", 512);
  ASSERT_TRUE(disk.ok()) << disk.status();
  // As the in-tree plugin leaves it: the descriptor and its extent of the capacity.
  const std::string descriptor = absl::StrReplaceAll(disk->file, {{"-flat.vmdk", ".vmdk"}});
  EXPECT_TRUE(std::filesystem::exists(descriptor)) << descriptor;
  EXPECT_EQ(std::filesystem::file_size(disk->file), 512 * kMiB);
  auto url = [](const std::string& dc, const std::string& ds, const std::string& file) {
    return absl::StrCat("https://127.0.0.1/folder/", file, "?dcPath=", dc, "&dsName=", ds);
  };
  CreateSpec spec = Spec("pv-legacy", 0, {});
  spec.backing_disk_url_path = url("%2Fdc1", "ds-big", "kubevols/legacy.vmdk");
  auto made = cns_->CreateVolume(spec);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->datastore, Ds("ds-big"));
  auto again = cns_->CreateVolume(spec);
  EXPECT_EQ(vsphere::FaultName(again.status()), "CnsAlreadyRegisteredFault") << again.status();
  EXPECT_EQ(RegisteredVolumeId(again.status()), made->volume_id);
  for (const std::string& wrong : {url("dc9", "ds-big", "kubevols/legacy.vmdk"),
                                   url("dc1", "ds-small", "kubevols/legacy.vmdk"),
                                   url("dc1", "ds-big", "kubevols/nothing.vmdk")}) {
    spec.backing_disk_url_path = wrong;
    auto r = cns_->CreateVolume(spec);
    EXPECT_TRUE(absl::IsNotFound(r.status())) << wrong << ": " << r.status();
  }
  auto info = cns_->VolumeInfo(made->volume_id);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->file_path, "[ds-big] kubevols/legacy.vmdk");
  EXPECT_EQ(info->datastore, Ds("ds-big"));
  EXPECT_FALSE(info->keep_after_delete_vm);
  ASSERT_TRUE(cns_->KeepAfterVmDeletion(made->volume_id, info->datastore).ok());
  EXPECT_TRUE(cns_->VolumeInfo(made->volume_id)->keep_after_delete_vm);
  EXPECT_TRUE(absl::IsNotFound(cns_->KeepAfterVmDeletion("no-such-disk", info->datastore)));
  EXPECT_TRUE(absl::IsNotFound(cns_->VolumeInfo("no-such-volume").status()));
  // A volume CNS made has the flag from the start.
  const std::string fresh = Create("pvc-fresh", 256, {Ds("ds-small")});
  EXPECT_TRUE(cns_->VolumeInfo(fresh)->keep_after_delete_vm);
}

TEST_F(CnsClientTest, InjectedFaultsKeepTheirMessage) {
  struct Case {
    std::string where, fault, message;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"volume", "CnsFault", "injected: datastore busy", absl::StatusCode::kUnknown},
      {"task", "InvalidArgument", "injected: bad spec", absl::StatusCode::kInvalidArgument},
      {"soap", "NotSupported", "injected: not here", absl::StatusCode::kUnimplemented},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.where);
    ASSERT_TRUE(sim().SetCnsFault("CnsCreateVolume", c.fault, c.message, 1, c.where).ok());
    auto r = cns_->CreateVolume(Spec("faulty", 100, {Ds("ds-big")}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code);
    EXPECT_EQ(FaultName(r.status()), c.fault);
    EXPECT_THAT(r.status().message(), HasSubstr(c.message));
  }
  ASSERT_TRUE(sim().SetCnsFault("CnsQueryVolume", "CnsFault", "injected: query failed").ok());
  auto q = cns_->QueryVolume({});
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.status().message(), HasSubstr("injected: query failed"));
  // Count 1: the next call works again.
  EXPECT_TRUE(cns_->QueryVolume({}).ok());
  EXPECT_FALSE(Create("after-faults", 100, {Ds("ds-big")}).empty());
}

TEST_F(CnsClientTest, WaitsForASlowTaskThroughThePropertyCollector) {
  const std::string v = Create("slow", 100, {Ds("ds-big")});  // the stream is set up
  ASSERT_TRUE(sim().SetCnsDelay("CnsAttachVolume", 300).ok());
  const int adds = recorder_.Count("ModifyListView");
  const int waits = recorder_.Count("WaitForUpdatesEx");
  const int polls = recorder_.Count("RetrievePropertiesEx");
  const absl::Time start = absl::Now();
  auto uuid = cns_->AttachVolume(v, vms_["node-1"]);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(sim().SetCnsDelay("CnsAttachVolume", 0).ok());
  ASSERT_TRUE(uuid.ok()) << uuid.status();
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_EQ(recorder_.Count("ModifyListView") - adds, 1);
  // The task entering the view (running), then its end: no poll.
  EXPECT_LE(recorder_.Count("WaitForUpdatesEx") - waits, 2);
  EXPECT_EQ(recorder_.Count("RetrievePropertiesEx") - polls, 0);
  EXPECT_EQ(recorder_.Count("CreatePropertyCollector"), 1) << "one stream for every task";
}

TEST_F(CnsClientTest, ConcurrentTasksShareTheWaits) {
  constexpr int kN = 8;
  ASSERT_TRUE(sim().SetCnsDelay("CnsCreateVolume", 200).ok());
  std::vector<std::thread> threads;
  std::vector<std::string> ids(kN);
  const Moref big = Ds("ds-big");
  const int polls = recorder_.Count("RetrievePropertiesEx");
  for (int i = 0; i < kN; ++i) {
    threads.emplace_back([&, i] { ids[i] = Create(absl::StrCat("c-", i), 10, {big}); });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(sim().SetCnsDelay("CnsCreateVolume", 0).ok());
  for (const std::string& id : ids) EXPECT_FALSE(id.empty());
  // Tasks started while another joined the view join it together, in one call.
  EXPECT_GE(recorder_.Count("ModifyListView"), 1);
  EXPECT_LE(recorder_.Count("ModifyListView"), kN);
  EXPECT_EQ(recorder_.Count("RetrievePropertiesEx") - polls, 0);
  // One waiting thread at a time; 2 per task alone, fewer shared.
  EXPECT_LT(recorder_.Count("WaitForUpdatesEx"), 2 * kN + 1);
}

// Tasks that wait to join the view while another's ModifyListView is under way join it together,
// in one call: three tasks, two ModifyListView.
TEST_F(CnsClientTest, TasksWaitingToJoinTheViewJoinInOneCall) {
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 500).ok());
  std::vector<Moref> tasks;
  for (int i = 0; i < 3; ++i) {
    auto task = cns_->Start(DeleteOp(absl::StrCat("no-such-volume-", i), true));
    ASSERT_TRUE(task.ok()) << task.status();
    tasks.push_back(*task);
  }
  TaskWaiter waiter(*vim_);
  HoldNextModifyListView();
  std::vector<absl::StatusOr<TaskInfo>> got(3);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { got[0] = waiter.Wait(tasks[0]); });
  absl::Cleanup join = [&] {
    ReleaseHeld();
    for (std::thread& t : threads) t.join();
  };
  ASSERT_TRUE(WaitUntilHeld());  // the first task's ModifyListView answered, its caller held
  for (int i = 1; i < 3; ++i) threads.emplace_back([&, i] { got[i] = waiter.Wait(tasks[i]); });
  ASSERT_TRUE(Eventually([&] { return waiter.stats().waiting == 3; }));
  ReleaseHeld();
  std::move(join).Invoke();
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  for (const auto& g : got) {
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(g->done());
  }
  EXPECT_EQ(waiter.stats().adds, 2u);
}

// Issue 55: while other tasks are waited for, tasks that start within `gather` of the last
// ModifyListView join the view together in the next one. On a fake clock: a long task is
// waited for first (its wait stays open on the simulator), then three more start; they gather
// until the fake clock is moved a second on, and join in one call.
TEST_F(CnsClientTest, TasksStartedWithinTheGatherJoinTheViewTogether) {
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 600'000).ok());
  auto long_task = cns_->Start(DeleteOp("no-such-volume-long", true));
  ASSERT_TRUE(long_task.ok()) << long_task.status();
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 300).ok());
  std::vector<Moref> tasks;
  for (int i = 0; i < 3; ++i) {
    auto task = cns_->Start(DeleteOp(absl::StrCat("no-such-volume-", i), true));
    ASSERT_TRUE(task.ok()) << task.status();
    tasks.push_back(*task);
  }
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  FakeClock clock;
  TaskWaitOptions o;
  o.clock = &clock;
  o.gather = absl::Seconds(1);
  auto waiter = std::make_unique<TaskWaiter>(*vim_, o);
  absl::StatusOr<TaskInfo> long_got;
  std::vector<absl::StatusOr<TaskInfo>> got(3);
  std::vector<std::thread> threads;
  std::atomic<bool> pump{false};
  std::atomic<bool> done{false};
  std::thread mover([&] {  // once allowed, moves the fake clock on to each gather's end
    while (!done) {
      if (pump && clock.sleepers() > 0) clock.AdvanceToNextWakeup();
      std::this_thread::yield();
    }
  });
  absl::Cleanup join = [&] {
    pump = true;
    for (size_t i = 1; i < threads.size(); ++i) threads[i].join();
    waiter.reset();  // ends the long task's wait
    threads[0].join();
    done = true;
    mover.join();
  };
  // Alone, it joins and waits at once: added, answered (running), then waiting on vCenter.
  threads.emplace_back([&] { long_got = waiter->Wait(*long_task); });
  ASSERT_TRUE(Eventually([&] { return waiter->stats().waits >= 2; }));
  EXPECT_EQ(waiter->stats().adds, 1u);
  for (int i = 0; i < 3; ++i) threads.emplace_back([&, i] { got[i] = waiter->Wait(tasks[i]); });
  ASSERT_TRUE(clock.WaitForSleepers(3)) << "each gathers until a second after the last add";
  EXPECT_EQ(waiter->stats().adds, 1u);
  pump = true;
  for (size_t i = 1; i < threads.size(); ++i) threads[i].join();
  for (const auto& g : got) {
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(g->done());
  }
  EXPECT_EQ(waiter->stats().adds, 2u) << "the three joined in one ModifyListView";
  threads.erase(threads.begin() + 1, threads.end());
  std::move(join).Invoke();
  EXPECT_EQ(long_got.status().code(), absl::StatusCode::kUnavailable) << long_got.status();
}

// A waiter that comes after its task was heard done (another volume of a batched delete that
// asks after the first has its answer) has the answer at once while the task is in the view:
// adding it again would not report it again (seen in the bench: five deletes of one batch task
// waited their whole 300 s, and their retries too). Once the task is out of the view, a waiter
// (a retry resuming it) reads it once instead of adding it again.
TEST_F(CnsClientTest, AWaiterAfterItsTaskWasHeardDoneGetsTheAnswerToo) {
  TaskWaitOptions o;
  o.timeout = absl::Seconds(5);  // a lost answer fails here rather than in 5 minutes
  TaskWaiter waiter(*vim_, o);
  auto t = cns_->Start(DeleteOp("no-such-volume-again", true));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(waiter.Wait(*t).ok());
  const uint64_t adds = waiter.stats().adds;
  auto again = waiter.Wait(*t);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->done());
  EXPECT_EQ(waiter.stats().adds, adds) << "answered from what was heard";
  // Another task's ModifyListView takes the first out of the view.
  auto u = cns_->Start(DeleteOp("no-such-volume-other", true));
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_TRUE(waiter.Wait(*u).ok());
  ASSERT_EQ(recorder_.Count("ModifyListView"), static_cast<int>(adds) + 1);
  const int reads = recorder_.Count("RetrievePropertiesEx");
  auto third = waiter.Wait(*t);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->done());
  EXPECT_EQ(waiter.stats().adds, adds + 1);
  EXPECT_EQ(recorder_.Count("RetrievePropertiesEx"), reads + 1);
}

TEST_F(CnsClientTest, TaskWaitOutlivesALostSession) {
  const std::string v = Create("lost-session", 100, {Ds("ds-big")});
  ASSERT_TRUE(sim().SetCnsDelay("CnsExtendVolume", 500).ok());
  std::thread extend([&] { EXPECT_TRUE(cns_->ExtendVolume(v, 200).ok()); });
  // Once the task is in the view, every session ends: the next wait is NotAuthenticated, the
  // stream is made again on a new session and the task added again.
  ASSERT_TRUE(Eventually([&] { return recorder_.Count("ModifyListView") == 2; }));
  ASSERT_TRUE(sim().InvalidateSessions().ok());
  extend.join();
  ASSERT_TRUE(sim().SetCnsDelay("CnsExtendVolume", 0).ok());
  EXPECT_GE(recorder_.Count("CreatePropertyCollector"), 2);
  QueryFilter by_id;
  by_id.volume_ids = {v};
  auto q = cns_->QueryVolume(by_id);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].capacity_mb, 200);
}

TEST_F(CnsClientTest, TaskWaitsEndAtTheirDeadline) {
  CnsClientOptions o;
  o.task.timeout = absl::Milliseconds(500);
  CnsClient cns(*vim_, o);
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 3000).ok());
  const absl::Time start = absl::Now();
  absl::Status r = cns.DeleteVolume("no-such-volume");
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  EXPECT_EQ(r.code(), absl::StatusCode::kDeadlineExceeded) << r;
  EXPECT_LT(took, absl::Milliseconds(2500));
}

// A CSI RPC's deadline (common/call_deadline.h) ends its task wait, and the shared update stream
// survives it: with 2.6 s left the waiter asks vCenter for a 2 s wait, with less it only listens.
TEST_F(CnsClientTest, TaskWaitsEndAtTheCallersDeadlineWithoutBreakingTheStream) {
  TaskWaiter waiter(*vim_);
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 6000).ok());
  auto task = cns_->Start(DeleteOp("no-such-volume", true));
  ASSERT_TRUE(task.ok()) << task.status();
  for (absl::Duration left : {absl::Milliseconds(2600), absl::Milliseconds(800)}) {
    const absl::Time start = absl::Now();
    absl::StatusOr<TaskInfo> r;
    {
      ScopedCallDeadline deadline(start + left);
      r = waiter.Wait(*task);
    }
    const absl::Duration took = absl::Now() - start;
    ASSERT_FALSE(r.ok()) << left;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr("caller's deadline"));
    EXPECT_LT(took, left + absl::Milliseconds(700)) << left;
  }
  EXPECT_EQ(waiter.stats().stream_errors, 0u);
  // Without a deadline the same waiter sees the task end, on the stream it set up once.
  auto info = waiter.Wait(*task);
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->done());
  EXPECT_EQ(waiter.stats().setups, 1u);
  EXPECT_EQ(waiter.stats().stream_errors, 0u);
}

TEST_F(CnsClientTest, ATaskVcenterDoesNotKnowIsVanishedNeverNotFound) {
  // A task recorded before a vCenter restart: ModifyListView cannot resolve it.
  TaskWaiter waiter(*vim_);
  auto r = waiter.Wait({"Task", "task-999999"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsTaskVanished(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("task-999999"));
  // The waiter still works for a real task afterwards.
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  auto task = cns_->Start(DeleteOp("no-such-volume", true));
  ASSERT_TRUE(task.ok()) << task.status();
  auto info = waiter.Wait(*task);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->done());
}

TEST_F(CnsClientTest, ATaskWaiterGoingAwayEndsItsWaits) {
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 3000).ok());
  auto task = cns_->Start(DeleteOp("no-such-volume", true));
  ASSERT_TRUE(task.ok()) << task.status();
  auto waiter = std::make_unique<TaskWaiter>(*vim_);
  absl::Status got;
  std::thread wait([&] { got = waiter->Wait(*task).status(); });
  ASSERT_TRUE(Eventually([&] { return waiter->stats().waits > 0; }));
  const absl::Time start = absl::Now();
  waiter.reset();
  wait.join();
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  EXPECT_EQ(got.code(), absl::StatusCode::kUnavailable) << got;
  EXPECT_THAT(got.message(), HasSubstr("shutting down"));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(2500));
}

TEST_F(CnsClientTest, StreamBreaksWithAnswersBetweenAreNotInARow) {
  // One broken stream allowed in a row; the stream breaks twice, but answers in between (waits
  // of at most 1 s), so the wait goes on.
  TaskWaitOptions o;
  o.max_rejoins = 1;
  o.max_wait_seconds = 1;
  TaskWaiter waiter(*vim_, o);
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 6000).ok());
  auto task = cns_->Start(DeleteOp("no-such-volume", true));
  ASSERT_TRUE(task.ok()) << task.status();
  absl::StatusOr<TaskInfo> got;
  std::thread wait([&] { got = waiter.Wait(*task); });
  for (uint64_t round = 1; round <= 2; ++round) {
    // Stream `round` set up, then two waits begun on it: the first was answered.
    ASSERT_TRUE(Eventually([&] { return waiter.stats().setups == round; })) << round;
    const uint64_t waits = waiter.stats().waits;
    const bool answered = Eventually([&] {
      TaskWaiterStats st = waiter.stats();
      return st.setups == round && st.stream_errors == round - 1 && st.waits >= waits + 2;
    });
    const TaskWaiterStats st = waiter.stats();
    EXPECT_TRUE(answered) << "round " << round << ": setups " << st.setups << ", waits " << st.waits
                          << ", stream errors " << st.stream_errors;
    ASSERT_TRUE(sim().InvalidateSessions().ok());
  }
  wait.join();
  ASSERT_TRUE(sim().SetCnsDelay("CnsDeleteVolume", 0).ok());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->done());
  EXPECT_EQ(waiter.stats().stream_errors, 2u);
  EXPECT_EQ(waiter.stats().setups, 3u);
}

TEST_F(CnsClientTest, TransientErrorsAndSessions) {
  // A 503 before CNS ran anything is retried, for queries and changes alike.
  ASSERT_TRUE(sim().SetFault("503", 1, 0, "vsanHealth").ok());
  EXPECT_TRUE(cns_->QueryVolume({}).ok());
  ASSERT_TRUE(sim().SetFault("503", 1, 0, "vsanHealth").ok());
  EXPECT_FALSE(Create("after-503", 100, {Ds("ds-big")}).empty());
  // A dropped connection may have run a change: the Session does not send it again, and says
  // Unavailable. (Two drops: libcurl itself re-sends once when a reused connection closes
  // without an answer.)
  ASSERT_TRUE(sim().SetFault("drop", 2, 0, "vsanHealth").ok());
  auto dropped = cns_->CreateVolume(Spec("dropped", 100, {Ds("ds-big")}));
  ASSERT_TRUE(sim().SetFault("none").ok());
  ASSERT_FALSE(dropped.ok());
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(recorder_.Count("CnsCreateVolume"), 3);  // 503 + retry, then the dropped one

  // Sessions invalidated (e.g. vCenter restarted its session service): the vim25 session is
  // renewed once (CNS shares it: no session of its own), and the call is sent again.
  const uint64_t generation = vim_->session_generation();
  ASSERT_TRUE(sim().InvalidateSessions().ok());
  EXPECT_TRUE(cns_->QueryVolume({}).ok());
  EXPECT_EQ(vim_->session_generation(), generation + 1);
  auto sessions = sim().Sessions();
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  EXPECT_EQ(sessions->soap, 1) << "one vCenter session for vim25 and CNS";
}

TEST_F(CnsClientTest, ReportsTaskTimes) {
  constexpr int kN = 30;
  std::vector<double> client_ms;
  for (int i = 0; i < kN; ++i) {
    const absl::Time start = absl::Now();
    const std::string v = Create(absl::StrCat("t-", i), 10, {Ds("ds-big")});
    client_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    ASSERT_FALSE(v.empty());
    ASSERT_TRUE(cns_->DeleteVolume(v).ok());
  }
  auto stats = sim().CnsTaskStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_GE((*stats)["CnsCreateVolume"].count, kN);
  std::sort(client_ms.begin(), client_ms.end());
  std::cout << "CnsCreateVolume: simulator task p50 " << (*stats)["CnsCreateVolume"].p50_ms
            << " ms, client call p50 " << client_ms[kN / 2] << " ms ("
            << recorder_.Count("WaitForUpdatesEx") / (2.0 * kN) << " task waits per call)\n";
  EXPECT_GT(client_ms[kN / 2], 0);
}

// Stops the simulator: its own process, so the other tests keep theirs.
TEST(CnsClientDownTest, StoppedVcenterIsUnavailableNeverNotFound) {
  auto p = testing::VcsimProcess::Start(kSpec);
  ASSERT_TRUE(p.ok()) << p.status();
  std::unique_ptr<testing::VcsimProcess> vcsim = std::move(*p);
  StaticCredentialSource creds{Credentials{"admin", Secret("secret")}};
  ClientOptions o = ccm::testing::SimClientOptions(vcsim->info());
  o.timeout = absl::Seconds(5);
  o.connect_timeout = absl::Seconds(2);
  Client vim(o, &creds);
  CnsClient cns(vim);
  const Moref vm{"VirtualMachine", vcsim->info().vms.at(0).moid};
  CreateSpec spec;
  spec.name = "before-stop";
  spec.capacity_mb = 100;
  auto created = cns.CreateVolume(spec);
  ASSERT_TRUE(created.ok()) << created.status();

  vcsim->Stop();
  EXPECT_EQ(cns.QueryVolume({}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cns.CreateVolume(spec).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cns.DeleteVolume(created->volume_id).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cns.AttachVolume(created->volume_id, vm).status().code(),
            absl::StatusCode::kUnavailable);

  // Back (a restarted vCenter: every session gone): the client logs in and clones again.
  ASSERT_TRUE(vcsim->Restart().ok());
  auto q = cns.QueryVolume({});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_TRUE(q->volumes.empty());  // the simulator's CNS starts empty
}

}  // namespace
}  // namespace ccm::vsphere::cns
