// The CNS client against an independent CNS implementation: govmomi's own cns/simulator (the
// vcsim-govmomi-cns build of the fixture), which reads our requests with govmomi's wire types
// and answers as it does: a volume's whole life, and the answers that name no result for a volume
// it does not know (issue 54 item 8): a second deletion is success, an update or extension of a
// volume it does not have is NotFound, never "malformed"; and the syncer's shared requests
// (issue 55): several volumes in one CnsQueryVolume and in one CnsUpdateVolumeMetadata task.
#include <algorithm>
#include <memory>
#include <set>

#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gtest/gtest.h"
#include "testing/static_credentials.h"
#include "vsphere/client.h"
#include "vsphere/cns/cns_client.h"
#include "vsphere/property_collector.h"

namespace ccm::vsphere::cns {
namespace {

constexpr char kSpec[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{"name": "dc1", "clusters": [{"name": "c1", "hosts": 1}],
    "vms": [{"name": "node-1"}],
    "datastores": [{"name": "ds1", "capacity_mb": 10240}]}]
})";

class CnsGovmomiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sim = ::ccm::testing::VcsimProcess::StartWithGovmomiCns(kSpec);
    ASSERT_TRUE(sim.ok()) << sim.status();
    sim_ = *std::move(sim);
    vim_ = std::make_unique<Client>(::ccm::testing::SimClientOptions(sim_->info()), &creds_);
    cns_ = std::make_unique<CnsClient>(*vim_);
    vm_ = {"VirtualMachine", sim_->info().vms.front().moid};
    auto all = RetrieveAllOfType(*vim_, "Datastore", {"name"});
    ASSERT_TRUE(all.ok()) << all.status();
    for (const ObjectContent& o : *all) {
      if (o.GetText("name") == "ds1") ds_ = o.obj;
    }
  }
  CreateSpec Spec(const std::string& name) {
    CreateSpec spec;
    spec.name = name;
    spec.capacity_mb = 1024;
    spec.datastores = {ds_};
    spec.metadata.container_cluster.cluster_id = "cluster-a";
    spec.metadata.container_cluster.vsphere_user = "admin";
    return spec;
  }

  StaticCredentialSource creds_{Credentials{"admin", Secret("secret")}};
  std::unique_ptr<::ccm::testing::VcsimProcess> sim_;
  std::unique_ptr<Client> vim_;
  std::unique_ptr<CnsClient> cns_;
  Moref ds_, vm_;
};

TEST_F(CnsGovmomiTest, AVolumesLifeAndAnswersWithoutResults) {
  CnsClient& cns = *cns_;
  const Moref vm = vm_;
  const CreateSpec spec = Spec("pvc-govmomi");
  auto created = cns.CreateVolume(spec);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string id = created->volume_id;
  QueryFilter f;
  f.volume_ids = {id};
  auto q = cns.QueryVolume(f);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 1u);
  EXPECT_EQ(q->volumes[0].name, "pvc-govmomi");

  auto disk = cns.AttachVolume(id, vm);
  ASSERT_TRUE(disk.ok()) << disk.status();
  EXPECT_FALSE(disk->empty());
  EXPECT_TRUE(cns.DetachVolume(id, vm).ok());
  EXPECT_TRUE(cns.ExtendVolume(id, 2048).ok());
  VolumeMetadata m;
  m.container_cluster = spec.metadata.container_cluster;
  m.entity_metadata = {{"PERSISTENT_VOLUME", "pv-govmomi", "", {}, false, "cluster-a", {}}};
  EXPECT_TRUE(cns.UpdateVolumeMetadata(id, m).ok());

  ASSERT_TRUE(cns.DeleteVolume(id).ok());
  // A retried deletion: that CNS answers no result for a volume it does not know.
  absl::Status again = cns.DeleteVolume(id);
  EXPECT_TRUE(again.ok()) << again;
  EXPECT_EQ(cns.UpdateVolumeMetadata(id, m).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cns.ExtendVolume(id, 4096).code(), absl::StatusCode::kNotFound);
}

// The syncer's shared requests: the volumes a worker took together in one CnsQueryVolume (a
// volume CNS does not know is simply left out of the answer), and their entities in one
// CnsUpdateVolumeMetadata task, each volume's outcome in the order asked.
TEST_F(CnsGovmomiTest, SeveralVolumesInOneQueryAndOneMetadataTask) {
  std::vector<std::string> ids;
  for (const char* name : {"pvc-a", "pvc-b", "pvc-c"}) {
    auto created = cns_->CreateVolume(Spec(name));
    ASSERT_TRUE(created.ok()) << created.status();
    ids.push_back(created->volume_id);
  }
  QueryFilter f;
  f.volume_ids = {ids[2], "0f3c3e2a-5b7d-4c1e-9a8b-00000000dead", ids[0]};
  auto q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok()) << q.status();
  std::set<std::string> names;
  for (const Volume& v : q->volumes) names.insert(v.name);
  EXPECT_EQ(names, (std::set<std::string>{"pvc-a", "pvc-c"}));

  std::vector<MetadataUpdate> updates;
  for (size_t i = 0; i < ids.size(); ++i) {
    VolumeMetadata m;
    m.container_cluster = Spec("x").metadata.container_cluster;
    m.entity_metadata = {{"PERSISTENT_VOLUME",
                          "pv-" + std::to_string(i),
                          "",
                          {{"app", "web"}},
                          false,
                          "cluster-a",
                          {}}};
    updates.push_back({ids[i], m});
  }
  auto done = cns_->UpdateVolumesMetadata(updates);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->size(), 3u);
  for (const absl::Status& s : *done) EXPECT_TRUE(s.ok()) << s;
  f.volume_ids = ids;
  q = cns_->QueryVolume(f);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->volumes.size(), 3u);
  for (const Volume& v : q->volumes) {
    const size_t i = std::find(ids.begin(), ids.end(), v.volume_id) - ids.begin();
    ASSERT_LT(i, ids.size());
    ASSERT_EQ(v.metadata.entity_metadata.size(), 1u) << v.name;
    EXPECT_EQ(v.metadata.entity_metadata[0].entity_name, "pv-" + std::to_string(i));
  }
  // A volume CNS does not have, among others: its own NotFound, the others written.
  updates = {updates[0], updates[1]};
  updates[1].volume_id = "0f3c3e2a-5b7d-4c1e-9a8b-00000000dead";
  done = cns_->UpdateVolumesMetadata(updates);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->size(), 2u);
  EXPECT_TRUE((*done)[0].ok()) << (*done)[0];
  EXPECT_EQ((*done)[1].code(), absl::StatusCode::kNotFound) << (*done)[1];
}

}  // namespace
}  // namespace ccm::vsphere::cns
