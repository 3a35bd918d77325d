#include "csi/migration/intree.h"

#include <gtest/gtest.h>

namespace ccm::csi::intree_test {
namespace {

using Json = nlohmann::json;

TEST(InTreeTest, ParsesVmdkPaths) {
  struct Case {
    std::string in;
    bool ok;
    std::string datastore, file;
  };
  const std::vector<Case> cases = {
      {"[datastore1] kubevols/pvc-1.vmdk", true, "datastore1", "kubevols/pvc-1.vmdk"},
      {"  [vsanDatastore]   e2b1/pvc 2.vmdk ", true, "vsanDatastore", "e2b1/pvc 2.vmdk"},
      {"[DC1/folder/ds-2] kubevols/x.vmdk", true, "ds-2", "kubevols/x.vmdk"},
      {"datastore1 kubevols/x.vmdk", false, "", ""},
      {"[datastore1 kubevols/x.vmdk", false, "", ""},
      {"[] kubevols/x.vmdk", false, "", ""},
      {"[datastore1]", false, "", ""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<VmdkPath> p = ParseVmdkPath(c.in);
    ASSERT_EQ(p.ok(), c.ok) << c.in << ": " << p.status();
    if (!c.ok) {
      EXPECT_NE(p.status().message().find(c.in), std::string::npos) << p.status();
      continue;
    }
    EXPECT_EQ(p->datastore, c.datastore) << c.in;
    EXPECT_EQ(p->file, c.file) << c.in;
  }
}

TEST(InTreeTest, BuildsTheReferencesBackingDiskUrl) {
  EXPECT_EQ(BackingDiskUrlPath("vc.example.com", {"datastore1", "kubevols/pvc-1.vmdk"}, "/DC 1"),
            "https://vc.example.com/folder/kubevols/pvc-1.vmdk?dcPath=%2FDC%201&dsName=datastore1");
  EXPECT_EQ(PathEscape("a-b_c.d~e$&+,:;=@/?#%"), "a-b_c.d~e$&+,:;=@%2F%3F%23%25");
}

TEST(InTreeTest, TellsWhichPersistentVolumesTheSyncerRegisters) {
  const Json vsphere = {{"volumePath", "[ds1] kubevols/a.vmdk"}, {"storagePolicyName", "gold"}};
  auto pv = [&](Json annotations) {
    Json out = {{"metadata", {{"name", "pv-1"}}}, {"spec", {{"vsphereVolume", vsphere}}}};
    if (!annotations.is_null()) out["metadata"]["annotations"] = annotations;
    return out;
  };
  struct Case {
    std::string name;
    Json pv;
    bool registered;
  };
  const std::vector<Case> cases = {
      {"static in-tree", pv(nullptr), true},
      {"provisioned in-tree, migrated",
       pv({{"pv.kubernetes.io/provisioned-by", "kubernetes.io/vsphere-volume"},
           {"pv.kubernetes.io/migrated-to", "csi.vsphere.vmware.com"}}),
       true},
      {"provisioned in-tree, not migrated",
       pv({{"pv.kubernetes.io/provisioned-by", "kubernetes.io/vsphere-volume"}}), false},
      {"provisioned by someone else", pv({{"pv.kubernetes.io/provisioned-by", "other"}}), false},
      {"a CSI PV",
       {{"metadata", {{"name", "pv-2"}}},
        {"spec", {{"csi", {{"driver", "csi.vsphere.vmware.com"}, {"volumeHandle", "x"}}}}}},
       false},
  };
  for (const Case& c : cases) EXPECT_EQ(IsMigratedInTreePv(c.pv), c.registered) << c.name;
  EXPECT_EQ(InTreeVolumePath(pv(nullptr)), "[ds1] kubevols/a.vmdk");
  EXPECT_EQ(InTreeStoragePolicyName(pv(nullptr)), "gold");
}

}  // namespace
}  // namespace ccm::csi::intree_test
