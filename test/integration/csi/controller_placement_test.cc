// Placement over the real gRPC socket against the simulator (issue 19): datastores every node VM
// can reach, every host of a zone, storage policies through SPBM (the simulator's PBM service),
// datastore clusters, preferred datastores, and a node VM that moves.
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_fixture.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kVsanDefaultPolicy[] = "aa6d5a82-1c88-45da-85d3-3d74b91a5bad";

// zone-a: zone-a-host-0/1 (node-a0, node-a1); zone-b: zone-b-host-0/1 (node-b0 on host 0).
// Free space decides among shared datastores, so the ones that must never be chosen are biggest.
// The default datastore1, on every host, is too small for the tests' volumes.
constexpr char kSpec[] = R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "zone-a", "hosts": 2}, {"name": "zone-b", "hosts": 2}],
    "vms": [{"name": "node-a0", "cluster": "zone-a", "host_index": 0},
            {"name": "node-a1", "cluster": "zone-a", "host_index": 1},
            {"name": "node-b0", "cluster": "zone-b", "host_index": 0}],
    "datastores": [
      {"name": "datastore1", "capacity_mb": 512},
      {"name": "local-big", "capacity_mb": 1000000, "hosts": ["zone-a-host-0"]},
      {"name": "a-partial", "capacity_mb": 500000, "hosts": ["zone-a-host-0"]},
      {"name": "pod-local", "capacity_mb": 400000, "hosts": ["zone-a-host-0"],
       "datastore_cluster": "pod-1"},
      {"name": "ds-a", "capacity_mb": 100000, "clusters": ["zone-a"]},
      {"name": "ab0", "capacity_mb": 60000,
       "hosts": ["zone-a-host-0", "zone-a-host-1", "zone-b-host-0"]},
      {"name": "shared", "capacity_mb": 50000, "clusters": ["zone-a", "zone-b"]},
      {"name": "vsan-a", "capacity_mb": 30000, "clusters": ["zone-a"], "type": "vsan"},
      {"name": "gold", "capacity_mb": 20000, "clusters": ["zone-a", "zone-b"]},
      {"name": "pod-shared", "capacity_mb": 10000, "clusters": ["zone-a", "zone-b"],
       "datastore_cluster": "pod-1"},
      {"name": "b-pref", "capacity_mb": 5000, "clusters": ["zone-b"]}]}],
  "storage_policies": [{"name": "gold", "id": "gold-policy-id", "datastores": ["gold"]},
                       {"name": "silver", "id": "silver-policy-id", "datastores": ["shared"]},
                       {"name": "local", "id": "local-policy-id", "datastores": ["local-big"]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"},
                     {"name": "cns.vmware.topology-preferred-datastores"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/zone-a"]},
           {"name": "zone-b", "category": "k8s-zone", "attach": ["/dc1/host/zone-b"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]},
           {"name": "zone-b", "category": "cns.vmware.topology-preferred-datastores",
            "attach": ["/dc1/datastore/b-pref"]}]
})";

::csi::v1::Topology ZoneTopology(const std::string& zone) {
  ::csi::v1::Topology t;
  (*t.mutable_segments())[kZoneKey] = zone;
  (*t.mutable_segments())[kRegionKey] = "region-1";
  return t;
}

class ControllerPlacementTest : public ControllerFixture<ControllerPlacementTest> {
 public:
  static std::string Spec() { return kSpec; }

 protected:
  static ::csi::v1::CreateVolumeRequest Req(const std::string& name,
                                            std::map<std::string, std::string> params = {},
                                            const std::string& zone = "") {
    auto req = CreateReq(name, kGiB);
    for (const auto& [k, v] : params) (*req.mutable_parameters())[k] = v;
    if (!zone.empty()) {
      *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology(zone);
      *req.mutable_accessibility_requirements()->add_preferred() = ZoneTopology(zone);
    }
    return req;
  }
  // The datastore name CNS placed the volume on ("" on failure, with the error reported).
  static std::string PlacedOn(const ::csi::v1::CreateVolumeRequest& req,
                              std::string* policy = nullptr) {
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = Create(req, &resp);
    EXPECT_TRUE(s.ok()) << req.name() << ": " << s.error_message();
    if (!s.ok()) return "";
    auto v = env().CnsVolume(resp.volume().volume_id());
    EXPECT_TRUE(v.ok()) << v.status();
    if (!v.ok()) return "";
    if (policy != nullptr) *policy = v->policy_id;
    return v->datastore_name;
  }
};

TEST_F(ControllerPlacementTest, UnconstrainedVolumesNeverGoToAHostLocalDatastore) {
  // local-big, a-partial and pod-local have the most space but one host mounts them; ab0 is
  // mounted by the hosts of all three node VMs.
  EXPECT_EQ(PlacedOn(Req("pvc-unconstrained")), "ab0");
}

TEST_F(ControllerPlacementTest, AZoneGetsADatastoreEveryHostOfTheZoneMounts) {
  // a-partial (more space) is mounted by zone-a-host-0 only.
  EXPECT_EQ(PlacedOn(Req("pvc-zone-a", {}, "zone-a")), "ds-a");
}

TEST_F(ControllerPlacementTest, PreferredDatastoreOfTheZoneFirst) {
  // b-pref is the smallest zone-b datastore, tagged preferred for zone-b.
  EXPECT_EQ(PlacedOn(Req("pvc-zone-b", {}, "zone-b")), "b-pref");
}

TEST_F(ControllerPlacementTest, AStoragePolicyPlacesOnItsCompatibleDatastoreAndCnsRecordsIt) {
  std::string policy;
  EXPECT_EQ(PlacedOn(Req("pvc-gold", {{"storagepolicyname", "gold"}}), &policy), "gold");
  EXPECT_EQ(policy, "gold-policy-id");
  // The same policy again: names and compatibility come from the cache, no SPBM request.
  ASSERT_TRUE(env().sim().ResetCounters().ok());
  EXPECT_EQ(PlacedOn(Req("pvc-gold-2", {{"storagepolicyname", "gold"}}), &policy), "gold");
  auto soap = env().sim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  for (const auto& [method, n] : *soap) {
    EXPECT_FALSE(absl::StartsWith(method, "Pbm")) << method << " x" << n;
  }
}

TEST_F(ControllerPlacementTest, PolicyErrorsNameThePolicy) {
  grpc::Status unknown = Create(Req("pvc-platinum", {{"storagepolicyname", "platinum"}}));
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(unknown.error_message(), HasSubstr("\"platinum\""));
  // Compatible only with a datastore one host mounts.
  grpc::Status local = Create(Req("pvc-local", {{"storagepolicyname", "local"}}));
  EXPECT_EQ(local.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << local.error_message();
  EXPECT_THAT(local.error_message(), HasSubstr("storage policy \"local\""));
  // datastoreurl + a policy it does not satisfy.
  grpc::Status both =
      Create(Req("pvc-gold-shared",
                 {{"storagepolicyname", "gold"}, {"datastoreurl", env().DatastoreUrl("shared")}}));
  EXPECT_EQ(both.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << both.error_message();
}

TEST_F(ControllerPlacementTest, VsanDatastoreWithoutAPolicyGetsItsDefaultPolicy) {
  std::string policy;
  EXPECT_EQ(PlacedOn(Req("pvc-vsan", {{"datastoreurl", env().DatastoreUrl("vsan-a")}}, "zone-a"),
                     &policy),
            "vsan-a");
  EXPECT_EQ(policy, kVsanDefaultPolicy);
}

TEST_F(ControllerPlacementTest, ADatastoreClusterPlacesOnASharedMember) {
  // pod-local has more space but one host mounts it.
  EXPECT_EQ(PlacedOn(Req("pvc-pod", {{"datastoreurl", "pod-1"}})), "pod-shared");
}

TEST_F(ControllerPlacementTest, SameNameWithAnotherPolicyOrDatastoreIsAlreadyExists) {
  ASSERT_EQ(PlacedOn(Req("pvc-same", {{"storagepolicyname", "gold"}})), "gold");
  EXPECT_TRUE(Create(Req("pvc-same", {{"storagepolicyname", "gold"}})).ok());
  grpc::Status silver = Create(Req("pvc-same", {{"storagepolicyname", "silver"}}));
  EXPECT_EQ(silver.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(silver.error_message(), HasSubstr("storage policy gold-policy-id"));
  grpc::Status elsewhere =
      Create(Req("pvc-same", {{"datastoreurl", env().DatastoreUrl("shared")}}));
  EXPECT_EQ(elsewhere.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  grpc::Status zone_b_only = Create(Req("pvc-zone-a-only", {}, "zone-a"));
  ASSERT_TRUE(zone_b_only.ok());
  EXPECT_EQ(Create(Req("pvc-zone-a-only", {}, "zone-b")).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(ControllerPlacementTest, ANodeVmMovingToAnotherHostChangesTheSharedSet) {
  ASSERT_EQ(PlacedOn(Req("pvc-before-move")), "ab0");
  // node-b0 moves to zone-b-host-1, which does not mount ab0.
  ASSERT_TRUE(env().sim().RelocateVm("node-b0", "/dc1/host/zone-b", "zone-b-host-1").ok());
  std::string placed;
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    ::csi::v1::CreateVolumeResponse resp;
    if (!Create(Req("pvc-after-move"), &resp).ok()) return false;
    auto v = env().CnsVolume(resp.volume().volume_id());
    placed = v.ok() ? v->datastore_name : "";
    if (placed == "ab0") {  // the VM cache had not seen the move yet: try again
      grpc::ClientContext ctx;
      ::csi::v1::DeleteVolumeRequest del;
      del.set_volume_id(resp.volume().volume_id());
      ::csi::v1::DeleteVolumeResponse ignored;
      EXPECT_TRUE(env().controller().DeleteVolume(&ctx, del, &ignored).ok());
    }
    return placed != "ab0";
  }));
  EXPECT_EQ(placed, "shared");
  ASSERT_TRUE(env().sim().RelocateVm("node-b0", "/dc1/host/zone-b", "zone-b-host-0").ok());
}

// Issue 54 item 6: a datastore CNS manager suspended (custom value
// cns.vmware.com/datastoreSuspended) is left out as soon as the inventory's stream reports the
// value, named when asked for, and taken again once the value is cleared.
TEST_F(ControllerPlacementTest, ASuspendedDatastoreIsLeftOutUntilResumed) {
  auto suspended = [&](bool want) {
    return ccm::testing::Eventually([&] {
      auto view = env().backend().inventory().Snapshot();
      if (!view.ok()) return false;
      for (const DatastoreCandidate& c : (*view)->datastores) {
        if (c.name == "ab0") return c.suspended == want;
      }
      return false;
    });
  };
  ASSERT_TRUE(env()
                  .sim()
                  .SetDatastoreCustomValue("ab0", "cns.vmware.com/suspension",
                                           "cns.vmware.com/datastoreSuspended")
                  .ok());
  ASSERT_TRUE(suspended(true)) << "the stream reports customValue";
  EXPECT_EQ(PlacedOn(Req("pvc-ab0-suspended")), "shared");
  std::string url;
  {
    auto view = env().backend().inventory().Snapshot();
    ASSERT_TRUE(view.ok());
    for (const DatastoreCandidate& c : (*view)->datastores) {
      if (c.name == "ab0") url = c.url;
    }
  }
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status named = Create(Req("pvc-ab0-by-url", {{"datastoreurl", url}}), &resp);
  EXPECT_EQ(named.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(named.error_message(),
              AllOf(HasSubstr("takes new volumes now"),
                    HasSubstr("cns.vmware.com/datastoreSuspended"), HasSubstr("\"ab0\"")));

  ASSERT_TRUE(env().sim().SetDatastoreCustomValue("ab0", "cns.vmware.com/suspension", "").ok());
  ASSERT_TRUE(suspended(false));
  EXPECT_EQ(PlacedOn(Req("pvc-ab0-by-url", {{"datastoreurl", url}})), "ab0");
}

// Issue 42 item 5 (the reference's csi-auth-check): datastores where the user lacks
// Datastore.FileManagement (or System.Read) are left out, read in one
// FetchUserPrivilegeOnEntities per refresh, and errors name them.
TEST(ControllerPlacementPrivilegesTest, DatastoresWithoutFileManagementAreLeftOutAndNamed) {
  auto env = ControllerEnv::StartWith({kSpec}, {});
  ASSERT_TRUE(env.ok()) << env.status();
  ControllerEnv& e = **env;
  // From its first grant on, csi-user has exactly what the grants give: both privileges on
  // "shared", only System.Read on "ab0".
  ASSERT_TRUE(
      e.sim()
          .Grant("csi-user", "/dc1/datastore/shared", {"Datastore.FileManagement", "System.Read"})
          .ok());
  ASSERT_TRUE(e.sim().Grant("csi-user", "/dc1/datastore/ab0", {"System.Read"}).ok());
  ASSERT_TRUE(e.sim().ResetCounters().ok());
  const uint64_t full_before = e.backend().inventory().stats().full_refreshes;
  e.backend().inventory().RequestFullRefresh();
  ASSERT_TRUE(ccm::testing::Eventually(
      [&] { return e.backend().inventory().stats().full_refreshes > full_before; }));
  auto soap = e.sim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  EXPECT_EQ((*soap)["FetchUserPrivilegeOnEntities"], 1) << "one call for every datastore";

  auto create = [&](const std::string& name, std::map<std::string, std::string> params,
                    ::csi::v1::CreateVolumeResponse* resp) {
    grpc::ClientContext ctx;
    ::csi::v1::CreateVolumeRequest req = CreateReq(name, kGiB);
    for (const auto& [k, v] : params) (*req.mutable_parameters())[k] = v;
    return e.controller().CreateVolume(&ctx, req, resp);
  };
  // ab0 (shared by every node VM's host, more free space) is left out: "shared" it is.
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = create("pvc-privileged", {}, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto v = e.CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->datastore_name, "shared");

  // Asked for by URL: the error says which privilege the user lacks there.
  s = create("pvc-ab0", {{"datastoreurl", e.DatastoreUrl("ab0")}}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("\"ab0\""),
                                       HasSubstr("user csi-user lacks Datastore.FileManagement")));
  // A policy compatible only with datastores the user may not use: named as skipped.
  s = create("pvc-gold", {{"storagepolicyname", "gold"}}, &resp);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.error_message(), HasSubstr("skipped for privileges"));

  // vCenter fails the privilege call: the privileges read last stay (ab0 still left out).
  ASSERT_TRUE(e.sim().SetFault("503", -1, 0, "FetchUserPrivilegeOnEntities").ok());
  const uint64_t full_faulted = e.backend().inventory().stats().full_refreshes;
  e.backend().inventory().RequestFullRefresh();
  ASSERT_TRUE(ccm::testing::Eventually(
      [&] { return e.backend().inventory().stats().full_refreshes > full_faulted; }));
  s = create("pvc-after-fault", {}, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v = e.CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->datastore_name, "shared");
  ASSERT_TRUE(e.sim().SetFault("none").ok());
}

TEST(ControllerPlacementNodesTest, WithoutNodeVmsAnUnconstrainedVolumeHasNowhereToGo) {
  ControllerEnv::Options o;
  o.not_nodes = {"node-a0", "node-a1", "node-b0"};
  auto env = ControllerEnv::StartWith({kSpec}, o);
  ASSERT_TRUE(env.ok()) << env.status();
  grpc::ClientContext ctx;
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = (*env)->controller().CreateVolume(&ctx, CreateReq("pvc-no-nodes", kGiB), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("no node VM is known"), HasSubstr("providerID")));
  // A Node no vSphere CPI initialised (no providerID) and no node plugin registered: named.
  ASSERT_TRUE((*env)->PutBareNode("node-a1").ok());
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    grpc::ClientContext c1;
    ::csi::v1::CreateVolumeResponse r;
    s = (*env)->controller().CreateVolume(&c1, CreateReq("pvc-no-nodes", kGiB), &r);
    return absl::StrContains(s.error_message(), "known by neither: node-a1");
  })) << s.error_message();
  // Its node plugin registers (issue 44): the CSINode's node ID names its VM, whose host decides.
  ASSERT_TRUE((*env)->PutCsiNode("node-a1").ok());
  std::string placed;
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    grpc::ClientContext c2;
    ::csi::v1::CreateVolumeResponse r;
    if (!(*env)->controller().CreateVolume(&c2, CreateReq("pvc-one-node", kGiB), &r).ok())
      return false;
    auto v = (*env)->CnsVolume(r.volume().volume_id());
    placed = v.ok() ? v->datastore_name : "";
    return true;
  }));
  EXPECT_EQ(placed, "ds-a");  // the biggest datastore zone-a-host-1 mounts
}

}  // namespace
}  // namespace ccm::csi::testing
