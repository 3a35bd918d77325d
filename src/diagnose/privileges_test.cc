#include "diagnose/privileges.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::diagnose::privileges_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kAll = {"System.Read",
                                       "Cns.Searchable",
                                       "StorageProfile.View",
                                       "Datastore.FileManagement",
                                       "Host.Config.Storage",
                                       "VirtualMachine.Config.AddExistingDisk",
                                       "VirtualMachine.Config.AddRemoveDevice"};

std::vector<EntityPrivileges> Inventory(const std::vector<std::string>& granted) {
  return {{kRootFolder, "/", granted},      {kDatacenterKind, "/dc1", granted},
          {kDatastoreKind, "ds1", granted}, {kDatastoreKind, "ds2", granted},
          {kHostKind, "h1", granted},       {kNodeVmKind, "node-1", granted}};
}

TEST(PrivilegesTest, ListsWhatIsMissingWhere) {
  struct Case {
    std::string name;
    Component component;
    std::vector<EntityPrivileges> entities;
    std::vector<std::string> want;
    int errors, warnings;
  };
  std::vector<EntityPrivileges> no_file = Inventory(kAll);
  no_file[2].granted = {"System.Read"};
  no_file[3].granted = {"System.Read"};
  std::vector<EntityPrivileges> vm_read_only = Inventory(kAll);
  vm_read_only[5].granted = {"System.Read"};
  std::vector<EntityPrivileges> no_host_storage = Inventory(kAll);
  no_host_storage[4].granted = {"System.Read"};
  const std::vector<Case> cases = {
      {"CSI, everything",
       Component::kCsi,
       Inventory(kAll),
       {"k8s has every privilege the CSI driver needs on 1 root folder, 1 datacenter, 2 "
        "datastores, 1 host, 1 node VM"},
       0,
       0},
      {"CPI, read-only is enough",
       Component::kCpi,
       Inventory({"System.Read"}),
       {"every privilege the CPI needs"},
       0,
       0},
      {"CSI, read-only user",
       Component::kCsi,
       Inventory({"System.Read"}),
       {"k8s lacks Cns.Searchable, StorageProfile.View on root folder /",
        "grant the role CNS-SEARCH-AND-SPBM and Read-only (Cns > Searchable",
        "lacks Datastore.FileManagement on datastore ds1, ds2",
        "Datastore > Low level file operations) to k8s on them",
        "lacks VirtualMachine.Config.AddExistingDisk, VirtualMachine.Config.AddRemoveDevice on "
        "node VM node-1",
        "grant the role CNS-VM", "needed for vSAN file service volumes"},
       3,
       1},
      {"CSI, datastores without CNS-DATASTORE",
       Component::kCsi,
       no_file,
       {"lacks Datastore.FileManagement on datastore ds1, ds2"},
       1,
       0},
      {"CSI, node VM read-only",
       Component::kCsi,
       vm_read_only,
       {"on node VM node-1", "to k8s on it"},
       1,
       0},
      {"CSI, no host storage: only a warning",
       Component::kCsi,
       no_host_storage,
       {"lacks Host.Config.Storage on host h1, needed for vSAN file service volumes"},
       0,
       1},
      {"CPI, nothing on a node VM",
       Component::kCpi,
       {{kRootFolder, "/", {"System.Read"}}, {kNodeVmKind, "node-1", {}}},
       {"lacks System.Read on node VM node-1", "Read-only (propagated)"},
       1,
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Report r;
    JudgePrivileges(c.component, "vc1", "k8s", absl::OkStatus(), c.entities, r);
    const std::string text = r.Text();
    for (const std::string& w : c.want) EXPECT_THAT(text, HasSubstr(w));
    EXPECT_EQ(r.Count(Level::kError), c.errors) << text;
    EXPECT_EQ(r.Count(Level::kWarning), c.warnings) << text;
  }
}

// Issue 45: with file volumes configured or claimed, the host storage privilege is an error.
TEST(PrivilegesTest, HostStorageIsRequiredWithFileVolumes) {
  const std::vector<EntityPrivileges> e = {{kHostKind, "h1", {"System.Read"}}};
  Report r;
  JudgePrivileges(Component::kCsi, "vc1", "k8s", absl::OkStatus(), e, r, /*file_volumes=*/true);
  EXPECT_EQ(r.Count(Level::kError), 1) << r.Text();
  EXPECT_THAT(r.Text(), HasSubstr("k8s lacks Host.Config.Storage on host h1, needed for vSAN file "
                                  "service volumes (ReadWriteMany / ReadOnlyMany)"));
  EXPECT_THAT(r.Text(), HasSubstr("CNS-HOST-CONFIG-STORAGE"));
}

TEST(PrivilegesTest, ManyObjectsAreCounted) {
  std::vector<EntityPrivileges> e;
  for (int i = 0; i < 8; ++i) e.push_back({kDatastoreKind, "ds" + std::to_string(i), {}});
  Report r;
  JudgePrivileges(Component::kCsi, "vc1", "k8s", absl::OkStatus(), e, r);
  EXPECT_THAT(r.Text(), HasSubstr("on datastore ds0, ds1, ds2, ds3, ds4 and 3 more"));
}

TEST(PrivilegesTest, UnreadablePrivilegesAreAWarning) {
  Report r;
  JudgePrivileges(Component::kCsi, "vc1", "k8s", absl::PermissionDeniedError("NoPermission"), {},
                  r);
  EXPECT_EQ(r.Count(Level::kWarning), 1);
  EXPECT_THAT(r.Text(), HasSubstr("cannot read the privileges of k8s: NoPermission"));
  EXPECT_THAT(r.Text(), Not(HasSubstr("every privilege")));
}

}  // namespace
}  // namespace ccm::diagnose::privileges_test
