// File volumes (ReadWriteMany / ReadOnlyMany: vSAN file shares) over the real gRPC socket against
// the simulator's vSAN and CNS (issue 45): create on the vSAN datastore of the cluster with file
// services, the [NetPermissions] as the share's access rules, publish to two nodes (the NFSv4.1
// access point), expand, what file volumes refuse, delete; file services off -> the error names
// the datastores and what to enable, and turning them on is seen at the next refresh.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_calls.h"
#include "integration/csi/controller_env.h"
#include "nlohmann/json.hpp"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Mode = ::csi::v1::VolumeCapability::AccessMode;

// Cluster fs (vSAN with file services: vsan-fs) and cluster plain (vSAN without: vsan-plain);
// node-1 runs in fs, node-2 in plain; vmfs-1 everywhere, bigger than both.
constexpr char kSpec[] = R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "fs", "hosts": 2, "vsan_file_services": true},
                 {"name": "plain", "hosts": 1, "vsan": true}],
    "vms": [{"name": "node-1", "cluster": "fs"}, {"name": "node-2", "cluster": "plain"}],
    "datastores": [
      {"name": "vmfs-1", "capacity_mb": 900000},
      {"name": "vsan-fs", "capacity_mb": 100000, "clusters": ["fs"], "type": "vsan"},
      {"name": "vsan-plain", "capacity_mb": 100000, "clusters": ["plain"], "type": "vsan"}]}]
})";

::csi::v1::VolumeCapability FileCap(Mode::Mode mode = Mode::MULTI_NODE_MULTI_WRITER) {
  ::csi::v1::VolumeCapability c = MountCap("");
  c.mutable_access_mode()->set_mode(mode);
  return c;
}

::csi::v1::CreateVolumeRequest FileReq(const std::string& name, int64_t bytes = 2 * kGiB) {
  ::csi::v1::CreateVolumeRequest req = CreateReq(name, bytes);
  *req.mutable_volume_capabilities(0) = FileCap();
  return req;
}

class ControllerFileTest : public ::testing::Test {
 protected:
  void Start(const std::string& spec, ControllerEnv::Options options = {}) {
    auto env = ControllerEnv::StartWith({spec}, options);
    ASSERT_TRUE(env.ok()) << env.status();
    env_ = *std::move(env);
  }
  ::csi::v1::Controller::Stub& c() { return env_->controller(); }
  std::unique_ptr<ControllerEnv> env_;
};

TEST_F(ControllerFileTest, CreatePublishToTwoNodesExpandAndDelete) {
  ControllerEnv::Options o;
  o.configure = [](cloud::Config& c) {
    c.net_permissions = {{"A", "10.20.0.0/16", "READ_WRITE", false}, {"B", "*", "READ_ONLY", true}};
  };
  ASSERT_NO_FATAL_FAILURE(Start(kSpec, o));
  ::csi::v1::CreateVolumeResponse created;
  grpc::Status s = CallCreate(c(), FileReq("pvc-rwx"), &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string id = created.volume().volume_id();
  EXPECT_THAT(id, StartsWith("file:"));
  EXPECT_EQ(created.volume().capacity_bytes(), 2 * kGiB);
  EXPECT_EQ(created.volume().volume_context().at("type"), "vSphere CNS File Volume");
  EXPECT_EQ(created.volume().accessible_topology_size(), 0);  // not zonal, as the reference

  auto cns = env_->CnsVolume(id);
  ASSERT_TRUE(cns.ok()) << cns.status();
  EXPECT_EQ(cns->datastore_name, "vsan-fs");
  using P = ccm::testing::VcsimCnsVolume::Permission;
  EXPECT_EQ(cns->permissions,
            (std::vector<P>{{"10.20.0.0/16", "READ_WRITE", true}, {"*", "READ_ONLY", false}}));
  const std::string export_path = cns->access_points.at("NFSv4.1");
  EXPECT_EQ(export_path, "10.0.200.1:/vsanfs/pvc-rwx");

  ::csi::v1::CreateVolumeResponse again;  // idempotent on the name
  ASSERT_TRUE(CallCreate(c(), FileReq("pvc-rwx"), &again).ok());
  EXPECT_EQ(again.volume().volume_id(), id);
  EXPECT_EQ(again.volume().volume_context().at("type"), "vSphere CNS File Volume");
  ::csi::v1::CreateVolumeRequest as_block = CreateReq("pvc-rwx", 2 * kGiB);
  s = CallCreate(c(), as_block);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("type file volume (requested: a block volume)"));

  // vCenter load: a second file volume within the refresh interval reads no vSAN configuration
  // again; a CNS fault on its create is named, and the retry creates it.
  auto before = env_->sim().CnsCounters();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GE((*before)["VsanClusterGetConfig"], 2);  // the first create read both clusters
  ASSERT_TRUE(
      env_->sim().SetCnsFault("CnsCreateVolume", "CnsFault", "vSAN file service is busy").ok());
  s = CallCreate(c(), FileReq("pvc-rwx-2"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.error_message(), HasSubstr("vSAN file service is busy"));
  ::csi::v1::CreateVolumeResponse second;
  s = CallCreate(c(), FileReq("pvc-rwx-2"), &second);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto counters = env_->sim().CnsCounters();
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ((*counters)["VsanClusterGetConfig"], (*before)["VsanClusterGetConfig"]);
  EXPECT_EQ((*counters)["CnsCreateVolume"], (*before)["CnsCreateVolume"] + 2);
  EXPECT_NE(second.volume().volume_id(), id);

  for (const char* node : {"node-1", "node-2"}) {
    ::csi::v1::ControllerPublishVolumeRequest pub = PubReq(id, env_->VmUuid(node));
    *pub.mutable_volume_capability() = FileCap();
    ::csi::v1::ControllerPublishVolumeResponse resp;
    s = CallPublish(c(), pub, &resp);
    ASSERT_TRUE(s.ok()) << node << ": " << s.error_message();
    EXPECT_EQ(resp.publish_context().at("type"), "vSphere CNS File Volume");
    EXPECT_EQ(resp.publish_context().at("Nfsv4AccessPoint"), export_path);
  }
  cns = env_->CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->attached_vm, "");  // no disk attach for a share

  ::csi::v1::ControllerPublishVolumeRequest rwo = PubReq(id, env_->VmUuid("node-1"));
  s = CallPublish(c(), rwo);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("is a file volume"));
  // ListVolumes: published where the VolumeAttachments say (vCenter has no record of a share's
  // publishing), so the external-attacher's reconciliation keeps both attached.
  const nlohmann::json pv = {
      {"apiVersion", "v1"},
      {"kind", "PersistentVolume"},
      {"metadata", {{"name", "pv-rwx"}}},
      {"spec",
       {{"accessModes", {"ReadWriteMany"}},
        {"capacity", {{"storage", "2Gi"}}},
        {"csi", {{"driver", "csi.vsphere.vmware.com"}, {"volumeHandle", id}}}}}};
  ASSERT_TRUE(env_->api().Create("persistentvolumes", pv).ok());
  for (const char* node : {"node-1", "node-2"}) {
    const nlohmann::json va = {{"apiVersion", "storage.k8s.io/v1"},
                               {"kind", "VolumeAttachment"},
                               {"metadata", {{"name", absl::StrCat("csi-", node)}}},
                               {"spec",
                                {{"attacher", "csi.vsphere.vmware.com"},
                                 {"nodeName", node},
                                 {"source", {{"persistentVolumeName", "pv-rwx"}}}}},
                               {"status", {{"attached", true}}}};
    ASSERT_TRUE(env_->api().Put("volumeattachments", va).ok());
  }
  auto published = [&] {
    ::csi::v1::ListVolumesResponse listed;
    if (!CallList(c(), "", 100, &listed).ok()) return std::vector<std::string>{};
    for (const auto& e : listed.entries()) {
      if (e.volume().volume_id() == id) {
        std::vector<std::string> out(e.status().published_node_ids().begin(),
                                     e.status().published_node_ids().end());
        std::sort(out.begin(), out.end());
        return out;
      }
    }
    return std::vector<std::string>{};
  };
  std::vector<std::string> want = {env_->VmUuid("node-1"), env_->VmUuid("node-2")};
  std::sort(want.begin(), want.end());
  EXPECT_TRUE(ccm::testing::Eventually([&] { return published() == want; }));
  EXPECT_EQ(published(), want);

  EXPECT_TRUE(CallUnpublish(c(), id, env_->VmUuid("node-1")).ok());
  EXPECT_TRUE(CallUnpublish(c(), id, env_->VmUuid("node-2")).ok());

  grpc::ClientContext ectx;
  ::csi::v1::ControllerExpandVolumeRequest expand;
  expand.set_volume_id(id);
  expand.mutable_capacity_range()->set_required_bytes(4 * kGiB);
  *expand.mutable_volume_capability() = FileCap();
  ::csi::v1::ControllerExpandVolumeResponse expanded;
  s = c().ControllerExpandVolume(&ectx, expand, &expanded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(expanded.capacity_bytes(), 4 * kGiB);
  EXPECT_FALSE(expanded.node_expansion_required());
  EXPECT_EQ(env_->CnsVolume(id)->capacity_mb, 4096);

  grpc::ClientContext sctx;
  ::csi::v1::CreateSnapshotRequest snap;
  snap.set_name("snap-1");
  snap.set_source_volume_id(id);
  ::csi::v1::CreateSnapshotResponse snapped;
  s = c().CreateSnapshot(&sctx, snap, &snapped);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("file volume"));

  grpc::ClientContext vctx;
  ::csi::v1::ValidateVolumeCapabilitiesRequest validate;
  validate.set_volume_id(id);
  *validate.add_volume_capabilities() = MountCap();
  ::csi::v1::ValidateVolumeCapabilitiesResponse verdict;
  ASSERT_TRUE(c().ValidateVolumeCapabilities(&vctx, validate, &verdict).ok());
  EXPECT_FALSE(verdict.has_confirmed());
  EXPECT_THAT(verdict.message(), HasSubstr("file volume"));

  ASSERT_TRUE(CallDelete(c(), id).ok());
  EXPECT_FALSE(env_->CnsVolume(id).ok());
  const std::string metrics = env_->registry().Render();
  for (const char* op :
       {"create-volume", "attach-volume", "detach-volume", "expand-volume", "delete-volume"}) {
    EXPECT_THAT(metrics,
                HasSubstr(absl::StrCat(
                    "vsphere_csi_volume_ops_histogram_count{voltype=\"file\",optype=\"", op)))
        << op;
  }
  EXPECT_TRUE(CallDelete(c(), id).ok());  // gone: success
}

TEST_F(ControllerFileTest, DefaultsTargetsAndFileServicesSwitchedOn) {
  // File services off everywhere; the refresh interval short so that switching them on is seen.
  std::string spec = kSpec;
  spec.replace(spec.find(R"("vsan_file_services": true)"), 26, R"("vsan": true)");
  ControllerEnv::Options o;
  o.datastore_interval = absl::Seconds(1);
  ASSERT_NO_FATAL_FAILURE(Start(spec, o));
  grpc::Status s = CallCreate(c(), FileReq("pvc-off"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  for (const char* part : {"vsan-fs (", "vSAN file service is not enabled on its cluster fs (",
                           "vsan-plain (", "its cluster plain (", "enabled on the vSAN cluster"}) {
    EXPECT_THAT(s.error_message(), HasSubstr(part));
  }
  EXPECT_THAT(s.error_message(), ::testing::Not(HasSubstr("vmfs-1 (ds")));

  ASSERT_TRUE(env_->sim().SetFileService("plain", true).ok());
  ::csi::v1::CreateVolumeResponse created;
  EXPECT_TRUE(
      ccm::testing::Eventually([&] { return CallCreate(c(), FileReq("pvc-on"), &created).ok(); }));
  auto cns = env_->CnsVolume(created.volume().volume_id());
  ASSERT_TRUE(cns.ok()) << cns.status();
  EXPECT_EQ(cns->datastore_name, "vsan-plain");
  // No [NetPermissions]: the reference's default rule.
  using P = ccm::testing::VcsimCnsVolume::Permission;
  EXPECT_EQ(cns->permissions, (std::vector<P>{{"*", "READ_WRITE", true}}));

  // datastoreurl naming a datastore without file services.
  ::csi::v1::CreateVolumeRequest named = FileReq("pvc-named");
  (*named.mutable_parameters())["datastoreurl"] = env_->DatastoreUrl("vsan-fs");
  s = CallCreate(c(), named);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("vsan-fs ("));

  // A read-only-many claim is a file volume too; block access is refused before CNS is asked.
  ::csi::v1::CreateVolumeRequest rox = FileReq("pvc-rox");
  *rox.mutable_volume_capabilities(0) = FileCap(Mode::MULTI_NODE_READER_ONLY);
  ASSERT_TRUE(CallCreate(c(), rox).ok());
  ::csi::v1::CreateVolumeRequest block = FileReq("pvc-block");
  block.mutable_volume_capabilities(0)->mutable_block();
  s = CallCreate(c(), block);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("raw block"));
}

TEST_F(ControllerFileTest, TargetClustersFromTheConfig) {
  std::string spec = kSpec;
  spec.replace(spec.find(R"("vsan": true)"), 12, R"("vsan_file_services": true)");
  ControllerEnv::Options o;
  o.configure = [](cloud::Config& c) { c.vcenters[0].target_vsan_file_share_clusters = {"plain"}; };
  ASSERT_NO_FATAL_FAILURE(Start(spec, o));
  // vSAN's configuration cannot be read: an error naming what and why, nothing created; the
  // retry reads it again and creates the volume.
  ASSERT_TRUE(
      env_->sim().SetCnsFault("VsanClusterGetConfig", "SystemError", "down", -1, "soap").ok());
  grpc::Status s = CallCreate(c(), FileReq("pvc-target"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("read the vSAN file services: vc1: vSAN configuration "
                                           "of cluster"));
  EXPECT_THAT(s.error_message(), HasSubstr("SystemError: down"));
  auto volumes = env_->sim().CnsVolumes();
  ASSERT_TRUE(volumes.ok()) << volumes.status();
  EXPECT_TRUE(volumes->empty());
  ASSERT_TRUE(env_->sim().ClearCnsFaults().ok());
  ::csi::v1::CreateVolumeResponse created;
  s = CallCreate(c(), FileReq("pvc-target"), &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(env_->CnsVolume(created.volume().volume_id())->datastore_name, "vsan-plain");
}

}  // namespace
}  // namespace ccm::csi::testing
