#include "diagnose/volume_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "csi/core/placement.h"

namespace ccm::diagnose::volume_checks_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Labels = std::vector<std::pair<std::string, std::string>>;

constexpr char kZone[] = "topology.kubernetes.io/zone";

TEST(VolumeChecksTest, TopologyNoNodeHasNamesKeysAndValues) {
  const std::vector<Labels> nodes = {{{kZone, "zone-a"}}, {{kZone, "zone-b"}, {"rack", "r1"}}};
  EXPECT_THAT(TopologyNoNodeHas({{{kZone, {"zone-a", "zone-b"}}}}, nodes), ElementsAre());
  EXPECT_THAT(TopologyNoNodeHas({{{kZone, {"zone-a", "zone-c"}}}}, nodes),
              ElementsAre("topology.kubernetes.io/zone=zone-c"));
  EXPECT_THAT(TopologyNoNodeHas({{{"failure-domain.beta.kubernetes.io/zone", {"zone-a"}}}}, nodes),
              ElementsAre("failure-domain.beta.kubernetes.io/zone"));
  EXPECT_THAT(TopologyNoNodeHas({{{"rack", {"r1"}}}, {{kZone, {"zone-x"}}}}, nodes),
              ElementsAre("topology.kubernetes.io/zone=zone-x"));
  EXPECT_THAT(TopologyNoNodeHas({{{kZone, {"zone-a"}}}}, {}),
              ElementsAre("topology.kubernetes.io/zone"));
}

struct Case {
  std::string name;
  std::function<void(Report&)> judge;
  std::string want;  // in the text
  int errors, warnings;
};

CreateVerdict Placed(std::vector<std::string> ds) { return {absl::OkStatus(), std::move(ds)}; }
CreateVerdict Refused(absl::Status s) { return {std::move(s), {}}; }

TEST(VolumeChecksTest, EachVolumeProblemHasItsLine) {
  const absl::Duration m = absl::Minutes(1);
  const std::vector<Case> cases = {
      {"no class", [](Report& r) { JudgeStorageClasses({}, r); },
       "no StorageClass names csi.vsphere.vmware.com", 0, 0},
      {"class ok",
       [](Report& r) {
         JudgeStorageClasses({{"fast", {}, Placed({"ds1", "ds2"})}}, r);
       },
       "storageclass fast  a 1 GiB volume would go to ds1 (2 datastores qualify)", 0, 0},
      {"unknown policy",
       [](Report& r) {
         JudgeStorageClasses(
             {{"gold", {}, Refused(absl::InvalidArgumentError("no such storage policy"))}}, r);
       },
       "CreateVolume would fail: no such storage policy", 1, 0},
      {"not shared",
       [](Report& r) {
         JudgeStorageClasses(
             {{"local", {}, Refused(absl::FailedPreconditionError("host-2 lacks it"))}}, r);
       },
       "mount a datastore on every host", 1, 0},
      {"no privilege on any datastore",
       [](Report& r) {
         JudgeStorageClasses({{"std",
                               {},
                               Refused(absl::FailedPreconditionError(
                                   absl::StrCat(csi::kNoPrivilegeOnAny,
                                                "datastore (...): ds1: user u lacks "
                                                "Datastore.FileManagement")))}},
                             r);
       },
       "fix: grant the role CNS-DATASTORE (Datastore > Low level file operations) to the vCenter "
       "user on the datastores named",
       1, 0},
      {"some skipped for privileges",
       [](Report& r) {
         JudgeStorageClasses({{"std",
                               {},
                               Refused(absl::FailedPreconditionError(
                                   absl::StrCat("host-2 lacks ds2", csi::kSkippedForPrivileges,
                                                "ds1: user u lacks "
                                                "it")))}},
                             r);
       },
       "fix: mount a datastore on every host that runs a node VM (or every host of the requested "
       "zone), or name such a datastore (or policy) in the StorageClass; or grant the role "
       "CNS-DATASTORE",
       1, 0},
      {"every datastore suspended",
       [](Report& r) {
         JudgeStorageClasses({{"std",
                               {},
                               Refused(absl::FailedPreconditionError(absl::StrCat(
                                   "no datastore takes new volumes now; ",
                                   csi::kSuspendedForNewVolumes, "datastore \"ds1\"")))}},
                             r);
       },
       "fix: resume volume creation on the suspended datastores", 1, 0},
      {"topology",
       [](Report& r) {
         JudgeStorageClasses({{"zoned", {"topology.kubernetes.io/zone=zone-x"}, Placed({"d"})}}, r);
       },
       "allowedTopologies topology.kubernetes.io/zone=zone-x: no Node has it", 1, 0},
      {"class not checked",
       [](Report& r) {
         JudgeStorageClasses({{"x", {}, std::nullopt}}, r);
       },
       "not checked", 0, 1},
      {"no claim", [](Report& r) { JudgePvcs({}, r); }, "no claim of the driver is Pending", 0, 0},
      {"claim waits",
       [&](Report& r) {
         JudgePvcs({{"ns/a", "fast", 10 * m, true, std::nullopt, ""}}, r);
       },
       "waits for a Pod to use it", 0, 0},
      {"claim refused",
       [&](Report& r) {
         JudgePvcs({{"ns/a", "gold", m, false,
                     Refused(absl::InvalidArgumentError("no such storage policy")), ""}},
                   r);
       },
       "pvc ns/a  Pending for 1m (StorageClass gold): CreateVolume would fail: no such", 1, 0},
      {"claim young",
       [&](Report& r) {
         JudgePvcs({{"ns/a", "fast", m, false, Placed({"ds1"}), ""}}, r);
       },
       "being provisioned, on ds1", 0, 0},
      {"claim forgotten",
       [&](Report& r) {
         JudgePvcs({{"ns/a", "fast", 5 * m, false, Placed({"ds1"}), "boom"}}, r);
       },
       "though CreateVolume would place it on ds1; last ProvisioningFailed: boom", 0, 1},
      {"attachments fine",
       [&](Report& r) {
         JudgeAttachments({{"va1", "n1", "pv1", true, true, "", "", m, std::nullopt}}, r);
       },
       "1 VolumeAttachment of the driver, none stuck", 0, 0},
      {"attach error",
       [&](Report& r) {
         JudgeAttachments({{"va1", "n1", "pv1", false, true, "VM off", "", m, std::nullopt}}, r);
       },
       "va1 (pv1 on Node n1): not attached: VM off", 1, 0},
      {"attach slow",
       [&](Report& r) {
         JudgeAttachments({{"va1", "n1", "pv1", false, true, "", "", 3 * m, std::nullopt}}, r);
       },
       "not attached after 3m, no error", 0, 1},
      {"detach stuck",
       [&](Report& r) {
         JudgeAttachments({{"va1", "n1", "pv1", true, true, "", "busy", 9 * m, 4 * m}}, r);
       },
       "detaching for 4m: busy", 1, 0},
      {"node gone",
       [&](Report& r) {
         JudgeAttachments({{"va1", "n1", "pv1", true, false, "", "", m, std::nullopt}}, r);
       },
       "va1 (pv1 on Node n1): the Node no longer exists", 1, 0},
  };
  for (const Case& c : cases) {
    Report r;
    c.judge(r);
    EXPECT_THAT(r.Text(), HasSubstr(c.want)) << c.name << "\n" << r.Text();
    EXPECT_EQ(r.Count(Level::kError), c.errors) << c.name << "\n" << r.Text();
    EXPECT_EQ(r.Count(Level::kWarning), c.warnings) << c.name << "\n" << r.Text();
  }
}

}  // namespace
}  // namespace ccm::diagnose::volume_checks_test
