#include "csi/webhook/admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::csi::admission_test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

Json Request(const std::string& kind, const std::string& op, Json object, Json old = nullptr) {
  Json r = {{"uid", "u-1"}, {"kind", {{"kind", kind}}}, {"operation", op}, {"object", object}};
  if (!old.is_null()) r["oldObject"] = old;
  return r;
}

Json Sc(const std::string& provisioner, Json params) {
  return {{"metadata", {{"name", "sc"}}}, {"provisioner", provisioner}, {"parameters", params}};
}

Json Pvc(const std::string& size, const std::string& mode = "ReadWriteOnce") {
  return {{"metadata", {{"name", "data"}, {"namespace", "ns1"}}},
          {"spec",
           {{"accessModes", {mode}},
            {"volumeName", "pv-1"},
            {"resources", {{"requests", {{"storage", size}}}}}}}};
}

struct World {
  std::string policy = "Delete";
  std::vector<std::string> snapshots = {"snap-1"};
  bool terminating = false;
  bool api_down = false;
  AdmissionLookups Lookups() {
    AdmissionLookups l;
    l.reclaim_policy = [this](const std::string&) -> absl::StatusOr<std::string> {
      if (api_down) return absl::UnavailableError("down");
      return policy;
    };
    l.snapshots_of = [this](const std::string&,
                            const std::string&) -> absl::StatusOr<std::vector<std::string>> {
      if (api_down) return absl::UnavailableError("down");
      return snapshots;
    };
    l.namespace_terminating = [this](const std::string&) -> absl::StatusOr<bool> {
      return terminating;
    };
    return l;
  }
};

TEST(AdmissionTest, Decisions) {
  struct Case {
    std::string name;
    Json request;
    std::function<void(World&)> setup;
    bool allowed;
    std::string message;
  };
  const Json csi = {{"driver", "csi.vsphere.vmware.com"}, {"volumeHandle", "v1"}};
  const Json file_pv = {
      {"spec",
       {{"accessModes", {"ReadWriteMany"}}, {"csi", csi}, {"nodeAffinity", {{"required", {}}}}}}};
  const Json block_pv = {{"spec",
                          {{"accessModes", {"ReadWriteMany"}},
                           {"volumeMode", "Block"},
                           {"csi", csi},
                           {"nodeAffinity", {{"required", {}}}}}}};
  Json rox_in_tree = file_pv;
  rox_in_tree["spec"].erase("csi");
  rox_in_tree["spec"]["accessModes"] = {"ReadOnlyMany"};
  rox_in_tree["spec"]["vsphereVolume"] = {{"volumePath", "[ds1] kubevols/a.vmdk"}};
  Json rwo_pv = block_pv;
  rwo_pv["spec"]["accessModes"] = {"ReadWriteOnce"};
  Json nfs_pv = file_pv;
  nfs_pv["spec"].erase("csi");
  nfs_pv["spec"]["nfs"] = {{"server", "nfs.example.com"}, {"path", "/export"}};
  auto none = [](World&) {};
  const std::vector<Case> cases = {
      {"our StorageClass with a migration parameter",
       Request("StorageClass", "CREATE",
               Sc("csi.vsphere.vmware.com", {{"datastore-migrationparam", "ds1"}})),
       none, false, "Migration specific parameters should not be used"},
      {"our StorageClass with csimigration",
       Request("StorageClass", "UPDATE", Sc("csi.vsphere.vmware.com", {{"csimigration", "true"}})),
       none, false, "(csimigration)"},
      {"our StorageClass with our parameters",
       Request("StorageClass", "CREATE",
               Sc("csi.vsphere.vmware.com", {{"storagepolicyname", "gold"}})),
       none, true, ""},
      {"the in-tree StorageClass keeps its parameters",
       Request("StorageClass", "CREATE",
               Sc("kubernetes.io/vsphere-volume", {{"diskformat-migrationparam", "thin"}})),
       none, true, ""},
      {"a file PV with node affinity", Request("PersistentVolume", "CREATE", file_pv), none, false,
       "File volumes cannot have node affinity rules"},
      // Issue 42 item 11: as the reference's vanilla webhook, whatever the volumeMode.
      {"a block RWX PV with node affinity", Request("PersistentVolume", "CREATE", block_pv), none,
       false, "File volumes cannot have node affinity rules"},
      {"an in-tree ROX PV with node affinity", Request("PersistentVolume", "CREATE", rox_in_tree),
       none, false, "File volumes cannot have node affinity rules"},
      {"a RWO PV with node affinity", Request("PersistentVolume", "CREATE", rwo_pv), none, true,
       ""},
      {"another driver's RWX PV with node affinity", Request("PersistentVolume", "CREATE", nfs_pv),
       none, true, ""},
      {"PVC grown with snapshots",
       Request("PersistentVolumeClaim", "UPDATE", Pvc("2Gi"), Pvc("1Gi")), none, false,
       "Expanding volume with snapshots is not allowed (PVC ns1/data has VolumeSnapshots snap-1)"},
      {"PVC grown without snapshots",
       Request("PersistentVolumeClaim", "UPDATE", Pvc("2Gi"), Pvc("1Gi")),
       [](World& w) { w.snapshots.clear(); }, true, ""},
      {"PVC relabelled (same size) with snapshots",
       Request("PersistentVolumeClaim", "UPDATE", Pvc("1024Mi"), Pvc("1Gi")), none, true, ""},
      {"PVC deleted with snapshots, Delete policy",
       Request("PersistentVolumeClaim", "DELETE", nullptr, Pvc("1Gi")), none, false,
       "Deleting volume with snapshots is not allowed"},
      {"PVC deleted with snapshots, Retain policy",
       Request("PersistentVolumeClaim", "DELETE", nullptr, Pvc("1Gi")),
       [](World& w) { w.policy = "Retain"; }, true, ""},
      {"PVC deleted with its namespace",
       Request("PersistentVolumeClaim", "DELETE", nullptr, Pvc("1Gi")),
       [](World& w) { w.terminating = true; }, true, ""},
      {"a file PVC grown",
       Request("PersistentVolumeClaim", "UPDATE", Pvc("2Gi", "ReadWriteMany"),
               Pvc("1Gi", "ReadWriteMany")),
       none, true, ""},
      {"the API cannot be asked: allowed, never blocking the cluster",
       Request("PersistentVolumeClaim", "DELETE", nullptr, Pvc("1Gi")),
       [](World& w) { w.api_down = true; }, true, ""},
      {"a kind not ours", Request("Pod", "CREATE", Json::object()), none, true, ""},
  };
  for (const Case& c : cases) {
    World w;
    c.setup(w);
    const AdmissionVerdict v = Judge(c.request, w.Lookups());
    EXPECT_EQ(v.allowed, c.allowed) << c.name << ": " << v.message;
    EXPECT_THAT(v.message, HasSubstr(c.message)) << c.name;
  }
}

TEST(AdmissionTest, ReviewsOverHttp) {
  World w;
  const Json review = {{"apiVersion", "admission.k8s.io/v1"},
                       {"kind", "AdmissionReview"},
                       {"request", Request("StorageClass", "CREATE",
                                           Sc("csi.vsphere.vmware.com", {{"csimigration", "1"}}))}};
  HttpAnswer a = ReviewAdmission("application/json", review.dump(), w.Lookups());
  ASSERT_EQ(a.status, 200);
  const Json out = Json::parse(a.body);
  EXPECT_EQ(out["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(out["kind"], "AdmissionReview");
  EXPECT_EQ(out["response"]["uid"], "u-1");
  EXPECT_EQ(out["response"]["allowed"], false);
  EXPECT_EQ(out["response"]["status"]["code"], 403);
  EXPECT_THAT(out["response"]["status"]["message"].get<std::string>(),
              HasSubstr("Migration specific parameters"));

  EXPECT_EQ(ReviewAdmission("application/json", "", w.Lookups()).status, 400);
  EXPECT_EQ(ReviewAdmission("text/plain", "{}", w.Lookups()).status, 415);
  HttpAnswer garbage = ReviewAdmission("application/json", "{not json", w.Lookups());
  EXPECT_EQ(garbage.status, 200);
  EXPECT_EQ(Json::parse(garbage.body)["response"]["allowed"], false);
  EXPECT_THAT(garbage.body, HasSubstr("cannot read the AdmissionReview"));
}

}  // namespace
}  // namespace ccm::csi::admission_test
