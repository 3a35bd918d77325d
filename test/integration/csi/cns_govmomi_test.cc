// The CNS client against an independent CNS implementation: govmomi's own cns/simulator (the
// vcsim-govmomi-cns build of the fixture), which reads our requests with govmomi's wire types
// and answers as it does: a volume's whole life, and the answers that name no result for a volume
// it does not know (issue 54 item 8): a second deletion is success, an update or extension of a
// volume it does not have is NotFound, never "malformed".
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

TEST(CnsGovmomiTest, AVolumesLifeAndAnswersWithoutResults) {
  auto sim = ::ccm::testing::VcsimProcess::StartWithGovmomiCns(kSpec);
  ASSERT_TRUE(sim.ok()) << sim.status();
  StaticCredentialSource creds{Credentials{"admin", Secret("secret")}};
  Client vim(::ccm::testing::SimClientOptions((*sim)->info()), &creds);
  CnsClient cns(vim);
  Moref ds, vm{"VirtualMachine", (*sim)->info().vms.front().moid};
  auto all = RetrieveAllOfType(vim, "Datastore", {"name"});
  ASSERT_TRUE(all.ok()) << all.status();
  for (const ObjectContent& o : *all) {
    if (o.GetText("name") == "ds1") ds = o.obj;
  }
  CreateSpec spec;
  spec.name = "pvc-govmomi";
  spec.capacity_mb = 1024;
  spec.datastores = {ds};
  spec.metadata.container_cluster.cluster_id = "cluster-a";
  spec.metadata.container_cluster.vsphere_user = "admin";
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

}  // namespace
}  // namespace ccm::vsphere::cns
