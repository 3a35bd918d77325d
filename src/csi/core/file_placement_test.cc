#include "csi/core/file_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DatastoreCandidate Ds(std::string name, std::string type, std::vector<std::string> hosts,
                      std::string vcenter = "vc") {
  DatastoreCandidate d;
  d.vcenter = std::move(vcenter);
  d.name = name;
  d.moref = "ds-" + name;
  d.url = "ds:///vmfs/volumes/" + name + "/";
  d.type = std::move(type);
  d.hosts = std::move(hosts);
  return d;
}

class FilePlacementTest : public ::testing::Test {
 protected:
  // vsan-a on cluster A (file services on), vsan-b on cluster B (off), vmfs-1 on both.
  std::vector<DatastoreCandidate> datastores = {Ds("vsan-a", "vsan", {"h1"}),
                                                Ds("vsan-b", "vsan", {"h2"}),
                                                Ds("vmfs-1", "VMFS", {"h1", "h2"})};
  std::vector<HostRecord> hosts = {{"vc", "h1", "esx-1", Segments{{"zone", "a"}}, ""},
                                   {"vc", "h2", "esx-2", Segments{{"zone", "b"}}, ""}};
  std::map<std::string, std::vector<FileServiceCluster>> clusters = {
      {"vc",
       {{"domain-c1", "A", true, true, {"ds-vsan-a", "ds-vmfs-1"}},
        {"domain-c2", "B", true, false, {"ds-vsan-b", "ds-vmfs-1"}}}}};
  std::map<std::string, FileShareTargets> targets;

  absl::StatusOr<std::vector<size_t>> Choose(const FilePlacementRequest& req = {}) {
    return ChooseFileShareDatastores(datastores, hosts, clusters, targets, req);
  }
};

TEST_F(FilePlacementTest, OnlyVsanDatastoresOfFileServiceClusters) {
  EXPECT_THAT(Choose().value_or(std::vector<size_t>{}), ElementsAre(0));
  clusters["vc"][1].file_service = true;
  EXPECT_THAT(Choose().value_or(std::vector<size_t>{}), ElementsAre(0, 1));
}

TEST_F(FilePlacementTest, NarrowedLikeABlockVolume) {
  clusters["vc"][1].file_service = true;
  struct Case {
    const char* name;
    FilePlacementRequest req;
    std::vector<size_t> want;  // empty: error
    const char* error;
  };
  TopologyRequirement zone_b;
  zone_b.requisite = {Segments{{"zone", "b"}}};
  TopologyRequirement zone_c;
  zone_c.requisite = {Segments{{"zone", "c"}}};
  std::vector<bool> only_b = {false, true, true};
  std::vector<Case> cases = {
      {"datastoreurl", {"ds:///vmfs/volumes/vsan-b/", nullptr, nullptr, ""}, {1}, ""},
      {"datastoreurl of a VMFS datastore",
       {"ds:///vmfs/volumes/vmfs-1/", nullptr, nullptr, ""},
       {},
       "vsan-a (ds:///vmfs/volumes/vsan-a/): not the datastoreurl"},
      {"topology", {"", &zone_b, nullptr, ""}, {1}, ""},
      {"topology nobody has",
       {"", &zone_c, nullptr, ""},
       {},
       "not accessible from the requested topology"},
      {"policy", {"", nullptr, &only_b, "gold"}, {1}, ""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<size_t>> got = Choose(c.req);
    if (c.want.empty()) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
      EXPECT_THAT(got.status().message(), HasSubstr(c.error)) << c.name;
    } else {
      EXPECT_EQ(got.value_or(std::vector<size_t>{}), c.want) << c.name;
    }
  }
}

TEST_F(FilePlacementTest, TargetsFromTheConfig) {
  clusters["vc"][1].file_service = true;
  targets["vc"].clusters = {"B"};
  EXPECT_THAT(Choose().value_or(std::vector<size_t>{}), ElementsAre(1));
  targets["vc"].clusters = {"domain-c1"};
  EXPECT_THAT(Choose().value_or(std::vector<size_t>{}), ElementsAre(0));
  targets["vc"] = {{"ds:///vmfs/volumes/vsan-b"}, {}};  // the trailing slash does not matter
  EXPECT_THAT(Choose().value_or(std::vector<size_t>{}), ElementsAre(1));
  targets["vc"].datastore_urls = {"ds:///elsewhere/"};
  EXPECT_THAT(Choose().status().message(), HasSubstr("not in targetvSANFileShareDatastoreURLs"));
}

TEST_F(FilePlacementTest, NoneNamesEachDatastoreAndWhatToEnable) {
  clusters["vc"][0].file_service = false;
  absl::StatusOr<std::vector<size_t>> got = Choose();
  ASSERT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(got.status().message(),
              HasSubstr("vsan-a (ds:///vmfs/volumes/vsan-a/): vSAN file service is not enabled "
                        "on its cluster A (domain-c1); vsan-b (ds:///vmfs/volumes/vsan-b/): vSAN "
                        "file service is not enabled on its cluster B (domain-c2)"));
  EXPECT_THAT(got.status().message(), HasSubstr("enabled on the vSAN cluster"));

  datastores.resize(1);
  datastores[0] = Ds("vmfs-1", "VMFS", {"h1"});
  EXPECT_THAT(Choose().status().message(),
              HasSubstr("file volumes are vSAN file shares, and the datastores known are vmfs-1 "
                        "(VMFS)"));
  datastores[0] = Ds("vsan-x", "vsan", {"h1"}, "other-vc");
  EXPECT_THAT(Choose().status().message(),
              HasSubstr("its vCenter's file services could not be read"));
}

}  // namespace
}  // namespace ccm::csi
