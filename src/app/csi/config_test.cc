// csi-vsphere.conf as the driver reads it (ReadCsiConfig): every key of the reference's config
// is accepted, those we do not use with a warning, never an error (issue 42 item 10); bad values
// keep their file:line errors.
#include "app/csi/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_join.h"

namespace ccm::app {
namespace {

using ::testing::HasSubstr;

class ReadCsiConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/csi-conf-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::remove(Path().c_str());
    std::remove(dir_.c_str());
  }
  std::string Path() const { return dir_ + "/csi-vsphere.conf"; }
  absl::StatusOr<cloud::ParseResult> Read(const std::string& text) {
    std::ofstream(Path()) << text;
    return ReadCsiConfig(Path(), {});
  }
  std::string dir_;
};

// The keys of the reference's csi-vsphere.conf (and a key it does not know: the reference ignores
// those) in one file: the driver starts, saying what it does not use.
TEST_F(ReadCsiConfigTest, TheReferencesKeysNeverStopTheDriver) {
  auto r = Read(R"([Global]
cluster-id = "c1"
supervisor-id = "s1"
secret-name = "vsphere-config-secret"
secret-namespace = "vmware-system-csi"
cnsregistervolumes-cleanup-intervalinmin = 720
volumemigration-cr-cleanup-intervalinmin = 720
vc-client-timeout = 5
csi-auth-check-intervalinmin = 5
cnsvolumeoperationrequest-cleanup-intervalinmin = 15
csi-fetch-preferred-datastores-intervalinmin = 5
cnspvcprotection-cleanup-intervalinmin = 10
query-limit = 1000
list-volume-threshold = 50
cluster-distribution = "kubeadm"

[VirtualCenter "vc.example.com"]
user = "u"
password = "p"
port = "443"
insecure-flag = "true"
datacenters = "dc1"
secret-name = "per-vc"
secret-namespace = "ns"
targetvSANFileShareDatastoreURLs = "ds:///vmfs/volumes/vsan:1/"
migration-datastore-url = "ds:///vmfs/volumes/x/"

[Snapshot]
global-max-snapshots-per-block-volume = 3

[GC]
endpoint = "10.0.0.1"
port = "6443"

[Labels]
topology-categories = "k8s-zone"
)");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.vcenters.size(), 1u);
  EXPECT_EQ(r->config.vcenters[0].credential_source, cloud::CredentialSourceKind::kInline);
  EXPECT_EQ(r->config.vcenters[0].user, "u");
  const std::string warnings = absl::StrJoin(r->warnings, "\n");
  EXPECT_THAT(warnings, HasSubstr("csi-vsphere.conf:4: [Global] secret-name: ignored: "
                                  "vsphere-csi-driver takes credentials from user and password "
                                  "in this file"));
  EXPECT_THAT(warnings, HasSubstr("csi-vsphere.conf:23: [VirtualCenter \"vc.example.com\"] "
                                  "secret-name: ignored"));
  EXPECT_THAT(warnings, HasSubstr("cnspvcprotection-cleanup-intervalinmin"));
}

TEST_F(ReadCsiConfigTest, SecretNameAloneIsNoCredentials) {
  auto r = Read(
      "[Global]\nsecret-name = \"s\"\nsecret-namespace = \"n\"\n"
      "[VirtualCenter \"vc.example.com\"]\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no credentials for vCenter \"vc.example.com\""));
  EXPECT_THAT(r.status().message(), HasSubstr("set user and password, or secrets-directory"));
}

TEST_F(ReadCsiConfigTest, BadValuesKeepTheirLine) {
  auto r = Read(
      "[Global]\ncluster-id = \"c1\"\nquery-limit = \"many\"\n"
      "[VirtualCenter \"vc.example.com\"]\nuser = \"u\"\npassword = \"p\"\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("csi-vsphere.conf:3"));
}

}  // namespace
}  // namespace ccm::app

namespace ccm::app {
namespace {

std::string VCenters(int n, const std::string& labels) {
  std::string out = "[Global]\ncluster-id = \"c1\"\n";
  for (int i = 1; i <= n; ++i) {
    out += "[VirtualCenter \"vc" + std::to_string(i) +
           ".example.com\"]\nuser = \"u\"\npassword = \"p\"\ndatacenters = \"dc\"\n";
  }
  return out + labels;
}

// Issue 44: the reference's limits for several vCenters, with errors that name them.
TEST_F(ReadCsiConfigTest, TheReferencesMultiVCenterLimits) {
  const std::string categories = "[Labels]\ntopology-categories = \"k8s-zone\"\n";
  const std::string zone_region = "[Labels]\nzone = \"k8s-zone\"\nregion = \"k8s-region\"\n";
  EXPECT_TRUE(Read(VCenters(1, "")).ok());
  EXPECT_TRUE(Read(VCenters(1, zone_region)).ok());
  EXPECT_TRUE(Read(VCenters(2, categories)).ok());
  EXPECT_TRUE(Read(VCenters(5, categories)).ok());
  auto no_categories = Read(VCenters(2, zone_region));
  EXPECT_EQ(no_categories.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_categories.status().message(),
              HasSubstr("multi-vCenter deployment requires [Labels] topology-categories"));
  auto six = Read(VCenters(6, categories));
  EXPECT_EQ(six.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(six.status().message(), HasSubstr("6 [VirtualCenter] sections: at most 5"));
}

// Issue 45: [NetPermissions] sections as the reference reads them: defaults for missing keys,
// permissions checked; the file-share targets of a vCenter as lists.
TEST_F(ReadCsiConfigTest, NetPermissionsAndFileShareTargets) {
  const std::string vc =
      "[Global]\ncluster-id = \"c1\"\n[VirtualCenter \"vc.example.com\"]\nuser = \"u\"\n"
      "password = \"p\"\ntargetvSANFileShareDatastoreURLs = \"ds:///a/, ds:///b/\"\n"
      "targetvSANFileShareClusters = \"domain-c8\"\n";
  auto r = Read(vc +
                "[NetPermissions \"A\"]\nips = \"10.20.20.0/24\"\npermissions = \"READ_ONLY\"\n"
                "rootsquash = \"true\"\n[NetPermissions \"B\"]\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.net_permissions.size(), 2u);
  EXPECT_EQ(r->config.net_permissions[0],
            (cloud::NetPermissionConfig{"A", "10.20.20.0/24", "READ_ONLY", true}));
  EXPECT_EQ(r->config.net_permissions[1],
            (cloud::NetPermissionConfig{"B", "*", "READ_WRITE", false}));
  EXPECT_THAT(r->config.vcenters[0].target_vsan_file_share_datastore_urls,
              ::testing::ElementsAre("ds:///a/", "ds:///b/"));
  EXPECT_THAT(r->config.vcenters[0].target_vsan_file_share_clusters,
              ::testing::ElementsAre("domain-c8"));

  auto none = Read(vc);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->config.net_permissions.empty());

  auto bad = Read(vc + "[NetPermissions \"C\"]\npermissions = \"read_write\"\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(
      bad.status().message(),
      HasSubstr("permissions \"read_write\" is not one of READ_WRITE, READ_ONLY, NO_ACCESS"));
  auto squash = Read(vc + "[NetPermissions \"D\"]\nrootsquash = \"maybe\"\n");
  ASSERT_FALSE(squash.ok());
  EXPECT_THAT(squash.status().message(), HasSubstr("rootsquash"));
}

}  // namespace
}  // namespace ccm::app
