#include "csi/core/parameters.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using Params = std::map<std::string, std::string>;

TEST(ParametersTest, Accepted) {
  struct Case {
    const char* name;
    Params params;
    VolumeParameters want;
    size_t warnings;
  } cases[] = {
      {"empty", {}, {}, 0},
      {"datastore url and policy",
       {{"datastoreurl", "ds:///vmfs/volumes/abc/"}, {"storagepolicyname", "gold"}},
       {.datastore_url = "ds:///vmfs/volumes/abc/", .storage_policy_name = "gold"},
       0},
      {"keys are case-insensitive",
       {{"DatastoreURL", "ds:///vmfs/volumes/abc/"}, {"StoragePolicyName", "gold"}},
       {.datastore_url = "ds:///vmfs/volumes/abc/", .storage_policy_name = "gold"},
       0},
      {"deprecated fstype is ignored with a warning", {{"fstype", "xfs"}}, {}, 1},
      {"extra-create-metadata keys",
       {{"csi.storage.k8s.io/pvc/name", "data"},
        {"csi.storage.k8s.io/pvc/namespace", "db"},
        {"csi.storage.k8s.io/pv/name", "pvc-1"}},
       {.pv_name = "pvc-1", .pvc_name = "data", .pvc_namespace = "db"},
       0},
      {"csi.storage.k8s.io/fstype", {{"csi.storage.k8s.io/fstype", "ext4"}}, {}, 0},
      {"other keys of the sidecars' prefix", {{"csi.storage.k8s.io/sc/name", "fast"}}, {}, 0},
      {"migrated in-tree class",
       {{"csimigration", "true"},
        {"datastore-migrationparam", "vsanDatastore"},
        {"diskformat-migrationparam", "thin"}},
       {.migration_datastore = "vsanDatastore", .csi_migration = true},
       0},
  };
  for (const Case& c : cases) {
    absl::StatusOr<VolumeParameters> got = ParseParameters(c.params);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    EXPECT_EQ(got->datastore_url, c.want.datastore_url) << c.name;
    EXPECT_EQ(got->storage_policy_name, c.want.storage_policy_name) << c.name;
    EXPECT_EQ(got->migration_datastore, c.want.migration_datastore) << c.name;
    EXPECT_EQ(got->csi_migration, c.want.csi_migration) << c.name;
    EXPECT_EQ(got->pv_name, c.want.pv_name) << c.name;
    EXPECT_EQ(got->pvc_name, c.want.pvc_name) << c.name;
    EXPECT_EQ(got->pvc_namespace, c.want.pvc_namespace) << c.name;
    EXPECT_EQ(got->warnings.size(), c.warnings) << c.name;
  }
}

TEST(ParametersTest, Refused) {
  struct Case {
    const char* name;
    Params params;
    const char* message_has;
  } cases[] = {
      {"unknown key is named", {{"Zone", "a"}}, "\"Zone\""},
      {"storagepolicyid is a supervisor-only key", {{"storagepolicyid", "x"}}, "storagepolicyid"},
      {"same key twice in different case",
       {{"datastoreurl", "a"}, {"DATASTOREURL", "b"}},
       "given twice"},
      {"migration keys without csimigration",
       {{"datastore-migrationparam", "ds"}},
       "datastore-migrationparam"},
      {"csimigration false",
       {{"csimigration", "false"}, {"datastore-migrationparam", "ds"}},
       "datastore-migrationparam"},
      {"thick disk format",
       {{"csimigration", "true"}, {"diskformat-migrationparam", "zeroedthick"}},
       "zeroedthick"},
      {"raw vSAN setting of the in-tree plugin",
       {{"csimigration", "true"}, {"hostfailurestotolerate-migrationparam", "1"}},
       "hostfailurestotolerate-migrationparam"},
  };
  for (const Case& c : cases) {
    absl::Status s = ParseParameters(c.params).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << s;
    EXPECT_NE(s.message().find(c.message_has), absl::string_view::npos) << c.name << ": " << s;
  }
}

}  // namespace
}  // namespace ccm::csi
